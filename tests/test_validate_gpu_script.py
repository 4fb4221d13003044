"""The GPU validation script's target arithmetic and summary, on the fake cache-model GPU."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "validate_gpu_machine.py"


@pytest.fixture
def script():
    spec = importlib.util.spec_from_file_location("validate_gpu_machine", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_targets_are_ratios_against_the_issue_thresholds(script):
    from test_gpu_bench import FakeGpu

    from roofline.machine.gpu_bench import measure_gpu
    from roofline.machine.theoretical import spec_from_device

    gpu = FakeGpu()
    m = measure_gpu(mode="quick", backend=gpu)
    refs = {"copy_bandwidth": 2.9e12, "matmul_bf16_flops": 780e12, "matmul_fp16_flops": 790e12}
    rows = {r["target"]: r for r in script.targets(m, refs, {"wall_s": 30.0}, spec_from_device(gpu.device_info()))}
    hbm = rows["HBM vs datasheet"]
    assert hbm["ratio"] == pytest.approx(3.0 / 3.35, rel=0.03) and hbm["threshold"] == 0.90
    assert rows["HBM vs torch copy_ (same run)"]["ratio"] == pytest.approx(3.0 / 2.9, rel=0.03)
    assert rows["FP32 vs theoretical at observed clock"]["ratio"] == pytest.approx(0.97, rel=0.03)
    assert rows["FP32 vs theoretical at observed clock"]["pass"] is True
    # quick mode: 4096^3 GEMMs, where the fake's 4 µs launch overhead costs ~2 %.
    assert rows["dense tensor_bf16 vs datasheet"]["ratio"] == pytest.approx(760 / 989.4, rel=0.06)
    assert rows["L2 vs 7.8 TB/s (H100 target)"]["ratio"] == pytest.approx(10 / 7.8, rel=0.03)
    assert rows["L1 vs 128 B/clk/SM x SMs x observed clock"]["ratio"] == pytest.approx(
        30e12 / (128 * 132 * 1.755e9), rel=0.03)
    assert rows["default run under 60 s (CLI wall clock, 60 s / time)"]["ratio"] == 2.0
    # Missing inputs give no ratio, never a made-up one.
    rows2 = {r["target"]: r for r in script.targets(m, {}, {}, None)}
    assert rows2["HBM vs datasheet"]["ratio"] is None and rows2["HBM vs datasheet"]["pass"] is None
    summary = {
        "command": "python3 benchmarks/validate_gpu_machine.py out",
        "environment_before": {"date_utc": "2026-01-01T00:00:00+00:00", "device": gpu.device_info().to_dict()},
        "measured": m.machine.to_dict(), "theoretical": m.theoretical.to_dict(), "targets": list(rows.values()),
        "references": refs, "notes": list(m.notes), "errors": {}, "cli": {"wall_s": 30.0},
    }
    text = script.render(summary)
    assert "NVIDIA H100 80GB HBM3" in text and "3.35 TB/s" in text
    assert re.search(r"\| HBM vs datasheet \| 0\.(8[6-9]|9[0-3])\d \| 0\.9 \|", text)

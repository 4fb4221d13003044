"""The projection on a real pair: one FP16 GEMM program profiled by its author on a V100 PCIe and an
A100 PCIe 40GB (tests/data/ncu/pairs/v100_a100_cutlass_gemm, provenance there), the V100 profile
projected onto the A100 at the 765 MHz its kernels ran at, against the A100's measured times.

Expected values are worked out here from the files' counters and the two datasheets' figures:
V100 PCIe: 80 SMs, 1024 FP16 tensor FLOP/clk/SM, 128 FP32 FLOP/clk/SM, HBM2 4096 bit x 1.758 Gb/s;
A100 PCIe 40GB: 108 SMs, 2048 FP16 tensor FLOP/clk/SM, 128 FP32 FLOP/clk/SM, 5120 L2 B/clk,
HBM2 5120 bit x 2.43 Gb/s.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from roofline import api
from roofline.projection import project

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "tests" / "data" / "ncu" / "pairs" / "v100_a100_cutlass_gemm"
V100_DRAM = 4096 / 8 * 1.758e9   # 900.1 GB/s
A100_DRAM = 5120 / 8 * 2.43e9    # 1555.2 GB/s
A100_CLOCK = 765e6


@pytest.fixture(scope="module")
def sides():
    src = api.read(PAIR / "v100pcie_output.csv")
    tgt = api.read(PAIR / "a100pcie_output_A100.csv")
    return src, tgt


@pytest.fixture(scope="module")
def proj(sides):
    src, _ = sides
    return project(src, api.load_machine("a100-pcie"), api.load_machine("v100-pcie"), by="name",
                   target_clock_hz=A100_CLOCK)


def _row(proj, pattern):
    f = proj.frame
    rows = f[f["kernel_name"].str.contains(pattern, regex=False)]
    assert len(rows) == 1, rows["kernel_name"].tolist()
    return rows.iloc[0]


def test_memory_bound_init_kernel_by_hand(sides, proj):
    src, _ = sides
    launches = src.frame[src.frame["kernel_name"].str.contains("InitializeMatrix_kernel<float")]
    dram, time = launches["dram_bytes"].sum(), launches["time_s"].sum()   # two launches
    clock = float((launches["time_s"] * launches["sm_clock_hz"]).sum() / time)
    roof_here = dram / V100_DRAM            # 2 x 1.6767 GB / 900.1 GB/s = 3.7256 ms (65 % of 5.717 ms)
    best = dram / A100_DRAM                 # 2 x 1.6767 GB / 1555.2 GB/s = 2.1562 ms
    r = _row(proj, "InitializeMatrix_kernel<float")
    assert r["bound"] == "dram" and r["bound_target"] == "dram" and r["notes"] == ()
    assert r["roofline_time_s"] == pytest.approx(roof_here, rel=1e-6)
    assert r["best_time_s"] == pytest.approx(best, rel=1e-6)
    assert r["projected_time_s"] == pytest.approx(time * best / roof_here, rel=1e-6)  # 3.3086 ms
    # the time above the roofline keeps its cycles: x 1234.9 MHz / 765 MHz
    assert r["high_time_s"] == pytest.approx(best + (time - roof_here) * clock / A100_CLOCK, rel=1e-6)
    assert r["low_time_s"] == pytest.approx(best, rel=1e-6)


def test_tensor_gemm_by_hand(sides, proj):
    src, _ = sides
    k = src.frame[src.frame["kernel_name"].str.contains("s884gemm")].iloc[0]
    f = src.frame  # an analysis takes one machine at the launches' time-weighted mean clock (1233.6 MHz)
    clock = (f["time_s"] * f["sm_clock_hz"]).sum() / f["time_s"].sum()
    # V100 at that clock: tensor FLOPs on 80 x 1024 FLOP/clk, the FP32 epilogue on 80 x 128
    t_here = k["tensor_flops"] / (80 * 1024 * clock) + k["fp32_flops"] / (80 * 128 * clock)
    t_there = k["tensor_flops"] / (108 * 2048 * A100_CLOCK) + k["fp32_flops"] / (108 * 128 * A100_CLOCK)
    r = _row(proj, "s884gemm")
    assert r["bound"] == "tensor_fp16" and r["bound_target"] == "tensor_fp16"
    assert r["roofline_time_s"] == pytest.approx(t_here, rel=1e-6)      # 169.7 ms: 93.6 % of 181.4 ms
    assert r["best_time_s"] == pytest.approx(t_there, rel=1e-6)         # 101.6 ms
    assert r["projected_time_s"] == pytest.approx(k["time_s"] * t_there / t_here, rel=1e-6)


def test_validation_report_numbers(sides):
    """The validation script's figures on this pair: the per-launch errors against the A100's times."""
    spec = importlib.util.spec_from_file_location("validate_projection", ROOT / "benchmarks" / "validate_projection.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = mod.validate_pair(PAIR)
    assert result["target_clock_hz"] == pytest.approx(A100_CLOCK, rel=1e-4)
    k = {r["kernel"]: r for r in result["kernels"]}
    init = next(r for n, r in k.items() if "InitializeMatrix_kernel<float" in n)
    gemm = next(r for n, r in k.items() if "s884gemm" in n)
    assert init["target_kernels"] == [init["kernel"]]  # the same kernel on both GPUs
    assert gemm["target_kernels"] == ["ampere_s16816gemm_fp16_256x128_ldg8_stages_64x3_nn"]
    # init: 3.3086 ms projected for 2 x 2.2347 ms measured = -26.0 %; cuBLAS GEMM: 108.3 ms for 106.98 ms
    assert init["error"] == pytest.approx(3.3086e-3 / 4.4694e-3 - 1, abs=0.003)
    assert gemm["error"] == pytest.approx(0.10832 / 0.106975 - 1, abs=0.003)
    assert all(r["inside_range"] for r in result["kernels"])
    assert result["time_inside_range"] == 1.0
    assert result["memory_bound_part"]["error"] == pytest.approx(-0.26, abs=0.005)
    assert result["targets"]["memory_bound_part_within_15pct"] is False  # missed: said, not hidden
    json.dumps(result, allow_nan=False)

"""A real H800 export (Nsight Compute 2023.3, sglang) in which ncu recorded nothing for one launch.

A launch whose profiling failed or was cut short holds no value at all: its work is unknown, but not
for want of a metric, so the advice to collect one would be wrong. The user is told what happened,
the other launches are read in full, and a profile in which every launch is empty is refused with that
reason. Provenance and the hand computations: tests/data/ncu/h800_sglang_failed_launch/PROVENANCE.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.analysis import analyze
from roofline.readers.ncu.peaks import machine_from_profile
from roofline.cli.app import main
from roofline.errors import MissingMetricsError
from roofline.readers import read_profile
from roofline.views.chart.rows import NOTHING_RECORDED, undrawn_kernels

H800 = Path(__file__).parent / "data" / "ncu" / "h800_sglang_failed_launch" / "sglang_h800_raw.csv"


def test_the_recorded_launches_by_hand_and_the_failed_one_unknown():
    table = read_profile(H800)
    f = widened(table.frame)
    assert len(f) == 5 and set(f["compute_capability"]) == {"9.0"}
    assert f["time_s"][0] == pytest.approx(16.448e-6, rel=1e-12)
    assert f["fp32_flops"][0] == pytest.approx((84.299387 + 674.395096 + 2 * 1427.980525) * 1.559755e9 * 16.448e-6, rel=1e-9)
    assert f["fp32_flops"][3] == pytest.approx((102.537647 + 818.126132 + 2 * 1736.925591) * 1.553049e9 * 33.952e-6, rel=1e-9)
    assert f["fp64_flops"][0] == 0.0
    assert f["l2_bytes"][0] == 455_139 * 32 and f["l2_bytes"][3] == 1_034_638 * 32
    assert f["dram_bytes"][0] == 8_448 and f["dram_bytes"][3] == 40_192 + 21_070_848
    assert np.isnan(f["l1_bytes"][0])  # no l1tex__t_bytes in this set: unknown, not 0
    failed = f.iloc[4]
    assert str(failed["kernel_name"]).startswith("void flash_fwd_kernel<")
    numbers = [c for c in f.columns if f[c].dtype == "float64"]
    # ncu's record of it holds zeros beside the NaNs (0 shared-memory load instructions, for a
    # FlashAttention kernel): not believable, so every number of the launch is unknown
    assert table.metrics["smsp__sass_inst_executed_op_shared_ld.sum"].iloc[4] == 0.0
    assert len(numbers) > 20 and all(np.isnan(failed[c]) for c in numbers)
    said = [w for w in table.warnings if "ncu recorded no time, work or traffic for 1 launch" in w]
    assert len(said) == 1 and "void flash_fwd_kernel<" in said[0] and "profile it again" in said[0]
    assert "distribution_elementwise" not in said[0]  # only the failed launch is named


def test_hints_on_hopper_name_only_counters_hopper_has():
    """gh100 has no INT4 or FP4 tensor path (ncu 2024.1.1 --query-metrics): the hint to collect tensor
    counters names Hopper's seven, and no FP16 destination split."""
    table = read_profile(H800)
    tensor = [w for w in table.warnings if w.split(": ", 1)[1].startswith("tensor_flops unknown")]
    assert len(tensor) == 1
    hinted = tensor[0].split("collect with: ncu --metrics ")[1].split(",")
    ops = "sm__ops_path_tensor_src_"
    assert hinted == ["sm__inst_executed_pipe_tensor.sum", f"{ops}fp16.sum", f"{ops}bf16_dst_fp32.sum",
                      f"{ops}tf32_dst_fp32.sum", f"{ops}fp64.sum", f"{ops}fp8.sum", f"{ops}int8.sum"]


def test_the_failed_kernel_is_listed_as_nothing_recorded_not_as_uncollected():
    table = read_profile(H800)
    analysis = analyze(table, machine_from_profile(table.metrics, compute_capability="9.0"))
    reasons = {k.kernel: k.reason for k in undrawn_kernels(analysis)}
    assert [r for k, r in reasons.items() if "flash_fwd_kernel" in k] == [NOTHING_RECORDED]
    assert len(reasons) == 1  # the four recorded launches are drawn
    assert not any(n.startswith("no FLOP counts for") for n in analysis.notes)  # nothing to collect
    assert any(n.startswith("nothing recorded for 1 kernel") for n in analysis.notes)


def test_a_profile_with_every_launch_empty_is_refused_with_the_reason(tmp_path, capsys):
    lines = H800.read_text().splitlines(keepends=True)
    empty = tmp_path / "failed.csv"
    empty.write_text("".join([lines[0], lines[1], lines[-1]]))  # header, units, the failed launch
    with pytest.raises(MissingMetricsError, match="ncu recorded no value for its launch") as err:
        read_profile(empty)
    assert "gpu__time_duration.sum" in str(err.value)
    assert main(["analyze", str(empty)]) != 0
    out = capsys.readouterr()
    assert "ncu recorded no value for its launch" in out.err and "Traceback" not in out.err + out.out
    assert "collect with" not in out.err  # the counters were asked for: no advice to collect them

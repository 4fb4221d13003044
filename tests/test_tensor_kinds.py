"""The tensor pipe's instruction kinds on SM 7.5 and 8.x: an idle kind proves its side's work 0.

Real A40 reports (CUDA.jl, tests/data/ncu/a40_julia_tensor_kinds/PROVENANCE.md) hold only the pipe's
utilization per kind, HMMA (floating point) and IMMA (integer): no operation counter. An INT4/INT8
kernel with HMMA idle did 0 tensor FLOPs; an FP16 one with IMMA idle 0 integer tensor operations;
the busy side stays unknown, and a 0 that is only a lower bound is never called "data movement".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import counting
from roofline.analysis import analyze
from roofline.readers.ncu.peaks import machine_from_profile
from roofline.readers import read_profile
from roofline.views.chart.rows import not_shown_note, select_rows, undrawn_kernels

DATA = Path(__file__).parent / "data" / "ncu" / "a40_julia_tensor_kinds"
IMMA = DATA / "a40_bb_imma_raw.csv"
HMMA = DATA / "a40_frb_hmma_raw.csv"
PCT = "sm__inst_executed_pipe_tensor_op_{}.avg.pct_of_peak_sustained_active"


def test_integer_tensor_kernel_does_no_tensor_flops_and_unknown_integer_work():
    table = read_profile(IMMA)
    f = table.frame
    bb = f.iloc[1]
    assert str(bb["kernel_name"]).startswith("julia_bb_4477(")
    assert bb["time_s"] == pytest.approx(8.974464e-3, rel=1e-12)
    assert bb["tensor_flops"] == 0.0 and bb["flops"] == 0.0 and bool(bb["flops_partial"])  # FP16 not collected
    assert np.isnan(bb["tensor_int_ops"])  # IMMA at 53.96 % of peak: integer work, not counted
    assert bb["dram_bytes"] == pytest.approx(1.690000e9 + 328.820608e6, rel=1e-12)
    assert bb["l2_bytes"] == 53_085_800 * 32
    assert f["tensor_flops"].iloc[0] == 0.0 and f["tensor_int_ops"].iloc[0] == 0.0  # both kinds idle
    said = [w for w in table.warnings if "tensor_int_ops unknown for 1 launch on SM 8.6" in w]
    assert len(said) == 1 and "IMMA" in said[0]
    assert "sm__ops_path_tensor_src_int8.sum,sm__ops_path_tensor_src_int4.sum" in said[0]
    assert not any("tensor_flops unknown" in w for w in table.warnings)


def test_fp16_tensor_kernel_does_no_integer_tensor_work_and_unknown_flops():
    table = read_profile(HMMA)
    frb = table.frame.iloc[4]
    assert str(frb["kernel_name"]).startswith("julia_frb_5885(")
    assert np.isnan(frb["tensor_flops"]) and frb["tensor_int_ops"] == 0.0
    fp32 = (0.120180 + 0.149863 + 2 * 0.419905) * 1.300034e9 * 4.283936e-3
    assert frb["fp32_flops"] == pytest.approx(fp32, rel=1e-9)
    assert frb["flops"] == pytest.approx(fp32, rel=1e-9) and bool(frb["flops_partial"])  # a lower bound
    assert sum("tensor_flops unknown for 1 launch on SM 8.6" in w for w in table.warnings) == 1
    assert (table.frame["tensor_int_ops"] == 0.0).all()


def test_a_zero_that_is_a_lower_bound_is_not_called_data_movement():
    table = read_profile(IMMA)
    analysis = analyze(table, machine_from_profile(table.metrics, compute_capability="8.6"), work="ops")
    reasons = {k.kernel.split("(")[0]: k.reason for k in undrawn_kernels(analysis)}
    assert reasons["julia_bb_4477"] == ("0 OPs counted, as a lower bound: fp16_flops, int_ops, conversion_ops, "
                                        "tensor_int_ops unknown; see --work instructions")
    assert "data movement" not in " ".join(reasons.values())
    note = not_shown_note(select_rows(analysis))
    assert note.endswith("(all 0 only as a lower bound, a part of the work not collected; see --work instructions)")


def _count(cc: str, hmma: float, imma: float, dmma: float | None = None) -> counting.Counted:
    m = {"gpu__time_duration.sum": [1e3], "sm__inst_executed_pipe_tensor.sum": [64.0],
         PCT.format("hmma"): [hmma], PCT.format("imma"): [imma]}
    if dmma is not None:
        m[PCT.format("dmma")] = [dmma]
    return counting.count(pd.DataFrame(m), pd.Series([cc], dtype="string"))


@pytest.mark.parametrize("cc", ["7.5", "8.6", "8.7"])
def test_kinds_decide_each_side_where_they_are_all_the_kinds(cc):
    imma_only = _count(cc, 0.0, 12.5).columns
    assert imma_only["tensor_flops"][0] == 0.0 and np.isnan(imma_only["tensor_int_ops"][0])
    hmma_only = _count(cc, 12.5, 0.0).columns
    assert np.isnan(hmma_only["tensor_flops"][0]) and hmma_only["tensor_int_ops"][0] == 0.0
    both = _count(cc, 3.0, 4.0).columns
    assert np.isnan(both["tensor_flops"][0]) and np.isnan(both["tensor_int_ops"][0])


def test_a100_needs_the_dmma_kind_too_and_ada_hopper_are_left_alone():
    """SM 8.0 has FP64 tensor instructions (DMMA) besides HMMA: HMMA idle alone proves no FLOPs there
    only with DMMA idle too. SM 8.9 (which kind runs FP8 is not checked) and 9.0 (GMMA) keep both unknown."""
    assert np.isnan(_count("8.0", 0.0, 12.5).columns["tensor_flops"][0])
    assert _count("8.0", 0.0, 12.5, dmma=0.0).columns["tensor_flops"][0] == 0.0
    assert np.isnan(_count("8.0", 0.0, 12.5, dmma=7.0).columns["tensor_flops"][0])
    for cc in ("8.9", "9.0"):
        out = _count(cc, 0.0, 12.5, dmma=0.0).columns
        assert np.isnan(out["tensor_flops"][0]) and np.isnan(out["tensor_int_ops"][0]), cc

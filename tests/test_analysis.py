"""Roofline maths on synthetic kernel tables with hand-computed answers, and on the DeepCAM authors' table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from deepcam_data import authors_csv, deepcam_table, v100_machine
from roofline.analysis import Analysis, analyze
from roofline.analysis.columns import COLUMNS, INSTRUCTION_COLUMNS, level_columns
from roofline.analysis.roofline import LOCALITY_GAP, POOR_BW_USE, POOR_COMPUTE_USE
from roofline.kernels import KernelTable, from_records
from roofline.machine import Machine


def toy(clock: float | None = 1e9, **compute: float) -> Machine:
    """DRAM 1 TB/s, L2 4 TB/s, L1 8 TB/s; FP64 1, FP32 2, tensor FP16 16 TFLOP/s. FP32 ridge at DRAM: 2 FLOP/B."""
    return Machine(name="toy", source="theoretical", sm_clock_hz=clock,
                   memory={"l1": 8e12, "l2": 4e12, "dram": 1e12},
                   compute=compute or {"fp64": 1e12, "fp32": 2e12, "tensor_fp16": 16e12})


def k(name: str, time: float, fp32: float | None = None, l1: float | None = None, l2: float | None = None,
      dram: float | None = None, **extra: object) -> dict:
    rec: dict = {"kernel_name": name, "time_s": time, "sm_clock_hz": 1e9}
    for key, val in (("fp32_flops", fp32), ("l1_bytes", l1), ("l2_bytes", l2), ("dram_bytes", dram)):
        if val is not None:
            rec[key] = val
    rec.update(extra)
    return rec


def one(rec: dict, machine: Machine | None = None, **kw) -> pd.Series:
    a = analyze(from_records([rec]), machine if machine is not None else toy(), **kw)
    return a.frame.iloc[0]


# -- columns ------------------------------------------------------------------------------

def test_adds_exactly_the_declared_columns():
    a = analyze(from_records([k("a", 1e-3, 1e9, 1e9, 1e9, 1e9)]), toy())
    added = [c for c in a.frame.columns if c not in from_records([]).columns]
    declared = level_columns(["l1", "l2", "dram"]) + list(COLUMNS) + list(INSTRUCTION_COLUMNS)
    assert added == [c.name for c in declared]
    for c in declared:
        assert str(a.frame[c.name].dtype) == c.dtype, c.name
    assert a.levels == ("l1", "l2", "dram") and a.by == "name"


# -- memory-bound, compute-bound, each side of the ridge -------------------------------------

def test_memory_bound_kernel_hand_computed():
    r = one(k("a", 2e-3, fp32=1e9, l1=1e9, l2=1e9, dram=1e9))
    assert r["ai_dram"] == 1.0 and r["ai_l1"] == 1.0
    assert r["flop_rate"] == pytest.approx(5e11)
    assert r["bw_dram"] == pytest.approx(5e11)
    assert r["attainable_dram"] == pytest.approx(1e12)       # min(2e12, 1 x 1e12)
    assert r["attainable_l2"] == pytest.approx(2e12)         # min(2e12, 1 x 4e12)
    assert r["attainable"] == pytest.approx(1e12)
    assert r["roofline_time_s"] == pytest.approx(1e-3)       # max(0.5 ms, 1 ms, 0.25 ms, 0.125 ms)
    assert r["bound"] == "dram" and r["compute_ceiling"] == "fp32" and r["compute_peak"] == 2e12
    assert r["pct_of_roofline"] == pytest.approx(0.5)
    assert r["savable_time_s"] == pytest.approx(1e-3)
    assert r["compute_use"] == pytest.approx(0.25) and r["bw_use"] == pytest.approx(0.5)
    assert r["region"] == "memory-bound"  # bw use exactly 0.5 is not below the poor threshold


def test_compute_bound_kernel_hand_computed():
    r = one(k("b", 1e-3, fp32=1e9, l1=1e8, l2=1e8, dram=1e8))
    assert r["ai_dram"] == 10.0
    assert r["attainable"] == pytest.approx(2e12)
    assert r["roofline_time_s"] == pytest.approx(5e-4)
    assert r["bound"] == "fp32" and r["region"] == "compute-bound"
    assert r["pct_of_roofline"] == pytest.approx(0.5) and r["savable_time_s"] == pytest.approx(5e-4)


@pytest.mark.parametrize("ai, bound", [(1.9, "dram"), (2.1, "fp32")])
def test_bound_flips_at_the_ridge_point(ai, bound):
    flops = 1e9
    r = one(k("r", 1e-3, fp32=flops, l1=flops / ai / 8, l2=flops / ai / 8, dram=flops / ai))
    assert r["bound"] == bound
    assert r["attainable"] == pytest.approx(min(2e12, ai * 1e12))


@pytest.mark.parametrize("l1, l2, bound", [(1e10, 1.2e10, "l2"), (4e10, 4e9, "l1")])
def test_cache_levels_can_bind(l1, l2, bound):
    r = one(k("c", 1e-2, fp32=1e9, l1=l1, l2=l2, dram=1e9))
    assert r["bound"] == bound
    assert r["roofline_time_s"] == pytest.approx(max(l1 / 8e12, l2 / 4e12, 1e-3, 5e-4))
    assert r["region"] == "memory-bound" or r["region"] == "poor"


def test_poor_region_and_pct_is_max_of_uses():
    r = one(k("p", 1e-3, fp32=1e6, l1=1e6, l2=1e6, dram=1e6))
    assert r["region"] == "poor" and r["bound"] == "dram"
    assert r["pct_of_roofline"] == pytest.approx(1e-3)
    assert POOR_COMPUTE_USE == 0.5 and POOR_BW_USE == 0.5
    recs = [k(f"k{i}", t, fp32=f, l1=b, l2=b, dram=b) for i, (t, f, b) in
            enumerate([(1e-3, 1e9, 1e8), (1e-3, 1e7, 1e9), (5e-3, 1e9, 1e9), (1e-4, 3e8, 1e8)])]
    f = analyze(from_records(recs), toy()).frame
    assert np.allclose(f["pct_of_roofline"], np.maximum(f["compute_use"], f["bw_use"]))
    assert ((f["region"] == "poor") == (f["pct_of_roofline"] < 0.5)).all()


# -- compute ceilings ---------------------------------------------------------------------------

def test_mixed_precision_harmonic_peak():
    r = one(k("m", 1e-3, fp32=5e8, dram=1, l1=1, l2=1, fp64_flops=5e8))
    assert r["compute_peak"] == pytest.approx(1e9 / (5e8 / 1e12 + 5e8 / 2e12))  # 1.333 TFLOP/s
    assert r["compute_ceiling"] == "mixed" and r["bound"] == "mixed" and r["region"] == "compute-bound"
    r = one(k("m95", 1e-3, fp32=9.5e8, dram=1, l1=1, l2=1, fp64_flops=0.5e8))
    assert r["compute_ceiling"] == "fp32"
    assert r["compute_peak"] == pytest.approx(1e9 / (9.5e8 / 2e12 + 0.5e8 / 1e12))


def test_tensor_precision_and_unknown_tensor_type():
    a = analyze(from_records([k("t", 1e-3, dram=1, l1=1, l2=1, tensor_flops=1.6e10)]), toy())
    r = a.frame.iloc[0]
    assert r["compute_ceiling"] == "tensor_fp16" and r["compute_peak"] == 16e12
    assert r["roofline_time_s"] == pytest.approx(1e-3)
    assert any("unknown input type" in n and "tensor_fp16" in n for n in a.notes)


def test_missing_compute_ceiling_is_not_substituted():
    a = analyze(from_records([k("t", 1e-3, fp32=1e6, dram=1, l1=1, l2=1, tensor_flops=1e9, tensor_precision="tf32")]),
                toy())
    r = a.frame.iloc[0]
    assert math.isnan(r["compute_peak"]) and pd.isna(r["bound"]) and r["region"] == "unknown"
    assert math.isnan(r["roofline_time_s"]) and math.isnan(r["attainable"])
    assert any("tensor_tf32" in n for n in a.notes)
    # fp16 without an fp16 ceiling: also unknown, not held to fp32
    a = analyze(from_records([k("h", 1e-3, dram=1, l1=1, l2=1, fp16_flops=1e9)]), toy())
    assert math.isnan(a.frame["compute_peak"].iloc[0]) and any("fp16" in n for n in a.notes)


# -- clock ------------------------------------------------------------------------------------------

def test_machine_scaled_to_time_weighted_clock():
    recs = [dict(k("a", 1e-3, 1e9, 1e9, 1e9, 1e9), sm_clock_hz=1e9),
            dict(k("b", 3e-3, 1e9, 1e9, 1e9, 1e9), sm_clock_hz=2e9)]
    a = analyze(from_records(recs), toy(clock=1e9))
    assert a.machine.sm_clock_hz == pytest.approx(1.75e9)
    assert a.machine.compute["fp32"] == pytest.approx(3.5e12)
    assert a.machine.memory["l1"] == pytest.approx(14e12) and a.machine.memory["dram"] == 1e12
    assert a.frame["compute_peak"].iloc[0] == pytest.approx(3.5e12)
    assert any("scaled" in n for n in a.notes)
    b = analyze(from_records(recs), toy(clock=None))
    assert b.machine.compute["fp32"] == 2e12 and any("no SM clock" in n for n in b.notes)


# -- zero FLOPs, unknowns, no machine ---------------------------------------------------------------

def test_zero_flop_kernel_is_memory_bound_with_pct():
    r = one(k("copy", 2e-3, fp32=0.0, l1=1e9, l2=1e9, dram=1e9))
    assert r["ai_dram"] == 0.0 and r["flop_rate"] == 0.0 and r["attainable"] == 0.0
    assert r["bound"] == "dram" and r["region"] == "memory-bound"
    assert r["roofline_time_s"] == pytest.approx(1e-3) and r["pct_of_roofline"] == pytest.approx(0.5)
    assert r["compute_use"] == 0.0 and pd.isna(r["compute_ceiling"])


def test_unknown_flops_and_missing_bytes():
    a = analyze(from_records([k("nf", 1e-3, l1=1e9, l2=1e9, dram=1e9),
                              k("nb", 1e-3, fp32=1e9, l1=1e9, l2=1e10)]), toy())
    nf = a.frame.set_index("kernel_name").loc["nf"]
    assert math.isnan(nf["ai_dram"]) and math.isnan(nf["flop_rate"]) and pd.isna(nf["bound"])
    assert nf["region"] == "unknown" and math.isnan(nf["pct_of_roofline"]) and math.isnan(nf["savable_time_s"])
    assert nf["bw_dram"] == pytest.approx(1e12)  # bandwidth is known without FLOPs
    nb = a.frame.set_index("kernel_name").loc["nb"]
    assert math.isnan(nb["ai_dram"]) and nb["bound"] == "l2"  # over the levels with bytes
    assert nb["roofline_time_s"] == pytest.approx(1e10 / 4e12)
    assert any("lower bound" in n for n in a.notes) and any("no FLOP counts" in n for n in a.notes)


def test_without_machine():
    a = analyze(from_records([k("a", 2e-3, 1e9, 1e9, 5e8, 2e8)]))
    r = a.frame.iloc[0]
    assert a.machine is None and a.levels == ("l1", "l2", "dram")
    assert r["ai_dram"] == 5.0 and r["ai_l2"] == 2.0 and r["flop_rate"] == pytest.approx(5e11)
    for col in ("compute_peak", "attainable", "roofline_time_s", "pct_of_roofline", "attainable_dram", "bw_use_dram"):
        assert math.isnan(r[col]), col
    assert pd.isna(r["bound"]) and pd.isna(r["compute_ceiling"]) and r["region"] == "unknown"
    assert r["locality"] == "l1-l2-reuse"  # L1/L2 traffic 2x, L2/DRAM 2.5x: both at or above the gap
    assert any("no machine" in n for n in a.notes)
    assert math.isnan(a.totals["savable_time_s"])


def test_machine_without_a_level():
    m = Machine(name="m", source="theoretical", memory={"dram": 1e12}, compute={"fp32": 2e12})
    a = analyze(from_records([k("a", 2e-3, 1e9, 1e9, 1e9, 1e9)]), m)
    assert a.levels == ("dram",) and "ai_l1" not in a.frame.columns
    assert any("l1" in n and "no bandwidth ceiling" in n for n in a.notes)


# -- locality ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("l1, l2, dram, expected", [
    (1e9, 1e9, 1e9, "streaming"),
    (1.9e9, 1e9, 0.6e9, "streaming"),
    (4e9, 1e9, 1e9, "l1-reuse"),
    (1e9, 1e9, 0.5e9, "l2-reuse"),       # exactly the gap factor counts as reuse
    (8e9, 2e9, 1e8, "l1-l2-reuse"),
    (1e9, 1e9, None, None),
])
def test_locality(l1, l2, dram, expected):
    assert LOCALITY_GAP == 2.0
    r = one(k("x", 1e-3, 1e9, l1, l2, dram))
    assert (pd.isna(r["locality"]) if expected is None else r["locality"] == expected)


# -- aggregation, totals, ranking --------------------------------------------------------------------

def test_by_name_phase_launch_and_totals():
    recs = [k("a", 1e-3, 1e9, 1e9, 1e9, 1e9, phase="fwd"), k("a", 3e-3, 1e9, 1e9, 1e9, 1e9, phase="bwd"),
            k("z", 1e-3, 0.0, 1e9, 1e9, 1e9, phase="fwd", fp64_flops=0.0, fp16_flops=0.0, tensor_flops=0.0),
            k("u", 5e-3, None, 1e9, 1e9, 1e9, phase="bwd")]
    table = KernelTable(frame=from_records(recs), warnings=("reader says hello",))
    by_name = analyze(table, toy())
    assert len(by_name) == 3 and "reader says hello" in by_name.notes
    a = by_name.frame.set_index("kernel_name").loc["a"]
    assert a["launches"] == 2 and a["time_s"] == pytest.approx(4e-3) and a["flops"] == 2e9
    assert a["time_share"] == pytest.approx(0.4)
    assert len(analyze(table, toy(), by="launch")) == 4
    assert len(analyze(table, toy(), by="phase")) == 4
    tot = by_name.totals
    assert tot["time_s"] == pytest.approx(10e-3) and tot["launches"] == 4 and tot["kernels"] == 3
    assert tot["time_by_phase"] == pytest.approx({"fwd": 2e-3, "bwd": 8e-3})
    assert tot["zero_flop_kernels"] == 1 and tot["zero_flop_share"] == pytest.approx(0.1)
    assert tot["lower_bound_zero_flop_kernels"] == 0 and tot["unknown_flop_time_s"] == pytest.approx(5e-3)
    assert sum(tot["share_by_bound"].values()) == pytest.approx(1.0)
    assert tot["share_by_bound"]["unknown"] == pytest.approx(0.5)
    assert tot["share_by_region"]["unknown"] == pytest.approx(0.5)
    ranked = by_name.ranked.head(2)
    assert list(ranked["kernel_name"]) == ["u", "a"]
    with pytest.raises(ValueError):
        analyze(table, toy(), by="kernel")  # type: ignore[arg-type]


def test_a_zero_with_a_flop_counter_missing_is_not_counted_as_no_flops():
    """0 FP32 FLOPs with the FP64 counters not collected is a lower bound, not a kernel without FLOPs."""
    recs = [k("known", 1e-3, 0.0, 1e9, 1e9, 1e9, fp64_flops=0.0, fp16_flops=0.0, tensor_flops=0.0),
            k("bound", 2e-3, 0.0, 1e9, 1e9, 1e9, fp16_flops=0.0, tensor_flops=0.0),
            k("busy", 4e-3, 1e9, 1e9, 1e9, 1e9)]
    a = analyze(from_records(recs), toy())
    assert list(a.frame["kernel_name"][a.zero_flop_mask]) == ["known"]
    tot = a.totals
    assert (tot["zero_flop_kernels"], tot["zero_flop_time_s"]) == (1, pytest.approx(1e-3))
    assert (tot["lower_bound_zero_flop_kernels"], tot["lower_bound_zero_flop_time_s"]) == (1, pytest.approx(2e-3))
    assert (tot["zero_work_kernels"], tot["lower_bound_zero_work_kernels"]) == (1, 1)


def test_empty_table():
    a = analyze(from_records([]), toy())
    assert isinstance(a, Analysis) and len(a) == 0 and a.totals["time_s"] == 0.0


def test_input_is_not_modified():
    frame = from_records([k("a", 1e-3, 1e9, 1e9, 1e9, 1e9)])
    before = frame.copy()
    analyze(frame, toy())
    pd.testing.assert_frame_equal(frame, before)


# -- DeepCAM (the paper's authors' per-kernel table) against the V100 ERT ceilings --------------------

def test_deepcam_intensities_match_the_authors():
    a = analyze(deepcam_table(), v100_machine())
    f = a.frame.set_index("kernel_name")
    src = authors_csv().set_index("Kernel Name")
    for name, row in src.iterrows():
        for ours, theirs in (("ai_dram", "AI HBM"), ("ai_l2", "AI L2"), ("ai_l1", "AI L1")):
            assert f.loc[name, ours] == pytest.approx(row[theirs], rel=1e-12)
        # the authors' GFLOP/s divides by 2**30; ours is SI FLOP/s
        assert f.loc[name, "flop_rate"] / 2**30 == pytest.approx(row["GFLOP/s"], rel=1e-9)
        assert f.loc[name, "time_s"] == pytest.approx(row["Time"], rel=1e-12)


def test_deepcam_lamb_kernels_are_hbm_bound_on_v100():
    a = analyze(deepcam_table(), v100_machine())
    top = a.ranked.head(3)
    assert list(top["bound"]) == ["dram"] * 3 and list(top["region"]) == ["memory-bound"] * 3
    stage1 = top.iloc[0]
    assert "LAMBStage1Functor" in stage1["kernel_name"]
    # 1 580 765 440 B of HBM traffic in 2.0821 ms at 828.758 GB/s: 91.6% of the HBM ceiling
    expected = 1580765440 / 828.758e9 / 0.0020820727055196712
    assert stage1["pct_of_roofline"] == pytest.approx(expected, rel=1e-12)
    assert stage1["pct_of_roofline"] == pytest.approx(0.9161, abs=1e-4)
    assert stage1["attainable"] == pytest.approx(0.50068489857673 * 828.758e9, rel=1e-9)
    assert stage1["locality"] == "streaming" and bool(stage1["flops_partial"])
    # vectorized_elementwise_kernel: 0 FP32/FP16 FLOPs counted, the FP64 counters not collected
    assert a.totals["zero_flop_kernels"] == 0 and a.totals["lower_bound_zero_flop_kernels"] == 1
    assert a.totals["lower_bound_zero_flop_time_s"] == pytest.approx(15.169e-6, rel=1e-4)


def test_deepcam_from_the_raw_ncu_files_matches_the_authors_table():
    """End to end: the ncu reader's launches, analysed by name, give the same answers as the authors' table."""
    from pathlib import Path

    from roofline.readers import read_profile

    raw = sorted((Path(__file__).parent / "data" / "ncu" / "v100_deepcam_lamb").glob("out.*"))
    table = read_profile(raw, fp16="paper")
    by_launch = analyze(table, v100_machine(), by="launch")
    assert len(by_launch) == 35
    ours = analyze(table, v100_machine()).frame.set_index("kernel_name")
    ref = analyze(deepcam_table(), v100_machine()).frame.set_index("kernel_name")
    assert sorted(ours.index) == sorted(ref.index)
    for col in ("ai_l1", "ai_l2", "ai_dram", "flops", "dram_bytes"):
        assert np.allclose(ours.loc[ref.index, col], ref[col], rtol=1e-12, equal_nan=True), col
    # the authors' Time is sum(cycles) / mean(clock); the reader sums each launch's cycles / clock: within 0.1 %
    for col in ("time_s", "flop_rate", "pct_of_roofline"):
        assert np.allclose(ours.loc[ref.index, col], ref[col], rtol=1e-3), col
    assert (ours.loc[ref.index, "bound"] == ref["bound"]).all()
    assert (ours.loc[ref.index, "region"] == ref["region"]).all()


def test_notes_count_kernels_in_words() -> None:
    """Notes say "1 kernel" / "5 kernels", never "kernel(s)" (the demo: 5 kernels lack FP64 counters)."""
    from roofline import api
    from roofline.units import counted

    assert (counted(1, "kernel"), counted(5, "kernel"), counted(0, "launch", "launches")) == \
        ("1 kernel", "5 kernels", "0 launches")
    profiles, machine = api.example_files()
    notes = api.analyze(api.read(profiles, fp16="paper"), machine).notes
    assert not any("(s)" in n for n in notes), notes
    assert any(n.startswith("a FLOP component is missing for 5 kernels") for n in notes), notes

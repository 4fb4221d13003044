"""Projection maths and every per-kernel note, on synthetic tables and toy machines, against figures by hand.

The machines (tests/projection_data.py): SRC at the kernels' 1 GHz, L1 8 / L2 4 / DRAM 1 TB/s, FP64 1,
FP32 2, tensor FP16 16, BF16 16, FP8 32 TFLOP/s; TGT at its own 1 GHz, L1 16 / L2 8 / DRAM 2 TB/s, FP64
0.5, FP32 8, tensor FP16 16 TFLOP/s. Times in the comments: ms and µs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from projection_data import SRC_COMPUTE, TGT_COMPUTE, TGT_MEMORY, kernel, machine, src, table, tgt
from roofline.comparison import compare
from roofline.errors import InputError
from roofline.projection import NOTE_CODES, TOTAL_KEYS, project

approx = pytest.approx


def row(proj, name: str, phase: str | None = None) -> pd.Series:
    f = proj.frame
    pick = f["kernel_name"] == name
    if phase is not None:
        pick &= f["phase"] == phase
    assert int(pick.sum()) == 1, f"{name} {phase}: {int(pick.sum())} rows"
    return f[pick].iloc[0]


def codes(proj, name: str) -> tuple[str, ...]:
    return row(proj, name)["notes"]


# memory-bound: 1 GFLOP FP32, 1 GB through L1, L2 and DRAM, 2 ms. On SRC: FP32 1e9/2e12 = 0.5 ms, DRAM 1e9/1e12 = 1 ms,
# L2 0.25 ms, L1 0.125 ms -> roofline 1 ms (DRAM), 50%. On TGT: DRAM 1e9/2e12 = 0.5 ms, FP32 1e9/8e12 = 0.125 ms,
# L2 0.125 ms, L1 0.0625 ms -> best 0.5 ms (DRAM).
STREAM = dict(fp32=1e9, l1_bytes=1e9, l2_bytes=1e9, dram_bytes=1e9)
# compute-bound: 1 GFLOP FP32, 0.1 GB at each level, 1 ms. On SRC: FP32 0.5 ms, DRAM 0.1 ms -> roofline 0.5 ms (FP32),
# 50%. On TGT: FP32 1e9/8e12 = 0.125 ms, DRAM 1e8/2e12 = 0.05 ms -> best 0.125 ms (FP32).
GEMM = dict(fp32=1e9, l1_bytes=1e8, l2_bytes=1e8, dram_bytes=1e8)


# -- 1. the base maths -----------------------------------------------------------------------------
def test_memory_and_compute_bound_kernels_by_hand():
    p = project(table(kernel("stream", 2e-3, **STREAM), kernel("gemm", 1e-3, **GEMM)), tgt(), src())
    s = row(p, "stream")
    assert s["roofline_time_s"] == approx(1e-3) and s["pct_of_roofline"] == approx(0.5)
    assert s["bound"] == "dram" and s["bound_target"] == "dram"
    assert s["best_time_s"] == approx(0.5e-3)          # 1e9 B / 2e12 B/s
    assert s["projected_time_s"] == approx(1e-3)       # 2 ms x 0.5 / 1
    assert s["low_time_s"] == approx(0.5e-3)           # the best case
    assert s["high_time_s"] == approx(1.5e-3)          # max(1, 0.5 + (2 - 1)) ms
    assert s["speedup"] == approx(2.0)                 # 2 / 1
    assert s["speedup_low"] == approx(2 / 1.5)         # 2 / 1.5
    assert s["speedup_high"] == approx(4.0)            # 2 / 0.5
    assert s["gain_s"] == approx(1e-3)
    assert bool(s["projected"]) and s["why"] is None and s["notes"] == () and s["note_text"] == ""

    g = row(p, "gemm")
    assert g["roofline_time_s"] == approx(0.5e-3) and g["bound"] == "fp32" and g["bound_target"] == "fp32"
    assert g["best_time_s"] == approx(0.125e-3)        # 1e9 / 8e12
    assert g["projected_time_s"] == approx(0.25e-3)    # 1 ms x 0.125 / 0.5
    assert g["low_time_s"] == approx(0.125e-3)
    assert g["high_time_s"] == approx(0.625e-3)        # max(0.25, 0.125 + (1 - 0.5)) ms
    assert g["speedup"] == approx(4.0)                 # 1 / 0.25
    assert g["speedup_low"] == approx(1.6)             # 1 / 0.625
    assert g["speedup_high"] == approx(8.0)            # 1 / 0.125
    assert g["gain_s"] == approx(0.75e-3) and g["notes"] == ()

    # longest projected gain first: 1 ms before 0.75 ms
    assert list(p.frame["kernel_name"]) == ["stream", "gemm"]
    t = p.totals
    assert set(t) == set(TOTAL_KEYS)
    assert t["time_s"] == approx(3e-3)                 # 2 + 1
    assert t["projected_time_s"] == approx(1.25e-3)    # 1 + 0.25
    assert t["best_time_s"] == approx(0.625e-3)        # 0.5 + 0.125
    assert t["low_time_s"] == approx(0.625e-3)
    assert t["high_time_s"] == approx(2.125e-3)        # 1.5 + 0.625
    assert t["speedup"] == approx(2.4)                 # 3 / 1.25
    assert t["speedup_low"] == approx(3 / 2.125)       # 1.41
    assert t["speedup_high"] == approx(4.8)            # 3 / 0.625
    assert t["coverage"] == approx(1.0) and t["kernels"] == 2 and t["unprojected"] == 0
    assert p.keys == ("kernel_name",) and p.levels == ("l1", "l2", "dram")
    assert p.unprojected().empty and p.phase_totals().empty
    assert p.notes[0].startswith("the target 'tgt-toy' at 1 GHz SM clock")


def test_target_analysis_holds_the_kernels_at_their_projected_times():
    p = project(table(kernel("stream", 2e-3, **STREAM), kernel("gemm", 1e-3, **GEMM)), tgt(), src())
    src_rows, tgt_rows = p.source_analysis.frame, p.target_analysis.frame
    assert list(tgt_rows["kernel_name"]) == list(src_rows["kernel_name"]) == ["stream", "gemm"]
    assert tgt_rows["time_s"].tolist() == approx([1e-3, 0.25e-3])
    # FLOP rate there: 1e9 FLOP / 1 ms = 1e12, 1e9 / 0.25 ms = 4e12 FLOP/s;
    # % of the target roofline: 0.5 / 1 and 0.125 / 0.25
    assert tgt_rows["flop_rate"].tolist() == approx([1e12, 4e12])
    assert tgt_rows["pct_of_roofline"].tolist() == approx([0.5, 0.5])
    assert tgt_rows["savable_time_s"].tolist() == approx([0.5e-3, 0.125e-3])
    c = compare(p.source_analysis, p.target_analysis)
    assert len(c.frame) == 2 and set(c.frame["status"]) == {"matched"}


def test_totals_per_phase_and_for_the_program():
    t = table(kernel("stream", 2e-3, phase="forward", **STREAM), kernel("gemm", 1e-3, phase="forward", **GEMM),
              kernel("gemm", 1e-3, phase="backward", **GEMM))
    p = project(t, tgt(), src(), by="phase")
    assert p.keys == ("phase", "kernel_name") and len(p.frame) == 3
    assert row(p, "gemm", "backward")["projected_time_s"] == approx(0.25e-3)
    ph = p.phase_totals().set_index("phase")
    assert list(ph.index) == ["forward", "backward"]   # longest first: 3 ms, 1 ms
    fw, bw = ph.loc["forward"], ph.loc["backward"]
    assert fw["time_s"] == approx(3e-3) and fw["projected_time_s"] == approx(1.25e-3)  # 1 + 0.25
    assert fw["high_time_s"] == approx(2.125e-3) and fw["low_time_s"] == approx(0.625e-3)
    assert fw["speedup"] == approx(2.4) and fw["kernels"] == 2
    assert bw["time_s"] == approx(1e-3) and bw["projected_time_s"] == approx(0.25e-3)
    assert bw["speedup"] == approx(4.0) and bw["speedup_low"] == approx(1.6) and bw["speedup_high"] == approx(8.0)
    tot = p.totals
    assert tot["time_s"] == approx(4e-3)               # 2 + 1 + 1
    assert tot["projected_time_s"] == approx(1.5e-3)   # 1 + 0.25 + 0.25
    assert tot["low_time_s"] == approx(0.75e-3)        # 0.5 + 0.125 + 0.125
    assert tot["high_time_s"] == approx(2.75e-3)       # 1.5 + 0.625 + 0.625
    assert tot["speedup"] == approx(4 / 1.5)           # 2.67
    assert tot["speedup_low"] == approx(4 / 2.75)      # 1.45
    assert tot["speedup_high"] == approx(4 / 0.75)     # 5.33
    assert sum(ph["time_s"]) == approx(tot["time_s"]) and sum(ph["projected_time_s"]) == approx(tot["projected_time_s"])


def test_kernels_outside_any_phase_total_as_unknown():
    p = project(table(kernel("stream", 2e-3, phase="forward", **STREAM), kernel("gemm", 1e-3, **GEMM)),
                tgt(), src(), by="phase")
    ph = p.phase_totals().set_index("phase")
    assert list(ph.index) == ["forward", "unknown"]
    assert ph.loc["unknown", "projected_time_s"] == approx(0.25e-3) and ph.loc["unknown", "coverage"] == approx(1.0)


def test_by_must_be_name_or_phase():
    with pytest.raises(ValueError, match="by 'name' or by 'phase'"):
        project(table(kernel("stream", 2e-3, **STREAM)), tgt(), src(), by="op")


# -- 2. every note ---------------------------------------------------------------------------------
def test_every_note_code_has_a_test_below():
    tested = {"limiter-change", "precision-substituted", "precision-unknown", "short-launch", "l2-smaller",
              "l2-larger", "unknown-flops", "above-roofline"}
    assert set(NOTE_CODES) == tested


# memory-bound here (2 ms; DRAM 1 ms, FP32 0.5 ms: 1 GFLOP at 5e11 FLOP/s is 25% of FP32 2e12) and a control that
# is compute-bound everywhere (10 GFLOP, 0.1 GB, 10 ms: FP32 5 ms here).
def test_limiter_change_memory_here_compute_there():
    wide = tgt(name="wide-toy", memory={"dram": 10e12}, fp32=1e12)
    p = project(table(kernel("stream", 2e-3, fp32=1e9, dram_bytes=1e9),
                      kernel("gemm", 10e-3, fp32=1e10, dram_bytes=1e8)), wide, src())
    s = row(p, "stream")
    assert s["bound"] == "dram" and s["bound_target"] == "fp32"
    assert s["best_time_s"] == approx(1e-3)            # FP32 1e9 / 1e12 (DRAM 1e9 / 1e13 = 0.1 ms)
    assert s["projected_time_s"] == approx(2e-3)       # 2 ms x 1 / 1
    assert s["low_time_s"] == approx(1e-3)
    assert s["high_time_s"] == approx(4e-3)            # best / today's compute use = 1 ms / 0.25 (> 1 + 1 ms)
    assert s["notes"] == ("limiter-change",) and "25% of fp32" in s["note_text"]
    g = row(p, "gemm")
    assert g["bound"] == g["bound_target"] == "fp32" and g["notes"] == ()
    assert g["projected_time_s"] == approx(20e-3)      # 10 ms x 10 / 5
    assert g["high_time_s"] == approx(20e-3)           # max(20, 10 + (10 - 5)) ms


def test_limiter_change_compute_here_memory_there():
    # 10 GFLOP, 1 GB, 10 ms. Here FP32 5 ms, DRAM 1 ms (uses 1e9 / 10 ms = 1e11 B/s, 10% of 1 TB/s).
    # There (DRAM 0.1 TB/s, FP32 100 TFLOP/s): DRAM 10 ms, FP32 0.1 ms.
    narrow = tgt(name="narrow-toy", memory={"dram": 0.1e12}, fp32=100e12)
    p = project(table(kernel("k", 10e-3, fp32=1e10, dram_bytes=1e9)), narrow, src())
    k = row(p, "k")
    assert k["bound"] == "fp32" and k["bound_target"] == "dram"
    assert k["best_time_s"] == approx(10e-3)
    assert k["projected_time_s"] == approx(20e-3)      # 10 ms x 10 / 5
    assert k["high_time_s"] == approx(100e-3)          # 10 ms / 0.1 (> max(20, 10 + 5) ms)
    assert k["notes"] == ("limiter-change",) and "10% of dram" in k["note_text"]


def test_limiter_change_across_memory_levels():
    # 8 GB through L2, 1.5 GB from DRAM, 4 ms. Here L2 2 ms, DRAM 1.5 ms (uses 1.5e9 / 4 ms = 3.75e11 B/s, 37.5% of
    # 1 TB/s). There (L2 40 TB/s, DRAM 1 TB/s): L2 0.2 ms, DRAM 1.5 ms.
    target = tgt(name="l2rich-toy", memory={"l2": 40e12, "dram": 1e12})
    k = row(project(table(kernel("k", 4e-3, l2_bytes=8e9, dram_bytes=1.5e9)), target, src()), "k")
    assert k["bound"] == "l2" and k["bound_target"] == "dram"
    assert k["best_time_s"] == approx(1.5e-3)
    assert k["projected_time_s"] == approx(3e-3)       # 4 ms x 1.5 / 2
    assert k["high_time_s"] == approx(4e-3)            # 1.5 ms / 0.375 (> max(3, 1.5 + 2) ms)
    assert k["notes"] == ("limiter-change",) and "limited by l2 here, by dram there" in k["note_text"]


def test_fp8_tensor_kernel_held_to_fp16_where_the_target_has_no_fp8():
    # FP8: 1.6e10 tensor FLOPs, 0.1 GB, 1 ms. Here 1.6e10 / 32e12 = 0.5 ms (DRAM 0.1 ms): 50%. There held to
    # tensor FP16 16e12: 1 ms (DRAM 0.05 ms). BF16: same FLOPs, 2 ms; 1 ms here and there (same data size).
    p = project(table(kernel("fp8", 1e-3, tensor=1.6e10, tensor_precision="fp8", dram_bytes=1e8),
                      kernel("bf16", 2e-3, tensor=1.6e10, tensor_precision="bf16", dram_bytes=1e8),
                      kernel("gemm", 1e-3, **GEMM)), tgt(), src())
    f = row(p, "fp8")
    assert f["bound"] == f["bound_target"] == "tensor_fp8"
    assert f["best_time_s"] == approx(1e-3)
    assert f["projected_time_s"] == approx(2e-3)       # 1 ms x 1 / 0.5
    assert f["high_time_s"] == approx(4e-3)            # 2 x projected (twice the bytes in FP16) > 1 + 0.5 ms
    assert f["high_time_s"] >= 2 * f["projected_time_s"]
    assert f["low_time_s"] == approx(1e-3)
    assert f["notes"] == ("precision-substituted",) and "tensor_fp16" in f["note_text"]
    b = row(p, "bf16")
    assert b["notes"] == ("precision-substituted",)
    assert b["projected_time_s"] == approx(2e-3)       # 2 ms x 1 / 1
    assert b["high_time_s"] == approx(2e-3)            # factor 1: max(2, 1 + (2 - 1)) ms, not widened
    assert codes(p, "gemm") == ()
    assert "held to substitute ceilings on the target: tensor_bf16 -> tensor_fp16, tensor_fp8 -> tensor_fp16" in p.notes
    assert p.target.compute["tensor_fp8"] == p.target.compute["tensor_bf16"] == 16e12


def test_fp4_tensor_kernel_held_to_fp16_through_fp8_where_the_target_has_neither():
    # FP4: 3.2e10 tensor FLOPs, 0.1 GB, 2 ms. Here (FP4 64 TFLOP/s) 0.5 ms (DRAM 0.1 ms): 25 %. The target has
    # no FP4 and no FP8 tensor cores: FP4 -> FP8 -> FP16, 16 TFLOP/s: best 2 ms, projected 2 ms x 2 / 0.5 = 8 ms;
    # high 4 x 8 = 32 ms (FP4 data as FP16 moves four times the bytes) > max(8, 2 + 1.5) ms.
    p = project(table(kernel("fp4", 2e-3, tensor=3.2e10, tensor_precision="fp4", dram_bytes=1e8)), tgt(),
                src(**SRC_COMPUTE, tensor_fp4=64e12))
    f = row(p, "fp4")
    assert f["pct_of_roofline"] == approx(0.25) and f["bound"] == "tensor_fp4"
    assert f["best_time_s"] == approx(2e-3) and f["projected_time_s"] == approx(8e-3)
    assert f["high_time_s"] == approx(32e-3)
    assert f["notes"] == ("precision-substituted",)
    assert ("tensor_fp4 FLOPs held to the target's tensor_fp16 ceiling: it has no tensor_fp4 ceiling (FP4 data in FP8 "
            "move twice the bytes; FP8 data in FP16 move twice the bytes)") in f["note_text"]
    assert "held to substitute ceilings on the target: tensor_fp4 -> tensor_fp16" in p.notes
    # where the target has FP8, one step: the bytes twice, not four times
    one_step = row(project(table(kernel("fp4", 2e-3, tensor=3.2e10, tensor_precision="fp4", dram_bytes=1e8)),
                           tgt(**TGT_COMPUTE, tensor_fp8=32e12), src(**SRC_COMPUTE, tensor_fp4=64e12)), "fp4")
    assert one_step["projected_time_s"] == approx(4e-3) and one_step["high_time_s"] == approx(8e-3)


# Target without FP64 (nor a lower bound on it), DRAM 0.5 TB/s. Its memory roof decides the bound only when it is at
# least today's time (the achieved rate is a lower bound on the unknown peak).
NOFP64 = dict(name="nofp64-toy", memory={"l1": 16e12, "l2": 8e12, "dram": 0.5e12}, fp32=8e12, tensor_fp16=16e12)
PRECISION_TABLE = (
    # FP64-heavy: 1 GFLOP, 0.1 GB, 2 ms. Here FP64 1 ms. There DRAM 1e8 / 0.5e12 = 0.2 ms < 2 ms: compute unknown.
    kernel("dgemm", 2e-3, fp64=1e9, dram_bytes=1e8),
    # FP64 memory-bound: 1 MFLOP, 1 GB, 2 ms. Here DRAM 1 ms. There DRAM 2 ms >= 2 ms: memory binds whatever the peak.
    kernel("dstream", 2e-3, fp64=1e6, dram_bytes=1e9),
    # control, FP32 10 GFLOP, 0.1 GB, 10 ms: here 5 ms; there FP32 1.25 ms (DRAM 0.2 ms).
    kernel("sgemm", 10e-3, fp32=1e10, dram_bytes=1e8),
)


def test_precision_unknown_unbounded_kernel_is_not_projected():
    p = project(table(*PRECISION_TABLE), tgt(**NOFP64), src())
    d = row(p, "dgemm")
    assert not d["projected"] and d["why"] == "the target has no fp64 ceiling"
    assert math.isnan(d["projected_time_s"]) and math.isnan(d["speedup"]) and math.isnan(d["gain_s"])
    assert d["notes"] == ("precision-unknown",)
    assert "at least 200 µs, unbounded above" in d["note_text"]  # the memory roof there, 1e8 / 0.5e12
    assert codes(p, "sgemm") == ()
    assert row(p, "sgemm")["projected_time_s"] == approx(2.5e-3)  # 10 ms x 1.25 / 5
    assert list(p.unprojected()["kernel_name"]) == ["dgemm"]
    # 1 of 3 kernels, 2 ms of 14 ms = 14.3% of the time
    assert "1 kernel(s), 14.3% of the time, not projected (see the unprojected list)" in p.notes
    t = p.totals
    assert t["time_s"] == approx(12e-3) and t["coverage"] == approx(12 / 14)
    assert t["kernels"] == 2 and t["unprojected"] == 1


def test_precision_unknown_range_is_memory_roof_to_unbounded():
    d = row(project(table(*PRECISION_TABLE), tgt(**NOFP64), src()), "dgemm")
    assert d["low_time_s"] == approx(0.2e-3)           # the memory roof there: 1e8 / 0.5e12
    assert d["high_time_s"] == math.inf


def test_precision_unknown_where_memory_decides_is_projected():
    d = row(project(table(*PRECISION_TABLE), tgt(**NOFP64), src()), "dstream")
    assert d["projected"] and d["notes"] == ("precision-unknown",)
    assert "memory binds there whatever it is" in d["note_text"]
    assert d["bound"] == d["bound_target"] == "dram"
    assert d["best_time_s"] == approx(2e-3)            # 1e9 / 0.5e12
    assert d["projected_time_s"] == approx(4e-3)       # 2 ms x 2 / 1
    assert d["low_time_s"] == approx(2e-3)
    assert d["high_time_s"] == approx(4e-3)            # max(4, 2 + (2 - 1)) ms
    assert d["speedup"] == approx(0.5)


# 10 launches of 2 µs: 20 µs, 10 MB from DRAM, no FLOPs: 10 µs here (50%). Control: 2 ms in one launch.
@pytest.mark.parametrize("dram_bw, best, projected, low, high", [
    # TGT 2 TB/s: best 5 µs, projected 20 x 5 / 10 = 10 µs, fixed 5 + 10 = 15 µs; the range takes in today's 20 µs
    (2e12, 5e-6, 10e-6, 5e-6, 20e-6),
    # a slower target, 0.25 TB/s: best 40 µs, projected 80 µs, fixed 50 µs; low end today's 20 µs
    (0.25e12, 40e-6, 80e-6, 20e-6, 80e-6),
])
def test_short_launches_take_in_todays_time(dram_bw, best, projected, low, high):
    target = tgt(memory={**TGT_MEMORY, "dram": dram_bw})
    p = project(table(kernel("tiny", 20e-6, launches=10, dram_bytes=1e7), kernel("big", 2e-3, dram_bytes=1e9)),
                target, src())
    t = row(p, "tiny")
    assert t["launches"] == 10 and t["roofline_time_s"] == approx(10e-6)
    assert t["best_time_s"] == approx(best) and t["projected_time_s"] == approx(projected)
    assert t["low_time_s"] == approx(low) and t["high_time_s"] == approx(high)
    assert t["low_time_s"] <= 20e-6 <= t["high_time_s"]
    assert t["notes"] == ("short-launch",) and "2 µs per launch" in t["note_text"]
    assert codes(p, "big") == ()


# L2 40 MB here, 10 MB there; L2 and DRAM bytes only.
def test_l2_smaller_charges_l2_bytes_to_dram_on_the_target():
    p = project(table(
        # reuses the L2 (120 MB through L2 per 40 MB from DRAM: 3x) with 20 MB from DRAM per launch (2 launches),
        # between 10 and 40 MB. 80 µs; here DRAM 40 µs, L2 120e6 / 4e12 = 30 µs -> 40 µs.
        kernel("reuse", 80e-6, launches=2, l2_bytes=120e6, dram_bytes=40e6),
        # streams (L2 bytes = DRAM bytes), 20 MB per launch: not flagged. Here 20 µs; there 10 µs.
        kernel("stream", 40e-6, l2_bytes=20e6, dram_bytes=20e6),
        # reuses the L2 but its 5 MB fit both: not flagged. Here L2 50e6 / 4e12 = 12.5 µs; there 6.25 µs.
        kernel("fits", 25e-6, l2_bytes=50e6, dram_bytes=5e6),
    ), tgt(l2_bytes=10e6), src(l2_bytes=40e6))
    r = row(p, "reuse")
    assert r["notes"] == ("l2-smaller",) and "3.0 B through L2 per DRAM byte" in r["note_text"]
    assert r["bound"] == r["bound_target"] == "dram"
    assert r["best_time_s"] == approx(60e-6)           # DRAM charged its 120 MB of L2 bytes: 120e6 / 2e12
    assert r["projected_time_s"] == approx(120e-6)     # 80 µs x 60 / 40
    assert r["high_time_s"] == approx(120e-6)          # max(120, 60 + (80 - 40)) µs
    assert r["low_time_s"] == approx(20e-6)            # today's DRAM bytes: 40e6 / 2e12 (L2 120e6 / 8e12 = 15 µs)
    s = row(p, "stream")
    assert s["notes"] == () and s["best_time_s"] == approx(10e-6) and s["low_time_s"] == approx(10e-6)
    f = row(p, "fits")
    assert f["notes"] == () and f["best_time_s"] == approx(6.25e-6)
    assert "L2 40 MB here, 10 MB on the target: a kernel's DRAM bytes per launch stand for its working set" in p.notes
    assert any(n.startswith("assumption: the L2 bytes of 1 kernel(s)") for n in p.notes)


def test_l2_larger_low_end_without_the_dram_term():
    p = project(table(
        # 20 MB per launch, over the 10 MB here, within the 40 MB there. 40 µs; here DRAM 20 µs (L2 15 µs).
        kernel("fits-there", 40e-6, l2_bytes=60e6, dram_bytes=20e6),
        # 50 MB: over both. Here DRAM 50 µs.
        kernel("too-big", 100e-6, l2_bytes=50e6, dram_bytes=50e6),
        # 5 MB: within both.
        kernel("small", 10e-6, l2_bytes=5e6, dram_bytes=5e6),
    ), tgt(l2_bytes=40e6), src(l2_bytes=10e6))
    r = row(p, "fits-there")
    assert r["notes"] == ("l2-larger",)
    assert r["best_time_s"] == approx(10e-6)           # DRAM 20e6 / 2e12 (as measured: no assumption)
    assert r["projected_time_s"] == approx(20e-6)      # 40 µs x 10 / 20
    assert r["high_time_s"] == approx(30e-6)           # 10 + (40 - 20) µs
    assert r["low_time_s"] == approx(7.5e-6)           # without DRAM: L2 60e6 / 8e12
    assert codes(p, "too-big") == () and codes(p, "small") == ()
    assert row(p, "too-big")["low_time_s"] == approx(25e-6)  # 50e6 / 2e12


def test_l2_size_unknown_is_said():
    p = project(table(kernel("stream", 2e-3, **STREAM)), tgt(), src(l2_bytes=40e6))
    assert "L2 size unknown on the target: cache-capacity effects not assessed" in p.notes
    p = project(table(kernel("stream", 2e-3, **STREAM)), tgt(), src(), source_l2_bytes=40e6)
    assert "L2 size unknown on the target: cache-capacity effects not assessed" in p.notes
    p = project(table(kernel("stream", 2e-3, **STREAM)), tgt(l2_bytes=40e6), src(), source_l2_bytes=40e6)
    assert not any("L2 size unknown" in n for n in p.notes)


def test_source_l2_bytes_stands_in_for_a_machine_without_one():
    p = project(table(kernel("reuse", 80e-6, launches=2, l2_bytes=120e6, dram_bytes=40e6)),
                tgt(l2_bytes=10e6), src(), source_l2_bytes=40e6)
    assert codes(p, "reuse") == ("l2-smaller",) and row(p, "reuse")["best_time_s"] == approx(60e-6)


def test_unknown_flops_widen_the_high_end():
    # target FP64 0.5, FP32 8, tensor FP16 4 TFLOP/s. Ratios here / there: FP64 1 / 0.5 = 2, FP32 2 / 8 = 0.25,
    # tensor FP16 16 / 4 = 4.
    target = tgt(fp64=0.5e12, fp32=8e12, tensor_fp16=4e12)
    p = project(table(
        # FP64 not counted (NaN, flops_partial): 1 GFLOP FP32, 1 GB, 2 ms. Here DRAM 1 ms; there 0.5 ms.
        kernel("partial", 2e-3, fp64=None, fp32=1e9, dram_bytes=1e9),
        kernel("counted", 2e-3, fp32=1e9, dram_bytes=1e9),   # control: the same, all counted
        # no FLOP counts at all: 1 GB, 2 ms: memory alone, 1 ms here, 0.5 ms there.
        kernel("noflops", 2e-3, fp64=None, fp32=None, fp16=None, tensor=None, dram_bytes=1e9),
    ), target, src())
    c = row(p, "counted")
    assert c["notes"] == () and c["projected_time_s"] == approx(1e-3) and c["high_time_s"] == approx(1.5e-3)
    q = row(p, "partial")
    assert q["notes"] == ("unknown-flops",) and "x 2 " in q["note_text"]
    assert q["projected_time_s"] == approx(1e-3)       # 2 ms x 0.5 / 1
    assert q["high_time_s"] == approx(4e-3)            # today's 2 ms x FP64's ratio 2 (> 1.5 ms)
    n = row(p, "noflops")
    assert n["projected"] and n["notes"] == ("unknown-flops",) and n["note_text"].startswith("no FLOP counts")
    assert n["roofline_time_s"] == approx(1e-3)        # from memory alone: 1e9 / 1e12
    assert n["best_time_s"] == approx(0.5e-3)          # 1e9 / 2e12
    assert n["projected_time_s"] == approx(1e-3)       # 2 ms x 0.5 / 1
    assert n["low_time_s"] == approx(0.5e-3)
    assert n["high_time_s"] == approx(8e-3)            # 2 ms x the largest ratio, tensor FP16's 4


def test_unknown_flops_without_a_common_ceiling_are_unbounded():
    # FP64 uncounted; neither machine has FP64 nor tensor FP64
    nofp64_src = machine("src-toy", {"dram": 1e12}, {"fp32": 2e12})
    p = project(table(kernel("partial", 2e-3, fp64=None, fp32=1e9, dram_bytes=1e9)),
                tgt(memory={"dram": 2e12}, fp32=8e12), nofp64_src)
    q = row(p, "partial")
    assert q["projected"] and q["projected_time_s"] == approx(1e-3) and q["high_time_s"] == math.inf
    assert q["speedup_low"] == 0.0 and "unbounded above" in q["note_text"]
    assert p.totals["high_time_s"] == math.inf and p.totals["speedup_low"] == 0.0


def test_above_roofline():
    # 1 GB in 0.5 ms: the roofline here says 1 ms (200%). There best 0.5 ms; projected 0.5 x 0.5 / 1 = 0.25 ms.
    p = project(table(kernel("fast", 0.5e-3, dram_bytes=1e9), kernel("stream", 2e-3, **STREAM)), tgt(), src())
    f = row(p, "fast")
    assert f["notes"] == ("above-roofline",) and f["note_text"].startswith("200% of its roofline here")
    assert f["pct_of_roofline"] == approx(2.0)
    assert f["projected_time_s"] == approx(0.25e-3)
    assert f["low_time_s"] == approx(0.25e-3)          # min(best 0.5, projected 0.25) ms
    assert f["high_time_s"] == approx(0.5e-3)          # max(0.25, 0.5 + 0) ms: nothing above the roofline to keep
    assert codes(p, "stream") == ()


def test_kernels_without_counts_or_time_are_not_projected():
    fp16_src = src()  # has no non-tensor FP16: a roofline here is unknown for an FP16 kernel (1 µs of DRAM < 1 ms)
    p = project(table(kernel("stream", 2e-3, **STREAM),
                      kernel("nothing", 1e-3, fp64=None, fp32=None, fp16=None, tensor=None),
                      kernel("notime", None, dram_bytes=1e9),
                      kernel("half", 1e-3, fp16=1e9, dram_bytes=1e6)), tgt(), fp16_src)
    why = dict(zip(p.unprojected()["kernel_name"], p.unprojected()["why"]))
    assert why == {"nothing": "no FLOP or byte counts", "notime": "no time measured",
                   "half": "its roofline here is unknown (a ceiling it uses is missing on the source machine)"}
    for name in why:
        r = row(p, name)
        assert not r["projected"] and math.isnan(r["projected_time_s"]) and math.isnan(r["best_time_s"])
        assert math.isnan(r["low_time_s"]) and math.isnan(r["high_time_s"])
    t = p.totals
    assert t["kernels"] == 1 and t["unprojected"] == 3 and t["projected_time_s"] == approx(1e-3)
    assert t["coverage"] == approx(0.5)                # 2 ms of 2 + 1 + 1 ms (no time: not counted)


def test_nothing_projectable_is_an_input_error():
    with pytest.raises(InputError, match=r"no kernel could be projected \(no FLOP or byte counts\)"):
        project(table(kernel("a", 1e-3, fp64=None, fp32=None, fp16=None, tensor=None),
                      kernel("b", 2e-3, fp64=None, fp32=None, fp16=None, tensor=None)), tgt(), src())


# -- 3. levels and clocks --------------------------------------------------------------------------
def test_level_the_target_lacks_is_left_out_of_both_rooflines():
    # 16 GB through L1, 1 GB through L2 and DRAM, 4 ms. With L1 the roofline here would be 16e9 / 8e12 = 2 ms; without
    # it DRAM 1 ms (L2 0.25 ms). There (no L1): DRAM 0.5 ms, L2 0.125 ms.
    nol1 = tgt(name="nol1-toy", memory={"l2": 8e12, "dram": 2e12})
    p = project(table(kernel("k", 4e-3, l1_bytes=16e9, l2_bytes=1e9, dram_bytes=1e9)), nol1, src())
    assert p.levels == ("l2", "dram") and p.source_analysis.levels == ("l2", "dram")
    assert "l1" not in p.source.memory and p.target_analysis.levels == ("l2", "dram")
    k = row(p, "k")
    assert k["roofline_time_s"] == approx(1e-3) and k["bound"] == "dram" and k["pct_of_roofline"] == approx(0.25)
    assert k["best_time_s"] == approx(0.5e-3)
    assert k["projected_time_s"] == approx(2e-3)       # 4 ms x 0.5 / 1
    assert k["high_time_s"] == approx(3.5e-3)          # 0.5 + (4 - 1) ms
    assert any(n.startswith("no L1 ceiling on the target 'nol1-toy': that level left out of both rooflines")
               for n in p.notes)


def test_target_clock_scales_l2_not_dram():
    # "l2k": 8 GB through L2, 1 GB from DRAM, 4 ms. Here L2 8e9 / 4e12 = 2 ms. There at its own 1 GHz: L2 8e9 / 8e12
    # = 1 ms (DRAM 0.5 ms); at 500 MHz the L2 ceiling halves, 4e12: 2 ms. "dramk": 4 GB at both, 8 ms. Here DRAM 4 ms;
    # there DRAM 4e9 / 2e12 = 2 ms at any clock (L2 0.5 ms at 1 GHz, 1 ms at 500 MHz).
    t = table(kernel("l2k", 4e-3, l2_bytes=8e9, dram_bytes=1e9), kernel("dramk", 8e-3, l2_bytes=4e9, dram_bytes=4e9))
    own = project(t, tgt(), src())
    half = project(t, tgt(), src(), target_clock_hz=0.5e9)
    assert half.target.sm_clock_hz == 0.5e9
    assert half.target.memory["l2"] == approx(4e12) and half.target.memory["dram"] == approx(2e12)
    assert half.target.compute["fp32"] == approx(4e12)
    assert row(own, "l2k")["best_time_s"] == approx(1e-3) and row(half, "l2k")["best_time_s"] == approx(2e-3)
    assert row(own, "l2k")["projected_time_s"] == approx(2e-3)   # 4 ms x 1 / 2
    assert row(half, "l2k")["projected_time_s"] == approx(4e-3)  # 4 ms x 2 / 2
    assert row(own, "dramk")["best_time_s"] == approx(2e-3) == row(half, "dramk")["best_time_s"]
    assert half.notes[0].startswith("the target 'tgt-toy' at 500 MHz SM clock")


def test_time_above_the_roofline_keeps_its_cycles():
    # "stream" (2 ms, 1 ms roofline here at the kernels' 1 GHz; best 0.5 ms there): the 1 ms above the roofline is
    # 1e6 cycles. On TGT at 2 GHz (ceilings as given) they last 0.5 ms: high = max(projected 1, 0.5 + 0.5) = 1 ms;
    # at 500 MHz (target_clock_hz) DRAM stays 2 TB/s, best 0.5 ms, and they last 2 ms: high = 0.5 + 2 = 2.5 ms.
    t = table(kernel("stream", 2e-3, **STREAM))
    fast = row(project(t, tgt(clock=2e9), src()), "stream")
    assert fast["projected_time_s"] == approx(1e-3) and fast["high_time_s"] == approx(1e-3)
    slow = row(project(t, tgt(), src(), target_clock_hz=0.5e9), "stream")
    assert slow["best_time_s"] == approx(0.5e-3) and slow["projected_time_s"] == approx(1e-3)
    assert slow["high_time_s"] == approx(2.5e-3)
    # a target recording no clock: the cycles ratio is unknown and taken as 1: 0.5 + 1 ms
    assert row(project(t, tgt(clock=None), src()), "stream")["high_time_s"] == approx(1.5e-3)


def test_target_clock_on_a_machine_without_one_is_said_and_ignored():
    t = table(kernel("l2k", 4e-3, l2_bytes=8e9, dram_bytes=1e9))
    p = project(t, tgt(clock=None), src(), target_clock_hz=1e9)
    assert p.target.memory["l2"] == 8e12 and row(p, "l2k")["best_time_s"] == approx(1e-3)
    assert any("records no SM clock: its ceilings used as given, not at 1 GHz" in n for n in p.notes)


def test_machines_unchanged_by_a_projection():
    target, source = tgt(), src()
    project(table(kernel("fp8", 1e-3, tensor=1.6e10, tensor_precision="fp8", dram_bytes=1e8)), target, source)
    assert dict(target.compute) == TGT_COMPUTE and dict(source.compute) == SRC_COMPUTE
    assert np.isfinite(list(target.memory.values())).all()

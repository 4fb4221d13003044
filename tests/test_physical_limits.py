"""Physical limits on every derived figure (roofline.analysis.limits): on every real profile in
tests/data, each row is within the limits or shown as inconsistent with its reason; never both a
figure beyond a limit and a diagnosis."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline import api
from roofline.analysis import analyze
from roofline.analysis.limits import MAX_PER_INSTRUCTION, SLACK
from roofline.kernels import from_records
from roofline.machine.theoretical import theoretical

DATA = Path(__file__).parent / "data" / "ncu"
#: Real exports of several GPUs and layouts (raw and details pages, --set full, sections, per-metric sets).
PROFILES = [
    DATA / "h200_setfull_sglang_moe_fa3" / "short_decode.raw.csv.gz",
    DATA / "h100_80gb_hbm3_examples" / "example_deepcam.ncu.csv.gz",
    DATA / "h100_80gb_hbm3_examples" / "target_gemm_tf32.ncu.csv",
    DATA / "h100_80gb_hbm3_examples" / "target_saxpy.ncu.csv",
    DATA / "rtx4090_setfull_rep_and_export" / "profile.raw.csv",
    DATA / "t4_setfull_locales" / "C.raw.csv.gz",
    DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv",
    DATA / "v100_deepcam_lamb",
]


def _check(a) -> None:
    f = a.frame
    flagged = f["inconsistent"].notna().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        sectors = 1 / f["global_ii"].to_numpy(dtype=float)
        wavefronts = 1 / f["shared_ii"].to_numpy(dtype=float)
    beyond_global = sectors > MAX_PER_INSTRUCTION
    beyond_shared = wavefronts > MAX_PER_INSTRUCTION
    assert (f["global_pattern"][beyond_global] == "inconsistent").all()
    assert (f["shared_pattern"][beyond_shared] == "inconsistent").all()
    over = (f["compute_use"].to_numpy(dtype=float) > SLACK) | (f["bw_use"].to_numpy(dtype=float) > SLACK)
    assert (f["region"][over] == "inconsistent").all()
    assert (flagged >= (beyond_global | beyond_shared | over)).all()
    assert not ((f["region"] == "inconsistent") & f["inconsistent"].isna()).any()


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.parent.name if p.is_file() else p.name)
def test_every_row_within_limits_or_flagged(path):
    table = api.read(path, fp16="paper" if "v100" in str(path) else "ncu")
    works = ["flops", *(["instructions"] if widened(table.frame)["warp_inst"].notna().any() else [])]
    for work in works:
        for by in ("launch", "name"):
            _check(api.analyze(table, by=by, work=work))


def test_h200_moe_kernel_is_never_shown_beyond_the_walls():
    """fused_moe_kernel of the public H200 export: its LSU load/store instructions alone (no cp.async,
    no ldmatrix) against all the sectors and wavefronts gave 271 sectors and 2650 wavefronts per
    instruction. Whatever the counting does, the figure shown is within 32, or inconsistent with why."""
    a = api.analyze(PROFILES[0])
    (row,) = a.frame[a.frame["kernel_name"] == "fused_moe_kernel"].itertuples()
    for ii, pattern in ((row.global_ii, row.global_pattern), (row.shared_ii, row.shared_pattern)):
        if np.isfinite(ii) and 1 / ii > MAX_PER_INSTRUCTION:
            assert pattern == "inconsistent" and "per global load/store" in row.inconsistent or \
                "per shared load/store" in row.inconsistent
        else:
            assert pattern != "inconsistent"


def test_above_the_spec_is_inconsistent():
    """A kernel whose counters say 1.2x the H100's spec FP64 rate at its clock, held to a machine file
    whose FP64 ceiling is (wrongly) higher still: the ceiling does not flag it, the spec does."""
    spec = theoretical("h100-sxm")
    machine = spec.scaled_to_clock(1.98e9)
    high = type(machine)(name=machine.name, source="measured", memory=dict(machine.memory),
                         compute={**machine.compute, "fp64": machine.compute["fp64"] * 2},
                         sm_clock_hz=1.98e9, metadata={"gpu": "NVIDIA H100 80GB HBM3"})
    fp64 = 132 * 128 * 1.98e9  # the spec's FP64 FLOP/s at 1.98 GHz (64 FMA lanes per SM)
    assert machine.compute["fp64"] == pytest.approx(fp64)
    rows = from_records([{"kernel_name": "k", "time_s": 1e-3, "fp64_flops": 1.2 * fp64 * 1e-3, "fp32_flops": 0.0,
                          "fp16_flops": 0.0, "tensor_flops": 0.0, "dram_bytes": 1e6, "sm_clock_hz": 1.98e9}])
    a = analyze(rows, high)
    r = a.frame.iloc[0]
    assert r["region"] == "inconsistent" and "1.20x the device's spec rate" in r["inconsistent"]
    assert r["compute_use"] == pytest.approx(0.6)


RAW_RUN = Path(__file__).parents[1] / "benchmarks" / "results" / "h100-80gb-hbm3-2026-11-27" / "machine" / "machine.json"
CASCADE = Path(__file__).parent / "data" / "ert" / "cpu_cascadelake_roofline_DP.json"


def test_an_inconsistent_kernel_gets_no_diagnosis():
    """The recorded TF32 GEMM against the run's own measured file (its TF32 ceiling 1.14x low per clock):
    "What to work on" says inconsistent counters and why, --explain sets every rule's claim aside."""
    from roofline.guidance import advise, explain_text

    path = DATA / "h100_80gb_hbm3_examples" / "target_gemm_tf32.ncu.csv"
    table = api.read(path)
    a = api.analyze(table, RAW_RUN)
    advice = advise(a, table)
    top = advice.iloc[0]
    assert top["limiter"] == "inconsistent" and top["limiter_label"] == "inconsistent counters"
    assert "1.14x its Tensor TF32 ceiling" in top["helps"] and "measured ceiling" in top["helps"]
    text = explain_text(a, table, "sm90_xmma", width=200)
    assert "limited by           inconsistent counters" in text
    assert "set aside (inconsistent counters)" in text and "fired (" not in text


def test_the_ert_scalar_pick_is_not_advice_to_move_fp64():
    """The issue's CPU ERT case: a 580 GFLOP/s FP64 kernel held to the file's last entry, 'FP64 Scalar
    GFLOPs' (109 GFLOP/s), was shown at 530 % of its roofline, compute-bound, told to move FP64 to FP32.
    Picked on purpose now (FILE#ENTRY), it is 5.30x that ceiling: inconsistent, not FP64-bound."""
    from roofline.guidance import advise
    from roofline.kernels import KernelTable

    table = KernelTable(frame=from_records([{
        "kernel_name": "dgemm_like", "time_s": 1.0, "launches": 1, "fp64_flops": 5.8e11, "fp32_flops": 0.0,
        "fp16_flops": 0.0, "tensor_flops": 0.0, "dram_bytes": 1e9, "source": "stated by hand"}]))
    a = api.analyze(table, f"{CASCADE}#FP64 Scalar GFLOPs")
    r = a.frame.iloc[0]
    assert r["pct_of_roofline"] == pytest.approx(580 / 109.375)
    assert r["region"] == "inconsistent" and "5.30x its FP64 ceiling" in r["inconsistent"]
    top = advise(a, table).iloc[0]
    assert top["limiter"] == "inconsistent" and "FP32" not in top["helps"]

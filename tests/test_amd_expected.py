"""Every AMD workload folder in tests/data/amd read by roofline, against the hand ground truths of
tests/amd_expected.py (written by tests/data/amd/expected_by_hand.py, a standard-library script that
shares no code with roofline; formulas and sources in tests/data/amd/EXPECTED.md), and mixbench's
counter FLOPs against the FLOPs its source performs (the packed-math caveat)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import amd_expected as expected
from roofline import api

DATA = Path(__file__).resolve().parent / "data" / "amd"
#: Bytes per vL1D tag lookup in the hand truths (the cache line) and in roofline (64 B a lookup, see
#: roofline.counting.amd): roofline's l1_bytes = the truths' x 64 / line.
LINE = {"gfx908": 64, "gfx90a": 64, "gfx942": 128, "gfx950": 128}


def _value(frame, column: str, i: int) -> float:
    return float(frame[column].iloc[i]) if column in frame.columns else math.nan


def _same(ours: float, theirs: object, *, rel: float = 1e-12) -> bool:
    if theirs is None:
        return math.isnan(ours)  # unknown stays unknown, never 0
    return ours == pytest.approx(float(theirs), rel=rel, abs=0)


@pytest.mark.parametrize("name", sorted(expected.WORKLOADS))
def test_workload_equals_hand_computation(name: str) -> None:
    truth = expected.WORKLOADS[name]
    table = api.read(DATA / name)
    frame = table.frame
    dispatches = truth["dispatches"]
    assert len(frame) == len(dispatches)
    assert set(frame["compute_capability"].astype(str)) == {truth["arch"]}
    line = LINE[truth["arch"]]
    for i, (dispatch, want) in enumerate(dispatches.items()):
        assert int(frame["launch_id"].iloc[i]) == dispatch
        time = want.get("time_s", want.get("time_s_mean_of_passes"))
        assert _same(_value(frame, "time_s", i), time, rel=1e-9), (name, dispatch, "time")
        for ours, theirs in (("fp64_flops", "fp64_flops"), ("fp32_flops", "fp32_flops"), ("fp16_flops", "fp16_flops"),
                             ("shared_bytes", "lds_bytes"), ("l2_bytes", "l2_bytes_split"), ("dram_bytes", "hbm_bytes")):
            assert _same(_value(frame, ours, i), want[theirs]), (name, dispatch, ours)
        l1 = None if want["l1_bytes"] is None else want["l1_bytes"] * 64 / line
        assert _same(_value(frame, "l1_bytes", i), l1), (name, dispatch, "l1_bytes")
        mfma = [want[k] for k in ("mfma_f64_flops", "mfma_f32_flops", "mfma_f16_flops", "mfma_bf16_flops")]
        if all(m is not None for m in mfma):
            assert _same(_value(frame, "tensor_flops", i), sum(mfma) + (want["mfma_f8_flops"] or 0))


def test_mi350_hbm_unknown_without_its_128_byte_read_counter() -> None:
    table = api.read(DATA / "rocprofcompute_vcopy_mi350_gfx950")
    assert "dram_bytes" not in table.frame.columns or table.frame["dram_bytes"].isna().all()
    assert "dram_bytes unknown: collect TCC_EA0_RDREQ_128B" in table.warnings
    truth = expected.WORKLOADS["rocprofcompute_vcopy_mi350_gfx950"]["dispatches"][0]
    assert truth["hbm_bytes_gfx942_formula"] < 0.76 * 2 * 8_388_608  # what MI300's formula would have said


def test_mixbench_counter_flops_against_its_source() -> None:
    fields = expected.MIXBENCH_FIELDS
    frame = api.read(DATA / "omniperf_mixbench_mi200_gfx90a").frame
    by_id = {int(d): i for i, d in enumerate(frame["launch_id"])}
    seen = {"double": 0, "float2": 0, "half2": 0, "float": 0}
    for row in expected.MIXBENCH_ROWS:
        r = dict(zip(fields, row))
        i = by_id[r["dispatch"]]
        counted = sum(_value(frame, c, i) for c in ("fp64_flops", "fp32_flops", "fp16_flops"))
        assert counted == r["fp64_flops"] + r["fp32_flops"] + r["fp16_flops"]
        assert _value(frame, "time_s", i) == pytest.approx(r["time_ns"] * 1e-9, rel=1e-12)
        assert _value(frame, "l2_bytes", i) == r["l2_bytes"]
        if r["type"] not in seen or not r["source_flops"]:
            continue
        seen[r["type"]] += 1
        partial = bool(frame["flops_partial"].iloc[i])
        if r["type"] == "double":  # FP64 is never packed: the counters are the work, and roofline says exact
            assert counted == r["source_flops"] and not partial
        elif r["type"] in ("float2", "half2"):  # packed: one instruction, two operations: half the work, a lower bound
            assert counted * 2 == r["source_flops"] and partial
        else:  # scalar float: the compiler packs some FMAs (0.75 to 1 of the work): a lower bound
            assert 0.74 * r["source_flops"] <= counted <= r["source_flops"] and partial
    assert min(seen.values()) >= 30


def test_the_readers_totals_equal_the_hand_totals() -> None:
    for name, truth in expected.WORKLOADS.items():
        frame = api.read(DATA / name).frame
        want = [d["hbm_bytes"] for d in truth["dispatches"].values()]
        if None in want:
            continue
        assert float(np.nansum(frame["dram_bytes"])) == pytest.approx(sum(want), rel=1e-12), name

"""Projection across vendors (issue 36): an AMD profile onto an NVIDIA GPU and back, held to the
model of docs/projection.md computed here by hand from the profiles' bytes and the two specs'
ceilings. Real data: Omniperf's vcopy on an MI200 (tests/data/amd) and roofline's own saxpy on an
H100 (tests/data/ncu/h100_80gb_hbm3_examples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline import api
from roofline.machine.theoretical import theoretical

DATA = Path(__file__).resolve().parent / "data"
VCOPY = DATA / "amd" / "omniperf_vcopy_mi200_gfx90a"
SAXPY = DATA / "ncu" / "h100_80gb_hbm3_examples" / "target_saxpy.ncu.csv"


def test_amd_to_nvidia_keeps_the_fraction_of_the_roofline() -> None:
    projection = api.project(VCOPY, to="h100-sxm")
    row = projection.frame.iloc[0]
    table = api.read(VCOPY).frame
    hbm = float(table["dram_bytes"].sum())
    time = float(table["time_s"].sum())
    here, there = theoretical("mi210").memory["dram"], theoretical("h100-sxm").memory["dram"]
    # vcopy does no arithmetic: its roofline on both sides is its HBM bytes over the HBM bandwidth
    # (the only level both specs have besides LDS, which it does not use)
    assert row["roofline_time_s"] == pytest.approx(hbm / here, rel=1e-9)
    assert row["best_time_s"] == pytest.approx(hbm / there, rel=1e-9)
    assert row["projected_time_s"] == pytest.approx(time * (hbm / there) / (hbm / here), rel=1e-9)
    assert "AMD Instinct MI210" in " ".join(projection.notes)


def test_nvidia_to_amd_keeps_the_fraction_of_the_roofline() -> None:
    projection = api.project(SAXPY, to="mi300x")
    row = projection.frame.sort_values("time_s").iloc[-1]
    analysis = api.analyze(SAXPY, machine="h100-sxm")
    source = analysis.frame.set_index("kernel_name").loc[row["kernel_name"]]
    target = theoretical("mi300x")
    best = float(source["dram_bytes"]) / target.memory["dram"]  # a streaming kernel: its HBM bytes bound it there
    assert row["best_time_s"] == pytest.approx(best, rel=1e-9)
    assert row["projected_time_s"] == pytest.approx(row["time_s"] * best / row["roofline_time_s"], rel=1e-9)
    assert any("AMD Instinct MI300X" in n for n in projection.notes)

"""One answer per data: a set of reports of one program, one ncu run per metric group (the
hierarchical-roofline method), read as ``.ncu-rep`` files, as their CSV exports, one of each, or as a
folder holding both, is one run merged by launch, each launch counted once, with one kernel table and
one roofline.

Real public data (PROVENANCE.md beside it): GENE's ``dgdxy`` region on a Summit V100, a time/DRAM report
and a FLOP report made a day apart by two processes, with the authors' own CSV exports of both. Truths
are the reports' stored values (worked by hand in PROVENANCE.md) and the authors' own table. Before the
merge left the session's metrics (``launch__function_pcs``, ``profiler__*``) out of its test, the two
reports were two runs: 16 launches, the FLOP report's instrumented times (153 x) kept, no roofline.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import roofline
from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers import read_profile
from roofline.readers.ncu import rep as ncu_rep

pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python (pip install ncu-report)")

DATA = Path(__file__).parent / "data" / "ncu"
GENE = DATA / "v100_gene_dgdxy_rep_set_and_exports"
DRAM_REP, DRAM_CSV = GENE / "time-dram.ncu-rep", GENE / "time-dram.csv"
FLOPS_REP, FLOPS_CSV = GENE / "time-flops.ncu-rep", GENE / "time-flops.csv"

FORMS: dict[str, list[Path] | Path] = {
    "reports": [DRAM_REP, FLOPS_REP],
    "reports_flop_first": [FLOPS_REP, DRAM_REP],
    "exports": [DRAM_CSV, FLOPS_CSV],
    "exports_flop_first": [FLOPS_CSV, DRAM_CSV],
    "report_and_export": [DRAM_REP, FLOPS_CSV],
    "export_and_report": [DRAM_CSV, FLOPS_REP],
    "folder_with_both": GENE,
    "all_four_listed": [FLOPS_REP, DRAM_CSV, FLOPS_CSV, DRAM_REP],
}
#: Forms in which both reports are read: their stored values win over the exports' prints.
REPORTED = ("reports", "reports_flop_first", "folder_with_both", "all_four_listed")

IJ_DERIV = "ij_deriv_kernel(int, int, int, thrust::complex<double> const*, int, double const*, " \
           "thrust::complex<double> const*, thrust::complex<double>*)"
UPDATE = "add_i_col_times_ij_block_kernel(int, int, int, int, double*, double*, thrust::complex<double>*, " \
         "thrust::complex<double>*)"
# The time/DRAM report's stored values, launches 0-7 (ncu_report; PROVENANCE.md).
CYCLES = [1_209_252.425, 1_385_238.75, 1_207_965.725, 1_386_700.225, 1_208_856.125, 1_387_888.55, 1_208_692.075,
          1_388_231.0]
CLOCK_HZ = [1_309_394_950.8402634, 1_309_992_765.5469813, 1_309_635_335.3542187, 1_309_908_168.5282028,
            1_309_328_778.1176348, 1_309_763_761.1735218, 1_309_241_849.0034661, 1_309_928_701.9143667]
DRAM_BYTES = [690_960_320, 891_760_416, 690_967_264, 891_751_648, 690_976_576, 891_826_656, 690_937_088, 891_799_648]
# The FLOP report's: ij_deriv 2 x 137,625,600 DFMA + 55,050,240 DMUL + 0 DADD; the update kernel
# 27,525,120 each of DFMA (x 2), DMUL and DADD.
FP64 = [2 * 137_625_600 + 55_050_240, 4 * 27_525_120] * 4
#: The authors' exports print cycles to 2 decimals: times agree with the reports' to this; a savable
#: time (a difference of two times) to ten times it.
PRINTED = 1e-8


def _read(form: str) -> roofline.KernelTable:
    return read_profile(FORMS[form])


def test_launch_0_by_hand():
    """Launch 0 (ij_deriv_kernel), from the two reports: 923,520 ns, 330,301,440 FP64 FLOPs, 690,960,320
    DRAM bytes, an intensity of 0.47803 FLOP/B."""
    f = widened(_read("reports").frame)
    assert f["time_s"].iloc[0] == pytest.approx(1_209_252.425 / 1_309_394_950.8402634, rel=1e-14)
    assert f["time_s"].iloc[0] == pytest.approx(923_520e-9, rel=1e-9)
    assert f["fp64_flops"].iloc[0] == 330_301_440
    assert f["dram_bytes"].iloc[0] == 690_960_320
    assert f["fp64_flops"].iloc[0] / f["dram_bytes"].iloc[0] == pytest.approx(0.47803, abs=1e-5)


@pytest.mark.parametrize("form", list(FORMS))
def test_each_form_is_one_run_counting_each_launch_once(form):
    t = _read(form)
    f = widened(t.frame)
    assert len(f) == 8 and f["run"].isna().all()
    assert f["launch_id"].tolist() == list(range(8))
    assert f["kernel_name"].tolist() == [IJ_DERIV, UPDATE] * 4
    assert (f["launches"] == 1).all()
    # timing from the report without SASS metrics: the FLOP report's own cycles are 153 x these
    np.testing.assert_allclose(f["time_s"], np.array(CYCLES) / np.array(CLOCK_HZ),
                               rtol=1e-14 if form in REPORTED else PRINTED)
    assert f["fp64_flops"].tolist() == FP64 and f["flops"].tolist() == FP64
    assert f["dram_bytes"].tolist() == DRAM_BYTES
    assert f["l1_bytes"].isna().all() and f["l2_bytes"].isna().all() and f["fp32_flops"].isna().all()
    timing = [w for w in t.warnings if w.startswith("timing taken from ")]
    assert len(timing) == 1 and "time-dram." in timing[0].split(";")[0] and "time-flops." in timing[0].split(";")[1]
    assert not any("differs between" in w for w in t.warnings), t.warnings


ROOFLINE = ["launches", "time_s", "fp64_flops", "flops", "l1_bytes", "l2_bytes", "dram_bytes", "ai_dram", "flop_rate",
            "attainable", "roofline_time_s", "pct_of_roofline", "savable_time_s", "bw_use_dram"]


def _roofline(form: str) -> pd.DataFrame:
    a = roofline.analyze(_read(form), "v100-sxm2", by="name")
    return a.frame.set_index("kernel_name").sort_index()


@pytest.mark.parametrize("form", [f for f in FORMS if f != "reports"])
def test_every_form_gives_the_reports_kernel_table_and_roofline(form):
    """Per kernel, against the V100 SXM2's spec: the same counts, times and roofline figures as the two
    reports, exactly where both reports are read, to the exports' printed digits where one is not."""
    ours, theirs = _roofline(form), _roofline("reports")
    assert list(ours.index) == [UPDATE, IJ_DERIV]
    assert ours["bound"].tolist() == theirs["bound"].tolist()
    np.testing.assert_allclose(ours[ROOFLINE].to_numpy(float), theirs[ROOFLINE].to_numpy(float),
                               rtol=1e-14 if form in REPORTED else 10 * PRINTED)
    assert ours["pct_of_roofline"].notna().all() and ours["ai_dram"].notna().all()


def test_the_authors_table():
    """roofline/out/gene-rooflines_HBM.tex of the source repository (its G is 2^30): ij_deriv 0.923 ms,
    333.2 GFLOP/s, 697.1 GB/s, AI 0.478; the update kernel 1.059 ms, 96.8, 784.4, 0.123."""
    a = _roofline("reports")
    per_launch_ms = a["time_s"] / a["launches"] * 1e3
    assert per_launch_ms.round(3).tolist() == [1.059, 0.923]
    assert (a["flop_rate"] / 2**30).round(1).tolist() == [96.8, 333.2]
    assert (a["dram_bytes"] / a["time_s"] / 2**30).round(1).tolist() == [784.4, 697.1]
    assert a["ai_dram"].round(3).tolist() == [0.123, 0.478]
    assert a["time_s"].tolist() == pytest.approx([4_235_488e-9, 3_692_352e-9], rel=1e-12)


def test_the_session_metrics_of_two_runs_are_left_out_of_the_merge():
    """launch__function_pcs (the code's address in each process) and profiler__replayer_passes (1 and 3)
    have no one value for a launch measured in two sessions; launch attributes both hold agree, and stay."""
    m = _read("reports").metrics
    assert "launch__function_pcs" not in m and "profiler__replayer_passes" not in m
    assert m["launch__grid_size"].tolist() == [24_576.0, 53_760.0] * 4
    one = read_profile(DRAM_REP).metrics  # one session: its own values
    assert one["launch__function_pcs"].tolist() == [35_187_008_513_920.0, 35_187_008_510_592.0] * 4


def test_the_reports_through_ncu_import_give_the_same_table(monkeypatch):
    """Without the ncu_report module the reports are read as ``ncu --import FILE --csv --page raw``
    (process IDs, the session's metrics printed too): the same one run."""
    if shutil.which("ncu") is None:
        pytest.skip("needs Nsight Compute's ncu on PATH (bash .ci/install-ncu)")
    by_module = _read("reports").frame
    monkeypatch.setattr(ncu_rep, "_import_ncu_report", lambda: None)
    t = read_profile([DRAM_REP, FLOPS_REP])
    f = widened(t.frame)
    assert len(f) == 8 and f["run"].isna().all()
    assert f["process_id"].tolist() == [85801] * 8  # the time/DRAM run's, the first input
    # the raw page prints the clock to 7 digits (1.309395 cycle/nsecond)
    np.testing.assert_allclose(f["time_s"], by_module["time_s"], rtol=1e-6)
    assert f["fp64_flops"].tolist() == FP64 and f["dram_bytes"].tolist() == DRAM_BYTES


def test_gh200_reports_of_one_program_with_different_sections_are_one_run():
    """Two sessions of the same script, 3 launches each (PROVENANCE.md of each): the section report and a
    report that collected launch and device attributes only. They differ in profiler__* alone (replay
    passes, replay memory), so they are one run, its numbers the section report's; they were two, the
    second left out with a note."""
    sections = DATA / "gh200_sections_rep_silu_roofline" / "silu-2025-04-19-v3.ncu-rep"
    attributes = DATA / "gh200_memworkload_rep_silu" / "silu-2025-04-19-v1.ncu-rep"
    alone = read_profile(sections).frame
    for files in ([sections, attributes], [attributes, sections]):
        t = read_profile(files)
        assert len(t.frame) == 3 and t.frame["run"].isna().all()
        assert not any(w.startswith("left out") for w in t.warnings), t.warnings
        for c in ("time_s", "fp32_flops", "dram_bytes"):
            assert t.frame[c].tolist() == alone[c].tolist()


def test_the_authors_layout_names_each_report_by_its_folder(tmp_path):
    """As the source repository keeps them: both reports named ncuroof-time-1.ncu-rep, in time-dram/ and
    time-flops/. One run, and the timing note tells the two files apart by their folders."""
    files = []
    for kind, src in (("time-dram", DRAM_REP), ("time-flops", FLOPS_REP)):
        (tmp_path / kind).mkdir()
        files.append(shutil.copy(src, tmp_path / kind / "ncuroof-time-1.ncu-rep"))
    t = read_profile(files)
    assert len(t.frame) == 8 and t.frame["run"].isna().all()
    assert t.frame["fp64_flops"].tolist() == FP64
    assert ("timing taken from time-dram/ncuroof-time-1.ncu-rep (no SASS-instruction metrics); ignored the timing "
            "of time-flops/ncuroof-time-1.ncu-rep") in " ".join(t.warnings)

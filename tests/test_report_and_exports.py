"""A report and its own CSV exports, given together, are one run, not two; and an export that
prints no units (an ncu older than the report's GPU) is still read in the units ncu stores.

Real public reports with provenance (PROVENANCE.md beside each): an A10G ``--set roofline`` report
(four 1024^3 SGEMMs) with its raw and details pages, an RTX 4090 ``--set full`` report with its raw
page (ncu's two-decimal and one-digit formats, blank cells), and an RTX 5060 Laptop (CC 12.0) report
exported by ncu 2024.1.1, which prints no units. Truths are the reports' stored values.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import needs
from ncu_routes import same_table_both_ways

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers import read_profile
from roofline.readers.ncu import rep as ncu_rep
from roofline.readers.ncu.count import build_table
from roofline.readers.ncu.printed import agree_as_printed, agree_printed, last_digit

pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")

DATA = Path(__file__).parent / "data" / "ncu"
A10G = DATA / "a10g_setroofline_rep_and_exports"
ESMM = [A10G / "profile_output.ncu-rep", A10G / "profile_output.raw.csv", A10G / "profile_output.details.csv"]
RTX4090 = DATA / "rtx4090_setfull_rep_and_export"
SEQ = [RTX4090 / "profile.ncu-rep", RTX4090 / "profile.raw.csv"]
RTX5060 = DATA / "rtx5060_rep_old_ncu_no_units"
RENDER = [RTX5060 / "profile.ncu-rep", RTX5060 / "profile.raw.csv", RTX5060 / "profile.details.csv"]

#: gpu__time_duration.sum of the four SGEMMs, ns (the report's stored values).
ESMM_NS = [431_648, 296_704, 260_512, 222_464]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=lambda o: "".join(map(str, o)))
def test_a10g_report_with_its_raw_and_details_pages_is_one_run(order):
    t = read_profile([ESMM[i] for i in order])
    f = t.frame
    assert len(f) == 4 and f["run"].nunique(dropna=False) == 1
    assert f["time_s"].sum() == pytest.approx(1_211_328e-9, rel=1e-12)
    assert sorted(f["time_s"]) == pytest.approx(sorted(x * 1e-9 for x in ESMM_NS), rel=1e-12)
    # The report's stored values win over the CSV's six printed decimals, in any order:
    # 2 x 1024^3 each (the raw page alone gives 2,147,483,207 to 2,147,484,428).
    np.testing.assert_allclose(f["fp32_flops"], 2 * 1024**3, rtol=1e-14)
    assert set(f["process_id"]) == {9166}  # from the CSVs: the report's module API has none
    assert not any("differs between" in w or "timing taken from" in w for w in t.warnings), t.warnings


def test_a10g_raw_page_alone_counts_what_it_prints():
    """The raw page alone: FLOPs from its six-decimal per-cycle rates, within 1e-6 of the truth,
    not equal to it (which is why the stored values must win when both are given)."""
    f = read_profile(ESMM[1]).frame
    flops = f["fp32_flops"].to_numpy()
    np.testing.assert_allclose(flops, 2 * 1024**3, rtol=1e-6)
    assert (np.abs(flops - 2 * 1024**3) > 100).all()


def test_rtx4090_set_full_report_with_its_raw_page_is_one_run():
    for files in (SEQ, SEQ[::-1]):
        f = read_profile(files).frame
        assert len(f) == 2
        assert f["time_s"].sum() == pytest.approx(508_512e-9, rel=1e-12)
        assert set(f["process_id"]) == {106604}


def _rewritten(tmp_path: Path, change) -> Path:
    """The A10G raw page with the values of some columns changed (``change(name, value) -> value``)."""
    import csv

    rows = list(csv.reader((A10G / "profile_output.raw.csv").read_text().splitlines()))
    header = rows[0]
    for row in rows[2:]:
        for i, name in enumerate(header):
            row[i] = change(name, row[i])
    out = tmp_path / "other.raw.csv"
    with out.open("w", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out


def test_another_run_of_the_same_program_stays_apart(tmp_path):
    """A second run 0.01 % slower: every rate and utilization printed 1e-4 higher (to six decimals),
    the counts the same. Not the report's print: two runs side by side, eight launches."""
    def slower(name: str, value: str) -> str:
        rate = name.endswith((".per_second", "pct_of_peak_sustained_elapsed"))
        return f"{float(value) * (1 + 1e-4):.6f}" if rate and value not in ("", "n/a") else value

    f = read_profile([ESMM[0], _rewritten(tmp_path, slower)]).frame
    assert len(f) == 8 and f["run"].nunique(dropna=False) == 2


@pytest.mark.parametrize("edited, apart", [("none", False), ("one", False), ("utilizations", True)])
def test_a_report_and_its_print_may_differ_in_one_metric_in_a_hundred(tmp_path, edited, apart):
    """ncu prints a few metrics otherwise than it stores them (2006 %/byte as 2.006 %/Kbyte): one of
    the page's 311 shared metrics off by a printed digit (dram__bytes.sum.per_second, 47.911632 in
    the report's own export) is still the report's print; its 44 utilizations off by 0.01 % points
    are another run."""
    def edit(name: str, value: str) -> str:
        if edited == "one" and name == "dram__bytes.sum.per_second" and value == "47.911632":
            return "47.911634"
        if edited == "utilizations" and name.endswith("pct_of_peak_sustained_elapsed") and value not in ("", "n/a"):
            return f"{float(value) + 0.01:.6f}"
        return value

    f = read_profile([ESMM[0], _rewritten(tmp_path, edit)]).frame
    assert (len(f), f["run"].nunique(dropna=False)) == ((8, 2) if apart else (4, 1))


def test_rtx5060_export_without_units_reads_time_in_nanoseconds():
    """ncu 2024.1.1 exporting a CC 12.0 report prints no units: the duration 11232992 is in ns (what
    ncu stores), not seconds (11.2 Ms before this fix), on both pages, with a note."""
    for path in RENDER[1:]:
        t = read_profile(path)
        assert t.frame["time_s"].tolist() == [pytest.approx(0.011232992, rel=1e-12)]
        assert any(f"{path.name}: no unit printed for" in w and "gpu__time_duration.sum" in w
                   and "nanoseconds" in w for w in t.warnings), t.warnings
    raw = (RTX5060 / "profile.raw.csv").read_text().splitlines()
    assert set(raw[1].split(",")) <= {'""', '"warp"', '"SM"', '"block"', '"cluster"'}  # the blank units row


def test_rtx5060_report_both_ways_and_with_its_exports():
    """Through the ncu-report wheel (unit ``ns``) and through the real ncu 2024.1.1 (no units): the same
    table; the report with both of its exports: one launch."""
    by_module, by_cli = same_table_both_ways(RENDER[0])
    assert by_module["time_s"].tolist() == [pytest.approx(0.011232992, rel=1e-12)]
    assert set(by_cli["process_id"]) == {9452}
    f = read_profile(RENDER).frame
    assert len(f) == 1 and f["time_s"].iloc[0] == pytest.approx(0.011232992, rel=1e-12)


def test_units_that_are_printed_are_kept(tmp_path):
    """A unit in the units row is the file's word: ``usecond`` stays micro (the A10G raw page)."""
    f = read_profile(ESMM[1]).frame
    assert f["time_s"].iloc[0] == pytest.approx(431.648e-6, rel=1e-12)


def test_cli_route_of_the_rtx5060_report_reads_nanoseconds():
    ncu = needs.ncu()
    f = build_table(ncu_rep.read_with_cli(RENDER[0], ncu)).frame
    assert f["time_s"].tolist() == [pytest.approx(0.011232992, rel=1e-12)]


# What a printed value shows, against the real cells of the RTX 4090 report and its export.

def test_last_digit():
    got = last_digit(np.array([1.32, 4e-06, 2.624e-06, 505.888 * 1e-6, 24.945312, 7000.0, 0.0, np.nan]))
    np.testing.assert_allclose(got[:6], [0.01, 1e-6, 1e-9, 1e-9, 1e-6, 1000.0], rtol=1e-12)
    assert np.isnan(got[6:]).all()


#: Columns of the RTX 4090 report (stored) and of its raw export (printed), launches 0 and 1.
@pytest.mark.parametrize("stored, printed, factor, agree", [
    ([0.00390625, 1.32226562], [0.0, 1.32], 1.0, True),  # smsp__sass_branch_targets_threads_divergent.avg
    ([0.0078125, 0.0078125], [0.01, 0.01], 1.0, True),  # launch__waves_per_multiprocessor
    ([0.0, 3.66996246e-06], [0.0, 4e-06], 1.0, True),  # lts__t_sectors_srcunit_tex_op_read...per_cycle_elapsed
    ([24.9453125, 8456.4921875], [24.945312, 8456.492188], 1.0, True),  # SM_A.TriageAC.sm__cycles_active.avg
    ([24.9453125, 8456.4921875], [24.94531, 8456.492188], 1.0, False),  # "24.945310": two digits off
    ([0.00390625, 1.32226562], [0.0, 1.33], 1.0, False),
    ([6976.0], [7000.0], 1.0, False),  # whole numbers show every digit: 7000 is not 7e3
    ([1126737.703125], [1.127040e6], 1e6, False),  # Mbyte to 6 decimals is to the byte
    ([1127040.4], [1.127040e6], 1e6, True),
    ([5.0], [np.nan], 1.0, True),  # a blank cell shows nothing
    ([np.nan], [5.0], 1.0, False),  # a value the report does not store
])
def test_agree_as_printed(stored, printed, factor, agree):
    assert bool(agree_as_printed(np.array(stored), np.array(printed), factor=factor).all()) is agree


def test_two_pages_of_one_export():
    """The details page prints Duration to fewer digits than the raw page: one value."""
    assert agree_printed(np.array([431.648e-6]), np.array([431.65e-6]), factor_x=1e-6, factor_y=1e-6).all()
    assert not agree_printed(np.array([431.648e-6]), np.array([431.66e-6]), factor_x=1e-6, factor_y=1e-6).all()


def test_a_value_shown_in_two_sections_is_not_a_conflict():
    """The RTX 5060 details page shows sm__cycles_active.avg twice ("SM Active Cycles" and "Average SM
    Active Cycles", both 16001453.81): one value, no warning."""
    t = read_profile(RENDER[2])
    assert not any("listed twice" in w for w in t.warnings), t.warnings


# -- RTX 5070, ncu 2026.2.1: DRAM traffic under its sm_120 names; float4 accesses ------------------
RTX5070 = DATA / "rtx5070_details_dram_op_names"


def test_rtx5070_dram_bytes_from_the_op_read_and_op_write_names():
    t = read_profile(RTX5070 / "saxpy.csv")
    f = t.frame
    assert f["time_s"].tolist() == [pytest.approx(292_928e-9, rel=1e-12)]
    assert f["dram_bytes"].tolist() == [134_221_568 + 43_631_104]
    n = 65536 * 256
    assert f["dram_bytes"].iloc[0] - 43_631_104 == 8 * n + 3_840  # saxpy reads x and y once
    assert not any("dram_bytes unknown" in w for w in t.warnings), t.warnings
    g = read_profile(RTX5070 / "transpose_naive.csv").frame
    assert g["dram_bytes"].tolist() == [19_001_600 + 4_399_616]


def _coalescing(name: str):
    from roofline import api
    from roofline.guidance import diagnose

    table = read_profile(RTX5070 / f"{name}.csv")
    kernel = next(iter(diagnose(api.analyze(table, None), table)))
    return kernel, kernel.finding("global-load-coalescing"), kernel.finding("global-store-coalescing")


def test_rtx5070_float4_gemm_is_not_called_uncoalesced():
    """16 sectors per request without an access-size counter: waste of 32-bit words or float4 at unit
    stride (this kernel's); said both ways, limiting nothing (it was '805 MB of excess traffic')."""
    kernel, load, store = _coalescing("gemm_vectorized")
    assert load.values["sectors_per_request"] == 33_554_432 / 2_097_152 == 16.0
    assert (load.severity, load.limiter, store.severity, store.limiter) == ("info", None, "info", None)
    assert kernel.limiter != "uncoalesced"


def test_rtx5070_naive_transpose_stores_are_uncoalesced():
    kernel, load, store = _coalescing("transpose_naive")
    assert load.status == "ok" and load.values["sectors_per_request"] == 4.0
    assert (store.status, store.limiter, store.severity) == ("fired", "uncoalesced", "high")
    assert store.values["excess_bytes"] == (32 - 4) * 131_072 * 32  # 117,440,512 B


# -- ncu --print-summary per-kernel: no launch IDs, averages over invocations ---------------------
SUMMARY = DATA / "a100_print_summary_per_kernel"


def test_per_kernel_summaries_are_read_as_their_kernels_launches():
    """Three summary exports of one program (time, sectors, instructions; three processes): one run
    of 2 x 100 launches whose sums per kernel are Average x Invocations (they were refused as 'not an
    Nsight Compute CSV', with a hint to export a raw page the user cannot make from a summary)."""
    t = read_profile([SUMMARY / "timing.csv", SUMMARY / "metrics.csv", SUMMARY / "events.csv"])
    f = t.frame
    assert len(f) == 200 and f["run"].nunique(dropna=False) == 1
    by = f.groupby("kernel_name")
    assert by["time_s"].sum().to_dict() == pytest.approx({"kernel_B": 9.318816e-3, "kernel_A": 7.695296e-3},
                                                         rel=1e-12)
    assert by["dram_bytes"].sum().to_dict() == pytest.approx(
        {"kernel_B": 402_339.36 * 32 * 100, "kernel_A": (806_261.76 + 15_106.60) * 32 * 100}, rel=1e-12)
    assert f["time_s"].sum() == pytest.approx(17.014112e-3, rel=1e-12)
    assert any("per-kernel summary" in w and "200 launches of 2 kernels" in w for w in t.warnings)


def test_a_file_that_is_no_export_is_still_refused(tmp_path):
    from roofline.errors import InputError

    bad = tmp_path / "table.csv"
    bad.write_text('"Kernel","Invocations","Average"\n"k","3","1.0"\n')
    with pytest.raises(InputError, match="not an Nsight Compute CSV"):
        read_profile(bad)


def test_a_profile_without_any_time_has_an_unknown_total_not_zero(capsys):
    """The sector counts of the summary set alone: no time in the file, so the total is unknown
    (it printed 'total time 0 s')."""
    from roofline import api
    from roofline.cli.app import main

    table = read_profile(SUMMARY / "metrics.csv")
    assert np.isnan(api.analyze(table, None).totals["time_s"])
    assert main(["analyze", str(SUMMARY / "metrics.csv"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "total time unknown in 200 launches of 2 kernels" in out and "total time 0 s" not in out


# -- more real reports with their own exports ----------------------------------------------------
RTX2080TI = DATA / "rtx2080ti_rep_details_unit_per_row"
RTX3050L = DATA / "rtx3050l_ncu2025_rep_occupancy"


@pytest.mark.parametrize("files", [["profile.ncu-rep", "profile.details.csv"],
                                   ["profile.details.csv", "profile.raw.csv", "profile.ncu-rep"],
                                   ["profile.details.csv", "profile.raw.csv"]])
def test_rtx2080ti_details_page_with_a_unit_per_row_is_the_report_s(files):
    """"Duration" 1.17 second beside 993.02 usecond: one run with the report (it was two: 2.34 s in 4
    launches); the stored times kept, whatever the order; raw and details pages without a note."""
    t = read_profile([RTX2080TI / name for name in files])
    f = t.frame
    assert len(f) == 2
    stored = "profile.ncu-rep" in files
    want = [1_168_077_824e-9, 993_024e-9] if stored else [1.168078, 993.02e-6]  # else the finer print of each
    assert f["time_s"].tolist() == pytest.approx(want, rel=1e-12)
    assert not any("differs between" in w or "timing taken from" in w for w in t.warnings), t.warnings


def test_rtx3050l_ncu2025_report_with_its_raw_page_is_one_run():
    """ncu 2025 prints derived__pct_occupancy_per_shared_mem_size (2006 %/byte stored) as 2.006
    %/Kbyte: one metric of hundreds, not another run (it was two: 262 us in 2 launches)."""
    f = read_profile([RTX3050L / "profile.ncu-rep", RTX3050L / "profile.raw.csv"]).frame
    assert len(f) == 1 and f["time_s"].iloc[0] == pytest.approx(131_136e-9, rel=1e-12)
    assert f["process_id"].iloc[0] == 1022


def test_half_a_printed_digit_is_the_print():
    """Lashi0812/CudaProgramming smemTranspose.ncu-rep (RTX 4090): sm__cycles_active.avg stored
    249964.3046875, printed 249964.304688 (half up): the gap is half a digit plus binary noise."""
    assert agree_as_printed(np.array([249964.3046875]), np.array([249964.304688])).all()
    assert not agree_as_printed(np.array([249964.3046875]), np.array([249964.304689])).all()


def test_details_page_digits_per_row():
    """Two decimals of the unit that puts each value in 1..1000: 1.17 s for 1.168077824 s, 993.02 us
    for 993.024 us, 4.10 Kbyte for 4096 byte; not 1.18 s."""
    stored = np.array([1.168077824, 993.024e-6, 4096.0])
    assert agree_as_printed(stored, np.array([1.17, 993.02e-6, 4100.0]), per_row_units=True).all()
    assert not agree_as_printed(stored, np.array([1.18, 993.02e-6, 4100.0]), per_row_units=True).all()
    assert not agree_as_printed(stored, np.array([1.17, 993.02e-6, 4100.0])).all()  # a raw page's column


def test_a_run_with_nothing_for_a_roofline_is_left_out_beside_others(tmp_path):
    """The RTX 5060 details page cut to its Launch Statistics rows (no time, FLOPs or bytes) beside the
    A10G raw page: another run, left out with a note, not the whole command refused; alone, refused."""
    from roofline.errors import MissingMetricsError

    lines = (RTX5060 / "profile.details.csv").read_text().splitlines(keepends=True)
    launch_only = tmp_path / "launch.details.csv"
    header = next(line for line in lines if line.startswith('"ID"'))
    launch_only.write_text(header + "".join(line for line in lines if '"Launch Statistics"' in line))
    t = read_profile([ESMM[1], launch_only])
    assert len(t.frame) == 4 and t.frame["time_s"].sum() == pytest.approx(1_211_328e-9, rel=1e-12)
    assert any(w.startswith("left out launch.details.csv: the profile has none of the metrics") for w in t.warnings)
    with pytest.raises(MissingMetricsError):
        read_profile(launch_only)


def test_rtx5060ti_clock_from_cycles_over_time_and_fp32_from_the_class_count():
    """Three metrics collected: the SM clock is the elapsed cycles over the duration (it was 'not
    collected'), and an FP32 instruction count of 0 makes the FP32 FLOPs exactly 0 (they were 'not
    counted'); FP64 and FP16 stay unknown, so the total is a lower bound."""
    f = widened(read_profile(DATA / "rtx5060ti_ncu2025_metrics_rep" / "ncu_report.ncu-rep").frame)
    assert f["time_s"].tolist() == pytest.approx([61_312e-9, 67_424e-9], rel=1e-12)
    assert f["sm_clock_hz"].tolist() == pytest.approx([146_244 / 61_312e-9, 160_688.333333 / 67_424e-9], rel=1e-6)
    assert f["fp32_flops"].tolist() == [0.0, 0.0]
    assert f["fp64_flops"].isna().all() and f["flops_partial"].all()


# -- gzip-compressed exports ---------------------------------------------------------------------
def test_a_gzip_compressed_export_reads_as_the_export(tmp_path):
    """``x.csv.gz`` (how large exports are kept): the same launches and numbers as ``x.csv``, found in
    a folder too, its run named without ``.csv.gz``; a cut-off one is refused with the cause."""
    import gzip

    from roofline.errors import InputError

    plain = read_profile(ESMM[1]).frame
    packed = tmp_path / "profile_output.raw.csv.gz"
    packed.write_bytes(gzip.compress((A10G / "profile_output.raw.csv").read_bytes()))
    f = read_profile(packed).frame
    assert f["time_s"].tolist() == plain["time_s"].tolist() and f["fp32_flops"].tolist() == plain["fp32_flops"].tolist()
    (tmp_path / "other.csv").write_bytes((RTX5060 / "profile.raw.csv").read_bytes())
    both = read_profile(tmp_path).frame  # the folder: two programs, side by side
    assert sorted(both["run"].unique()) == ["other", "profile_output.raw"] and len(both) == 5
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    with pytest.raises(InputError, match="not a readable gzip file"):
        read_profile(cut)

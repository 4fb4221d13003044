"""One answer per data: a report beside its own CSV export, the export written by a newer ncu that
prints kernel names in another form, is one run, each launch counted once.

Real public data (tests/data/ncu/h200_sections_rep_and_details_export/PROVENANCE.md): an H200 SGLang
decode, 20 launches of 6 kernels, sections SpeedOfLight, Occupancy and LaunchStats (no FLOP or byte
counters), ``ncu.ncu-rep`` and its details page ``ncu_raw.csv`` exported by ncu 2026.2.1. The export
names launch 0 ``void norm::RMSNormKernel<8, __nv_bfloat16>(...)``; the report, read by ``ncu_report``
or by ncu 2024.1.1, ``void flashinfer::norm::RMSNormKernel<(unsigned int)8, __nv_bfloat16>(...)``.
Before kernels were compared as kernels (:func:`roofline.readers.ncu.names.same_kernel`) and not as text,
the folder gave 40 launches of 12 kernels and 309 us, each launch twice under two names.
Truths: the CSV's own cells (worked below) and the report read alone.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ncu_routes import same_table_both_ways

import roofline
from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers import read_profile
from roofline.readers.ncu import rep as ncu_rep
from roofline.readers.ncu.names import kernel_key, same_kernel

pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python (pip install ncu-report)")

FOLDER = Path(__file__).parent / "data" / "ncu" / "h200_sections_rep_and_details_export"
REPORT, EXPORT = FOLDER / "ncu.ncu-rep", FOLDER / "ncu_raw.csv"

RMS = ("void flashinfer::norm::RMSNormKernel<(unsigned int)8, __nv_bfloat16>(T2 *, T2 *, T2 *, unsigned int, "
       "unsigned int, unsigned int, float, float)")
RMS_2026 = ("void norm::RMSNormKernel<8, __nv_bfloat16>(T2 *, T2 *, T2 *, unsigned int, unsigned int, unsigned int, "
            "float, float)")
CONV = ("void causal_conv1d_update_kernel<Causal_conv1d_update_kernel_traits<(int)64, (int)3, c10::BFloat16, "
        "c10::BFloat16>, (bool)0>(ConvParamsBase)")
CONV_2026 = ("void causal_conv1d_update_kernel<Causal_conv1d_update_kernel_traits<64, 3, c10::BFloat16, "
             "c10::BFloat16>, 0>(ConvParamsBase)")
SILU = "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float>>(T1 *, const T1 *, int)"
SILU_2026 = "void activation::act_and_mul_kernel<__nv_bfloat16, &silu<float>>(T1 *, const T1 *, int)"
GEMM = "nvjet_tst_64x8_64x16_4x1_v_bz_TNT"
#: Launches per kernel (the report's names).
LAUNCHES = {RMS: 7, GEMM: 5, "nvjet_tst_64x8_64x16_2x1_v_bz_TNT": 2,
            "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT": 2, CONV: 2, SILU: 2}

FORMS = {
    "folder": FOLDER,
    "report_then_export": [REPORT, EXPORT],
    "export_then_report": [EXPORT, REPORT],
}


@pytest.fixture(scope="module")
def alone() -> pd.DataFrame:
    return read_profile(REPORT).frame


def test_gemm_time_and_clock_by_hand_from_the_csv_cells(alone):
    """nvjet_tst_64x8_64x16_4x1_v_bz_TNT, launches 1, 3, 9, 11, 17: "Duration" 11.26, 7.84, 11.10, 7.74,
    7.94 us = 45.88 us; "SM Frequency" (gpc__cycles_elapsed.avg.per_second) 1.84, 1.84, 1.83, 1.84, 1.83
    GHz. The report stores them to more digits: equal to the cells' last printed digit; the folder
    holding both, the report's values, each launch once."""
    export, folder = read_profile(EXPORT).frame, read_profile(FOLDER).frame
    for f in (export, alone, folder):
        gemm = f[f["kernel_name"] == GEMM]
        assert gemm["launch_id"].tolist() == [1, 3, 9, 11, 17]
        np.testing.assert_allclose(gemm["time_s"], [11.26e-6, 7.84e-6, 11.10e-6, 7.74e-6, 7.94e-6],
                                   rtol=0, atol=0.005e-6)
        np.testing.assert_allclose(gemm["sm_clock_hz"], [1.84e9, 1.84e9, 1.83e9, 1.84e9, 1.83e9], rtol=0, atol=0.005e9)
    assert export.loc[export["kernel_name"] == GEMM, "time_s"].sum() == pytest.approx(45.88e-6, rel=1e-12)
    assert alone["time_s"].sum() == pytest.approx(154.496e-6, rel=1e-12)  # gpu__time_duration.sum, as stored
    assert folder["time_s"].tolist() == alone["time_s"].tolist()


@pytest.mark.parametrize("form", list(FORMS))
def test_a_report_beside_its_export_counts_each_launch_once(form, alone):
    t = read_profile(FORMS[form])
    f = widened(t.frame)
    assert len(f) == 20 and f["run"].isna().all()
    assert f["launch_id"].tolist() == list(range(20))
    assert f["kernel_name"].value_counts().to_dict() == LAUNCHES  # the report's names, whichever comes first
    assert f["kernel_name"].tolist() == alone["kernel_name"].tolist()
    for column in ("time_s", "sm_clock_hz", "grid", "block"):  # the report's stored values win over the print
        assert f[column].tolist() == alone[column].tolist(), column
    assert set(f["process_id"]) == {2_477_000}  # from the export: the report's module API has none
    for column in ("flops", "fp32_flops", "tensor_flops", "dram_bytes", "l2_bytes", "l1_bytes"):
        assert f[column].isna().all(), column  # no such counters in these sections: unknown, not 0
    assert not any("differs between" in w or w.startswith("left out") for w in t.warnings), t.warnings


@pytest.mark.parametrize("form", list(FORMS))
def test_the_roofline_by_kernel_is_the_reports(form):
    """Per kernel: the same launches, time and clock as the report alone; FLOPs and bytes unknown in both."""
    ours = roofline.analyze(read_profile(FORMS[form]), by="name").frame.set_index("kernel_name").sort_index()
    theirs = roofline.analyze(read_profile(REPORT), by="name").frame.set_index("kernel_name").sort_index()
    assert ours.index.tolist() == sorted(LAUNCHES)
    assert ours["launches"].to_dict() == LAUNCHES
    np.testing.assert_array_equal(ours[["time_s", "sm_clock_hz"]].to_numpy(float),
                                  theirs[["time_s", "sm_clock_hz"]].to_numpy(float))
    assert ours["time_s"].sum() == pytest.approx(154.496e-6, rel=1e-12)
    assert ours.loc[GEMM, "time_s"] == pytest.approx(45.88e-6, abs=5 * 0.005e-6)
    assert ours[["flops", "dram_bytes", "l2_bytes"]].isna().all().all()


def test_the_export_alone_is_the_same_launches_to_its_printed_digits(alone):
    f = read_profile(EXPORT).frame
    assert len(f) == 20 and f["kernel_name"].nunique() == 6
    assert [same_kernel(a, b) for a, b in zip(alone["kernel_name"], f["kernel_name"])] == [True] * 20
    np.testing.assert_allclose(f["time_s"], alone["time_s"], rtol=0, atol=0.005e-6)  # "4.06 us" for 4.064 us


def test_the_name_forms_of_one_kernel_are_one_kernel():
    """The forms above, the C++ runtime's demangling of ncu's mangled name
    (``_ZN10flashinfer4norm13RMSNormKernelILj8E13__nv_bfloat16EEvPT0_S4_S4_jjjff``) and the function base
    are one kernel; another template argument or another function is not."""
    demangled = ("void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
                 "__nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)")
    for form in (RMS_2026, demangled, "RMSNormKernel"):
        assert same_kernel(RMS, form) and same_kernel(form, RMS)
    assert kernel_key(RMS) == kernel_key(RMS_2026) == kernel_key(demangled) == ("RMSNormKernel", "8,__nv_bfloat16")
    assert same_kernel(CONV, CONV_2026) and same_kernel(SILU, SILU_2026)
    assert same_kernel(CONV, "void causal_conv1d_update_kernel<Causal_conv1d_update_kernel_traits<64, 3, "
                             "c10::BFloat16, c10::BFloat16>, false>(ConvParamsBase)")
    assert same_kernel(SILU, "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &(float silu<float>"
                             "(float const&))>(__nv_bfloat16*, __nv_bfloat16 const*, int)")
    assert not same_kernel(RMS, RMS.replace("(unsigned int)8", "(unsigned int)4"))
    assert not same_kernel(RMS, RMS_2026.replace("__nv_bfloat16>", "__half>"))
    assert not same_kernel(RMS, "LayerNormKernel")
    assert not same_kernel(GEMM, "nvjet_tst_64x8_64x16_2x1_v_bz_TNT")


def test_an_export_naming_another_kernel_is_another_run(tmp_path):
    """The rule compares kernels, it does not ignore names: the export with launch 0's template argument
    8 changed to 4 (another instantiation) is not the report's; two runs side by side."""
    text = EXPORT.read_text()
    assert text.count("RMSNormKernel<8, __nv_bfloat16>") > 0
    other = tmp_path / "ncu_raw.csv"
    other.write_text(text.replace("RMSNormKernel<8, __nv_bfloat16>", "RMSNormKernel<4, __nv_bfloat16>"))
    f = read_profile([REPORT, other]).frame
    assert len(f) == 40 and f["run"].nunique() == 2


def _ncu() -> str:
    ncu = shutil.which("ncu")
    if ncu is None:
        pytest.skip("needs Nsight Compute's ncu on PATH (bash .ci/install-ncu)")
    return ncu


def test_the_report_through_ncu_import_gives_the_same_run(monkeypatch, alone):
    """Without the ncu_report module the report is read as ``ncu --import FILE --csv --page raw``
    (ncu 2024.1.1: the module's names, and a process ID): alone the module's table; beside the export,
    one run of 20 launches named as the module names them."""
    _ncu()
    by_module, by_cli = same_table_both_ways(REPORT)
    assert set(by_cli["process_id"]) == {2_477_000}
    monkeypatch.setattr(ncu_rep, "_import_ncu_report", lambda: None)
    for form in FORMS.values():
        t = read_profile(form)
        f = widened(t.frame)
        assert len(f) == 20 and f["run"].isna().all()
        assert f["kernel_name"].tolist() == by_module["kernel_name"].tolist()
        np.testing.assert_allclose(f["time_s"], alone["time_s"], rtol=1e-6)
        assert not any("differs between" in w for w in t.warnings), t.warnings


@pytest.mark.parametrize("base", ["function", "mangled"])
def test_exports_with_other_name_bases_join_the_report(tmp_path, base):
    """``ncu --import R --csv --page raw --print-kernel-base function|mangled`` (the real ncu) beside the
    report and the 2026 export: one run of 20 launches; the shown names are the fullest form."""
    out = tmp_path / f"{base}.csv"
    args = [_ncu(), "--import", str(REPORT), "--csv", "--page", "raw", "--print-kernel-base", base]
    out.write_bytes(subprocess.run(args, capture_output=True, check=True, timeout=120).stdout)
    names = read_profile(out).frame["kernel_name"]
    assert names.iloc[0] == ("RMSNormKernel" if base == "function" else
                             "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
                             "__nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)")
    for files in ([REPORT, out], [out, REPORT], [out, EXPORT], [EXPORT, out, REPORT]):
        f = read_profile(files).frame
        assert len(f) == 20 and f["run"].isna().all() and f["kernel_name"].nunique() == 6
        assert f["launches"].sum() == 20

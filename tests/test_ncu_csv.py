"""Nsight Compute CSV reading on real exports (tests/data/ncu/*/PROVENANCE.md) and their pitfalls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.errors import InputError
from roofline.readers import read_profile
from roofline.readers.ncu.csv_export import read_ncu_csv

DATA = Path(__file__).parent / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
A100 = DATA / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"


def test_v100_gemm_tensor_flops_are_2mnk():
    t = read_profile(V100_GEMM)
    f = widened(t.frame)
    gemm = f[f["kernel_name"].str.contains("gemm", case=False) & ~f["kernel_name"].str.startswith("void InitializeMatrix")]
    assert len(gemm) == 7  # 6 CUTLASS runs + 1 cuBLAS
    n = 20480
    assert (gemm["tensor_flops"] == 2 * n**3).all()
    assert (gemm["tensor_precision"] == "fp16").all()
    assert (gemm["compute_capability"] == "7.0").all()
    init = f[f["kernel_name"].str.startswith("void InitializeMatrix")]
    assert (init["tensor_flops"] == 0).all() and init["tensor_precision"].isna().all()
    # thousands separators and the .avg/.per_second pair: time = cycles / clock
    first = t.metrics.iloc[0]
    assert first["dram__bytes.sum"] == 837_859_712
    assert f["time_s"].iloc[0] == pytest.approx(3_530_235.80 / 1_235_108_248.43, rel=1e-12)
    assert f["sm_clock_hz"].iloc[0] == pytest.approx(1_235_108_248.43)
    assert f["grid"].iloc[0] == "(1280, 1280, 1)" and f["block"].iloc[0] == "(16, 16, 1)"
    assert f["device"].iloc[0] == 0 and f["stream"].iloc[0] == 7 and f["process_id"].iloc[0] == 24103
    assert not f["flops_partial"].any()
    assert t.warnings == ()


def test_a100_naive_sgemm_fp32_flops_and_unknown_tensor():
    t = read_profile(A100)
    f = t.frame.set_index("launch_id")
    m, n, k = 40960, 40960, 20480
    gemm = f.loc[2]
    assert gemm["kernel_name"] == "void gemm_v0<float>(T1 *, T1 *, T1 *, int, int, int)"
    assert gemm["fp32_flops"] == 2 * m * n * k  # fadd = fmul = 0, ffma = M*N*K
    assert np.isnan(gemm["tensor_flops"])  # SM 8.0 with only instruction counts: unknown
    assert bool(gemm["flops_partial"])
    assert gemm["flops"] == gemm["fp32_flops"] + gemm["fp16_flops"]
    # the other launches executed no tensor instruction: exactly zero, not unknown
    assert (f.loc[[0, 1], "tensor_flops"] == 0).all()
    assert not f.loc[[0, 1], "flops_partial"].any()
    warning = [w for w in t.warnings if "tensor_flops unknown" in w]
    assert len(warning) == 1 and "1 launch on SM 8.0" in warning[0]
    assert "ncu --metrics sm__ops_path_tensor_src_fp16_dst_fp16.sum" in warning[0]
    # smsp__ variants and "5,318,969,728.00" values
    assert t.metrics.loc[0, "dram__bytes.sum"] == 5_318_969_728.0
    assert f.loc[0, "sm_clock_hz"] == pytest.approx(764_999_989.86)


def test_a100_fp16_conventions_differ_by_two():
    ncu = read_profile(A100, fp16="ncu").frame
    paper = read_profile(A100, fp16="paper").frame
    hfma = 3_355_443_200
    assert ncu.loc[2, "fp16_flops"] == 4 * hfma
    assert paper.loc[2, "fp16_flops"] == 2 * hfma


def test_b200_raw_page_time_and_unknown_flops():
    t = read_profile(B200)
    f = widened(t.frame)
    assert len(f) == 16
    assert f["time_s"].iloc[0] == pytest.approx(11904e-9, rel=1e-12)  # gpu__time_duration.sum in ns
    assert f["time_s"].iloc[-1] == pytest.approx(397120e-9, rel=1e-12)
    for col in ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "flops", "dram_bytes"):
        assert f[col].isna().all(), col
    # The file has the pipes' utilization only. The even rows' tensor pipe reads "0" %, yet on SM 10.0
    # that proves nothing (tcgen05 work is not checked against it): unknown, like the busy odd rows'.
    pipe = t.metrics["sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_active"].to_numpy()
    assert (pipe[::2] == 0).all() and (pipe[1::2] > 65).all()
    assert (f["compute_capability"] == "10.0").all()
    assert f["grid"].iloc[1] == "(1, 4, 64)" and f["block"].iloc[1] == "(128, 1, 1)"
    assert (f["device"] == 0).all() and (f["stream"] == 7).all()
    text = "\n".join(t.warnings)
    assert "fp32_flops unknown" in text and "ncu --metrics sm__sass_thread_inst_executed_op_fadd_pred_on.sum" in text
    assert "dram_bytes unknown" in text and "dram__bytes.sum" in text
    # every raw metric is kept, numeric in SI, text as text
    assert t.metrics.shape == (16, 464)
    assert t.metrics["launch__waves_per_multiprocessor"].iloc[1] == pytest.approx(0.86)
    assert t.metrics["device__attribute_display_name"].iloc[0] == "NVIDIA B200"
    assert t.metrics["gpu__time_duration.sum"].iloc[0] == pytest.approx(11904e-9)


def _write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding=encoding)
    return p


RAW_HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","dram__bytes.sum","sm__cycles_elapsed.avg.per_second","l1tex__t_bytes.sum"\n'


def test_bom_preamble_units_and_na(tmp_path):
    text = ("\ufeffprogram says hello \"unbalanced quote\n==PROF== Connected to process 1\n==WARNING== something, with commas\n"
            + RAW_HEADER
            + '"","","","","","","","","","","","usecond","Kbyte","cycle/nsecond","Mbyte"\n'
            + '"0","1","a","h","_Z6kernelPfi","1","7","(1, 1, 1)","(2, 1, 1)","0","9.0","1.50","1,024","1.41","n/a"\n'
            + '"1","1","a","h","void k2()","1","7","(1, 1, 1)","(2, 1, 1)","0","9.0","2,000.25","2","1.5","3"\n')
    p = _write(tmp_path, "bom.csv", text)
    prof = read_ncu_csv(p)
    m = prof.metrics
    assert m["gpu__time_duration.sum"].tolist() == pytest.approx([1.5e-6, 2000.25e-6])
    assert m["dram__bytes.sum"].tolist() == [1_024_000.0, 2000.0]
    assert m["sm__cycles_elapsed.avg.per_second"].tolist() == pytest.approx([1.41e9, 1.5e9])
    assert np.isnan(m["l1tex__t_bytes.sum"].iloc[0]) and m["l1tex__t_bytes.sum"].iloc[1] == 3e6
    assert prof.ids["kernel_name"].tolist() == ["kernel(float*, int)", "void k2()"]  # demangled
    assert prof.units["gpu__time_duration.sum"] == "usecond"


def test_european_separators_detected(tmp_path):
    text = (RAW_HEADER
            + '"","","","","","","","","","","","nsecond","byte","cycle/second","byte"\n'
            + '"0","1","a","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","1.234,50","2.000.000","1.410.000.000","0,5"\n')
    p = _write(tmp_path, "eu.csv", text)
    m = read_ncu_csv(p).metrics
    assert m["gpu__time_duration.sum"].iloc[0] == pytest.approx(1234.5e-9)
    assert m["dram__bytes.sum"].iloc[0] == 2_000_000
    assert m["sm__cycles_elapsed.avg.per_second"].iloc[0] == 1.41e9
    assert m["l1tex__t_bytes.sum"].iloc[0] == 0.5


def test_three_decimal_values_are_not_taken_for_european(tmp_path):
    text = (RAW_HEADER
            + '"","","","","","","","","","","","nsecond","byte","cycle/second","byte"\n'
            + '"0","1","a","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","0.125","1,234","12.50","7"\n')
    m = read_ncu_csv(_write(tmp_path, "us.csv", text)).metrics
    assert m["gpu__time_duration.sum"].iloc[0] == pytest.approx(0.125e-9)
    assert m["dram__bytes.sum"].iloc[0] == 1234
    assert m["sm__cycles_elapsed.avg.per_second"].iloc[0] == 12.5


def test_both_conventions_in_one_file_are_refused(tmp_path):
    text = (RAW_HEADER
            + '"","","","","","","","","","","","nsecond","byte","cycle/second","byte"\n'
            + '"0","1","a","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","0,5","1,234,567","12.50","7"\n')
    p = _write(tmp_path, "mixed.csv", text)
    with pytest.raises(InputError, match="both"):
        read_ncu_csv(p)


def test_details_units_scale_per_value_and_rules_ignored(tmp_path):
    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description"\n'
    row = '"{id}","5","p","h","k{id}","1","7","(1, 1, 1)","(1, 1, 1)","0","8.6","Command line profiler metrics","{m}","{u}","{v}","","",""\n'
    text = head + "".join([
        row.format(id=0, m="gpu__time_duration.sum", u="usecond", v="3.50"),
        row.format(id=0, m="dram__bytes.sum", u="Mbyte", v="1.20"),
        row.format(id=0, m="launch__func_cache_config", u="", v="CachePreferNone"),
        row.format(id=1, m="gpu__time_duration.sum", u="msecond", v="1.25"),
        row.format(id=1, m="dram__bytes.sum", u="Gbyte", v="2.00"),
        row.format(id=1, m="launch__func_cache_config", u="", v="CachePreferL1"),
    ])
    t = read_profile(_write(tmp_path, "d.csv", text))
    assert t.frame["time_s"].tolist() == pytest.approx([3.5e-6, 1.25e-3])
    assert t.frame["dram_bytes"].tolist() == pytest.approx([1.2e6, 2e9])
    assert t.metrics["launch__func_cache_config"].tolist() == ["CachePreferNone", "CachePreferL1"]
    assert t.frame["kernel_name"].tolist() == ["k0", "k1"]


def test_deepcam_2020_kernel_time_column_is_not_timing():
    p = DATA / "v100_deepcam_lamb" / "out.dram__bytes.sum"
    prof = read_ncu_csv(p)
    assert list(prof.metrics.columns) == ["dram__bytes.sum"]
    assert "Kernel Time" not in prof.ids.columns
    assert prof.ids["compute_capability"].isna().all()
    assert prof.ids["process_id"].iloc[0] == 60518  # each one-metric run is its own process

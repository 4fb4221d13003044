"""Real public Nsight Compute exports from Hopper (H100 PCIe, GH200) and Blackwell (RTX 5090) GPUs,
read by ``read_profile`` and checked against numbers computed by hand from the files' own cells.

Provenance, the layout of each file and the derivation of every truth: PROVENANCE.md beside each
file under tests/data/ncu/. The .ncu-rep reports are also read both ways (NVIDIA's ``ncu_report``
module and the real ``ncu --import --csv``), which must give the same kernel table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ncu_routes import same_table_both_ways

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers.ncu.peaks import machine_from_profile
from roofline.errors import MissingMetricsError
from roofline.readers import read_profile

ncu_report = pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")

DATA = Path(__file__).parent / "data" / "ncu"
H100_SILU = DATA / "h100pcie_setfull_rep_silu_vector" / "2025-04-21-vector-based.ncu-rep"
GH200_RMS = DATA / "gh200_setfull_rep_rms_norm_looping" / "rms_norm_triton_looping.ncu-rep"
GH200_SECTIONS = DATA / "gh200_sections_rep_silu_roofline" / "silu-2025-04-19-v3.ncu-rep"
GH200_BASIC = DATA / "gh200_basic_rep_silu" / "silu-2025-04-18-v6.ncu-rep"
GH200_NO_METRICS = DATA / "gh200_memworkload_rep_silu" / "silu-2025-04-19-v1.ncu-rep"
RTX5090_DETAILS = DATA / "rtx5090_details_rules_cutlass_gemm" / "ncu.details.csv"
RTX5090_SOL = DATA / "rtx5090_section_sol_cutlass_gemm" / "ncu.section_SpeedOfLight.csv"

REPORTS = [H100_SILU, GH200_RMS, GH200_SECTIONS, GH200_BASIC]


@pytest.mark.parametrize("report", REPORTS, ids=["h100pcie_setfull", "gh200_setfull", "gh200_sections", "gh200_basic"])
def test_module_and_ncu_import_give_the_same_table(report):
    by_module, by_cli = same_table_both_ways(report)
    assert by_cli["process_id"].notna().all()


def test_h100_pcie_set_full_silu_by_hand():
    """H100 PCIe (CC 9.0), ncu 2025.1 --set full, silu_kernel_vector on 2^26 floats, 3 launches.
    Instruction counts exist only as .sum.per_cycle_elapsed rates."""
    t = read_profile(H100_SILU)
    f = widened(t.frame)
    assert len(f) == 3 and set(f["compute_capability"]) == {"9.0"}
    assert set(f["device"]) == {0}  # ncu's device index; the name (device__attribute_display_name) is "NVIDIA H100 PCIe"
    # gpu__time_duration.sum [ns] per launch
    np.testing.assert_allclose(f["time_s"], [284_704e-9, 284_320e-9, 284_576e-9], rtol=1e-12)
    # launch 0: smsp__cycles_elapsed.avg 313,181.1929824561
    #   fadd 214.2812707267493 /cycle x cycles = 67,108,864 (= 2^26, one per element)
    #   ffma 2142.812707267493 /cycle x cycles = 671,088,640 (10 per element); fmul 0
    #   FP32 = 67,108,864 + 2 x 671,088,640 = 1,409,286,144
    assert f.loc[0, "fp32_flops"] == pytest.approx(1_409_286_144, rel=1e-9)
    assert f.loc[0, "fp64_flops"] == 0  # dadd, dmul, dfma rates 0
    # Half: the report has HFMA (derived__smsp__..._hfma_pred_on_x4 857.1251084513152 /cycle x cycles
    # = 268,435,464 FLOPs) but its derived hadd_x2 / hmul_x2 cells are empty (not collected), and the
    # fma pipe's fp16 type reads 0 % beside those HFMAs, so it proves nothing: FP16 unknown, the total
    # a lower bound.
    assert np.isnan(f.loc[0, "fp16_flops"])
    assert any("fp16_flops unknown" in w and "hadd" in w for w in t.warnings)
    assert t.metrics.loc[0, "sm__inst_executed_pipe_fma_type_fp16.avg.pct_of_peak_sustained_active"] == 0
    assert t.metrics.loc[0, "derived__smsp__sass_thread_inst_executed_op_hfma_pred_on_x4"] == pytest.approx(
        857.1251084513152)
    assert f.loc[0, "tensor_flops"] == 0  # every sm__ops_path_tensor_*.sum is 0
    assert f.loc[0, "flops"] == pytest.approx(1_409_286_144, rel=1e-9) and f.loc[0, "flops_partial"]
    # lts__t_sectors.sum x 32 per launch
    np.testing.assert_array_equal(f["l2_bytes"], [25_623_330 * 32, 25_730_564 * 32, 25_764_473 * 32])
    # dram__bytes_read.sum + dram__bytes_write.sum (launch 0: 268,463,104 + 248,602,624)
    np.testing.assert_allclose(f["dram_bytes"], [268_463_104 + 248_602_624, 268_457_984 + 248_690_944,
                                                 268_455_424 + 248_785_664], rtol=1e-12)
    # --set full has no l1tex__t_bytes.sum / l1tex__t_sectors.sum: unknown, not 0
    assert f["l1_bytes"].isna().all()
    assert any("l1tex__t_bytes.sum" in w for w in t.warnings)


def test_gh200_set_full_rms_norm_by_hand():
    """GH200 480GB (CC 9.0, aarch64 host), ncu 2025.1 --set full -c 1: the first launch is torch's
    randn (distribution_elementwise_grid_stride_kernel)."""
    f = widened(read_profile(GH200_RMS).frame)
    assert len(f) == 1 and f.loc[0, "compute_capability"] == "9.0"
    assert f.loc[0, "device"] == 0  # device index; device__attribute_display_name "NVIDIA GH200 480GB"
    assert f.loc[0, "time_s"] == pytest.approx(6_880e-9, rel=1e-12)  # gpu__time_duration.sum 6,880 ns
    # smsp__cycles_elapsed.avg 10,161.348484848484; ffma 209.60997481543998 /cycle -> 2,129,920 FFMA
    # FP32 = 2 x 2,129,920 = 4,259,840 (fadd, fmul 0)
    assert f.loc[0, "fp32_flops"] == pytest.approx(4_259_840, rel=1e-9)
    # hfma 26.604342957344304 /cycle -> 270,336 HFMA (x4 = 1,081,344 FLOPs), but hadd / hmul were not
    # collected (empty derived cells): FP16 unknown rather than a guess.
    assert np.isnan(f.loc[0, "fp16_flops"]) and f.loc[0, "flops_partial"]
    assert f.loc[0, "fp64_flops"] == 0
    assert f.loc[0, "tensor_flops"] == 0
    assert f.loc[0, "l2_bytes"] == 222_303 * 32  # lts__t_sectors.sum
    assert f.loc[0, "dram_bytes"] == pytest.approx(8_448 + 0, rel=1e-12)  # dram__bytes_read.sum + _write.sum
    assert np.isnan(f.loc[0, "l1_bytes"])


def test_gh200_sections_only_by_hand():
    """GH200, ncu 2025.1 with --section ComputeWorkloadAnalysis/MemoryWorkloadAnalysis/SpeedOfLight/
    SpeedOfLight_RooflineChart: rates and per-second values only, no smsp__cycles_elapsed.avg and no
    byte counts. Work = rate x smsp__cycles_elapsed.avg.per_second x gpu__time_duration.sum."""
    t = read_profile(GH200_SECTIONS)
    f = widened(t.frame)
    assert len(f) == 3 and set(f["compute_capability"]) == {"9.0"}
    np.testing.assert_allclose(f["time_s"], [140_576e-9, 151_776e-9, 151_008e-9], rtol=1e-12)
    # launch 0 (randn): derived__smsp__..._ffma_pred_on_x2 1262.450367254502 /cycle
    #   x 1,521,705,825.9007096 Hz x 140,576 ns (213,915.318 cycles) = 270,057,472
    # launch 1 (silu): (fadd 599.9958986866138 + fmul 899.9938480299207) /cycle
    #   x 1,473,867,689.3859532 Hz x 151,776 ns = 134,217,728 + 201,326,592 = 335,544,320 (10 x 2^25)
    # launch 2: (606.4946197246569 + 909.7419295869853) x 1,465,490,389.4315052 x 151,008e-9 = 335,544,320
    np.testing.assert_allclose(f["fp32_flops"], [270_057_472, 335_544_320, 335_544_320], rtol=1e-9)
    assert (f["fp64_flops"] == 0).all()  # dadd, dmul, dfma rates 0
    # No half-instruction counts; the fma pipe's fp16 type at 0 % proves nothing on Hopper (the H100
    # report above shows it at 0 beside HFMAs): unknown.
    assert f["fp16_flops"].isna().all()
    # No sm__ops_path_tensor_* counts in these sections: unknown.
    assert f["tensor_flops"].isna().all()
    # dram__bytes.sum.per_second x gpu__time_duration.sum:
    #   1,711,781,470,521.284 x 140,576 ns = 240,635,392; 3,382,650,643,052.9204 x 151,776 ns = 513,405,184;
    #   3,400,406,865,861.4116 x 151,008 ns = 513,488,640
    np.testing.assert_allclose(f["dram_bytes"], [240_635_392, 513_405_184, 513_488_640], rtol=1e-9)
    assert f["l2_bytes"].isna().all() and f["l1_bytes"].isna().all()
    assert any("lts__t_bytes.sum" in w for w in t.warnings)


def test_gh200_default_set_gives_time_only():
    """GH200, ncu 2025.1 default set (-c 2): time and cycles, no FLOP or byte counters -> NaN."""
    t = read_profile(GH200_BASIC)
    f = widened(t.frame)
    assert len(f) == 2 and set(f["compute_capability"]) == {"9.0"}
    np.testing.assert_allclose(f["time_s"], [141_760e-9, 151_584e-9], rtol=1e-12)  # gpu__time_duration.sum
    for column in ["fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "flops",
                   "l1_bytes", "l2_bytes", "dram_bytes"]:
        assert f[column].isna().all(), column
    assert any("dram__bytes.sum" in w for w in t.warnings)


def test_gh200_report_without_time_or_bytes_is_refused():
    """GH200 report made with `--set MemoryWorkloadAnalysis`: only launch and device attributes
    (247 metrics, none of time, cycles, bytes or sectors) -> a clean refusal that says what to collect."""
    with pytest.raises(MissingMetricsError, match="gpu__time_duration.sum"):
        read_profile(GH200_NO_METRICS)


def test_rtx5090_details_page_with_rule_columns_by_hand():
    """RTX 5090 (CC 12.0) --page details CSV with Rule and Estimated Speedup columns: a --metrics list
    plus sections (display names), for a cutlass bf16 tensor-op GEMM."""
    t = read_profile(RTX5090_DETAILS)
    f = widened(t.frame)
    assert len(f) == 1 and f.loc[0, "compute_capability"] == "12.0"
    assert f.loc[0, "time_s"] == pytest.approx(111.81e-6, rel=1e-12)  # gpu__time_duration.sum 111.81 us
    assert f.loc[0, "sm_clock_hz"] == pytest.approx(2.00e9, rel=1e-12)  # "SM Frequency" 2.00 Ghz
    # sm__ops_path_tensor_src_bf16_dst_fp32.sum 12,532,580,352 (the bf16->bf16 counter is n/a)
    assert f.loc[0, "tensor_flops"] == pytest.approx(12_532_580_352, rel=1e-12)
    assert f.loc[0, "tensor_precision"] == "bf16"
    # flop_count_sp.sum / flop_count_hp.sum are "n/a" and no SASS op counters: unknown
    assert np.isnan(f.loc[0, "fp32_flops"]) and np.isnan(f.loc[0, "fp16_flops"]) and np.isnan(f.loc[0, "fp64_flops"])
    # dram__bytes_read.sum "17.50 Mbyte" (1 Mbyte = 1e6 byte) + dram__bytes_write.sum "0 byte".
    # The file prints 2 decimals, so the count is known to +-0.005 Mbyte.
    # The counted read + write wins over "Memory Throughput" (dram__bytes.sum.per_second) x duration,
    # 156.55 Gbyte/s x 111.81 us = 17,503,855.5 B, which a rate printed to 5 digits cannot give exactly.
    assert f.loc[0, "dram_bytes"] == 17_500_000
    assert np.isnan(f.loc[0, "l2_bytes"]) and np.isnan(f.loc[0, "l1_bytes"])


def test_rtx5090_speed_of_light_section_only():
    """RTX 5090 (CC 12.0), the GPU Speed Of Light section alone in display names ("Duration",
    "SM Frequency", "Elapsed Cycles", throughputs in %): time only."""
    f = widened(read_profile(RTX5090_SOL).frame)
    assert len(f) == 1 and f.loc[0, "compute_capability"] == "12.0"
    assert f.loc[0, "time_s"] == pytest.approx(404.70e-6, rel=1e-12)  # "Duration" 404.70 us
    assert f.loc[0, "sm_clock_hz"] == pytest.approx(2.00e9, rel=1e-12)  # "SM Frequency" 2.00 Ghz
    for column in ["fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "flops",
                   "l1_bytes", "l2_bytes", "dram_bytes"]:
        assert np.isnan(f.loc[0, column]), column


# --- RTX 5090 fmha: a --metrics export and the roofline-chart section export of the same run ---------

FMHA = DATA / "rtx5090_fmha_metrics_roofline_section"


def test_rtx5090_roofline_chart_section_alone_says_what_is_missing():
    chart = FMHA / "ncu.section_SpeedOfLight_RooflineChart.csv"
    with pytest.raises(MissingMetricsError) as err:
        read_profile(chart)
    text = err.value.render()
    assert "rates" in text and "no launch duration" in text and "Duration" in text and str(chart) in text


def test_rtx5090_metrics_and_roofline_chart_of_one_run_merge():
    t = read_profile([FMHA / "ncu.metrics.csv", FMHA / "ncu.section_SpeedOfLight_RooflineChart.csv"])
    f = widened(t.frame)
    assert len(f) == 1 and f.loc[0, "compute_capability"] == "12.0" and f.loc[0, "process_id"] == 1745130
    assert f.loc[0, "time_s"] == pytest.approx(160.74e-6, rel=1e-12)
    assert f.loc[0, "sm_clock_hz"] == pytest.approx(1.98e9, rel=1e-12)  # the chart's "SM Frequency"
    assert f.loc[0, "tensor_flops"] == 10_192_158_720 and f.loc[0, "tensor_precision"] == "bf16"
    assert f.loc[0, "dram_bytes"] == pytest.approx(99.63e6 + 6.02e6, rel=1e-12)
    # (FADD 360.18 + FMUL 401.8 + 2 x FFMA 16.66) per cycle x 1.98 GHz x 160.74 us
    assert f.loc[0, "fp32_flops"] == pytest.approx(253_116_313.6, rel=1e-9)
    assert f.loc[0, "fp64_flops"] == 0
    assert np.isnan(f.loc[0, "fp16_flops"]) and f.loc[0, "flops_partial"]
    assert not [w for w in t.warnings if "packed FP32" in w or "ffma2" in w]  # CC 12.0: no packed FP32
    # The chart file is SASS-instrumented: its clock is kept only because no clean file has one.
    assert any("kept ncu.section_SpeedOfLight_RooflineChart.csv's smsp__cycles_elapsed.avg.per_second" in w
               for w in t.warnings)

    machine = machine_from_profile(t.metrics, compute_capability="12.0")
    assert machine.compute["fp32"] == pytest.approx(2 * 21_760 * 1.98e9, rel=1e-12)
    assert machine.compute["fp64"] == pytest.approx(2 * 340 * 1.98e9, rel=1e-12)
    assert machine.memory["dram"] == pytest.approx(128 * 13.78e9, rel=1e-12)


@pytest.mark.parametrize("report", [H100_SILU, GH200_RMS], ids=["h100pcie", "gh200"])
def test_set_full_matches_nsight_computes_own_roofline_formulas(report):
    """Nsight Compute 2025.1's Single and Double roofline sections on these --set full reports:
    achieved FLOP/s = (add + mul per cycle + derived__smsp__..._fma_pred_on_x2) x
    smsp__cycles_elapsed.avg.per_second; DRAM intensity = that / dram__bytes.sum.per_second."""
    f = widened(read_profile(report).frame)
    actions = ncu_report.load_report(str(report)).range_by_idx(0)
    for i in range(actions.num_actions()):
        action = actions.action_by_idx(i)

        def value(name: str) -> float:
            return float(action.metric_by_name(name).value())

        clock = value("smsp__cycles_elapsed.avg.per_second")
        ours = f.iloc[i]
        for column, p in (("fp32_flops", "f"), ("fp64_flops", "d")):
            per_cycle = (value(f"smsp__sass_thread_inst_executed_op_{p}add_pred_on.sum.per_cycle_elapsed")
                         + value(f"smsp__sass_thread_inst_executed_op_{p}mul_pred_on.sum.per_cycle_elapsed")
                         + value(f"derived__smsp__sass_thread_inst_executed_op_{p}fma_pred_on_x2"))
            assert ours[column] / ours["time_s"] == pytest.approx(per_cycle * clock, rel=1e-3, abs=1e-3)
            if per_cycle:
                intensity = per_cycle * clock / value("dram__bytes.sum.per_second")
                assert ours[column] / ours["dram_bytes"] == pytest.approx(intensity, rel=1e-3)


@pytest.mark.parametrize("report,sms", [(H100_SILU, 114), (GH200_RMS, 132)], ids=["h100pcie", "gh200"])
def test_set_full_instruction_and_shared_ceilings(report, sms):
    """--set full has no peak for warp instructions or shared wavefronts, but their % of peak: H100 launch 0,
    53,477,446 warp instructions / 313,181.19 SM cycles / 37.446406 % = 456.0 = 4 x 114 SMs; and
    524,288 shared wavefronts / 313,181.19 l1tex cycles / 1.468485 % = 114.0 = 1 per SM (GH200: 2,324,480 /
    10,161.35 / 43.325197 % = 528 = 4 x 132; 26,400 / 10,161.35 / 1.968243 % = 132). The ceilings are those
    peaks x the median clock over launches."""
    assert 53_477_446 / 313_181.1929824561 / 0.3744640594806168 == pytest.approx(4 * 114, rel=1e-9)
    assert 524_288 / 313_181.1929824561 / 0.014684845855725692 == pytest.approx(114, rel=1e-9)
    assert 2_324_480 / 10_161.348485 / 0.43325197 == pytest.approx(4 * 132, rel=1e-6)
    assert 26_400 / 10_161.348485 / 0.01968243 == pytest.approx(132, rel=1e-6)
    metrics = read_profile(report).metrics
    m = machine_from_profile(metrics, compute_capability="9.0", fill_from_spec=False)
    sm_clock = float(np.median(metrics["sm__cycles_elapsed.avg.per_second"]))  # H100: 1.100024 GHz
    l1_clock = float(np.median(metrics["l1tex__cycles_elapsed.avg.per_second"]))
    assert m.compute["warp_inst"] == pytest.approx(4 * sms * sm_clock, rel=1e-9)  # H100: 501.6 G warp inst/s
    assert m.memory["shared"] == pytest.approx(128 * sms * l1_clock, rel=1e-9)  # H100: 16.05 TB/s
    assert "pct_of_peak_sustained_elapsed" in m.metadata["formulas"]["warp_inst"]
    # no integer, conversion or XU peak in --set full
    assert not {"int32", "conversion", "sfu"} & set(m.compute)

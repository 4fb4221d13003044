"""Ceilings from a profile's own peak metrics (Nsight Compute's roofline-section formulas)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from roofline.readers.ncu.peaks import machine_from_profile
from roofline.readers import read_profile

DATA = Path(__file__).parent / "data" / "ncu"

# V100-SXM2-like per-cycle peaks: 80 SMs x 32 DFMA, x 64 FFMA; HBM2 ~ 900 GB/s at 877 MHz.
PEAKS = {
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": 2560.0,
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 5120.0,
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": 10240.0,
    "sm__inst_executed_pipe_tensor.sum.peak_sustained": 160.0,
    "dram__bytes.sum.peak_sustained": 1024.0,
    "dram__cycles_elapsed.avg.per_second": 877e6,
    "lts__t_bytes.sum.peak_sustained": 2048.0,
    "lts__cycles_elapsed.avg.per_second": 1.53e9,
    "l1tex__t_bytes.sum.peak_sustained": 10240.0,
    "l1tex__cycles_elapsed.avg.per_second": 1.53e9,
}


def _frame(clocks=(1.50e9, 1.53e9, 1.53e9), **extra) -> pd.DataFrame:
    rows = [{**PEAKS, "sm__cycles_elapsed.avg.per_second": c, **extra} for c in clocks]
    return pd.DataFrame(rows)


def test_ceilings_are_peak_times_clock():
    m = machine_from_profile(_frame(), name="V100", compute_capability="7.0")
    assert m is not None and m.source == "from-profile" and m.name == "V100"
    clk = 1.53e9  # median of the launches' SM clocks
    assert m.sm_clock_hz == clk
    assert m.compute["fp64"] == pytest.approx(2 * 2560 * clk)
    assert m.compute["fp32"] == pytest.approx(2 * 5120 * clk)
    assert m.compute["fp16"] == pytest.approx(4 * 10240 * clk)  # the default FP16 convention: 4 FLOPs per HFMA
    assert m.compute["tensor_fp16"] == pytest.approx(512 * 160 * clk)  # 125 TFLOP/s on V100
    assert m.memory["dram"] == pytest.approx(1024 * 877e6)
    assert m.memory["l2"] == pytest.approx(2048 * 1.53e9)
    assert m.memory["l1"] == pytest.approx(10240 * 1.53e9)
    assert "dram__bytes.sum.peak_sustained" in m.metadata["formulas"]["dram"]


def test_fp16_ceiling_follows_the_fp16_convention():
    """Achieved FP16 and its ceiling count an HFMA alike: 4 FLOPs (ncu 2025+), 2 (paper, ncu 2024.1)."""
    clk = 1.53e9
    assert machine_from_profile(_frame(), fp16="ncu").compute["fp16"] == pytest.approx(4 * 10240 * clk)
    assert machine_from_profile(_frame(), fp16="paper").compute["fp16"] == pytest.approx(2 * 10240 * clk)
    derived = _frame().drop(columns=["sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"])
    derived["derived__sm__sass_thread_inst_executed_op_hfma_pred_on_x4"] = 4 * 10240.0
    assert machine_from_profile(derived, fp16="ncu").compute["fp16"] == pytest.approx(4 * 10240 * clk)
    assert machine_from_profile(derived, fp16="paper").compute["fp16"] == pytest.approx(2 * 10240 * clk)


def test_tensor_pipe_peak_needs_volta():
    m = machine_from_profile(_frame(), compute_capability="8.0")
    assert "tensor_fp16" not in m.compute


def test_dense_tensor_peaks_not_the_sparse_totals():
    """A100: 1024 dense FP16 FMA/clk/SM x 108 SMs = 221184 ops/clk; the per-type total's peak counts
    2:4-sparse work (2x) and is not a dense ceiling; Hopper's HGMMA peak beats its HMMA peak."""
    total = "sm__ops_path_tensor_src_fp16_dst_fp32.sum.peak_sustained"
    m = machine_from_profile(_frame(**{total: 442368.0}), compute_capability="8.0")
    assert "tensor_fp16" not in m.compute
    m = machine_from_profile(_frame(**{total: 442368.0, "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained": 221184.0}),
                             compute_capability="8.0")
    assert m.compute["tensor_fp16"] == pytest.approx(221184 * 1.53e9)
    k = "sm__ops_path_tensor_op_"
    m = machine_from_profile(_frame(**{f"{k}hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": 540672.0,
                                      f"{k}hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": 270336.0,
                                      "sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained": 1081344.0}),
                             compute_capability="9.0")
    assert m.compute["tensor_bf16"] == pytest.approx(540672 * 1.53e9)
    assert "hgmma" in m.metadata["formulas"]["tensor_bf16"]


def test_writeback_alternative_for_l1():
    f = _frame().drop(columns=["l1tex__t_bytes.sum.peak_sustained"])
    f["l1tex__lsu_writeback_active_mem_lg.sum.peak_sustained"] = 80.0
    m = machine_from_profile(f)
    assert m.memory["l1"] == pytest.approx(128 * 80 * 1.53e9)


def test_scaling_to_a_kernel_clock():
    m = machine_from_profile(_frame()).scaled_to_clock(1.53e9 / 2)
    assert m.compute["fp32"] == pytest.approx(5120 * 1.53e9)
    assert m.memory["dram"] == pytest.approx(1024 * 877e6)  # DRAM does not scale


def test_profiles_without_peaks_give_none():
    for csv in (DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv",
                DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"):
        assert machine_from_profile(read_profile(csv).metrics, fill_from_spec=False) is None
    assert machine_from_profile(pd.DataFrame()) is None


def test_instruction_operation_and_shared_ceilings_from_peak_metrics():
    """V100-like: 80 SMs x 4 warp instructions, 1 shared wavefront (128 B), 64 integer, 16 conversion and
    16 XU thread instructions per SM per cycle."""
    f = _frame(**{"sm__inst_executed.sum.peak_sustained": 320.0,
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained": 80.0,
                  "sm__sass_thread_inst_executed_op_integer_pred_on.sum.peak_sustained": 5120.0,
                  "sm__sass_thread_inst_executed_op_conversion_pred_on.sum.peak_sustained": 1280.0,
                  "sm__thread_inst_executed_pipe_xu_pred_on.sum.peak_sustained": 1280.0})
    m = machine_from_profile(f, compute_capability="7.0", fill_from_spec=False)
    clk = 1.53e9  # SM and L1 clock alike in _frame
    assert m.compute["warp_inst"] == pytest.approx(320 * clk)  # 489.6 G warp instructions/s
    assert m.memory["shared"] == pytest.approx(128 * 80 * clk)  # 15.7 TB/s
    assert m.compute["int32"] == pytest.approx(5120 * clk)
    assert m.compute["conversion"] == pytest.approx(1280 * clk)
    assert m.compute["sfu"] == pytest.approx(1280 * clk)
    assert "sm__inst_executed.sum.peak_sustained" in m.metadata["formulas"]["warp_inst"]
    assert "from-profile" in m.metadata["ceiling_sources"]["shared"]


def test_peaks_implied_by_ncus_percent_of_peak():
    """--set full: no peak metric, but achieved counts and their % of peak. 91,200 warp instructions in
    1,000 SM cycles at 20 % of peak -> 456 per cycle; 11,400 wavefronts in 1,000 l1tex cycles at 10 %
    -> 114 per cycle; launches under 1 % of peak (two-decimal percentages) are not read."""
    base = _frame(clocks=(1.1e9, 1.1e9, 1.1e9))
    f = base.assign(**{"smsp__inst_executed.sum": [91_200.0, 91_200.0, 10.0],
                       "sm__cycles_elapsed.avg": [1000.0, 1000.0, 1000.0],
                       "sm__inst_executed.sum.pct_of_peak_sustained_elapsed": [20.0, 20.0, 0.01],
                       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": [11_400.0, 11_400.0, 11_400.0],
                       "l1tex__cycles_elapsed.avg": [1000.0, 1000.0, 1000.0],
                       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed": [10.0, 10.0, 0.5]})
    m = machine_from_profile(f, fill_from_spec=False)
    assert m.compute["warp_inst"] == pytest.approx(456 * 1.1e9)
    assert m.memory["shared"] == pytest.approx(128 * 114 * 1.53e9)  # x the l1tex clock of _frame
    assert "pct_of_peak_sustained_elapsed" in m.metadata["formulas"]["shared"]


def test_sm_count_constants_only_beside_the_profiles_peaks():
    """Without a peak metric or a usable % of peak: 4 warp instructions and one 128 B wavefront per SM per
    cycle x the SM count, but only where the profile gives other ceilings from its own peaks."""
    f = _frame().assign(device__attribute_multiprocessor_count=80.0)
    m = machine_from_profile(f, fill_from_spec=False)
    assert m.compute["warp_inst"] == pytest.approx(4 * 80 * 1.53e9)
    assert m.memory["shared"] == pytest.approx(128 * 80 * 1.53e9)
    assert "device__attribute_multiprocessor_count" in m.metadata["formulas"]["warp_inst"]
    bare = pd.DataFrame({"sm__cycles_elapsed.avg.per_second": [1.5e9], "launch__sm_count": [80.0],
                         "l1tex__cycles_elapsed.avg.per_second": [1.5e9]})
    assert machine_from_profile(bare, fill_from_spec=False) is None


def test_peak_metrics_ask_for_the_new_peaks():
    from roofline.readers.ncu.peaks import peak_metrics

    for cc in ("7.0", "8.0", "9.0"):
        names = peak_metrics(cc)
        for peak in ("sm__inst_executed.sum.peak_sustained", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained",
                     "sm__sass_thread_inst_executed_op_integer_pred_on.sum.peak_sustained",
                     "sm__sass_thread_inst_executed_op_conversion_pred_on.sum.peak_sustained",
                     "sm__thread_inst_executed_pipe_xu_pred_on.sum.peak_sustained"):
            assert peak in names, (cc, peak)


def test_blackwell_dense_peaks_of_the_tcgen05_kinds_and_datapaths():
    """SM 10.0: the tcgen05 kinds' dense peaks, FP4 (OMMA) twice the 8-bit datapath's: B200, 148 SMs x
    32768 FP4 and 16384 8-bit FLOP/clk/SM (9 and 4.5 PFLOP/s dense at 1856 MHz); the Hopper names are
    not asked for there; on Hopper the Blackwell names are not read."""
    from roofline.readers.ncu.peaks import peak_metrics

    k = "sm__ops_path_tensor_op_"
    peaks = {f"{k}utcomma_src_fp4_dst_fp32_sparsity_off.sum.peak_sustained": 148 * 32768.0,
             f"{k}utcqmma_src_fp4_fp6_fp8_dst_fp32_sparsity_off.sum.peak_sustained": 148 * 16384.0,
             f"{k}utchmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": 148 * 8192.0}
    m = machine_from_profile(_frame(clocks=(1.856e9,), **peaks), compute_capability="10.0")
    assert m.compute["tensor_fp4"] == pytest.approx(9.0e15, rel=1e-3)
    assert m.compute["tensor_fp8"] == pytest.approx(4.5e15, rel=1e-3)
    assert m.compute["tensor_bf16"] == pytest.approx(2.25e15, rel=1e-3)
    assert "utcomma" in m.metadata["formulas"]["tensor_fp4"]
    hopper = machine_from_profile(_frame(clocks=(1.856e9,), **peaks), compute_capability="9.0")
    assert not {"tensor_fp4", "tensor_fp8", "tensor_bf16"} & set(hopper.compute)
    names = peak_metrics("10.0")
    assert set(peaks) <= set(names) and not [n for n in names if "gmma" in n]
    assert not [n for n in peak_metrics("9.0") if "utc" in n or "fp4" in n]

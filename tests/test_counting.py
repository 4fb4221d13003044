"""The formula table (roofline.counting) on synthetic metric tables with known answers."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from roofline import counting
from roofline.errors import InputError
from roofline.kernels import COLUMN_NAMES
from roofline.units import si_factor

OPS = "sm__ops_path_tensor_src_"


def _cc(n: int, cc: str | None) -> pd.Series:
    return pd.Series([cc] * n, dtype="string")


def test_table_has_no_duplicates_and_names_real_columns():
    keys = Counter((f.column, f.convention, f.archs) for f in counting.FORMULAS)
    assert all(v == 1 for v in keys.values())
    for f in counting.FORMULAS:
        assert f.column in COLUMN_NAMES
        assert f.doc
    fp16 = {f.convention for f in counting.FORMULAS if f.column == "fp16_flops"}
    assert fp16 == {"ncu", "paper"}


def test_required_metrics_per_architecture():
    v100 = counting.required_metrics("7.0")
    assert "sm__inst_executed_pipe_tensor.sum" in v100
    assert not any(m.startswith(OPS) for m in v100)
    for m in ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
              "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
              "l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum"):
        assert m in v100
    a100 = counting.required_metrics("8.0")
    assert f"{OPS}fp16_dst_fp32.sum" in a100 and f"{OPS}tf32_dst_fp32.sum" in a100
    assert f"{OPS}fp8.sum" not in a100
    assert f"{OPS}fp8.sum" in counting.required_metrics("9.0")
    assert len(a100) == len(set(a100))
    # Hopper's FP16 total is one counter (ncu 2024.1 --query-metrics --chip gh100 has no dst split)
    h100 = counting.required_metrics("9.0")
    assert f"{OPS}fp16.sum" in h100 and f"{OPS}fp16_dst_fp32.sum" not in h100
    assert not any("int4" in m for m in h100)
    # an architecture the table does not list gets the architecture-independent formulas
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in counting.required_metrics("6.1")
    assert counting.ncu_hint(["a.sum", "b.sum", "a.sum"]) == "collect with: ncu --metrics a.sum,b.sum"


def test_scalar_flops_and_smsp_variants():
    m = pd.DataFrame({
        "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum": [1.0, 0.0],
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum": [2.0, 0.0],
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": [3.0, 10.0],
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": [5, 0],  # int64 counts are fine
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": [7, 0],
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": [11, 1],
        "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": [1.0, 0.0],
        "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": [1.0, 0.0],
        "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": [1.0, 2.0],
    })
    c = counting.count(m, _cc(2, "8.0"), fp16="ncu").columns
    assert c["fp64_flops"].tolist() == [1 + 2 + 6, 20]
    assert c["fp32_flops"].tolist() == [5 + 7 + 22, 2]
    assert c["fp16_flops"].tolist() == [2 + 2 + 4, 8]
    assert counting.count(m, _cc(2, "8.0"), fp16="paper").columns["fp16_flops"].tolist() == [1 + 1 + 2, 4]


def test_missing_metrics_are_nan_with_one_warning_per_column():
    m = pd.DataFrame({"sm__cycles_elapsed.avg": [100.0] * 5, "sm__cycles_elapsed.avg.per_second": [1e9] * 5})
    out = counting.count(m, _cc(5, "7.0"))
    assert out.columns["time_s"].tolist() == pytest.approx([1e-7] * 5)
    for col in ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "l1_bytes", "l2_bytes", "dram_bytes"):
        assert np.isnan(out.columns[col]).all(), col
    assert len(out.warnings) == 7  # one per column, not per launch
    dram = [w for w in out.warnings if w.startswith("dram_bytes")]
    assert dram == ["dram_bytes unknown: metrics not collected: dram__bytes.sum; collect with: ncu --metrics dram__bytes.sum"]


def test_dram_read_plus_write_and_time_fallback():
    m = pd.DataFrame({
        "dram__bytes_read.sum": [100.0, 5.0], "dram__bytes_write.sum": [20.0, 1.0],
        "gpu__time_duration.sum": [2e-6, np.nan],
        "sm__cycles_elapsed.avg": [9.0, 3000.0], "sm__cycles_elapsed.avg.per_second": [1.5e9, 1.5e9],
    })
    c = counting.count(m, _cc(2, "9.0")).columns
    assert c["dram_bytes"].tolist() == [120.0, 6.0]
    assert c["time_s"].tolist() == pytest.approx([2e-6, 2e-6])  # duration first, cycles/clock where it is n/a
    assert c["sm_clock_hz"].tolist() == [1.5e9, 1.5e9]


def test_tensor_ops_paths_on_ampere():
    m = pd.DataFrame({
        f"{OPS}fp16_dst_fp32.sum": [4096.0, 0.0, 0.0],
        f"{OPS}fp16_dst_fp16.sum": [1024.0, 0.0, 0.0],
        f"{OPS}bf16_dst_fp32.sum": [0.0, 8192.0, 0.0],
        f"{OPS}tf32_dst_fp32.sum": [10.0, 0.0, 0.0],
        "sm__inst_executed_pipe_tensor.sum": [3.0, 2.0, 0.0],
    })
    out = counting.count(m, _cc(3, "8.0"))
    assert out.columns["tensor_flops"].tolist() == [5130.0, 8192.0, 0.0]
    assert list(out.columns["tensor_precision"]) == ["fp16", "bf16", None]
    assert not any("tensor" in w for w in out.warnings)


def test_per_source_total_is_not_double_counted():
    m = pd.DataFrame({f"{OPS}fp16.sum": [300.0], f"{OPS}fp16_dst_fp32.sum": [200.0], f"{OPS}fp16_dst_fp16.sum": [100.0]})
    assert counting.count(m, _cc(1, "9.0")).columns["tensor_flops"].tolist() == [300.0]


def test_partial_tensor_counters_warn_lower_bound():
    m = pd.DataFrame({f"{OPS}fp16_dst_fp32.sum": [64.0]})
    out = counting.count(m, _cc(1, "8.6"))
    assert out.columns["tensor_flops"].tolist() == [64.0]
    assert any("lower bound" in w and f"{OPS}fp16_dst_fp16.sum" in w for w in out.warnings)


@pytest.mark.parametrize("cc", ["7.5", "8.0", "10.0", None])
def test_instruction_counts_only_are_unknown_unless_zero(cc):
    # (SM 10.x: the tcgen05 pipe's count too; the idle tensor pipe alone proves nothing there)
    m = pd.DataFrame({"sm__inst_executed_pipe_tensor.sum": [0.0, 5.0], "sm__inst_executed_pipe_tc.sum": [0.0, 0.0]})
    out = counting.count(m, _cc(2, cc))
    assert out.columns["tensor_flops"][0] == 0.0
    assert np.isnan(out.columns["tensor_flops"][1])
    assert sum("tensor_flops unknown for 1 launch" in w for w in out.warnings) == 1


#: The tcgen05 pipe's utilization as a real B200 export holds it (tests/data/ncu/b200_sdpa_flash).
TC_PCT = "sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"


def test_blackwell_tcgen05_pipe_decides_whether_zero_counted_tensor_work_is_zero():
    """SM 10.0: the collected types (here BF16 and the Hopper FP8 name) count 0 and the tensor pipe ran
    nothing. Launch 0: the tcgen05 pipe idle (0 %), so 0 FLOPs. Launch 1: it was busy 37.5 % (an MMA
    in a type not collected, FP8/FP6/FP4 of tcgen05): unknown, not 0. Launch 2: BF16 counted, kept."""
    m = pd.DataFrame({f"{OPS}bf16_dst_fp32.sum": [0.0, 0.0, 4096.0], f"{OPS}fp8.sum": [0.0, 0.0, 0.0],
                      "sm__inst_executed_pipe_tensor.sum": [0.0, 0.0, 0.0], TC_PCT: [0.0, 37.5, 12.0]})
    out = counting.count(m, _cc(3, "10.0"))
    t = out.columns["tensor_flops"]
    assert t[0] == 0.0 and np.isnan(t[1]) and t[2] == 4096.0
    assert any("tensor_flops unknown for 1 launch on SM 10.0: they executed tensor instructions" in w for w in out.warnings)
    # the same counters on Hopper: no tc pipe there, the tensor pipe's 0 stands
    # a busy cycle utilization wins over an instruction rate printed as 0 (two decimals)
    both = m.assign(**{"sm__inst_executed_pipe_tc.avg.pct_of_peak_sustained_active": [0.0, 0.0, 0.0]})
    assert np.isnan(counting.count(both, _cc(3, "10.0")).columns["tensor_flops"][1])
    hopper = counting.count(m.drop(columns=[TC_PCT]), _cc(3, "9.0")).columns["tensor_flops"]
    assert hopper.tolist() == [0.0, 0.0, 4096.0]


def test_blackwell_without_the_tc_pipe_zero_counted_tensor_work_is_unknown():
    """Without any tcgen05-pipe metric an SM 10.0 launch that counts 0 tensor work may have run a
    tcgen05 MMA in a type not collected: unknown, with the metric that settles it."""
    m = pd.DataFrame({f"{OPS}bf16_dst_fp32.sum": [0.0, 4096.0], "sm__inst_executed_pipe_tensor.sum": [0.0, 0.0]})
    out = counting.count(m, _cc(2, "10.0"))
    assert np.isnan(out.columns["tensor_flops"][0]) and out.columns["tensor_flops"][1] == 4096.0
    (w,) = [w for w in out.warnings if "tcgen05" in w]
    assert "1 launch on SM 10.0" in w and "sm__inst_executed_pipe_tc.sum" in w
    # the tensor pipe's count alone: the same for the launch without it
    inst = counting.count(pd.DataFrame({"sm__inst_executed_pipe_tensor.sum": [0.0]}), _cc(1, "10.0"))
    assert np.isnan(inst.columns["tensor_flops"][0])
    assert [w for w in inst.warnings if "tcgen05" in w and "sm__inst_executed_pipe_tc.sum" in w]
    assert not [w for w in inst.warnings if "instruction shape" in w]


def test_volta_512_per_instruction():
    m = pd.DataFrame({"sm__inst_executed_pipe_tensor.sum": [0.0, 33_554_432_000.0]})
    out = counting.count(m, _cc(2, "7.0"))
    assert out.columns["tensor_flops"].tolist() == [0.0, 2 * 20480.0**3]


def test_mixed_architectures_in_one_table():
    m = pd.DataFrame({"sm__inst_executed_pipe_tensor.sum": [1.0, 1.0], f"{OPS}fp16_dst_fp32.sum": [np.nan, 4096.0]})
    out = counting.count(m, pd.Series(["7.0", "8.0"], dtype="string"))
    assert out.columns["tensor_flops"].tolist() == [512.0, 4096.0]


def test_unknown_architecture_is_read_with_the_general_formulas():
    """SM 12.0 (RTX 50) or anything newer: time, bytes, FP32 and ops-path tensor FLOPs come out;
    only FLOPs per tensor instruction (no ops counters) are unknown, with a warning that says why."""
    m = pd.DataFrame({"gpu__time_duration.sum": [2e-6, 1e-6], "dram__bytes.sum": [64.0, 32.0],
                      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": [10.0, 0.0],
                      "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": [0.0, 0.0],
                      "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": [0.0, 0.0],
                      f"{OPS}bf16_dst_fp32.sum": [4096.0, 0.0],
                      "sm__inst_executed_pipe_tensor.sum": [2.0, 0.0]})
    c = counting.count(m, _cc(2, "12.0")).columns
    assert c["time_s"].tolist() == [2e-6, 1e-6]
    assert c["dram_bytes"].tolist() == [64.0, 32.0]
    assert c["fp32_flops"].tolist() == [20.0, 0.0]
    assert c["tensor_flops"].tolist() == [4096.0, 0.0]
    out = counting.count(m.drop(columns=[f"{OPS}bf16_dst_fp32.sum"]), _cc(2, "12.0"))
    assert np.isnan(out.columns["tensor_flops"][0]) and out.columns["tensor_flops"][1] == 0.0
    assert any("SM 12.0 is not in the formula table" in w for w in out.warnings)


def test_rates_times_cycles_as_the_roofline_sections_do():
    """--set full holds rates only: X.sum.per_cycle_elapsed x <unit>__cycles_elapsed.avg, else x the
    unit's clock x time; X.sum.per_second x time; derived__smsp_..._x2 / 2 x smsp cycles."""
    m = pd.DataFrame({
        "gpu__time_duration.sum": [1e-3],
        "smsp__cycles_elapsed.avg.per_second": [1.5e9],  # 1.5e6 cycles in 1 ms
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": [2.0],
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": [4.0],
        "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2": [6.0],  # 3 FFMA per cycle
        "derived__smsp__sass_thread_inst_executed_op_hfma_pred_on_x4": [8.0],  # 2 HFMA per cycle (2025+)
        "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum.per_cycle_elapsed": [0.0],
        "derived__smsp__sass_thread_inst_executed_op_hmul_pred_on_x2": [0.0],
        "dram__bytes.sum.per_second": [2e12],
        "lts__t_sectors.sum": [1000.0],
        "l1tex__t_sectors.sum.per_cycle_elapsed": [10.0],
        "l1tex__cycles_elapsed.avg": [2e6],
    })
    c = counting.count(m, _cc(1, "9.0")).columns
    cycles = 1.5e6
    assert c["fp32_flops"][0] == pytest.approx((2 + 4 + 2 * 3) * cycles, rel=1e-12)
    assert c["fp16_flops"][0] == pytest.approx(4 * 2 * cycles, rel=1e-12)
    assert counting.count(m, _cc(1, "9.0"), fp16="paper").columns["fp16_flops"][0] == pytest.approx(2 * 2 * cycles)
    assert c["dram_bytes"][0] == pytest.approx(2e9, rel=1e-12)
    assert c["l2_bytes"][0] == 32_000.0
    assert c["l1_bytes"][0] == pytest.approx(32 * 10 * 2e6)
    # the exact total wins over its rate; a smsp__cycles_elapsed.avg count wins over clock x time
    m2 = m.assign(**{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": [7.0], "smsp__cycles_elapsed.avg": [1e6]})
    c2 = counting.count(m2, _cc(1, "9.0")).columns
    assert c2["fp32_flops"][0] == pytest.approx(7 + (4 + 2 * 3) * 1e6)


_SASS = "smsp__sass_thread_inst_executed_op_"
#: FP32 thread instructions of two launches: scalar (fadd, fmul, ffma) and packed (fadd2, fmul2, ffma2).
_FP32 = {"fadd": [1.0, 0.0], "fmul": [2.0, 0.0], "ffma": [3.0, 100.0]}
_PACKED = {"fadd2": [5.0, 0.0], "fmul2": [7.0, 0.0], "ffma2": [11.0, 0.0]}


def _fp32_metrics(ops: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame({f"{_SASS}{op}_pred_on.sum": v for op, v in ops.items()})


def test_packed_fp32_on_blackwell():
    """SM 10.0/10.3 (B200, B300): FADD2/FMUL2 work on two FP32 lanes, FFMA2 is two FMAs, as Nsight
    Compute 2025's FP32 roofline counts them (fadd2_x2, fmul2_x2, ffma2_x4). By hand, launch 0:
    1 + 2 + 2*3 + 2*5 + 2*7 + 4*11 = 77; launch 1: 2*100 = 200."""
    m = _fp32_metrics({**_FP32, **_PACKED})
    for cc in ("10.0", "10.3"):
        out = counting.count(m, _cc(2, cc))
        assert out.columns["fp32_flops"].tolist() == [77.0, 200.0]
        assert not [w for w in out.warnings if "fp32_flops" in w]
    # --set full: the roofline section's derived rates per smsp cycle (x2 for FADD2, x4 for FFMA2)
    rates = pd.DataFrame({"smsp__cycles_elapsed.avg": [1000.0],
                          f"{_SASS}fadd_pred_on.sum.per_cycle_elapsed": [0.5],
                          f"{_SASS}fmul_pred_on.sum.per_cycle_elapsed": [0.0],
                          f"derived__{_SASS}ffma_pred_on_x2": [2.0],  # 1 FFMA per cycle
                          f"derived__{_SASS}fadd2_pred_on_x2": [1.0],  # 0.5 FADD2 per cycle
                          f"derived__{_SASS}fmul2_pred_on_x2": [0.0],
                          f"derived__{_SASS}ffma2_pred_on_x4": [6.0]})  # 1.5 FFMA2 per cycle
    c = counting.count(rates, _cc(1, "10.0")).columns
    assert c["fp32_flops"][0] == pytest.approx((0.5 + 2.0 + 1.0 + 6.0) * 1000.0, rel=1e-12)


def test_blackwell_without_packed_counters_is_a_lower_bound():
    """The scalar counters alone (the paper's metric list) on a B200: the FP32 count stands, and the
    user is told it may be low and which metrics complete it; on a Hopper launch nothing is said
    (no chip before Blackwell has these counters: ncu 2024.1.1 --query-metrics, gv100 to gh100)."""
    m = _fp32_metrics(_FP32)
    out = counting.count(m, pd.Series(["9.0", "10.0"], dtype="string"))
    assert out.columns["fp32_flops"].tolist() == [9.0, 200.0]
    (warning,) = [w for w in out.warnings if "fp32_flops" in w]
    assert "lower bound for 1 launch on SM 10.0" in warning
    for op in ("fadd2", "fmul2", "ffma2"):
        assert f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" in warning
    assert not [w for w in counting.count(m, _cc(2, "9.0")).warnings if "fp32_flops" in w]
    assert not [w for w in counting.count(m, _cc(2, None)).warnings if "fp32_flops" in w]
    # FFMA2 collected, FADD2/FMUL2 not: the known part is added, the rest named
    partial = counting.count(_fp32_metrics({**_FP32, "ffma2": [11.0, 0.0]}), _cc(2, "10.0"))
    assert partial.columns["fp32_flops"].tolist() == [9.0 + 44.0, 200.0]
    (warning,) = [w for w in partial.warnings if "fp32_flops" in w]
    assert "2 launches" in warning and "ffma2" not in warning and "fadd2" in warning
    # no FP32 counter at all on a B200: unknown, and the hint names the packed counters too
    none = counting.count(pd.DataFrame({"gpu__time_duration.sum": [1e-6]}), _cc(1, "10.0"))
    assert np.isnan(none.columns["fp32_flops"][0])
    (hint,) = [w for w in none.warnings if w.startswith("fp32_flops unknown")]
    assert "ffma_pred_on" in hint and "ffma2_pred_on" in hint


def test_packed_fp32_counted_wherever_collected():
    """An SM outside the table's packed-FP32 list (SM 12.0) with packed counts in its profile: they
    count (0 is added where a launch has none); no warning where they were not collected."""
    m = _fp32_metrics({**_FP32, "ffma2": [1.0, np.nan]})
    assert counting.count(m, _cc(2, "12.0")).columns["fp32_flops"].tolist() == [13.0, 200.0]


def test_real_b200_export_without_flop_counters_names_the_packed_ones():
    """The real B200 raw page (ncu 2025.x, CC 10.0, no FLOP counter): FP32 is unknown, and the hint
    that would make it known includes FADD2/FMUL2/FFMA2."""
    from pathlib import Path

    from roofline.readers import read_profile

    b200 = Path(__file__).parent / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
    t = read_profile(b200)
    assert set(t.frame["compute_capability"]) == {"10.0"} and "fp32_flops" not in t.frame.columns  # known-missing
    (hint,) = [w for w in t.warnings if "fp32_flops unknown" in w]
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in hint
    assert "sm__sass_thread_inst_executed_op_ffma2_pred_on.sum" in hint
    # no tensor counter at all (its tcgen05 pipe is 0 %, its tensor pipe busy 65.93 %): unknown, and
    # the hint names both pipes' instruction counts
    assert "tensor_flops" not in t.frame.columns  # unknown throughout: left out (known-missing)
    assert any("tensor_flops unknown: metrics not collected: sm__inst_executed_pipe_tensor.sum, "
               "sm__inst_executed_pipe_tc.sum," in w for w in t.warnings)


def test_packed_fp32_metrics_requested_on_blackwell_only():
    from roofline.profiling.metricsets import metric_set

    packed = [f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd2", "fmul2", "ffma2")]
    for cc in ("10.0", "10.3"):
        assert all(p in counting.required_metrics(cc) for p in packed)
    assert all(p in metric_set("10.3") for p in packed)  # B300 collects with the 10.0 set
    assert "sm__inst_executed_pipe_tc.sum" in metric_set("10.0")  # the tcgen05 pipe
    assert "sm__inst_executed_pipe_tc.sum" not in metric_set("9.0") + metric_set("12.0")
    for cc in ("7.0", "8.0", "8.9", "9.0", "12.0"):
        assert not [p for p in packed if p in metric_set(cc)]


def test_time_from_avg_and_from_speed_of_light_cycles():
    m = pd.DataFrame({"gpu__time_duration.avg": [3e-6, np.nan], "gpc__cycles_elapsed.max": [np.nan, 2000.0],
                      "gpc__cycles_elapsed.avg.per_second": [np.nan, 1e9]})
    c = counting.count(m, _cc(2, "9.0")).columns
    assert c["time_s"].tolist() == [3e-6, 2e-6]
    assert np.isnan(c["sm_clock_hz"][0]) and c["sm_clock_hz"][1] == 1e9


def test_hopper_per_kind_tensor_counters_and_no_double_count():
    k = "sm__ops_path_tensor_op_"
    m = pd.DataFrame({
        f"{k}hgmma_src_bf16_dst_fp32_sparsity_off.sum": [1000.0, 0.0, 0.0],
        f"{k}hmma_src_bf16_dst_fp32_sparsity_off.sum": [24.0, 0.0, 0.0],
        f"{k}hgmma_src_fp16_sparsity_off.sum": [0.0, 512.0, 0.0],
        "sm__inst_executed_pipe_tensor.sum": [10.0, 3.0, 0.0],
    })
    out = counting.count(m, _cc(3, "9.0"))
    assert out.columns["tensor_flops"].tolist() == [1024.0, 512.0, 0.0]
    assert list(out.columns["tensor_precision"]) == ["bf16", "fp16", None]
    # with the per-type total present too, the total is used and the kinds are not added to it
    both = m.assign(**{f"{OPS}bf16_dst_fp32.sum": [1024.0, 0.0, 0.0]})
    assert counting.count(both, _cc(3, "9.0")).columns["tensor_flops"].tolist() == [1024.0, 512.0, 0.0]


def test_tensor_work_of_a_type_not_collected_is_unknown_not_zero():
    m = pd.DataFrame({f"{OPS}bf16_dst_fp32.sum": [64.0, 0.0, 0.0], "sm__inst_executed_pipe_tensor.sum": [1.0, 4.0, 0.0]})
    out = counting.count(m, _cc(3, "9.0"))
    t = out.columns["tensor_flops"]
    assert t[0] == 64.0 and np.isnan(t[1]) and t[2] == 0.0
    assert any("tensor_flops unknown for 1 launch" in w and "fp8" in w for w in out.warnings)


def test_bad_fp16_convention():
    with pytest.raises(ValueError):
        counting.count(pd.DataFrame({"dram__bytes.sum": [1.0]}), _cc(1, "8.0"), fp16="half")


@pytest.mark.parametrize("unit,factor", [
    ("nsecond", 1e-9), ("ns", 1e-9), ("usecond", 1e-6), ("us", 1e-6), ("msecond", 1e-3), ("ms", 1e-3),
    ("second", 1.0), ("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("cycle/second", 1.0),
    ("cycle/nsecond", 1e9), ("cycle/usecond", 1e6), ("Gbyte/second", 1e9), ("%", 1.0), ("inst", 1.0),
    ("inst/cycle", 1.0), ("Ghz", 1e9), ("byte/block", 1.0), ("register/thread", 1.0),
])
def test_ncu_units_to_si(unit, factor):
    assert si_factor(unit) == pytest.approx(factor, rel=1e-15)


def test_integer_tensor_work_is_its_own_column():
    """INT8 (and INT4) tensor operations go to tensor_int_ops, not tensor_flops; tensor_precision names
    the dominant floating-point type, or the integer type when a launch's only tensor work is integer."""
    m = pd.DataFrame({
        f"{OPS}fp16_dst_fp32.sum": [4096.0, 0.0, 0.0, 0.0],
        f"{OPS}int8.sum": [8192.0, 2048.0, 0.0, 0.0],
        f"{OPS}int4.sum": [0.0, 1024.0, 512.0, 0.0],
        "sm__inst_executed_pipe_tensor.sum": [6.0, 2.0, 1.0, 0.0],
    })
    out = counting.count(m, _cc(4, "8.6"))
    assert out.columns["tensor_flops"].tolist() == [4096.0, 0.0, 0.0, 0.0]
    assert out.columns["tensor_int_ops"].tolist() == [8192.0, 2048 + 1024.0, 512.0, 0.0]
    # launch 0 did more INT8 than FP16 work, but the precision names the floating-point type
    assert list(out.columns["tensor_precision"]) == ["fp16", "int8", "int4", None]
    # Hopper's IGMMA/IMMA counters are integer work too
    k = "sm__ops_path_tensor_op_"
    h = pd.DataFrame({f"{k}igmma_src_int8.sum": [1000.0], f"{k}imma_src_int8.sum": [24.0],
                      f"{OPS}fp16.sum": [0.0], "sm__inst_executed_pipe_tensor.sum": [3.0]})
    out = counting.count(h, _cc(1, "9.0"))
    assert out.columns["tensor_int_ops"].tolist() == [1024.0] and out.columns["tensor_flops"].tolist() == [0.0]
    assert list(out.columns["tensor_precision"]) == ["int8"]


def test_integer_tensor_work_not_collected_is_a_hint_not_a_warning():
    """FP16 tensor counters only: integer tensor work is 0 where no tensor instruction ran, unknown
    where one did (the FP16 count does not say whether INT8 work ran too), named in missing_hints."""
    m = pd.DataFrame({f"{OPS}fp16_dst_fp32.sum": [4096.0, 0.0], f"{OPS}fp16_dst_fp16.sum": [0.0, 0.0],
                      f"{OPS}bf16_dst_fp32.sum": [0.0, 0.0], f"{OPS}tf32_dst_fp32.sum": [0.0, 0.0],
                      "sm__inst_executed_pipe_tensor.sum": [2.0, 0.0]})
    out = counting.count(m, _cc(2, "8.6"))
    assert out.columns["tensor_flops"].tolist() == [4096.0, 0.0]
    t = out.columns["tensor_int_ops"]
    assert np.isnan(t[0]) and t[1] == 0.0
    assert out.missing_hints["tensor_int_ops"] == [f"{OPS}int8.sum", f"{OPS}int4.sum"]
    assert not any("tensor_int_ops" in w or "int8" in w for w in out.warnings)
    # V100 (no ops counters, every tensor instruction an FP16 HMMA): no integer tensor work
    v = counting.count(pd.DataFrame({"sm__inst_executed_pipe_tensor.sum": [0.0, 5.0]}), _cc(2, "7.0"))
    assert v.columns["tensor_int_ops"].tolist() == [0.0, 0.0] and "tensor_int_ops" not in v.missing_hints


def test_int4_counters_only_where_the_chip_has_them():
    """ncu 2024.1.1 --query-metrics: sm__ops_path_tensor_src_int4 on tu102, ga100, ga102, ad102; not gh100, gv100."""
    for cc in ("7.5", "8.0", "8.6", "8.9"):
        assert f"{OPS}int4.sum" in counting.required_metrics(cc) and f"{OPS}int8.sum" in counting.required_metrics(cc)
    for cc in ("7.0", "9.0"):
        assert f"{OPS}int4.sum" not in counting.required_metrics(cc)


#: A B300 (SM 10.3, Nsight Compute 2025.4.0) report, github.com/NVIDIA/DCGM/issues/251 (comment of
#: 2026-07-06): 4096^3 GEMMs through torch._scaled_mm; each counter reads 137,438,953,472 = 2MNK exactly
#: for its GEMM (FP8 nvjet_sm103_qqtst..., NVFP4 nvjet_sm103_ootst...), the other's counters 0.
B300_GEMM_FLOPS = 137_438_953_472
KIND = "sm__ops_path_tensor_op_"


def test_blackwell_fp8_and_fp4_datapaths_count_2mnk_as_the_b300_report_reads():
    assert B300_GEMM_FLOPS == 2 * 4096 ** 3
    m = pd.DataFrame({f"{KIND}utcqmma_src_fp8_dst_fp32.sum": [float(B300_GEMM_FLOPS), 0.0],
                      f"{KIND}utcqmma_src_fp8_dst_fp16.sum": [0.0, 0.0],
                      f"{KIND}utcomma_src_fp4_dst_fp32.sum": [0.0, float(B300_GEMM_FLOPS)],
                      "sm__inst_executed_pipe_tc.sum": [8192.0, 4096.0]})
    out = counting.count(m, _cc(2, "10.3"))
    assert out.columns["tensor_flops"].tolist() == [B300_GEMM_FLOPS, B300_GEMM_FLOPS]
    assert list(out.columns["tensor_precision"]) == ["fp8", "fp4"]  # each its own ceiling: FP4 runs at 2x
    assert not [w for w in out.warnings if "tensor" in w and "lower bound" not in w]


def test_jetson_thor_sm_11_counts_tcgen05_work_as_sm_10_does():
    """The B300 report's NVFP4 GEMM counters read as if from a Jetson Thor (SM 11.0, tcgen05): 2MNK of fp4.
    A Thor launch that counts no tensor work with its tcgen05 pipe unknown is unknown, not 0 (as on SM 10.x)."""
    m = pd.DataFrame({f"{KIND}utcomma_src_fp4_dst_fp32.sum": [float(B300_GEMM_FLOPS)], "sm__inst_executed_pipe_tc.sum": [4096.0]})
    out = counting.count(m, _cc(1, "11.0"))
    assert out.columns["tensor_flops"].tolist() == [B300_GEMM_FLOPS] and list(out.columns["tensor_precision"]) == ["fp4"]
    idle_unknown = counting.count(pd.DataFrame({f"{OPS}bf16_dst_fp32.sum": [0.0]}), _cc(1, "11.0"))
    assert np.isnan(idle_unknown.columns["tensor_flops"][0])
    assert any("1 launch on SM 11.0" in w and "sm__inst_executed_pipe_tc.sum" in w for w in idle_unknown.warnings)
    assert {f"{OPS}fp4_fp6_fp8_dst_fp32.sum", f"{OPS}fp4_dst_fp32.sum", "sm__inst_executed_pipe_tc.sum"} <= set(
        counting.required_metrics("11.0"))


def test_blackwell_datapath_totals_are_taken_once():
    """SM 10.0: the 8-bit datapath's total (src_fp4_fp6_fp8, both accumulator types) is read, never added
    to a narrower FP8 name or the tcgen05 kinds present beside it; the FP4 datapath is its own type."""
    m = pd.DataFrame({f"{OPS}fp4_fp6_fp8_dst_fp32.sum": [1000.0], f"{OPS}fp4_fp6_fp8_dst_fp16.sum": [24.0],
                      f"{OPS}fp8.sum": [900.0], f"{KIND}utcqmma_src_fp4_fp6_fp8_dst_fp32.sum": [1000.0],
                      f"{OPS}fp4_dst_fp32.sum": [4096.0], f"{KIND}utcomma_src_fp4_dst_fp32.sum": [4096.0],
                      "sm__inst_executed_pipe_tc.sum": [9.0]})
    out = counting.count(m, _cc(1, "10.0"))
    assert out.columns["tensor_flops"].tolist() == [1024.0 + 4096.0]
    assert list(out.columns["tensor_precision"]) == ["fp4"]
    # only one accumulator type collected: counted, and said to be a lower bound
    part = counting.count(m[[f"{OPS}fp4_fp6_fp8_dst_fp32.sum", "sm__inst_executed_pipe_tc.sum"]], _cc(1, "10.0"))
    assert part.columns["tensor_flops"].tolist() == [1000.0]
    assert any("tensor fp8 FLOPs may be a lower bound" in w and "fp4_fp6_fp8_dst_fp16" in w for w in part.warnings)
    # on Hopper the FP8 total is what it was
    assert counting.count(pd.DataFrame({f"{OPS}fp8.sum": [900.0]}), _cc(1, "9.0")).columns["tensor_flops"].tolist() == [900.0]


def test_blackwell_tensor_counters_requested():
    for cc in ("10.0", "12.0"):
        names = counting.required_metrics(cc)
        for m in (f"{OPS}fp4_fp6_fp8_dst_fp16.sum", f"{OPS}fp4_fp6_fp8_dst_fp32.sum", f"{OPS}fp4_dst_fp32.sum",
                  f"{OPS}fp16.sum", f"{OPS}fp16_dst_fp32.sum", f"{OPS}bf16_dst_fp32.sum"):
            assert m in names, (cc, m)
    assert not [m for m in counting.required_metrics("9.0") if "fp4" in m or "fp16_dst" in m]


def test_an_fp4_gemm_is_held_to_the_fp4_ceiling_not_the_fp8_one():
    """The B300 report's NVFP4 GEMM, counted, then analyzed on B200's spec at an assumed 20 us (the report
    gives no time): 6.87 PFLOP/s, 76 % of B200's 9 PFLOP/s dense FP4; held to the 4.5 PFLOP/s 8-bit ceiling
    it would read 153 %."""
    from roofline.analysis import analyze
    from roofline.kernels import from_records
    from roofline.machine.specs import get_spec
    from roofline.machine.theoretical import theoretical_from_spec

    m = pd.DataFrame({f"{KIND}utcomma_src_fp4_dst_fp32.sum": [float(B300_GEMM_FLOPS)], "sm__inst_executed_pipe_tc.sum": [1.0]})
    counted = counting.count(m, _cc(1, "10.3")).columns
    b200 = theoretical_from_spec(get_spec("b200"))
    assert b200.compute["tensor_fp4"] == pytest.approx(2 * b200.compute["tensor_fp8"]) == pytest.approx(9.0e15, rel=1e-3)
    ab_c = 2 * 4096 * 4096 // 2 + 4096 * 4096 * 2  # FP4 A and B (half a byte each), BF16 C
    # at the 1856 MHz tensor clock its 9 PFLOP/s are quoted at (148 SMs x 32768 FLOP/clk x 1856 MHz)
    row = {"kernel_name": "nvjet_sm103_ootst", "time_s": 20e-6, "sm_clock_hz": 1856e6, "dram_bytes": float(ab_c),
           "tensor_flops": counted["tensor_flops"][0], "tensor_precision": counted["tensor_precision"][0]}
    r = analyze(from_records([row]), b200).frame.iloc[0]
    assert r["bound"] == "tensor_fp4"
    assert r["pct_of_roofline"] == pytest.approx(B300_GEMM_FLOPS / 20e-6 / b200.compute["tensor_fp4"])
    assert 0.76 < r["pct_of_roofline"] < 0.77
    # at the 1965 MHz SM clock the same per-clock rate gives 1965 / 1856 more
    row["sm_clock_hz"] = 1965e6
    r = analyze(from_records([row]), b200).frame.iloc[0]
    assert r["pct_of_roofline"] == pytest.approx(B300_GEMM_FLOPS / 20e-6 / (b200.compute["tensor_fp4"] * 1965 / 1856))

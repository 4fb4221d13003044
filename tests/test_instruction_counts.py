"""The formula table beyond FLOPs (roofline.counting.instructions): operations, warp instructions,
load/store instructions, transactions per level and shared-memory bytes.

Synthetic tables check every formula in every form ncu writes (the total, its per-cycle rate x the
unit's elapsed cycles, its per-second rate x the launch's time), the fallbacks, local memory as an
optional part, and that a FLOP/byte profile is not warned about these columns. Real public
``--set full`` reports (tests/data/ncu/*/PROVENANCE.md) are checked against numbers read by hand
from their raw pages (``ncu --import R --page raw --csv``).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline import counting
from roofline.counting.instructions import HINTED_COLUMNS, LOCAL_PARTS
from roofline.kernels import COLUMN_NAMES

DATA = Path(__file__).parent / "data" / "ncu"


def _cc(n: int, cc: str | None = "8.0") -> pd.Series:
    return pd.Series([cc] * n, dtype="string")


def _count(metrics: dict, n: int = 2, cc: str | None = "8.0") -> counting.Counted:
    return counting.count(pd.DataFrame(metrics), _cc(n, cc))


S = "smsp__sass_inst_executed_op_"
W = "l1tex__data_pipe_lsu_wavefronts_mem_shared"
SEC = "l1tex__t_sectors_pipe_lsu_mem_"

#: The instruction classes beyond LD/ST, with the traffic they are paired with (the SASS counts first).
LDGSTS, WF_LDGSTS = f"{S}ldgsts.sum", "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"

#: column -> (weight, the preferred alternative's total) pairs: column = sum of weight x total.
PREFERRED = {
    "int_ops": [(1, "sm__sass_thread_inst_executed_op_integer_pred_on.sum")],
    "conversion_ops": [(1, "sm__sass_thread_inst_executed_op_conversion_pred_on.sum")],
    "sfu_ops": [(1, "smsp__thread_inst_executed_pipe_xu_pred_on.sum")],
    "warp_inst": [(1, "smsp__inst_executed.sum")],
    "global_inst": [(1, f"{S}global_ld.sum"), (1, f"{S}global_st.sum"), (1, f"{S}local_ld.sum"), (1, f"{S}local_st.sum"),
                    (1, LDGSTS), (1, f"{S}global_atom.sum"), (1, f"{S}global_red.sum")],
    "shared_inst": [(1, f"{S}shared_ld.sum"), (1, f"{S}shared_st.sum"), (1, f"{S}ldsm.sum"), (1, f"{S}shared_stsm.sum"),
                    (1, f"{S}shared_atom.sum"), (1, LDGSTS)],
    "l1_transactions": [(1, f"{SEC}global_op_ld.sum"), (1, f"{SEC}global_op_st.sum"), (1, f"{SEC}local_op_ld.sum"),
                        (1, f"{SEC}local_op_st.sum"), (1, f"{SEC}global_op_atom.sum"), (1, f"{SEC}global_op_red.sum")],
    "shared_transactions": [(1, f"{W}_op_ld.sum"), (1, f"{W}_op_st.sum"), (1, f"{W}_op_atom.sum"), (1, WF_LDGSTS)],
    "shared_bytes": [(128, "sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum")],
    "tma_inst": [(1, f"{S}tma.sum")],
    "gmma_inst": [(1, f"{S}shared_gmma.sum")],
    "l2_transactions": [(1, "lts__t_sectors.sum")],
    "dram_transactions": [(1, "dram__sectors_read.sum"), (1, "dram__sectors_write.sum")],
}


def test_the_table_covers_the_new_columns():
    columns = {f.column for f in counting.FORMULAS}
    assert set(PREFERRED) <= columns <= set(COLUMN_NAMES)
    assert set(HINTED_COLUMNS) == {*PREFERRED, "tensor_int_ops"}
    for f in counting.FORMULAS:
        if f.column in PREFERRED:  # the test's preferred alternative is the table's
            assert [(w, c.name) for w, c in f.terms] == PREFERRED[f.column], f.column


def _unit(metric: str) -> str:
    return metric.split("__")[0]


@pytest.mark.parametrize("column", list(PREFERRED))
@pytest.mark.parametrize("form", ["total", "per_cycle", "per_second"])
def test_every_formula_in_every_form(column, form):
    """Counts 1000 x (part number) in launch 0 and 3000 x it in launch 1, written as totals, as
    per-cycle rates over 2,000 (launch 0) and 4,000 (launch 1) elapsed cycles of the metric's unit, or
    as per-second rates over 2 us and 4 us; the column is the weighted sum of the parts."""
    parts = PREFERRED[column]
    cycles = np.array([2_000.0, 4_000.0])
    time = np.array([2e-6, 4e-6])
    metrics: dict[str, np.ndarray] = {"gpu__time_duration.sum": time}
    expected = np.zeros(2)
    for k, (weight, name) in enumerate(parts, start=1):
        counts = np.array([1000.0 * k, 3000.0 * k])
        expected += weight * counts
        if form == "total":
            metrics[name] = counts
        elif form == "per_cycle":
            metrics[f"{name}.per_cycle_elapsed"] = counts / cycles
            metrics[f"{_unit(name)}__cycles_elapsed.avg"] = cycles
        else:
            metrics[f"{name}.per_second"] = counts / time
    out = _count(metrics, cc="9.0")  # Hopper: every instruction class of the table exists there
    # e.g. warp_inst: 1000 and 3000; dram_transactions: 1000 + 2000 = 3000 and 3 x that = 9000
    np.testing.assert_allclose(out.columns[column], expected, rtol=1e-12)
    assert column not in out.missing_hints and column not in out.lower_bounds


def test_per_cycle_rate_on_the_sm_clock_when_cycles_were_not_collected():
    """--set full writes sm__inst_executed.sum.per_cycle_elapsed: x SM cycles, or x the SM clock x time."""
    out = _count({"sm__inst_executed.sum.per_cycle_elapsed": [170.0, 456.0], "gpu__time_duration.sum": [1e-3, 2e-3],
                  "sm__cycles_elapsed.avg.per_second": [1.1e9, 1.0e9]})
    # 170 x 1.1e9 x 1e-3 = 187,000,000; 456 x 1e9 x 2e-3 = 912,000,000
    np.testing.assert_allclose(out.columns["warp_inst"], [187e6, 912e6], rtol=1e-12)


def test_fallbacks_in_order():
    m = {
        # global: hardware counters (no SASS), L1 requests as the last resort
        "smsp__inst_executed_op_global_ld.sum": [10.0, np.nan], "smsp__inst_executed_op_global_st.sum": [1.0, np.nan],
        "smsp__inst_executed_op_local_ld.sum": [2.0, np.nan], "smsp__inst_executed_op_local_st.sum": [3.0, np.nan],
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": [99.0, 20.0],
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": [99.0, 5.0],
        "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum": [99.0, 0.0],
        "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum": [99.0, 1.0],
        "smsp__inst_executed_op_shared_ld.sum": [7.0, 8.0], "smsp__inst_executed_op_shared_st.sum": [1.0, 0.0],
        f"{W}_op_ld.sum": [4.0, np.nan], f"{W}_op_st.sum": [2.0, np.nan], f"{W}_op_atom.sum": [1.0, np.nan],
        WF_LDGSTS: [3.0, np.nan],
        f"{W}.sum": [999.0, 999.0],  # the data stage's total, Misc wavefronts and all: never read as bytes
        "sm__sass_data_bytes_mem_shared.sum": [1.0, 96.0],
        "lts__t_bytes.sum": [3200.0, 64.0],
        "dram__sectors.sum": [5.0, np.nan], "dram__bytes.sum": [999.0, 320.0],
    }
    out = _count(m)
    c = out.columns
    # LD/ST only: LDGSTS, atomics and reductions not collected, a lower bound (the requests of the second
    # launch likewise: neither alternative is complete)
    assert c["global_inst"].tolist() == [10 + 1 + 2 + 3, 20 + 5 + 0 + 1]
    assert out.lower_bounds["global_inst"] == [  # each class named by its preferred (SASS) counter
        LDGSTS, f"{S}global_atom.sum", f"{S}global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"]
    assert c["shared_inst"].tolist() == [8.0, 8.0]
    # wavefronts of LDS + STS, atomics and LDGSTS x 128 B (SM 8.0: no warpgroup MMA), else the bytes asked for
    assert c["shared_bytes"].tolist() == [128 * (4 + 2 + 1 + 3.0), 96.0]
    assert c["l2_transactions"].tolist() == [3200 / 32, 64 / 32]
    assert c["dram_transactions"].tolist() == [5.0, 320 / 32]
    # the SASS count of every shared-memory instruction (LDGSTS and GMMA too) beats the per-operation ones
    m["sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum"] = [0.0, 2.0]
    assert _count(m).columns["shared_bytes"].tolist() == [0.0, 256.0]
    # without the atomics' wavefronts: LDS + STS + LDGSTS, a lower bound where no complete alternative is known
    del m["sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum"], m[f"{W}_op_atom.sum"], m["sm__sass_data_bytes_mem_shared.sum"]
    out = _count(m)
    assert out.columns["shared_bytes"].tolist()[0] == 128 * (4 + 2 + 3) and np.isnan(out.columns["shared_bytes"][1])
    assert out.lower_bounds["shared_bytes"] == [f"{W}_op_atom.sum"]


def test_local_parts_are_optional_and_make_a_lower_bound():
    """Global sectors without local ones: their sum, a lower bound, noted (not warned) with the metrics."""
    m = {f"{SEC}global_op_ld.sum": [8.0, 4.0], f"{SEC}global_op_st.sum": [4.0, 0.0],
         f"{S}global_ld.sum": [1.0, 1.0], f"{S}global_st.sum": [1.0, 0.0]}
    out = _count(m)
    assert out.columns["l1_transactions"].tolist() == [12.0, 4.0]
    assert out.columns["global_inst"].tolist() == [2.0, 1.0]
    sectors_more = [f"{SEC}global_op_atom.sum", f"{SEC}global_op_red.sum"]
    assert out.lower_bounds["l1_transactions"] == [f"{SEC}local_op_ld.sum", f"{SEC}local_op_st.sum", *sectors_more]
    assert out.lower_bounds["global_inst"] == [f"{S}local_ld.sum", f"{S}local_st.sum", LDGSTS, f"{S}global_atom.sum",
                                               f"{S}global_red.sum"]
    assert out.lower_bound_launches["l1_transactions"] == 2
    assert not any("l1_transactions" in w or "global_inst" in w for w in out.warnings)
    named = f"{SEC}local_op_ld.sum, {SEC}local_op_st.sum, {', '.join(sectors_more)}"
    assert out.hints_for(["l1_transactions"]) == [
        f"l1_transactions is a lower bound for 2 launches: {named} not collected; "
        f"collect with: ncu --metrics {named.replace(', ', ',')}"]
    # a complete alternative further down the list beats a lower bound of the preferred one
    complete = {**m, **{f"l1tex__t_requests_pipe_lsu_mem_{s}_op_{o}.sum": [1.0, 2.0] for s in ("global", "local")
                        for o in ("ld", "st")},
                **{f"l1tex__t_requests_pipe_lsu_mem_global_op_{o}.sum": [0.0, 1.0] for o in ("atom", "red")}}
    out = _count(complete)
    assert out.columns["global_inst"].tolist() == [4.0, 10.0] and "global_inst" not in out.lower_bounds
    # collected local, atomic and reduction parts: complete, no note
    full = {**m, f"{SEC}local_op_ld.sum": [0.0, 2.0], f"{SEC}local_op_st.sum": [0.0, 0.0],
            f"{SEC}global_op_atom.sum": [0.0, 0.0], f"{SEC}global_op_red.sum": [32.0, 0.0]}
    out = _count(full)
    assert out.columns["l1_transactions"].tolist() == [44.0, 6.0] and not out.lower_bounds.get("l1_transactions")
    # a part known for one launch only: the other launch's sum is the lower bound
    partial = {**full, f"{SEC}global_op_red.sum": [32.0, np.nan]}
    out = _count(partial)
    assert out.columns["l1_transactions"].tolist() == [44.0, 6.0]
    assert out.lower_bounds["l1_transactions"] == [f"{SEC}global_op_red.sum"]
    assert out.lower_bound_launches["l1_transactions"] == 1
    assert set(LOCAL_PARTS) >= {f"{SEC}local_op_ld.sum", f"{S}local_st.sum"}


def test_a_flop_byte_profile_gets_hints_not_warnings():
    """The paper's metrics only: the new columns are NaN, named in missing_hints, and the warnings
    are exactly the FLOP/byte ones."""
    m = {"gpu__time_duration.sum": [1e-6, 2e-6], "sm__cycles_elapsed.avg.per_second": [1e9, 1e9],
         "dram__bytes.sum": [64.0, 32.0], "lts__t_bytes.sum": [128.0, 64.0], "l1tex__t_bytes.sum": [256.0, 128.0],
         **{f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum": [1.0, 0.0]
            for op in ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")},
         "sm__inst_executed_pipe_tensor.sum": [0.0, 0.0]}
    out = _count(m, cc="7.0")
    assert out.warnings == []
    for column in ("int_ops", "conversion_ops", "sfu_ops", "warp_inst", "global_inst", "shared_inst",
                   "l1_transactions", "shared_transactions", "shared_bytes"):
        assert np.isnan(out.columns[column]).all(), column
        assert column in out.missing_hints, column
    # the L2 and DRAM transactions come from the byte counters: bytes / 32
    assert out.columns["l2_transactions"].tolist() == [4.0, 2.0]
    assert out.columns["dram_transactions"].tolist() == [2.0, 1.0]
    assert out.columns["tensor_int_ops"].tolist() == [0.0, 0.0]  # no tensor instruction ran
    assert out.missing_hints["warp_inst"] == ["smsp__inst_executed.sum"]
    assert out.hints_for(["warp_inst"]) == ["warp_inst unknown: metrics not collected: smsp__inst_executed.sum; "
                                            "collect with: ncu --metrics smsp__inst_executed.sum"]
    # SM 7.0 has no LDGSTS (nor LDSM, STSM): their counters are not named, their counts are 0 there
    assert out.missing_hints["shared_transactions"] == [f"{W}_op_ld.sum", f"{W}_op_st.sum", f"{W}_op_atom.sum"]
    assert out.missing_hints["shared_inst"] == [f"{S}shared_ld.sum", f"{S}shared_st.sum", f"{S}shared_atom.sum"]
    assert out.columns["tma_inst"].tolist() == [0.0, 0.0] and out.columns["gmma_inst"].tolist() == [0.0, 0.0]
    assert out.hints_for(["l2_transactions"]) == []


#: The compute capability from which each instruction class of the table exists (PTX ISA target notes).
SINCE = {LDGSTS: "8.0", WF_LDGSTS: "8.0", f"{S}ldsm.sum": "7.5", f"{S}shared_stsm.sum": "9.0", f"{S}tma.sum": "9.0",
         f"{S}shared_gmma.sum": "9.0"}


def test_required_metrics_hold_the_preferred_alternatives():
    """Each SM gets the counters of the instruction classes it has, never those it lacks (ncu refuses them)."""
    for cc in ("7.0", "7.5", "8.0", "8.6", "8.9", "9.0"):
        names = counting.required_metrics(cc)
        for parts in PREFERRED.values():
            for _, name in parts:
                has = float(cc) >= float(SINCE.get(name, "0"))
                assert (name in names) == has, (cc, name)
    assert f"{S}shared_gmma.sum" not in counting.required_metrics("10.0")  # wgmma is SM 9.0's alone


def test_instruction_classes_an_sm_lacks_count_0_there():
    """LDGSTS on SM 7.5 (Turing has no cp.async): 0 whatever the columns say, so LD/ST alone is complete;
    on SM 8.0 the same profile is a lower bound naming the LDGSTS count."""
    m = {f"{S}global_ld.sum": [4.0], f"{S}global_st.sum": [1.0], f"{S}local_ld.sum": [0.0], f"{S}local_st.sum": [0.0],
         f"{S}global_atom.sum": [0.0], f"{S}global_red.sum": [2.0], LDGSTS: [np.nan]}
    turing = _count(m, n=1, cc="7.5")
    assert turing.columns["global_inst"].tolist() == [7.0] and "global_inst" not in turing.lower_bounds
    ampere = _count(m, n=1, cc="8.0")
    assert ampere.columns["global_inst"].tolist() == [7.0] and ampere.lower_bounds["global_inst"] == [LDGSTS]
    # an unknown architecture: nothing is 0 by definition
    assert _count(m, n=1, cc=None).lower_bounds["global_inst"] == [LDGSTS]


needs_reader = pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None and shutil.which("ncu") is None,
                                  reason="reading .ncu-rep needs the ncu-report wheel or ncu")
H100 = DATA / "h100pcie_setfull_rep_silu_vector" / "2025-04-21-vector-based.ncu-rep"
GH200 = DATA / "gh200_setfull_rep_rms_norm_looping" / "rms_norm_triton_looping.ncu-rep"
T4 = DATA / "t4_setfull_rep" / "matrix_addition2D_t4_setfull.ncu-rep"
GEMM = DATA / "gtx1660s_gemm_rep" / "naive_gemm_1024_gtx1660super.ncu-rep"


def _read(path: Path) -> tuple[pd.DataFrame, tuple[str, ...]]:
    from roofline.readers import read_profile

    from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for

    t = read_profile(path)
    return widened(t.frame), t.warnings


@needs_reader
def test_h100_pcie_set_full_by_hand():
    """silu_kernel_vector on 2^26 floats, float4 loads, 3 launches (raw page of each launch)."""
    f, warnings = _read(H100)
    # smsp__inst_executed.sum 53,477,446 in each launch
    assert f["warp_inst"].tolist() == [53_477_446.0] * 3
    # smsp__sass_inst_executed_op_global_ld.sum 524,288 + _global_st.sum 2,097,152 + local 0 + 0
    assert f["global_inst"].tolist() == [2_621_440.0] * 3
    assert f["shared_inst"].tolist() == [0.0] * 3  # smsp__sass_inst_executed_op_shared_{ld,st}.sum 0
    # l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum 8,388,608 (16 per float4 load instruction)
    # + _op_st.sum 33,551,588 / 33,551,352 / 33,555,496, local 0
    assert f["l1_transactions"].tolist() == [8_388_608 + 33_551_588, 8_388_608 + 33_551_352, 8_388_608 + 33_555_496]
    assert f["shared_transactions"].tolist() == [0.0] * 3  # ..._wavefronts_mem_shared_op_{ld,st}.sum 0
    # no shared-memory wavefront of LDS, STS or ATOMS (..._op_{ld,st,atom}.sum 0), though the data stage's
    # total l1tex__data_pipe_lsu_wavefronts_mem_shared.sum is 524,288: Misc, 1 per warp (16,777,216 threads / 32)
    assert f["shared_bytes"].tolist() == [0.0] * 3
    assert f["l2_transactions"].tolist() == [25_623_330.0, 25_730_564.0, 25_764_473.0]  # lts__t_sectors.sum
    # dram__sectors_read.sum + dram__sectors_write.sum
    assert f["dram_transactions"].tolist() == [8_389_472 + 7_768_832, 8_389_312 + 7_771_592, 8_389_232 + 7_774_552]
    # --set full holds no integer, conversion or XU thread-instruction count: unknown, and not warned about
    for column in ("int_ops", "conversion_ops", "sfu_ops"):
        assert f[column].isna().all(), column
    assert not any(c in w for w in warnings for c in ("int_ops", "warp_inst", "shared_bytes"))
    # no tensor instruction (its pipe's count 0): no integer tensor work; ops = flops (FP32 1,409,286,144 per
    # launch: see test_modern_exports) + the known parts, a lower bound as int_ops is unknown
    assert f["tensor_int_ops"].tolist() == [0.0] * 3
    np.testing.assert_allclose(f["ops"], f["flops"], rtol=0)
    assert f["ops_partial"].all()


@needs_reader
def test_gh200_set_full_by_hand():
    """The report's one launch: torch's randn kernel (distribution_elementwise_grid_stride_kernel), 1,056
    blocks x 256 threads: stores only."""
    f, _ = _read(GH200)
    assert f.loc[0, "warp_inst"] == 2_324_480  # smsp__inst_executed.sum
    assert f.loc[0, "global_inst"] == 32_768  # global_st 32,768; global_ld, local 0
    # l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum 131,072 = 4 sectors per store: unit stride
    assert f.loc[0, "l1_transactions"] == 131_072
    assert f.loc[0, "shared_inst"] == 0 and f.loc[0, "shared_transactions"] == 0
    assert f.loc[0, "shared_bytes"] == 0  # op_{ld,st,atom} 0; the total's 26,400 are Misc wavefronts
    assert f.loc[0, "l2_transactions"] == 222_303  # lts__t_sectors.sum
    assert f.loc[0, "dram_transactions"] == 264 + 0  # dram__sectors_read.sum + _write.sum


@needs_reader
def test_t4_set_full_by_hand():
    """Tesla T4, matrix_addition2D on 1000 x 1000 floats (two loads, one store per element)."""
    f, _ = _read(T4)
    assert f.loc[0, "warp_inst"] == 632_520  # smsp__inst_executed.sum
    assert f.loc[0, "global_inst"] == 63_000 + 31_500  # global_ld + global_st (local 0)
    # sectors: loads 248,408 (3.94 per instruction: unit stride, rows of 1,000 floats not 128 B aligned)
    # + stores 125,000
    assert f.loc[0, "l1_transactions"] == 248_408 + 125_000
    assert f.loc[0, "shared_bytes"] == 0  # the total's 63,504 are Misc: 2 per warp of 3,969 blocks x 8 warps
    assert f.loc[0, "l2_transactions"] == 376_813
    assert f.loc[0, "dram_transactions"] == 300_384 + 130_917


@needs_reader
def test_gtx_1660_super_naive_gemm_by_hand():
    f, _ = _read(GEMM)
    assert f["warp_inst"].tolist() == [154_632_192.0] * 2  # smsp__inst_executed.sum
    # loads 67,141,632 (= 1024^3 x 2 / 32 + 1024^2 / 32: A and B per iteration, C once) + stores 32,768
    assert 2 * 1024**3 // 32 + 1024**2 // 32 == 67_141_632
    assert f["global_inst"].tolist() == [67_141_632 + 32_768.0] * 2
    # sectors: 167,903,232 load (2.50 per load: one operand broadcast, 1 sector; the other coalesced, 4)
    # + 131,072 store
    assert f["l1_transactions"].tolist() == [167_903_232 + 131_072.0] * 2
    assert f["l2_transactions"].tolist() == [8_758_972.0, 8_755_085.0]
    assert f["dram_transactions"].tolist() == [4_568_391 + 145_667.0, 4_577_346 + 149_412.0]


DOT = DATA / "gtx1660s_dot_product_shared_rep" / "dot_product_gtx1660super.ncu-rep"


@needs_reader
def test_gtx_1660_super_shared_memory_reduction_by_hand():
    """dot_prod_naive (atomics, no shared memory) and dot_prod (a shared-memory tree reduction), 4,096 blocks
    x 256 threads; counts from the raw page, derivations in PROVENANCE.md."""
    f, _ = _read(DOT)
    assert f["warp_inst"].tolist() == [491_520.0, 3_362_816.0]  # smsp__inst_executed.sum
    # global: 2 loads per warp (32,768 warps) in both; dot_prod stores once per block; dot_prod_naive's
    # atomicAdd is one RED per warp (smsp__inst_executed_op_global_red.sum 32,768; SM 7.5 has no LDGSTS)
    assert f["global_inst"].tolist() == [65_536 + 32_768.0, 65_536 + 4_096.0]
    # 4 sectors per load, 1 per store; the REDs to one address: 32 each (..._global_op_red.sum 1,048,576)
    assert f["l1_transactions"].tolist() == [262_144 + 1_048_576.0, 262_144 + 4_096.0]
    # shared: LDS 4,096 x 25 = 102,400 + STS 4,096 x 20 = 81,920, one wavefront each: conflict-free
    assert f["shared_inst"].tolist() == [0.0, 102_400 + 81_920.0]
    assert f["shared_transactions"].tolist() == [0.0, 102_400 + 81_920.0]
    # 128 B x (op_ld + op_st + op_atom) wavefronts; not the data stage's 32,768 and 892,928 (Misc included)
    assert f["shared_bytes"].tolist() == [0.0, 128 * 184_320.0]
    assert f["l2_transactions"].tolist() == [1_323_302.0, 268_576.0]
    assert f["dram_transactions"].tolist() == [288_047 + 18_204.0, 262_689 + 15_511.0]
    # FP32 of dot_prod: FMUL 1,048,576 (one per element) + FADD 1,044,480 (4,096 blocks x 255 tree additions)
    assert f.loc[1, "fp32_flops"] == pytest.approx(1_048_576 + 1_044_480, rel=1e-6)

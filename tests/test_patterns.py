"""The instruction roofline's memory-pattern walls (roofline.analysis.patterns), by hand.

Synthetic kernels of N warp LD/ST instructions land on the walls of Ding and Williams's Instruction
Roofline Model (PMBS 2019): a broadcast moves 1 sector per instruction (global_ii 1), unit stride 4
(1/4), random access 32 (1/32); shared memory takes 1 wavefront per instruction without bank conflicts
and 32 with 32-way conflicts. Then the real `--set full` exports, read by the real reader and analysed
with ``work="instructions"``, with their counts taken from the files (ncu --import --page raw).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.analysis import analyze
from roofline.analysis.patterns import (
    CONFLICT_FREE_BELOW, GLOBAL_WALLS, RANDOM_FROM, SHARED_WALLS, STRIDE0_BELOW, UNIT_STRIDE_UP_TO, global_pattern,
    instruction_columns, shared_pattern,
)
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine
from roofline.readers import read_profile

NCU = Path(__file__).parent / "data" / "ncu"
N = 1_000_000.0  # warp LD/ST instructions per synthetic kernel


def _kernel(name: str, **counts: float) -> dict:
    return {"kernel_name": name, "time_s": 1e-3, "warp_inst": 10 * N, **counts}


WALLS = [
    # name, global LD/ST instructions, L1 sectors, expected global_ii, pattern
    ("broadcast", N, N, 1.0, "stride-0"),            # 32 threads, one address: 1 sector each
    ("unit_stride", N, 4 * N, 0.25, "unit-stride"),   # 32 x 4 B = 128 B = 4 sectors
    ("random", N, 32 * N, 1 / 32, "random"),          # 32 threads, 32 sectors
]


@pytest.fixture(scope="module")
def wall_table() -> pd.DataFrame:
    rows = [_kernel(name, global_inst=inst, l1_transactions=sectors) for name, inst, sectors, _, _ in WALLS]
    rows += [
        _kernel("conflict_free", shared_inst=N, shared_transactions=N),     # 1 wavefront per instruction
        _kernel("conflict_32way", shared_inst=N, shared_transactions=32 * N),  # every thread its own pass
    ]
    return from_records(rows)


@pytest.mark.parametrize("name,inst,sectors,ii,pattern", WALLS)
def test_global_kernels_land_on_their_walls(wall_table, name, inst, sectors, ii, pattern):
    cols = instruction_columns(wall_table)
    row = cols[wall_table["kernel_name"] == name].iloc[0]
    assert row["global_ii"] == pytest.approx(ii)
    assert row["global_ii"] == pytest.approx(GLOBAL_WALLS[pattern])  # on the wall of that name
    assert row["global_pattern"] == pattern
    assert pd.isna(row["shared_ii"]) and pd.isna(row["shared_pattern"])  # no shared accesses: unknown, not 0


def test_shared_kernels_land_on_their_walls(wall_table):
    cols = instruction_columns(wall_table).set_index(wall_table["kernel_name"])
    assert cols.loc["conflict_free", "shared_ii"] == pytest.approx(1.0) == SHARED_WALLS["conflict-free"]
    assert cols.loc["conflict_free", "shared_pattern"] == "conflict-free"
    assert cols.loc["conflict_32way", "shared_ii"] == pytest.approx(1 / 32) == SHARED_WALLS["32-way conflicts"]
    assert cols.loc["conflict_32way", "shared_pattern"] == "32-way conflicts"


def test_rate_and_intensity_per_level(wall_table):
    cols = instruction_columns(wall_table).set_index(wall_table["kernel_name"])
    # 10 N = 1e7 warp instructions in 1 ms: 1e10 warp inst/s (10 warp GIPS)
    assert cols.loc["random", "inst_rate"] == pytest.approx(1e10)
    # ii_l1 = warp_inst / l1_transactions: 1e7 / 3.2e7 = 0.3125 for the random kernel; 1e7 / 1e6 = 10 broadcast
    assert cols.loc["random", "ii_l1"] == pytest.approx(0.3125)
    assert cols.loc["broadcast", "ii_l1"] == pytest.approx(10.0)
    assert cols.loc["conflict_32way", "ii_shared"] == pytest.approx(1e7 / 3.2e7)
    assert cols["ii_l2"].isna().all() and cols["ii_dram"].isna().all()  # no L2/DRAM counts: unknown


def test_pattern_boundaries():
    # sectors per instruction -> name: below 2 stride-0; 2..8 unit-stride; above 8 strided; from 24 random
    s = np.array([1.0, 1.999, STRIDE0_BELOW, UNIT_STRIDE_UP_TO, 8.001, 16.0, RANDOM_FROM - 0.001, RANDOM_FROM, 32.0])
    assert list(global_pattern(s)) == ["stride-0", "stride-0", "unit-stride", "unit-stride", "strided", "strided",
                                       "strided", "random", "random"]
    w = np.array([1.0, CONFLICT_FREE_BELOW - 0.01, CONFLICT_FREE_BELOW, 4.0, 32.0])
    assert list(shared_pattern(w)) == ["conflict-free", "conflict-free", "2-way conflicts", "4-way conflicts",
                                       "32-way conflicts"]
    assert list(global_pattern(np.array([np.nan]))) == [None]
    assert list(shared_pattern(np.array([np.inf, np.nan]))) == [None, None]


def test_unknown_and_zero_counts_give_nan_and_na():
    table = from_records([
        _kernel("no_counts"),                                              # LD/ST counts not collected
        _kernel("no_global", global_inst=0.0, l1_transactions=0.0),        # none executed
        _kernel("zero_sectors", global_inst=N, l1_transactions=0.0),       # a count of 0: no ratio
        {"kernel_name": "no_time", "time_s": 0.0, "warp_inst": N},        # a zero time: no rate
        {"kernel_name": "no_inst", "time_s": 1e-3, "l1_transactions": N},  # warp_inst unknown
    ])
    cols = instruction_columns(table).set_index(table["kernel_name"])
    for name in ("no_counts", "no_global", "zero_sectors"):
        assert np.isnan(cols.loc[name, "global_ii"]), name
        assert pd.isna(cols.loc[name, "global_pattern"]), name
    assert not np.isinf(cols.to_numpy(dtype=object)[:, :7].astype(float)).any()  # never infinity
    assert np.isnan(cols.loc["no_time", "inst_rate"])
    assert np.isnan(cols.loc["no_inst", "inst_rate"]) and np.isnan(cols.loc["no_inst", "ii_l1"])
    assert str(cols["global_pattern"].dtype) == "string" and str(cols["shared_pattern"].dtype) == "string"


def test_the_analysis_carries_the_columns_for_every_work(wall_table):
    machine = Machine(name="m", source="theoretical", memory={"l1": 12.8e12}, compute={"warp_inst": 1e12})
    for work in ("flops", "instructions"):
        a = analyze(KernelTable(wall_table), machine, work=work)
        f = a.frame.set_index("kernel_name")
        assert f.loc["unit_stride", "global_pattern"] == "unit-stride", work
        assert f.loc["conflict_32way", "shared_pattern"] == "32-way conflicts", work


def test_aggregation_sums_counts_before_the_ratio():
    # two launches of one kernel: 100 inst / 100 sectors (broadcast) and 100 inst / 3100 sectors:
    # per kernel (100 + 3100) / (100 + 100) = 16 sectors per instruction ('strided'), not the mean of 1 and 31
    table = from_records([
        {"kernel_name": "k", "time_s": 1e-6, "warp_inst": 1e3, "global_inst": 100.0, "l1_transactions": 100.0},
        {"kernel_name": "k", "time_s": 1e-6, "warp_inst": 1e3, "global_inst": 100.0, "l1_transactions": 3100.0},
    ])
    a = analyze(KernelTable(table), None, by="name")
    row = a.frame.iloc[0]
    assert row["global_ii"] == pytest.approx(1 / 16) and row["global_pattern"] == "strided"
    per_launch = analyze(KernelTable(table), None, by="launch").frame
    assert sorted(per_launch["global_pattern"]) == ["random", "stride-0"]


# -- real exports ---------------------------------------------------------------------------------
def _analysed(case: str):
    path = next((NCU / case).glob("*.ncu-rep"))
    table = read_profile([path])
    return table, analyze(table, None, by="name", work="instructions")


def test_t4_matrix_addition_is_unit_stride():
    # t4_setfull_rep, matrix_addition2D: global ld 63,000 inst / 248,408 sectors (3.94 per instruction),
    # st 31,500 inst / 125,000 sectors (3.97); local ld/st 0.
    # global_ii = (63,000 + 31,500) / (248,408 + 125,000) = 94,500 / 373,408 = 0.253074
    _, a = _analysed("t4_setfull_rep")
    row = a.frame.iloc[0]
    assert row["global_inst"] == 94_500 and row["l1_transactions"] == 373_408
    assert row["global_ii"] == pytest.approx(94_500 / 373_408)
    assert row["global_pattern"] == "unit-stride"
    assert pd.isna(row["shared_pattern"])  # no shared loads or stores (0 instructions)


def test_gtx1660s_naive_gemm_is_a_unit_stride_broadcast_mix():
    # gtx1660s_gemm_rep, 2 launches of naive_gemm: per launch ld 67,141,632 inst / 167,903,232 sectors and
    # st 32,768 / 131,072. Per kernel: (2 x 67,174,400) / (2 x 168,034,304) = 1 / 2.50144: one operand is
    # read by the whole warp (1 sector), the other coalesced (4), so the mix sits between the walls at 2.5.
    _, a = _analysed("gtx1660s_gemm_rep")
    row = a.frame.iloc[0]
    assert row["global_inst"] == 2 * 67_174_400 and row["l1_transactions"] == 2 * 168_034_304
    assert 1 / row["global_ii"] == pytest.approx(168_034_304 / 67_174_400)
    assert row["global_pattern"] == "unit-stride"


def test_h100_silu_float4_is_strided_by_the_four_byte_walls():
    # h100pcie_setfull_rep_silu_vector, launch 0: ld 524,288 inst / 8,388,608 sectors (16: float4 loads),
    # st 2,097,152 inst / 33,551,588 sectors (16.0: scalar stores 16 bytes apart). 41,940,196 / 2,621,440
    # = 15.999 sectors per instruction: 'strided' against the 4-byte walls (guidance tells the float4
    # loads from the strided stores with Nsight Compute's ideal sectors).
    table, a = _analysed("h100pcie_setfull_rep_silu_vector")
    first = instruction_columns(table.frame).iloc[0]
    assert 1 / first["global_ii"] == pytest.approx(41_940_196 / 2_621_440)
    row = a.frame.iloc[0]
    assert row["launches"] == 3 and row["global_inst"] == 3 * 2_621_440
    assert 1 / row["global_ii"] == pytest.approx(16.0, rel=2e-4)
    assert row["global_pattern"] == "strided"
    # 53,477,446 warp instructions in 284,704 ns (launch 0): 187.83 warp GIPS
    assert first["inst_rate"] == pytest.approx(53_477_446 / 284_704e-9)

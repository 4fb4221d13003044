"""The instruction roofline's memory walls divide like by like: every instruction class whose traffic the
sector and wavefront counts hold is counted (roofline.counting.instructions), and traffic without
instructions (TMA) is said, not divided.

Real data: the public H200 ``--set full`` raw exports of SGLang decode and prefill (Qwen3-30B-A3B MoE with
FlashAttention-3) in tests/data/ncu/h200_setfull_sglang_moe_fa3 (PROVENANCE.md there, with the cells
used below). Before the fix, ``--explain fused_moe_kernel`` printed 271 sectors and 2650 wavefronts per
instruction: the cp.async (LDGSTS) and ldmatrix (LDSM) traffic was counted, their instructions were not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import roofline
from roofline import counting
from roofline.analysis import analyze
from roofline.guidance import explain_text

DATA = Path(__file__).parent / "data" / "ncu" / "h200_setfull_sglang_moe_fa3"
DECODE = DATA / "short_decode.raw.csv.gz"
PREFILL = DATA / "long_prefill.raw.csv.gz"

S = "smsp__sass_inst_executed_op_"
SEC = "l1tex__t_sectors_pipe_lsu_mem_"
REQ = "l1tex__t_requests_pipe_lsu_mem_"
W = "l1tex__data_pipe_lsu_wavefronts_mem_shared"
LDGSTS_SECTORS = "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_"
LDGSTS_INST = "sm__sass_inst_executed_op_ldgsts_cache_"


@pytest.fixture(scope="module")
def decode() -> roofline.KernelTable:
    return roofline.read(DECODE)


def _launch(table: roofline.KernelTable, launch_id: int) -> tuple[pd.Series, pd.Series]:
    row = np.flatnonzero(table.frame["launch_id"].to_numpy() == launch_id)
    assert row.size == 1
    return table.frame.iloc[row[0]], table.metrics.iloc[row[0]]


# Cells of the raw page, per launch (ID): LDG, STG, LDL, STL; LDGSTS (SASS, LDGSTS.ACCESS + .BYPASS);
# ATOM (hardware ATOM.ALU + .CAS); RED (hardware); their L1 sectors (op_ld with LDGSTS's, op_st, local ld,
# local st, atom, red); LDS, STS, LDSM, STSM (hardware), ATOMS (hardware); wavefronts op_ld, op_st,
# op_atom, LDGSTS (SASS).
BY_HAND = {
    # fused_moe_kernel, the first of its two launches
    26: dict(ldst=(2_304, 192, 0, 0), ldgsts=0 + 138_240, atom=0 + 0, red=0,
             sectors=(1_599_744, 768, 0, 0, 0, 0), shared=(192, 0, 196_608, 768, 0),
             wavefronts=(786_624, 3_119, 0, 559_104)),
    28: dict(ldst=(6_144, 256, 0, 0), ldgsts=0 + 81_920, atom=0 + 0, red=0,
             sectors=(804_864, 1_024, 0, 0, 0, 0), shared=(256, 0, 98_304, 1_024, 0),
             wavefronts=(393_472, 4_099, 0, 330_752)),
    # FlashAttention-3 (cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90...>>)
    18: dict(ldst=(492, 20, 16, 528), ldgsts=0 + 1_448, atom=4 + 0, red=0,
             sectors=(22_088, 260, 64, 2_112, 4, 0), shared=(1_752, 136, 0, 256, 0),
             wavefronts=(4_016, 1_160, 0, 5_184)),
}
#: sectors per global memory instruction and wavefronts per shared-memory instruction, from the cells
#: above: 26: 1,600,512 / 140,736 and 1,348,847 / 335,808; 28: 805,888 / 88,320 and 728,323 / 181,504;
#: 18: 24,528 / 2,508 and 10,360 / 3,592.
RATIOS = {26: (11.372442, 4.016721), 28: (9.124638, 4.012710), 18: (9.779904, 2.884187)}


@pytest.mark.parametrize("launch_id", list(BY_HAND))
def test_memory_instructions_and_their_traffic_by_hand(decode, launch_id):
    cells = BY_HAND[launch_id]
    row, _ = _launch(decode, launch_id)
    global_inst = sum(cells["ldst"]) + cells["ldgsts"] + cells["atom"] + cells["red"]
    shared_inst = sum(cells["shared"]) + cells["ldgsts"]  # LDGSTS writes shared memory too
    assert row["global_inst"] == global_inst
    assert row["l1_transactions"] == sum(cells["sectors"])
    assert row["shared_inst"] == shared_inst
    assert row["shared_transactions"] == sum(cells["wavefronts"])
    sectors, wavefronts = RATIOS[launch_id]
    assert row["l1_transactions"] / row["global_inst"] == pytest.approx(sectors, rel=1e-6)
    assert row["shared_transactions"] / row["shared_inst"] == pytest.approx(wavefronts, rel=1e-6)
    assert sectors <= 32 and wavefronts <= 32  # a warp instruction: 32 sectors, 32-way conflicts at most
    # the shared level's bytes: 128 B per wavefront, LDGSTS's included (no warpgroup MMA here but in FA3)
    if launch_id != 18:
        assert row["shared_bytes"] == 128 * sum(cells["wavefronts"])
    assert row["tma_inst"] == 0 and row["gmma_inst"] == (1_536 if launch_id == 18 else 0)


@pytest.mark.parametrize("launch_id", list(BY_HAND))
def test_the_loads_counters_hold_ldgsts_and_ldsm_traffic(decode, launch_id):
    """Why LDGSTS sectors are not added to op_ld's, and LDSM wavefronts not to op_ld's: they are inside.
    The global-load requests are the LDG instructions plus the LDGSTS requests; the load sectors less the
    LDGSTS ones leave the LDG's, at most 32 per LDG (1 each in fused_moe: broadcast loads)."""
    _, m = _launch(decode, launch_id)
    ldg = m[f"{S}global_ld.sum"]
    assert m[f"{REQ}global_op_ld.sum"] == ldg + m["sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"]
    ldgsts_sectors = m[f"{LDGSTS_SECTORS}access.sum"] + m[f"{LDGSTS_SECTORS}bypass.sum"]
    assert 0 < m[f"{SEC}global_op_ld.sum"] - ldgsts_sectors <= 32 * ldg
    if launch_id in (26, 28):  # LDSM.x4: 4 wavefronts each, conflict-free (op_ld bank conflicts 0), plus LDS
        ldsm = m["smsp__inst_executed_op_ldsm.sum"]
        assert m[f"{W}_op_ld.sum"] == m[f"{S}shared_ld.sum"] + 4 * ldsm
        assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


def test_ldgsts_is_42_percent_of_the_moe_kernels_shared_traffic(decode):
    """The issue's figure: the LDGSTS wavefronts of fused_moe_kernel's two launches against all of its
    shared-memory wavefronts, (559,104 + 330,752) / (1,348,847 + 728,323) = 42.8 %, now counted."""
    ldgsts = BY_HAND[26]["wavefronts"][3] + BY_HAND[28]["wavefronts"][3]
    frame = analyze(decode).frame
    moe = frame[frame["kernel_name"] == "fused_moe_kernel"].iloc[0]
    assert moe["shared_transactions"] == 1_348_847 + 728_323
    assert ldgsts / moe["shared_transactions"] == pytest.approx(0.4284, abs=1e-4)


def test_explain_prints_possible_figures(decode):
    """Before: "271 sectors per instruction (random)", "2650 wavefronts per instruction (2650-way
    conflicts)". The row sums both launches: 2,406,400 sectors / 229,056 instructions = 10.5, and
    2,077,170 wavefronts / 517,312 instructions = 4.02."""
    text = explain_text(analyze(decode), decode, "fused_moe_kernel", width=200)
    assert "10.5 sectors per instruction (strided)" in text
    assert "4.02 wavefronts per instruction" in text
    assert "271" not in text and "2650" not in text
    frame = analyze(decode).frame
    assert (1 / frame["global_ii"].dropna() <= 32).all() and (1 / frame["shared_ii"].dropna() <= 32).all()


def test_a_profile_without_the_new_counters_gets_a_named_lower_bound(decode):
    """The same launches without the LDGSTS, LDSM, STSM and atomic counts (an older export, or
    `roofline profile` before them): the instruction counts are LD/ST alone, lower bounds naming the
    counters, and the instruction roofline's notes say so."""
    dropped = [c for c in decode.metrics.columns if any(k in c for k in ("ldgsts", "ldsm", "stsm", "_atom", "_red"))]
    metrics = decode.metrics.drop(columns=dropped)
    out = counting.count(metrics, decode.frame["compute_capability"])
    k = int(np.flatnonzero(decode.frame["launch_id"].to_numpy() == 26)[0])
    assert out.columns["global_inst"][k] == 2_304 + 192  # LDG + STG
    assert out.columns["shared_inst"][k] == 192  # LDS
    assert f"{S}ldgsts.sum" in out.lower_bounds["global_inst"]
    assert {f"{S}ldsm.sum", f"{S}shared_stsm.sum", f"{S}ldgsts.sum"} <= set(out.lower_bounds["shared_inst"])
    assert out.lower_bound_launches["global_inst"] == 30
    table = roofline.read(DECODE)
    old = roofline.KernelTable(frame=table.frame.assign(global_inst=out.columns["global_inst"]), metrics=metrics,
                               column_notes={"global_inst": tuple(out.hints_for(["global_inst"]))})
    notes = analyze(old, work="instructions").notes
    assert any("global_inst is a lower bound for 30 launches" in n and f"{S}ldgsts.sum" in n for n in notes)


@pytest.fixture(scope="module")
def prefill() -> roofline.KernelTable:
    return roofline.read(PREFILL)


def test_tma_traffic_is_said_not_divided(prefill):
    """nvjet_tst_320x128 (cuBLAS's Hopper GEMM, launch 10 of the prefill export) ran 256,000 + 80,000 TMA
    instructions (SASS UTMALDG, UTMASTG). Its data stage counted 25,816,405 load wavefronts for 1,027,868
    LDS and no LDSM, 5,860 of them bank conflicts: 25.1 per LDS, where a conflict-free 16-byte access
    needs 4. Those wavefronts are not the LD/ST instructions' alone, so no shared-wall figure; its
    global LD/ST (none but TMA's) are not on the walls either, and the row says why."""
    row, m = _launch(prefill, 10)
    lds = m[f"{S}shared_ld.sum"] + m["smsp__inst_executed_op_ldsm.sum"]
    ideal = m[f"{W}_op_ld.sum"] - m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    assert ideal / lds == pytest.approx(25.11, abs=0.01) and ideal / lds > 4
    assert row["tma_inst"] == 256_000 + 80_000 + 0  # smsp__sass_inst_executed_op_tma_{ld,st,red}.sum
    assert row["gmma_inst"] == 20_480_000
    frame = analyze(prefill, by="launch").frame
    r = frame[frame["launch_id"] == 10].iloc[0]
    assert np.isnan(r["shared_ii"]) and pd.isna(r["shared_pattern"])
    assert r["pattern_note"].startswith("336,000 TMA instructions move data between global and shared memory")
    assert "20,480,000 warpgroup MMAs (wgmma) read their operands from shared memory" in r["pattern_note"]
    # FA3 in the same export: warpgroup MMAs without TMA; its LD/ST figures stand (3.94 wavefronts per
    # shared instruction), and the note says the MMAs' operand reads are off the walls
    fa3 = frame[frame["launch_id"] == 15].iloc[0]
    assert 1 / fa3["shared_ii"] == pytest.approx(3.939, abs=1e-3)
    assert fa3["pattern_note"].startswith("32,514,048 warpgroup MMAs")
    # a kernel without either has no note
    assert pd.isna(frame[frame["launch_id"] == 9].iloc[0]["pattern_note"])  # RMSNormKernel: LD/ST alone

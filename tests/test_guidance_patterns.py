"""The guidance rules that read the instruction roofline (roofline.guidance.memory_patterns), each on
both sides of each threshold, on synthetic rows whose numbers are worked out in the comments.

N warp LD/ST instructions move N sectors on the stride-0 wall (a broadcast), 4N at unit stride
(4-byte words), 16N for 16-byte words at unit stride or strided 4-byte words, 32N on the random wall.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from guidance_data import FrameAnalysis, analysis_row
from roofline.analysis import analyze
from roofline.guidance import advise, diagnose
from roofline.guidance import metrics as m
from roofline.guidance.diagnose import missing_message, run_rules
from roofline.guidance.memory_patterns import PATTERN_RULES, WARP_INST_PEAK, access_bytes, used_bytes_per_sector
from roofline.guidance.rule_types import RowValues
from roofline.guidance.rules import LIMITER_PRIORITY, LIMITERS, RULES, rule_by_id
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine

LEVELS = ["l1", "l2", "dram"]
N = 1_000_000.0
SIZES = m.ACCESS_SIZE_INSTRUCTIONS  # bytes per thread -> ncu metric counting such instructions


def _run(rule_id: str, values: dict):
    return run_rules(values, LEVELS, [rule_by_id(rule_id)])[0]


def _global(sectors_per_inst: float, **more) -> dict:
    return {"global_inst": N, "l1_transactions": sectors_per_inst * N, "time_share": 0.5, **more}


def _sizes(**counts: float) -> dict:
    """Access-size counts: every size 0 but those given (e.g. b4=N: N instructions of 4 bytes per thread)."""
    return {name: counts.get(f"b{size}", 0.0) for size, name in SIZES.items()}


def _shared(wavefronts_per_inst: float, **more) -> dict:
    return {"shared_inst": N, "shared_transactions": wavefronts_per_inst * N, "time_share": 0.25, **more}


# -- helpers --------------------------------------------------------------------------------------
def test_access_bytes_is_the_mean_bytes_per_thread():
    # 3 N instructions of 4 B and 1 N of 16 B: (3 x 4 + 16) / 4 = 7 bytes per thread = 7 sectors per warp inst
    assert access_bytes(RowValues(_sizes(b4=3 * N, b16=N), ())) == pytest.approx(7.0)
    assert math.isnan(access_bytes(RowValues({SIZES[4]: N}, ())))  # the other sizes not collected: unknown
    assert math.isnan(access_bytes(RowValues(_sizes(), ())))        # no memory instructions


def test_used_bytes_per_sector_reads_ratio_or_pct():
    assert used_bytes_per_sector(RowValues({m.GLOBAL_ST_BYTES_PER_SECTOR: 8.0}, ()), "st") == 8.0
    assert used_bytes_per_sector(RowValues({m.GLOBAL_LD_BYTES_PER_SECTOR_PCT: 12.5}, ()), "ld") == pytest.approx(4.0)
    assert math.isnan(used_bytes_per_sector(RowValues({}, ()), "ld"))


# -- broadcast (stride-0 wall) ----------------------------------------------------------------------
def test_broadcast_fires_on_the_stride0_wall_with_measured_4_byte_words():
    f = _run("global-broadcast", _global(1.0, **_sizes(b4=N)))  # 1 sector per instruction, 4-byte words
    assert (f.status, f.severity, f.limiter) == ("fired", "medium", "broadcast")
    assert f.values["sectors_per_instruction"] == 1.0 and f.values["stride0_below"] == pytest.approx(2.0)
    assert "1.00 sectors per global LD/ST" in f.message and "50%" in f.message and "__constant__" in f.message


@pytest.mark.parametrize("per,status", [(1.99, "fired"), (2.0, "ok"), (4.0, "ok")])
def test_broadcast_boundary_is_two_sectors_for_4_byte_words(per, status):
    assert _run("global-broadcast", _global(per, **_sizes(b4=N))).status == status


def test_broadcast_needs_notable_time():
    assert _run("global-broadcast", _global(1.0, time_share=0.0099, **_sizes(b4=N))).status == "ok"
    assert _run("global-broadcast", _global(1.0, time_share=0.01, **_sizes(b4=N))).status == "fired"


def test_broadcast_moves_with_the_access_width():
    # 1-byte words: unit stride is 1 sector per instruction, sqrt(1) = 1: nothing lies below it
    assert _run("global-broadcast", _global(1.0, **_sizes(b1=N))).status == "ok"
    # 2-byte words: unit stride 2 sectors, boundary sqrt(2) = 1.414
    assert _run("global-broadcast", _global(1.4, **_sizes(b2=N))).status == "fired"
    assert _run("global-broadcast", _global(1.5, **_sizes(b2=N))).status == "ok"
    # 16-byte words: unit stride 16 sectors, boundary 4: a float4 broadcast (1 sector) and 3.9 fire
    f = _run("global-broadcast", _global(3.9, **_sizes(b16=N)))
    assert f.status == "fired" and f.values["stride0_below"] == pytest.approx(4.0)


def test_broadcast_without_access_size_uses_the_bytes_per_sector():
    # a 4-byte broadcast uses 4 of its 32 bytes: confirmed
    f = _run("global-broadcast", _global(1.0, **{m.GLOBAL_LD_BYTES_PER_SECTOR: 4.0}))
    assert (f.status, f.limiter) == ("fired", "broadcast")
    # 1 sector per instruction and all 32 bytes used: 1-byte words at unit stride, not a broadcast
    f = _run("global-broadcast", _global(1.0, **{m.GLOBAL_LD_BYTES_PER_SECTOR_PCT: 100.0}))
    assert f.status == "ok" and "narrow words" in f.message


def test_broadcast_that_the_counts_cannot_confirm_is_info_without_a_limiter():
    f = _run("global-broadcast", _global(1.0))
    assert (f.status, f.severity, f.limiter) == ("fired", "info", None)
    assert SIZES[8] in f.message and m.GLOBAL_LD_BYTES_PER_SECTOR_PCT in f.message


def test_broadcast_without_global_accesses_or_counts():
    assert _run("global-broadcast", {"global_inst": 0.0, "l1_transactions": 0.0}).message == "No global loads or stores."
    f = _run("global-broadcast", {"global_inst": N})
    assert f.status == "missing" and f.missing == ("l1_transactions",)
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in f.message


# -- uncoalesced (global access pattern) ---------------------------------------------------------
IDEAL = m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL
ACTUAL = m.L2_THEORETICAL_SECTORS_GLOBAL


def test_uncoalesced_from_ncu_ideal_sectors():
    # H100 silu's source counters (per launch): 41,943,040 sectors requested, 16,777,216 ideal: 2.5x,
    # 25,165,824 excess sectors = 60% of the traffic, 805,306,368 B
    f = _run("global-access-pattern", _global(16.0, **{ACTUAL: 41_943_040.0, IDEAL: 16_777_216.0}))
    assert (f.status, f.severity, f.limiter) == ("fired", "medium", "uncoalesced")
    assert f.values["sectors_over_ideal"] == pytest.approx(2.5)
    assert f.values["excess_sectors"] == 25_165_824 and f.values["excess_bytes"] == 25_165_824 * 32
    assert f.values["excess_share"] == pytest.approx(0.6)
    assert "'strided'" in f.message and "25,165,824 excess sectors" in f.message and "float4" in f.message


@pytest.mark.parametrize("ratio,status,severity", [(1.99, "ok", "info"), (2.0, "fired", "medium"),
                                                   (3.99, "fired", "medium"), (4.0, "fired", "high")])
def test_uncoalesced_thresholds_on_the_ideal_ratio(ratio, status, severity):
    f = _run("global-access-pattern", _global(4 * ratio, **{ACTUAL: ratio * 1000.0, IDEAL: 1000.0}))
    assert (f.status, f.severity) == (status, severity)


def test_float4_at_unit_stride_is_not_flagged_when_the_ideal_is_known():
    # 16 sectors per instruction, 'strided' by the 4-byte walls, but every sector is needed
    f = _run("global-access-pattern", _global(16.0, **{ACTUAL: 16 * N, IDEAL: 16 * N}))
    assert f.status == "ok" and "Coalesced for its access width" in f.message
    # the same from the access size: 16 bytes per thread = 16 sectors per instruction, 1.0x
    assert _run("global-access-pattern", _global(16.0, **_sizes(b16=N))).status == "ok"
    # 4-byte words at 16 sectors per instruction: 4x the 4 needed
    f = _run("global-access-pattern", _global(16.0, **_sizes(b4=N)))
    assert (f.status, f.severity) == ("fired", "high") and f.values["excess_sectors"] == 12 * N


def test_broadcast_mix_is_not_uncoalesced():
    # GTX 1660 Super naive GEMM: 168,034,304 sectors requested = ideal (a broadcast needs its 1 sector)
    f = _run("global-access-pattern", _global(2.5, **{ACTUAL: 168_034_304.0, IDEAL: 168_034_304.0}))
    assert f.status == "ok" and f.values["excess_sectors"] == 0


@pytest.mark.parametrize("per,status,severity,limiter", [
    (32.0, "fired", "high", "uncoalesced"),  # random wall: no access width explains it
    (24.0, "fired", "high", "uncoalesced"),
    (16.0, "fired", "info", None),           # strided 4-byte or unit-stride 16-byte: cannot tell
    (8.0, "ok", "info", None),               # unit stride of 8-byte words
    (4.0, "ok", "info", None),
])
def test_uncoalesced_without_an_ideal_reads_the_walls(per, status, severity, limiter):
    f = _run("global-access-pattern", _global(per))
    assert (f.status, f.severity, f.limiter) == (status, severity, limiter)
    if severity == "info" and status == "fired":
        assert IDEAL in f.message and SIZES[16] in f.message


# -- shared-memory bank conflicts ----------------------------------------------------------------
def test_conflict_free_and_32_way_without_conflict_counts():
    assert _run("shared-bank-conflicts", _shared(1.0)).status == "ok"
    f = _run("shared-bank-conflicts", _shared(32.0))
    assert (f.status, f.severity, f.limiter) == ("fired", "high", "bank-conflicts")  # 32 >= 4 x 4 wavefronts
    assert "about 32-way" in f.message and "25%" in f.message  # the time share


@pytest.mark.parametrize("per,status,severity,limiter", [
    (1.49, "ok", "info", None),
    (2.0, "fired", "info", None),                # 2-way conflicts, or conflict-free 8-byte words
    (4.5, "fired", "info", None),                # up to 4 (16-byte words) + 0.5: cannot tell
    (4.6, "fired", "medium", "bank-conflicts"),  # more than any conflict-free width takes
    (16.0, "fired", "high", "bank-conflicts"),
])
def test_shared_wavefronts_per_instruction_without_counts(per, status, severity, limiter):
    f = _run("shared-bank-conflicts", _shared(per))
    assert (f.status, f.severity, f.limiter) == (status, severity, limiter)
    if (status, severity) == ("fired", "info"):
        assert m.SHARED_LD_BANK_CONFLICTS in f.message and m.L1_WAVEFRONTS_SHARED_IDEAL in f.message


def test_bank_conflict_counts_tell_conflicts_from_wide_words():
    # 2 wavefronts per instruction, N of the 2N are conflicts: ideal N, 2.0-way, half the wavefronts replays
    f = _run("shared-bank-conflicts", _shared(2.0, **{m.SHARED_LD_BANK_CONFLICTS: N, m.SHARED_ST_BANK_CONFLICTS: 0.0}))
    assert (f.status, f.severity, f.limiter) == ("fired", "medium", "bank-conflicts")
    assert f.values["wavefronts_over_ideal"] == pytest.approx(2.0) and f.values["excess_share"] == pytest.approx(0.5)
    # 4 wavefronts per instruction and no conflicts: 16-byte words, conflict-free
    f = _run("shared-bank-conflicts", _shared(4.0, **{m.SHARED_LD_BANK_CONFLICTS: 0.0, m.SHARED_ST_BANK_CONFLICTS: 0.0}))
    assert f.status == "ok"
    # ncu's own threshold: conflicts at least 10% of the wavefronts (1,000,000 wavefronts here)
    low = {m.SHARED_LD_BANK_CONFLICTS: 99_000.0, m.SHARED_ST_BANK_CONFLICTS: 0.0}
    high = {m.SHARED_LD_BANK_CONFLICTS: 60_000.0, m.SHARED_ST_BANK_CONFLICTS: 41_000.0}
    assert _run("shared-bank-conflicts", _shared(1.0, **low)).status == "ok"
    assert _run("shared-bank-conflicts", _shared(1.0, **high)).status == "fired"


def test_ncu_ideal_wavefronts_come_first():
    # 8 wavefronts per instruction; Source Counters: 8N actual, 2N ideal (8-byte words): 4-way, severe
    ideal = {m.L1_WAVEFRONTS_SHARED: 8 * N, m.L1_WAVEFRONTS_SHARED_IDEAL: 2 * N,
             m.SHARED_LD_BANK_CONFLICTS: 0.0, m.SHARED_ST_BANK_CONFLICTS: 0.0}  # the ideal wins over the counts
    f = _run("shared-bank-conflicts", _shared(8.0, **ideal))
    assert (f.status, f.severity) == ("fired", "high") and f.values["wavefronts_over_ideal"] == pytest.approx(4.0)
    assert "6,000,000 wavefronts (75%)" in f.message


def test_no_shared_accesses_is_ok_not_missing():
    f = _run("shared-bank-conflicts", {"shared_inst": 0.0, "shared_transactions": 0.0})
    assert f.status == "ok" and f.message == "No shared-memory loads or stores."
    f = _run("shared-bank-conflicts", {})
    assert f.status == "missing" and "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" in f.message


# -- instruction issue ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rate,status,severity", [(5.99e11, "ok", "info"), (6e11, "fired", "medium"),
                                                  (8e11, "fired", "high")])
def test_issue_against_the_machine_ceiling(rate, status, severity):
    f = _run("instruction-issue", {"inst_rate": rate, WARP_INST_PEAK: 1e12, "time_share": 1.0})
    assert (f.status, f.severity) == (status, severity)
    assert f.values["issue_use"] == pytest.approx(rate / 1e12)
    if status == "fired":
        assert f.limiter == "issue" and "warp GIPS" in f.message


def test_issue_from_ncu_percent_when_the_machine_has_no_ceiling():
    f = _run("instruction-issue", {"inst_rate": 1e11, m.INST_EXECUTED_PCT: 61.0})
    assert f.status == "fired" and f.values["issue_use"] == pytest.approx(0.61)
    # the machine's ceiling first: 1e11 of 1e12 is 10%, whatever ncu said
    assert _run("instruction-issue", {"inst_rate": 1e11, WARP_INST_PEAK: 1e12, m.INST_EXECUTED_PCT: 61.0}).status == "ok"
    f = _run("instruction-issue", {"inst_rate": 1e11})
    assert f.status == "missing" and "warp-instruction ceiling" in f.message


def test_missing_message_names_metrics_machine_and_columns():
    text = missing_message(("global_inst", WARP_INST_PEAK, "locality"))
    assert "smsp__sass_inst_executed_op_global_st.sum" in text and "--machine" in text
    assert "needs locality in the analysis" in text


# -- registration, limiters and diagnose -------------------------------------------------------------
def test_pattern_rules_are_registered_with_their_limiters():
    ids = [r.id for r in RULES]
    for rule in PATTERN_RULES:
        assert ids.count(rule.id) == 1 and rule.source and rule.thresholds
    for key in ("broadcast", "bank-conflicts", "issue", "uncoalesced"):
        assert key in LIMITERS and key in LIMITER_PRIORITY
    # a pattern problem is reported before the bandwidth it wastes
    assert LIMITER_PRIORITY.index("bank-conflicts") < LIMITER_PRIORITY.index("memory")
    assert LIMITER_PRIORITY.index("broadcast") < LIMITER_PRIORITY.index("memory")


def _machine() -> Machine:
    # 100 SMs x 4 warp instructions per clock x 2.5 GHz = 1e12 warp instructions/s
    return Machine(name="synthetic", source="theoretical", memory={"l1": 12.8e12, "dram": 3.2e12},
                   compute={"fp32": 50e12, "warp_inst": 1e12})


def test_diagnose_hands_the_machine_ceiling_to_the_issue_rule():
    # 7e8 warp instructions in 1 ms: 7e11/s, 70% of 1e12
    table = KernelTable(from_records([{"kernel_name": "k", "time_s": 1e-3, "fp32_flops": 1e9, "l1_bytes": 1e9,
                                       "dram_bytes": 1e8, "warp_inst": 7e8, "global_inst": 1e7,
                                       "l1_transactions": 4e7, "shared_inst": 1e6, "shared_transactions": 8e6}]))
    for work in ("flops", "instructions"):
        a = analyze(table, _machine(), work=work)
        d = diagnose(a, table)
        k = d.kernels[0]
        issue = k.finding("instruction-issue")
        assert issue.status == "fired" and issue.values["issue_use"] == pytest.approx(0.7), work
        assert k.finding("shared-bank-conflicts").limiter == "bank-conflicts"  # 8 wavefronts per instruction
        assert k.finding("global-access-pattern").status == "ok"  # 4 sectors per instruction
        # the headline is the claim supporting the most time (roofline.guidance.headline): issuing at 70% of
        # the peak accounts for 0.7 ms of the 1 ms; conflicts (8 wavefronts where 16-byte words take 4) for
        # at most half of it, and the kernel's 1e6 shared instructions are 0.14% of its 7e8
        assert k.limiter == "issue", work
        assert k.headline.support_s == pytest.approx(0.7e-3)
        conflicts = next(c for c in k.headline.claims if c.limiter == "bank-conflicts")
        assert conflicts.support_s == pytest.approx(0.5e-3) and not conflicts.set_aside
    adv = advise(a, table)
    assert adv.loc[0, "limiter_label"] == "instruction issue"
    assert "issues at 70% of the warp-instruction peak" in adv.loc[0, "reason"]


def test_rules_are_silent_without_counts_and_one_warning_names_the_metrics():
    frame = pd.DataFrame([analysis_row(time_s=1e-3, time_share=1.0)])
    d = diagnose(FrameAnalysis(frame=frame), None)
    k = d.kernels[0]
    for rule in PATTERN_RULES:
        assert k.finding(rule.id).status == "missing", rule.id
    assert k.limiter is None
    both = [w for w in d.warnings if "global-broadcast" in w]
    assert len(both) == 1 and "global-access-pattern" in both[0] and both[0].startswith("rules ")
    assert "smsp__sass_inst_executed_op_global_ld.sum" in both[0]
    assert any("shared-bank-conflicts" in w and "wavefronts_mem_shared_op_st" in w for w in d.warnings)
    assert any("instruction-issue" in w and "smsp__inst_executed.sum" in w for w in d.warnings)  # no warp_inst
    # warp instructions known, the machine's ceiling missing: a machine, not an ncu metric, would enable it
    frame = pd.DataFrame([analysis_row(time_s=1e-3, time_share=1.0, inst_rate=1e11)])
    d = diagnose(FrameAnalysis(frame=frame), None)
    assert not any("instruction-issue" in w for w in d.warnings)
    assert "warp-instruction ceiling" in d.kernels[0].finding("instruction-issue").message


def test_machine_ceiling_reaches_rows_of_a_frame_analysis():
    frame = pd.DataFrame([analysis_row(inst_rate=9e11, time_share=1.0)])
    d = diagnose(FrameAnalysis(frame=frame, machine=_machine()), None)
    f = d.kernels[0].finding("instruction-issue")
    assert f.values[WARP_INST_PEAK] == 1e12 and f.severity == "high"  # 90% >= 80%
    d = diagnose(FrameAnalysis(frame=frame, machine=None), None)
    assert d.kernels[0].finding("instruction-issue").status == "missing"
    assert np.isnan(d.kernels[0].finding("instruction-issue").values.get(WARP_INST_PEAK, np.nan))

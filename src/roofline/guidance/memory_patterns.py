"""Guidance rules that read the instruction roofline: where a kernel's loads and stores sit against the
memory-pattern walls, shared-memory bank conflicts, and how close it issues to the warp-instruction peak.

The walls are Ding and Williams's ("An Instruction Roofline Model for GPUs", PMBS 2019), placed per
kernel by :mod:`roofline.analysis.patterns`: a warp's load or store of 4-byte words touches 1 sector
when its 32 threads read one address (stride-0), 4 when they read consecutive words (unit stride), 32
when each reads its own sector (random); a shared-memory access takes 1 wavefront without bank
conflicts and n with n-way conflicts. Each rule reads its wall with the counts that tell a costly
reading from an innocent one of the same shape:

======================  ==============================================  ===========================================
rule                    fires when                                      what tells it from an innocent reading
======================  ==============================================  ===========================================
global-broadcast        sectors per global LD/ST instruction below      8- and 16-bit words at unit stride also
                        sqrt(unit-stride point) (2 for 4-byte words:    take 1 and 2 sectors: the access size
                        the geometric middle of the walls 1 and 4) in   (memory instructions per access size)
                        a kernel holding >= 1% of the time              or the bytes used per sector
global-access-pattern   sectors moved >= 2x the ideal for the same      16-byte (float4) words at unit stride take
                        accesses                                        16 sectors: Nsight Compute's ideal sector
                                                                        count, else the access size; without
                                                                        them only >= 24 (near the random wall)
shared-bank-conflicts   wavefronts >= 1.1x the conflict-free count      8- and 16-byte words take 2 and 4
                        (bank conflicts >= 10% of wavefronts, as ncu)   wavefronts without conflicts: ncu's ideal
                                                                        wavefronts or its bank-conflict counts;
                                                                        without them only > 4.5 per instruction
instruction-issue       warp instructions/s >= 60% of the machine's     (ncu's own % of the issue peak where the
                        warp_inst ceiling                               machine has no warp_inst ceiling)
======================  ==============================================  ===========================================

A reading the counts cannot tell from an innocent one is reported as an ``info`` finding that names
no limiter and says which ncu metric would tell. Each rule needs the kernel-table counts
(``global_inst`` and ``l1_transactions``; ``shared_inst`` and ``shared_transactions``; ``warp_inst``)
and is ``missing`` without them, so it stays silent on profiles that lack them.
"""

from __future__ import annotations

import math

import numpy as np

from roofline.analysis.patterns import (
    CONFLICT_FREE_BELOW, RANDOM_FROM, STRIDE0_BELOW, UNIT_STRIDE_UP_TO, global_pattern,
)
from roofline.guidance import metrics as m
from roofline.guidance.rule_types import (
    BPG_BANKS, BPG_COALESCING, CPG_CONSTANT, HEURISTIC, IRM, NCU_ISSUE, NCU_SHARED_CONFLICTS, NCU_UNCOALESCED, Finding,
    RowValues, Rule, Threshold,
)
from roofline.units import format_si

#: Row value :func:`roofline.guidance.diagnose.diagnose` adds from the analysed machine: its warp-instruction
#: ceiling (``compute["warp_inst"]``, warp instructions/s, at the kernels' clock); NaN when it has none.
WARP_INST_PEAK = "warp_inst_peak"

#: Bytes per sector, the unit of L1 global traffic.
SECTOR_BYTES = m.SECTOR_BYTES

#: Wavefronts a conflict-free shared access of the widest words (16 bytes) takes: 512 B / 128 B.
WIDEST_CONFLICT_FREE = 4.0

FIX_BROADCAST = ("Hoist loads that do not change across a loop into registers, keep values that every thread "
                 "reads in __constant__ memory, or load them once per block into shared memory (tiling)")
FIX_COALESCING = ("Make neighbouring threads touch neighbouring addresses: write whole vectors (float4) instead of "
                  "their components, transpose the data layout (structure of arrays), or stage the access "
                  "through shared memory")
FIX_BANKS = ("Pad shared arrays (e.g. [32][33] for a 32 x 32 tile), swizzle the index (XOR with the row), or "
             "change which thread reads which word so a warp's 32 threads hit 32 different banks")
FIX_ISSUE = ("Issue fewer instructions: vector loads and stores (float4), less index arithmetic (hoist it out of "
             "loops, unroll), fused or wider operations (FMA, half2, tensor cores), less divergence")


def _share(v: RowValues) -> str:
    share = v.get("time_share")
    return f" It holds {share:.0%} of the time." if math.isfinite(share) else ""


def access_bytes(v: RowValues) -> float:
    """Mean bytes per thread of the kernel's memory instructions, from ncu's access-size counts
    (:data:`roofline.guidance.metrics.ACCESS_SIZE_INSTRUCTIONS`; they count shared and local accesses
    too); NaN when not all of them were collected or there are none. 32 threads x b bytes = b sectors:
    this is also the sectors per warp instruction at unit stride."""
    counts = [(size, v.get(name)) for size, name in m.ACCESS_SIZE_INSTRUCTIONS.items()]
    if not all(math.isfinite(c) for _, c in counts):
        return math.nan
    total = sum(c for _, c in counts)
    return sum(size * c for size, c in counts) / total if total > 0 else math.nan


def used_bytes_per_sector(v: RowValues, op: str = "ld") -> float:
    """Useful bytes per 32-byte sector of global loads (``op="ld"``) or stores (``"st"``), 0..32, from
    ncu's ``.ratio`` or ``.pct`` form; NaN when neither was collected. Unique bytes: a 4-byte broadcast
    uses 4 of its sector."""
    ratio_name, pct_name = ((m.GLOBAL_LD_BYTES_PER_SECTOR, m.GLOBAL_LD_BYTES_PER_SECTOR_PCT) if op == "ld" else
                            (m.GLOBAL_ST_BYTES_PER_SECTOR, m.GLOBAL_ST_BYTES_PER_SECTOR_PCT))
    ratio = v.get(ratio_name)
    if math.isfinite(ratio):
        return ratio
    return v.get(pct_name) / 100.0 * SECTOR_BYTES


def _global_counts(v: RowValues) -> tuple[float, float, float]:
    """(global LD/ST warp instructions, their L1 sectors, sectors per instruction; NaN when none)."""
    inst, sectors = v.get("global_inst"), v.get("l1_transactions")
    per = sectors / inst if inst > 0 and sectors > 0 else math.nan
    return inst, sectors, per


def _no_global(v: RowValues) -> str:
    """What a kernel without global LD/ST instructions on the walls does instead, if known."""
    tma = v.get("tma_inst")
    if tma > 0:
        return (f"No global LD/ST instructions on the walls: its {tma:,.0f} TMA instructions move its global data "
                "without any (analysis.patterns).")
    return "No global loads or stores."


def _tma_note(v: RowValues) -> str:
    tma = v.get("tma_inst")
    return (f" The kernel ran {tma:,.0f} TMA instructions, whose shared traffic sits in the same wavefronts without "
            "LD/ST instructions of its own: the wavefronts per instruction are not its accesses' shape.") if tma > 0 else ""


# -- checks ---------------------------------------------------------------------------------------
def check_broadcast(v: RowValues, r: Rule) -> Finding:
    """Loads and stores on the stride-0 wall: a warp's threads read one address (or few are active)."""
    inst, sectors, per = _global_counts(v)
    if not math.isfinite(per):
        return r.finding("ok", _no_global(v), values={"global_inst": inst})
    size = access_bytes(v)
    assumed = r.t("assumed_word_bytes")
    unit = size if math.isfinite(size) else assumed
    below = r.t("stride0_below") * math.sqrt(unit / assumed)  # sqrt(unit): between the walls 1 and unit
    used = used_bytes_per_sector(v, "ld")
    share = v.get("time_share")
    vals = {"sectors_per_instruction": per, "unit_stride_sectors": unit, "stride0_below": below,
            "load_bytes_per_sector": used, "time_share": share}
    where = (f"{per:.2f} sectors per global LD/ST warp instruction ({inst:,.0f} instructions, {sectors:,.0f} "
             f"sectors), where unit-stride accesses take {unit:.3g}")
    if per >= below:
        return r.finding("ok", f"Not on the stride-0 wall: {where}.", values=vals)
    if math.isfinite(share) and share < r.t("time_share"):
        return r.finding("ok", f"On the stride-0 wall ({where}), but the kernel holds only {share:.1%} of the "
                         f"time.", values=vals)
    if math.isfinite(used) and used >= r.t("used_bytes_per_sector") and not math.isfinite(size):
        return r.finding("ok", f"Few sectors per instruction ({where}, assuming {unit:.0f}-byte words), but loads "
                         f"use {used:.1f} of every 32 bytes fetched: narrow words at unit stride, not a broadcast.",
                         values=vals)
    text = (f"Global loads and stores sit on the stride-0 wall: {where}. A warp's threads read one address (a "
            f"broadcast) or only a few of them are active, so each LD/ST instruction moves a sector or less of "
            f"data.{_share(v)} {FIX_BROADCAST}.")
    brief = f"{per:.2f} sectors per global LD/ST instruction (stride-0 wall)"
    confirmed = math.isfinite(size) or (math.isfinite(used) and used < r.t("used_bytes_per_sector"))
    if confirmed:
        return r.finding("fired", text, severity="medium", limiter="broadcast", values=vals, brief=brief)
    return r.finding("fired", text + f" (Assuming {unit:.0f}-byte words: 8- and 16-bit data at unit stride also "
                     f"take 1 and 2 sectors; collect {', '.join(m.ACCESS_SIZE_INSTRUCTIONS.values())} or "
                     f"{m.GLOBAL_LD_BYTES_PER_SECTOR_PCT} to tell.)", severity="info", values=vals, brief=brief)


#: Sectors a warp's memory instruction can touch at most: 32 threads, one sector each.
MAX_SECTORS_PER_INSTRUCTION = 32.0


def _beyond_the_wall(v: RowValues, per: float, what: str, r: Rule, vals: dict[str, float]) -> Finding | None:
    """An ``ok`` finding that names what is missing where more traffic per instruction is counted than a warp
    instruction can move (32 sectors or wavefronts): the instruction count lacks the instructions of some
    of the traffic (LDGSTS, LDSM, atomics not collected: roofline.counting.instructions); else None."""
    if not per > MAX_SECTORS_PER_INSTRUCTION:
        return None
    return r.finding("ok", f"Not evaluated: {per:.1f} {what} per instruction, more than a warp instruction can "
                     f"move ({MAX_SECTORS_PER_INSTRUCTION:.0f}): the counts hold traffic of instructions they do "
                     f"not count (LDGSTS, LDSM, STSM, atomics not collected: see the instruction columns' notes "
                     f"under --work instructions).", values=vals)


def _ideal_global(v: RowValues, inst: float, sectors: float) -> tuple[float, float, str]:
    """(sectors moved over the ideal for the same accesses, excess sectors, what the ideal is from); NaN
    and '' when unknown. Nsight Compute's Source Counters first (they look at every instruction's
    addresses: a broadcast needs 1 sector), else the measured access size (32 threads x b bytes = b sectors
    per instruction)."""
    actual, ideal = v.get(m.L2_THEORETICAL_SECTORS_GLOBAL), v.get(m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL)
    if math.isfinite(actual) and ideal > 0:
        return actual / ideal, max(0.0, actual - ideal), (
            f"Nsight Compute's ideal for the same accesses is {ideal:,.0f} sectors against {actual:,.0f} requested")
    size = access_bytes(v)
    if math.isfinite(size) and size > 0:
        return sectors / (inst * size), max(0.0, sectors - inst * size), (
            f"the measured access size ({size:.3g} bytes per thread) needs {size:.3g} sectors per instruction")
    return math.nan, math.nan, ""


def check_global_pattern(v: RowValues, r: Rule) -> Finding:
    """Sectors per global LD/ST instruction against the unit-stride point: uncoalesced, strided or random."""
    inst, sectors, per = _global_counts(v)
    if not math.isfinite(per):
        return r.finding("ok", _no_global(v), values={"global_inst": inst})
    pattern = global_pattern(np.array([per]))[0]
    ratio, excess, basis = _ideal_global(v, inst, sectors)
    waste = 1.0 - 1.0 / ratio if ratio > 0 else math.nan
    from_ncu = math.isfinite(v.get(m.L2_THEORETICAL_SECTORS_GLOBAL)) and v.get(m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL) > 0
    vals = {"sectors_per_instruction": per, "sectors_over_ideal": ratio, "excess_sectors": excess,
            "excess_bytes": excess * SECTOR_BYTES, "excess_share": waste, "time_share": v.get("time_share"),
            "ncu_ideal": 1.0 if from_ncu else 0.0}
    beyond = _beyond_the_wall(v, per, "sectors", r, vals)
    if beyond is not None and not from_ncu:
        return beyond
    where = (f"{per:.1f} sectors per global LD/ST warp instruction ({inst:,.0f} instructions, {sectors:,.0f} "
             f"sectors; '{pattern}' against the 4-byte walls: unit stride 4, random 32)")
    if math.isfinite(ratio):
        if ratio < r.t("over_ideal"):
            return r.finding("ok", f"Coalesced for its access width: {where}; {basis} ({ratio:.2f}x).", values=vals)
        severity = "high" if ratio >= r.t("high_over_ideal") or per >= r.t("random_from") else "medium"
        return r.finding("fired", f"Uncoalesced global accesses: {where}; {basis}, {ratio:.1f}x: "
                         f"{excess:,.0f} excess sectors ({format_si(excess * SECTOR_BYTES, 'B')}, {waste:.0%} of the "
                         f"global traffic).{_share(v)} {FIX_COALESCING}.", severity=severity,
                         limiter="uncoalesced", values=vals,
                         brief=f"{per:.1f} sectors per global LD/ST, {ratio:.1f}x the ideal")
    if per >= r.t("random_from"):
        return r.finding("fired", f"Near the random wall: {where}, more than any access width explains (16-byte "
                         f"words at unit stride take 16).{_share(v)} {FIX_COALESCING}.", severity="high",
                         limiter="uncoalesced", values=vals, brief=f"{per:.1f} sectors per global LD/ST (random)")
    if per > UNIT_STRIDE_UP_TO:
        return r.finding("fired", f"Strided, or wide: {where}. 16-byte (float4) words at unit stride take 16 as "
                         f"well; collect --section SourceCounters ({m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL}) or "
                         f"{m.ACCESS_SIZE_INSTRUCTIONS[16]} to tell.", severity="info", values=vals,
                         brief=f"{per:.1f} sectors per global LD/ST (strided or 16-byte)")
    return r.finding("ok", f"At or near unit stride: {where}.", values=vals)


def _ideal_shared(v: RowValues, wavefronts: float) -> tuple[float, str]:
    """Wavefronts over the conflict-free count, and where that count is from; NaN when unknown."""
    actual, ideal = v.get(m.L1_WAVEFRONTS_SHARED), v.get(m.L1_WAVEFRONTS_SHARED_IDEAL)
    if math.isfinite(actual) and ideal > 0:
        return actual / ideal, f"Nsight Compute's ideal is {ideal:,.0f} wavefronts against {actual:,.0f}"
    conflicts = v.get(m.SHARED_LD_BANK_CONFLICTS) + v.get(m.SHARED_ST_BANK_CONFLICTS)
    if math.isfinite(conflicts) and wavefronts > conflicts:
        return wavefronts / (wavefronts - conflicts), f"{conflicts:,.0f} of them are bank conflicts"
    return math.nan, ""


def check_shared_conflicts(v: RowValues, r: Rule) -> Finding:
    """Wavefronts per shared-memory LD/ST instruction: bank conflicts serialise a warp's access."""
    inst, wavefronts = v.get("shared_inst"), v.get("shared_transactions")
    if not (inst > 0 and wavefronts > 0):
        return r.finding("ok", "No shared-memory loads or stores.", values={"shared_inst": inst})
    per = wavefronts / inst
    ratio, basis = _ideal_shared(v, wavefronts)
    share = v.get("time_share")
    vals = {"wavefronts_per_instruction": per, "wavefronts_over_ideal": ratio, "time_share": share}
    where = f"{per:.2f} wavefronts per shared LD/ST warp instruction ({inst:,.0f} instructions, {wavefronts:,.0f} wavefronts)"
    tma = _tma_note(v)
    if tma:  # the figure is not the accesses' own: only conflict counts (or ncu's ideal) tell
        where = f"{inst:,.0f} shared-memory instructions, {wavefronts:,.0f} wavefronts"
        if not math.isfinite(ratio):
            return r.finding("ok", f"Not evaluated: {where}.{tma} Collect {m.SHARED_LD_BANK_CONFLICTS}, "
                             f"{m.SHARED_ST_BANK_CONFLICTS} or --section SourceCounters to tell bank conflicts.",
                             values=vals)
    if math.isfinite(ratio):
        excess = wavefronts * (1.0 - 1.0 / ratio)
        vals |= {"excess_wavefronts": excess, "excess_share": excess / wavefronts}
        if ratio < r.t("over_ideal"):
            return r.finding("ok", f"No costly bank conflicts: {where}; {basis}.{tma}", values=vals)
        return r.finding("fired", f"Shared-memory bank conflicts, about {ratio:.1f}-way: {where}; {basis}: "
                         f"{excess:,.0f} wavefronts ({excess / wavefronts:.0%}) are serialised "
                         f"replays.{_share(v)} {FIX_BANKS}.",
                         severity="high" if ratio >= r.t("high_way") else "medium", limiter="bank-conflicts",
                         values=vals, brief=f"{ratio:.1f}-way shared bank conflicts")
    if per < CONFLICT_FREE_BELOW:
        return r.finding("ok", f"Conflict-free: {where}.", values=vals)
    beyond = _beyond_the_wall(v, per, "wavefronts", r, vals)
    if beyond is not None:
        return beyond
    hint = (f"collect {m.SHARED_LD_BANK_CONFLICTS}, {m.SHARED_ST_BANK_CONFLICTS} or --section SourceCounters "
            f"({m.L1_WAVEFRONTS_SHARED_IDEAL}) to tell")
    if per > r.t("unexplained_from"):
        return r.finding("fired", f"Shared-memory bank conflicts, about {per:.0f}-way: {where}, more than the "
                         f"{WIDEST_CONFLICT_FREE:.0f} that 16-byte words take without conflicts.{_share(v)} {FIX_BANKS}.",
                         severity="high" if per >= r.t("high_way") * WIDEST_CONFLICT_FREE else "medium",
                         limiter="bank-conflicts", values=vals, brief=f"{per:.1f} wavefronts per shared LD/ST")
    return r.finding("fired", f"Bank conflicts or wide words: {where}; 8- and 16-byte words take 2 and 4 "
                     f"wavefronts without conflicts ({hint}).{_share(v)}", severity="info", values=vals,
                     brief=f"{per:.1f} wavefronts per shared LD/ST (conflicts or wide words)")


def check_issue(v: RowValues, r: Rule) -> Finding:
    """Warp-instruction rate against the issue peak (Ding and Williams's instruction ceiling)."""
    rate, peak = v.get("inst_rate"), v.get(WARP_INST_PEAK)
    if math.isfinite(rate) and peak > 0:
        use = rate / peak
        where = (f"{rate / 1e9:.3g} warp GIPS, {use:.0%} of the machine's {peak / 1e9:.3g} warp GIPS "
                 f"(SMs x 4 schedulers x 1 instruction per clock)")
    else:
        use = v.get(m.INST_EXECUTED_PCT) / 100.0
        where = f"at {use:.0%} of the issue peak (ncu's {m.INST_EXECUTED_PCT})"
    vals = {"inst_rate": rate, "warp_inst_peak": peak, "issue_use": use}
    if use >= r.t("issue_use"):
        return r.finding("fired", f"Instruction-issue bound: issues {where}.{_share(v)} {FIX_ISSUE}.",
                         severity="high" if use >= r.t("high_use") else "medium", limiter="issue", values=vals,
                         brief=f"issues at {use:.0%} of the warp-instruction peak")
    return r.finding("ok", f"Issues {where}.", values=vals)


def _th(value: float, unit: str, meaning: str) -> Threshold:
    return Threshold(value, unit, meaning)


#: The rules of this module, in the order a diagnosis lists them (after :data:`roofline.guidance.rules.RULES`' own).
PATTERN_RULES: tuple[Rule, ...] = (
    Rule("global-broadcast", "Broadcast loads (stride-0 wall)", f"{IRM}; {CPG_CONSTANT}",
         needs=(("global_inst", "l1_transactions"),),
         thresholds={"assumed_word_bytes": _th(4.0, "B", "bytes per thread assumed when the access size is not "
                                                       "collected: unit stride is then 4 sectors per instruction"),
                     "stride0_below": _th(STRIDE0_BELOW, "sector/inst", "fires below this for 4-byte words, the "
                                          "geometric middle of the walls 1 and 4 (analysis.patterns); for b-byte "
                                          "words below sqrt(b), between 1 and their unit-stride b sectors"),
                     "time_share": _th(0.01, "", f"... in a kernel holding at least this share of the time ({HEURISTIC})"),
                     "used_bytes_per_sector": _th(16.0, "B", "loads using at least this many of 32 bytes per sector "
                                                  "are narrow words, not a broadcast (4-byte broadcast: 4 B)")},
         check=check_broadcast),
    Rule("global-access-pattern", "Uncoalesced global accesses (instruction roofline)",
         f"{IRM}; {NCU_UNCOALESCED}; {BPG_COALESCING}",
         needs=(("global_inst", "l1_transactions"),),
         thresholds={"over_ideal": _th(2.0, "x ideal", f"fires when at least this many times the ideal sectors move: "
                                       f"half or more of the traffic is waste ({HEURISTIC})"),
                     "high_over_ideal": _th(4.0, "x ideal", "severe from this factor (three quarters waste), or on the "
                                            "random side of the walls"),
                     "random_from": _th(RANDOM_FROM, "sector/inst", "without an ideal count: fires from here, beyond the "
                                        "16 sectors of 16-byte words at unit stride (analysis.patterns)")},
         check=check_global_pattern),
    Rule("shared-bank-conflicts", "Shared-memory bank conflicts", f"{IRM}; {NCU_SHARED_CONFLICTS}; {BPG_BANKS}",
         needs=(("shared_inst", "shared_transactions"),),
         thresholds={"over_ideal": _th(1.0 / 0.9, "x ideal", "fires when bank conflicts are at least 10% of the "
                                       "wavefronts (ncu's SharedMemoryConflicts threshold): wavefronts >= ideal / 0.9"),
                     "high_way": _th(4.0, "-way", f"severe from this many wavefronts per conflict-free one ({HEURISTIC})"),
                     "unexplained_from": _th(WIDEST_CONFLICT_FREE + 0.5, "wavefront/inst",
                                             "without conflict counts: fires above the 4 wavefronts of conflict-free "
                                             "16-byte words (+0.5, as the conflict-free tolerance of analysis.patterns)")},
         check=check_shared_conflicts),
    Rule("instruction-issue", "Instruction issue", f"{IRM}; {NCU_ISSUE}",
         needs=(("inst_rate", WARP_INST_PEAK), (m.INST_EXECUTED_PCT,)),
         thresholds={"issue_use": _th(0.6, "", "fires at or above this fraction of the warp-instruction peak (ncu's "
                                      "IssueSlotUtilization target: below it the schedulers are under-used)"),
                     "high_use": _th(0.8, "", f"severe at or above this fraction ({HEURISTIC})")},
         check=check_issue),
)

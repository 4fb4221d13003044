"""The headline of a kernel's diagnosis: of the fired rules that name what limits it, the one whose own
numbers support the most time, after the claims the kernel's other evidence rules out are set aside.

Each claim's support is the time (s) its own numbers put on what it names, at most (T: the kernel's
time; G: its savable time, the time above its roofline; u: a unit's use, 0..1):

============================  =====================================================================
claim                         support
============================  =====================================================================
waiting: latency (Speed of    G: neither unit is busy, the whole gap is waiting
Light), poor-use (roofline)
small-grid (Speed of Light)   min(G, T x (1 - waves per SM)): the SMs the grid leaves idle
waste: uncoalesced (the       T x the share of the traffic they count that is waste (``excess_share``,
coalescing rules, sector-     ``waste_share``, ``local_share``); bank conflicts without conflict counts:
use), local-memory, bank-     T x (1 - 4 / wavefronts per instruction), 16-byte words taking 4
conflicts
busy unit: memory, compute,   T x u of the unit the claim names (Speed of Light's %, the level's
issue (Speed of Light,        bandwidth use, the issue use; the roofline's compute or bandwidth use):
bandwidth, hit-rates,         the time that unit accounts for
instruction-issue, roofline)
fp64, tensor-cores            T x compute use x the FLOP share on the slower units
short-kernel, broadcast       not measured
============================  =====================================================================

The roofline rule (from counts alone) claims only where no rule reading richer metrics names a limiter.
Claims the kernel's own rows contradict are set aside, whichever rule made them:

* a waste claim is worth no more than the waste measured where it is measured best (:data:`MEASURED_BY`):
  Nsight Compute's source counters (``uncoalesced-global``: every global instruction's addresses against
  the ideal for them; the instruction roofline's rule when it reads the same ideal) cap every
  "uncoalesced" claim, so a 32-bit-word guess of 73% excess does not stand beside a measured 0%;
* a busy-unit claim (memory bandwidth, compute, issue; FP64 and tensor cores with them) does not stand
  where Speed of Light measured both compute and memory throughput below its latency threshold, nor where
  the unit it names is used below that threshold (:data:`BUSY_FROM`);
* a compute-bound kernel (by the roofline) is not limited by uncoalesced access short of severe waste.

The headline is the standing claim with the largest support, but for one rule: a generic busy-unit claim
(memory, compute) does not displace a standing claim that says why the unit is busy (:data:`REFINES`:
waste in the memory traffic; FP64, scalar FP32/FP16 instead of tensor cores, instruction issue) and
supports at least :data:`MATERIAL` of the kernel's time: the first of those by priority is the headline
(coalescing first; tensor cores before raw compute). Ties, and claims whose support is not measured, go by
:data:`roofline.guidance.rules.LIMITER_PRIORITY`; claims set aside come last. With no time known every
support is unknown and the priority alone decides.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from roofline.guidance.memory_patterns import WIDEST_CONFLICT_FREE
from roofline.guidance.rule_types import Finding, RowValues
from roofline.units import format_time

#: Limiters that claim a unit is busy.
BUSY = ("memory", "compute", "issue", "fp64", "tensor-cores")
#: Speed of Light's limiters for "neither unit busy" (both under its latency threshold).
IDLE = ("latency", "small-grid")
#: A busy-unit claim needs its unit used at least this much: Speed of Light's latency threshold (60%,
#: roofline.guidance.rules: below it on both units, ncu's SOLBottleneck calls the kernel latency-bound).
BUSY_FROM = 0.6
#: The claims that say why a unit is busy, per the generic busy claim they refine: a generic claim does
#: not displace a refining one that stands and is material (the first of them by LIMITER_PRIORITY).
REFINES: dict[str, tuple[str, ...]] = {
    "memory": ("local-memory", "uncoalesced", "bank-conflicts"),  # the waste in the memory traffic
    "compute": ("fp64", "tensor-cores", "issue"),  # the slower units, or the issue of the instructions
}
#: A waste claim supporting at least this share of the kernel's time is material (roofline's own heuristic).
MATERIAL = 0.1
#: Per limiter, the rules that measure its waste best, best first: when one ran (fired, or ok with its
#: measure), every claim of the limiter is worth at most what it measured.
MEASURED_BY: dict[str, tuple[str, ...]] = {"uncoalesced": ("uncoalesced-global", "global-access-pattern")}
#: The value a finding of ``global-access-pattern`` holds when its ideal is Nsight Compute's own.
NCU_IDEAL = "ncu_ideal"


def _time_times(key: str) -> Callable[[Finding, RowValues], float]:
    def support(f: Finding, v: RowValues) -> float:
        return v.get("time_s") * f.values.get(key, math.nan)
    return support


def _bank_conflicts(f: Finding, v: RowValues) -> float:
    share = f.values.get("excess_share", math.nan)
    if not math.isfinite(share):
        per = f.values.get("wavefronts_per_instruction", math.nan)
        share = max(0.0, 1.0 - WIDEST_CONFLICT_FREE / per) if per > 0 else math.nan
    return v.get("time_s") * share


def _roofline(f: Finding, v: RowValues) -> float:
    if f.limiter == "poor-use":
        return v.get("savable_time_s")
    return v.get("time_s") * _use(f, v)


def _speed_of_light(f: Finding, v: RowValues) -> float:
    t, gap = v.get("time_s"), v.get("savable_time_s")
    if f.limiter == "small-grid":
        idle = t * (1.0 - f.values.get("waves_per_sm", math.nan))
        return min(idle, gap) if math.isfinite(gap) else idle
    if f.limiter == "latency":
        sm, mem = f.values.get("compute_pct", math.nan), f.values.get("memory_pct", math.nan)
        return gap if math.isfinite(gap) else t * (1.0 - max(sm, mem) / 100.0)
    return t * _use(f, v)


def _busy(f: Finding, v: RowValues) -> float:
    return v.get("time_s") * _use(f, v)


def _compute_share(share_key: str) -> Callable[[Finding, RowValues], float]:
    def support(f: Finding, v: RowValues) -> float:
        return v.get("time_s") * _use(f, v) * f.values.get(share_key, math.nan)
    return support


def _use(f: Finding, v: RowValues) -> float:
    """The use (0..1) of the unit a busy-unit claim names, from the finding's numbers (else the row's)."""
    if f.rule == "speed-of-light":
        pct = f.values.get("compute_pct" if f.limiter == "compute" else "memory_pct", math.nan)
        return min(1.0, pct / 100.0)
    if f.rule == "bandwidth":
        uses = [x for k, x in f.values.items() if k.startswith("bw_use_") and math.isfinite(x)]
        return min(1.0, max(uses)) if uses else math.nan
    if f.rule == "hit-rates":
        return min(1.0, v.get("bw_use_dram"))
    if f.rule == "instruction-issue":
        return min(1.0, f.values.get("issue_use", math.nan))
    if f.limiter == "memory":  # the roofline's: its bandwidth use at the binding level
        return min(1.0, v.get("bw_use"))
    return min(1.0, f.values.get("compute_use", v.get("compute_use")))


#: Each rule's support (module docstring); a rule not listed has none measured.
SUPPORT: dict[str, Callable[[Finding, RowValues], float]] = {
    "roofline": _roofline,
    "speed-of-light": _speed_of_light,
    "global-load-coalescing": _time_times("excess_share"),
    "global-store-coalescing": _time_times("excess_share"),
    "uncoalesced-global": _time_times("excess_share"),
    "global-access-pattern": _time_times("excess_share"),
    "sector-use": _time_times("waste_share"),
    "local-memory": _time_times("local_share"),
    "shared-bank-conflicts": _bank_conflicts,
    "hit-rates": _busy,
    "bandwidth": _busy,
    "instruction-issue": _busy,
    "fp64": _compute_share("fp64_share"),
    "tensor-cores": _compute_share("fp32_fp16_share"),
}


def support(f: Finding, v: RowValues) -> float:
    """The time (s) ``f``'s own numbers put on what it names, at most; NaN where not measured."""
    rule = SUPPORT.get(f.rule)
    value = rule(f, v) if rule is not None else math.nan
    return max(0.0, value) if math.isfinite(value) else math.nan


@dataclass(frozen=True)
class Claim:
    """One fired finding's claim on the headline: its support (s; NaN: not measured) and, when set
    aside, why."""

    finding: Finding
    support_s: float
    set_aside: str = ""

    @property
    def limiter(self) -> str:
        assert self.finding.limiter is not None
        return self.finding.limiter


@dataclass(frozen=True)
class Headline:
    """The limiter a diagnosis reports, the finding that names it, and every claim weighed, in order."""

    limiter: str | None
    finding: Finding | None
    claims: tuple[Claim, ...] = ()

    @property
    def support_s(self) -> float:
        return next((c.support_s for c in self.claims if c.finding is self.finding), math.nan)

    def notes(self) -> list[str]:
        """The other claims, in words: what each supports, or why it was set aside."""
        from roofline.guidance.rules import LIMITERS

        out = []
        for c in self.claims:
            if c.finding is self.finding:
                continue
            label = LIMITERS[c.limiter].label if c.limiter in LIMITERS else c.limiter
            what = f"{label} ({c.finding.rule}: {c.finding.brief or c.finding.title})"
            if c.set_aside:
                out.append(f"{what} set aside: {c.set_aside}")
            elif math.isfinite(c.support_s):
                out.append(f"{what} supports {format_time(c.support_s)}")
        return out


def _measured(findings: Sequence[Finding], limiter: str, v: RowValues) -> tuple[float, Finding] | None:
    """The waste of ``limiter`` as measured best (:data:`MEASURED_BY`): its support, and the finding."""
    for rule in MEASURED_BY.get(limiter, ()):
        for f in findings:
            if f.rule != rule or f.status not in ("fired", "ok"):
                continue
            if rule == "global-access-pattern" and not f.values.get(NCU_IDEAL):
                continue
            share = f.values.get("excess_share", math.nan)
            if math.isfinite(share) and math.isfinite(v.get("time_s")):
                return v.get("time_s") * share, f
    return None


def _claim(f: Finding, findings: Sequence[Finding], v: RowValues, idle: Finding | None) -> Claim:
    """``f``'s claim: its support, capped by the best measurement of its waste, or set aside (with why)."""
    s = support(f, v)
    best = _measured(findings, f.limiter or "", v)
    if best is not None and best[1] is not f and not s <= best[0]:
        measured, by = best
        s = measured
        if measured == 0:
            return Claim(f, 0.0, f"{by.rule} measured no such waste ({by.brief or by.message.rstrip('.')})")
    if f.limiter in BUSY:
        if idle is not None:
            return Claim(f, 0.0, f"Speed of Light measured neither unit busy ({idle.brief})")
        use = _use(f, v)
        if use < BUSY_FROM:
            return Claim(f, 0.0, f"the unit it names is used {use:.0%}, under the {BUSY_FROM:.0%} that busy takes")
    return Claim(f, s)


def weigh(findings: Sequence[Finding], values: Mapping[str, Any] | None = None,
          priority: Sequence[str] = ()) -> Headline:
    """The headline of one kernel's findings (module docstring). ``values``: the row the rules read
    (``time_s``, ``savable_time_s``, ``bw_use``...); without it no support is known and ``priority``
    alone decides."""
    v = RowValues(values or {}, ())
    fired = [f for f in findings if f.status == "fired" and f.limiter]
    compute_bound = any(f.rule == "roofline" and f.limiter == "compute" for f in fired)
    # A kernel bound by a compute ceiling is not limited by how its memory accesses coalesce, unless
    # the waste is severe (a cuBLAS SGEMM at 50% of its FP32 roofline with 25% excess L2 sectors).
    fired = [f for f in fired if not (compute_bound and f.limiter == "uncoalesced" and f.severity != "high")]
    candidates = [f for f in fired if f.rule != "roofline"] or fired
    idle = next((f for f in findings if f.rule == "speed-of-light" and f.status == "fired" and f.limiter in IDLE), None)
    claims = [_claim(f, findings, v, idle) for f in candidates]
    rank = {key: i for i, key in enumerate(priority)}

    def key(c: Claim) -> tuple[int, float, int]:  # measured support first, then the rest, the set aside last
        tier = 2 if c.set_aside else 0 if c.support_s > 0 else 1
        return tier, -c.support_s if c.support_s > 0 else 0.0, rank.get(c.limiter, len(rank))

    ordered = sorted(claims, key=key)
    if not ordered:
        return Headline(None, None)
    top = ordered[0]
    t = v.get("time_s")
    refining = sorted((c for c in ordered if c.limiter in REFINES.get(top.limiter, ()) and not c.set_aside
                       and c.support_s >= MATERIAL * t), key=lambda c: rank.get(c.limiter, len(rank)))
    if refining:  # why the unit is busy, when material: coalescing first, tensor cores before raw compute
        top = refining[0]
        ordered = [top, *(c for c in ordered if c is not top)]
    return Headline(top.limiter, top.finding, tuple(ordered))

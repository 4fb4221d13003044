"""Apply the guidance rules to every row of an analysis.

``diagnose(analysis, table)`` merges each analysis row (roofline columns) with the
row's ncu metrics (aggregated like the row, see :mod:`roofline.guidance.metrics`) and
runs every rule of :data:`roofline.guidance.rules.RULES` whose metrics are present.
A rule that cannot run for lack of metrics yields a ``"missing"`` finding naming them.
Of the fired findings' claims, the one the row supports most is the kernel's limiter
(:mod:`roofline.guidance.headline`).
"""

from __future__ import annotations

import functools

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from roofline.guidance import vendor_rules
from roofline.guidance import metrics as m
from roofline.guidance.headline import Headline, weigh
from roofline.guidance.memory_patterns import WARP_INST_PEAK
from roofline.analysis.limits import INCONSISTENT
from roofline.guidance.rules import LIMITER_PRIORITY, LIMITERS, RULES, Finding, Limiter, Rule, RowValues
from roofline.kernels import KernelTable
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords


@dataclass(frozen=True)
class KernelDiagnosis:
    """Every rule's finding for one row of the analysis, and the limiter reported for it."""

    index: Hashable
    kernel_name: str
    phase: str | None
    findings: tuple[Finding, ...]
    limiter: str | None
    bound: str | None = None
    #: how the limiter was chosen: every claim weighed, with its support (:mod:`roofline.guidance.headline`)
    headline: Headline | None = None
    #: the physical limits the row's rates break (analysis ``inconsistent``): then the limiter is
    #: "inconsistent" and no rule's claim is made
    inconsistent: str | None = None
    #: the vendor's words the limiter and its sentence use (AMD's: HBM, LDS, matrix cores, HIP graphs)
    words: VendorWords = NVIDIA_WORDS

    @property
    def fired(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "fired"]

    @property
    def missing(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "missing"]

    def finding(self, rule_id: str) -> Finding | None:
        for f in self.findings:
            if f.rule == rule_id:
                return f
        return None

    @property
    def limiter_info(self) -> Limiter | None:
        return vendor_rules.limiters_for(self.words.vendor).get(self.limiter) if self.limiter else None

    @property
    def _bound_name(self) -> str:
        """The bound level as the limiter names it: 'DRAM' (NVIDIA's key in upper case), 'HBM' on AMD."""
        bound = self.bound or ""
        return self.words.level(bound) if self.words.is_amd else bound.upper()

    @property
    def limiter_label(self) -> str:
        info = self.limiter_info
        if info is None:
            return "unknown"
        if self.limiter == "memory" and self.bound and self.bound not in ("?",) and not self.bound.startswith(
                ("fp", "tensor", "bf", "mixed")):
            return f"{info.label} ({self._bound_name})"
        return info.label

    @property
    def sentence(self) -> str:
        """One plain sentence: what limits the kernel and what usually helps."""
        info = self.limiter_info
        if info is None:
            return "Not enough data to say what limits this kernel."
        if self.limiter == INCONSISTENT:
            return f"Inconsistent counters, not diagnosed: {self.inconsistent}."
        limits = info.limits
        if self.limiter == "memory" and self.bound and self.limiter_label != info.label:
            limits = f"{self._bound_name} bandwidth"
        return f"Limited by {limits}; {info.helps}."

    @property
    def reason(self) -> str:
        """The evidence for the limiter in a few words (the naming finding's brief), or ''."""
        if self.limiter is None:
            return ""
        if self.limiter == INCONSISTENT:
            return self.inconsistent or ""
        if self.headline is not None and self.headline.finding is not None:
            return self.headline.finding.brief or self.headline.finding.message
        named = [f for f in self.fired if f.limiter == self.limiter]
        richer = [f for f in named if f.rule != "roofline"]
        if not named:
            return ""
        best = (richer or named)[0]
        return best.brief or best.message


@dataclass(frozen=True)
class Diagnoses:
    """Diagnoses of every row of an analysis, in the analysis frame's order.

    ``metrics`` holds the ncu metrics aligned to the analysis rows; ``warnings`` names
    the rules that could not run on any row and the ncu metrics (and sections) that
    would enable them.
    """

    kernels: tuple[KernelDiagnosis, ...]
    metrics: pd.DataFrame
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.kernels)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.kernels)

    def for_index(self, index: Hashable) -> KernelDiagnosis:
        for k in self.kernels:
            if k.index == index:
                return k
        raise KeyError(index)


def _has(value: Any) -> bool:
    if value is None:
        return False
    try:
        if pd.isna(value):
            return False
    except (TypeError, ValueError):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def _missing_for(rule: Rule, values: dict[str, Any]) -> tuple[str, ...] | None:
    """None when one of the rule's metric sets is complete, else the preferred set's missing names."""
    for names in rule.needs:
        if all(_has(values.get(n)) for n in names):
            return None
    return tuple(n for n in rule.needs[0] if not _has(values.get(n)))


#: The section whose metrics only the section collects: ncu computes Source Counters from the SASS it
#: instruments (``derived__*`` defined in the section file), and ``--metrics`` cannot ask for them.
SOURCE_COUNTERS = "SourceCounters"


def _hint(names: Sequence[str]) -> str:
    source = [n for n in names if m.SECTION_OF.get(n) == SOURCE_COUNTERS]
    plain = [n for n in names if n not in source]
    parts = []
    if plain:
        sections = sorted({m.SECTION_OF[n] for n in plain if n in m.SECTION_OF})
        parts.append(f"ncu --metrics {','.join(plain)}" + (f" (or --section {' --section '.join(sections)})" if sections else ""))
    if source:
        parts.append(f"ncu --section {SOURCE_COUNTERS} (for {', '.join(source)})")
    return " and ".join(parts)


#: Row values that come from the analysed machine, not from a profile, and how to get them.
MACHINE_VALUES: dict[str, str] = {
    WARP_INST_PEAK: "a warp-instruction ceiling (warp_inst) in the machine: `roofline machine` on the GPU, or a "
                    "GPU spec (--machine NAME)",
}


def missing_metrics(missing: Sequence[str]) -> list[str]:
    """The ncu metrics that would supply ``missing`` names: raw metrics as they are, kernel-table and
    analysis columns through :data:`roofline.guidance.metrics.COLUMN_METRICS`."""
    out: list[str] = []
    for name in missing:
        for metric in ((name,) if "__" in name or name in m.SECTION_OF else m.COLUMN_METRICS.get(name, ())):
            if metric not in out:
                out.append(metric)
    return out


def missing_message(missing: Sequence[str]) -> str:
    """'Not evaluated: ...' naming the ncu metrics, machine ceilings or analysis columns that would enable a rule."""
    return _missing_message(tuple(missing))


@functools.lru_cache(maxsize=256)
def _missing_message(missing: tuple[str, ...]) -> str:  # the same few sets, for every kernel of a profile
    parts = []
    raw = missing_metrics(missing)
    if raw:
        parts.append(f"collect {_hint(raw)}")
    parts += [MACHINE_VALUES[n] for n in missing if n in MACHINE_VALUES]
    other = [n for n in missing if "__" not in n and n not in m.SECTION_OF and n not in m.COLUMN_METRICS
             and n not in MACHINE_VALUES]
    if other:
        parts.append("needs " + ", ".join(other) + " in the analysis")
    return "Not evaluated: " + "; ".join(parts) + "."


def run_rules(values: dict[str, Any], levels: Sequence[str], rules: Sequence[Rule] = RULES,
              words: VendorWords = NVIDIA_WORDS, hints: Mapping[str, str] | None = None) -> list[Finding]:
    """Run ``rules`` on one row of values (analysis columns and metrics by name); findings name levels and
    units in the vendor's ``words``; on AMD a rule that cannot run names the counters of the table's
    ``hints`` (its reader's), never ncu's."""
    row = RowValues(values, tuple(levels), words)
    out = []
    for rule in rules:
        missing = _missing_for(rule, values)
        if missing is not None:
            text = vendor_rules.missing_message(missing, hints or {}) if words.is_amd else missing_message(missing)
            out.append(rule.finding("missing", text, missing=missing))
            continue
        out.append(rule.check(row, rule))
    return out


def pick_limiter(findings: Sequence[Finding], values: dict[str, Any] | None = None) -> str | None:
    """The limiter to report: of the fired findings' claims, the one whose own numbers support the most
    savable time once the claims the kernel's other evidence contradicts are set aside
    (:func:`roofline.guidance.headline.weigh`); by :data:`LIMITER_PRIORITY` where supports tie or are
    unknown (``values``, the row the rules read, not given: the priority alone).

    The roofline rule's limiter (from counts alone) is used only when no rule reading richer metrics
    named one. Uncoalesced access short of severe does not limit a kernel the roofline puts under a
    compute ceiling.
    """
    return weigh(findings, values, LIMITER_PRIORITY).limiter


def as_table(analysis: Any, metrics: KernelTable | pd.DataFrame | None) -> tuple[KernelTable | None, str | None]:
    """The per-launch table whose metrics feed the rules, and a warning when metrics cannot be used.

    ``metrics`` is the :class:`KernelTable` the analysis came from (preferred), or its
    ``metrics`` frame: that is matched to kernels through the analysis's own table
    (``analysis.table``) when it has one, or through ``kernel_name``/``time_s`` columns
    in the frame itself.
    """
    if metrics is None or isinstance(metrics, KernelTable):
        return metrics, None
    if isinstance(metrics, pd.DataFrame):
        if metrics.empty:
            return None, None
        source = getattr(analysis, "table", None)
        if isinstance(source, KernelTable) and source.metrics.index.equals(metrics.index):
            return KernelTable(frame=source.frame, metrics=metrics, metric_hints=source.metric_hints), None
        if {"kernel_name", "time_s"} <= set(metrics.columns):
            launches = metrics.copy()
            for col in ("phase", "launch_id"):
                if col not in launches.columns:
                    launches[col] = pd.NA
            return KernelTable(frame=launches, metrics=metrics), None
        return None, ("ncu metrics were given without their kernel table, so they could not be matched to "
                      "kernels; pass the KernelTable to use them")
    raise TypeError(f"metrics must be a KernelTable, a DataFrame or None, not {type(metrics).__name__}")


#: Up to this many rows, rows are read one by one (``frame.loc``); beyond, all at once
#: (``to_dict("records")`` costs about as much as a dozen single rows; both give the same values).
FEW_ROWS = 12


def _row_dicts(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Each row of ``frame`` as a dict of its columns (named by strings)."""
    if len(frame) <= FEW_ROWS:
        return cast(list[dict[str, Any]], [frame.iloc[k].to_dict() for k in range(len(frame))])
    return cast(list[dict[str, Any]], frame.to_dict("records"))


def _warp_inst_peak(machine: Any) -> float:
    """The machine's warp-instruction ceiling (warp instructions/s); NaN without one."""
    compute = getattr(machine, "compute", None) or {}
    try:
        peak = float(compute.get("warp_inst", math.nan))
    except (TypeError, ValueError):
        return math.nan
    return peak if peak > 0 else math.nan


def diagnose(analysis: Any, table: KernelTable | pd.DataFrame | None = None, *,
             rules: Sequence[Rule] | None = None, rows: Sequence[Hashable] | None = None) -> Diagnoses:
    """Diagnose every row of ``analysis`` (a ``roofline.analysis.Analysis``), or the rows of its frame
    labelled ``rows`` (those a view shows: their launches' metrics alone are combined).

    ``table`` is the per-launch :class:`KernelTable` the analysis came from; its
    ``metrics`` feed the rules that read raw ncu metrics (see :func:`as_table` for what
    else is accepted). Without it (or without those metrics) only the rules over the
    roofline columns run, and the others say which metrics would enable them. ``rules``: every rule by
    default; on an AMD analysis (``analysis.vendor``) only the rules that hold there run, in AMD's words
    (:func:`roofline.guidance.vendor_rules.rules_for`), and one warning names those that need NVIDIA's counters.
    """
    frame: pd.DataFrame = analysis.frame if rows is None else analysis.frame.loc[list(rows)]
    by = getattr(analysis, "by", "name")
    levels = list(getattr(analysis, "levels", []) or [])
    words: VendorWords = getattr(analysis, "words", NVIDIA_WORDS)
    asked = rules
    rules = vendor_rules.rules_for(words.vendor, rules)
    hints = dict(getattr(analysis, "metric_hints", {}) or {})
    table, problem = as_table(analysis, table)
    per_row = m.metrics_per_row(frame, by, table, only_rows=rows is not None)
    metric_values = _row_dicts(per_row) if per_row.shape[1] else [{}] * len(frame)
    machine_values = {WARP_INST_PEAK: _warp_inst_peak(getattr(analysis, "machine", None))}
    kernels = []
    runs: dict[str, int] = {r.id: 0 for r in rules}
    missing_names: dict[str, tuple[str, ...]] = {}
    for idx, row, row_metrics in zip(frame.index, _row_dicts(frame), metric_values):
        values = row | machine_values | row_metrics
        findings = run_rules(values, levels, rules, words, hints)
        for f in findings:
            if f.status != "missing":
                runs[f.rule] += 1
            else:
                missing_names.setdefault(f.rule, f.missing)
        phase = values.get("phase")
        beyond = values.get("region") == INCONSISTENT  # a rate beyond a physical limit: no claim stands
        head = None if beyond else weigh(findings, values, LIMITER_PRIORITY)
        kernels.append(KernelDiagnosis(
            index=idx, kernel_name=str(values.get("kernel_name")), phase=str(phase) if _has(phase) else None,
            findings=tuple(findings), limiter=INCONSISTENT if beyond else head.limiter,  # type: ignore[union-attr]
            bound=str(values.get("bound")) if _has(values.get("bound")) else None, headline=head,
            inconsistent=str(values["inconsistent"]) if _has(values.get("inconsistent")) else None, words=words))
    warnings = [problem] if problem else []
    if words.is_amd and (note := vendor_rules.nvidia_only_note(asked)):
        warnings.append(note)
    not_run: dict[str, list[Rule]] = {}  # the same metrics would enable several rules: one warning for them
    for r in rules:
        if runs[r.id] == 0 and len(frame):
            missing = missing_names.get(r.id, ())
            # on AMD the counters the table's reader names for the columns (never ncu's)
            names = ([hints[n] for n in missing if n in hints] if words.is_amd else missing_metrics(missing))
            if names:
                not_run.setdefault(", ".join(names) if words.is_amd else _hint(names), []).append(r)
    for hint, group in not_run.items():
        which = ", ".join(f"{r.id!r} ({r.title})" for r in group)
        warnings.append(f"rule{'s' if len(group) > 1 else ''} {which} did not run: collect {hint}")
    return Diagnoses(kernels=tuple(kernels), metrics=per_row, warnings=tuple(warnings))

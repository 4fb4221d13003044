"""Apply the guidance rules to every row of an analysis.

``diagnose(analysis, table)`` merges each analysis row (roofline columns) with the
row's ncu metrics (aggregated like the row, see :mod:`roofline.guidance.metrics`) and
runs every rule of :data:`roofline.guidance.rules.RULES` whose metrics are present.
A rule that cannot run for lack of metrics yields a ``"missing"`` finding naming them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from roofline.guidance import metrics as m
from roofline.guidance.rules import LIMITER_PRIORITY, LIMITERS, RULES, Finding, Limiter, Rule, RowValues
from roofline.kernels import KernelTable


@dataclass(frozen=True)
class KernelDiagnosis:
    """Every rule's finding for one row of the analysis, and the limiter reported for it."""

    index: Hashable
    kernel_name: str
    phase: str | None
    findings: tuple[Finding, ...]
    limiter: str | None
    bound: str | None = None

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
        return LIMITERS.get(self.limiter) if self.limiter else None

    @property
    def limiter_label(self) -> str:
        info = self.limiter_info
        if info is None:
            return "unknown"
        if self.limiter == "memory" and self.bound and self.bound not in ("?",) and not self.bound.startswith(
                ("fp", "tensor", "bf", "mixed")):
            return f"{info.label} ({self.bound.upper()})"
        return info.label

    @property
    def sentence(self) -> str:
        """One plain sentence: what limits the kernel and what usually helps."""
        info = self.limiter_info
        if info is None:
            return "Not enough data to say what limits this kernel."
        limits = info.limits
        if self.limiter == "memory" and self.bound and self.limiter_label != info.label:
            limits = f"{self.bound.upper()} bandwidth"
        return f"Limited by {limits}; {info.helps}."

    @property
    def reason(self) -> str:
        """The evidence for the limiter in a few words (the naming finding's brief), or ''."""
        if self.limiter is None:
            return ""
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


def _hint(names: Sequence[str]) -> str:
    sections = sorted({m.SECTION_OF[n] for n in names if n in m.SECTION_OF})
    hint = f"ncu --metrics {','.join(names)}"
    if sections:
        hint += f" (or --section {' --section '.join(sections)})"
    return hint


def run_rules(values: dict[str, Any], levels: Sequence[str], rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Run ``rules`` on one row of values (analysis columns and metrics by name)."""
    row = RowValues(values, tuple(levels))
    out = []
    for rule in rules:
        missing = _missing_for(rule, values)
        if missing is not None:
            raw = [n for n in missing if "__" in n]
            what = f"collect {_hint(raw)}" if raw else "needs " + ", ".join(missing) + " in the analysis"
            out.append(rule.finding("missing", f"Not evaluated: {what}.", missing=missing))
            continue
        out.append(rule.check(row, rule))
    return out


def pick_limiter(findings: Sequence[Finding]) -> str | None:
    """The limiter to report: by :data:`LIMITER_PRIORITY` among the fired findings.

    The roofline rule's limiter (from counts alone) is used only when no rule reading
    richer metrics named one.
    """
    named = [f.limiter for f in findings if f.status == "fired" and f.limiter and f.rule != "roofline"]
    if not named:
        named = [f.limiter for f in findings if f.status == "fired" and f.limiter]
    for key in LIMITER_PRIORITY:
        if key in named:
            return key
    return named[0] if named else None


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
            return KernelTable(frame=source.frame, metrics=metrics), None
        if {"kernel_name", "time_s"} <= set(metrics.columns):
            launches = metrics.copy()
            for col in ("phase", "launch_id"):
                if col not in launches.columns:
                    launches[col] = pd.NA
            return KernelTable(frame=launches, metrics=metrics), None
        return None, ("ncu metrics were given without their kernel table, so they could not be matched to "
                      "kernels; pass the KernelTable to use them")
    raise TypeError(f"metrics must be a KernelTable, a DataFrame or None, not {type(metrics).__name__}")


def diagnose(analysis: Any, table: KernelTable | pd.DataFrame | None = None, *,
             rules: Sequence[Rule] = RULES) -> Diagnoses:
    """Diagnose every row of ``analysis`` (a ``roofline.analysis.Analysis``).

    ``table`` is the per-launch :class:`KernelTable` the analysis came from; its
    ``metrics`` feed the rules that read raw ncu metrics (see :func:`as_table` for what
    else is accepted). Without it (or without those metrics) only the rules over the
    roofline columns run, and the others say which metrics would enable them.
    """
    frame: pd.DataFrame = analysis.frame
    by = getattr(analysis, "by", "name")
    levels = list(getattr(analysis, "levels", []) or [])
    table, problem = as_table(analysis, table)
    per_row = m.metrics_per_row(frame, by, table)
    kernels = []
    runs: dict[str, int] = {r.id: 0 for r in rules}
    missing_names: dict[str, tuple[str, ...]] = {}
    for idx in frame.index:
        values = frame.loc[idx].to_dict()
        if idx in per_row.index and per_row.shape[1]:
            values.update({k: v for k, v in per_row.loc[idx].to_dict().items()})
        findings = run_rules(values, levels, rules)
        for f in findings:
            if f.status != "missing":
                runs[f.rule] += 1
            else:
                missing_names.setdefault(f.rule, f.missing)
        phase = values.get("phase")
        kernels.append(KernelDiagnosis(
            index=idx, kernel_name=str(values.get("kernel_name")), phase=str(phase) if _has(phase) else None,
            findings=tuple(findings), limiter=pick_limiter(findings),
            bound=str(values.get("bound")) if _has(values.get("bound")) else None))
    warnings = [problem] if problem else []
    for r in rules:
        if runs[r.id] == 0 and len(frame):
            names = [n for n in missing_names.get(r.id, ()) if "__" in n]
            if names:
                warnings.append(f"rule {r.id!r} ({r.title}) did not run: collect {_hint(names)}")
    return Diagnoses(kernels=tuple(kernels), metrics=per_row, warnings=tuple(warnings))

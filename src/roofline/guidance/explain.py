"""One kernel's full diagnosis, for ``roofline analyze --explain KERNEL``.

:func:`find_kernel` matches one kernel: exact name, else a unique substring of the name
(case-insensitive). :func:`find_kernels` (what ``--explain`` uses) matches a regular
expression (``re.search``, case-insensitive; a pattern that is not a valid regex is taken
literally) and returns every kernel it matches, longest first. No match is an
:class:`~roofline.errors.InputError` that lists the candidates.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Hashable
from typing import Any

import pandas as pd

from roofline.errors import InputError
from roofline.guidance.diagnose import Diagnoses, KernelDiagnosis, diagnose
from roofline.kernels import KernelTable
from roofline.units import format_number, format_si, format_time

#: How many candidate names an error lists at most.
MAX_CANDIDATES = 10
#: How many kernels ``--explain REGEX`` explains at most (the longest); the rest are counted.
MAX_EXPLAINED = 5


def find_kernel(frame: pd.DataFrame, kernel: str) -> list[Hashable]:
    """Index labels of the rows of ``frame`` whose kernel is ``kernel``.

    Exact name first (several rows when the analysis is per phase or per launch), else
    the rows of the one kernel whose name contains ``kernel`` (case-insensitive).
    Raises :class:`InputError` when nothing or more than one kernel name matches.
    """
    names = frame["kernel_name"].astype("string")
    exact = names == kernel
    if exact.any():
        return list(frame.index[exact.fillna(False).to_numpy(dtype=bool)])
    hit = names.str.lower().str.contains(kernel.lower(), regex=False).fillna(False).to_numpy(dtype=bool)
    matched = sorted(set(names[hit]))
    if len(matched) == 1:
        return list(frame.index[hit])
    if not matched:
        times = frame.get("time_s")
        order = names if times is None else names[times.astype(float).sort_values(ascending=False).index]
        shown = list(dict.fromkeys(order.dropna()))[:MAX_CANDIDATES]
        raise InputError(f"no kernel name contains {kernel!r}",
                         hint="kernels (longest first): " + "; ".join(shown))
    shown = matched[:MAX_CANDIDATES]
    more = f" and {len(matched) - len(shown)} more" if len(matched) > len(shown) else ""
    raise InputError(f"{kernel!r} matches {len(matched)} kernels",
                     hint="give more of the name; candidates: " + "; ".join(shown) + more)


def _by_time(frame: pd.DataFrame, names: pd.Series) -> list[str]:
    times = frame["time_s"].astype(float).fillna(0.0) if "time_s" in frame else pd.Series(0.0, index=frame.index)
    order = times.groupby(names.fillna("")).sum().sort_values(ascending=False, kind="stable")
    return [str(n) for n in order.index if n != ""]


def find_kernels(frame: pd.DataFrame, pattern: str) -> list[list[Hashable]]:
    """Index labels of the rows of each kernel ``pattern`` matches, longest kernel first.

    An exact name matches that kernel only; else ``pattern`` is a case-insensitive regular
    expression (``re.search``), or a literal substring when it is not a valid regex.
    Raises :class:`InputError` listing the kernels when nothing matches.
    """
    names = frame["kernel_name"].astype("string")
    exact = (names == pattern).fillna(False).to_numpy(dtype=bool)
    if exact.any():
        return [list(frame.index[exact])]
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error:
        regex = re.compile(re.escape(pattern), re.IGNORECASE)
    hit = names.str.contains(regex, regex=True).fillna(False).to_numpy(dtype=bool)
    if not hit.any():
        shown = _by_time(frame, names)
        more = f" and {len(shown) - MAX_CANDIDATES} more" if len(shown) > MAX_CANDIDATES else ""
        raise InputError(f"no kernel name matches {pattern!r}",
                         hint="kernels (longest first): " + "; ".join(shown[:MAX_CANDIDATES]) + more)
    matched = _by_time(frame[hit], names[hit])
    return [list(frame.index[(names == name).fillna(False).to_numpy(dtype=bool)]) for name in matched]


def _fmt_value(key: str, value: Any) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "-"
    if not math.isfinite(value):
        return "-"
    if key == "launches":
        return f"{value:,.0f}"
    if key.endswith("_s"):
        return format_time(value)
    if key.startswith("bw_") and not key.startswith("bw_use"):
        return format_si(value, "B/s")
    if key.endswith("_bytes"):
        return format_si(value, "B")
    if key.endswith(("_share", "_use")) or key.startswith("bw_use") or key == "pct_of_roofline":
        return f"{value:.1%}"
    if key.endswith("_pct"):
        return f"{value:.1f}%"
    return format_number(value, digits=4)


def _pattern_rows(row: pd.Series, rate: bool = True) -> list[tuple[str, str]]:
    """The instruction roofline's reading of the kernel (rows of the head panel), where known: warp GIPS
    (unless ``rate`` is False: the analysis counts instructions and shows their rate already) and where
    its global and shared loads and stores sit against the memory-pattern walls."""
    def value(key: str) -> float:
        try:
            v = float(row[key]) if key in row.index else math.nan
        except (TypeError, ValueError):
            return math.nan
        return v

    def label(key: str) -> str:
        v = row[key] if key in row.index else None
        return f" ({v})" if isinstance(v, str) else ""

    rows = []
    inst_rate = value("inst_rate")
    if rate and math.isfinite(inst_rate):
        rows.append(("warp GIPS", format_number(inst_rate / 1e9, digits=4)))
    g, s = value("global_ii"), value("shared_ii")
    if g > 0:
        rows.append(("global LD/ST", f"{format_number(1 / g, digits=3)} sectors per instruction{label('global_pattern')}"))
    if s > 0:
        rows.append(("shared LD/ST", f"{format_number(1 / s, digits=3)} wavefronts per instruction"
                                     f"{label('shared_pattern')}"))
    note = row["pattern_note"] if "pattern_note" in row.index else None
    if isinstance(note, str):
        rows.append(("off the walls", note))
    return rows


def _weighed(diag: KernelDiagnosis) -> str:
    """How the limiter was chosen among the claims (:mod:`roofline.guidance.headline`): the time it
    supports, and the other claims with theirs or why they were set aside; '' with one claim."""
    head = diag.headline
    if head is None or head.finding is None or len(head.claims) < 2:
        return ""
    support = head.support_s
    first = (f"{diag.limiter_label} supports {format_time(support)} ({head.finding.rule})" if math.isfinite(support)
             else f"{diag.limiter_label} ({head.finding.rule}; its support is not measured)")
    return "; ".join([first, *head.notes()])


def _renderable(row: pd.Series, diag: KernelDiagnosis, machine: Any, rate_unit: str = "FLOP/s") -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("kernel", Text(str(row["kernel_name"])))
    if "run" in row.index and pd.notna(row["run"]):  # several runs: the same name may be in each
        head.add_row("run", Text(str(row["run"])))
    if diag.phase:
        head.add_row("phase", Text(diag.phase))
    if machine is not None:
        head.add_row("machine", Text(str(getattr(machine, "name", machine))))
    for key, label in (("launches", "launches"), ("time_s", "time"), ("time_share", "share of total time"),
                       ("flop_rate", rate_unit), ("savable_time_s", "savable time")):
        if key in row.index:
            v = row[key]
            text = (format_si(v, rate_unit) if key == "flop_rate" else _fmt_value(key, v)) if pd.notna(v) else "-"
            head.add_row(label, text)
    for label, text in _pattern_rows(row, rate=rate_unit != "inst/s"):
        head.add_row(label, Text(text))
    head.add_row("limited by", Text(diag.limiter_label))
    head.add_row("what helps", Text(diag.sentence))
    weighed = _weighed(diag)
    if weighed:
        head.add_row("weighed", Text(weighed))

    rules = Table(show_lines=True, expand=True)
    rules.add_column("rule", no_wrap=True)
    rules.add_column("status", no_wrap=True)
    rules.add_column("finding", overflow="fold")
    style = {"fired": "yellow", "ok": "green", "missing": "dim"}
    order = {"fired": 0, "ok": 1, "missing": 2}
    beyond = diag.limiter == "inconsistent"  # the rules ran on figures beyond physical limits: nothing stands
    for f in sorted(diag.findings, key=lambda f: order.get(f.status, 3)):
        status = f.status if f.status != "fired" else (
            "set aside (inconsistent counters)" if beyond else f"{f.status} ({f.severity})")
        rules.add_row(Text(f.title), Text(status, style=style.get(f.status, "")),
                      Text(f.message + (f"\nsource: {f.source}" if f.source else "")))
    return Group(Panel(head, title="kernel"), rules)


def explain(analysis: Any, table: KernelTable | pd.DataFrame | None, kernel: str, *, diagnoses: Diagnoses | None = None,
            limit: int | None = MAX_EXPLAINED) -> Any:
    """A rich renderable with the full diagnosis of each kernel ``kernel`` matches (:func:`find_kernels`;
    all rows of each), the ``limit`` longest ones, with a line counting the others."""
    from rich.console import Group
    from rich.text import Text

    groups = find_kernels(analysis.frame, kernel)
    shown = groups if limit is None else groups[:limit]
    diag = diagnoses if diagnoses is not None else diagnose(analysis, table, rows=[i for rows in shown for i in rows])
    machine = getattr(analysis, "machine", None)
    spec = getattr(analysis, "work_spec", None)
    rate_unit = str(getattr(spec, "rate_unit", "FLOP/s"))
    parts: list[Any] = []
    if len(groups) > 1:
        rest = f"; the {len(shown)} longest shown" if len(shown) < len(groups) else ""
        parts.append(Text(f"{len(groups)} kernels match {kernel!r}{rest}"))
    parts += [_renderable(analysis.frame.loc[i], diag.for_index(i), machine, rate_unit) for rows in shown for i in rows]
    return Group(*parts)


def explain_text(analysis: Any, table: KernelTable | pd.DataFrame | None, kernel: str, *, width: int = 100,
                 diagnoses: Diagnoses | None = None) -> str:
    """:func:`explain` rendered as plain text (no colour)."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(explain(analysis, table, kernel, diagnoses=diagnoses))
    return console.export_text()


def explain_renderable(analysis: Any, table: KernelTable | pd.DataFrame | None, kernel: str) -> Any:
    """``roofline analyze --explain KERNEL``: same as :func:`explain`."""
    return explain(analysis, table, kernel)

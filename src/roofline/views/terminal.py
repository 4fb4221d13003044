"""Terminal views (rich): the ranked kernel table and a summary. They build renderables; the CLI prints."""

from __future__ import annotations

import math

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from roofline.analysis.result import Analysis
from roofline.kernels import has_runs
from roofline.machine.model import sources_summary
from roofline.units import format_number, format_si, format_time
from roofline.views.names import short_names
from roofline.views.style import level_label

UNKNOWN = "-"


def _num(value: object, fmt: str = "{:.3g}") -> str:
    """A number, or '-' when unknown (never 0 for unknown)."""
    if value is None or value is np.nan:
        return UNKNOWN
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return UNKNOWN
    return UNKNOWN if math.isnan(v) else fmt.format(v)


def _pct(value: object) -> str:
    return _num(value, "{:.1%}")


def _str(value: object) -> str:
    if value is None or value is np.nan:
        return UNKNOWN
    try:
        if value != value:  # NaN
            return UNKNOWN
    except TypeError:
        return UNKNOWN
    text = str(value)
    return UNKNOWN if text in ("<NA>", "nan", "") else text


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 kernel``, ``2 kernels`` (``words``: an irregular plural)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def kernel_table_renderable(analysis: Analysis, top: int | None = 20, sort: str = "time") -> Table:
    """Kernels ranked by time (or by ``sort``: see :func:`roofline.analysis.select.sort_rows`): (run, when
    several), name, launches, time, % time, FLOP/s, AI per level, bound, region, % of roofline, savable time.
    ``*`` after the name: FLOPs are a lower bound; ``~``: estimated."""
    if sort == "time":
        ranked = analysis.ranked.head(top)
    else:
        from roofline.analysis.select import sort_rows

        ranked = sort_rows(analysis.frame, sort, analysis.levels).head(top)
    names = short_names(list(ranked["kernel_name"].astype(str)))
    table = Table(title=f"Kernels by {sort} (top {len(ranked)} of {len(analysis.frame)})", title_justify="left")
    table.add_column("#", justify="right")
    runs = has_runs(analysis.frame)  # several runs side by side: say which each row is
    if runs:
        table.add_column("run")
    table.add_column("kernel", overflow="fold", max_width=48)
    table.add_column("launches", justify="right")
    table.add_column("time", justify="right")
    table.add_column("% time", justify="right")
    table.add_column("FLOP/s", justify="right")
    for lv in analysis.levels:
        table.add_column(f"AI {level_label(lv)}", justify="right")
    for col in ("bound", "region"):
        table.add_column(col)
    table.add_column("% roofline", justify="right")
    table.add_column("savable", justify="right")
    for i, (name, r) in enumerate(zip(names, ranked.to_dict("records")), start=1):
        flags = ("*" if r["flops_partial"] is True else "") + ("~" if r["estimated"] is True else "")
        rate = r["flop_rate"]
        row = [
            str(i), *([_str(r["run"])] if runs else []), name + flags, _str(r["launches"]), format_time(r["time_s"]), _pct(r["time_share"]),
            format_si(rate, "FLOP/s", digits=4),
            *[format_number(r[f"ai_{lv}"]) if _num(r[f"ai_{lv}"]) != UNKNOWN else UNKNOWN for lv in analysis.levels],
            _str(r["bound"]), _str(r["region"]), _pct(r["pct_of_roofline"]), format_time(r["savable_time_s"]),
        ]
        table.add_row(*row)
    legend = []
    if ranked["flops_partial"].fillna(False).any():
        legend.append("* FLOPs are a lower bound (a FLOP counter is missing)")
    if ranked["estimated"].fillna(False).any():
        legend.append("~ estimated counts")
    if legend:
        table.caption = "   ".join(legend)
    return table


def summary_renderable(analysis: Analysis, notes: bool = True) -> Group:
    """Totals (time, FLOPs, time per phase, shares per bound and region, zero-FLOP time), machine and,
    unless ``notes`` is false (the CLI prints them on stderr), the notes."""
    tot = analysis.totals
    flops = analysis.frame["flops"].to_numpy(dtype=float)
    counted = ("FLOPs unknown (not counted)" if len(flops) and np.isnan(flops).all()
               else f"{format_si(tot['flops'], 'FLOP')} counted")
    lines = [
        Text(f"total time {format_time(tot['time_s'])} in {plural(tot['launches'], 'launch', 'launches')} of "
             f"{plural(tot['kernels'], 'kernel')}; {counted}"),
    ]
    m = analysis.machine
    if m is not None:
        clk = f" at {format_si(m.sm_clock_hz, 'Hz')}" if m.sm_clock_hz else ""
        groups = m.ceilings_by_source()
        origin = f" ({next(iter(groups))}){clk}" if len(groups) == 1 else f"{clk}; {sources_summary(m)}"
        lines.append(Text(f"machine: {m.name}{origin}"))
    else:
        lines.append(Text("machine: none (no ceilings)"))
    share = tot["share_by_bound"]
    if share:
        lines.append(Text("time by bound: " + ", ".join(f"{k} {v:.1%}" for k, v in sorted(share.items(), key=lambda kv: -kv[1]))))
    share = tot["share_by_region"]
    if share:
        lines.append(Text("time by region: " + ", ".join(f"{k} {v:.1%}" for k, v in sorted(share.items(), key=lambda kv: -kv[1]))))
    if len(tot["time_by_phase"]) > 1 or "unknown" not in tot["time_by_phase"]:
        lines.append(Text("time by phase: " + ", ".join(f"{k} {format_time(v)}" for k, v in tot["time_by_phase"].items())))
    if tot["zero_flop_kernels"]:
        lines.append(Text(f"{plural(tot['zero_flop_kernels'], 'kernel')} without FLOPs: {format_time(tot['zero_flop_time_s'])} "
                          f"({_pct(tot['zero_flop_share'])} of time)"))
    if tot["unknown_flop_time_s"] > 0:
        lines.append(Text(f"time in kernels with unknown FLOPs: {format_time(tot['unknown_flop_time_s'])}"))
    if tot["savable_time_s"] == tot["savable_time_s"]:
        lines.append(Text(f"time above the roofline (savable): {format_time(tot['savable_time_s'])}"))
    for note in analysis.notes if notes else ():
        lines.append(Text(f"note: {note}", style="yellow"))
    return Group(*lines)

"""Terminal views (rich): the ranked kernel table and a summary. They build renderables; the CLI prints."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich.console import Group
from rich.table import Table
from rich.text import Text

from roofline.analysis.result import Analysis
from roofline.kernels import NO_OPERATOR, group_keys, has_runs
from roofline.machine.model import sources_summary
from roofline.units import format_number, format_si, format_time
from roofline.kernels.vendor import VendorWords
from roofline.views.work_words import WorkLabels, work_labels
from roofline.views.chart.style import bound_text, ceilings_caption, level_label

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


def intensity_text(value: object) -> str:
    """An intensity as a plain decimal; '∞' for work over no traffic at the level; '-' when unknown."""
    if _num(value) == UNKNOWN:
        return UNKNOWN
    v = float(value)  # type: ignore[arg-type]
    return "∞" if math.isinf(v) and v > 0 else format_number(v)


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


def _bound(value: object, words: VendorWords) -> str:
    """A row's bound in the vendor's words (:func:`~roofline.views.chart.style.bound_text`), or '-'."""
    text = _str(value)
    return UNKNOWN if text == UNKNOWN else bound_text(text, words)


def _pattern(pattern: object, per_transaction: object) -> str:
    """'random (0.0312)': the access pattern and its LD/ST instructions per transaction, or '-'."""
    name = _str(pattern)
    return UNKNOWN if name == UNKNOWN else f"{name} ({format_number(per_transaction)})"  # type: ignore[arg-type]


#: The legend of the pattern columns (the walls: :mod:`roofline.analysis.patterns`).
PATTERN_LEGEND = ("patterns: LD/ST warp instructions per transaction; global 1 = stride-0, 1/4 = unit stride, "
                  "1/32 = random; shared 1 = conflict-free, 1/n = n-way bank conflicts")


#: Headers of the key columns of a drill-down (``by=("module", "op", "phase", "kernel_name")``).
KEY_HEADERS = {"module": "module", "op": "operator", "phase": "phase", "process_id": "process", "device": "device",
               "stream": "stream", "launch_id": "launch"}


def row_header(by: str) -> str:
    """What a row of an analysis grouped ``by`` is: ``operator``, ``module``, else ``kernel``
    (a drill-down without ``kernel_name`` in its keys: ``group``)."""
    if by in ("op", "module"):
        return "operator" if by == "op" else "module"
    if "," in by and "kernel_name" not in by.split(","):
        return "group"
    return "kernel"


def _drill_keys(by: str) -> list[str]:
    """The key columns a drill-down's table shows beside the row's name (none for a named view)."""
    if "," not in by or "kernel_name" not in by.split(","):  # without kernels, the label holds the keys
        return []
    return [k for k in group_keys(by) if k in KEY_HEADERS]


def row_names(analysis: Analysis, names: list[str]) -> list[str]:
    """Display names of rows: operator and module labels whole, kernel names shortened as every view
    of ``analysis`` shortens them (:attr:`~roofline.analysis.result.Analysis.labels`)."""
    if row_header(analysis.by) in ("operator", "module", "group"):
        return names
    return analysis.kernel_labels(names)


def kernel_table_renderable(analysis: Analysis, top: int | None = 20, sort: str = "time") -> Table:
    """Kernels ranked by time (or by ``sort``: see :func:`roofline.analysis.select.sort_rows`): (run, when
    several), name, launches, time, % time, the work's rate (FLOP/s, OP/s or warp inst/s), intensity per
    level (FLOP/B, OP/B or instructions per transaction), under ``work="instructions"`` the global and
    shared access patterns, then bound, region, % of roofline, savable time. Levels, the bound and the
    ceilings are named in the vendor's words (``analysis.words``: vL1D, LDS, HBM and 'Matrix FP16' on AMD).
    ``*`` after the name: the work is a lower bound (a counter is missing; on AMD also packed math); ``~``: estimated.
    By operator or module the name column is ``operator`` or ``module`` (the rows' labels, whole);
    a drill-down shows its key columns (module, operator, phase) before the kernel."""
    if sort == "time":
        ranked = analysis.ranked.head(top)
    else:
        from roofline.analysis.select import sort_rows

        ranked = sort_rows(analysis.frame, sort, analysis.levels).head(top)
    labels = work_labels(analysis.work_spec)
    words = analysis.words
    patterns = labels.kind == "instructions"
    names = row_names(analysis, list(ranked["kernel_name"].astype(str)))
    header = row_header(analysis.by)
    drill = _drill_keys(analysis.by)
    what = {"operator": "Operators", "module": "Modules", "group": "Groups"}.get(header, "Kernels")
    title = f"{what} by {sort} (top {len(ranked)} of {len(analysis.frame)})"
    if labels.kind != "flops":
        title += f", {labels.roofline}"
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    runs = has_runs(analysis.frame)  # several runs side by side: say which each row is
    if runs:
        table.add_column("run")
    for k in drill:
        table.add_column(KEY_HEADERS[k], overflow="fold", max_width=32)
    table.add_column(header, overflow="fold", max_width=48)
    table.add_column("launches", justify="right")
    table.add_column("time", justify="right")
    table.add_column("% time", justify="right")
    table.add_column(labels.rate, justify="right")
    for lv in analysis.levels:
        table.add_column(f"{labels.intensity} {level_label(lv, words.levels)}", justify="right")
    if patterns:
        table.add_column("global pattern")
        table.add_column("shared pattern")
    for col in ("bound", "region"):
        table.add_column(col)
    table.add_column("% roofline", justify="right")
    table.add_column("savable", justify="right")
    shown = ["run", *drill, "launches", "time_s", "time_share", "flop_rate", *(f"ai_{lv}" for lv in analysis.levels),
             "global_pattern", "global_ii", "shared_pattern", "shared_ii", "bound", "region", "pct_of_roofline",
             "savable_time_s", "estimated", *([labels.partial] if labels.partial else [])]
    records = ranked[[c for c in dict.fromkeys(shown) if c in ranked.columns]].to_dict("records")  # cells shown only
    for i, (name, r) in enumerate(zip(names, records), start=1):
        partial = bool(labels.partial) and r.get(labels.partial) is True
        flags = ("*" if partial else "") + ("~" if r["estimated"] is True else "")
        row: list[str | Text] = [
            str(i), *([_str(r["run"])] if runs else []), *[Text(_str(r[k])) for k in drill], Text(name + flags), _str(r["launches"]), format_time(r["time_s"]), _pct(r["time_share"]),
            format_si(r["flop_rate"], labels.rate_unit, digits=4),
            *[intensity_text(r[f"ai_{lv}"]) for lv in analysis.levels],
            *([_pattern(r.get("global_pattern"), r.get("global_ii")),
               _pattern(r.get("shared_pattern"), r.get("shared_ii"))] if patterns else []),
            _bound(r["bound"], words), _str(r["region"]), _pct(r["pct_of_roofline"]), format_time(r["savable_time_s"]),
        ]
        table.add_row(*row)
    legend = []
    if labels.kind != "flops" and analysis.levels:
        legend.append(f"{labels.intensity}: {labels.intensity_unit}")
    if labels.partial and ranked[labels.partial].fillna(False).any():
        legend.append(f"* {labels.counted} are a lower bound ({words.lower_bound_why})")
    if ranked["estimated"].fillna(False).any():
        legend.append("~ estimated counts")
    if patterns:
        legend.append(PATTERN_LEGEND)
    if analysis.machine is not None:  # which ceiling the % roofline and savable columns divide by, from where
        used = [k for k in dict.fromkeys(ranked["compute_ceiling"].dropna().astype(str)) if k in analysis.machine.compute]
        legend.append(ceilings_caption(analysis.machine, [*analysis.levels, *used], words.levels, words))
    if legend:
        table.caption = "   ".join(legend)
    return table


def _amount(value: float, labels: WorkLabels) -> str:
    """A total of the work: '1.41 GFLOP', '160 MOP', '9 M warp instructions'."""
    if labels.kind == "instructions":
        return f"{format_si(value, '')} {labels.counted}".replace("  ", " ")
    return format_si(value, labels.unit)


#: Kernels named under "not on the chart" before the rest are counted.
UNDRAWN_LISTED = 10


def undrawn_lines(analysis: Analysis, limit: int = UNDRAWN_LISTED) -> list[Text]:
    """The kernels the analysis' chart cannot place, longest first, each with its share of the time
    and the reason (:func:`roofline.views.chart.rows.undrawn_kernels`); none when every kernel is placed."""
    from roofline.views.chart.rows import undrawn_kernels

    undrawn = undrawn_kernels(analysis)
    if not undrawn:
        return []
    labels = work_labels(analysis.work_spec)
    shares = [u.time_share for u in undrawn if u.time_share == u.time_share]
    share = f", {sum(shares):.1%} of time" if shares else ""
    lines = [Text(f"not on the {labels.roofline}: {plural(len(undrawn), 'kernel')}{share}")]
    names = [u.label for u in undrawn[:limit]]
    for name, u in zip(names, undrawn[:limit]):
        lines.append(Text(f"  {name}{f' [{u.phase}]' if u.phase else ''} {_pct(u.time_share)}: {u.reason}"))
    if len(undrawn) > limit:
        lines.append(Text(f"  and {plural(len(undrawn) - limit, 'more kernel')}"))
    return lines


def _of_what(analysis: Analysis) -> str:
    """What the launches are of: ``4 kernels`` (a row per launch: its distinct names), ``3 operators``."""
    if analysis.by == "launch":
        return plural(int(analysis.frame["kernel_name"].nunique()), "kernel")
    noun = analysis.row_noun
    return plural(int(analysis.totals["kernels"]), noun[:-1], noun)


def summary_renderable(analysis: Analysis, notes: bool = True) -> Group:
    """Totals (time, the work counted, time per phase, shares per bound and region, time in kernels
    without the work or with it unknown), machine, the kernels the chart cannot place with why, and,
    unless ``notes`` is false (the CLI prints them on stderr), the notes."""
    tot = analysis.totals
    labels = work_labels(analysis.work_spec)
    work = analysis.frame[analysis.work_spec.total].to_numpy(dtype=float, na_value=np.nan)
    counted = (f"{labels.counted} unknown (not counted)" if len(work) and np.isnan(work).all()
               else f"{_amount(tot['work_total'], labels)} counted")
    lines = [
        Text(f"total time {format_time(tot['time_s']) if tot['time_s'] == tot['time_s'] else 'unknown'} in "
             f"{plural(tot['launches'], 'launch', 'launches')} of {_of_what(analysis)}; {counted}"),
    ]
    if labels.kind != "flops":
        lines.append(Text(f"work: {labels.counted} ({labels.roofline}: {labels.rate} against "
                          f"{labels.intensity_unit})"))
    m = analysis.machine
    if m is not None:
        clk = f" at {format_si(m.sm_clock_hz, 'Hz')}" if m.sm_clock_hz else ""
        groups = m.ceilings_by_source()
        words = analysis.words  # NVIDIA's keys in upper case, as ever; an AMD GPU's in its words
        summary = sources_summary(m, words.levels, words.matrix) if words.is_amd else sources_summary(m)
        origin = f" ({next(iter(groups))}){clk}" if len(groups) == 1 else f"{clk}; {summary}"
        lines.append(Text(f"machine: {m.name}{origin}"))
    else:
        lines.append(Text("machine: none (no ceilings)"))
    share = tot["share_by_bound"]
    if share:
        lines.append(Text("time by bound: " + ", ".join(f"{bound_text(k, analysis.words)} {v:.1%}"
                                                        for k, v in sorted(share.items(), key=lambda kv: -kv[1]))))
    share = tot["share_by_region"]
    if share:
        lines.append(Text("time by region: " + ", ".join(f"{k} {v:.1%}" for k, v in sorted(share.items(), key=lambda kv: -kv[1]))))
    if len(tot["time_by_phase"]) > 1 or tot["time_by_phase"].keys() - {"unknown"}:
        lines.append(Text("time by phase: " + ", ".join(f"{k} {format_time(v)}" for k, v in tot["time_by_phase"].items())))
    if tot["zero_work_kernels"]:
        zero_share = tot["zero_work_time_s"] / tot["time_s"] if tot["time_s"] > 0 else math.nan
        lines.append(Text(f"{plural(tot['zero_work_kernels'], 'kernel')} without {labels.counted}: "
                          f"{format_time(tot['zero_work_time_s'])} ({_pct(zero_share)} of time)"))
    if tot["unknown_work_time_s"] > 0:
        lines.append(Text(f"time in kernels with unknown {labels.counted}: {format_time(tot['unknown_work_time_s'])}"))
    if tot["savable_time_s"] == tot["savable_time_s"]:
        lines.append(Text(f"time above the roofline (savable): {format_time(tot['savable_time_s'])}"))
    lines.extend(undrawn_lines(analysis))
    for note in analysis.notes if notes else ():
        lines.append(Text(f"note: {note}", style="yellow"))
    return Group(*lines)


def _ratio(value: object) -> str:
    """A ratio estimated / measured: '0.909'; '-' when unknown."""
    return _num(value, "{:.3g}")


def comparison_renderable(comparison: pd.DataFrame, by: str = "op", top: int | None = None) -> Table:
    """The measured-vs-estimated table (:func:`roofline.analysis.estimate.measured_vs_estimated`): per
    operator and phase, or module, the measured and estimated launches, time, FLOPs and DRAM bytes,
    with the ratios estimated / measured. Unknown values (a side without the row, an uncounted
    quantity, a ratio over 0) show as '-'."""
    rows = comparison.head(top) if top is not None else comparison
    shown = f"top {len(rows)} of {len(comparison)}" if len(rows) < len(comparison) else f"{len(rows)} rows"
    table = Table(title=f"Measured vs estimated, by {'operator' if by == 'op' else by} ({shown}); ratio = estimated / measured",
                  title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("operator" if by == "op" else "module", overflow="fold", max_width=48)
    if by == "op":
        table.add_column("phase")
    for header in ("launches", "est. launches", "time", "est. time", "ratio", "FLOPs", "est. FLOPs", "ratio",
                   "DRAM B", "est. DRAM B", "ratio"):
        table.add_column(header, justify="right")
    for i, r in enumerate(rows.to_dict("records"), start=1):
        table.add_row(
            str(i), *([Text(_str(r["op"]) if _str(r["op"]) != UNKNOWN else NO_OPERATOR), Text(_str(r["phase"]))]
                      if by == "op" else [Text(_str(r["label"]))]), _num(r["measured_launches"], "{:.0f}"), _num(r["estimated_launches"], "{:.0f}"),
            format_time(r["measured_time_s"]), format_time(r["estimated_time_s"]), _ratio(r["time_ratio"]),
            format_si(r["measured_flops"], "FLOP"), format_si(r["estimated_flops"], "FLOP"), _ratio(r["flops_ratio"]),
            format_si(r["measured_dram_bytes"], "B"), format_si(r["estimated_dram_bytes"], "B"),
            _ratio(r["dram_bytes_ratio"]),
        )
    table.caption = "estimated DRAM bytes are tensor sizes (an estimate of DRAM traffic); - unknown or no counterpart"
    return table

"""The interactive hierarchical roofline (plotly): one self-contained, offline HTML file.

One trace per memory level (and per phase, when the analysis has phases), grouped
in the legend by level, so that a click on a level hides or shows it; buttons pick
a phase. Hover shows the kernel, its time, rate, intensities, limiter, region and
% of roofline, in the analysis's work (FLOPs, operations or warp instructions). Kernel names are C++ templates full of ``<``, ``>`` and ``&``, and
plotly renders hover text as HTML: every name is escaped before it reaches plotly.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from roofline.analysis.result import Analysis
from roofline.analysis.work import FLOPS, Work
from roofline.kernels.vendor import VendorWords
from roofline.machine.model import Machine
from roofline.units import format_number, format_si
from roofline.kernels.labels import short_name
from roofline.views.chart.style import (
    SOURCE_WORDS,
    axis_texts,
    bound_text,
    ceiling_source,
    ceilings_caption,
    chart_compute_ceilings,
    chart_levels,
    compute_ceiling_label,
    level_color,
    level_label,
    level_marker,
    memory_ceiling_label,
    memory_ceilings,
    merge_equal_ceilings,
    not_shown_note,
    select_rows,
    vendor_labels,
)

#: plotly symbols of the matplotlib markers of :data:`roofline.views.chart.style.LEVEL_MARKERS`.
PLOTLY_MARKERS = {"o": "circle", "s": "square", "D": "diamond"}
#: Chart titles per work.
TITLES = {"flops": "Hierarchical roofline", "ops": "Hierarchical roofline of operations",
          "instructions": "Hierarchical instruction roofline"}

#: Marker diameter (px) of the longest kernel; marker area is proportional to time.
MAX_MARKER_PX = 40.0
MIN_MARKER_PX = 4.0


def _fmt_ratio(value: float) -> str:
    return "-" if not np.isfinite(value) else f"{100 * value:.1f}%"


def _fmt_ai(value: float) -> str:
    return format_number(value)


def _text(value: object) -> str:
    return "-" if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else str(value)


def _hover(rows: pd.DataFrame, levels: list[str], level_labels: Mapping[str, str] | None,
           work: Work = FLOPS, words: VendorWords | None = None, labels: Mapping[str, str] | None = None) -> list[str]:
    """Hover text per row, HTML-escaped (kernel names are untrusted text); the bound in the vendor's
    ``words`` (:func:`~roofline.views.chart.style.bound_text`); each kernel's label first (``labels``: the
    analysis's, :attr:`~roofline.analysis.result.Analysis.labels`; a name it lacks shortened alone)."""
    texts = axis_texts(work)
    intensity = "AI" if work.kind == "flops" else "intensity"
    out = []
    for r in rows.itertuples(index=False):
        d = r._asdict()
        name = html.escape(str(d["kernel_name"]))
        ais = ", ".join(f"{html.escape(level_label(lv, level_labels))} {_fmt_ai(d[f'ai_{lv}'])}" for lv in levels)
        flags = []
        if work.partial and d.get(work.partial) is True:
            flags.append(f"{work.unit}s are a lower bound")
        if d["estimated"] is True:
            flags.append("estimated counts")
        lines = [
            f"<b>{html.escape((labels or {}).get(str(d['kernel_name'])) or short_name(str(d['kernel_name'])))}</b>",
            name if len(name) <= 160 else name[:157] + "...",
            f"phase: {html.escape(_text(d['phase']))}; launches: {_text(d['launches'])}"
            + (f"; launch id: {_text(d['launch_id'])}" if d.get("launch_id") is not None
               and d["launch_id"] is not pd.NA else ""),
            f"time: {format_si(d['time_s'], 's')} ({_fmt_ratio(d['time_share'])} of total)",
            f"performance: {format_si(d['flop_rate'], texts.rate_unit)}",
            f"{intensity} ({texts.intensity_unit}): {ais}",
            f"bound: {html.escape(_bound(d['bound'], words))}; region: {html.escape(_text(d['region']))}",
            f"% of roofline: {_fmt_ratio(d['pct_of_roofline'])}; savable: {format_si(d['savable_time_s'], 's')}",
        ]
        if flags:
            lines.append("<i>" + "; ".join(flags) + "</i>")
        out.append("<br>".join(lines))
    return out


def _bound(value: object, words: VendorWords | None) -> str:
    """A row's bound for the hover: '-' when unknown, else in the vendor's words."""
    text = _text(value)
    return bound_text(text, words) if words is not None and text != "-" else text


def shared_in_use(machine: Machine | None, draw_levels: Sequence[str], levels: Sequence[str] | None,
                  shown: pd.DataFrame) -> list[str]:
    """The levels whose ceilings a chart draws: the machine's (``levels`` when given), shared memory
    only where a kernel drawn has a shared intensity (its line would lie near L1's, unused)."""
    if machine is None or levels is not None:
        return list(draw_levels)
    ai = shown["ai_shared"].to_numpy(dtype=float) if "ai_shared" in shown else np.zeros(0)
    used = bool((np.isfinite(ai) & (ai > 0)).any())
    return [lv for lv in machine.levels if lv != "shared" or (lv in draw_levels and used)]


def marker_diameters(time_s: np.ndarray, t_max: float) -> np.ndarray:
    """Marker diameters (px): area proportional to time, the longest ``MAX_MARKER_PX`` across."""
    t = np.nan_to_num(np.asarray(time_s, dtype=float))
    return np.maximum(MIN_MARKER_PX, MAX_MARKER_PX * np.sqrt(t / t_max)) if t.size else t


def level_traces(shown: pd.DataFrame, levels: Sequence[str], work: Work, level_labels: Mapping[str, str] | None,
                 diam: np.ndarray, phases: Sequence[str | None] = (None,), phase_col: pd.Series | None = None,
                 words: VendorWords | None = None,
                 labels: Mapping[str, str] | None = None) -> tuple[list[go.Scatter], list[str | None]]:
    """One marker trace per level (and phase) at (intensity at the level, rate), grouped in the
    legend by level, with hover text (the bound in the vendor's ``words``); and the phase of each trace."""
    partial = (shown[work.partial].fillna(False).to_numpy(dtype=bool) if work.partial in shown
               else np.zeros(len(shown), dtype=bool))
    estimated = shown["estimated"].fillna(False).to_numpy(dtype=bool)
    hover = np.array(_hover(shown, list(levels), level_labels, work, words, labels), dtype=object)
    rates = shown["flop_rate"].to_numpy(dtype=float)
    traces: list[go.Scatter] = []
    trace_phase: list[str | None] = []
    for lv in levels:
        x = shown[f"ai_{lv}"].to_numpy(dtype=float)
        if not (np.isfinite(x) & (x > 0)).any():  # no kernel with traffic at the level: no empty legend entry
            continue
        symbols = np.where(estimated, "diamond", PLOTLY_MARKERS.get(level_marker(lv), "circle"))
        symbols = np.where(partial, np.char.add(symbols.astype(str), "-open"), symbols)
        for ph in phases:
            m = np.isfinite(x) & (x > 0)
            if ph is not None and phase_col is not None:
                m &= (phase_col == ph).to_numpy()
            name = html.escape(level_label(lv, level_labels)) + (f" ({html.escape(ph)})" if ph else "")
            traces.append(go.Scatter(
                x=x[m], y=rates[m], mode="markers", name=name, legendgroup=lv,
                marker={"size": diam[m], "color": level_color(lv), "symbol": symbols[m],
                        "line": {"width": 1.5, "color": level_color(lv)}, "opacity": 0.8},
                hovertext=hover[m], hovertemplate="%{hovertext}<extra></extra>",
            ))
            trace_phase.append(ph)
    return traces, trace_phase


def roofline_plotly(
    analysis: Analysis,
    *,
    title: str | None = None,
    levels: Sequence[str] | None = None,
    level_labels: Mapping[str, str] | None = None,
    ceilings: str = "used",
) -> go.Figure:
    """The interactive chart as a plotly Figure (log axes, ceilings as labelled lines).

    ``ceilings``: ``"used"`` (the precisions the kernels use plus the highest) or ``"all"``;
    the machine's memory levels are all drawn (an L3 without byte counts too).
    """
    draw_levels = chart_levels(analysis, levels)
    rows = select_rows(analysis, None, draw_levels)
    shown = rows.shown
    machine = analysis.machine
    work = analysis.work_spec
    texts = axis_texts(work)
    words = analysis.words
    level_labels = vendor_labels(words, level_labels)
    fig = go.Figure()

    phases: list[str | None] = [None]
    phase_col = shown["phase"].astype("string").fillna("(no phase)")
    if not analysis.sums_phases and shown["phase"].notna().any():
        phases = sorted(set(phase_col))

    t = shown["time_s"].to_numpy(dtype=float)
    traces, trace_phase = level_traces(shown, draw_levels, work, level_labels,
                                       marker_diameters(t, float(np.nanmax(t)) if t.size else 1.0), phases, phase_col,
                                       words, rows.labels)
    fig.add_traces(traces)

    ais = np.concatenate([shown[f"ai_{lv}"].to_numpy(dtype=float) for lv in draw_levels]) if draw_levels else np.zeros(0)
    comp = chart_compute_ceilings(machine, shown, ceilings, work)
    mem_levels = shared_in_use(machine, draw_levels, levels, shown)
    mem = memory_ceilings(machine, mem_levels, work)
    for trace in ceiling_traces(machine, mem, comp, ais, level_labels, texts.traffic_rate_unit, words):
        fig.add_trace(trace)
        trace_phase.append("ceiling")

    if len(phases) > 1:
        buttons = [{"label": "all phases", "method": "update",
                    "args": [{"visible": [True] * len(trace_phase)}]}]
        for ph in phases:
            vis = [p in (ph, "ceiling") for p in trace_phase]
            buttons.append({"label": html.escape(str(ph)), "method": "update", "args": [{"visible": vis}]})
        fig.update_layout(updatemenus=[{"type": "buttons", "direction": "right", "buttons": buttons,
                                        "x": 0.0, "y": 1.12, "xanchor": "left", "yanchor": "top"}])

    notes = [html.escape(not_shown_note(rows))] if not_shown_note(rows) else []
    notes.append(f"marker area ∝ kernel time; open markers: {work.unit}s are a lower bound; diamonds: estimated counts"
                 + ("; squares: shared memory" if "shared" in draw_levels else ""))
    if machine is not None:
        notes.append(html.escape(ceilings_caption(machine, [*mem, *comp], level_labels, words)))
    else:
        notes.append("no machine: ceilings not drawn")
    fig.add_annotation(text="<br>".join(notes), xref="paper", yref="paper", x=0, y=-0.16, showarrow=False,
                       xanchor="left", yanchor="top", align="left", font={"size": 11, "color": "#555"})
    fig.update_layout(
        title={"text": html.escape(title) if title else TITLES.get(work.kind, "Hierarchical roofline")},
        xaxis={"type": "log", "title": {"text": texts.x_label}, "exponentformat": "none"},
        yaxis={"type": "log", "title": {"text": texts.y_label}, "tickformat": "~s"},
        template="simple_white", legend={"groupclick": "togglegroup"}, height=650,
        margin={"b": 140}, hoverlabel={"align": "left"},
    )
    return fig


def ceiling_traces(machine: Machine | None, mem: Mapping[str, float], comp: Mapping[str, float], xs: np.ndarray,
                   level_labels: Mapping[str, str] | None = None, traffic_unit: str = "B/s",
                   words: VendorWords | None = None) -> list[go.Scatter]:
    """Labelled lines of the memory ceilings ``mem`` (diagonals up to the highest compute ceiling;
    levels of one value share one label) and of the compute ceilings ``comp`` (equal ones merged, named
    in the vendor's ``words``), over an x range holding ``xs`` (intensities) and the ridge points; none
    without both kinds."""
    if machine is None or not comp or not mem:
        return []
    xs = xs[np.isfinite(xs) & (xs > 0)]
    top_peak = max(comp.values())
    bw_max = max(mem.values())
    x_lo = min([*xs, min(comp.values()) / bw_max]) / 10
    x_hi = max([*xs, top_peak / min(mem.values())]) * 10
    traces = []
    for group, bw in merge_equal_ceilings(mem):
        label = html.escape(memory_ceiling_label(group, bw, level_labels, traffic_unit))
        for j, lv in enumerate(group):
            src = html.escape(SOURCE_WORDS.get(ceiling_source(machine, lv), ""))
            own = html.escape(memory_ceiling_label(lv, bw, level_labels, traffic_unit))
            traces.append(go.Scatter(x=[x_lo, top_peak / bw], y=[bw * x_lo, top_peak], mode="lines+text",
                                     line={"color": level_color(lv), "width": 2, "dash": "solid" if j == 0 else "dash"},
                                     name=own, legendgroup=f"ceiling-{lv}", text=[label if j == 0 else "", ""],
                                     textposition="top right", textfont={"color": level_color(group[0])},
                                     hovertext=f"{own} ({src})", hoverinfo="text"))
    for i, (keys, peak) in enumerate(merge_equal_ceilings(comp)):
        label = html.escape(compute_ceiling_label(keys, peak, words))
        src = html.escape(", ".join(sorted({SOURCE_WORDS.get(ceiling_source(machine, k), "") for k in keys})))
        traces.append(go.Scatter(x=[peak / bw_max, x_hi], y=[peak, peak], mode="lines+text",
                                 line={"color": "#262626", "width": 2, "dash": "solid" if i == 0 else "dash"},
                                 name=label, legendgroup=f"ceiling-{'+'.join(keys)}", text=["", label],
                                 textposition="top left", hovertext=f"{label} ({src})", hoverinfo="text"))
    return traces


def roofline_html(analysis: Analysis, **kwargs: object) -> str:
    """The interactive chart as one self-contained HTML page (plotly.js inlined: works offline)."""
    fig = roofline_plotly(analysis, **kwargs)  # type: ignore[arg-type]
    return fig.to_html(full_html=True, include_plotlyjs=True, include_mathjax=False,
                       config={"displaylogo": False, "responsive": True})

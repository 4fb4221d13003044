"""The interactive instruction roofline (plotly): the content of
:func:`roofline.views.chart.instructions.instruction_figure` with hover text.

Left, (a) the hierarchical instruction roofline (warp instructions/s against warp instructions per
transaction, one marker per level per kernel); right, (b) the memory-access pattern (LD/ST warp
instructions per L1 sector and per shared wavefront against those instructions per second), with
the walls of Ding and Williams (PMBS 2019) as labelled vertical lines and the L1 and shared
transaction-rate ceilings as diagonals. Kernel names are escaped before they reach plotly.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from roofline.analysis.result import Analysis
from roofline.analysis.work import INSTRUCTIONS
from roofline.units import format_number, format_si
from roofline.views.chart.layout import wrap
from roofline.views.chart.instructions import PATTERN_LEVELS, PATTERN_TEXTS, TITLE_A, TITLE_B, walls
from roofline.views.chart.interactive import (
    PLOTLY_MARKERS,
    ceiling_traces,
    level_traces,
    marker_diameters,
    shared_in_use,
)
from roofline.views.chart.rows import not_shown_note, pattern_rows, require_drawable, select_rows
from roofline.kernels.labels import short_name
from roofline.views.chart.style import (
    axis_texts,
    ceilings_caption,
    chart_compute_ceilings,
    chart_levels,
    level_color,
    level_label,
    level_marker,
    memory_ceilings,
    vendor_labels,
)

#: Characters per line of the notes under the chart.
NOTE_CHARS = 170
#: Series names of panel (b) in the legend and hover text.
SERIES_NAMES = {"global": "global/local LD/ST (per L1 sector)", "shared": "shared LD/ST (per wavefront)"}


def _pattern_hover(shown: pd.DataFrame, name: str, ii: np.ndarray, rate: np.ndarray,
                   labels: Mapping[str, str] | None = None) -> list[str]:
    """Hover text of panel (b)'s markers, HTML-escaped; each kernel's label first (``labels``: the analysis's)."""
    pattern = shown[f"{name}_pattern"].astype("string")
    out = []
    for k, kernel in enumerate(shown["kernel_name"].astype(str)):
        per = 1 / ii[k] if ii[k] > 0 else float("nan")
        unit = "sectors" if name == "global" else "wavefronts"
        out.append("<br>".join([
            f"<b>{html.escape((labels or {}).get(kernel) or short_name(kernel))}</b>",
            html.escape(kernel if len(kernel) <= 160 else kernel[:157] + "..."),
            f"{SERIES_NAMES[name]}: {format_number(ii[k])} inst/transaction ({format_number(per)} {unit} per instruction)",
            f"pattern: {html.escape(str(pattern.iloc[k]) if pd.notna(pattern.iloc[k]) else '-')}",
            f"LD/ST rate: {format_si(rate[k], 'inst/s')}; time: {format_si(float(shown['time_s'].iloc[k]), 's')}",
        ]))
    return out


def instruction_plotly(
    analysis: Analysis,
    *,
    title: str | None = None,
    levels: Sequence[str] | None = None,
    level_labels: Mapping[str, str] | None = None,
    ceilings: str = "used",
) -> go.Figure:
    """The instruction roofline of ``analysis`` (``work="instructions"``) as a plotly Figure with two
    panels (see the module docstring). Raises ValueError for another work, InputError when panel (a)
    can draw no kernel; the kernels a panel cannot draw are named under it with their share and why."""
    if analysis.work != "instructions":
        raise ValueError(f"instruction_plotly needs analyze(..., work='instructions'), not work={analysis.work!r}")
    draw_levels = chart_levels(analysis, levels)
    rows_a = select_rows(analysis, None, draw_levels)
    require_drawable(rows_a)
    rows_b = pattern_rows(analysis)
    machine = analysis.machine
    texts = axis_texts(INSTRUCTIONS)
    words = analysis.words
    level_labels = vendor_labels(words, level_labels)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(TITLE_A, TITLE_B), horizontal_spacing=0.1)

    times = np.concatenate([rows_a.shown["time_s"].to_numpy(dtype=float), rows_b.shown["time_s"].to_numpy(dtype=float)])
    t_max = float(np.nanmax(times)) if times.size else 1.0
    shown = rows_a.shown
    traces, _ = level_traces(shown, draw_levels, INSTRUCTIONS, level_labels,
                             marker_diameters(shown["time_s"].to_numpy(dtype=float), t_max), words=words,
                             labels=rows_a.labels)
    for trace in traces:
        fig.add_trace(trace, row=1, col=1)
    comp = chart_compute_ceilings(machine, shown, ceilings, INSTRUCTIONS)
    mem_levels = shared_in_use(machine, draw_levels, levels, shown)
    mem = memory_ceilings(machine, mem_levels, INSTRUCTIONS)
    ais = np.concatenate([shown[f"ai_{lv}"].to_numpy(dtype=float) for lv in draw_levels]) if draw_levels else np.zeros(0)
    for trace in ceiling_traces(machine, mem, comp, ais, level_labels, texts.traffic_rate_unit, words):
        fig.add_trace(trace, row=1, col=1)

    # -- (b) ---------------------------------------------------------------------------------
    pb = rows_b.shown
    time_b = pb["time_s"].to_numpy(dtype=float)
    diam = marker_diameters(time_b, t_max)
    xs_b, ys_b = [], []
    for name, inst_col, ii_col, level in PATTERN_LEVELS:
        ii = pb[ii_col].to_numpy(dtype=float)
        inst = pb[inst_col].to_numpy(dtype=float) if inst_col in pb else np.full(len(pb), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(time_b > 0, inst / time_b, np.nan)  # LD/ST warp instructions per second
        m = np.isfinite(ii) & (ii > 0) & np.isfinite(rate) & (rate > 0)
        xs_b.append(ii[m])
        ys_b.append(rate[m])
        hover = np.array(_pattern_hover(pb, name, ii, rate, rows_b.labels), dtype=object)
        fig.add_trace(go.Scatter(
            x=ii[m], y=rate[m], mode="markers", name=f"{level_label(level, level_labels)}: {SERIES_NAMES[name]}",
            legendgroup=f"pattern-{name}",
            marker={"size": diam[m], "color": level_color(level), "symbol": PLOTLY_MARKERS[level_marker(level)],
                    "line": {"width": 1.5, "color": level_color(level)}, "opacity": 0.8},
            hovertext=hover[m], hovertemplate="%{hovertext}<extra></extra>"), row=1, col=2)
    peak = machine.compute.get("warp_inst") if machine is not None else None
    pattern_mem = memory_ceilings(machine, ["l1", "shared"], INSTRUCTIONS)
    pattern_comp = {"warp_inst": float(peak)} if peak else {}
    wall_x = np.array([w.x for w in walls()])
    for trace in ceiling_traces(machine, pattern_mem, pattern_comp, np.concatenate([*xs_b, wall_x]), level_labels,
                                texts.traffic_rate_unit, words):
        trace.showlegend = False
        fig.add_trace(trace, row=1, col=2)
    y_known = np.concatenate(ys_b) if ys_b else np.zeros(0)
    y_low = float(np.min(y_known)) / 10 if y_known.size else (peak or 1e12) / 1e4
    for wall in walls():
        roofs = [wall.x * pattern_mem[lv] for lv in wall.levels if lv in pattern_mem]
        roof = min(max(roofs), peak) if roofs and peak else (max(roofs) if roofs else float(np.max(y_known, initial=y_low * 1e3)))
        label = html.escape(wall.label).replace("\n", " · ")
        fig.add_trace(go.Scatter(x=[wall.x, wall.x], y=[y_low, roof], mode="lines+text", showlegend=False,
                                 line={"color": "#595959", "width": 1.5, "dash": "dash"}, text=["", label],
                                 textposition="top center", textfont={"size": 10, "color": "#404040"},
                                 hovertext=f"wall: {label} ({format_number(wall.x)} LD/ST instructions per transaction)",
                                 hoverinfo="text", name=f"wall: {label}"), row=1, col=2)

    notes = ["marker area ∝ kernel time; (b): global and local loads and stores per L1 sector (circles), shared per "
             "wavefront (squares); walls for 4-byte words (Ding &amp; Williams, PMBS 2019)"]
    for tag, rows in (("(a)", rows_a), ("(b)", rows_b)):
        if note := not_shown_note(rows):
            notes.append(f"{tag} {html.escape(note)}")
    if machine is not None:
        keys = list(dict.fromkeys([*mem, *pattern_mem, *comp]))
        notes.append(html.escape(ceilings_caption(machine, keys, level_labels, words)))
    else:
        notes.append("no machine: ceilings not drawn")
    fig.add_annotation(text="<br>".join(wrap(notes, NOTE_CHARS)), xref="paper", yref="paper", x=0, y=-0.16,
                       showarrow=False,
                       xanchor="left", yanchor="top", align="left", font={"size": 11, "color": "#555"})
    fig.update_xaxes(type="log", exponentformat="none", dtick=1)  # a tick per decade
    fig.update_yaxes(type="log", tickformat="~s", dtick=1)
    fig.update_xaxes(title_text=texts.x_label, row=1, col=1)
    fig.update_yaxes(title_text=texts.y_label, row=1, col=1)
    fig.update_xaxes(title_text=PATTERN_TEXTS.x_label, row=1, col=2)
    fig.update_yaxes(title_text=PATTERN_TEXTS.y_label, row=1, col=2)
    fig.update_layout(title={"text": html.escape(title) if title else "Instruction roofline"},
                      template="simple_white", legend={"groupclick": "togglegroup"},
                      height=700, margin={"b": 190}, hoverlabel={"align": "left"})
    return fig


def instruction_html(analysis: Analysis, **kwargs: object) -> str:
    """The interactive instruction roofline as one self-contained HTML page (plotly.js inlined)."""
    fig = instruction_plotly(analysis, **kwargs)  # type: ignore[arg-type]
    return fig.to_html(full_html=True, include_plotlyjs=True, include_mathjax=False,
                       config={"displaylogo": False, "responsive": True})

"""Before/after on one hierarchical roofline, with an arrow from each before-point to its after-point.

The look is the analysis chart's (shared code in :mod:`roofline.views.chart.layout`):
SI decade ticks, ceiling labels that cannot collide, display names ('Tensor FP16').
Colour is the memory level; a hollow marker is the run before, a filled one the run
after. When both runs used the same ceilings they are drawn once (highest solid, the
others dashed); else the before machine's are solid and the after machine's dashed.
``comparison_figure`` returns a matplotlib Figure, ``comparison_plotly`` a plotly
Figure; the caller saves them. ``sides`` names the two runs in the legend, the hover text and the
default title (``("before", "after")``; a projection says ``("here", "there")``).
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from roofline.comparison import Comparison
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords
from roofline.units import format_number, format_si
from roofline.views.chart.style import chart_compute_ceilings, compute_ceiling_label, level_label, memory_ceiling_label
from roofline.views.chart.style import level_color as _color

#: Kernels whose time changed by at least this many percent are numbered on the chart.
LABEL_CHANGE_PCT = 1.0
#: Marker areas (pt^2): the hollow before-ring is larger, so that an unchanged kernel shows
#: as a filled dot inside a ring rather than one hiding the other.
POINT_AREA, BEFORE_AREA = 24.0, 60.0
#: The words for the two runs, by default.
SIDES = ("before", "after")


def _rows(comp: Comparison, top: int) -> Any:
    return comp.frame.head(top)


def _words(comp: Comparison, side: str) -> VendorWords:
    """The words of one side's profile (``"before"`` or ``"after"``): an AMD GPU's levels and matrix units."""
    return getattr(getattr(comp, side), "words", NVIDIA_WORDS)


def _level_name(comp: Comparison, level: str, upper: bool = False) -> str:
    """A level as the legend names it: in both sides' words, 'DRAM / HBM+MALL (EA)' where they differ (an
    NVIDIA and an AMD profile); ``upper``: NVIDIA's key in upper case ('SHARED'), as the hover has it."""
    before, after = _words(comp, "before"), _words(comp, "after")
    if upper and not (before.is_amd or after.is_amd):
        return level.upper()
    a, b = level_label(level, before.levels), level_label(level, after.levels)
    return a if a == b else f"{a} / {b}"


def _side_ceilings(comp: Comparison, side: str, ceilings: str) -> dict[str, float]:
    run = getattr(comp, side)
    return chart_compute_ceilings(getattr(run, "machine", None), run.frame, ceilings)


def _ceiling_lines(machine: Any, levels: tuple[str, ...], compute: dict[str, float], x_lo: float,
                   x_hi: float, words: VendorWords = NVIDIA_WORDS) -> list[dict[str, Any]]:
    """Line segments of a machine's roofline: one sloped line per level, one flat line per compute peak,
    labelled in its profile's ``words``."""
    if machine is None or not compute:
        return []
    top_peak = max(compute.values())
    out = []
    for lv in levels:
        bw = machine.memory.get(lv)
        if bw:
            out.append({"kind": "memory", "key": lv, "x": [x_lo, top_peak / bw], "y": [bw * x_lo, top_peak],
                        "label": memory_ceiling_label(lv, bw, words.levels)})
    bw_max = max([machine.memory[lv] for lv in levels if lv in machine.memory] or [1.0])
    for key, peak in compute.items():
        out.append({"kind": "compute", "key": key, "x": [peak / bw_max, x_hi], "y": [peak, peak],
                    "label": compute_ceiling_label(key, peak, words)})
    return out


def _x_range(comp: Comparison, rows: Any) -> tuple[float, float]:
    xs = []
    for lv in comp.levels:
        for side in ("before", "after"):
            v = rows[f"ai_{lv}_{side}"].to_numpy(dtype=float)
            xs.extend(v[np.isfinite(v) & (v > 0)])
    for m in (getattr(comp.before, "machine", None), getattr(comp.after, "machine", None)):
        if m is not None and m.compute and m.memory:
            xs.append(max(m.compute.values()) / min(m.memory.values()))
    if not xs:
        return 1e-2, 1e2
    return min(xs) / 10.0, max(xs) * 10.0


def _machines(comp: Comparison, sides: tuple[str, str] = SIDES) -> list[tuple[str, Any, str]]:
    """(label, machine, side) to draw: the label names the side in ``sides``' words, the side is
    ``"before"`` or ``"after"``."""
    mb, ma = getattr(comp.before, "machine", None), getattr(comp.after, "machine", None)
    if comp.same_machine:
        return [("", mb, "before")] if mb is not None else []
    out = []
    if mb is not None:
        out.append((f"{sides[0]}: {mb.name}", mb, "before"))
    if ma is not None:
        out.append((f"{sides[1]}: {ma.name}", ma, "after"))
    return out


def _legend_fits(labels: list[str], fs: float, room_in: float) -> bool:
    """True when a one-row legend of ``labels`` (font size ``fs``, handles and spacing as
    :func:`comparison_figure` draws them) fits in ``room_in`` inches: long machine names or side
    words need a second row."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(1, 1, 72)  # 72 dpi: pixels are points
    prop = FontProperties(size=fs)
    text = sum(renderer.get_text_width_height_descent(label, prop, ismath=False)[0] for label in labels)
    # per entry: handle 1.6 em + pad 0.3 em; between entries 1.0 em; the legend's border pad 0.4 em a side
    return text + fs * (1.9 * len(labels) + 1.0 * (len(labels) - 1) + 0.8) <= room_in * 72


def _sides_heading(sides: tuple[str, str]) -> str:
    """'Before → after' for ``("before", "after")``."""
    return f"{sides[0][:1].upper()}{sides[0][1:]} → {sides[1]}"


def _title(comp: Comparison, rows: Any, sides: tuple[str, str] = SIDES) -> str:
    tot = comp.totals
    pct = tot["time_change_pct"]
    change = f"{pct:+.1f}% time" if np.isfinite(pct) else "time change unknown"
    return (f"{_sides_heading(sides)}: {format_si(tot['time_s_before'], 's')} → "
            f"{format_si(tot['time_s_after'], 's')} ({change}), top {len(rows)} kernels")


def comparison_figure(comp: Comparison, *, top: int = 15, title: str | None = None, width: float = 7.0,
                      ceilings: str = "used", sides: tuple[str, str] = SIDES) -> Any:
    """Matplotlib Figure: both runs on one log-log roofline, arrows before -> after.

    ``ceilings``: ``"used"`` (each run's precisions plus its machine's highest) or ``"all"``.
    ``sides``: the words for the two runs (legend and default title).
    Kernels whose time changed (or that are new or vanished) are numbered and named in a key.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.transforms import Bbox

    from roofline.views.chart.layout import (
        LabelSpec,
        attach_canvas,
        chart_limits,
        draw_ceilings,
        marker_boxes,
        place_labels,
        setup_log_axes,
        wrap,
    )
    from roofline.kernels.labels import short_names

    rows = _rows(comp, top)
    small = width < 5
    fs = 7.0 if small else 8.5
    machines = _machines(comp, sides)
    drawn = [(label, m, side, _side_ceilings(comp, side, ceilings)) for label, m, side in machines]
    xs, ys = [], []
    for lv in comp.levels:
        for side in ("before", "after"):
            x, y = rows[f"ai_{lv}_{side}"].to_numpy(float), rows[f"flop_rate_{side}"].to_numpy(float)
            ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
            xs.extend(x[ok])
            ys.extend(y[ok])
    mem = {f"{lv}:{i}": m.memory[lv] for i, (_, m, _, _) in enumerate(drawn) for lv in comp.levels if lv in m.memory}
    peaks = {f"{k}:{i}": v for i, (*_, c) in enumerate(drawn) for k, v in c.items()}
    limits = chart_limits(xs, ys, mem, peaks)

    # key: kernels that changed, numbered by rank
    keyed: list[tuple[int, str]] = []
    names = short_names([str(n) for n in rows["kernel_name"]])
    for i, (_, r) in enumerate(rows.iterrows()):
        change = r["time_change_pct"]
        if r["status"] == "matched" and not (np.isfinite(change) and abs(change) >= LABEL_CHANGE_PCT):
            continue
        tag = f"{change:+.1f}%" if np.isfinite(change) else str(r["status"])
        times = f"{format_si(r['time_s_before'], 's')} → {format_si(r['time_s_after'], 's')}"
        keyed.append((i, f"{len(keyed) + 1}  {names[i]}  {times} ({tag})"))
    left, right = (0.55, 0.2) if small else (0.7, 0.15)
    chars = int((width - left - right) / ((fs - 0.5) * 0.55 / 72))
    key_lines = wrap([text for _, text in keyed], chars)
    notes = [] if machines else ["no machine given: ceilings not drawn"]
    line_h = fs * 1.45 / 72
    ax_h = width * (0.62 if not small else 0.72)
    top_m, bottom = (0.3, 0.42) if small else (0.35, 0.5)
    legend_labels = ([label for label, *_ in drawn if label] + [_level_name(comp, lv) for lv in comp.levels]
                     + list(sides))
    legend_rows = 2 if small or not _legend_fits(legend_labels, fs - 0.5, width - left) else 1
    fig_h = top_m + ax_h + bottom + legend_rows * line_h * 1.4 + (len(key_lines) + len(notes)) * line_h + 0.15
    fig = Figure(figsize=(width, fig_h))
    attach_canvas(fig)
    ax = fig.add_axes((left / width, 1 - (top_m + ax_h) / fig_h, 1 - (left + right) / width, ax_h / fig_h))
    setup_log_axes(ax, limits, fs, title or _title(comp, rows, sides))
    ax.title.set_fontsize(fs)

    specs: list[Any] = []
    handles = []
    for label, machine, side, compute in drawn:
        style = None if comp.same_machine else ("-" if side == "before" else "--")
        words = _words(comp, side)
        specs += draw_ceilings(ax, machine, comp.levels, compute, fs=fs, linestyle=style, level_labels=words.levels,
                               gid_suffix="" if comp.same_machine else f":{side}", words=words)
        if label:
            handles.append(Line2D([], [], color="0.15", ls=style, label=label))
    avoid: list[Bbox] = []
    for lv in comp.levels:
        xb, yb = rows[f"ai_{lv}_before"].to_numpy(float), rows["flop_rate_before"].to_numpy(float)
        xa, ya = rows[f"ai_{lv}_after"].to_numpy(float), rows["flop_rate_after"].to_numpy(float)
        ok_b = np.isfinite(xb) & np.isfinite(yb) & (xb > 0) & (yb > 0)
        ok_a = np.isfinite(xa) & np.isfinite(ya) & (xa > 0) & (ya > 0)
        c = _color(lv)
        ax.scatter(xb[ok_b], yb[ok_b], s=BEFORE_AREA, facecolors="none", edgecolors=c, linewidths=1.2, zorder=3,
                   gid=f"before:{lv}")
        ax.scatter(xa[ok_a], ya[ok_a], s=POINT_AREA, facecolors=c, edgecolors=c, linewidths=1.2, zorder=4,
                   gid=f"after:{lv}")
        avoid += marker_boxes(ax, xb[ok_b], yb[ok_b], [BEFORE_AREA] * int(ok_b.sum()))
        avoid += marker_boxes(ax, xa[ok_a], ya[ok_a], [POINT_AREA] * int(ok_a.sum()))
        for j in np.flatnonzero(ok_b & ok_a):
            ax.annotate("", xy=(xa[j], ya[j]), xytext=(xb[j], yb[j]),
                        arrowprops={"arrowstyle": "->", "color": c, "lw": 1.0, "alpha": 0.9,
                                    "shrinkA": 3, "shrinkB": 3})
    placed: list[Bbox] = []
    place_labels(ax, specs, placed=placed, avoid=avoid)
    outer = comp.levels[-1] if comp.levels else None
    number_specs = []
    for k, (i, _) in enumerate(keyed):
        r = rows.iloc[int(i)]
        side = "after" if np.isfinite(r[f"ai_{outer}_after"]) and r["flop_rate_after"] > 0 else "before"
        x, y = r[f"ai_{outer}_{side}"], r[f"flop_rate_{side}"]
        if outer is None or not (np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0):
            continue
        d = math.sqrt(BEFORE_AREA / math.pi) + 2
        cands = [(x, y, (d, 0), "left", "center", 0.0), (x, y, (-d, 0), "right", "center", 0.0),
                 (x, y, (0, d), "center", "bottom", 0.0), (x, y, (0, -d), "center", "top", 0.0)]
        number_specs.append(LabelSpec(str(k + 1), cands, {"fontsize": fs - 0.5, "fontweight": "bold", "zorder": 5,
                                                          "gid": "kernel-label"}))
    place_labels(ax, number_specs, placed=placed, avoid=avoid)

    handles += [Line2D([], [], marker="o", ls="", color=_color(lv), markersize=5, label=_level_name(comp, lv))
                for lv in comp.levels]
    handles += [Line2D([], [], marker="o", ls="", markerfacecolor="none", color="0.3", markersize=5, label=sides[0]),
                Line2D([], [], marker="o", ls="", color="0.3", markersize=5, label=sides[1])]
    y_legend = -(bottom - 0.05) / ax_h
    ncol = len(handles) if legend_rows == 1 else math.ceil(len(handles) / 2)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(-0.01, y_legend), ncol=ncol, fontsize=fs - 0.5,
              frameon=False, handletextpad=0.3, columnspacing=1.0, borderaxespad=0.0, handlelength=1.6)
    y0 = 1 - (top_m + ax_h + bottom + legend_rows * line_h * 1.4) / fig_h
    fig.text(left / width, y0, "\n".join([*key_lines, *notes]), fontsize=fs - 0.5, va="top", ha="left",
             linespacing=1.45, gid="kernel-label-key")
    return fig


def comparison_plotly(comp: Comparison, *, top: int = 15, title: str | None = None, ceilings: str = "used",
                      sides: tuple[str, str] = SIDES) -> Any:
    """Plotly Figure: both runs on one log-log roofline, arrows before -> after, names in hover (escaped).

    ``sides``: the words for the two runs (legend, hover and default title)."""
    import plotly.graph_objects as go

    from roofline.kernels.labels import short_names

    rows = _rows(comp, top)
    x_lo, x_hi = _x_range(comp, rows)
    fig = go.Figure()
    words = dict(zip(SIDES, sides))
    for label, machine, side in _machines(comp, sides):
        style = "solid" if side == "before" else "dash"
        for line in _ceiling_lines(machine, comp.levels, _side_ceilings(comp, side, ceilings), x_lo, x_hi,
                                   _words(comp, side)):
            color = _color(line["key"]) if line["kind"] == "memory" else "#333333"
            name = html.escape(f"{label + ': ' if label else ''}{line['label']}")
            fig.add_trace(go.Scatter(x=line["x"], y=line["y"], mode="lines", name=name, hoverinfo="name",
                                     line={"color": color, "dash": style, "width": 2}))
    names = [html.escape(n) for n in short_names([str(n) for n in rows["kernel_name"]])]
    for lv in comp.levels:
        c = _color(lv)
        name = html.escape(_level_name(comp, lv, upper=True))
        xb, yb = rows[f"ai_{lv}_before"].to_numpy(float), rows["flop_rate_before"].to_numpy(float)
        xa, ya = rows[f"ai_{lv}_after"].to_numpy(float), rows["flop_rate_after"].to_numpy(float)
        tb, ta = rows["time_s_before"].to_numpy(float), rows["time_s_after"].to_numpy(float)
        first = True
        for i in range(len(rows)):
            pts = [(xb[i], yb[i], "before", tb[i]), (xa[i], ya[i], "after", ta[i])]
            pts = [p for p in pts if np.isfinite(p[0]) and np.isfinite(p[1]) and p[0] > 0 and p[1] > 0]
            if not pts:
                continue
            hover = [f"<b>{names[i]}</b><br>{html.escape(words[side])} ({name}): AI {format_number(x)}, "
                     f"{format_si(y, 'FLOP/s')}, time {format_si(t, 's')}" for x, y, side, t in pts]
            symbols = (["circle-open", "arrow"] if len(pts) == 2
                       else ["circle-open" if pts[0][2] == "before" else "circle"])
            fig.add_trace(go.Scatter(
                x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers" if len(pts) == 2 else "markers",
                line={"color": c, "width": 1.5}, legendgroup=lv, showlegend=first,
                name=f"{name} ({html.escape(sides[0])} -> {html.escape(sides[1])})",
                marker={"symbol": symbols, "size": [9, 13][:len(pts)], "color": c, "angleref": "previous"},
                hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"))
            first = False
    tot = comp.totals
    pct = tot["time_change_pct"]
    change = f"{pct:+.1f}% time" if np.isfinite(pct) else "time change unknown"
    fig.update_layout(
        title={"text": html.escape(title or f"{_sides_heading(sides)}: {format_si(tot['time_s_before'], 's')} → "
                                            f"{format_si(tot['time_s_after'], 's')} ({change})")},
        xaxis={"type": "log", "title": {"text": "Arithmetic intensity (FLOP/byte)"}, "exponentformat": "none"},
        yaxis={"type": "log", "title": {"text": "Performance (FLOP/s)"}, "tickformat": "~s"},
        template="simple_white", height=650, hoverlabel={"align": "left"},
    )
    return fig

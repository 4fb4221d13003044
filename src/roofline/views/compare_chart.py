"""Before/after on one hierarchical roofline, with an arrow from each before-point to its after-point.

Both machines' ceilings are drawn (before: solid, after: dashed; drawn once when both
runs used the same ceilings). Colour is the memory level, as in the analysis charts;
a hollow marker is before, a filled one after. ``comparison_figure`` returns a
matplotlib Figure, ``comparison_plotly`` a plotly Figure; the caller saves them.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from roofline.compare import Comparison
from roofline.units import format_si

from roofline.views.style import level_color as _color
from roofline.views.style import level_label

#: Kernels whose time changed by at least this many percent get their name on the chart.
LABEL_CHANGE_PCT = 1.0


def _rows(comp: Comparison, top: int) -> Any:
    return comp.frame.head(top)


def _ceiling_lines(machine: Any, levels: tuple[str, ...], x_lo: float, x_hi: float) -> list[dict[str, Any]]:
    """Line segments of a machine's roofline: one sloped line per level, one flat line per compute peak."""
    if machine is None or not machine.compute:
        return []
    top_peak = max(machine.compute.values())
    out = []
    for lv in levels:
        bw = machine.memory.get(lv)
        if bw:
            out.append({"kind": "memory", "key": lv, "x": [x_lo, top_peak / bw], "y": [bw * x_lo, top_peak],
                        "label": f"{level_label(lv)} {format_si(bw, 'B/s')}"})
    bw_max = max([machine.memory[lv] for lv in levels if lv in machine.memory] or [1.0])
    for key, peak in sorted(machine.compute.items(), key=lambda kv: -kv[1]):
        out.append({"kind": "compute", "key": key, "x": [peak / bw_max, x_hi], "y": [peak, peak],
                    "label": f"{key} {format_si(peak, 'FLOP/s')}"})
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


def _machines(comp: Comparison) -> list[tuple[str, Any, str]]:
    """(label, machine, line style) to draw."""
    mb, ma = getattr(comp.before, "machine", None), getattr(comp.after, "machine", None)
    if comp.same_machine:
        return [("", mb, "solid")] if mb is not None else []
    out = []
    if mb is not None:
        out.append((f"before: {mb.name}", mb, "solid"))
    if ma is not None:
        out.append((f"after: {ma.name}", ma, "dash"))
    return out


def comparison_figure(comp: Comparison, *, top: int = 15, title: str | None = None) -> Any:
    """Matplotlib Figure: both runs on one log-log roofline, arrows before -> after."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rows = _rows(comp, top)
    x_lo, x_hi = _x_range(comp, rows)
    fig = Figure(figsize=(10, 6.5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    handles = []
    for label, machine, style in _machines(comp):
        ls = "-" if style == "solid" else "--"
        for line in _ceiling_lines(machine, comp.levels, x_lo, x_hi):
            color = _color(line["key"]) if line["kind"] == "memory" else "#333333"
            ax.plot(line["x"], line["y"], ls, color=color, lw=1.6, alpha=0.8)
            # the legend tells the machines apart (solid: before, dashed: after)
            ax.annotate(line["label"], (line["x"][0], line["y"][0]),
                        fontsize=7, color=color, xytext=(2, 3), textcoords="offset points")
        if label:
            handles.append(Line2D([], [], color="#333333", ls=ls, label=label))
    for lv in comp.levels:
        xb, yb = rows[f"ai_{lv}_before"].to_numpy(float), rows["flop_rate_before"].to_numpy(float)
        xa, ya = rows[f"ai_{lv}_after"].to_numpy(float), rows["flop_rate_after"].to_numpy(float)
        ok_b = np.isfinite(xb) & np.isfinite(yb) & (xb > 0) & (yb > 0)
        ok_a = np.isfinite(xa) & np.isfinite(ya) & (xa > 0) & (ya > 0)
        c = _color(lv)
        ax.scatter(xb[ok_b], yb[ok_b], s=40, facecolors="none", edgecolors=c, linewidths=1.4, zorder=3)
        ax.scatter(xa[ok_a], ya[ok_a], s=40, color=c, zorder=4)
        for i in np.flatnonzero(ok_b & ok_a):
            ax.annotate("", xy=(xa[i], ya[i]), xytext=(xb[i], yb[i]),
                        arrowprops={"arrowstyle": "->", "color": c, "lw": 1.2, "alpha": 0.9})
        handles.append(Line2D([], [], marker="o", ls="", color=c, label=f"{lv.upper()} (hollow: before, filled: after)"))
    ax.set_xlim(x_lo, x_hi)
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("Performance (FLOP/s)")
    tot = comp.totals
    pct = tot["time_change_pct"]
    change = f"{pct:+.1f}% time" if np.isfinite(pct) else "time change unknown"
    ax.set_title(title or f"Before → after: {format_si(tot['time_s_before'], 's')} → "
                          f"{format_si(tot['time_s_after'], 's')} ({change}), top {len(rows)} kernels")
    if not _machines(comp):
        ax.text(0.01, 0.01, "no machine given: ceilings not drawn", transform=ax.transAxes, fontsize=8, color="#555")
    _label_changed(ax, comp, rows)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    return fig


def _label_changed(ax: Any, comp: Comparison, rows: Any) -> None:
    """Name the kernels whose time changed, next to their after-point at the outermost level."""
    from roofline.views.names import short_names

    if not comp.levels:
        return
    lv = comp.levels[-1]
    labels = short_names([str(n) for n in rows["kernel_name"]])
    for label, (_, r) in zip(labels, rows.iterrows()):
        change = r["time_change_pct"]
        x, y = r[f"ai_{lv}_after"], r["flop_rate_after"]
        if r["status"] == "matched" and not (np.isfinite(change) and abs(change) >= LABEL_CHANGE_PCT):
            continue
        if not (np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0):
            continue
        tag = f"{change:+.0f}%" if np.isfinite(change) else str(r["status"])
        ax.annotate(f"{label} ({tag})", (x, y), xytext=(6, -10), textcoords="offset points", fontsize=7,
                    color="#333333")


def comparison_plotly(comp: Comparison, *, top: int = 15, title: str | None = None) -> Any:
    """Plotly Figure: both runs on one log-log roofline, arrows before -> after, names in hover (escaped)."""
    import plotly.graph_objects as go

    from roofline.views.names import short_names

    rows = _rows(comp, top)
    x_lo, x_hi = _x_range(comp, rows)
    fig = go.Figure()
    for label, machine, style in _machines(comp):
        for line in _ceiling_lines(machine, comp.levels, x_lo, x_hi):
            color = _color(line["key"]) if line["kind"] == "memory" else "#333333"
            name = html.escape(f"{label + ': ' if label else ''}{line['label']}")
            fig.add_trace(go.Scatter(x=line["x"], y=line["y"], mode="lines", name=name, hoverinfo="name",
                                     line={"color": color, "dash": style, "width": 2}))
    names = [html.escape(n) for n in short_names([str(n) for n in rows["kernel_name"]])]
    for lv in comp.levels:
        c = _color(lv)
        xb, yb = rows[f"ai_{lv}_before"].to_numpy(float), rows["flop_rate_before"].to_numpy(float)
        xa, ya = rows[f"ai_{lv}_after"].to_numpy(float), rows["flop_rate_after"].to_numpy(float)
        tb, ta = rows["time_s_before"].to_numpy(float), rows["time_s_after"].to_numpy(float)
        first = True
        for i in range(len(rows)):
            pts = [(xb[i], yb[i], "before", tb[i]), (xa[i], ya[i], "after", ta[i])]
            pts = [p for p in pts if np.isfinite(p[0]) and np.isfinite(p[1]) and p[0] > 0 and p[1] > 0]
            if not pts:
                continue
            hover = [f"<b>{names[i]}</b><br>{side} ({lv.upper()}): AI {x:.3g}, {format_si(y, 'FLOP/s')}, "
                     f"time {format_si(t, 's')}" for x, y, side, t in pts]
            symbols = (["circle-open", "arrow"] if len(pts) == 2
                       else ["circle-open" if pts[0][2] == "before" else "circle"])
            fig.add_trace(go.Scatter(
                x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers" if len(pts) == 2 else "markers",
                line={"color": c, "width": 1.5}, legendgroup=lv, showlegend=first, name=f"{lv.upper()} (before -> after)",
                marker={"symbol": symbols, "size": [9, 13][:len(pts)], "color": c, "angleref": "previous"},
                hovertext=hover, hovertemplate="%{hovertext}<extra></extra>"))
            first = False
    tot = comp.totals
    pct = tot["time_change_pct"]
    change = f"{pct:+.1f}% time" if np.isfinite(pct) else "time change unknown"
    fig.update_layout(
        title={"text": html.escape(title or f"Before → after: {format_si(tot['time_s_before'], 's')} → "
                                            f"{format_si(tot['time_s_after'], 's')} ({change})")},
        xaxis={"type": "log", "title": {"text": "Arithmetic intensity (FLOP/byte)"}},
        yaxis={"type": "log", "title": {"text": "Performance (FLOP/s)"}},
        template="simple_white", height=650, hoverlabel={"align": "left"},
    )
    return fig

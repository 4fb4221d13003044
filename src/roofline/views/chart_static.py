"""The static hierarchical roofline chart (matplotlib), in the style of Yang et al. 2020.

Log-log axes; one diagonal per memory level (bandwidth ceiling) and one horizontal
line per compute ceiling, each drawn only where it is attainable; every kernel as one
marker per level at (ai_level, FLOP/s), L1 blue, L2 red, DRAM/HBM green, with marker
area proportional to the kernel's time. The top kernels are numbered on the chart
and named in a key under it. Pure: returns a Figure (object-oriented API, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from roofline.analysis.result import Analysis
from roofline.units import format_si
from roofline.views.names import short_names
from roofline.views.style import (
    chart_levels,
    compute_ceiling_label,
    level_color,
    level_label,
    memory_ceiling_label,
    not_shown_note,
    select_rows,
)

#: Marker area (pt^2) of the longest kernel drawn, per inch of figure width; areas are
#: proportional to time, with a floor so that the shortest kernels stay visible.
MAX_AREA_PER_INCH = 70.0
MIN_AREA = 3.0
#: Marker shapes: counted kernels and kernels with estimated counts.
MARKER = "o"
ESTIMATED_MARKER = "D"
#: Gid ("group id") prefixes, so that tests and callers can find the artists.
GID_MEMORY, GID_COMPUTE, GID_POINTS, GID_LABEL = "ceiling-memory", "ceiling-compute", "kernels", "kernel-label"


def _decade_formatter(unit: str = "") -> FuncFormatter:
    def fmt(value: float, _pos: int) -> str:
        if value <= 0:
            return ""
        exp = math.log10(value)
        if abs(exp - round(exp)) > 1e-6:
            return ""
        if unit:
            return format_si(value, unit).replace(" ", "")[: -len(unit)] or "1"
        return f"{value:g}"
    return FuncFormatter(fmt)


def _limits(values: np.ndarray, floor: float, ceil: float) -> tuple[float, float]:
    v = values[np.isfinite(values) & (values > 0)]
    lo = min(float(v.min()) if v.size else floor, floor)
    hi = max(float(v.max()) if v.size else ceil, ceil)
    return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))


def roofline_figure(
    analysis: Analysis,
    *,
    top: int = 8,
    phase: str | None = None,
    title: str | None = None,
    levels: Sequence[str] | None = None,
    width: float = 7.0,
    level_labels: Mapping[str, str] | None = None,
) -> Figure:
    """Draw the hierarchical roofline of ``analysis``; returns a matplotlib Figure.

    ``top``: number of kernels (longest first) numbered and named in the key.
    ``phase``: draw one phase only (analysis by 'phase' or 'launch'). ``levels``: a
    subset of the analysed levels. ``width``: inches (3.5 single column, 7 double).
    ``level_labels``: display names, e.g. ``{"dram": "HBM"}``.
    Hollow markers: FLOPs are a lower bound (a FLOP counter was missing). Diamonds:
    counts estimated without hardware counters.
    """
    draw_levels = chart_levels(analysis, levels)
    rows = select_rows(analysis, phase)
    shown = rows.shown
    machine = analysis.machine
    small = width < 5
    fs = 7.0 if small else 8.5

    # -- what the axes must hold ---------------------------------------------------
    mem = {lv: machine.memory[lv] for lv in draw_levels} if machine else {}
    comp = dict(machine.compute) if machine else {}
    top_peak = max(comp.values()) if comp else None
    ais = np.concatenate([shown[f"ai_{lv}"].to_numpy(dtype=float) for lv in draw_levels]) if draw_levels else np.zeros(0)
    rates = shown["flop_rate"].to_numpy(dtype=float)
    ridges = [p / bw for p in comp.values() for bw in mem.values()]
    x_lo, x_hi = _limits(np.concatenate([ais, np.array(ridges) / 1e2, np.array(ridges) * 4]), 0.1, 10.0)
    y_lo, y_hi = _limits(rates, 1e9, 1e12)
    if top_peak:
        y_hi = max(top_peak * 3, float(np.nanmax(rates)) * 3 if rates.size else 0.0)
    if mem and comp:
        y_lo = min(y_lo, 10 ** math.floor(math.log10(min(mem.values()) * x_lo * 3)))
        y_lo = max(y_lo, 10 ** math.floor(math.log10(max(top_peak / 1e5, np.nanmin(rates) if rates.size else 1.0))))

    # -- layout in inches: axes, then the key of numbered kernels under it -------------
    labelled = shown.head(top)
    names = short_names(list(labelled["kernel_name"].astype(str)))
    char_w = (fs - 0.5) * 0.6 / 72  # inches per character, generously, for the sans-serif default
    key_room = int((width - (0.55 if small else 0.7) - 0.1) / char_w) - len("10  ") - len("  (100.0%)")
    names = [n if len(n) <= key_room else n[: max(key_room - 1, 8)] + "…" for n in names]
    widest = max((len(n) for n in names), default=0) * char_w + len("10    (100.0%)") * char_w
    key_cols = max(1, min(3, int((width - 1.0) // max(widest + 0.2, 1e-9)))) if names else 1
    line_h = fs * 1.45 / 72
    key_rows = math.ceil(len(names) / key_cols)
    note = not_shown_note(rows)
    notes_h = line_h * (1 + bool(note) + 0.5)
    legend_h = line_h * 1.4
    ax_h = width * (0.62 if not small else 0.72)
    left, right, top_m, bottom = (0.55, 0.2, 0.3 if title else 0.12, 0.42) if small else (0.7, 0.15, 0.35 if title else 0.15, 0.5)
    fig_h = top_m + ax_h + bottom + legend_h + key_rows * line_h + notes_h
    y_legend = 1 - (top_m + ax_h + bottom) / fig_h
    fig = Figure(figsize=(width, fig_h))
    ax = fig.add_axes((left / width, 1 - (top_m + ax_h) / fig_h, 1 - (left + right) / width, ax_h / fig_h))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.tick_params(labelsize=fs, which="both", direction="in", top=True, right=True)
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=20))
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=20))
    ax.xaxis.set_major_formatter(_decade_formatter())
    ax.yaxis.set_major_formatter(_decade_formatter("FLOP/s"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)", fontsize=fs)
    ax.set_ylabel("Performance (FLOP/s)", fontsize=fs)
    ax.grid(True, which="major", color="0.92", linewidth=0.5, zorder=0)
    if title:
        ax.set_title(title, fontsize=fs + 1)

    def angle_of(x0: float, y0: float, x1: float, y1: float) -> float:
        (a, b), (c, d) = ax.transData.transform([(x0, y0), (x1, y1)])
        return math.degrees(math.atan2(d - b, c - a))

    # -- ceilings ----------------------------------------------------------------------
    if mem and comp:
        bw_max = max(mem.values())
        for lv, bw in mem.items():
            x_end = top_peak / bw
            ax.plot([x_lo, x_end], [bw * x_lo, top_peak], color=level_color(lv), linewidth=1.2,
                    zorder=2, gid=f"{GID_MEMORY}:{lv}")
            x_t = max(x_lo * 1.6, y_lo * 2.5 / bw)
            if x_t < x_end / 3:
                ang = angle_of(x_t, bw * x_t, x_t * 10, bw * x_t * 10)
                ax.text(x_t, bw * x_t * 1.25, memory_ceiling_label(lv, bw, level_labels), rotation=ang,
                        rotation_mode="anchor", ha="left", va="bottom", fontsize=fs - 0.5,
                        color=level_color(lv), zorder=3, gid=f"{GID_MEMORY}-label:{lv}")
        for i, (key, peak) in enumerate(sorted(comp.items(), key=lambda kv: -kv[1])):
            x_start = peak / bw_max
            ax.plot([x_start, x_hi], [peak, peak], color="0.15", linewidth=1.2,
                    linestyle="-" if i == 0 else (0, (5, 2)), zorder=2, gid=f"{GID_COMPUTE}:{key}")
            # label at the left end, above the line: compute-bound kernels gather at the right
            label = compute_ceiling_label(key, peak)
            room = (ax.transData.transform((x_hi, peak))[0] - ax.transData.transform((x_start * 1.15, peak))[0]) / fig.dpi
            fits = room > len(label) * (fs - 0.5) * 0.6 / 72
            ax.text(x_start * 1.15 if fits else x_hi / 1.15, peak * 1.08, label, ha="left" if fits else "right",
                    va="bottom",
                    fontsize=fs - 0.5, color="0.15", zorder=3, gid=f"{GID_COMPUTE}-label:{key}",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.3, "alpha": 0.85})

    # -- kernels -----------------------------------------------------------------------
    t = shown["time_s"].to_numpy(dtype=float)
    t_max = float(np.nanmax(t)) if t.size else 1.0
    area = np.maximum(MIN_AREA, MAX_AREA_PER_INCH * width * np.nan_to_num(t) / t_max) if t.size else t
    partial = shown["flops_partial"].fillna(False).to_numpy(dtype=bool)
    estimated = shown["estimated"].fillna(False).to_numpy(dtype=bool)
    for k in range(len(shown)):  # faint link between one kernel's levels
        xs = [shown[f"ai_{lv}"].iloc[k] for lv in draw_levels]
        xs = [x for x in xs if np.isfinite(x) and x > 0]
        if len(xs) > 1:
            ax.plot([min(xs), max(xs)], [rates[k]] * 2, color="0.6", linewidth=0.5, zorder=3, gid="kernel-link")
    for lv in draw_levels:
        x = shown[f"ai_{lv}"].to_numpy(dtype=float)
        ok = np.isfinite(x) & (x > 0)
        for marker, sel in ((MARKER, ~estimated), (ESTIMATED_MARKER, estimated)):
            for hollow in (False, True):
                m = ok & sel & (partial == hollow)
                if not m.any():
                    continue
                color = level_color(lv)
                ax.scatter(x[m], rates[m], s=area[m], marker=marker, linewidths=1.0, zorder=4,
                           facecolors="none" if hollow else color, edgecolors=color, alpha=0.85,
                           gid=f"{GID_POINTS}:{lv}")

    # numbers next to the rightmost marker of each labelled kernel; labels that would
    # overlap (kernels at nearly the same place) are merged into one, e.g. "1,2"
    anchors: list[tuple[float, float, float, list[int]]] = []  # x, y (display), radius pt, numbers
    to_pt = 72.0 / fig.dpi
    for k in range(len(labelled)):
        xs = [shown[f"ai_{lv}"].iloc[k] for lv in draw_levels]
        xs = [x for x in xs if np.isfinite(x) and x > 0]
        if not xs:
            continue
        r = math.sqrt(area[k] / math.pi)
        px, py = ax.transData.transform((max(xs), rates[k]))
        for a in anchors:
            if abs(a[0] - px) * to_pt < fs * 2.5 and abs(a[1] - py) * to_pt < fs * 1.2:
                a[3].append(k + 1)
                a[2] = max(a[2], r)  # type: ignore[index]
                break
        else:
            anchors.append([px, py, r, [k + 1]])  # type: ignore[arg-type]
    inverse = ax.transData.inverted()
    for px, py, r, numbers in anchors:
        ax.annotate(",".join(map(str, numbers)), inverse.transform((px, py)), xytext=(r + 2, 0),
                    textcoords="offset points", ha="left", va="center", fontsize=fs - 0.5,
                    fontweight="bold", zorder=5, gid=GID_LABEL)

    # -- legend ------------------------------------------------------------------------
    handles = [Line2D([], [], marker=MARKER, linestyle="", color=level_color(lv), markersize=6,
                      label=level_label(lv, level_labels)) for lv in draw_levels]
    if partial.any():
        handles.append(Line2D([], [], marker=MARKER, linestyle="", markerfacecolor="none", color="0.3",
                              markersize=6, label="FLOPs lower bound"))
    if estimated.any():
        handles.append(Line2D([], [], marker=ESTIMATED_MARKER, linestyle="", color="0.3", markersize=5,
                              label="estimated counts"))
    if handles:  # a row under the axes, where it hides no point or ceiling
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(left / width - 0.01, y_legend),
                   ncol=len(handles), fontsize=fs - 0.5, frameon=False,
                   handletextpad=0.2, columnspacing=1.0, borderaxespad=0.0, handlelength=1.2)

    # -- key and notes under the axes ------------------------------------------------------
    y0 = y_legend - legend_h / fig_h
    col_w = (width - left - right) / key_cols
    share = labelled["time_share"].to_numpy(dtype=float)
    for k, name in enumerate(names):
        row, col = divmod(k, key_cols)
        pct = f"{100 * share[k]:.1f}%" if np.isfinite(share[k]) else "-"
        fig.text((left + col * col_w) / width, y0 - row * line_h / fig_h,
                 f"{k + 1}  {name}  ({pct})", fontsize=fs - 0.5, va="top", ha="left", gid=f"{GID_LABEL}-key")
    y_notes = y0 - key_rows * line_h / fig_h - 0.25 * line_h / fig_h
    lines = ["marker area ∝ kernel time; numbers: kernels by time (key above)"]
    if note:
        lines.append(note)
    if machine is not None:
        clk = f" at {format_si(machine.sm_clock_hz, 'Hz')}" if machine.sm_clock_hz else ""
        lines.append(f"ceilings: {machine.name} ({machine.source}){clk}")
    else:
        lines.append("no machine: ceilings not drawn")
    fig.text(left / width, y_notes, "\n".join(lines), fontsize=fs - 1.5, va="top", ha="left", color="0.35",
             linespacing=1.3)
    return fig


def roofline_figures_by_phase(analysis: Analysis, **kwargs: object) -> dict[str, Figure]:
    """One figure per phase (analysis by 'phase' or 'launch'), titled with the phase name."""
    if analysis.by == "name":
        raise ValueError("per-phase figures need analyze(..., by='phase') or by='launch'")
    phases = sorted(set(analysis.frame["phase"].dropna().astype(str)))
    kwargs = {k: v for k, v in kwargs.items() if k not in ("phase", "title")}
    return {p: roofline_figure(analysis, phase=p, title=p, **kwargs) for p in phases}  # type: ignore[arg-type]

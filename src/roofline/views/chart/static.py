"""The static hierarchical roofline chart (matplotlib), in the style of Yang et al. 2020.

Log-log axes; one diagonal per memory level (bandwidth ceiling) and one horizontal
line per compute ceiling, each drawn only where it is attainable; every kernel as one
marker per level at (intensity at the level, rate), L1 blue, shared memory purple squares,
L2 red, DRAM/HBM green, with marker area proportional to the kernel's time. The work is
the analysis's: FLOPs, operations or warp instructions (Ding & Williams's instruction
roofline, against transactions per level). The top kernels are numbered on the chart
and named in a key under it. Pure: returns a Figure (object-oriented API, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

from roofline.analysis.result import Analysis
from roofline.views.chart.layout import (
    GID_COMPUTE,
    GID_MEMORY,
    attach_canvas,
    chart_limits,
    draw_ceilings,
    marker_boxes,
    number_label,
    LabelSpec,
    place_labels,
    setup_log_axes,
    wrap,
)
from roofline.kernels.labels import short_name, short_names
from roofline.kernels.schema import has_runs
from roofline.views.chart.style import (
    axis_texts,
    ceilings_caption,
    chart_compute_ceilings,
    chart_levels,
    level_color,
    level_label,
    level_marker,
    memory_ceilings,
    not_shown_note,
    require_drawable,
    select_rows,
    vendor_labels,
)

__all__ = ["GID_COMPUTE", "GID_LABEL", "GID_MEMORY", "GID_POINTS", "MIN_AREA", "Panel", "chart_key",
           "draw_hierarchical", "draw_key", "hierarchical_panel", "key_names", "roofline_figure",
           "roofline_figures_by_phase"]

#: Marker area (pt^2) of the longest kernel drawn, per inch of figure width; areas are
#: proportional to time, with a floor so that the shortest kernels stay visible.
MAX_AREA_PER_INCH = 70.0
MIN_AREA = 3.0
#: Marker shapes: counted kernels and kernels with estimated counts.
MARKER = "o"
ESTIMATED_MARKER = "D"
GID_POINTS, GID_LABEL = "kernels", "kernel-label"


def key_names(rows: pd.DataFrame, by: str, labels: Mapping[str, str] | None = None, *, runs: bool = False) -> list[str]:
    """Display names of kernels in a key: short names (``labels``: the analysis's, made over all its rows,
    :attr:`~roofline.analysis.result.Analysis.labels`; else made over ``rows``), with the launch id (by
    launch) or the phase (by phase) where names repeat, so that 27 launches are not 27 equal names; ``runs``
    (an analysis of several runs side by side): each after its run, as the advice names them (``b: gemm``)."""
    full = list(rows["kernel_name"].astype(str))
    names = short_names(full) if labels is None else [labels.get(n) or short_name(n) for n in full]
    if by == "launch" and "launch_id" in rows:
        ids = rows["launch_id"]
        names = [f"{n} #{int(i)}" if pd.notna(i) else n for n, i in zip(names, ids)]
    elif by == "phase" and len(set(names)) < len(names):
        names = [f"{n} [{p}]" if pd.notna(p) else n for n, p in zip(names, rows["phase"])]
    if runs and "run" in rows:
        names = [f"{run}: {n}" for run, n in zip(rows["run"].astype("string").fillna("-"), names)]
    return names


def _machine_levels(analysis: Analysis, levels: Sequence[str] | None) -> list[str]:
    """Memory ceilings to draw: the machine's (an L3 without byte counts still has its line), but
    shared memory only where analysed (its line would lie on L1's, of about the same bandwidth)."""
    draw = chart_levels(analysis, levels)
    if levels is not None or analysis.machine is None:
        return draw
    return [lv for lv in analysis.machine.levels if lv != "shared" or lv in draw]


@dataclass(frozen=True)
class Panel:
    """What one hierarchical roofline panel draws: the rows (longest first), the analysed levels whose
    markers it draws (those where some kernel has traffic), the machine levels whose ceilings it
    draws (shared memory only where a kernel uses it, or asked for), the compute ceilings, the axis
    limits, and the marker areas (pt^2)."""

    shown: pd.DataFrame
    levels: list[str]
    ceiling_levels: list[str]
    compute: dict[str, float]
    limits: tuple[float, float, float, float]
    area: np.ndarray


def hierarchical_panel(analysis: Analysis, shown: pd.DataFrame, *, levels: Sequence[str] | None = None,
                       ceilings: str = "used", width: float = 7.0) -> Panel:
    """The :class:`Panel` of ``shown`` (drawable rows of ``analysis``) at ``width`` inches."""
    work = analysis.work_spec
    machine = analysis.machine
    draw_levels = chart_levels(analysis, levels)
    mem_levels = _machine_levels(analysis, levels)
    comp = chart_compute_ceilings(machine, shown, ceilings, work)
    ais = [shown[f"ai_{lv}"].to_numpy(dtype=float) for lv in draw_levels]
    unmarked_shared = "shared" in draw_levels and levels is None and not any(
        (np.isfinite(a) & (a > 0)).any() for lv, a in zip(draw_levels, ais) if lv == "shared")
    mem = memory_ceilings(machine, [lv for lv in mem_levels if not (lv == "shared" and unmarked_shared)], work)
    rates = shown["flop_rate"].to_numpy(dtype=float)
    drawn_rates = np.concatenate([rates[np.isfinite(a) & (a > 0)] for a in ais]) if ais else rates[:0]
    limits = chart_limits(np.concatenate(ais) if ais else [], drawn_rates, mem, comp)
    t = shown["time_s"].to_numpy(dtype=float)
    t_max = float(np.nanmax(t)) if t.size else 1.0
    area = np.maximum(MIN_AREA, MAX_AREA_PER_INCH * width * np.nan_to_num(t) / t_max) if t.size else t
    # levels without a marker (no kernel with traffic there) get no legend entry, and shared memory no line
    marked = [lv for lv, a in zip(draw_levels, ais) if (np.isfinite(a) & (a > 0)).any()]
    return Panel(shown, marked, list(mem), comp, limits, area)


def draw_hierarchical(ax: Axes, analysis: Analysis, panel: Panel, *, top: int, fs: float,
                      level_labels: Mapping[str, str] | None = None, title: str | None = None,
                      numbers: Sequence[int | None] | None = None, precise: bool = False) -> list[Line2D]:
    """Draw ``panel`` on ``ax``: log axes in the work's units, the ceilings, one marker per level per
    kernel (area by time; hollow: work a lower bound; diamonds: estimated counts), the ``top`` kernels
    numbered (or row k as ``numbers[k]``, None for none), every label placed clear of the others
    (``precise``: rotated labels by their rotated boxes, :func:`~roofline.views.chart.layout.place_labels`).
    Returns the legend handles."""
    work = analysis.work_spec
    machine = analysis.machine
    shown = panel.shown
    level_labels = vendor_labels(analysis.words, level_labels)
    setup_log_axes(ax, panel.limits, fs, title, axis_texts(work))
    specs = draw_ceilings(ax, machine, panel.ceiling_levels, panel.compute, fs=fs, level_labels=level_labels,
                          work=work, words=analysis.words) if machine else []
    ais = [shown[f"ai_{lv}"].to_numpy(dtype=float) for lv in panel.levels]
    rates = shown["flop_rate"].to_numpy(dtype=float)
    area = panel.area
    partial = (shown[work.partial].fillna(False).to_numpy(dtype=bool) if work.partial in shown
               else np.zeros(len(shown), dtype=bool))
    estimated = shown["estimated"].fillna(False).to_numpy(dtype=bool)
    for k in range(len(shown)):  # faint link between one kernel's levels
        xs = [x for x in (a[k] for a in ais) if np.isfinite(x) and x > 0]
        if len(xs) > 1:
            ax.plot([min(xs), max(xs)], [rates[k]] * 2, color="0.6", linewidth=0.5, zorder=3, gid="kernel-link")
    avoid: list[Bbox] = []
    for lv, x in zip(panel.levels, ais):
        ok = np.isfinite(x) & (x > 0)
        avoid += marker_boxes(ax, x[ok], rates[ok], area[ok])
        for marker, sel in ((level_marker(lv), ~estimated), (ESTIMATED_MARKER, estimated)):
            for hollow in (False, True):
                m = ok & sel & (partial == hollow)
                if not m.any():
                    continue
                color = level_color(lv)
                ax.scatter(x[m], rates[m], s=area[m], marker=marker, linewidths=1.0, zorder=4,
                           facecolors="none" if hollow else color, edgecolors=color, alpha=0.85,
                           gid=f"{GID_POINTS}:{lv}")
    placed: list[Any] = []
    place_labels(ax, specs, placed=placed, avoid=avoid, precise=precise)
    numbers = list(range(1, top + 1)) if numbers is None else list(numbers)
    numbers = [numbers[k] if k < len(numbers) else None for k in range(len(shown))]
    number_kernels(ax, ais, [rates] * len(ais), area, numbers, fs, placed, avoid)

    handles = [Line2D([], [], marker=level_marker(lv), linestyle="", color=level_color(lv), markersize=6,
                      label=level_label(lv, level_labels)) for lv in panel.levels]
    if partial.any():
        handles.append(Line2D([], [], marker=MARKER, linestyle="", markerfacecolor="none", color="0.3",
                              markersize=6, label=f"{work.unit}s lower bound"))
    if estimated.any():
        handles.append(Line2D([], [], marker=ESTIMATED_MARKER, linestyle="", color="0.3", markersize=5,
                              label="estimated counts"))
    return handles


@dataclass(frozen=True)
class Key:
    """The key of numbered kernels and the notes under a chart, laid out for a width (inches)."""

    names: list[str]
    shares: np.ndarray
    cols: int
    notes: list[str]
    fs: float
    left: float
    right: float

    @property
    def line_h(self) -> float:
        return self.fs * 1.45 / 72

    @property
    def note_h(self) -> float:
        return (self.fs - 1.5) * 1.3 / 72

    @property
    def height(self) -> float:
        """Inches the key and notes take."""
        return math.ceil(len(self.names) / self.cols) * self.line_h + 0.25 * self.line_h + len(self.notes) * self.note_h


def chart_key(labelled: pd.DataFrame, by: str, notes: Sequence[str], *, width: float, fs: float,
              left: float, right: float, labels: Mapping[str, str] | None = None, runs: bool = False) -> Key:
    """Key names (cut to fit), columns and wrapped notes for ``labelled`` rows under a chart
    (``labels``, ``runs``: see :func:`key_names`)."""
    names = key_names(labelled, by, labels, runs=runs)
    char_w = (fs - 0.5) * 0.6 / 72  # inches per character, generously, for the sans-serif default
    key_room = int((width - left - right) / char_w) - len("10  ") - len("  (100.0%)")
    names = [n if len(n) <= key_room else n[: max(key_room - 1, 8)] + "…" for n in names]
    widest = max((len(n) for n in names), default=0) * char_w + len("10    (100.0%)") * char_w
    cols = max(1, min(3, int((width - 1.0) // max(widest + 0.2, 1e-9)))) if names else 1
    wrapped = wrap(list(notes), int((width - left - right) / ((fs - 1.5) * 0.55 / 72)))
    return Key(names, labelled["time_share"].to_numpy(dtype=float), cols, wrapped, fs, left, right)


def draw_key(fig: Figure, key: Key, y_top: float, width: float, fig_h: float) -> None:
    """Write the numbered key, then the notes, from ``y_top`` (figure fraction) down."""
    col_w = (width - key.left - key.right) / key.cols
    for k, name in enumerate(key.names):
        row, col = divmod(k, key.cols)
        pct = f"{100 * key.shares[k]:.1f}%" if np.isfinite(key.shares[k]) else "-"
        fig.text((key.left + col * col_w) / width, y_top - row * key.line_h / fig_h,
                 f"{k + 1}  {name}  ({pct})", fontsize=key.fs - 0.5, va="top", ha="left", gid=f"{GID_LABEL}-key")
    rows = math.ceil(len(key.names) / key.cols)
    y_notes = y_top - rows * key.line_h / fig_h - 0.25 * key.line_h / fig_h
    fig.text(key.left / width, y_notes, "\n".join(key.notes), fontsize=key.fs - 1.5, va="top", ha="left",
             color="0.35", linespacing=1.3, gid="notes")


def roofline_figure(
    analysis: Analysis,
    *,
    top: int = 8,
    phase: str | None = None,
    title: str | None = None,
    levels: Sequence[str] | None = None,
    width: float = 7.0,
    level_labels: Mapping[str, str] | None = None,
    ceilings: str = "used",
) -> Figure:
    """Draw the hierarchical roofline of ``analysis``; returns a matplotlib Figure.

    The axes are in the analysis's work (:attr:`Analysis.work_spec`): FLOP/s against FLOP/B, OP/s
    against OP/B, or warp instructions/s against warp instructions per transaction, with the compute
    ceilings of that work and the memory ceilings in its traffic rate (B/s or transactions/s).
    ``top``: number of kernels (longest first) numbered and named in the key.
    ``phase``: draw one phase only (analysis by 'phase' or 'launch'). ``levels``: a
    subset of the analysed levels. ``width``: inches (3.5 single column, 7 double).
    ``level_labels``: display names, e.g. ``{"dram": "HBM"}``, over the vendor's (``analysis.words``: an AMD
    profile's levels are vL1D, LDS, L2 and HBM, its matrix ceilings 'Matrix FP16'). ``ceilings``: ``"used"``
    (the ceilings of the work the kernels do plus the machine's highest) or ``"all"``.
    Hollow markers: the work is a lower bound (a counter was missing). Diamonds:
    counts estimated without hardware counters. Kernels that cannot be drawn are named in a
    note with their share of the time and why (:func:`roofline.views.chart.rows.undrawn_kernels`).
    Raises InputError when no kernel can be drawn.
    """
    draw_levels = chart_levels(analysis, levels)
    rows = select_rows(analysis, phase, draw_levels)
    require_drawable(rows)
    machine = analysis.machine
    level_labels = vendor_labels(analysis.words, level_labels)
    small = width < 5
    fs = 7.0 if small else 8.5
    panel = hierarchical_panel(analysis, rows.shown, levels=levels, ceilings=ceilings, width=width)

    # -- layout in inches: axes, then the legend, the key of numbered kernels and notes ----
    left, right = (0.55, 0.2) if small else (0.7, 0.15)
    noun = analysis.row_noun
    notes = [f"marker area ∝ {noun[:-1]} time; numbers: {noun} by time (key above)"]
    if note := not_shown_note(rows):
        notes.append(note)
    if machine is not None:
        notes.append(ceilings_caption(machine, [*panel.ceiling_levels, *panel.compute], level_labels, analysis.words))
    else:
        notes.append("no machine: ceilings not drawn")
    key = chart_key(rows.shown.head(top), analysis.by, notes, width=width, fs=fs, left=left, right=right,
                    labels=rows.labels, runs=has_runs(analysis.frame))
    legend_h = key.line_h * 1.4
    ax_h = width * (0.62 if not small else 0.72)
    top_m, bottom = ((0.3 if title else 0.12), 0.42) if small else ((0.35 if title else 0.15), 0.5)
    fig_h = top_m + ax_h + bottom + legend_h + key.height + 0.1
    y_legend = 1 - (top_m + ax_h + bottom) / fig_h
    fig = Figure(figsize=(width, fig_h))
    attach_canvas(fig)
    ax = fig.add_axes((left / width, 1 - (top_m + ax_h) / fig_h, 1 - (left + right) / width, ax_h / fig_h))
    # rotated labels by their rotated boxes on the newer charts (the FLOP chart keeps its layout)
    handles = draw_hierarchical(ax, analysis, panel, top=top, fs=fs, level_labels=level_labels, title=title,
                                precise=analysis.work != "flops")
    if handles:  # a row under the axes, where it hides no point or ceiling
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(left / width - 0.01, y_legend),
                   ncol=len(handles), fontsize=fs - 0.5, frameon=False,
                   handletextpad=0.2, columnspacing=1.0, borderaxespad=0.0, handlelength=1.2)
    draw_key(fig, key, y_legend - legend_h / fig_h, width, fig_h)
    return fig


def number_kernels(ax: Axes, xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], area: np.ndarray,
                   numbers: Sequence[int | None], fs: float, placed: list[Any], avoid: list[Bbox]) -> None:
    """Number kernels next to their rightmost marker: row k has a marker at (xs[j][k], ys[j][k])
    for each series j where both are finite and positive, and the label ``numbers[k]`` (None: no
    label). Kernels at nearly the same place share one label ('1-3', '1,3,5+10'), inside the axes."""
    to_pt = 72.0 / ax.figure.dpi  # type: ignore[union-attr]
    anchors: list[list] = []  # x, y (display), radius pt, numbers
    for k, number in enumerate(numbers):
        if number is None:
            continue
        pts = [(float(x[k]), float(y[k])) for x, y in zip(xs, ys)
               if np.isfinite(x[k]) and x[k] > 0 and np.isfinite(y[k]) and y[k] > 0]
        if not pts:
            continue
        r = math.sqrt(area[k] / math.pi)
        px, py = ax.transData.transform(max(pts))
        for a in anchors:
            if abs(a[0] - px) * to_pt < fs * 2.5 and abs(a[1] - py) * to_pt < fs * 1.2:
                a[3].append(number)
                a[2] = max(a[2], r)
                break
        else:
            anchors.append([px, py, r, [number]])
    inverse = ax.transData.inverted()
    specs = []
    for px, py, r, shared in anchors:
        x, y = inverse.transform((px, py))
        d = r + 2
        cands = [(x, y, (d, 0), "left", "center", 0.0), (x, y, (-d, 0), "right", "center", 0.0),
                 (x, y, (0, d), "center", "bottom", 0.0), (x, y, (0, -d), "center", "top", 0.0),
                 (x, y, (d * 0.8, d * 0.8), "left", "bottom", 0.0), (x, y, (d * 0.8, -d * 0.8), "left", "top", 0.0)]
        specs.append(LabelSpec(number_label(shared), cands,
                               {"fontsize": fs - 0.5, "fontweight": "bold", "zorder": 5, "gid": GID_LABEL}))
    place_labels(ax, specs, placed=placed, avoid=avoid)


def roofline_figures_by_phase(analysis: Analysis, **kwargs: object) -> dict[str, Figure]:
    """One figure per phase (analysis by 'phase' or 'launch'), titled with the phase name."""
    if analysis.sums_phases:
        raise ValueError("per-phase figures need analyze(..., by='phase'), by='op' or by='launch'")
    phases = sorted(set(analysis.frame["phase"].dropna().astype(str)))
    kwargs = {k: v for k, v in kwargs.items() if k not in ("phase", "title")}
    return {p: roofline_figure(analysis, phase=p, title=p, **kwargs) for p in phases}  # type: ignore[arg-type]

"""The instruction roofline chart (matplotlib), in the style of Ding and Williams, "An Instruction
Roofline Model for GPUs" (PMBS 2019).

Panel (a), the hierarchical instruction roofline: warp instructions per second against warp
instructions per transaction (32-byte sectors at L1, L2 and DRAM; 128-byte wavefronts in shared
memory), one marker per level per kernel with its area proportional to time, under the peak
warp-instruction rate and each level's transaction rate.

Panel (b), the memory-access pattern: global and local load/store warp instructions per L1 sector
(``global_ii``, circles) and shared load/store warp instructions per wavefront (``shared_ii``,
squares) against those instructions per second. The walls are vertical lines at the intensities
of each pattern (:data:`~roofline.analysis.patterns.GLOBAL_WALLS`: stride-0 at 1, unit stride at 1/4,
random at 1/32; :data:`~roofline.analysis.patterns.SHARED_WALLS`: no bank conflict at 1, 32-way at
1/32), drawn up to the L1 or shared transaction-rate ceiling (the diagonals): a kernel sits on or
right of the wall its pattern allows. Pure: returns a Figure; the caller saves it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

from roofline.analysis.patterns import GLOBAL_WALLS, SHARED_WALLS
from roofline.analysis.result import Analysis
from roofline.analysis.work import INSTRUCTIONS
from roofline.kernels.schema import has_runs
from roofline.views.chart.layout import (
    LabelSpec,
    attach_canvas,
    chart_limits,
    draw_ceilings,
    marker_boxes,
    place_labels,
    setup_log_axes,
)
from roofline.views.chart.rows import ChartRows, not_shown_note, pattern_rows, require_drawable, select_rows
from roofline.views.chart.static import (
    GID_POINTS,
    MAX_AREA_PER_INCH,
    MIN_AREA,
    Panel,
    chart_key,
    draw_hierarchical,
    draw_key,
    hierarchical_panel,
    number_kernels,
)
from roofline.views.chart.style import (
    AxisTexts,
    ceilings_caption,
    chart_levels,
    level_color,
    level_label,
    level_marker,
    memory_ceilings,
    vendor_labels,
)

__all__ = ["GID_WALL", "PATTERN_LEVELS", "WALL_NAMES", "instruction_figure", "walls"]

#: Gid prefixes of the wall lines and their labels.
GID_WALL = "wall"
#: Panel (b)'s series: (name, kernel-table instruction column, intensity column, level of its ceiling).
PATTERN_LEVELS = (("global", "global_inst", "global_ii", "l1"), ("shared", "shared_inst", "shared_ii", "shared"))
#: Display names of the walls (keys of GLOBAL_WALLS and SHARED_WALLS).
WALL_NAMES = {"stride-0": "stride-0", "unit-stride": "unit stride", "random": "random",
              "conflict-free": "no bank conflict", "32-way conflicts": "32-way bank conflict"}
PATTERN_TEXTS = AxisTexts("LD/ST warp instructions per transaction", "LD/ST warp instructions/s", "inst/s",
                          "txn/s", "inst/transaction")
#: Panel titles.
TITLE_A, TITLE_B = "(a) Instruction roofline", "(b) Memory access patterns"


@dataclass(frozen=True)
class Wall:
    """A vertical wall at ``x`` (LD/ST warp instructions per transaction): its label, and the
    levels whose pattern it marks ('l1' for global walls, 'shared' for bank-conflict walls)."""

    x: float
    label: str
    levels: tuple[str, ...]


def walls() -> list[Wall]:
    """The global and shared walls, those at one intensity merged (label 'stride-0\\nno bank conflict')."""
    at: dict[float, list[tuple[str, str]]] = {}
    for table, level in ((GLOBAL_WALLS, "l1"), (SHARED_WALLS, "shared")):
        for name, x in table.items():
            at.setdefault(float(x), []).append((WALL_NAMES.get(name, name), level))
    return [Wall(x, "\n".join(n for n, _ in items), tuple(dict.fromkeys(lv for _, lv in items)))
            for x, items in sorted(at.items(), reverse=True)]


def _pattern_series(shown: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per series of panel (b): (intensity, LD/ST warp instructions per second) per row; the rate is
    the instruction count over the kernel's time (NaN where either is unknown)."""
    time = shown["time_s"].to_numpy(dtype=float)
    out = {}
    for name, inst_col, ii_col, _ in PATTERN_LEVELS:
        inst = shown[inst_col].to_numpy(dtype=float) if inst_col in shown else np.full(len(shown), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(time > 0, inst / time, np.nan)
        out[name] = (shown[ii_col].to_numpy(dtype=float), rate)
    return out


def _draw_walls(ax: Axes, ceilings: Mapping[str, float], peak: float | None,
                fs: float) -> tuple[list[LabelSpec], list[Bbox]]:
    """Draw each wall from the bottom up to its roof (the highest of its levels' ceilings at the wall,
    capped by the peak; the top of the axes where unknown); returns their labels to place and the
    walls' boxes (display coordinates), for other labels to keep off."""
    y_lo, y_hi = ax.get_ylim()
    x_lo, x_hi = ax.get_xlim()
    specs = []
    boxes = []
    for wall in walls():
        if not x_lo < wall.x < x_hi:
            continue
        roofs = [wall.x * ceilings[lv] for lv in wall.levels if lv in ceilings]
        roof = min(max(roofs), peak) if roofs and peak else (max(roofs) if roofs else y_hi)
        roof = min(roof, y_hi)
        key = wall.label.replace("\n", "+")
        ax.plot([wall.x, wall.x], [y_lo, roof], color="0.35", linewidth=1.0, linestyle=(0, (4, 2)), zorder=2,
                gid=f"{GID_WALL}:{key}")
        (x0, y0), (x1, y1) = ax.transData.transform([(wall.x, y_lo), (wall.x, roof)])
        boxes.append(Bbox.from_extents(x0 - 1, y0, x1 + 1, y1))
        # along the wall from the bottom, either side; then above its roof, where the line is not
        ys = [*np.geomspace(y_lo * 1.15, max(roof / 1.15, y_lo * 1.3), 6), *np.geomspace(roof, y_hi / 1.5, 6)[1:]]
        cands = [(wall.x, float(y), (dx, 0), "left", va, 90.0) for y in ys
                 for dx, va in ((-2.5, "bottom"), (2.5, "top"))]
        specs.append(LabelSpec(wall.label, cands, {"fontsize": fs - 1.0, "color": "0.25", "zorder": 3,
                                                   "gid": f"{GID_WALL}-label:{key}"}))
    return specs, boxes


def _pattern_panel(ax: Axes, analysis: Analysis, shown: pd.DataFrame, area: np.ndarray,
                   numbers: Sequence[int | None], fs: float, level_labels: Mapping[str, str] | None) -> None:
    """Draw panel (b) on ``ax``: ceilings, walls, one marker per series per kernel, the numbers."""
    machine = analysis.machine
    series = _pattern_series(shown)
    ceilings = memory_ceilings(machine, ["l1", "shared"], INSTRUCTIONS)
    peak = machine.compute.get("warp_inst") if machine is not None else None
    comp = {"warp_inst": float(peak)} if peak else {}
    xs = np.concatenate([x for x, _ in series.values()] + [np.array([w.x for w in walls()])])
    ys = np.concatenate([np.where(np.isfinite(x) & (x > 0), y, np.nan) for x, y in series.values()])
    setup_log_axes(ax, chart_limits(xs, ys, ceilings, comp), fs, TITLE_B, PATTERN_TEXTS)
    specs = draw_ceilings(ax, machine, list(ceilings), comp, fs=fs, level_labels=level_labels,
                          work=INSTRUCTIONS, words=analysis.words) if machine is not None else []
    wall_specs, avoid = _draw_walls(ax, ceilings, peak, fs)
    specs += wall_specs
    (gx, gy), (sx, sy) = series.values()
    for k in np.flatnonzero(np.isfinite(gx * gy * sx * sy) & (gx > 0) & (gy > 0) & (sx > 0) & (sy > 0)):
        ax.plot([gx[k], sx[k]], [gy[k], sy[k]], color="0.6", linewidth=0.5, zorder=3, gid="kernel-link")
    for (name, _, _, level), (x, y) in zip(PATTERN_LEVELS, series.values()):
        ok = np.isfinite(x) & (x > 0) & np.isfinite(y) & (y > 0)
        if not ok.any():
            continue
        avoid += marker_boxes(ax, x[ok], y[ok], area[ok])
        color = level_color(level)
        ax.scatter(x[ok], y[ok], s=area[ok], marker=level_marker(level), linewidths=1.0, zorder=4,
                   facecolors=color, edgecolors=color, alpha=0.85, gid=f"{GID_POINTS}:{name}")
    placed: list[Any] = []
    place_labels(ax, specs, placed=placed, avoid=avoid, precise=True)
    number_kernels(ax, [x for x, _ in series.values()], [y for _, y in series.values()], area, numbers, fs,
                   placed, avoid)


def _numbers(shown: pd.DataFrame, key_ranks: Sequence[int]) -> list[int | None]:
    """Each row's number in the key (1 first), None when it is not in the key."""
    place = {int(r): i + 1 for i, r in enumerate(key_ranks)}
    return [place.get(int(r)) for r in shown["rank"]]


def instruction_figure(
    analysis: Analysis,
    *,
    top: int = 8,
    title: str | None = None,
    levels: Sequence[str] | None = None,
    width: float = 7.0,
    level_labels: Mapping[str, str] | None = None,
    ceilings: str = "used",
) -> Figure:
    """Draw the instruction roofline of ``analysis`` (from ``analyze(..., work="instructions")``):
    panel (a) the hierarchical instruction roofline, panel (b) the memory-access pattern walls (see
    the module docstring). Returns a matplotlib Figure.

    ``top``: kernels (longest first) numbered on both panels and named in the key. ``levels``: a
    subset of the analysed levels for panel (a). ``width``: inches (3.5: panels stacked; from 5:
    side by side). ``level_labels``: display names, e.g. ``{"dram": "HBM"}``. ``ceilings``:
    ``"used"`` or ``"all"`` (the instruction roofline has one compute ceiling, the warp-instruction
    peak). Kernels either panel cannot draw are named in the notes with their share of the time and
    why. Raises ValueError for an analysis of another work, InputError when panel (a) can draw no kernel.
    """
    if analysis.work != "instructions":
        raise ValueError(f"instruction_figure needs analyze(..., work='instructions'), not work={analysis.work!r}")
    draw_levels = chart_levels(analysis, levels)
    rows_a: ChartRows = select_rows(analysis, None, draw_levels)
    require_drawable(rows_a)
    rows_b = pattern_rows(analysis)
    machine = analysis.machine
    level_labels = vendor_labels(analysis.words, level_labels)
    wide = width >= 5
    fs = 8.0 if wide else 7.0
    left, right, gap = (0.6, 0.15, 0.62) if wide else (0.55, 0.2, 0.55)
    panel_w = (width - left - right - gap) / 2 if wide else width - left - right
    panel_a: Panel = hierarchical_panel(analysis, rows_a.shown, levels=levels, ceilings=ceilings, width=panel_w)

    # one marker scale and one numbering for both panels
    drawn = sorted(set(rows_a.shown["rank"]) | set(rows_b.shown["rank"]))
    key_ranks = drawn[:top]
    t_max = float(np.nanmax(analysis.ranked["time_s"].to_numpy(dtype=float)[drawn])) if drawn else 1.0

    def areas(shown: pd.DataFrame) -> np.ndarray:
        t = np.nan_to_num(shown["time_s"].to_numpy(dtype=float))
        return np.maximum(MIN_AREA, MAX_AREA_PER_INCH * panel_w * t / t_max)

    panel_a = Panel(panel_a.shown, panel_a.levels, panel_a.ceiling_levels, panel_a.compute, panel_a.limits,
                    areas(rows_a.shown))
    notes = ["marker area ∝ kernel time; numbers: kernels by time (key above); (b): global and local loads and "
             "stores per L1 sector (circles), shared per wavefront (squares); walls for 4-byte words "
             "(Ding & Williams, PMBS 2019)"]
    for tag, rows in (("(a)", rows_a), ("(b)", rows_b)):
        if note := not_shown_note(rows):
            notes.append(f"{tag} {note}")
    labelled = analysis.ranked.iloc[key_ranks]
    if machine is not None:
        drawn_keys = [*panel_a.ceiling_levels, *memory_ceilings(machine, ["l1", "shared"], INSTRUCTIONS),
                      *panel_a.compute]
        notes.append(ceilings_caption(machine, list(dict.fromkeys(drawn_keys)), level_labels, analysis.words))
    else:
        notes.append("no machine: ceilings not drawn")
    key = chart_key(labelled, analysis.by, notes, width=width, fs=fs, left=left, right=right,
                    labels=analysis.labels, runs=has_runs(analysis.frame))
    ax_h = panel_w * (0.92 if wide else 0.78)
    top_m = 0.3 + (fs + 1.5) * 1.6 / 72 * (title.count("\n") + 1) if title else 0.3
    bottom = 0.45
    axes_h = ax_h if wide else 2 * ax_h + bottom + 0.3
    legend_h = key.line_h * 1.4
    fig_h = top_m + axes_h + bottom + legend_h + key.height + 0.1
    fig = Figure(figsize=(width, fig_h))
    attach_canvas(fig)
    if title:
        fig.suptitle(title, fontsize=fs + 1.5, y=1 - 0.08 / fig_h, va="top")
    y_top = 1 - top_m / fig_h
    if wide:
        ax_a = fig.add_axes((left / width, y_top - ax_h / fig_h, panel_w / width, ax_h / fig_h))
        ax_b = fig.add_axes(((left + panel_w + gap) / width, y_top - ax_h / fig_h, panel_w / width, ax_h / fig_h))
    else:
        ax_a = fig.add_axes((left / width, y_top - ax_h / fig_h, panel_w / width, ax_h / fig_h))
        ax_b = fig.add_axes((left / width, y_top - (2 * ax_h + bottom + 0.3) / fig_h, panel_w / width, ax_h / fig_h))
    handles = draw_hierarchical(ax_a, analysis, panel_a, top=top, fs=fs, level_labels=level_labels, title=TITLE_A,
                                numbers=_numbers(rows_a.shown, key_ranks), precise=True)
    _pattern_panel(ax_b, analysis, rows_b.shown, areas(rows_b.shown), _numbers(rows_b.shown, key_ranks), fs,
                   level_labels)
    shared = level_label("shared", level_labels)
    if not any(h.get_label() == shared for h in handles) and rows_b.shown["shared_ii"].notna().any():
        handles.append(Line2D([], [], marker=level_marker("shared"), linestyle="", color=level_color("shared"),
                              markersize=6, label=shared))
    y_legend = 1 - (top_m + axes_h + bottom) / fig_h
    if handles:
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(left / width - 0.01, y_legend),
                   ncol=len(handles), fontsize=fs - 0.5, frameon=False, handletextpad=0.2, columnspacing=1.0,
                   borderaxespad=0.0, handlelength=1.2)
    draw_key(fig, key, y_legend - legend_h / fig_h, width, fig_h)
    return fig

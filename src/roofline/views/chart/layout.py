"""Layout shared by the matplotlib roofline charts (analysis, compare, CPU).

Axis limits from the data (every point inside, with room for the ceilings), log axes
with SI decade ticks, the ceiling lines, and label placement that cannot collide:
each label has candidate positions, tried in order of preference; the first that lies
inside the axes and overlaps no label placed before it (nor, if possible, a kernel
marker) wins. Positions are measured with the figure's renderer, not guessed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from matplotlib.transforms import Bbox

from roofline.analysis.work import FLOPS, Work
from roofline.kernels.vendor import VendorWords
from roofline.machine.model import Machine
from roofline.units import format_si
from roofline.views.chart.style import (
    AxisTexts,
    axis_texts,
    compute_ceiling_label,
    level_color,
    memory_ceiling_label,
    memory_ceilings,
    merge_equal_ceilings,
)

#: Gid ("group id") prefixes, so that tests and callers can find the artists.
GID_MEMORY, GID_COMPUTE = "ceiling-memory", "ceiling-compute"
#: Colour of compute ceilings.
COMPUTE_COLOR = "0.15"
#: Margin (factor on a log axis) between the outermost point and the axis.
POINT_PAD = 1.6
#: Room above the highest ceiling for its label (factor).
TOP_ROOM = 2.2


def decade_formatter(unit: str = "") -> FuncFormatter:
    """Tick labels at powers of ten only: '1', '10', '0.01'; with a unit, SI prefixes: '10T'."""
    def fmt(value: float, _pos: int) -> str:
        if value <= 0:
            return ""
        exp = math.log10(value)
        if abs(exp - round(exp)) > 1e-6:
            return ""
        if unit:
            return format_si(value, unit).replace(" ", "")[: -len(unit)] or "1"
        if 1e-3 <= value < 1e4:
            return f"{value:g}"
        return f"$10^{{{round(exp)}}}$"
    return FuncFormatter(fmt)


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """The power of ten at or below ``lo``; the first of 1, 2, 5 x 10^k at or above ``hi``
    (no empty decade above the highest ceiling)."""
    k = math.floor(math.log10(hi))
    top = next(m * 10.0 ** k for m in (1, 2, 5, 10) if m * 10.0 ** k >= hi * (1 - 1e-9))
    return 10.0 ** math.floor(math.log10(lo)), top


def _positive(values: Any) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v) & (v > 0)]


def chart_limits(xs: Any, ys: Any, memory: Mapping[str, float], compute: Mapping[str, float]
                 ) -> tuple[float, float, float, float]:
    """(x_lo, x_hi, y_lo, y_hi) at powers of ten: every point inside with a margin, every
    compute ceiling inside with room for its label, and the ridge points visible."""
    x, y = _positive(xs), _positive(ys)
    xr = [float(x.min()) / POINT_PAD, float(x.max()) * POINT_PAD] if x.size else []
    yr = [float(y.min()) / POINT_PAD, float(y.max()) * POINT_PAD] if y.size else []
    if memory and compute:
        top, low = max(compute.values()), min(compute.values())
        xr += [low / max(memory.values()) / 30, top / min(memory.values()) * 4]
        yr += [low / POINT_PAD, top * TOP_ROOM]
    elif compute:
        yr += [min(compute.values()) / POINT_PAD, max(compute.values()) * TOP_ROOM]
    if not xr:
        xr = [0.1, 10.0]
    if not yr:
        yr = [1e9, 1e12]
    if (span := max(xr) / min(xr)) < 100:  # at least two decades, centred on the points
        xr += [min(xr) / math.sqrt(100 / span), max(xr) * math.sqrt(100 / span)]
    if (span := max(yr) / min(yr)) < 100:  # below: the top already has room for labels
        yr.append(min(yr) / (100 / span))
    x_lo, x_hi = _decades(min(xr), max(xr))
    y_lo, y_hi = _decades(min(yr), max(yr))
    return x_lo, x_hi, y_lo, y_hi


def attach_canvas(fig: Figure) -> Any:
    """Give a bare Figure an Agg canvas and return its renderer (text sizes need one)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()  # type: ignore[attr-defined]


def setup_log_axes(ax: Axes, limits: tuple[float, float, float, float], fs: float, title: str | None = None,
                   texts: AxisTexts | None = None) -> None:
    """Log-log axes in the paper's look: inward ticks on all sides, SI decade labels, faint grid.

    ``texts``: axis titles and the y unit (:func:`~roofline.views.chart.style.axis_texts`; FLOP/s by default)."""
    texts = texts or axis_texts()
    x_lo, x_hi, y_lo, y_hi = limits
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.tick_params(labelsize=fs, which="both", direction="in", top=True, right=True)
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=20))
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=20))
    ax.xaxis.set_major_formatter(decade_formatter())
    ax.yaxis.set_major_formatter(decade_formatter(texts.rate_unit))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(texts.x_label, fontsize=fs)
    ax.set_ylabel(texts.y_label, fontsize=fs)
    ax.grid(True, which="major", color="0.92", linewidth=0.5, zorder=0)
    if title:
        ax.set_title(title, fontsize=fs + 1)


# -- labels -----------------------------------------------------------------------------------

@dataclass
class LabelSpec:
    """A label and where it may go: (x, y) in data coordinates, an offset in points,
    alignment and rotation (degrees), in order of preference."""

    text: str
    candidates: Sequence[tuple[float, float, tuple[float, float], str, str, float]]
    style: dict[str, Any] = field(default_factory=dict)


def _inside(box: Bbox, frame: Bbox) -> bool:
    return box.x0 >= frame.x0 - 0.5 and box.x1 <= frame.x1 + 0.5 and box.y0 >= frame.y0 - 0.5 and box.y1 <= frame.y1 + 0.5


def text_outline(text: Text, renderer: Any, pad: float = 0.5) -> np.ndarray:
    """The four corners (display coordinates) of a text's rotated box, ``pad`` pixels wider: for a
    rotated label far tighter than its window extent, the axis-aligned box around the rotated one.
    Exact for ``rotation_mode='anchor'``: the box at rotation 0 turned about the alignment point."""
    rotation = text.get_rotation()
    text.set_rotation(0.0)
    box = text.get_window_extent(renderer).padded(pad)
    text.set_rotation(rotation)
    ha, va = text.get_horizontalalignment(), text.get_verticalalignment()
    ax_ = {"left": box.x0 + pad, "right": box.x1 - pad}.get(ha, (box.x0 + box.x1) / 2)
    ay_ = {"bottom": box.y0 + pad, "top": box.y1 - pad}.get(va, (box.y0 + box.y1) / 2)
    corners = np.array([(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]) - (ax_, ay_)
    if text.get_rotation_mode() != "anchor":
        return np.asarray(text.get_window_extent(renderer).padded(pad).corners())[[0, 2, 3, 1]]
    a = math.radians(rotation)
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.asarray(corners @ turn.T + (ax_, ay_))


def _corners(shape: Bbox | np.ndarray) -> np.ndarray:
    if isinstance(shape, Bbox):
        return np.array([(shape.x0, shape.y0), (shape.x1, shape.y0), (shape.x1, shape.y1), (shape.x0, shape.y1)])
    return np.asarray(shape, dtype=float)


def shapes_overlap(a: Bbox | np.ndarray, b: Bbox | np.ndarray) -> bool:
    """True when two convex shapes (Bboxes, or corner arrays from :func:`text_outline`) overlap, by
    the separating-axis test: they are apart exactly when some edge normal separates them."""
    p, q = _corners(a), _corners(b)
    for poly in (p, q):
        edges = np.roll(poly, -1, axis=0) - poly
        for nx, ny in np.column_stack([-edges[:, 1], edges[:, 0]]):
            if nx == 0 and ny == 0:
                continue
            pp, qq = p @ (nx, ny), q @ (nx, ny)
            if pp.max() <= qq.min() or qq.max() <= pp.min():
                return False
    return True


def place_labels(ax: Axes, specs: Sequence[LabelSpec], *, placed: list[Any] | None = None,
                 avoid: Sequence[Bbox] = (), precise: bool = False) -> list[Text]:
    """Put each label at its first candidate inside the axes that overlaps no label placed
    before it (``placed`` grows), preferring ones that cover nothing in ``avoid`` (markers).
    A label that fits nowhere at its size is tried 1 and 2 pt smaller, then put where it
    overlaps least (never outside the axes when any candidate is inside).

    ``precise``: compare rotated labels by their rotated boxes (:func:`text_outline`), not by the
    axis-aligned boxes around them, which for a label at 45 degrees cover twice its area; ``placed``
    then holds corner arrays as well as Bboxes."""
    renderer = attach_canvas(ax.figure)  # type: ignore[arg-type]
    frame = ax.get_window_extent(renderer)
    placed = [] if placed is None else placed
    out: list[Text] = []
    for spec in specs:
        best: tuple[tuple[int, int, int, int], Text, Any] | None = None
        base = float(spec.style.get("fontsize", 8.0))
        for shrink, size in enumerate((base, base - 1.0, base - 2.0)):
            for i, (x, y, offset, ha, va, rot) in enumerate(spec.candidates):
                t = ax.annotate(spec.text, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va,
                                rotation=rot, rotation_mode="anchor", annotation_clip=False,
                                **{**spec.style, "fontsize": size})
                box = t.get_window_extent(renderer).padded(0.5)
                if precise:
                    shape: Any = text_outline(t, renderer)
                    score = (int(not _inside(box, frame)), sum(shapes_overlap(shape, p) for p in placed), shrink,
                             sum(shapes_overlap(shape, a) for a in avoid))
                else:
                    shape = box
                    score = (int(not _inside(box, frame)),
                             sum(box.overlaps(p) if isinstance(p, Bbox) else shapes_overlap(box, p) for p in placed), shrink,
                             sum(box.overlaps(a) for a in avoid))
                if best is None or score < best[0]:
                    if best is not None:
                        best[1].remove()
                    best = (score, t, shape)
                else:
                    t.remove()
                if score == (0, 0, 0, 0):
                    break
            if best is not None and best[0][:2] == (0, 0):
                break
        if best is not None:
            placed.append(best[2])
            out.append(best[1])
    return out


def angle_of(ax: Axes, x0: float, y0: float, x1: float, y1: float) -> float:
    """Angle (degrees) on screen of the segment from (x0, y0) to (x1, y1) in data coordinates."""
    (a, b), (c, d) = ax.transData.transform([(x0, y0), (x1, y1)])
    return math.degrees(math.atan2(d - b, c - a))


def marker_boxes(ax: Axes, xs: Any, ys: Any, areas: Any) -> list[Bbox]:
    """Display boxes of scatter markers (area in pt^2), to keep labels off them."""
    fig = ax.figure
    out = []
    for x, y, s in zip(np.asarray(xs, float), np.asarray(ys, float), np.asarray(areas, float)):
        if not (np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0):
            continue
        r = math.sqrt(max(s, 1.0) / math.pi) * fig.dpi / 72.0  # type: ignore[union-attr]
        px, py = ax.transData.transform((x, y))
        out.append(Bbox.from_extents(px - r, py - r, px + r, py + r))
    return out


def draw_ceilings(ax: Axes, machine: Machine, levels: Sequence[str], compute: Mapping[str, float], *, fs: float,
                  level_labels: Mapping[str, str] | None = None, linestyle: str | None = None,
                  gid_suffix: str = "", work: Work = FLOPS, words: VendorWords | None = None) -> list[LabelSpec]:
    """Draw the memory diagonals of ``levels`` and the ``compute`` ceilings (equal values
    merged into one line), each only where attainable; returns their labels to place.

    ``linestyle``: one style for every line (compare charts tell machines apart so);
    by default the highest compute ceiling is solid and the others dashed, as in the paper.
    ``work``: the memory ceilings are its traffic rates (:meth:`Work.level_ceiling`: B/s, or
    transactions/s on the instruction roofline). ``words``: the vendor's, for the compute labels
    ('Matrix FP16' on AMD; NVIDIA's by default).
    """
    x_lo, x_hi = ax.get_xlim()
    y_lo, y_hi = ax.get_ylim()
    mem = memory_ceilings(machine, levels, work)
    traffic_unit = axis_texts(work).traffic_rate_unit
    specs: list[LabelSpec] = []  # memory labels; compute labels (fewer places to go) are placed first
    compute_specs: list[LabelSpec] = []
    if not compute:
        return specs
    top = max(compute.values())
    bw_max = max(mem.values()) if mem else None
    for group, bw in merge_equal_ceilings(mem):  # levels of one ceiling: one label, lines dashed over each other
        x_end = top / bw
        for j, lv in enumerate(group):
            style = linestyle or ("-" if j == 0 else (3 * (j - 1), (3, 3 * (len(group) - 1))))
            ax.plot([x_lo, x_end], [bw * x_lo, top], color=level_color(lv), linewidth=1.2, zorder=2 + 0.01 * j,
                    linestyle=style, gid=f"{GID_MEMORY}:{lv}{gid_suffix}")
        a, b = max(x_lo, y_lo / bw), min(x_hi, x_end)  # the visible part
        if b <= a * 1.05:
            continue
        ang = angle_of(ax, a, bw * a, b, bw * b)
        off = (-3 * math.sin(math.radians(ang)), 3 * math.cos(math.radians(ang)))
        xs = np.geomspace(a * 1.15, b / 1.3, 14) if b / a > 1.5 else np.array([a])
        specs.append(LabelSpec(memory_ceiling_label(group, bw, level_labels, traffic_unit),
                               [(float(x), bw * float(x), off, "left", "bottom", ang) for x in xs],
                               {"fontsize": fs - 0.5, "color": level_color(group[0]) if len(group) == 1 else "0.25",
                                "zorder": 3, "gid": f"{GID_MEMORY}-label:{'+'.join(group)}{gid_suffix}"}))
    for i, (keys, peak) in enumerate(merge_equal_ceilings(compute)):
        x_start = peak / bw_max if bw_max else x_lo
        style = linestyle or ("-" if i == 0 else "--")
        ax.plot([x_start, x_hi], [peak, peak], color=COMPUTE_COLOR, linewidth=1.2, linestyle=style, zorder=2,
                gid=f"{GID_COMPUTE}:{'+'.join(keys)}{gid_suffix}")
        if not (y_lo < peak < y_hi):
            continue
        left = max(x_start, x_lo) * 1.1
        mids = np.geomspace(left, x_hi, 6)[1:-1]
        above, below = (0, 1.5), (0, -1.5)
        cands = [(left, peak, above, "left", "bottom", 0.0), (x_hi / 1.05, peak, above, "right", "bottom", 0.0)]
        cands += [(float(m), peak, above, "center", "bottom", 0.0) for m in mids]
        cands += [(x_hi / 1.05, peak, below, "right", "top", 0.0), (left, peak, below, "left", "top", 0.0)]
        cands += [(float(m), peak, below, "center", "top", 0.0) for m in mids]
        if x_start > x_lo * 1.2:  # crowded: before the line's start, level with it
            cands += [(x_start / 1.05, peak, above, "right", "bottom", 0.0),
                      (x_start / 1.05, peak, below, "right", "top", 0.0),
                      (x_start / 1.05, peak, (0, 0), "right", "center", 0.0)]
        compute_specs.append(LabelSpec(compute_ceiling_label(keys, peak, words), cands,
                               {"fontsize": fs - 0.5, "color": COMPUTE_COLOR, "zorder": 3,
                                "gid": f"{GID_COMPUTE}-label:{'+'.join(keys)}{gid_suffix}",
                                "bbox": {"facecolor": "white", "edgecolor": "none", "pad": 0.3, "alpha": 0.85}}))
    return compute_specs + specs


def number_label(numbers: Sequence[int], max_chars: int = 9) -> str:
    """Kernel numbers sharing one spot: runs as ranges ('1-25'), cut with '+k' when long ('1,3,5+10')."""
    nums = sorted(set(numbers))
    runs: list[str] = []
    start = prev = nums[0]
    for n in [*nums[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        runs.append(str(start) if start == prev else f"{start}{',' if prev == start + 1 else '-'}{prev}")
        if n is not None:
            start = prev = n
    text = ",".join(runs)
    if len(text) <= max_chars:
        return text
    shown: list[str] = []
    for n in nums:
        rest = len(nums) - len(shown) - 1
        if len(",".join([*shown, str(n)])) + len(f"+{rest}") > max_chars and shown:
            break
        shown.append(str(n))
    return ",".join(shown) + f"+{len(nums) - len(shown)}"


def wrap(lines: Sequence[str], chars: int) -> list[str]:
    """Wrap caption lines at ``chars`` characters, on '; ' and spaces."""
    import textwrap

    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(line, max(chars, 20), break_on_hyphens=False, subsequent_indent="  ") or [""])
    return out

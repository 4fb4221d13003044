"""Working-set sweeps: find bandwidth plateaus and name them after cache levels.

Shared by the GPU and CPU characterizations; nothing here knows which device ran the sweep.

    find_plateaus(sizes_bytes, bandwidths, cache_sizes=None) -> list[Plateau]
    name_plateaus(plateaus, levels=("l1", "l2", "dram"), cache_sizes=None) -> dict[str, Plateau]
    plot_sweep(sweep, cache_sizes=None, title=None) -> matplotlib.figure.Figure

A sweep measures bandwidth (B/s) at growing working sets (B). Each memory level holds the
working set up to its capacity, so bandwidth is flat (a plateau) while the set fits a level and
drops when it spills to the next. Plateaus are found on a log-size, log-bandwidth axis by
optimal piecewise-constant segmentation (dynamic programming, penalty scaled to the noise
measured from the data), then short segments (transitions) are dropped and neighbours within
``merge_tol`` of each other merged.

Sizes passed as ``cache_sizes`` must be in the same terms as the sweep's sizes: when the sweep
reports the total working set of all threads, a private per-core cache counts once per thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from roofline.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class Plateau:
    """A run of working-set sizes with nearly constant bandwidth.

    ``first_size``/``last_size``: smallest and largest working set of the run (B);
    ``bandwidth``: median bandwidth of the run (B/s); ``spread``: robust relative spread
    of the run's points (1.4826 x MAD / median); ``points``: how many sweep points it holds.
    """

    first_size: float
    last_size: float
    bandwidth: float
    spread: float
    points: int

    @property
    def center_size(self) -> float:
        """Geometric middle of the plateau's size range (B)."""
        return math.sqrt(self.first_size * self.last_size)


def _running_median(y: np.ndarray, half: int = 1) -> np.ndarray:
    out = np.empty_like(y)
    for i in range(len(y)):
        out[i] = np.median(y[max(0, i - half): i + half + 1])
    return out


def _segment(x: np.ndarray, y: np.ndarray, penalty: float) -> list[tuple[int, int]]:
    """Optimal partition of (x, y) into straight pieces of >= 2 points: minimise SSE + penalty x pieces."""
    n = len(y)
    cx, cy = np.concatenate([[0.0], np.cumsum(x)]), np.concatenate([[0.0], np.cumsum(y)])
    cxx, cyy = np.concatenate([[0.0], np.cumsum(x * x)]), np.concatenate([[0.0], np.cumsum(y * y)])
    cxy = np.concatenate([[0.0], np.cumsum(x * y)])

    def cost(i: int, j: int) -> float:  # SSE of the least-squares line through points i..j-1
        m = j - i
        sx, sy = cx[j] - cx[i], cy[j] - cy[i]
        vxx = cxx[j] - cxx[i] - sx * sx / m
        vyy = cyy[j] - cyy[i] - sy * sy / m
        vxy = cxy[j] - cxy[i] - sx * sy / m
        return float(max(vyy - (vxy * vxy / vxx if vxx > 0 else 0.0), 0.0))

    best = np.full(n + 1, np.inf)
    best[0] = -penalty
    prev = np.zeros(n + 1, dtype=int)
    for j in range(2, n + 1):
        for i in range(0, j - 1):
            if not np.isfinite(best[i]):
                continue
            v = best[i] + penalty + cost(i, j)
            if v < best[j]:
                best[j], prev[j] = v, i
    cuts = []
    j = n
    while j > 0:
        cuts.append((int(prev[j]), j))
        j = int(prev[j])
    return cuts[::-1]


def find_plateaus(
    sizes_bytes: Sequence[float] | np.ndarray,
    bandwidths: Sequence[float] | np.ndarray,
    cache_sizes: Mapping[str, float] | None = None,
    *,
    min_points: int = 3,
    merge_tol: float = 0.12,
    max_slope: float = 0.15,
) -> list[Plateau]:
    """Plateaus of a working-set sweep, in order of size (smallest working set first).

    ``sizes_bytes`` (B) and ``bandwidths`` (B/s) are paired points, in any order; NaN points are
    ignored. The log-log sweep is cut into straight pieces (optimal segmentation, penalty scaled
    to the noise); flat pieces (bandwidth changing less than ``merge_tol`` across the piece) of at
    least ``min_points`` points are plateaus, as are pieces whose bandwidth falls by less than
    ``max_slope`` (natural log) per doubling of the working set; steeper pieces are transitions.
    Neighbouring plateaus whose bandwidths differ by less than ``merge_tol`` (relative) are one.
    Plateaus at small sizes that are slower than a later plateau are overhead-bound ramps, not
    memory levels, and are dropped. When ``cache_sizes`` are given, a plateau is also split where
    it crosses a cache size with a bandwidth step across it.
    """
    x = np.asarray(sizes_bytes, dtype=float)
    b = np.asarray(bandwidths, dtype=float)
    if x.shape != b.shape:
        raise InputError(f"sweep sizes and bandwidths differ in length ({x.size} vs {b.size})")
    ok = np.isfinite(x) & np.isfinite(b) & (x > 0) & (b > 0)
    x, b = x[ok], b[ok]
    order = np.argsort(x, kind="stable")
    x, b = x[order], b[order]
    if len(x) < min_points:
        return []
    lx = np.log2(x)
    y = _running_median(np.log(b))
    # Noise from successive differences (robust), floored so that clean data is not cut into slivers.
    diffs = np.diff(np.log(b))
    sigma = 1.4826 * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2) if len(diffs) else 0.0
    sigma = max(sigma, 0.01)
    penalty = 3.0 * sigma * sigma * math.log(len(y)) + 1e-4
    pieces = _segment(lx, y, penalty)
    flat_tol = math.log1p(merge_tol)
    flats = []
    for i, j in pieces:
        if j - i < min_points:
            continue
        slope = np.polyfit(lx[i:j], y[i:j], 1)[0]
        if abs(slope) * (lx[j - 1] - lx[i]) < flat_tol or abs(slope) < max_slope:
            flats.append((i, j))
    if cache_sizes:
        flats = [p for p in _split_at_caches(flats, x, y, cache_sizes, merge_tol) if p[1] - p[0] >= min_points]
    merged: list[tuple[int, int]] = []
    for i, j in flats:
        if merged:
            pi, pj = merged[-1]
            if abs(np.median(y[i:j]) - np.median(y[pi:pj])) < flat_tol:
                merged[-1] = (pi, j)
                continue
        merged.append((i, j))
    plateaus = [_plateau(x[i:j], b[i:j]) for i, j in merged]
    if not plateaus:
        return []
    fastest = int(np.argmax([p.bandwidth for p in plateaus]))
    return plateaus[fastest:]


def _split_at_caches(
    pieces: list[tuple[int, int]], x: np.ndarray, y: np.ndarray, cache_sizes: Mapping[str, float], tol: float
) -> list[tuple[int, int]]:
    out = []
    for i, j in pieces:
        cuts = [i]
        for size in sorted(float(s) for s in cache_sizes.values() if s and s > 0):
            k = int(np.searchsorted(x, size, side="right"))
            if cuts[-1] + 2 <= k <= j - 2:
                left, right = np.median(y[cuts[-1]:k]), np.median(y[k:j])
                if abs(left - right) > math.log1p(tol):
                    cuts.append(k)
        cuts.append(j)
        out += list(zip(cuts[:-1], cuts[1:]))
    return out


def _plateau(x: np.ndarray, b: np.ndarray) -> Plateau:
    med = float(np.median(b))
    mad = float(np.median(np.abs(b - med)))
    return Plateau(float(x[0]), float(x[-1]), med, 1.4826 * mad / med, int(len(x)))


def name_plateaus(
    plateaus: Sequence[Plateau],
    levels: Sequence[str] = ("l1", "l2", "dram"),
    *,
    cache_sizes: Mapping[str, float] | None = None,
) -> dict[str, Plateau]:
    """Name plateaus after memory levels, innermost (fastest, smallest) first.

    ``levels`` are ordered innermost first and end with the level beyond every cache (``dram``):
    the largest-size plateau is that last level (with ``cache_sizes``: only when its middle size
    lies beyond every cache). With ``cache_sizes`` (B, same terms as
    the sweep), each other plateau goes to the smallest cache that holds its middle size; when
    two plateaus claim one level the one with more points wins. Without cache sizes, plateaus
    are named in order; surplus ones (the narrowest) are left out and missing outer caches are
    absent from the result, never guessed.
    """
    if not plateaus:
        return {}
    levels = list(levels)
    ps = sorted(plateaus, key=lambda p: p.first_size)
    inner_levels = levels[:-1]
    known = {k: float(v) for k, v in (cache_sizes or {}).items() if k in inner_levels and v}
    named: dict[str, Plateau] = {}
    if known and ps[-1].center_size <= max(known.values()):
        inner = ps  # the sweep never reached a plateau beyond the caches: no main-memory level
    else:
        named[levels[-1]] = ps[-1]
        inner = ps[:-1]
    if known:
        by_size = sorted(known.items(), key=lambda kv: kv[1])
        for p in inner:
            level = next((name for name, size in by_size if p.center_size <= size), None)
            if level is None:
                continue  # beyond every known cache but not the last plateau: not a level we can name
            if level not in named or p.points > named[level].points:
                named[level] = p
    else:
        if len(inner) > len(inner_levels):
            widest = sorted(range(len(inner)), key=lambda k: -inner[k].points)[: len(inner_levels)]
            inner = [inner[k] for k in sorted(widest)]
        for name, p in zip(inner_levels, inner):
            named[name] = p
    return {name: named[name] for name in levels if name in named}


# -- plotting ----------------------------------------------------------------------------------

def _as_sweeps(sweep: Any) -> dict[str, pd.DataFrame]:
    if isinstance(sweep, pd.DataFrame):
        return {"": sweep}
    if isinstance(sweep, Mapping):
        if "size_bytes" in sweep and "bandwidth" in sweep:
            return {"": pd.DataFrame({k: np.asarray(v) for k, v in sweep.items()})}
        out = {}
        for name, frame in sweep.items():
            out[str(name)] = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
        return out
    raise InputError(f"a sweep is a DataFrame or a mapping of them, not {type(sweep).__name__}")


def binary_size(value: float) -> str:
    """A size in bytes with a binary prefix: ``binary_size(32768) == '32 KiB'``."""
    for scale, unit in ((2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B"


def _minor_label(value: float, _pos: object = None) -> str:
    """Label the 2x and 5x minor ticks of a decade (B/s), leave the others bare."""
    from roofline.units import format_si

    if value <= 0:
        return ""
    lead = value / 10 ** math.floor(math.log10(value) + 1e-9)
    return format_si(value, "B/s") if round(lead) in (2, 5) and abs(lead - round(lead)) < 1e-6 else ""


def plot_sweep(
    sweep: Any,
    cache_sizes: Mapping[str, float] | None = None,
    title: str | None = None,
    *,
    levels: Sequence[str] | None = None,
    plateaus: Mapping[str, Plateau | Mapping[str, float]] | None = None,
) -> Figure:
    """Bandwidth against working set: log axes, binary size ticks, decimal B/s, caches and plateaus marked.

    ``sweep`` is a DataFrame with ``size_bytes`` and ``bandwidth`` (optional ``spread``), a mapping
    with those keys, or a mapping of several such frames by name (e.g. 'read', 'copy'). Plateaus
    of the first sweep are shaded and named (``levels``, default l1/l2/l3/dram as found), unless
    ``plateaus`` gives them (name -> :class:`Plateau`, or a mapping with ``first_size``,
    ``last_size`` and ``bandwidth``, as a measurement's ``metadata['plateaus']``).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from roofline.units import format_si

    sweeps = _as_sweeps(sweep)
    fig = Figure(figsize=(8, 4.8), layout="constrained")
    ax = fig.add_subplot()
    all_sizes: list[float] = []
    for name, frame in sweeps.items():
        s = frame["size_bytes"].to_numpy(dtype=float)
        bw = frame["bandwidth"].to_numpy(dtype=float)
        all_sizes += list(s)
        line = ax.plot(s, bw, marker="o", ms=3, lw=1.2, label=name or "bandwidth")[0]
        if "spread" in frame:
            sp = frame["spread"].to_numpy(dtype=float)
            ax.fill_between(s, bw * (1 - sp), bw * (1 + sp), color=line.get_color(), alpha=0.2, lw=0)
    if plateaus is not None:
        named = {k: p if isinstance(p, Plateau) else Plateau(float(p["first_size"]), float(p["last_size"]),
                                                              float(p["bandwidth"]), float(p.get("spread", 0.0)),
                                                              int(p.get("points", 0)))
                 for k, p in plateaus.items()}
    else:
        first = next(iter(sweeps.values()))
        found = find_plateaus(first["size_bytes"], first["bandwidth"], cache_sizes)
        level_names = list(levels) if levels else ["l1", "l2", "l3", "dram"]
        if not cache_sizes and not levels:
            level_names = ["l1", "l2", "l3", "dram"][: max(0, len(found) - 1)] + ["dram"]
        named = name_plateaus(found, level_names, cache_sizes=cache_sizes)
    for level, p in named.items():
        ax.axvspan(p.first_size, p.last_size, color="tab:green", alpha=0.10, lw=0)
        ax.hlines(p.bandwidth, p.first_size, p.last_size, colors="tab:green", lw=2)
        ax.annotate(f"{level.upper()} {format_si(p.bandwidth, 'B/s')}", (p.center_size, p.bandwidth),
                    textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8, color="darkgreen")
    for level, size in (cache_sizes or {}).items():
        ax.axvline(size, color="gray", ls="--", lw=0.8)
        ax.annotate(f"{level.upper()} {binary_size(size)}", (size, 1.0), xycoords=("data", "axes fraction"),
                    rotation=90, va="top", ha="right", fontsize=7, color="dimgray")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if all_sizes:
        lo = math.floor(math.log2(min(all_sizes)))
        hi = math.ceil(math.log2(max(all_sizes)))
        step = max(1, math.ceil((hi - lo + 1) / 10))
        ax.xaxis.set_major_locator(FixedLocator([2.0**k for k in range(lo, hi + 1, step)]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: binary_size(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_si(v, "B/s")))
    ax.yaxis.set_minor_formatter(FuncFormatter(_minor_label))
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xlabel("working set")
    ax.set_ylabel("bandwidth")
    ax.grid(True, which="major", alpha=0.3)
    if len(sweeps) > 1 or next(iter(sweeps)):
        ax.legend(loc="lower left", fontsize=8)
    ax.set_title(title or "Working-set sweep")
    return fig

"""The CPU benchmark's memory ceilings from its sweeps: which plateau is DRAM, on which clock, how steady.

Used by :mod:`roofline.bench.cpu.measure`. The read sweep's frame has ``size_bytes`` (all threads),
``bandwidth`` (timed on the threads' CPU time), ``bandwidth_wall`` (on the wall time) and
``repeat_ratio``/``repeat_ratio_wall`` per point; the read-modify-write frame ``size_bytes``,
``bandwidth`` (wall time) and ``repeat_ratio``. ``notes`` collects sentences for the user.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from roofline.errors import MachineError
from roofline.bench.sweep import Plateau


def dram_ceiling(read: Plateau, rmw: pd.DataFrame, notes: list[str]) -> tuple[Plateau, dict[str, float]]:
    """The DRAM ceiling: the faster of the read sweep's DRAM plateau and the read-modify-write points.

    The read-modify-write bandwidth is the median of its points (all beyond 4x the last-level
    cache), its spread the larger of the points' median spread and their robust spread. Like
    ERT's ceilings, the ceiling is the best of the kernels: code that reads and writes reaches it.
    Returns the ceiling as a plateau and both kernels' bandwidths (B/s) by name.
    """
    bw = rmw["bandwidth"].to_numpy(dtype=float)
    med = float(np.median(bw))
    spread = max(float(np.median(rmw["spread"])), 1.4826 * float(np.median(np.abs(bw - med))) / med)
    both = {"read": read.bandwidth, "rmw": med}
    if med <= read.bandwidth:
        notes.append(f"DRAM ceiling from the read sweep ({read.bandwidth / 1e9:.1f} GB/s; "
                     f"read-modify-write {med / 1e9:.1f} GB/s)")
        return read, both
    notes.append(f"DRAM ceiling from the read-modify-write kernel ({med / 1e9:.1f} GB/s, 16 B per element "
                 f"read and written back), {med / read.bandwidth:.2f}x the read sweep's plateau "
                 f"({read.bandwidth / 1e9:.1f} GB/s)")
    sizes = rmw["size_bytes"].to_numpy(dtype=float)
    return Plateau(float(sizes.min()), float(sizes.max()), med, spread, len(bw)), both


def points(p: Plateau, frame: pd.DataFrame) -> pd.DataFrame:
    """The sweep points a plateau spans."""
    return frame[(frame["size_bytes"] >= p.first_size) & (frame["size_bytes"] <= p.last_size)]


def on_wall_time(p: Plateau, frame: pd.DataFrame) -> Plateau:
    """The read sweep's DRAM plateau timed on the wall time (DRAM is shared: threads that ran while
    others waited for a core would each get more of it than they do together)."""
    bw = points(p, frame)["bandwidth_wall"].to_numpy(dtype=float)
    med = float(np.median(bw))
    return Plateau(p.first_size, p.last_size, med, 1.4826 * float(np.median(np.abs(bw - med))) / med, len(bw))


def plateau_ratio(p: Plateau, frame: pd.DataFrame, column: str) -> float:
    """The median over a plateau's sweep points of their fastest / slowest repeat."""
    return float(np.median(points(p, frame)[column]))


def beyond_caches(frame: pd.DataFrame, llc: int, notes: list[str]) -> Plateau:
    """DRAM from the sweep points beyond 4x the last-level cache, when no plateau was found there."""
    tail = frame[frame["size_bytes"] >= 4 * llc]
    if len(tail) < 2:
        raise MachineError("no DRAM plateau in the working-set sweep and too few points beyond the caches",
                           hint="run with mode='thorough'")
    bw = tail["bandwidth_wall" if "bandwidth_wall" in tail else "bandwidth"].to_numpy(dtype=float)
    med = float(np.median(bw))
    notes.append(f"no DRAM plateau found (noisy sweep): DRAM is the median of the {len(tail)} points "
                 "beyond 4x the last-level cache")
    return Plateau(float(tail["size_bytes"].min()), float(tail["size_bytes"].max()), med,
                   1.4826 * float(np.median(np.abs(bw - med))) / med, len(tail))

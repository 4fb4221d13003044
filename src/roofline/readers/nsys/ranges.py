"""The NVTX ranges open around each kernel launch in a timeline, on the CPU side.

A kernel runs in the ranges that were open when its launch was called: the push/pop ranges of the
launching thread (they nest: a stack per thread) and the start/end ranges of its process (any
thread may open or close them), each open at the call's start (``start <= t < end``). As Nsight
Compute's NVTX columns do, these give phase, operator and module (:func:`roofline.readers.torch_ranges.attribute`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.readers.nsys.export import PUSH_POP, START_END
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, Range


def _coded(keys: Sequence[tuple[int, ...]], ranges: list[Range]) -> tuple[np.ndarray, list[list[Range]]]:
    """Codes per launch for its tuple of range indices (-1: none open), and each code's ranges."""
    codes = np.full(len(keys), -1, dtype=np.int64)
    seen: dict[tuple[int, ...], int] = {}
    stacks: list[list[Range]] = []
    for i, key in enumerate(keys):
        if not key:
            continue
        code = seen.get(key)
        if code is None:
            code = seen[key] = len(stacks)
            stacks.append([ranges[j] for j in key])
        codes[i] = code
    return codes, stacks


def _as_ranges(frame: pd.DataFrame) -> list[Range]:
    return [(DEFAULT_DOMAIN if pd.isna(d) else str(d), str(t)) for d, t in zip(frame["domain"], frame["text"])]


def _climb(candidate: np.ndarray, parent: np.ndarray, ends: np.ndarray, at: np.ndarray) -> np.ndarray:
    """From each candidate range up through ``parent`` to the first one still open at ``at`` (end > at),
    -1 where none is: a step per nesting level, every row at once."""
    candidate = candidate.copy()
    while True:
        closed = np.flatnonzero(candidate >= 0)
        closed = closed[ends[candidate[closed]] <= at[closed]]
        if not len(closed):
            return candidate
        candidate[closed] = parent[candidate[closed]]


@dataclass(frozen=True)
class Forest:
    """The push/pop ranges of a timeline as a forest: ``order``, the given ranges' positions sorted by
    thread, start and longest first (parents before their children); ``parent``, per range of that
    order, the position of the innermost range open when it was pushed (-1: a root); ``innermost``,
    per launch, the position of the innermost range open at its call (-1: none)."""

    order: np.ndarray
    parent: np.ndarray
    innermost: np.ndarray


def push_pop_forest(kind: np.ndarray, start: np.ndarray, end: np.ndarray, tid: np.ndarray,
                    launch_tid: np.ndarray, launch_at: np.ndarray, known: np.ndarray) -> Forest:
    """The :class:`Forest` of the push/pop ranges (``kind``, ``start``, ``end`` in ns, ``tid``: one
    row per range) and each launch's innermost range on thread ``launch_tid`` at time ``launch_at``
    (ns; only where ``known``).

    Push/pop ranges nest on their thread, so a stack is known by its innermost range: the last one
    opened at or before ``at`` on the thread, or the first of its enclosing ranges still open. Each
    range's parent (the innermost range open when it was pushed) is found the same way."""
    rows = np.flatnonzero(np.asarray(kind) == PUSH_POP)
    order = rows[np.lexsort((-end[rows], start[rows], tid[rows]))]  # stable, as a sort by (tid, start, -end)
    m = len(order)
    threads, starts, ends = tid[order], start[order], end[order]
    # parent: the range before on the same thread, climbed until one still open at this one's start
    parent = np.arange(m, dtype=np.int64) - 1
    if m:
        parent[np.r_[True, threads[1:] != threads[:-1]]] = -1
    for _ in range(m):  # parents of parents: a pass per nesting level, until none moves
        moved = parent >= 0
        moved[moved] = ends[parent[moved]] <= starts[moved]
        if not moved.any():
            break
        parent[moved] = parent[parent[moved]]
    innermost = np.full(len(launch_tid), -1, dtype=np.int64)
    on = np.flatnonzero(known)
    if m and len(on):
        t_tid, t_at = launch_tid[on], launch_at[on]
        # the last range of the launch's thread opened at or before it (the thread's ranges are one slice)
        last = np.full(len(on), -1, dtype=np.int64)
        for thread in np.unique(t_tid):
            lo, hi = np.searchsorted(threads, thread, "left"), np.searchsorted(threads, thread, "right")
            if lo == hi:
                continue
            mine = np.flatnonzero(t_tid == thread)
            before = np.searchsorted(starts[lo:hi], t_at[mine], side="right") - 1
            last[mine] = np.where(before >= 0, lo + before, -1)
        innermost[on] = _climb(last, parent, ends, t_at)
    return Forest(order=order, parent=parent, innermost=innermost)


def push_pop(ranges: pd.DataFrame, tid: pd.Series, at: pd.Series) -> tuple[np.ndarray, list[list[Range]]]:
    """Each launch's push/pop stack (outermost first) on thread ``tid`` at time ``at`` (ns; <NA>: not
    known, no stack), as codes and the distinct stacks: the chains of parents of the distinct
    innermost ranges of :func:`push_pop_forest`."""
    known = ~(tid.isna() | at.isna()).to_numpy()
    forest = push_pop_forest(ranges["kind"].to_numpy(), ranges["start"].to_numpy(dtype=np.int64),
                             ranges["end"].to_numpy(dtype=np.int64), ranges["tid"].to_numpy(dtype=np.int64),
                             tid.to_numpy(dtype=np.int64, na_value=-1),  # never through float: ids pass 2**53
                             at.to_numpy(dtype=np.int64, na_value=-1), known)
    codes = np.full(len(tid), -1, dtype=np.int64)
    found = forest.innermost >= 0
    distinct, codes[found] = np.unique(forest.innermost[found], return_inverse=True)
    texts = _as_ranges(ranges.iloc[forest.order])
    stacks = []
    for k in distinct.tolist():
        chain = []
        while k >= 0:
            chain.append(texts[k])
            k = int(forest.parent[k])
        stacks.append(chain[::-1])
    return codes, stacks


def start_end(ranges: pd.DataFrame, pid: np.ndarray, at: pd.Series) -> tuple[np.ndarray, list[list[Range]]]:
    """Each launch's open start/end ranges of process ``pid`` at time ``at`` (ns), earliest opened
    first, as codes and the distinct lists."""
    n = len(pid)
    opened = ranges[ranges["kind"] == START_END].sort_values("start").reset_index(drop=True)
    if opened.empty:
        return np.full(n, -1, dtype=np.int64), []
    lists: list[list[int]] = [[] for _ in range(n)]
    known = ~at.isna().to_numpy()
    times = at.to_numpy(dtype="float64")
    for process in np.unique(pid[known]) if len(opened) else []:
        rows = np.flatnonzero(known & (pid == process))
        order = rows[np.argsort(times[rows], kind="stable")]
        sorted_times = times[order]
        mine = opened[opened["pid"] == process]
        for k, s, e in zip(mine.index, mine["start"].to_numpy(), mine["end"].to_numpy()):
            for row in order[np.searchsorted(sorted_times, s, "left"):np.searchsorted(sorted_times, e, "left")]:
                lists[row].append(int(k))
    return _coded([tuple(x) for x in lists], _as_ranges(opened))

"""The NVTX ranges open around each kernel launch in a timeline, on the CPU side.

A kernel runs in the ranges that were open when its launch was called: the push/pop ranges of the
launching thread (they nest: a stack per thread) and the start/end ranges of its process (any
thread may open or close them), each open at the call's start (``start <= t < end``). As Nsight
Compute's NVTX columns do, these give phase, operator and module (:func:`roofline.readers.torch_ranges.attribute`).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def push_pop(ranges: pd.DataFrame, tid: pd.Series, at: pd.Series) -> tuple[np.ndarray, list[list[Range]]]:
    """Each launch's push/pop stack (outermost first) on thread ``tid`` at time ``at`` (ns; <NA>: not
    known, no stack), as codes and the distinct stacks."""
    n = len(tid)
    keys: list[tuple[int, ...]] = [()] * n
    pushed = ranges[ranges["kind"] == PUSH_POP].sort_values(["tid", "start", "end"], ascending=[True, True, False])
    pushed = pushed.reset_index(drop=True)
    known = ~(tid.isna() | at.isna()).to_numpy()
    launches = pd.DataFrame({"tid": tid.to_numpy(dtype="float64")[known], "at": at.to_numpy(dtype="float64")[known],
                             "row": np.flatnonzero(known)})
    for thread, mine in launches.groupby("tid", sort=False):
        own = pushed[pushed["tid"] == thread]
        if own.empty:
            continue
        starts, ends, index = own["start"].to_numpy(), own["end"].to_numpy(), own.index.to_numpy()
        stack: list[int] = []
        j = 0
        for t, row in sorted(zip(mine["at"].to_numpy(), mine["row"].to_numpy())):
            while j < len(starts) and starts[j] <= t:
                while stack and ends[stack[-1]] <= starts[j]:
                    stack.pop()
                stack.append(j)
                j += 1
            while stack and ends[stack[-1]] <= t:
                stack.pop()
            keys[int(row)] = tuple(int(index[k]) for k in stack)
    return _coded(keys, _as_ranges(pushed))


def start_end(ranges: pd.DataFrame, pid: np.ndarray, at: pd.Series) -> tuple[np.ndarray, list[list[Range]]]:
    """Each launch's open start/end ranges of process ``pid`` at time ``at`` (ns), earliest opened
    first, as codes and the distinct lists."""
    n = len(pid)
    lists: list[list[int]] = [[] for _ in range(n)]
    opened = ranges[ranges["kind"] == START_END].sort_values("start").reset_index(drop=True)
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

"""A window of one device's timeline cut into what ran: pure interval arithmetic, no I/O.

The window ``[w0, w1)`` is cut at every start and end of the work inside it (each interval clipped
to the window). Within each piece the running kernels and copies are counted, so that:

- a piece where a compute kernel runs is **kernel time**, shared equally among the compute kernels
  running then (two at once: half each), each share going to its kernel's label (its bound);
- a piece where no compute kernel runs but communication or a copy does is **exposed
  communication**, shared the same way among the communication kernels and copies running;
- a piece where nothing runs is **idle**; consecutive idle pieces are one gap.

So ``wall = kernel time + exposed communication + idle`` exactly, nothing counted twice. Reported
beside, within the busy time: **overlap**, the time with more than one kernel (compute or
communication) running at once, and **hidden communication**, the time communication or a copy runs
under a compute kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Spans:
    """Intervals on one device (ns): ``start``, ``end``, a ``label`` index into ``labels`` per interval,
    and ``kernel``: True where the interval is a kernel (False: a copy or memset)."""

    start: np.ndarray
    end: np.ndarray
    label: np.ndarray
    labels: Sequence[str]
    kernel: np.ndarray

    @staticmethod
    def empty() -> Spans:
        none = np.zeros(0, dtype=np.int64)
        return Spans(none, none, none, (), np.zeros(0, dtype=bool))


@dataclass(frozen=True)
class Split:
    """A window's seconds by what ran (the module's rules): ``kernel_s`` and ``communication_s`` by label,
    ``idle_s``, ``overlap_s``, ``hidden_s`` (communication under compute kernels), ``busy_s`` (anything
    running) and the idle ``gaps`` as ns pairs ``[[g0, g1], ...]`` in time order."""

    kernel_s: dict[str, float]
    communication_s: dict[str, float]
    idle_s: float
    overlap_s: float
    hidden_s: float
    busy_s: float
    gaps: np.ndarray


def _clipped(spans: Spans, w0: int, w1: int) -> Spans:
    start, end = np.maximum(spans.start, w0), np.minimum(spans.end, w1)
    keep = end > start
    return Spans(start[keep], end[keep], spans.label[keep], spans.labels, spans.kernel[keep])


def _running(at: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """How many of the intervals run in each piece beginning at ``at`` (start <= t < end)."""
    return (np.searchsorted(np.sort(start), at, side="right") - np.searchsorted(np.sort(end), at, side="right"))


def split_window(w0: int, w1: int, compute: Spans, communication: Spans) -> Split:
    """``[w0, w1)`` (ns) cut into kernel time by ``compute``'s labels, exposed communication by
    ``communication``'s labels, and idle gaps, by the rules of this module; seconds."""
    compute, communication = _clipped(compute, w0, w1), _clipped(communication, w0, w1)
    cuts = np.unique(np.concatenate([[w0, w1], compute.start, compute.end, communication.start, communication.end]))
    at, length = cuts[:-1], np.diff(cuts)  # ns, exact integers
    n_compute = _running(at, compute.start, compute.end)
    n_comm = _running(at, communication.start, communication.end)
    comm_kernels = communication.kernel
    n_comm_kernels = _running(at, communication.start[comm_kernels], communication.end[comm_kernels])

    def shares(spans: Spans, among: np.ndarray, where: np.ndarray) -> dict[str, float]:
        out: dict[str, float] = {}
        for i, name in enumerate(spans.labels):
            mine = spans.label == i
            if not mine.any():
                continue
            running = _running(at, spans.start[mine], spans.end[mine])
            part = np.where(where & (among > 0), length * running / np.maximum(among, 1), 0.0)
            out[name] = out.get(name, 0.0) + float(part.sum()) * 1e-9
        return out

    idle = (n_compute == 0) & (n_comm == 0)
    gaps = np.stack([at[idle], cuts[1:][idle]], axis=1) if idle.any() else np.zeros((0, 2), dtype=np.int64)
    if len(gaps) > 1:  # pieces that touch are one gap
        joined = np.r_[True, gaps[1:, 0] != gaps[:-1, 1]]
        first = np.flatnonzero(joined)
        last = np.r_[first[1:] - 1, len(gaps) - 1]
        gaps = np.stack([gaps[first, 0], gaps[last, 1]], axis=1)
    return Split(kernel_s=shares(compute, n_compute, np.ones(len(at), dtype=bool)),
                 communication_s=shares(communication, n_comm, n_compute == 0),
                 idle_s=int(length[idle].sum()) * 1e-9,
                 overlap_s=int(length[(n_compute + n_comm_kernels) >= 2].sum()) * 1e-9,
                 hidden_s=int(length[(n_compute > 0) & (n_comm > 0)].sum()) * 1e-9,
                 busy_s=int(length[~idle].sum()) * 1e-9,
                 gaps=gaps.astype(np.int64))

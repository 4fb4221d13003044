"""Timing for the CPU benchmarks (:mod:`roofline.bench.cpu.measure`): settings per mode, the statistic
a ceiling is taken with, calibration of run lengths, and :class:`TeamRun`, one characterization's state
with timed runs of the thread team (rates on the threads' CPU time and on the wall time).

Rates are work per second (FLOP/s or B/s), times in seconds, sizes in bytes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from roofline.bench.cpu import kernels as K
from roofline.machine.cpu_host import CpuDescription
from roofline.bench.evidence import Progress

MiB = 2**20


@dataclass(frozen=True)
class CpuBenchSettings:
    """How long and how finely to measure.

    ``repeats``: timed runs per ceiling and per sweep point; ``target_s``: length of one timed run
    (s); ``points_per_octave``: sweep points per doubling of the working set; ``min_bytes``:
    smallest working set per thread (B); ``llc_factor``/``min_max_bytes``: the sweep ends at the
    larger of ``llc_factor`` x the last-level cache and ``min_max_bytes`` (all threads, B);
    ``gemm_n``: order of the numpy matrix product; ``copy_bytes``: size of the numpy copy (B).
    """

    repeats: int
    target_s: float
    points_per_octave: int
    min_bytes: int = 4096
    llc_factor: int = 8
    min_max_bytes: int = 256 * MiB
    gemm_n: int = 2048
    copy_bytes: int = 256 * MiB


SETTINGS: dict[str, CpuBenchSettings] = {
    "quick": CpuBenchSettings(repeats=3, target_s=0.01, points_per_octave=2, gemm_n=1536, copy_bytes=128 * MiB),
    "default": CpuBenchSettings(repeats=5, target_s=0.02, points_per_octave=4),
    "thorough": CpuBenchSettings(repeats=9, target_s=0.05, points_per_octave=6, llc_factor=16,
                                 min_max_bytes=1024 * MiB, gemm_n=3072, copy_bytes=512 * MiB),
}


def median_spread(values: list[float]) -> tuple[float, float]:
    """Median and spread of the faster half of the repeats (rates: higher is faster).

    Other processes on the same cores can only slow a run down, never speed it up, so the slower
    half of the repeats measures them rather than the machine and is left out. The spread is
    half the range of the kept repeats over their median.
    """
    kept = sorted(values, reverse=True)[: max(1, (len(values) + 1) // 2)]
    med = float(np.median(kept))
    return med, (max(kept) - min(kept)) / (2 * med) if med > 0 else float("nan")


def team_rates(work_per_thread: float, wall: float, cpu: list[float] | None) -> tuple[float, float]:
    """(rate on the threads' CPU time, rate on wall time) of a team run doing ``work_per_thread`` each.

    Each thread's CPU time is capped at the wall time, so the first is never below the second;
    without a fine thread clock both are the wall-time rate.
    """
    threads = len(cpu) if cpu else 1
    wall_rate = work_per_thread * threads / wall
    if not cpu or min(cpu) <= 0:
        return wall_rate, wall_rate
    return sum(work_per_thread / min(c, wall) for c in cpu), wall_rate


def wall_seconds(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def aligned(n: int, align: int = 64) -> np.ndarray:
    """An FP64 array of ``n`` elements starting on an ``align``-byte boundary.

    Large numpy arrays start 16 bytes into a page; a vector load from such an array straddles two
    cache lines every other time, which costs a third of the L1 bandwidth on Zen 4.
    """
    raw = np.empty(n + align // 8)
    offset = (-raw.ctypes.data % align) // 8
    return raw[offset: offset + n]


def calibrate(run: Callable[[int], float], count: int, target_s: float) -> int:
    """Smallest count (doubling from ``count``) whose run takes at least ``target_s``.

    ``run(count)`` returns the seconds the run took (on the threads' CPU time where the caller
    measures that: waiting for a core under load made wall-time calibration stop at runs of a few
    microseconds, timed 4x slow). Each count is timed twice and the faster run counts, so that
    one scheduling delay does not stop the doubling early.
    """
    while min(run(count), run(count)) < target_s and count < 1 << 40:
        count *= 2
    return count


class TeamRun:
    """One characterization's state: settings, progress reporting, the CPU description, the thread
    team, notes, and the CPU-time share and clocks of the timed runs."""

    def __init__(self, settings: CpuBenchSettings, progress: Progress | None, cpu: CpuDescription,
                 team: K.ThreadTeam):
        self.s = settings
        self.progress = progress
        self.cpu = cpu
        self.team = team
        self.threads = len(team.cpus)
        self.notes: list[str] = []
        self.cpu_share: list[float] = []  # wall-time rate / CPU-time rate of every timed run
        self.clock: Callable[[], float] | None = None  # one timed run of the clock kernel (Hz), once set up
        self.clocks: list[float] = []  # the clock of every round of the FMA kernels (Hz)

    def report(self, what: str, fraction: float) -> None:
        """Tell the caller's progress callback (if any) ``what`` runs, ``fraction`` (0..1) of the way."""
        if self.progress is not None:
            self.progress(what, min(max(fraction, 0.0), 1.0))

    def busy_time(self, fn: Any, args: list[tuple[Any, ...]]) -> float:
        """Seconds one team run of ``fn`` keeps its slowest thread on a core (its wall time without a
        fine thread clock): what calibration sizes runs by, so that waiting for a core under load
        does not stop the doubling at a run too short to time."""
        wall, cpu, _ = self.team.run_timed(fn, args)
        return min(max(cpu), wall) if cpu and min(cpu) > 0 else wall

    def timed_rate(self, fn: Any, args: list[tuple[Any, ...]], work_per_thread: float) -> tuple[float, list[Any]]:
        """One team run of ``fn``: its rate on the threads' CPU time, and the results."""
        wall, cpu, results = self.team.run_timed(fn, args)
        on_cpu, on_wall = team_rates(work_per_thread, wall, cpu)
        self.cpu_share.append(on_wall / on_cpu)
        return on_cpu, results

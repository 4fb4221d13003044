"""The CPU's memory sweep (:mod:`roofline.bench.cpu.measure`): the read kernel over working sets from a
few KiB to far beyond the last-level cache, the read-modify-write kernel at DRAM sizes, and the numpy
copy that checks the DRAM ceiling. Sizes in bytes (all threads together), bandwidths in B/s.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from roofline.bench.cpu import kernels as K
from roofline.bench.cpu.timing import MiB, TeamRun, aligned, calibrate, median_spread, wall_seconds
from roofline.bench.reliability import repeat_ratio
from roofline.errors import MachineError


def read_sweep(run: TeamRun, lanes: int, max_total: int, dram_from: float, start: float,
               span: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The read sweep over all sizes, and the read-modify-write kernel at the sizes from ``dram_from`` (B, all threads) up.

    Both frames have ``size_bytes`` (all threads), ``bandwidth`` (B/s: 8 B per element read;
    16 B per element read and written back for read-modify-write), ``spread`` and
    ``repeat_ratio`` (fastest / slowest repeat). The read sweep's ``bandwidth`` is timed on
    the threads' CPU time, its ``bandwidth_wall`` (and ``repeat_ratio_wall``) on the wall
    time, which is what DRAM, shared by all cores, is measured on; read-modify-write runs only
    on DRAM sizes and is timed on the wall time.
    """
    kernel = K.read_kernel(lanes)
    rmw = K.rmw_kernel()
    fill = K.fill_kernel()
    block = K.CHAINS * lanes  # elements
    per_thread_max = max(block, (max_total // run.threads // 8) // block * block)

    def make_row() -> np.ndarray:  # run by the owning thread: its pages are placed near it
        row = aligned(per_thread_max)
        fill(row, 1.0)
        return row

    rows = run.team.run(make_row, [()] * run.threads)[1]
    kernel(rows[0], block, 1)  # compile
    rmw(rows[0], block, 1, 0.5, 0.5)
    lo = math.log2(run.s.min_bytes / 8)
    hi = math.log2(per_thread_max)
    count = int((hi - lo) * run.s.points_per_octave) + 1
    ns = sorted({max(block, int(round(2 ** (lo + k / run.s.points_per_octave) / block)) * block)
                 for k in range(count)} | {per_thread_max})

    def timed(n: int, reps: int) -> float:
        return run.busy_time(kernel, [(row, n, reps) for row in rows])

    def timed_rmw(n: int, reps: int) -> float:
        return run.team.run(rmw, [(row, n, reps, 0.5, 0.5) for row in rows])[0]

    dram_ns = [n for n in ns if n * 8 * run.threads >= dram_from] or [ns[-1]]
    rmw_reps: dict[int, int] = {}
    rmw_rates: dict[int, list[float]] = {n: [] for n in dram_ns}

    # Pass 1 calibrates each size and measures it once; the other passes measure every size
    # again in turn, so a burst of load from other processes hits one pass, not a whole point.
    reps_of: dict[int, int] = {}
    rates: dict[int, list[float]] = {n: [] for n in ns}
    wall_rates: dict[int, list[float]] = {n: [] for n in ns}
    total_steps = len(ns) * run.s.repeats
    reps, n_prev = 1, ns[0]
    for p in range(run.s.repeats):
        for i, n in enumerate(ns):
            run.report(f"read sweep {n * 8 * run.threads / MiB:.3g} MiB, pass {p + 1}/{run.s.repeats}",
                        start + span * (p * len(ns) + i) / total_steps)
            if p == 0:
                timed(n, 1)  # warm the caches
                # Start from the previous point's bytes per run, halved: bandwidth falls with size,
                # so this starts near the target and the doubling never needs many steps.
                reps = calibrate(lambda r: timed(n, r), max(1, reps * n_prev // n // 2), run.s.target_s)
                reps_of[n], n_prev = reps, n
            on_cpu, sums = run.timed_rate(kernel, [(row, n, reps_of[n]) for row in rows], n * 8 * reps_of[n])
            if not np.allclose(sums, n * reps_of[n]):
                raise MachineError("the read kernel summed wrong values; the measurement is invalid")
            rates[n].append(on_cpu)
            wall_rates[n].append(on_cpu * run.cpu_share[-1])
            if n in rmw_rates:  # right after the read of the same size: the same conditions
                if p == 0:
                    rmw_reps[n] = calibrate(lambda r: timed_rmw(n, r), 1, run.s.target_s)
                rmw_rates[n].append(n * 16 * run.threads * rmw_reps[n] / timed_rmw(n, rmw_reps[n]))

    def frame(rates_of: dict[int, list[float]], wall_of: dict[int, list[float]] | None = None) -> pd.DataFrame:
        points = []
        for n, values in rates_of.items():
            med, spread = median_spread(values)
            point = {"size_bytes": float(n * 8 * run.threads), "bandwidth": med, "spread": spread,
                     "repeat_ratio": repeat_ratio(values)}
            if wall_of is not None:
                point["bandwidth_wall"] = median_spread(wall_of[n])[0]
                point["repeat_ratio_wall"] = repeat_ratio(wall_of[n])
            points.append(point)
        return pd.DataFrame(points)

    return frame(rates, wall_rates), frame(rmw_rates)


def numpy_copy_bandwidth(run: TeamRun) -> float:
    """Bandwidth of a large numpy copy (B/s: bytes read + written), the check of the DRAM ceiling."""
    n = run.s.copy_bytes // 8
    src = np.ones(n)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    rates = [2.0 * src.nbytes / wall_seconds(lambda: np.copyto(dst, src)) for _ in range(run.s.repeats)]
    return median_spread(rates)[0]


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo (B), or None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None

"""What the GPU characterization (:mod:`roofline.bench.gpu.measure`) runs on: the :class:`Backend` that
runs and times GPU work (the real one is :class:`roofline.bench.gpu.cupy_timer.CupyBackend`), the
settings per mode, the robust statistic of repeated launches, calibration of launch lengths, and
:class:`Run`, one characterization's book-keeping (progress, SM clocks per phase, notes, repeat ratios).

Sizes in bytes, times in seconds, rates per second (B/s, FLOP/s), clocks in Hz.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any, Protocol

import pandas as pd

from roofline.bench.evidence import Progress
from roofline.bench.gpu.kernels import (
    BW_THREADS,
    VEC_BYTES,
    BandwidthConfig,
    ComputeConfig,
    IntConfig,
    SharedConfig,
    reps_for_target,
)
from roofline.bench.reliability import repeat_ratio
from roofline.errors import MachineError

KiB, MiB, GiB = 2**10, 2**20, 2**30


class ClockReader(Protocol):
    """What a clock sampler leaves behind: the median SM clock seen (Hz), or None."""

    @property
    def median_hz(self) -> float | None: ...


class Backend(Protocol):
    """Runs and times GPU work; each ``time_*`` returns seconds for one launch (or call)."""

    def device_info(self) -> Any: ...  # roofline.machine.gpu_device.DeviceInfo
    def clock_sampler(self) -> AbstractContextManager[ClockReader]: ...
    def time_bandwidth(self, cfg: BandwidthConfig) -> float: ...
    def compute_unsupported(self, precision: str) -> str | None: ...  # also 'int32', 'shared_ld32', 'shared_ld128'
    def time_compute(self, cfg: ComputeConfig) -> float: ...
    def time_shared(self, cfg: SharedConfig) -> float: ...
    def time_int(self, cfg: IntConfig) -> float: ...
    def gemm_library(self) -> str: ...
    def gemm_unsupported(self, kind: str) -> str | None: ...
    def time_gemm(self, kind: str, n: int) -> float: ...
    def time_copy(self, nbytes: int) -> float: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class BenchSettings:
    """How much to measure. Sizes in bytes, times in seconds."""

    mode: str
    min_bytes: int = 4 * KiB
    max_bytes: int = 4 * GiB
    points_per_octave: int = 2
    broadcast_max_bytes: int = 4 * MiB
    #: Waves of full-occupancy blocks of the partitioned read kernel: on an H100, 4 waves read 16 MiB (L2) at
    #: 7.27 TB/s and 2 GiB (HBM) at 3.06 TB/s, one wave at 6.58 and 2.99 (benchmarks/results/h100-80gb-hbm3-
    #: 2026-11-27/probe). The read-modify-write kernel keeps one wave (not measured otherwise).
    read_waves: int = 4
    rmw_min_bytes: int = 1 * MiB
    repeats: int = 7
    target_s: float = 2e-3
    compute_target_s: float = 10e-3
    gemm_n: int = 8192
    copy_bytes: int = 1 * GiB
    warmup_s: float = 1.0

    @classmethod
    def for_mode(cls, mode: str, *, total_memory_bytes: int, l2_bytes: int) -> BenchSettings:
        """Settings for 'quick', 'default' or 'thorough', fitted to the GPU's memory.

        The sweep goes to at least 8 x the L2 size (so DRAM has a plateau), at most a quarter
        of the GPU's memory; the copy check uses at most half the sweep buffer.
        """
        if mode == "quick":
            s = cls(mode, points_per_octave=1, repeats=3, target_s=1e-3, compute_target_s=5e-3,
                    gemm_n=4096, max_bytes=1 * GiB, warmup_s=0.5)
        elif mode == "default":
            s = cls(mode)
        elif mode == "thorough":
            s = cls(mode, points_per_octave=4, repeats=15, max_bytes=8 * GiB, target_s=4e-3,
                    compute_target_s=20e-3)
        else:
            raise MachineError(f"unknown mode {mode!r}", hint="use 'quick', 'default' or 'thorough'")
        floor = 2 ** math.ceil(math.log2(max(8 * l2_bytes, 64 * MiB)))
        max_bytes = min(max(s.max_bytes, floor), total_memory_bytes // 4)
        max_bytes -= max_bytes % (VEC_BYTES * BW_THREADS)
        if max_bytes < s.rmw_min_bytes:
            raise MachineError(f"the GPU has too little memory ({total_memory_bytes} B) for the sweep")
        return replace(s, max_bytes=max_bytes, copy_bytes=min(s.copy_bytes, max_bytes // 2))


def robust_stats(values: Sequence[float]) -> tuple[float, float]:
    """(median, relative spread = 1.4826 x median absolute deviation / median) of ``values``."""
    vals = [float(v) for v in values if math.isfinite(v)]
    if not vals:
        return math.nan, math.nan
    med = statistics.median(vals)
    mad = statistics.median(abs(v - med) for v in vals)
    return med, (1.4826 * mad / med if med else math.nan)


def calibrate(time_one: Callable[[int], float], units: int, target_s: float, *, tries: int = 4) -> int:
    """Grow ``units`` (reps or iterations) until one launch takes at least half of ``target_s``."""
    for _ in range(tries):
        t = time_one(units)
        if t >= target_s / 2:
            break
        units = reps_for_target(units, t, target_s)
    return units


def _sweep_point(
    backend: Backend, cfg: BandwidthConfig, settings: BenchSettings
) -> tuple[float, float, int, float]:
    """(median B/s, spread, reps per launch, fastest / slowest repeat) of one sweep point."""
    reps = calibrate(lambda r: backend.time_bandwidth(cfg.with_reps(r)), 1, settings.target_s)
    run = cfg.with_reps(reps)
    rates = [run.bytes_moved / backend.time_bandwidth(run) for _ in range(settings.repeats)]
    med, spread = robust_stats(rates)
    return med, spread, reps, repeat_ratio(rates)


class Run:
    """Book-keeping for one characterization: progress, clocks, notes."""

    def __init__(self, backend: Backend, settings: BenchSettings, progress: Progress | None, total: int):
        self.backend, self.settings, self.progress = backend, settings, progress
        self.total, self.done = max(total, 1), 0
        self.clock_hz: dict[str, float] = {}
        self.notes: list[str] = []
        self.ratios: dict[str, float] = {}  # fastest / slowest repeat per ceiling

    def stats(self, key: str, rates: list[float]) -> tuple[float, float]:
        """``robust_stats`` of a ceiling's repeats, keeping their fastest / slowest ratio."""
        self.ratios[key] = repeat_ratio(rates)
        return robust_stats(rates)

    def step(self, label: str) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(label, min(1.0, self.done / self.total))

    def phase(self, name: str, work: Callable[[], Any]) -> Any:
        with self.backend.clock_sampler() as sampler:
            out = work()
        if sampler.median_hz:
            self.clock_hz[name] = float(sampler.median_hz)
        return out

    def sweep(self, name: str, kernel: str, sizes: list[int], blocks: int, waves: int = 1) -> pd.DataFrame:
        """One sweep; ``blocks`` per launch (``waves`` x that for the partitioned mapping)."""
        rows = []
        for size in sizes:
            mapping = "broadcast" if kernel == "read" and size <= self.settings.broadcast_max_bytes else "partitioned"
            n_blocks = blocks if mapping == "broadcast" else blocks * waves
            cfg = BandwidthConfig(kernel, mapping, size, n_blocks)  # type: ignore[arg-type]
            bw, spread, reps, ratio = _sweep_point(self.backend, cfg, self.settings)
            rows.append({"size_bytes": size, "bandwidth": bw, "spread": spread, "mapping": mapping, "reps": reps,
                         "repeat_ratio": ratio})
            self.step(f"{name} sweep {size // KiB} KiB")
        return pd.DataFrame(rows)

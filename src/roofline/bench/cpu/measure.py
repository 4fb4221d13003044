"""Measure a CPU's ceilings with numba micro-kernels on all cores: ``measure_cpu(mode=...)``.

- compute: FP64 and FP32 FMA chains (:mod:`roofline.bench.cpu.kernels`) at each vector width
  the CPU has (512 and 256 bit on AVX-512 parts, whose 512-bit units are not always faster);
  the faster width is the ceiling, and the assembly is checked for FMAs on those registers.
- memory: a read (sum) sweep with one private buffer per thread from a few KiB to far beyond
  the last-level cache; plateaus are found by :mod:`roofline.bench.sweep` and named after the
  cache levels sysfs reports (l1, l2, l3 where present) and dram. At the sizes beyond 4x the
  last-level cache an in-place read-modify-write kernel runs too (16 B per element: 8 read, 8
  written back; no write-allocate traffic, since the line written is the line read), in the same
  passes. The DRAM ceiling is the faster of the two (read-only streams leave DRAM bandwidth
  unused on some CPUs: on Zen 4 the read plateau is ~0.6x what read+write code reaches);
  ``metadata['dram_by_kernel']`` keeps both and ``sweeps['rmw']`` the read-modify-write points.
- checks in the same run: FP64 ceiling / FLOP/s of a numpy (BLAS) matrix product, and DRAM
  ceiling / bandwidth of a large numpy copy (bytes read + written).

Each ceiling is the median of the faster half of its repeats (other processes on the cores only
ever slow a run down); its spread is half the range of those repeats over the median (for memory
levels: the plateau's robust spread over its sweep points). Compute and cache rates are timed on
each thread's CPU time (the time it was on a core: other processes sharing the cores do not
lengthen it, and a core's ceiling is what it does while it runs); DRAM, shared by all cores, on
the wall time of all threads together. ``metadata['repeat_ratio']`` keeps each ceiling's
fastest over slowest repeat, ``metadata['cpu_share']`` the share of the wall time the measuring
threads were on a core (1.0 on an idle machine), for :mod:`roofline.bench.reliability`. Sweep sizes are measured in turn,
pass after pass, so a burst of load hits one pass of many sizes rather than every repeat of one.
Sweep sizes are the working set of all threads together, and so are the returned
``Measurement.cache_sizes`` (the capacity the measuring threads have together: a per-core cache
counts once per thread, a shared one once); sysfs's per-instance sizes are in
``metadata['cache_sizes_per_instance']``.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from roofline.errors import MachineError
from roofline.bench.cpu import dram as D
from roofline.bench.cpu import kernels as K
from roofline.bench.cpu.memory import available_memory, numpy_copy_bandwidth, read_sweep
from roofline.bench.cpu.timing import (
    MiB, SETTINGS, CpuBenchSettings, TeamRun, calibrate, median_spread, wall_seconds,
)
from roofline.machine.cpu_host import CpuDescription, cpu_key, describe_cpu
from roofline.bench.evidence import Measurement, Mode, Progress
from roofline.machine.model import Machine
from roofline.bench.reliability import repeat_ratio
from roofline.bench.sweep import find_plateaus, name_plateaus

log = logging.getLogger(__name__)


class _Run(TeamRun):
    """One characterization: the compute ceilings and the core clock (the memory sweep is
    :func:`roofline.bench.cpu.memory.read_sweep`)."""

    # -- compute ---------------------------------------------------------------------------
    def fma_rate(self, dtype: str, lanes: int) -> tuple[list[float], dict[str, Any]]:
        """Three times the repeats of the FMA kernel's rate (FLOP/s, on CPU time), and its assembly's FMAs."""
        rate, check, isa = self.fma_runner(dtype, lanes)
        rates = [rate() for _ in range(3 * self.s.repeats)]
        check()
        return rates, isa

    def fma_runner(self, dtype: str, lanes: int) -> tuple[Callable[[], float], Callable[[], None], dict[str, Any]]:
        """The calibrated FMA kernel: a function timing one run (FLOP/s on CPU time), one checking
        its results, and the FMAs found in its assembly."""
        kernel = K.fma_kernel(dtype, lanes)
        accs = [np.ones(K.CHAINS * lanes, dtype=dtype) for _ in range(self.threads)]
        kernel(accs[0], 0.999, 0.001, 16)  # compile
        isa = K.vector_isa(kernel)
        flops_per_iter = 2.0 * K.CHAINS * lanes

        def timed(iters: int) -> float:
            return self.busy_time(kernel, [(acc, 0.999, 0.001, iters) for acc in accs])

        def rate(iters: int) -> float:
            return self.timed_rate(kernel, [(acc, 0.999, 0.001, iters) for acc in accs], flops_per_iter * iters)[0]

        iters = calibrate(timed, 1024, self.s.target_s)

        def check() -> None:
            if not all(np.isfinite(acc).all() for acc in accs):
                raise MachineError("the FMA kernel produced non-finite values; the measurement is invalid")

        return lambda: rate(iters), check, isa

    def compute(self, keys: tuple[str, ...], start: float, span: float) -> dict[str, tuple[float, float, dict[str, Any]]]:
        """Each of ``keys`` ('fp64', 'fp32'): its FMA ceiling (FLOP/s), its spread and details by vector width.

        Every vector width up to the widest is measured (two at most); the fastest is the ceiling.
        Compute runs are short and cheap: three times the repeats, for a steadier faster half. The
        repeats of every precision and width alternate, so that a slow spell of the machine hits
        them all alike rather than making the narrower width look fastest (which would halve the
        ceiling) or one precision slower than the other (a VM's host that put the two vCPUs on
        one core's SMT siblings for a while halved FP32 to FP64's rate in a CI run).
        """
        widths = [w for w in (64, 32, 16) if w <= K.host_vector_bytes()][:2]
        size = {"fp64": 8, "fp32": 4}
        kernels = [(key, width) for key in keys for width in widths]
        runners = {}
        for step, (key, width) in enumerate(kernels):
            self.report(f"{key} FMA, {width * 8}-bit vectors", start + span * step / (2 * len(kernels)))
            runners[key, width] = self.fma_runner(f"float{size[key] * 8}", width // size[key])
        rates_of: dict[tuple[str, int], list[float]] = {k: [] for k in kernels}
        rounds = 3 * self.s.repeats
        for r in range(rounds):
            self.report(f"FMA kernels, round {r + 1}/{rounds}", start + span * (0.5 + 0.5 * r / rounds))
            for key in keys:
                for width in widths:
                    rates_of[key, width].append(runners[key, width][0]())
                if self.clock is not None:  # beside each precision's runs: the clock they ran at
                    self.clocks.append(self.clock())
        out = {}
        for key in keys:
            details: dict[str, Any] = {}
            best: tuple[float, float, int, dict[str, Any]] | None = None
            ratio_of: dict[int, float] = {}
            for width in widths:
                runners[key, width][1]()
                rates, isa = rates_of[key, width], runners[key, width][2]
                med, spread = median_spread(rates)
                ratio_of[width] = repeat_ratio(rates)
                details[f"{key}_{width * 8}bit_flops"] = med
                details[f"{key}_{width * 8}bit_isa"] = isa
                if best is None or med > best[0]:
                    best = (med, spread, width, isa)
            assert best is not None
            details[f"{key}_vector_bits"] = best[2] * 8
            details[f"{key}_widest_fma_registers"] = best[3]["widest"]
            details[f"{key}_repeat_ratio"] = ratio_of[best[2]]
            out[key] = (best[0], best[1], details)
        return out

    # -- core clock ------------------------------------------------------------------------
    def clock_runner(self) -> tuple[Callable[[], float], int] | None:
        """The calibrated clock kernel on every thread: a function timing one run (the mean of the
        threads' clocks, Hz: cycles over each thread's CPU time), and its iterations; None on an ISA
        without a clock kernel."""
        kernel = K.clock_kernel()
        if kernel is None:
            return None
        kernel(0, 1, 16)  # compile
        args = [(0, 1)] * self.threads

        def timed(iters: int) -> float:
            return self.busy_time(kernel, [(*a, iters) for a in args])

        iters = calibrate(timed, 1024, self.s.target_s / 2)

        def clock() -> float:
            wall, cpu, results = self.team.run_timed(kernel, [(*a, iters) for a in args])
            if any(r != K.ADDS * iters for r in results):
                raise MachineError("the clock kernel added wrong; the measurement is invalid")
            times = [min(c, wall) for c in cpu] if cpu and min(cpu) > 0 else [wall] * self.threads
            return float(np.mean([K.ADDS * iters / t for t in times]))

        return clock, iters

    def fma_latency(self, clock_iters: int) -> float:
        """Cycles per dependent FP64 FMA: the FMA chain's time per FMA over the add chain's per add
        (each the fastest of a few runs on one thread): a whole number when the add chain counts cycles."""
        adds, fmas = K.clock_kernel(), K.fma_latency_kernel()
        assert adds is not None  # called only where clock_runner found the clock kernel
        fmas(1.0, 0.999, 0.001, 16)  # compile
        fma_iters = max(1, clock_iters * K.ADDS // (4 * K.FMAS))  # about as long as a clock run

        def fastest(fn: Callable[[], Any]) -> float:
            times = []
            for _ in range(max(3, self.s.repeats)):
                t0 = time.thread_time()
                fn()
                times.append(time.thread_time() - t0)
            return min(times)

        per_add = fastest(lambda: adds(0, 1, clock_iters)) / (K.ADDS * clock_iters)
        per_fma = fastest(lambda: fmas(1.0, 0.999, 0.001, fma_iters)) / (K.FMAS * fma_iters)
        return per_fma / per_add

    def core_clock(self, clock_iters: int) -> tuple[float | None, dict[str, Any]]:
        """The core clock the FMA kernels ran at (Hz: the fastest round's), or None when the add chain
        does not count cycles, with the evidence."""
        latency = self.fma_latency(clock_iters)
        details: dict[str, Any] = {
            "method": f"dependent register adds ({K.ADDS} per loop, 1 cycle each) on every thread, in the rounds "
                      "of the FMA kernels; the fastest round",
            "rounds_hz": self.clocks, "fma_latency_cycles": latency,
        }
        whole = round(latency)
        if not self.clocks or not (2 <= whole <= 10 and abs(latency - whole) <= 0.2):
            details["rejected"] = (f"a dependent FMA took {latency:.2f} add-cycles, not a whole number: the add "
                                   "chain did not count cycles")
            return None, details
        details["hz"] = max(self.clocks)
        return details["hz"], details

    # -- sanity checks with numpy ----------------------------------------------------------
    def numpy_matmul_flops(self) -> float:
        n = self.s.gemm_n
        rng = np.random.default_rng(0)
        a, b = rng.random((n, n)), rng.random((n, n))
        a @ b
        rates = [2.0 * n**3 / wall_seconds(lambda: a @ b) for _ in range(self.s.repeats)]
        return median_spread(rates)[0]  # the same statistic as the ceilings it is compared with


def measure_cpu(*, mode: Mode = "default", progress: Progress | None = None) -> Measurement:
    """Measure this CPU's FP64/FP32 and cache/DRAM ceilings on all cores (see the module docstring).

    ``mode``: 'quick' (CI, about 10-20 s on 2 cores), 'default' (under a minute), 'thorough'.
    ``progress(what, fraction)`` is called as the run proceeds. Raises :class:`MachineError`
    when a kernel misbehaves and :class:`~roofline.errors.ToolNotFoundError` without numba.
    """
    if mode not in SETTINGS:
        raise MachineError(f"unknown mode {mode!r}; choose one of {', '.join(SETTINGS)}")
    t_start = time.perf_counter()
    settings = SETTINGS[mode]
    K._numba()
    cpu = describe_cpu()
    with K.ThreadTeam(cpu.cpus) as team:
        return _measure(settings, mode, progress, cpu, team, t_start)


def _measure(settings: CpuBenchSettings, mode: str, progress: Progress | None, cpu: CpuDescription,
             team: K.ThreadTeam, t_start: float) -> Measurement:
    threads = len(team.cpus)
    run = _Run(settings, progress, cpu, team)
    # Each numpy reference runs right after the ceiling it checks: on a virtual machine the host
    # can move the vCPUs (e.g. onto SMT siblings sharing FMA units) between parts of a long run.
    compute: dict[str, float] = {}
    compute_spread: dict[str, float] = {}
    compute_details: dict[str, Any] = {}
    clock = run.clock_runner()
    if clock is not None:
        run.clock = clock[0]
    for key, (rate, spread, details) in run.compute(("fp64", "fp32"), 0.0, 0.24).items():
        compute[key], compute_spread[key] = rate, spread
        compute_details.update(details)
    run.report("numpy matrix product", 0.24)
    gemm = run.numpy_matmul_flops()
    core_clock, clock_details = run.core_clock(clock[1]) if clock is not None else (None, {
        "rejected": f"no clock kernel for {platform.machine()}"})
    if core_clock is None:
        run.notes.append(f"core clock not measured ({clock_details['rejected']})")
    totals = cpu.cache_totals()
    llc = max(totals.values()) if totals else 32 * MiB
    max_total = max(settings.llc_factor * llc, settings.min_max_bytes)
    avail = available_memory()
    if avail is not None and max_total > avail // 3:
        max_total = max(avail // 3, 16 * MiB)
        run.notes.append(f"sweep limited to {max_total / MiB:.0f} MiB by available memory")
    if totals and max_total < 4 * llc:
        run.notes.append("the sweep ends less than 4x beyond the last-level cache: the DRAM ceiling may be high")
    lanes = compute_details["fp64_vector_bits"] // 64
    frame, rmw_frame = read_sweep(run, lanes, max_total, 4 * llc, 0.35, 0.55)
    run.report("numpy copy", 0.9)
    copy = numpy_copy_bandwidth(run)
    plateaus = find_plateaus(frame["size_bytes"], frame["bandwidth"], totals or None)
    levels = [*sorted(totals), "dram"] if totals else ["l1", "l2", "l3", "dram"]
    named = name_plateaus(plateaus, levels, cache_sizes=totals or None)
    if "dram" not in named:
        named["dram"] = D.beyond_caches(frame, llc, run.notes)
    named["dram"] = D.on_wall_time(named["dram"], frame)
    named["dram"], dram_by_kernel = D.dram_ceiling(named["dram"], rmw_frame, run.notes)
    ratios = {**{k: D.plateau_ratio(p, frame, "repeat_ratio") for k, p in named.items() if k != "dram"},
              "dram": (float(np.median(rmw_frame["repeat_ratio"])) if dram_by_kernel["rmw"] > dram_by_kernel["read"]
                       else D.plateau_ratio(named["dram"], frame, "repeat_ratio_wall")),
              **{k: compute_details[f"{k}_repeat_ratio"] for k in compute}}
    missing = [lv for lv in levels if lv not in named]
    if missing:
        run.notes.append(f"no plateau found for {', '.join(missing)}: left out rather than guessed")
    checks = {"fp64_vs_numpy_matmul": compute["fp64"] / gemm, "dram_vs_numpy_copy": named["dram"].bandwidth / copy}
    theoretical = _theoretical(cpu, threads, run, core_clock)
    widest = compute_details["fp64_widest_fma_registers"]
    run.notes.append(
        f"FMA kernels: {compute_details['fp64_vector_bits']}-bit vectors were fastest for FP64 "
        f"(FMAs on {widest} registers in the assembly); widest vector unit {K.host_vector_bytes() * 8} bit"
    )
    import numba

    metadata: dict[str, Any] = {
        "cpu": cpu.model, "vendor": cpu.vendor, "threads": threads, "cpus": list(cpu.cpus),
        "physical_cores": cpu.physical_cores, "mode": mode,
        "vector_bits": compute_details["fp64_vector_bits"], "widest_vector_bits": K.host_vector_bytes() * 8,
        "fma_isa": {k: v for k, v in compute_details.items() if k.endswith("_isa")},
        "flops_by_width": {k: v for k, v in compute_details.items() if k.endswith("bit_flops")},
        "cache_sizes_per_instance": cpu.cache_sizes(), "sweep_cache_sizes": totals,
        "plateaus": {k: {"first_size": p.first_size, "last_size": p.last_size, "bandwidth": p.bandwidth,
                         "spread": p.spread, "points": p.points} for k, p in named.items()},
        "dram_by_kernel": dram_by_kernel,
        "repeat_ratio": ratios, "cpu_share": float(np.median(run.cpu_share)),
        "core_clock": clock_details, "numpy_matmul_flops": gemm, "numpy_copy_bandwidth": copy,
        "numba": numba.__version__, "numpy": np.__version__, "python": platform.python_version(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpu_key": cpu_key(),  # what roofline.bench.cpu.cache matches a cached machine by
    }
    machine = Machine(
        name=f"{cpu.model} ({threads} threads)", source="measured",
        memory={k: p.bandwidth for k, p in named.items()}, compute=compute,
        spread={**{k: p.spread for k, p in named.items()}, **compute_spread}, metadata=metadata,
    )
    run.report("done", 1.0)
    return Measurement(
        machine=machine, sweeps={"read": frame, "rmw": rmw_frame}, theoretical=theoretical, checks=checks,
        cache_sizes=totals,
        clock_hz={**({"advertised": cpu.clock_hz} if cpu.clock_hz else {}),
                  **({k: core_clock for k in compute} if core_clock else {})},
        notes=tuple(run.notes), elapsed_s=time.perf_counter() - t_start,
    )


def _theoretical(cpu: CpuDescription, threads: int, run: _Run, clock_hz: float | None) -> Machine | None:
    """Theoretical ceilings at the core clock measured beside the FMA kernels, else at the clock the
    system reports (then a floor when that is the advertised clock: see :mod:`roofline.machine.cpu_theory`)."""
    from roofline.machine.cpu_theory import theoretical_cpu

    try:
        if clock_hz is not None:
            return theoretical_cpu(cpu, threads=threads, clock_hz=clock_hz,
                                   clock_source="measured: dependent adds timed beside the FMA kernels")
        return theoretical_cpu(cpu, threads=threads)
    except MachineError as exc:
        run.notes.append(f"no theoretical ceilings: {exc.message}")
        return None

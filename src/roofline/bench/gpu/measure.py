"""Measured ceilings of an NVIDIA GPU: working-set sweeps, FMA kernels and cuBLAS GEMMs.

:func:`measure_gpu` runs the whole characterization and returns a
:class:`~roofline.bench.evidence.Measurement`. The GPU work goes through a
:class:`~roofline.bench.gpu.backend.Backend` (the real one is
:class:`roofline.bench.gpu.cupy_timer.CupyBackend`); everything here is plain arithmetic and
bookkeeping, so it is tested end to end with a fake backend.

What is measured, and how each ceiling is derived:

- ``read`` sweep, working sets 4 KiB to several GiB: every block reads the whole set through L1
  up to ``broadcast_max_bytes`` (powers of two: the L1 plateau, then a mix of L1 and L2 hits that
  names no level), then the set is split among all threads with L1 bypassed (L2 plateau, then
  DRAM; ``read_waves`` waves of blocks). ``rmw`` sweep: read-modify-write, split among threads
  (L2, DRAM). Plateaus are found by :func:`roofline.bench.sweep.find_plateaus` and named by
  :func:`~roofline.bench.sweep.name_plateaus` with the L1 and L2 capacities, L1 from the
  broadcast points only, L2 and DRAM from the partitioned ones only (``_PLATEAU_SOURCES``); each
  level's ceiling is the faster of the read and rmw plateaus (median over the plateau).
- FP64 / FP32 / FP16 / BF16: FMA-chain kernels, FLOPs counted exactly
  (:class:`~roofline.bench.gpu.kernels.ComputeConfig`).
- shared memory: conflict-free 4-byte and 16-byte shared loads in a loop, bytes = wavefronts x
  128 B (:class:`~roofline.bench.gpu.kernels.SharedConfig`); the ceiling is the faster width
  (``metadata['shared_by_width']`` keeps both).
- INT32: an IMAD / IADD3 mix in independent chains, integer instructions counted exactly
  (:class:`~roofline.bench.gpu.kernels.IntConfig`).
- tensor cores: n x n x n GEMMs per input type (:mod:`roofline.bench.gpu.gemm`).
- a plain device-to-device copy, as a check of the DRAM ceiling (``checks['dram_vs_copy']``).

Every timed point is the median of ``repeats`` launches, each sized by calibration to last about
``target_s``; spreads are robust (1.4826 x MAD / median). The SM clock is sampled by NVML during each
phase (``Measurement.clock_hz``); ``Machine.sm_clock_hz`` is the clock seen during the FP32 kernel.

Time budget of the default mode on an H100 (estimate, not yet measured): NVRTC compiles ~2 s;
PyTorch import and cuBLAS set-up ~3-5 s; clock warm-up 1 s; 40 read + 25 rmw sweep points x
(<= 4 calibration + 7 timed launches of ~2 ms) ~2 s; 4 FMA kernels x 8 x 10 ms ~0.5 s; 6 GEMM
kinds x 23 calls (2 warm-up + 7 samples of 3) of 8192^3 (18 ms for FP64, ~1.5 ms for BF16) ~1 s;
2 shared-memory and 1 INT32 kernel x (<= 4 calibration + 7 timed launches of ~10 ms) ~0.3 s, their NVRTC
compiles ~1 s; buffer fill and copy < 1 s: about 16 s, well inside the 60 s target. ``quick`` halves the points
and repeats; ``thorough`` doubles the points per octave, repeats 15 times and sweeps to 8 GiB.
"""

from __future__ import annotations

import logging
import math
import statistics
import time

import pandas as pd

from roofline.errors import MachineError
from roofline.bench.gpu.backend import Backend, BenchSettings, ClockReader, Run, calibrate, robust_stats
from roofline.bench.gpu.gemm import gemm_flops, gemm_kinds_for
from roofline.bench.gpu.kernels import (
    BW_THREADS,
    VEC_BYTES,
    SHARED_KERNEL,
    SHARED_UNROLL,
    ComputeConfig,
    IntConfig,
    SharedConfig,
    bandwidth_blocks,
    compute_blocks,
    size_ladder,
)
from roofline.bench.evidence import Measurement, Mode, Progress
from roofline.machine.model import CLOCK_SCALED_MEMORY, Machine

__all__ = ["Backend", "BenchSettings", "ClockReader", "PRECISIONS", "calibrate", "measure_gpu", "measure_with",
           "robust_stats"]

log = logging.getLogger(__name__)

PRECISIONS = ("fp64", "fp32", "fp16", "bf16")


_LEVELS = ("l1", "l2", "dram")
#: Which points of which sweep name which levels: (sweep, mapping, levels, innermost first, the last one beyond
#: the caches). The broadcast points measure L1 alone: past L1 the blocks of one SM still share lines in it (on
#: an H100 at 1 MiB, 41 % of the sectors hit L1; the points read 12 TB/s while L2 served 6.7 TB/s), so they
#: would name an L2 ceiling 1.7 times too high whenever their plateau outnumbered the partitioned one.
_PLATEAU_SOURCES = (("read", "broadcast", ("l1", "past l1")), ("read", "partitioned", ("l2", "dram")),
                    ("rmw", "partitioned", ("l2", "dram")))


def _memory_ceilings(
    sweeps: dict[str, pd.DataFrame], cache_sizes: dict[str, int], ratios: dict[str, float] | None = None,
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Memory ceilings, their spreads and the sweep each came from; ``ratios`` (when given) gets
    each level's median fastest / slowest repeat over its plateau's points."""
    from roofline.bench.sweep import find_plateaus, name_plateaus

    best: dict[str, tuple[float, float, str]] = {}
    for name, mapping, levels in _PLATEAU_SOURCES:
        df = sweeps.get(name)
        if df is not None and "mapping" in df:
            df = df[df["mapping"] == mapping]
        if df is None or df.empty:
            continue
        caches = {k: v for k, v in cache_sizes.items() if k in levels}
        plateaus = find_plateaus(df["size_bytes"], df["bandwidth"], caches)
        if mapping == "broadcast" and "l1" not in caches:  # L1's size unknown: its plateau is the first one
            named = {"l1": min(plateaus, key=lambda p: p.first_size)} if plateaus else {}
        else:
            named = name_plateaus(plateaus, levels, cache_sizes=caches)
        for level, p in ((k, v) for k, v in named.items() if k in _LEVELS):
            if level not in best or p.bandwidth > best[level][0]:
                best[level] = (p.bandwidth, p.spread, name)
                if ratios is not None and "repeat_ratio" in df:
                    on = df[(df["size_bytes"] >= p.first_size) & (df["size_bytes"] <= p.last_size)]
                    ratios[level] = float(on["repeat_ratio"].median())
    return ({k: v[0] for k, v in best.items()}, {k: v[1] for k, v in best.items()},
            {k: v[2] for k, v in best.items()})


def _half_rate_note(run: Run, checks: dict[str, float], compute: dict[str, float]) -> None:
    """Say why paired half-precision FMAs stop at the FP32 FLOP rate where the vendor gives twice it."""
    for key in ("fp16", "bf16"):
        ratio = checks.get(f"{key}_vs_theoretical_at_observed_clock")
        fp32 = compute.get("fp32")
        if ratio is None or not 0.4 < ratio < 0.6 or not fp32 or abs(compute[key] / fp32 - 1) > 0.1:
            continue
        run.notes.append(
            f"{key}: the paired-FMA kernel ran at {ratio:.2f} of the theoretical rate, the FP32 FLOP rate: the "
            "vendor's non-tensor half-precision figure is twice FP32, which needs about half of the HFMA2s issued on "
            "the tensor pipe (HFMA2.MMA); the compiler here issued them on the FMA pipe alone (on an H200, ptxas "
            "13.0 split them and the kernel ran 0.92 of the vendor's rate; benchmarks/results/h200-2026-11-29)")


def measure_with(backend: Backend, settings: BenchSettings, progress: Progress | None = None) -> Measurement:
    """Run the characterization on ``backend`` (see the module docstring)."""
    from roofline.machine.theoretical import spec_from_device, theoretical_from_spec

    t0 = time.perf_counter()
    info = backend.device_info()
    cc = tuple(info.compute_capability)
    gemm_kinds = gemm_kinds_for(cc)  # type: ignore[arg-type]
    read_sizes = [s for s in size_ladder(settings.min_bytes, settings.max_bytes, settings.points_per_octave,
                                         align=VEC_BYTES * BW_THREADS)
                  if s > settings.broadcast_max_bytes or s & (s - 1) == 0]  # broadcast sets are powers of two
    rmw_sizes = [s for s in read_sizes if s >= settings.rmw_min_bytes]
    run = Run(backend, settings, progress,
               total=1 + len(read_sizes) + len(rmw_sizes) + len(PRECISIONS) + len(SHARED_UNROLL) + 1
               + len(gemm_kinds) + 1)

    spec = None
    try:
        spec = spec_from_device(info)
    except MachineError as exc:
        run.notes.append(f"no theoretical ceilings: {exc.message}")
    arch = spec.architecture if spec else None
    cache_sizes: dict[str, int] = {"l2": int(info.l2_bytes)}
    if arch is not None and arch.l1_shared_bytes_per_sm:
        cache_sizes["l1"] = int(arch.l1_shared_bytes_per_sm)
    cache_sizes = {k: cache_sizes[k] for k in ("l1", "l2") if k in cache_sizes}

    # Warm up: clocks ramp and the power state settles under load.
    blocks_c = compute_blocks(info.sms)
    warm = ComputeConfig("fp32", blocks_c)
    warm = warm.with_iters(calibrate(lambda n: backend.time_compute(warm.with_iters(n)), 64, settings.warmup_s / 4))
    deadline = time.perf_counter() + settings.warmup_s
    while time.perf_counter() < deadline:
        backend.time_compute(warm)
    run.step("warm-up")

    blocks_bw = bandwidth_blocks(info.sms)
    sweeps = {
        "read": run.phase("read", lambda: run.sweep("read", "read", read_sizes, blocks_bw, settings.read_waves)),
        "rmw": run.phase("rmw", lambda: run.sweep("rmw", "rmw", rmw_sizes, blocks_bw)),
    }
    memory, spread, ceiling_from = _memory_ceilings(sweeps, cache_sizes, run.ratios)
    for level in ("l1", "l2", "dram"):
        if level not in memory:
            run.notes.append(f"no {level} plateau found in the sweeps: {level} not measured")
        else:
            run.clock_hz.setdefault(level, run.clock_hz.get(ceiling_from[level], math.nan))
    run.clock_hz = {k: v for k, v in run.clock_hz.items() if math.isfinite(v)}

    compute: dict[str, float] = {}
    for prec in PRECISIONS:
        reason = backend.compute_unsupported(prec)
        if reason:
            run.notes.append(f"{prec} not measured: {reason}")
        else:
            cfg = ComputeConfig(prec, blocks_c)  # type: ignore[arg-type]

            def work(cfg: ComputeConfig = cfg) -> tuple[float, float]:
                iters = calibrate(lambda n: backend.time_compute(cfg.with_iters(n)), 64, settings.compute_target_s)
                c = cfg.with_iters(iters)
                return run.stats(cfg.precision, [c.flops / backend.time_compute(c) for _ in range(settings.repeats)])

            compute[prec], spread[prec] = run.phase(prec, work)
        run.step(f"{prec} FMA")

    shared_by_width = _measure_shared(run, info.sms, memory, spread)
    _measure_int32(run, info.sms, compute, spread)

    n = settings.gemm_n
    for kind in gemm_kinds:
        reason = backend.gemm_unsupported(kind)
        if reason:
            run.notes.append(f"{kind} not measured: {reason}")
        else:
            try:
                def gemm_work(kind: str = kind) -> tuple[float, float]:
                    return run.stats(kind, [gemm_flops(n) / backend.time_gemm(kind, n) for _ in range(settings.repeats)])

                compute[kind], spread[kind] = run.phase(kind, gemm_work)
            except Exception as exc:  # a library refusing one type loses that ceiling, said aloud
                run.notes.append(f"{kind} not measured: {type(exc).__name__}: {exc}")
        run.step(f"{kind} GEMM")

    copy_bw, _ = run.phase("copy", lambda: robust_stats(
        [2 * settings.copy_bytes / backend.time_copy(settings.copy_bytes) for _ in range(settings.repeats)]))
    run.step("device-to-device copy")

    if not memory and not compute:
        raise MachineError(f"nothing could be measured on {info.name}", hint="; ".join(run.notes) or None)

    theory = theoretical_from_spec(spec) if spec is not None else None
    checks: dict[str, float] = {}
    if "dram" in memory and copy_bw > 0:
        checks["dram_vs_copy"] = memory["dram"] / copy_bw
    if spec is not None:
        for key, values in (("fp64", compute), ("fp32", compute), ("fp16", compute), ("bf16", compute),
                            ("int32", compute), ("shared", memory)):
            if key in values and key in run.clock_hz:
                at = theoretical_from_spec(spec, sm_clock_hz=run.clock_hz[key])
                ref = (at.memory if values is memory else at.compute).get(key)
                if ref:
                    checks[f"{key}_vs_theoretical_at_observed_clock"] = values[key] / ref
        int_ratio = checks.get("int32_vs_theoretical_at_observed_clock")
        if int_ratio is not None and int_ratio > 1.1:
            run.notes.append(
                f"int32: the IMAD / IADD3 mix ran at {int_ratio:.2f}x the CUDA C++ Programming Guide's integer rate, "
                "which counts one instruction class alone: IMAD issues to the FMA pipe and IADD3 to the ALU, side by side")
        _half_rate_note(run, checks, compute)
        if "dram" in memory and "dram" in spec.datasheet:
            checks["dram_vs_datasheet"] = memory["dram"] / spec.datasheet["dram"]
    elapsed = time.perf_counter() - t0
    sm_clock = run.clock_hz.get("fp32") or (statistics.median(run.clock_hz.values()) if run.clock_hz else None)
    machine = Machine(
        name=info.name, source="measured", memory=memory, compute=compute, sm_clock_hz=sm_clock,
        spread={k: v for k, v in spread.items() if math.isfinite(v)},
        clocks=_own_clocks(run.clock_hz, memory, compute, sm_clock),
        metadata={
            "device": info.to_dict(), "mode": settings.mode, "ceiling_from": ceiling_from,
            "gemm_n": n, "gemm_library": backend.gemm_library() if gemm_kinds else None,
            "shared_by_width": shared_by_width,
            "copy_bandwidth": copy_bw, "clock_hz": dict(run.clock_hz), "elapsed_s": elapsed,
            "repeat_ratio": {k: v for k, v in run.ratios.items() if k in memory or k in compute},
            "method": "roofline.bench.gpu.measure: NVRTC kernels (CuPy), cuBLAS GEMMs, NVML clocks",
        },
    )
    return Measurement(
        machine=machine, sweeps=sweeps, theoretical=theory, checks=checks, cache_sizes=cache_sizes,
        clock_hz=dict(run.clock_hz), notes=tuple(run.notes), elapsed_s=elapsed,
    )


def _own_clocks(clock_hz: dict[str, float], memory: dict[str, float], compute: dict[str, float],
                sm_clock: float | None) -> dict[str, float]:
    """Each clock-scaled ceiling's own SM clock (NVML, median over its phase) where it is not the
    machine's: a GEMM that drew the power limit ran slower (H100: FP16 tensor at 1485 MHz), and the
    analysis scales a ceiling from the clock it was measured at."""
    if not sm_clock:
        return {}
    out = {f"compute.{k}": clock_hz[k] for k in compute if k in clock_hz}
    out |= {f"memory.{k}": clock_hz[k] for k in memory if k in clock_hz and k in CLOCK_SCALED_MEMORY}
    return {k: v for k, v in out.items() if abs(v / sm_clock - 1) > 1e-3}


def _measure_shared(run: Run, sms: int, memory: dict[str, float], spread: dict[str, float]) -> dict[str, float]:
    """Shared-memory bandwidth (B/s) per load width ('4', '16'); the faster goes to ``memory['shared']``,
    its spread, clock and repeat ratio under 'shared'."""
    by_width: dict[str, float] = {}
    spreads: dict[str, float] = {}
    for width in SHARED_UNROLL:
        name = SHARED_KERNEL[width]
        reason = run.backend.compute_unsupported(name)
        if reason:
            run.notes.append(f"shared memory ({width}-byte loads) not measured: {reason}")
        else:
            cfg = SharedConfig(width, compute_blocks(sms))

            def work(cfg: SharedConfig = cfg, name: str = name) -> tuple[float, float]:
                iters = calibrate(lambda n: run.backend.time_shared(cfg.with_iters(n)), 64,
                                  run.settings.compute_target_s)
                c = cfg.with_iters(iters)
                return run.stats(name, [c.bytes_moved / run.backend.time_shared(c) for _ in range(run.settings.repeats)])

            by_width[str(width)], spreads[str(width)] = run.phase(name, work)
        run.step(f"shared memory, {width}-byte loads")
    if by_width:
        best = max(by_width, key=lambda w: by_width[w])
        name = SHARED_KERNEL[int(best)]
        memory["shared"], spread["shared"] = by_width[best], spreads[best]
        run.ratios["shared"] = run.ratios[name]
        if name in run.clock_hz:
            run.clock_hz["shared"] = run.clock_hz[name]
    return by_width


def _measure_int32(run: Run, sms: int, compute: dict[str, float], spread: dict[str, float]) -> None:
    """INT32 operations per second of the IMAD / IADD3 kernel into ``compute['int32']``."""
    reason = run.backend.compute_unsupported("int32")
    if reason:
        run.notes.append(f"int32 not measured: {reason}")
    else:
        cfg = IntConfig(compute_blocks(sms))

        def work() -> tuple[float, float]:
            iters = calibrate(lambda n: run.backend.time_int(cfg.with_iters(n)), 64, run.settings.compute_target_s)
            c = cfg.with_iters(iters)
            return run.stats("int32", [c.ops / run.backend.time_int(c) for _ in range(run.settings.repeats)])

        compute["int32"], spread["int32"] = run.phase("int32", work)
    run.step("int32 IMAD / IADD3")


def measure_gpu(
    *, device: int = 0, mode: Mode = "default", progress: Progress | None = None,
    backend: Backend | None = None,
) -> Measurement:
    """Measure the ceilings of GPU ``device`` (needs CuPy; nvidia-ml-py for clocks; PyTorch optional).

    ``mode``: 'quick', 'default' (under 60 s on an H100, estimated) or 'thorough'.
    ``progress(label, fraction)`` is called after each step. ``backend`` replaces the CuPy
    backend (tests); a backend passed in is not closed here.
    """
    if backend is not None:
        info = backend.device_info()
        settings = BenchSettings.for_mode(mode, total_memory_bytes=info.total_memory_bytes, l2_bytes=info.l2_bytes)
        return measure_with(backend, settings, progress)
    from roofline.bench.gpu.cupy_timer import CupyBackend
    from roofline.machine.gpu_device import read_device_info

    info = read_device_info(device)
    settings = BenchSettings.for_mode(mode, total_memory_bytes=info.total_memory_bytes, l2_bytes=info.l2_bytes)
    real = CupyBackend(device, max_bytes=settings.max_bytes)
    try:
        return measure_with(real, settings, progress)
    finally:
        real.close()

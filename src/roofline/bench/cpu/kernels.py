"""Numba micro-kernels for the CPU characterization (compiled on first use, never at import).

The inner loops are written as LLVM vector code (a numba ``intrinsic``) rather than left to the
auto-vectorizer, because what they measure depends on details the vectorizer does not promise
(plain numba loops kept the FMA accumulators in memory, a load and a store per FMA, and reached
under half the peak; scalar chains were not vectorized at all):

- ``fma_kernel(dtype, lanes)``: a thread keeps ``CHAINS`` independent vectors of ``lanes``
  elements in registers and updates them ``acc = acc * a + b`` (``llvm.fmuladd``, one fused
  multiply-add where the CPU has FMA) ``iters`` times. 16 chains hide the FMA latency (4-5
  cycles) on two FMA pipes. FLOPs: ``CHAINS x lanes x 2 x iters`` per thread.
- ``read_kernel(lanes)``: a thread sums the first ``n`` elements of its private FP64 row
  ``reps`` times into ``CHAINS`` vector accumulators (strict IEEE adds: no reassociation, so the
  compiler cannot fold the repeats). Bytes: ``n x 8 x reps`` per thread.
- ``rmw_kernel()``: a thread updates the first ``n`` elements of its row in place,
  ``row[i] = row[i] * a + b``, ``reps`` times (a plain loop: it has no reduction for the
  vectorizer to get wrong). Every line is read and written back: ``n x 16 x reps`` bytes per
  thread, with no write-allocate traffic left uncounted (the line written is the line read).
  Read-only streams do not saturate DRAM on every CPU (on Zen 4 a core's outstanding misses
  limit it; write-backs come on top), so the DRAM ceiling is the faster of the two.
- ``clock_kernel()``: the core clock, counted in cycles. ``iters`` x :data:`ADDS` dependent adds
  of one register to another, written in assembly (x86-64 ``add``, Arm64 ``add``): an integer
  add's latency is one cycle on every x86-64 and Arm64 core, so the chain takes
  ``ADDS x iters`` cycles (the loop's counter and branch run beside it). An add of a register
  must execute, unlike an increment by a small constant, which recent cores may resolve at
  register renaming. ``fma_latency_kernel()`` runs a dependent chain of FP64 FMAs: timed
  against the add chain it gives the FMA latency in cycles, a whole number (4 on Zen 4 and
  Skylake-to-Sapphire-Rapids, 5 on Zen 2/3 and Haswell, per the vendors' optimization manuals
  and uops.info) when the add chain did count cycles.

Kernels are single-threaded, compiled with ``nogil=True``; :class:`ThreadTeam` runs one per core
on Python threads pinned to the CPUs, each on its own private row. (numba's ``prange`` was
tried first: its OpenMP barrier spins, and when other processes share the cores a parallel
call's overhead grows from microseconds to tens of milliseconds.) ``vector_isa`` reads the
compiled assembly back.
"""

from __future__ import annotations

import platform
import re
from functools import cache
from typing import Any

import numpy as np

#: Independent vector accumulators per thread (FMA chains, partial sums).
CHAINS = 16
#: Dependent adds per loop iteration of the clock kernel, and dependent FMAs of the FMA-latency kernel.
ADDS = 64
FMAS = 16

#: The dependent add of the clock kernel per ISA (LLVM inline assembly: $0 the running sum, tied to
#: its input, $2 the addend), and the registers it clobbers besides its output.
_ADD_ASM = {"x86_64": ("add $2, $0", "~{flags}"), "aarch64": ("add $0, $0, $2", "")}


def _numba() -> Any:
    try:
        import numba
    except ImportError as exc:  # pragma: no cover - numba is needed only to measure CPUs
        from roofline.errors import ToolNotFoundError

        raise ToolNotFoundError("measuring a CPU needs numba", hint="pip install numba") from exc
    return numba


def host_vector_bytes() -> int:
    """Widest vector register (bytes) of the CPU numba compiles for: 64 (AVX-512), 32 (AVX), else 16."""
    from llvmlite import binding as llvm

    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 64
    if features.get("avx") or features.get("avx2"):
        return 32
    return 16


def _vector_ir(dtype: str, lanes: int) -> tuple[Any, Any, str, int]:
    from llvmlite import ir

    fty = ir.DoubleType() if dtype == "float64" else ir.FloatType()
    suffix = "f64" if dtype == "float64" else "f32"
    return fty, ir.VectorType(fty, lanes), f"v{lanes}{suffix}", 8 if dtype == "float64" else 4


@cache
def fma_kernel(dtype: str, lanes: int) -> Any:
    """FMA kernel ``f(acc[CHAINS * lanes], a, b, iters)`` for dtype 'float64'/'float32' (releases the GIL)."""
    numba = _numba()
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    _, vty, vname, align = _vector_ir(dtype, lanes)

    @intrinsic
    def fma_chains(typingctx: Any, row: Any, a: Any, b: Any, iters: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            row_v, a_v, b_v, iters_v = args
            data = context.make_array(signature.args[0])(context, builder, row_v).data
            vptr = builder.bitcast(data, vty.as_pointer())
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty] * 3),
                                                f"llvm.fmuladd.{vname}")
            va = vb = ir.Constant(vty, ir.Undefined)
            for k in range(lanes):
                va = builder.insert_element(va, a_v, ir.Constant(ir.IntType(32), k))
                vb = builder.insert_element(vb, b_v, ir.Constant(ir.IntType(32), k))
            slots = []
            for k in range(CHAINS):
                ptr = builder.gep(vptr, [ir.Constant(ir.IntType(64), k)])
                slot = cgutils.alloca_once(builder, vty)  # promoted to a register by mem2reg
                builder.store(builder.load(ptr, align=align), slot)
                slots.append((ptr, slot))
            with cgutils.for_range(builder, iters_v):
                for _, slot in slots:
                    builder.store(builder.call(fn, [builder.load(slot), va, vb]), slot)
            for ptr, slot in slots:
                builder.store(builder.load(slot), ptr, align=align)
            return context.get_dummy_value()

        return types.void(row, a, b, iters), codegen

    @numba.njit(nogil=True)
    def fma(acc: np.ndarray, a: float, b: float, iters: int) -> None:  # pragma: no cover - compiled
        fma_chains(acc, acc.dtype.type(a), acc.dtype.type(b), iters)  # type: ignore[call-arg]  # numba supplies typingctx

    return fma


@cache
def read_kernel(lanes: int) -> Any:
    """Read kernel ``f(row, n, reps) -> sum``: the FP64 sum of ``row[:n]``, ``reps`` times over (releases the GIL).

    ``n`` must be a multiple of ``CHAINS * lanes``.
    """
    numba = _numba()
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    fty, vty, _, align = _vector_ir("float64", lanes)
    block = CHAINS * lanes

    @intrinsic
    def sum_row(typingctx: Any, row: Any, n: Any, reps: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            row_v, n_v, reps_v = args
            data = context.make_array(signature.args[0])(context, builder, row_v).data
            i64 = ir.IntType(64)
            slots = []
            for _ in range(CHAINS):
                slot = cgutils.alloca_once(builder, vty)
                builder.store(ir.Constant(vty, [0.0] * lanes), slot)
                slots.append(slot)
            blocks = builder.udiv(n_v, ir.Constant(i64, block))
            with cgutils.for_range(builder, reps_v):
                with cgutils.for_range(builder, blocks) as loop:
                    base = builder.mul(loop.index, ir.Constant(i64, block))
                    for k, slot in enumerate(slots):
                        ptr = builder.bitcast(builder.gep(data, [builder.add(base, ir.Constant(i64, k * lanes))]),
                                              vty.as_pointer())
                        builder.store(builder.fadd(builder.load(slot), builder.load(ptr, align=align)), slot)
            total = builder.load(slots[0])
            for slot in slots[1:]:
                total = builder.fadd(total, builder.load(slot))
            out = builder.extract_element(total, ir.Constant(ir.IntType(32), 0))
            for k in range(1, lanes):
                out = builder.fadd(out, builder.extract_element(total, ir.Constant(ir.IntType(32), k)))
            return out

        return types.float64(row, n, reps), codegen

    @numba.njit(nogil=True)
    def read(row: np.ndarray, n: int, reps: int) -> float:  # pragma: no cover - compiled
        return sum_row(row, n, reps)  # type: ignore[call-arg]  # numba supplies typingctx

    return read


@cache
def rmw_kernel() -> Any:
    """Read-modify-write kernel ``f(row, n, reps, a, b)``: ``row[:n] = row[:n] * a + b``, ``reps`` times (releases the GIL).

    With ``a = b = 0.5`` a row of ones stays ones, so the read kernel's check still holds after it.
    """
    numba = _numba()

    @numba.njit(nogil=True)
    def rmw(row: np.ndarray, n: int, reps: int, a: float, b: float) -> None:  # pragma: no cover - compiled
        for _ in range(reps):
            for i in range(n):
                row[i] = row[i] * a + b

    return rmw


@cache
def fill_kernel() -> Any:
    """Fill ``f(row, value)``, run by the thread that owns the row, so its pages are placed near it."""
    numba = _numba()

    @numba.njit(nogil=True)
    def fill(row: np.ndarray, value: float) -> None:  # pragma: no cover - compiled
        for i in range(row.size):
            row[i] = value

    return fill


def _isa() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


@cache
def clock_kernel() -> Any | None:
    """Clock kernel ``f(x, y, iters) -> x + ADDS * iters * y``: ``ADDS x iters`` cycles of dependent
    register adds (see the module docstring; releases the GIL). None on an ISA we have no assembly for."""
    if _isa() not in _ADD_ASM:
        return None
    numba = _numba()
    from llvmlite import binding as llvm
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    llvm.initialize_native_asmparser()  # numba's JIT does not set up LLVM's assembly parser itself
    line, clobbers = _ADD_ASM[_isa()]
    text = "\n".join([line] * ADDS)
    constraints = ",".join(c for c in ("=r,0,r", clobbers) if c)

    @intrinsic
    def add_chain(typingctx: Any, x: Any, y: Any, iters: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            x_v, y_v, iters_v = args
            i64 = ir.IntType(64)
            slot = cgutils.alloca_once_value(builder, x_v)
            with cgutils.for_range(builder, iters_v):
                out = builder.asm(ir.FunctionType(i64, [i64, i64]), text, constraints, [builder.load(slot), y_v],
                                  side_effect=True)
                builder.store(out, slot)
            return builder.load(slot)

        return types.int64(x, y, iters), codegen

    @numba.njit(nogil=True)
    def clock(x: int, y: int, iters: int) -> int:  # pragma: no cover - compiled
        return add_chain(x, y, iters)  # type: ignore[call-arg]  # numba supplies typingctx

    return clock


@cache
def fma_latency_kernel() -> Any:
    """FMA-latency kernel ``f(x, a, b, iters) -> float``: ``FMAS x iters`` dependent scalar FP64
    ``x = x * a + b`` (``llvm.fmuladd``; IEEE order, so nothing can be reassociated; releases the GIL)."""
    numba = _numba()
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def fma_chain(typingctx: Any, x: Any, a: Any, b: Any, iters: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            x_v, a_v, b_v, iters_v = args
            f64 = ir.DoubleType()
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f64, [f64] * 3), "llvm.fmuladd.f64")
            slot = cgutils.alloca_once_value(builder, x_v)
            with cgutils.for_range(builder, iters_v):
                value = builder.load(slot)
                for _ in range(FMAS):
                    value = builder.call(fn, [value, a_v, b_v])
                builder.store(value, slot)
            return builder.load(slot)

        return types.float64(x, a, b, iters), codegen

    @numba.njit(nogil=True)
    def fma_latency(x: float, a: float, b: float, iters: int) -> float:  # pragma: no cover - compiled
        return fma_chain(x, a, b, iters)  # type: ignore[call-arg]  # numba supplies typingctx

    return fma_latency


_FMA_RE = re.compile(r"\bv(fn?m(?:add|sub)\d{3}(p[sd]|s[sd]))\s+(.*)")


def vector_isa(kernel: Any) -> dict[str, Any]:
    """FMA instructions in a compiled kernel's assembly, by register width.

    Returns ``{"fma_zmm": n, "fma_ymm": n, "fma_xmm": n, "fma_scalar": n, "widest": "zmm" | "ymm"
    | "xmm" | "scalar" | None, "vector_bits": 512 | 256 | 128 | 64 | 0}`` from the x86 ``vfmadd``/
    ``vfmsub``/``vfnmadd`` lines (an xmm FMA with an ``ss``/``sd`` suffix is scalar). Other ISAs
    give zeros and ``None``.
    """
    asm = "\n".join(kernel.inspect_asm().values())
    counts = {"zmm": 0, "ymm": 0, "xmm": 0, "scalar": 0}
    for line in asm.splitlines():
        m = _FMA_RE.search(line)
        if not m:
            continue
        ops = m.group(3)
        if "zmm" in ops:
            counts["zmm"] += 1
        elif "ymm" in ops:
            counts["ymm"] += 1
        elif m.group(2).startswith("s"):
            counts["scalar"] += 1
        else:
            counts["xmm"] += 1
    widest = next((w for w in ("zmm", "ymm", "xmm", "scalar") if counts[w]), None)
    bits = {"zmm": 512, "ymm": 256, "xmm": 128, "scalar": 64}.get(widest or "", 0)
    return {"fma_zmm": counts["zmm"], "fma_ymm": counts["ymm"], "fma_xmm": counts["xmm"],
            "fma_scalar": counts["scalar"], "widest": widest, "vector_bits": bits}


class ThreadTeam:
    """One Python thread per CPU, pinned to it, running nogil kernels together.

    ``run(fn, args_per_thread)`` starts ``fn(*args)`` on every thread at once (a barrier) and
    returns the wall time from the first start to the last end (s) and the results;
    ``run_timed`` returns each thread's CPU time (s) as well: the time it was on a core, which
    other processes sharing the cores do not lengthen (``None`` where the OS's thread clock is
    coarser than a microsecond, as on Windows).
    """

    def __init__(self, cpus: tuple[int, ...]):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.cpus = cpus
        self._barrier = threading.Barrier(len(cpus))
        self._pool = ThreadPoolExecutor(max_workers=len(cpus), thread_name_prefix="roofline-bench")
        list(self._pool.map(self._pin, cpus))

    def _pin(self, cpu: int) -> None:
        import os

        self._barrier.wait()  # every pool thread takes exactly one pinning task
        if hasattr(os, "sched_setaffinity"):
            try:
                os.sched_setaffinity(0, {cpu})  # 0: the calling thread
            except OSError:  # pragma: no cover - a CPU we may not use
                pass

    def run(self, fn: Any, args: list[tuple[Any, ...]]) -> tuple[float, list[Any]]:
        wall, _, results = self.run_timed(fn, args)
        return wall, results

    def run_timed(self, fn: Any, args: list[tuple[Any, ...]]) -> tuple[float, list[float] | None, list[Any]]:
        import time

        fine = time.get_clock_info("thread_time").resolution <= 1e-6

        def one(a: tuple[Any, ...]) -> tuple[float, float, float, Any]:
            self._barrier.wait()
            t0, c0 = time.perf_counter(), time.thread_time()
            r = fn(*a)
            return t0, time.perf_counter(), time.thread_time() - c0, r

        done = list(self._pool.map(one, args))
        wall = max(d[1] for d in done) - min(d[0] for d in done)
        return wall, [d[2] for d in done] if fine else None, [d[3] for d in done]

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> ThreadTeam:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""The real timing backend: kernels compiled by NVRTC through CuPy, timed with CUDA events.

Why CuPy rather than cuda-core: one well-kept package gives everything the benchmark needs,
namely NVRTC compilation (``cupy.RawModule``), device memory, CUDA events, device attributes and
cuBLAS GEMMs (``cupy.matmul``), on CUDA 11 to 13 wheels; cuda-core would need a second
library for GEMMs and array set-up. PyTorch, when present, adds FP8 / INT8 GEMMs
(:mod:`roofline.bench.gpu.gemm`).

Implements :class:`roofline.bench.gpu.backend.Backend`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from roofline.errors import MachineError
from roofline.bench.gpu.gemm import GemmRunner
from roofline.machine.gpu_device import ClockSampler, DeviceInfo, _cupy, read_device_info
from roofline.bench.gpu.kernels import (
    BANDWIDTH_SOURCE,
    COMPUTE_KERNEL,
    COMPUTE_SOURCES,
    INT_SOURCE,
    MIN_CC,
    SHARED_KERNEL,
    SHARED_SOURCES,
    BandwidthConfig,
    ComputeConfig,
    IntConfig,
    SharedConfig,
    paired_bits,
)

log = logging.getLogger(__name__)

_MEMCPY_DEVICE_TO_DEVICE = 3  # cudaMemcpyKind
#: Kernels compiled on first use, one NVRTC module each: key -> (CUDA source, kernel name). The keys are
#: what :meth:`CupyBackend.compute_unsupported` takes: a precision, 'int32', or a shared kernel's name.
_LAZY_KERNELS: dict[str, tuple[str, str]] = {
    **{p: (src, COMPUTE_KERNEL[p]) for p, src in COMPUTE_SOURCES.items()},
    "int32": (INT_SOURCE, "int_mix"),
    **{SHARED_KERNEL[w]: (src, SHARED_KERNEL[w]) for w, src in SHARED_SOURCES.items()},
}
#: Any odd constant: the INT32 kernel's addend.
_INT_ADDEND = 0x9E3779B9


class CupyBackend:
    """Runs and times the micro-benchmarks on GPU ``device``. Call :meth:`close` when done."""

    def __init__(self, device: int = 0, *, max_bytes: int) -> None:
        cp = _cupy()
        self.cp = cp
        self.device = device
        self._info = read_device_info(device)
        cp.cuda.Device(device).use()
        self._start, self._stop = cp.cuda.Event(), cp.cuda.Event()
        self._compile_errors: dict[str, str] = {}
        self._modules: dict[str, Any] = {}
        try:
            self._modules["bandwidth"] = cp.RawModule(code=BANDWIDTH_SOURCE)
            self._modules["bandwidth"].get_function("bw_read_part")  # compile now, fail early
        except Exception as exc:
            raise MachineError(f"NVRTC could not compile the bandwidth kernels: {exc}") from None
        # One buffer for every working set (prefixes of it), filled with a non-zero pattern.
        self._buffer = cp.empty(max_bytes // 4, dtype=cp.uint32)
        self._buffer.fill(0x01020304)
        self._sink = cp.zeros(1, dtype=cp.int32)
        self._gemm: GemmRunner | None = None

    # -- Backend protocol ------------------------------------------------------------------
    def device_info(self) -> DeviceInfo:
        return self._info

    def clock_sampler(self) -> ClockSampler:
        return ClockSampler(self.device)

    def _timed(self, launch: Any) -> float:
        self._start.record()
        launch()
        self._stop.record()
        self._stop.synchronize()
        return float(self.cp.cuda.get_elapsed_time(self._start, self._stop)) / 1e3

    def time_bandwidth(self, cfg: BandwidthConfig) -> float:
        if cfg.size_bytes > self._buffer.nbytes:
            raise MachineError(f"working set {cfg.size_bytes} B exceeds the {self._buffer.nbytes} B buffer")
        fn = self._modules["bandwidth"].get_function(cfg.kernel_name)
        ptr = self._buffer
        reps = np.int32(cfg.reps)
        if cfg.mapping == "broadcast":  # a power-of-two set, indexed through a 32-bit mask
            args: tuple[Any, ...] = (ptr, np.uint32(cfg.elements - 1), reps, self._sink)
        else:
            n = np.int64(cfg.elements)
            args = (ptr, n, reps) if cfg.kernel == "rmw" else (ptr, n, reps, self._sink)
        return self._timed(lambda: fn((cfg.blocks,), (cfg.threads,), args))

    def compute_unsupported(self, precision: str) -> str | None:
        """Why the kernel ``precision`` names (a precision, 'int32', 'shared_ld32', 'shared_ld128') cannot
        run here, or None; compiles it on first use."""
        need = MIN_CC.get(precision, (0, 0))
        if self._info.compute_capability < need:
            return f"{precision} FMA needs compute capability {'.'.join(map(str, need))}"
        if precision in self._compile_errors:
            return self._compile_errors[precision]
        if precision not in self._modules:
            source, name = _LAZY_KERNELS[precision]
            try:
                mod = self.cp.RawModule(code=source)
                mod.get_function(name)
                self._modules[precision] = mod
            except Exception as exc:  # e.g. NVRTC without cuda_bf16.h: only that ceiling is lost
                self._compile_errors[precision] = f"NVRTC could not compile the {precision} kernel: {exc}"
                return self._compile_errors[precision]
        return None

    def _function(self, key: str) -> Any:
        reason = self.compute_unsupported(key)
        if reason:
            raise MachineError(reason)
        return self._modules[key].get_function(_LAZY_KERNELS[key][1])

    def time_shared(self, cfg: SharedConfig) -> float:
        fn = self._function(cfg.kernel_name)
        args = (self._sink, np.int32(cfg.iters))
        return self._timed(lambda: fn((cfg.blocks,), (cfg.threads,), args))

    def time_int(self, cfg: IntConfig) -> float:
        fn = self._function("int32")
        out = self.cp.empty(cfg.blocks * cfg.threads, dtype=self.cp.uint32)
        args = (out, np.uint32(_INT_ADDEND), np.int32(cfg.iters))
        return self._timed(lambda: fn((cfg.blocks,), (cfg.threads,), args))

    def time_compute(self, cfg: ComputeConfig) -> float:
        fn = self._function(cfg.precision)
        nthreads = cfg.blocks * cfg.threads
        out = self.cp.empty(nthreads * (8 if cfg.precision == "fp64" else 4), dtype=self.cp.uint8)
        if cfg.precision in ("fp16", "bf16"):  # the paired kernels take their own type: 32-bit patterns
            b, c = (np.uint32(paired_bits(v, cfg.precision)) for v in (0.9995, 0.001))
            args = (out, b, c, np.int64(cfg.iters))
        else:
            scalar = np.float64 if cfg.precision == "fp64" else np.float32
            args = (out, scalar(0.9995), scalar(0.001), np.int64(cfg.iters))
        return self._timed(lambda: fn((cfg.blocks,), (cfg.threads,), args))

    def _gemms(self) -> GemmRunner:
        if self._gemm is None:
            self._gemm = GemmRunner(self.device)
        return self._gemm

    def gemm_library(self) -> str:
        return self._gemms().library

    def gemm_unsupported(self, kind: str) -> str | None:
        return self._gemms().unsupported(kind)

    def time_gemm(self, kind: str, n: int) -> float:
        return self._gemms().time(kind, n)

    def time_copy(self, nbytes: int) -> float:
        """One device-to-device cudaMemcpy of ``nbytes`` within the buffer (halves must not overlap)."""
        half = self._buffer.nbytes // 2
        if nbytes > half:
            raise MachineError(f"copy of {nbytes} B needs a buffer of twice that")
        src = self._buffer.data.ptr
        dst = src + half
        stream = self.cp.cuda.get_current_stream().ptr
        rt = self.cp.cuda.runtime
        return self._timed(lambda: rt.memcpyAsync(dst, src, nbytes, _MEMCPY_DEVICE_TO_DEVICE, stream))

    def close(self) -> None:
        if self._gemm is not None:
            self._gemm.close()
        self._buffer = None
        self._sink = None
        self.cp.get_default_memory_pool().free_all_blocks()

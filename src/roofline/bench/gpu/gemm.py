"""Tensor-core ceilings from cuBLAS GEMMs: C = A x B on random n x n matrices, 2 n^3 FLOPs (OPs).

Which library runs each input type:

- PyTorch when it is installed with CUDA (optional): ``torch.matmul`` for FP64 (DGEMM, which
  uses the FP64 tensor cores on GA100 / GH100), TF32 (FP32 inputs with
  ``torch.backends.cuda.matmul.allow_tf32`` set for the call and restored after), FP16 and BF16;
  ``torch._scaled_mm`` (cuBLASLt) for FP8 e4m3 with unit scales, BF16 output and fast
  accumulation (``use_fast_accum=True``; without it cuBLASLt on Hopper moves the partial sums to
  FP32 registers at intervals, which costs FP8 GEMMs a good part of their rate), and
  ``torch._int_mm`` (cuBLASLt) for INT8 with INT32 output, B column-major as for FP8 (row-major B ran
  7x slower on an H100). Those two are private PyTorch APIs:
  when they are missing or refuse the GPU, that ceiling is reported as not measured, with why; a
  ``_scaled_mm`` without the ``use_fast_accum`` keyword still runs, and :attr:`GemmRunner.library`
  says that FP8 ran without fast accumulation (an understated ceiling).
- CuPy otherwise: ``cupy.matmul`` (cuBLAS) for FP16 and FP64; TF32, BF16, FP8 and INT8 are then
  not measured (CuPy picks TF32 only from an environment variable read at import, and has no
  FP8 / INT8 GEMM).

Inputs are drawn from a normal distribution (never zeros: zeros run faster on some GPUs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: GEMM kinds, named as the compute ceilings they measure.
GEMM_KINDS = ("tensor_fp64", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_int8")


def gemm_flops(n: int) -> int:
    """FLOPs (or integer OPs) of an n x n x n GEMM: one multiply and one add per term."""
    return 2 * n * n * n


def gemm_kinds_for(compute_capability: tuple[int, int]) -> list[str]:
    """Tensor-core GEMM kinds the GPU has, by compute capability.

    FP16 tensor cores from Volta (7.0); INT8 from Turing (7.5); TF32 and BF16 from Ampere (8.0);
    FP8 from Ada (8.9); FP64 tensor cores only on the data-center chips GA100 (8.0), GH100 (9.0)
    and GB100 (10.0).
    """
    cc = tuple(compute_capability)
    kinds = []
    if cc in ((8, 0), (9, 0), (10, 0)):
        kinds.append("tensor_fp64")
    if cc >= (8, 0):
        kinds.append("tensor_tf32")
    if cc >= (7, 0):
        kinds.append("tensor_fp16")
    if cc >= (8, 0):
        kinds.append("tensor_bf16")
    if cc >= (8, 9):
        kinds.append("tensor_fp8")
    if cc >= (7, 5):
        kinds.append("tensor_int8")
    return kinds


class GemmRunner:
    """Times one GEMM of a given kind and size on GPU ``device`` (seconds per call, CUDA events)."""

    def __init__(self, device: int = 0, *, prefer_torch: bool = True) -> None:
        self.device = device
        self.torch: Any = None
        if prefer_torch:
            try:
                import torch

                if torch.cuda.is_available():
                    self.torch = torch
            except ImportError:
                log.info("torch not installed: GEMMs through CuPy (FP16, FP64 only)")
        self._prepared: dict[tuple[str, int], Callable[[], Any]] = {}
        self._library = "torch" if self.torch is not None else "cupy"
        #: How GEMMs ran where that changes the ceiling (FP8 with or without fast accumulation).
        self.notes: list[str] = []

    @property
    def library(self) -> str:
        """The library that ran the GEMMs, with :attr:`notes` after it (they reach the machine's metadata)."""
        return "; ".join([self._library, *self.notes])

    def unsupported(self, kind: str) -> str | None:
        """Why ``kind`` cannot be measured here, or None."""
        if self.torch is None:
            if kind in ("tensor_fp16", "tensor_fp64"):
                return None
            return f"{kind} needs PyTorch with CUDA (CuPy has no such GEMM)"
        t = self.torch
        if kind == "tensor_fp8" and not hasattr(t, "_scaled_mm"):
            return "this PyTorch has no torch._scaled_mm"
        if kind == "tensor_int8" and not hasattr(t, "_int_mm"):
            return "this PyTorch has no torch._int_mm"
        return None

    def _make(self, kind: str, n: int) -> Callable[[], Any]:
        if self.torch is None:
            return self._make_cupy(kind, n)
        t = self.torch
        dev = t.device("cuda", self.device)
        gen = t.Generator(device=dev)
        gen.manual_seed(1234)

        def randn(dtype: Any) -> Any:
            return t.randn(n, n, device=dev, dtype=t.float32, generator=gen).to(dtype)

        if kind == "tensor_fp8":
            a = randn(t.float8_e4m3fn)
            b = randn(t.float8_e4m3fn).t().contiguous().t()  # column-major, as cuBLASLt wants
            return self._fp8_gemm(a, b, t.tensor(1.0, device=dev))
        if kind == "tensor_int8":
            a = t.randint(-64, 64, (n, n), device=dev, dtype=t.int8, generator=gen)
            # B column-major (cuBLASLt's IMMA layout): with B row-major, torch._int_mm ran at 126 TOP/s on an
            # H100, column-major at 915 TOP/s, same result (benchmarks/results/h100-80gb-hbm3-2026-11-27/probe)
            b = t.randint(-64, 64, (n, n), device=dev, dtype=t.int8, generator=gen).t().contiguous().t()
            return lambda: t._int_mm(a, b)
        dtype = {"tensor_fp64": t.float64, "tensor_tf32": t.float32, "tensor_fp16": t.float16,
                 "tensor_bf16": t.bfloat16}[kind]
        a, b = randn(dtype), randn(dtype)
        if kind == "tensor_tf32":
            def tf32() -> Any:
                old = t.backends.cuda.matmul.allow_tf32
                t.backends.cuda.matmul.allow_tf32 = True
                try:
                    return t.matmul(a, b)
                finally:
                    t.backends.cuda.matmul.allow_tf32 = old
            return tf32
        return lambda: t.matmul(a, b)

    def _fp8_gemm(self, a: Any, b: Any, one: Any) -> Callable[[], Any]:
        """``torch._scaled_mm`` with fast accumulation, or without it (said in :attr:`notes`) where
        this PyTorch does not take the keyword. Runs the GEMM once to find out."""
        t = self.torch

        def fast() -> Any:
            return t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16, use_fast_accum=True)

        try:
            fast()
        except TypeError as exc:
            if "use_fast_accum" not in str(exc):
                raise
            self._note(f"tensor_fp8 WITHOUT fast accumulation (understated ceiling): this PyTorch's "
                       f"torch._scaled_mm takes no use_fast_accum ({exc})")
            return lambda: t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16)
        self._note("tensor_fp8 with use_fast_accum=True")
        return fast

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _make_cupy(self, kind: str, n: int) -> Callable[[], Any]:
        import cupy as cp

        dtype = {"tensor_fp16": cp.float16, "tensor_fp64": cp.float64}[kind]
        rng = cp.random.default_rng(1234)
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(dtype)
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(dtype)
        return lambda: cp.matmul(a, b)

    #: GEMMs per timed sample, so that the host's launch latency (~10 µs) is spread over several.
    CALLS_PER_SAMPLE = 3

    def time(self, kind: str, n: int) -> float:
        """Seconds per GEMM, timed over :attr:`CALLS_PER_SAMPLE` back-to-back calls (the first use of a
        kind and size also builds its inputs and runs two warm-up calls, untimed)."""
        key = (kind, n)
        if key not in self._prepared:
            self._prepared.clear()  # one size at a time: 8192^2 FP64 x 3 is 1.6 GB
            fn = self._make(kind, n)
            fn()
            fn()
            self._prepared[key] = fn
        fn = self._prepared[key]
        if self.torch is not None:
            t = self.torch
            start, stop = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(self.CALLS_PER_SAMPLE):
                fn()
            stop.record()
            stop.synchronize()
            return float(start.elapsed_time(stop)) / 1e3 / self.CALLS_PER_SAMPLE
        import cupy as cp

        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(self.CALLS_PER_SAMPLE):
            fn()
        stop.record()
        stop.synchronize()
        return float(cp.cuda.get_elapsed_time(start, stop)) / 1e3 / self.CALLS_PER_SAMPLE

    def close(self) -> None:
        self._prepared.clear()
        if self.torch is not None:
            self.torch.cuda.empty_cache()

"""CUDA C sources of the GPU micro-benchmarks, and the exact work each launch does.

The sources are compiled at run time by NVRTC (through CuPy, see
:mod:`roofline.machine.gpu_cupy`). This module is pure: launch configurations, the bytes and
FLOPs a launch moves or computes, and size ladders; tests check that arithmetic without a GPU.

Bandwidth kernels use 16-byte accesses (``int4``), several independent loads in flight per
thread, and repeat the pass ``reps`` times inside the kernel so that small, cache-resident
working sets run long enough to time:

- ``bw_read_bcast``: every block reads the whole working set (W bytes), starting at a
  block-dependent offset, through the L1 (``ld.global.ca``). Each SM's L1 sees all of W, so W up
  to the L1 capacity measures L1, above it L2. Bytes = blocks x W x reps.
- ``bw_read_part``: the working set is split among all threads (grid-stride), loads bypass L1
  (``ld.global.cg``): W up to the L2 capacity measures L2, above it DRAM. Bytes = W x reps.
- ``bw_rmw_part``: as ``bw_read_part`` with a store after each load (``st.global.cg``).
  Bytes = 2 x W x reps (read and written).

Compute kernels run ``CHAINS`` independent FMA chains per thread, ``UNROLL`` times per loop
trip, ``iters`` trips: FLOPs = threads x iters x UNROLL x CHAINS x 2 x lanes (lanes = 2 for the
paired half types, whose one ``HFMA2`` does two FMAs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

VEC_BYTES = 16  #: bytes per access (int4)
BW_THREADS = 256  #: threads per block of the bandwidth kernels
BW_UNROLL = 4  #: independent loads in flight per thread and loop trip
COMPUTE_THREADS = 256
CHAINS = 8
UNROLL = 16

Precision = Literal["fp64", "fp32", "fp16", "bf16"]
#: FMA lanes per instruction and the kernel that runs each precision.
LANES: dict[str, int] = {"fp64": 1, "fp32": 1, "fp16": 2, "bf16": 2}
COMPUTE_KERNEL: dict[str, str] = {"fp64": "fma_fp64", "fp32": "fma_fp32", "fp16": "fma_fp16", "bf16": "fma_bf16"}
#: Oldest compute capability with the instruction (BF16 HFMA2 needs sm_80).
MIN_CC: dict[str, tuple[int, int]] = {"fp64": (0, 0), "fp32": (0, 0), "fp16": (5, 3), "bf16": (8, 0)}

BANDWIDTH_SOURCE = r"""
extern "C" __global__ void bw_read_bcast(const int4* __restrict__ a, long long n, int reps, int* out)
{
    // n: int4 elements in the working set, a multiple of blockDim.x.
    long long start = ((long long)blockIdx.x * 7919LL * blockDim.x) % n;
    int4 acc = make_int4(0, 0, 0, 0);
    for (int r = 0; r < reps; ++r) {
        long long i = threadIdx.x + start;
        if (i >= n) i -= n;
        #pragma unroll 4
        for (long long k = 0; k < n; k += blockDim.x) {
            int4 v = __ldca(a + i);
            acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
            i += blockDim.x;
            if (i >= n) i -= n;
        }
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) out[0] = acc.x;  // keeps the loads live
}

extern "C" __global__ void bw_read_part(const int4* __restrict__ a, long long n, int reps, int* out)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int4 acc = make_int4(0, 0, 0, 0);
    for (int r = 0; r < reps; ++r) {
        long long i = tid;
        for (; i + 3 * stride < n; i += 4 * stride) {
            int4 v0 = __ldcg(a + i);
            int4 v1 = __ldcg(a + i + stride);
            int4 v2 = __ldcg(a + i + 2 * stride);
            int4 v3 = __ldcg(a + i + 3 * stride);
            acc.x ^= v0.x ^ v1.x ^ v2.x ^ v3.x;
            acc.y ^= v0.y ^ v1.y ^ v2.y ^ v3.y;
            acc.z ^= v0.z ^ v1.z ^ v2.z ^ v3.z;
            acc.w ^= v0.w ^ v1.w ^ v2.w ^ v3.w;
        }
        for (; i < n; i += stride) {
            int4 v = __ldcg(a + i);
            acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
        }
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) out[0] = acc.x;
}

extern "C" __global__ void bw_rmw_part(int4* __restrict__ a, long long n, int reps)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; ++r) {
        long long i = tid;
        for (; i + 3 * stride < n; i += 4 * stride) {
            int4 v0 = __ldcg(a + i);
            int4 v1 = __ldcg(a + i + stride);
            int4 v2 = __ldcg(a + i + 2 * stride);
            int4 v3 = __ldcg(a + i + 3 * stride);
            v0.x += 1; v1.y += 1; v2.z += 1; v3.w += 1;
            __stcg(a + i, v0);
            __stcg(a + i + stride, v1);
            __stcg(a + i + 2 * stride, v2);
            __stcg(a + i + 3 * stride, v3);
        }
        for (; i < n; i += stride) {
            int4 v = __ldcg(a + i);
            v.x += 1;
            __stcg(a + i, v);
        }
    }
}
"""


def _fma_source(name: str, ctype: str, ptype: str, conv: str, init: str, fma: str, header: str = "") -> str:
    # b and c arrive as plain float / double (what a launcher can pass) and are converted once.
    return f"""
{header}
extern "C" __global__ void {name}({ctype}* out, {ptype} b_in, {ptype} c_in, long long iters)
{{
    const {ctype} b = {conv}(b_in);
    const {ctype} c = {conv}(c_in);
    {ctype} x[{CHAINS}];
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < {CHAINS}; ++k) x[k] = {init};
    #pragma unroll 1
    for (long long it = 0; it < iters; ++it) {{
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            #pragma unroll
            for (int k = 0; k < {CHAINS}; ++k) x[k] = {fma.format(a="x[k]", b="b", c="c")};
        }}
    }}
    {ctype} s = x[0];
    #pragma unroll
    for (int k = 1; k < {CHAINS}; ++k) s = {fma.format(a="s", b="x[k]", c="c")};
    out[tid] = s;
}}
"""


# One module per precision, so that a missing half-precision header fails only that kernel.
COMPUTE_SOURCES: dict[str, str] = {
    "fp64": _fma_source("fma_fp64", "double", "double", "", "(double)(tid + k)", "fma({a}, {b}, {c})"),
    "fp32": _fma_source("fma_fp32", "float", "float", "", "(float)(tid + k)", "fmaf({a}, {b}, {c})"),
    "fp16": _fma_source(
        "fma_fp16", "__half2", "float", "__float2half2_rn", "__floats2half2_rn((float)k, (float)(tid & 7))", "__hfma2({a}, {b}, {c})",
        header="#include <cuda_fp16.h>",
    ),
    "bf16": _fma_source(
        "fma_bf16", "__nv_bfloat162", "float", "__float2bfloat162_rn", "__floats2bfloat162_rn((float)k, (float)(tid & 7))",
        "__hfma2({a}, {b}, {c})", header="#include <cuda_bf16.h>",
    ),
}


@dataclass(frozen=True)
class BandwidthConfig:
    """One launch of a bandwidth kernel.

    ``kernel``: 'read' or 'rmw'; ``mapping``: 'broadcast' (every block reads all of the working
    set, through L1) or 'partitioned' (the set split among threads, L1 bypassed);
    ``size_bytes``: working set (B), a multiple of :data:`VEC_BYTES` x threads for broadcast;
    ``blocks`` x ``threads`` threads; ``reps``: passes over the set inside the kernel.
    """

    kernel: Literal["read", "rmw"]
    mapping: Literal["broadcast", "partitioned"]
    size_bytes: int
    blocks: int
    threads: int = BW_THREADS
    reps: int = 1

    def __post_init__(self) -> None:
        if self.size_bytes <= 0 or self.size_bytes % VEC_BYTES:
            raise ValueError(f"working set must be a positive multiple of {VEC_BYTES} B, not {self.size_bytes}")
        if self.mapping == "broadcast":
            if self.kernel != "read":
                raise ValueError("only the read kernel has a broadcast mapping")
            if self.size_bytes % (VEC_BYTES * self.threads):
                raise ValueError(f"broadcast working set must be a multiple of {VEC_BYTES * self.threads} B")
        if self.blocks < 1 or self.threads < 1 or self.reps < 1:
            raise ValueError("blocks, threads and reps must be >= 1")

    @property
    def elements(self) -> int:
        """int4 elements in the working set."""
        return self.size_bytes // VEC_BYTES

    @property
    def kernel_name(self) -> str:
        return {"broadcast": "bw_read_bcast", "partitioned": f"bw_{self.kernel}_part"}[self.mapping]

    @property
    def bytes_moved(self) -> int:
        """Bytes the launch loads and stores, exactly (B)."""
        per_pass = self.size_bytes * (self.blocks if self.mapping == "broadcast" else 1)
        return per_pass * self.reps * (2 if self.kernel == "rmw" else 1)

    def with_reps(self, reps: int) -> BandwidthConfig:
        return BandwidthConfig(self.kernel, self.mapping, self.size_bytes, self.blocks, self.threads, reps)


@dataclass(frozen=True)
class ComputeConfig:
    """One launch of an FMA kernel: ``blocks`` x ``threads`` threads, ``iters`` loop trips."""

    precision: Precision
    blocks: int
    threads: int = COMPUTE_THREADS
    iters: int = 1024

    def __post_init__(self) -> None:
        if self.precision not in LANES:
            raise ValueError(f"unknown precision {self.precision!r}")
        if self.blocks < 1 or self.threads < 1 or self.iters < 1:
            raise ValueError("blocks, threads and iters must be >= 1")

    @property
    def kernel_name(self) -> str:
        return COMPUTE_KERNEL[self.precision]

    @property
    def fmas(self) -> int:
        """FMA instructions per thread lane: iters x UNROLL x CHAINS, plus the CHAINS - 1 of the final sum."""
        return self.iters * UNROLL * CHAINS + (CHAINS - 1)

    @property
    def flops(self) -> int:
        """FLOPs of the launch, exactly: 2 per FMA per lane."""
        return self.blocks * self.threads * self.fmas * 2 * LANES[self.precision]

    def with_iters(self, iters: int) -> ComputeConfig:
        return ComputeConfig(self.precision, self.blocks, self.threads, iters)


def bandwidth_blocks(sms: int, threads: int = BW_THREADS, max_threads_per_sm: int = 2048) -> int:
    """Blocks that fill every SM to full occupancy with ``threads``-thread blocks."""
    return sms * max(1, max_threads_per_sm // threads)


def compute_blocks(sms: int, threads: int = COMPUTE_THREADS, blocks_per_sm: int = 8) -> int:
    """Blocks of the FMA kernels: ``blocks_per_sm`` per SM (2048 threads per SM at 256 threads)."""
    return sms * blocks_per_sm


def size_ladder(min_bytes: int, max_bytes: int, points_per_octave: int, align: int = 4096) -> list[int]:
    """Working-set sizes (B) from ``min_bytes`` to ``max_bytes``, geometric, each a multiple of ``align``.

    Sizes are rounded to the nearest multiple of ``align`` (never below ``align``) and deduplicated.
    """
    if min_bytes <= 0 or max_bytes < min_bytes or points_per_octave < 1 or align < 1:
        raise ValueError("need 0 < min_bytes <= max_bytes, points_per_octave >= 1, align >= 1")
    octaves = math.log2(max_bytes / min_bytes)
    n = int(round(octaves * points_per_octave)) + 1
    out: list[int] = []
    for k in range(n):
        raw = min_bytes * 2.0 ** (k / points_per_octave)
        size = max(align, int(round(raw / align)) * align)
        if size <= max_bytes and (not out or size > out[-1]):
            out.append(size)
    return out


def reps_for_target(reps: int, elapsed_s: float, target_s: float, max_reps: int = 2**31 - 1) -> int:
    """Scale ``reps`` (or iterations) so that a launch that took ``elapsed_s`` takes about ``target_s``."""
    if elapsed_s <= 0 or not math.isfinite(elapsed_s):
        return min(max_reps, reps * 16)
    return int(min(max_reps, max(1, math.ceil(reps * target_s / elapsed_s))))

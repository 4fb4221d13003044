"""CUDA C sources of the GPU micro-benchmarks, and the exact work each launch does.

The sources are compiled at run time by NVRTC (through CuPy, see
:mod:`roofline.bench.gpu.cupy_timer`). This module is pure: launch configurations, the bytes and
FLOPs a launch moves or computes, and size ladders; tests check that arithmetic without a GPU.

Bandwidth kernels use 16-byte accesses (``int4``), several independent loads in flight per
thread, and repeat the pass ``reps`` times inside the kernel so that small, cache-resident
working sets run long enough to time:

- ``bw_read_bcast``: every block reads the whole working set (W bytes, a power of two), starting at a
  block-dependent offset, through the L1 (``ld.global.ca``), 32-bit indices wrapped by a mask, 8 loads
  unrolled. Each SM's L1 sees all of W, so W up to the L1 capacity measures L1. Above it the blocks of
  one SM still share lines in L1 (on an H100, at 1 MiB, 41 % of the sectors hit L1 and L2 served 49 % of
  the bytes read): not an L2 measurement. Bytes = blocks x W x reps. (The first version, with 64-bit
  indices wrapped by a compare and 4 loads unrolled, ran at 64 B/clk/SM on an H100; this one at 104,
  ``benchmarks/results/h100-80gb-hbm3-2026-11-27/probe``.)
- ``bw_read_part``: the working set is split among all threads (grid-stride), loads bypass L1
  (``ld.global.cg``): W up to the L2 capacity measures L2, above it DRAM. Bytes = W x reps.
- ``bw_rmw_part``: as ``bw_read_part`` with a store after each load (``st.global.cg``).
  Bytes = 2 x W x reps (read and written).

Compute kernels run ``CHAINS`` independent FMA chains per thread, ``UNROLL`` times per loop
trip, ``iters`` trips: FLOPs = threads x iters x UNROLL x CHAINS x 2 x lanes (lanes = 2 for the
paired half types, whose one ``HFMA2`` does two FMAs).

Shared-memory kernels (``shared_ld32``, ``shared_ld128``) read a block's shared array with
conflict-free loads: lane ``l`` of every warp reads word ``l`` (4-byte loads) or 16-byte element
``l`` (``ld.shared.v4``) of a row, ``SHARED_UNROLL[width]`` rows per loop trip, through inline PTX
``ld.volatile.shared`` so that no load is hoisted out of the loop or merged (the rows hold
constant data), the two halves of the array alternating between trips. Each 4-byte warp load is one
128-byte wavefront (32 banks x 4 B), each 16-byte one four: bytes = wavefronts x 128 B =
warps x iters x loads per trip x wavefronts per load x 128 (:class:`SharedConfig`). The values are
XORed into a result that is kept live.

The INT32 kernel (``int_mix``) runs ``CHAINS`` independent chains per thread, ``INT_UNROLL``
steps per loop trip alternating ``x = x * x + x`` (one IMAD) and ``x = x + c`` (one IADD3), which no
compiler can merge into fewer instructions (``x * (x + 1) + c`` is still one add and one
multiply-add); the chains end in ``CHAINS - 1`` multiply-adds that keep them live. Integer
operations = threads x (iters x INT_UNROLL x CHAINS + CHAINS - 1) (:class:`IntConfig`). The loop's
own counter and test (about 2 integer instructions per trip of 256) and the set-up are not counted,
so the measured rate is low by at most 1 %.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Literal

VEC_BYTES = 16  #: bytes per access (int4)
BW_THREADS = 256  #: threads per block of the bandwidth kernels
BW_UNROLL = 4  #: independent loads in flight per thread and loop trip
COMPUTE_THREADS = 256
CHAINS = 8
UNROLL = 16

SHARED_THREADS = 256  #: threads per block of the shared-memory kernels (whole warps)
#: Loads per thread and loop trip of the shared-memory kernels, by access width (B). Each kernel's
#: array is 2 halves x that many rows x 32 lanes x width: 4 KiB (4 B) and 8 KiB (16 B) per block.
SHARED_UNROLL: dict[int, int] = {4: 16, 16: 8}
SHARED_KERNEL: dict[int, str] = {4: "shared_ld32", 16: "shared_ld128"}
WAVEFRONT_BYTES = 128  #: bytes of one shared-memory wavefront: 32 banks x 4 B
INT_THREADS = 256
INT_UNROLL = 32  #: IMAD / IADD3 steps per chain and loop trip (even steps IMAD, odd steps IADD3)

Precision = Literal["fp64", "fp32", "fp16", "bf16"]
#: FMA lanes per instruction and the kernel that runs each precision.
LANES: dict[str, int] = {"fp64": 1, "fp32": 1, "fp16": 2, "bf16": 2}
COMPUTE_KERNEL: dict[str, str] = {"fp64": "fma_fp64", "fp32": "fma_fp32", "fp16": "fma_fp16", "bf16": "fma_bf16"}
#: Oldest compute capability with the instruction (BF16 HFMA2 needs sm_80).
MIN_CC: dict[str, tuple[int, int]] = {"fp64": (0, 0), "fp32": (0, 0), "fp16": (5, 3), "bf16": (8, 0)}

BANDWIDTH_SOURCE = r"""
extern "C" __global__ void bw_read_bcast(const int4* __restrict__ a, unsigned int mask, int reps, int* out)
{
    // The working set is mask + 1 int4 elements: a power of two, a multiple of blockDim.x. 32-bit indices
    // wrapped by the mask; 64-bit ones wrapped by a compare ran at half the L1 rate on an H100.
    unsigned int i = (threadIdx.x + blockIdx.x * 7919u * blockDim.x) & mask;
    int4 acc = make_int4(0, 0, 0, 0);
    for (int r = 0; r < reps; ++r) {
        #pragma unroll 8
        for (unsigned int k = 0; k <= mask; k += blockDim.x) {
            int4 v = __ldca(a + ((i + k) & mask));
            acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
        }
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) out[0] = 1;  // keeps the loads live
}

extern "C" __global__ void bw_read_part(const int4* __restrict__ a, long long n, int reps, int* out)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int4 acc = make_int4(0, 0, 0, 0);
    for (int r = 0; r < reps; ++r) {
        // Each pass a quarter of the threads on, or a wave of blocks re-reads its own part (docs/machine.md).
        long long i = tid + (long long)(r & 3) * (stride >> 2);
        if (i >= stride) i -= stride;
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


def _fma_source(name: str, ctype: str, ptype: str, conv: str, init: str, fma: str, header: str = "", *,
                chains: int = CHAINS, unroll: int = UNROLL) -> str:
    # b, c: float / double, or the paired type (ptxas then issues half the HFMA2s on the tensor pipe: docs/machine.md)
    return f"""
{header}
extern "C" __global__ void {name}({ctype}* out, {ptype} b_in, {ptype} c_in, long long iters)
{{
    const {ctype} b = {conv}(b_in);
    const {ctype} c = {conv}(c_in);
    {ctype} x[{chains}];
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < {chains}; ++k) x[k] = {init};
    #pragma unroll 1
    for (long long it = 0; it < iters; ++it) {{
        #pragma unroll
        for (int u = 0; u < {unroll}; ++u) {{
            #pragma unroll
            for (int k = 0; k < {chains}; ++k) x[k] = {fma.format(a="x[k]", b="b", c="c")};
        }}
    }}
    {ctype} s = x[0];
    #pragma unroll
    for (int k = 1; k < {chains}; ++k) s = {fma.format(a="s", b="x[k]", c="c")};
    out[tid] = s;
}}
"""


# One module per precision, so that a missing half-precision header fails only that kernel.
COMPUTE_SOURCES: dict[str, str] = {
    "fp64": _fma_source("fma_fp64", "double", "double", "", "(double)(tid + k)", "fma({a}, {b}, {c})"),
    "fp32": _fma_source("fma_fp32", "float", "float", "", "(float)(tid + k)", "fmaf({a}, {b}, {c})"),
    "fp16": _fma_source(
        "fma_fp16", "__half2", "__half2", "", "__floats2half2_rn((float)k, (float)(tid & 7))", "__hfma2({a}, {b}, {c})",
        header="#include <cuda_fp16.h>",
    ),
    "bf16": _fma_source(
        "fma_bf16", "__nv_bfloat162", "__nv_bfloat162", "", "__floats2bfloat162_rn((float)k, (float)(tid & 7))",
        "__hfma2({a}, {b}, {c})", header="#include <cuda_bf16.h>",
    ),
}


def paired_bits(value: float, precision: str) -> int:
    """The 32-bit pattern of a ``__half2`` (``fp16``) or ``__nv_bfloat162`` (``bf16``) holding ``value`` twice, as
    the paired-FMA kernels take their constants (rounded to nearest, ties to even)."""
    if precision not in ("fp16", "bf16"):
        raise ValueError(f"no paired type for {precision!r}")
    f32 = struct.unpack("<I", struct.pack("<f", value))[0]
    half = (struct.unpack("<H", struct.pack("<e", value))[0] if precision == "fp16"
            else ((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16) & 0xFFFF)
    return half | (half << 16)


def _shared_source(width: int) -> str:
    rows = SHARED_UNROLL[width]
    words = 2 * rows * 32 * width // 4  # two halves of ``rows`` rows of 32 lanes x width bytes
    row_bytes = 32 * width
    if width == 4:
        loads = [f'asm volatile("ld.volatile.shared.u32 %0, [%1+{u * row_bytes}];" : "=r"(v0) : "r"(addr));\n'
                 "        acc ^= v0;" for u in range(rows)]
        regs = "v0"
    else:
        loads = [f'asm volatile("ld.volatile.shared.v4.u32 {{%0, %1, %2, %3}}, [%4+{u * row_bytes}];"\n'
                 '                     : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(addr));\n'
                 "        acc ^= v0 ^ v1 ^ v2 ^ v3;" for u in range(rows)]
        regs = "v0, v1, v2, v3"
    body = "\n        ".join(loads)
    return f"""
extern "C" __global__ void {SHARED_KERNEL[width]}(int* out, int iters)
{{
    __shared__ unsigned int buf[{words}];
    for (int i = threadIdx.x; i < {words}; i += blockDim.x) buf[i] = 2654435761u * (unsigned int)(i + 1);
    __syncthreads();
    // Lane l reads bytes [{width} l, {width} l + {width}) of each {row_bytes}-byte row: every bank once per wavefront.
    const unsigned int base = (unsigned int)__cvta_generic_to_shared(buf) + (threadIdx.x & 31) * {width};
    unsigned int half = 0, acc = 0;
    #pragma unroll 1
    for (int it = 0; it < iters; ++it) {{
        const unsigned int addr = base + half;
        unsigned int {regs};
        {body}
        half ^= {rows * row_bytes};
    }}
    if (acc == 0x7fffffffu) out[0] = (int)acc;  // keeps the loads live
}}
"""


#: CUDA C sources of the shared-memory kernels, by access width (B).
SHARED_SOURCES: dict[int, str] = {w: _shared_source(w) for w in SHARED_UNROLL}

INT_SOURCE = f"""
extern "C" __global__ void int_mix(unsigned int* out, unsigned int c, int iters)
{{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x[{CHAINS}];
    #pragma unroll
    for (int k = 0; k < {CHAINS}; ++k) x[k] = tid + 977u * k;
    #pragma unroll 1
    for (int it = 0; it < iters; ++it) {{
        #pragma unroll
        for (int u = 0; u < {INT_UNROLL // 2}; ++u) {{
            #pragma unroll
            for (int k = 0; k < {CHAINS}; ++k) x[k] = x[k] * x[k] + x[k];  // IMAD
            #pragma unroll
            for (int k = 0; k < {CHAINS}; ++k) x[k] = x[k] + c;            // IADD3
        }}
    }}
    unsigned int s = x[0];
    #pragma unroll
    for (int k = 1; k < {CHAINS}; ++k) s = s * x[k] + c;
    out[tid] = s;
}}
"""


@dataclass(frozen=True)
class BandwidthConfig:
    """One launch of a bandwidth kernel.

    ``kernel``: 'read' or 'rmw'; ``mapping``: 'broadcast' (every block reads all of the working
    set, through L1) or 'partitioned' (the set split among threads, L1 bypassed);
    ``size_bytes``: working set (B); for broadcast a power of two and a multiple of :data:`VEC_BYTES` x threads;
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
            if self.size_bytes % (VEC_BYTES * self.threads) or self.size_bytes & (self.size_bytes - 1):
                raise ValueError(f"broadcast working set must be a power of two and a multiple of "
                                 f"{VEC_BYTES * self.threads} B, not {self.size_bytes}")
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


@dataclass(frozen=True)
class SharedConfig:
    """One launch of a shared-memory kernel: ``blocks`` x ``threads`` threads (whole warps), ``iters``
    loop trips, conflict-free loads of ``width`` bytes (4 or 16)."""

    width: int
    blocks: int
    threads: int = SHARED_THREADS
    iters: int = 256

    def __post_init__(self) -> None:
        if self.width not in SHARED_UNROLL:
            raise ValueError(f"shared-memory access width must be one of {sorted(SHARED_UNROLL)} B, not {self.width}")
        if self.blocks < 1 or self.iters < 1 or self.threads < 32 or self.threads % 32:
            raise ValueError("blocks and iters must be >= 1 and threads a positive multiple of 32")

    @property
    def kernel_name(self) -> str:
        return SHARED_KERNEL[self.width]

    @property
    def wavefronts_per_load(self) -> int:
        """Wavefronts of one conflict-free warp load: 32 lanes x width / 128 B."""
        return 32 * self.width // WAVEFRONT_BYTES

    @property
    def warp_loads(self) -> int:
        """Warp-wide shared load instructions of the launch."""
        return self.blocks * (self.threads // 32) * self.iters * SHARED_UNROLL[self.width]

    @property
    def wavefronts(self) -> int:
        return self.warp_loads * self.wavefronts_per_load

    @property
    def bytes_moved(self) -> int:
        """Bytes read from shared memory in the loop, exactly: wavefronts x 128 B (the fill is not counted)."""
        return self.wavefronts * WAVEFRONT_BYTES

    def with_iters(self, iters: int) -> SharedConfig:
        return SharedConfig(self.width, self.blocks, self.threads, iters)


@dataclass(frozen=True)
class IntConfig:
    """One launch of the INT32 kernel: ``blocks`` x ``threads`` threads, ``iters`` loop trips."""

    blocks: int
    threads: int = INT_THREADS
    iters: int = 256

    def __post_init__(self) -> None:
        if self.blocks < 1 or self.threads < 1 or self.iters < 1:
            raise ValueError("blocks, threads and iters must be >= 1")

    @property
    def kernel_name(self) -> str:
        return "int_mix"

    @property
    def ops_per_thread(self) -> int:
        """Integer instructions per thread: iters x INT_UNROLL x CHAINS, plus the CHAINS - 1 final multiply-adds."""
        return self.iters * INT_UNROLL * CHAINS + (CHAINS - 1)

    @property
    def ops(self) -> int:
        """Integer operations of the launch, exactly (one per thread instruction, as ncu counts them)."""
        return self.blocks * self.threads * self.ops_per_thread

    def with_iters(self, iters: int) -> IntConfig:
        return IntConfig(self.blocks, self.threads, iters)


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

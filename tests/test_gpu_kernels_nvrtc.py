"""The CUDA sources compile with NVRTC, and the PTX holds the instructions the byte and FLOP counts
assume. NVRTC compiles without a GPU: these tests run wherever the NVRTC library is found
(the ``nvidia-cuda-nvrtc`` and ``nvidia-cuda-runtime`` wheels, or ROOFLINE_NVRTC_DIR pointing at a
folder with ``lib/libnvrtc.so*`` and ``include/cuda_fp16.h``), and are skipped elsewhere."""

from __future__ import annotations

import ctypes
import os
import re
import site
from pathlib import Path

import pytest

from roofline.bench.gpu.kernels import (
    BANDWIDTH_SOURCE,
    CHAINS,
    COMPUTE_SOURCES,
    INT_SOURCE,
    INT_UNROLL,
    SHARED_SOURCES,
    SHARED_UNROLL,
    UNROLL,
)


def _nvrtc_dirs() -> list[Path]:
    roots = [Path(p) for p in (os.environ.get("ROOFLINE_NVRTC_DIR"),) if p]
    for sp in [*site.getsitepackages(), site.getusersitepackages(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]:
        if sp:
            roots += sorted(Path(sp).glob("nvidia/cu1*")) + sorted(Path(sp).glob("nvidia/cuda_nvrtc"))
    return [r for r in roots if list(r.glob("lib/libnvrtc.so*"))]


@pytest.fixture(scope="module")
def nvrtc():
    dirs = _nvrtc_dirs()
    if not dirs:
        pytest.skip("NVRTC not found (pip install nvidia-cuda-nvrtc nvidia-cuda-runtime, or set ROOFLINE_NVRTC_DIR)")
    root = dirs[0]
    lib_dir = root / "lib"
    for builtins in sorted(lib_dir.glob("libnvrtc-builtins.so.*")):  # NVRTC dlopens it by name
        if ".alt." not in builtins.name:
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(str(next(p for p in sorted(lib_dir.glob("libnvrtc.so*")) if ".alt." not in p.name)))
    include = next((d for d in [root / "include", *[r / "include" for r in dirs]] if (d / "cuda_fp16.h").exists()), None)

    def compile_ptx(src: str, arch: str) -> str:
        prog = ctypes.c_void_p()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None) == 0
        opts = [f"--gpu-architecture={arch}".encode()] + ([f"-I{include}".encode()] if include else [])
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert rc == 0, log.value.decode()
        lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
        ptx = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetPTX(prog, ptx)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return ptx.value.decode()

    n = ctypes.c_int()
    lib.nvrtcGetNumSupportedArchs(ctypes.byref(n))
    archs = (ctypes.c_int * n.value)()
    lib.nvrtcGetSupportedArchs(archs)
    compile_ptx.supported = set(archs)  # type: ignore[attr-defined]  # e.g. {75, 80, ..., 120}: NVRTC 13 dropped 70
    return compile_ptx


@pytest.mark.parametrize("arch", ["compute_75", "compute_90"])
def test_bandwidth_kernels_use_16_byte_accesses_with_the_right_cache_operators(nvrtc, arch):
    ptx = nvrtc(BANDWIDTH_SOURCE, arch)
    for name in ("bw_read_bcast", "bw_read_part", "bw_rmw_part"):
        assert f".entry {name}(" in ptx
    # broadcast: through L1, 8 loads unrolled (4 ran at half the L1 rate on an H100, with 64-bit indices)
    assert len(re.findall(r"ld\.global\.ca\.v4\.[su]32", ptx)) >= 8
    bcast = ptx[ptx.index(".entry bw_read_bcast("):ptx.index(".entry bw_read_part(")] if ptx.index(
        ".entry bw_read_bcast(") < ptx.index(".entry bw_read_part(") else ptx[ptx.index(".entry bw_read_bcast("):]
    assert ".param .u32 bw_read_bcast_param_1" in bcast  # the mask: 32-bit indices
    assert len(re.findall(r"ld\.global\.cg\.v4\.[su]32", ptx)) == 10  # partitioned read + rmw: 4 + 1 each
    assert len(re.findall(r"st\.global\.cg\.v4\.[su]32", ptx)) == 5
    assert not re.search(r"ld\.global(\.ca|\.cg)?\.(u32|s32|b32) ", ptx)  # no narrowed scalar loads


@pytest.mark.parametrize(("precision", "arch", "instruction"), [
    ("fp64", "compute_75", r"fma\.rn\.f64"),
    ("fp32", "compute_75", r"fma\.rn\.f32"),
    ("fp16", "compute_75", r"fma\.rn\.f16x2"),
    ("bf16", "compute_80", r"fma\.rn\.bf16x2"),
    ("fp32", "compute_90", r"fma\.rn\.f32"),
])
def test_fma_kernels_hold_exactly_the_counted_fmas(nvrtc, precision, arch, instruction):
    ptx = nvrtc(COMPUTE_SOURCES[precision], arch)
    # One loop trip holds UNROLL x CHAINS FMAs and the final sum CHAINS - 1: what ComputeConfig.fmas counts.
    assert len(re.findall(instruction, ptx)) == UNROLL * CHAINS + CHAINS - 1
    assert len(re.findall(r"\bfma\.", ptx)) == UNROLL * CHAINS + CHAINS - 1  # and no other FMA


#: Targets CI's NVRTC 13 compiles for (it dropped sm_70; NVRTC 12 compiles these kernels for sm_70 too, which
#: was checked by hand: a parameter that skips on CI would fail the run, see tests/conftest.py).
SMS = [75, 80, 90]


def _compile_for(nvrtc, source: str, sm: int) -> str:
    if sm not in nvrtc.supported:
        pytest.skip(f"this NVRTC cannot target sm_{sm} (it supports {sorted(nvrtc.supported)})")
    return nvrtc(source, f"compute_{sm}")


def _loop_body(ptx: str) -> str:
    """The PTX of the kernel's one timed loop: from its no-unroll pragma to the branch back."""
    start = ptx.index('.pragma "nounroll"')
    return ptx[start: ptx.index("bra", start)]


@pytest.mark.parametrize("sm", SMS)
@pytest.mark.parametrize("width", sorted(SHARED_UNROLL))
def test_shared_kernels_load_conflict_free_rows_exactly_as_counted(nvrtc, sm, width):
    ptx = _compile_for(nvrtc, SHARED_SOURCES[width], sm)
    name = {4: "shared_ld32", 16: "shared_ld128"}[width]
    assert f".entry {name}(" in ptx
    body = _loop_body(ptx)
    op = "ld.volatile.shared.u32" if width == 4 else "ld.volatile.shared.v4.u32"
    # SharedConfig counts SHARED_UNROLL[width] loads per trip, rows of 32 lanes x width apart; nothing else loads.
    offsets = [int(o) for o in re.findall(re.escape(op) + r" [^\[]*\[%r\d+\+(\d+)\]", body)]
    assert offsets == [u * 32 * width for u in range(SHARED_UNROLL[width])]
    assert len(re.findall(r"\bld\.", body)) == SHARED_UNROLL[width]
    assert not re.search(r"\bld\.(volatile\.)?shared", ptx[ptx.index("bra", ptx.index('.pragma "nounroll"')):])
    # The array: two halves of SHARED_UNROLL rows x 32 lanes x width bytes (4 KiB and 8 KiB).
    words = 2 * SHARED_UNROLL[width] * 32 * width // 4
    assert re.search(rf"\.shared \.align 4 \.b8 \w+\[{4 * words}\]", ptx)


@pytest.mark.parametrize("sm", SMS)
def test_int32_kernel_holds_exactly_the_counted_imad_and_iadd(nvrtc, sm):
    ptx = _compile_for(nvrtc, INT_SOURCE, sm)
    body = _loop_body(ptx)
    half = INT_UNROLL * CHAINS // 2
    # One trip: INT_UNROLL / 2 x CHAINS multiply-adds (x * x + x) and as many adds (x + c), plus the loop counter's add.
    assert len(re.findall(r"\bmad\.lo\.[su]32", body)) == half
    assert len(re.findall(r"\badd\.[su]32", body)) == half + 1
    assert not re.search(r"\b(mul|sub|shl|shr|and|or|xor)\.", body)  # no other integer work in the loop
    # After the loop: the CHAINS - 1 multiply-adds that keep every chain live (IntConfig.ops_per_thread).
    tail = ptx[ptx.index("bra", ptx.index('.pragma "nounroll"')):]
    assert len(re.findall(r"\bmad\.lo\.[su]32", tail)) == CHAINS - 1


@pytest.mark.parametrize(("precision", "arch"), [("fp16", "compute_75"), ("bf16", "compute_80")])
def test_paired_kernels_take_their_constants_as_the_paired_type(nvrtc, precision, arch):
    """b and c arrive as one 4-byte __half2 / __nv_bfloat162 each, not as float converted in the kernel: only then did
    ptxas issue half of the HFMA2s on the tensor pipe (HFMA2.MMA), 1.86x the rate on an H200
    (benchmarks/results/h200-2026-11-29/call3/fp16)."""
    ptx = nvrtc(COMPUTE_SOURCES[precision], arch)
    entry = ptx[ptx.index(f".entry fma_{precision}("):]
    params = re.findall(r"\.param ([^,)]*)", entry[: entry.index(")")])
    assert len(params) == 4
    assert all(re.fullmatch(rf"\.align 4 \.b8 fma_{precision}_param_{i}\[4\]", params[i].strip()) for i in (1, 2))
    assert not re.search(r"\.param \.f32", entry[: entry.index(")")])

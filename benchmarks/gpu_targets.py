"""Kernels of known work for validating `roofline profile` on a GPU (run by validate_profile_gpu.py).

Each target warms up, then runs the measured work once inside the NVTX range
``target`` (so ncu can keep only it: ``--nvtx-include target/``), and prints one
JSON line with the analytic counts:

    python benchmarks/gpu_targets.py gemm --dtype fp16 --m 4096 --n 4096 --k 4096
    python benchmarks/gpu_targets.py hfma2 --threads 1048576 --iters 256
    python benchmarks/gpu_targets.py hfma  --threads 1048576 --iters 256
    python benchmarks/gpu_targets.py saxpy --n 268435456
    python benchmarks/gpu_targets.py --no-launch saxpy --n 268435456   # the TARGET line only, no GPU

GEMMs use PyTorch (cuBLAS); the FP16 FMA kernels are compiled at run time with CuPy
(NVRTC) when installed, else with torch.utils.cpp_extension (needs nvcc).
"""

from __future__ import annotations

import argparse
import json
import sys

HFMA_SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_chain(__half2* out, __half2 a, __half2 b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 acc = out[i];
    for (int k = 0; k < iters; ++k) acc = __hfma2(a, acc, b);   // 2 lanes x (mul + add) = 4 FLOPs
    out[i] = acc;
}
extern "C" __global__ void hfma_chain(__half* out, __half a, __half b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half acc = out[i];
    for (int k = 0; k < iters; ++k) acc = __hfma(a, acc, b);    // mul + add = 2 FLOPs
    out[i] = acc;
}
"""


def _nvtx(name: str):  # type: ignore[no-untyped-def]
    import torch

    return torch.cuda.nvtx.range(name)


HFMA_BLOCK = 256


def analytic(what: str, **size: int) -> dict:
    """The analytic counts of a target (its TARGET line), without launching anything.

    gemm: ``flops`` = 2MNK; saxpy: ``flops`` = 2N, ``dram_bytes`` = 12N (read x and y, write y, 4 B each);
    hfma2 / hfma: ``flops`` = threads x iters x 4 (a half2 FMA: 2 lanes x mul + add) or x 2 (scalar),
    threads rounded down to whole blocks of :data:`HFMA_BLOCK`, ``hfma_inst`` = threads x iters thread
    instructions."""
    if what.startswith("gemm_"):
        m, n, k = size["m"], size["n"], size["k"]
        return {"target": what, "m": m, "n": n, "k": k, "flops": 2 * m * n * k}
    if what == "saxpy":
        n = size["n"]
        return {"target": "saxpy", "n": n, "flops": 2 * n, "dram_bytes": 12 * n}
    if what in ("hfma2", "hfma"):
        threads, iters = size["threads"] // HFMA_BLOCK * HFMA_BLOCK, size["iters"]
        per_thread = (4 if what == "hfma2" else 2) * iters
        return {"target": what, "threads": threads, "iters": iters, "flops": per_thread * threads,
                "hfma_inst": threads * iters}
    raise ValueError(f"unknown target {what!r}")


def gemm(dtype: str, m: int, n: int, k: int) -> dict:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    torch_dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=torch_dtype)
    b = torch.randn(k, n, device="cuda", dtype=torch_dtype)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    with _nvtx("target"):
        a @ b
    torch.cuda.synchronize()
    return analytic(f"gemm_{dtype}", m=m, n=n, k=k)


def _compile_hfma():  # type: ignore[no-untyped-def]
    try:
        import cupy as cp

        module = cp.RawModule(code=HFMA_SOURCE, options=("--std=c++14",))
        return "cupy", module
    except ImportError:
        return "none", None


def hfma(kind: str, threads: int, iters: int) -> dict:
    import numpy as np

    backend, module = _compile_hfma()
    if module is None:
        raise SystemExit("hfma targets need CuPy (pip install cupy-cuda12x) to compile the kernel")
    import cupy as cp

    block = HFMA_BLOCK
    grid = threads // block
    if kind == "hfma2":
        out = cp.zeros(threads * 2, dtype=cp.float16)
        fn = module.get_function("hfma2_chain")
        a = np.array([1.0, 1.0], dtype=np.float16).view(np.uint32)[0]
        b = np.array([1e-3, 1e-3], dtype=np.float16).view(np.uint32)[0]
        args = (out, cp.uint32(a), cp.uint32(b), cp.int32(iters))
    else:
        out = cp.zeros(threads, dtype=cp.float16)
        fn = module.get_function("hfma_chain")
        args = (out, cp.float16(1.0), cp.float16(1e-3), cp.int32(iters))
    fn((grid,), (block,), args)
    cp.cuda.Device().synchronize()
    with _nvtx("target"):
        fn((grid,), (block,), args)
    cp.cuda.Device().synchronize()
    return {**analytic(kind, threads=threads, iters=iters), "compiler": backend}


def saxpy(n: int) -> dict:
    import torch

    x = torch.ones(n, device="cuda")
    y = torch.ones(n, device="cuda")
    y.add_(x, alpha=2.0)
    torch.cuda.synchronize()
    with _nvtx("target"):
        y.add_(x, alpha=2.0)
    torch.cuda.synchronize()
    return analytic("saxpy", n=n)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-launch", action="store_true", help="print the TARGET line (analytic counts) and exit: no GPU")
    sub = p.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("--dtype", choices=("fp32", "tf32", "fp16", "bf16"), required=True)
    for d in ("m", "n", "k"):
        g.add_argument(f"--{d}", type=int, default=4096)
    for kind in ("hfma2", "hfma"):
        h = sub.add_parser(kind)
        h.add_argument("--threads", type=int, default=1 << 20)
        h.add_argument("--iters", type=int, default=256)
    s = sub.add_parser("saxpy")
    s.add_argument("--n", type=int, default=1 << 28)
    a = p.parse_args(argv)
    if a.no_launch:
        size = {k: v for k, v in vars(a).items() if k in ("m", "n", "k", "threads", "iters")}
        result = analytic(f"gemm_{a.dtype}" if a.what == "gemm" else a.what, **size)
    elif a.what == "gemm":
        result = gemm(a.dtype, a.m, a.n, a.k)
    elif a.what in ("hfma2", "hfma"):
        result = hfma(a.what, a.threads, a.iters)
    else:
        result = saxpy(a.n)
    print("TARGET " + json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""SAXPY, y = a*x + y: the bandwidth yardstick of a roofline.

Per element it reads x and y and writes y (3 x 4 bytes = 12 B) and does one
multiply-add (2 FLOPs), so its arithmetic intensity is 1/6 FLOP/B at every level
it streams through, and its effective bandwidth is 12 * N / time.

    python examples/saxpy.py                         # numpy on the CPU
    python examples/saxpy.py --backend torch --device cuda --n 268435456
    python examples/saxpy.py --backend cupy --n 268435456
    roofline profile -o saxpy -- python examples/saxpy.py --backend torch --device cuda

It prints N, the best time of ``--repeat`` runs and the effective bandwidth.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

BYTES_PER_ELEMENT = 12
FLOPS_PER_ELEMENT = 2


def _numpy(n: int, a: float) -> tuple[Any, Any, Any]:
    import numpy as np

    x = np.ones(n, dtype=np.float32)
    y = np.full(n, 2.0, dtype=np.float32)

    def step() -> None:
        # y += a * x without a temporary the size of x: scale in blocks
        block = 1 << 20
        for i in range(0, n, block):
            y[i:i + block] += np.float32(a) * x[i:i + block]

    return step, (lambda: None), y


def _torch(n: int, a: float, device: str) -> tuple[Any, Any, Any]:
    import torch

    x = torch.ones(n, dtype=torch.float32, device=device)
    y = torch.full((n,), 2.0, dtype=torch.float32, device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def step() -> None:
        y.add_(x, alpha=a)  # one fused kernel: y = y + a * x

    return step, sync, y


def _cupy(n: int, a: float) -> tuple[Any, Any, Any]:
    import cupy as cp

    x = cp.ones(n, dtype=cp.float32)
    y = cp.full(n, 2.0, dtype=cp.float32)
    kernel = cp.ElementwiseKernel("float32 a, float32 x", "float32 y", "y = a * x + y", "saxpy")

    def step() -> None:
        kernel(cp.float32(a), x, y)

    return step, cp.cuda.Device().synchronize, y


def run(n: int, backend: str = "numpy", device: str = "cpu", repeat: int = 5, a: float = 2.0) -> dict[str, float]:
    """Run SAXPY ``repeat`` times; returns n, best time (s), bytes, FLOPs and bandwidth (B/s)."""
    if backend == "numpy":
        step, sync, _ = _numpy(n, a)
    elif backend == "torch":
        step, sync, _ = _torch(n, a, device)
    elif backend == "cupy":
        step, sync, _ = _cupy(n, a)
    else:
        raise ValueError(f"unknown backend {backend!r}")
    best = float("inf")
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        step()
        sync()
        best = min(best, time.perf_counter() - t0)
    nbytes, flops = BYTES_PER_ELEMENT * n, FLOPS_PER_ELEMENT * n
    return {"n": n, "time_s": best, "bytes": nbytes, "flops": flops, "bandwidth": nbytes / best}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="SAXPY effective bandwidth (12 B and 2 FLOPs per element)")
    p.add_argument("--n", type=int, default=1 << 24, help="elements")
    p.add_argument("--backend", choices=("numpy", "torch", "cupy"), default="numpy")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    r = run(a.n, a.backend, a.device, a.repeat)
    print(f"saxpy n={r['n']} best {r['time_s'] * 1e3:.3f} ms  {r['bandwidth'] / 1e9:.1f} GB/s "
          f"({BYTES_PER_ELEMENT} B and {FLOPS_PER_ELEMENT} FLOP per element)")


if __name__ == "__main__":
    main()

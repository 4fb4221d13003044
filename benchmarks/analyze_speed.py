"""How fast is analyze() on a large profile? Prints seconds and launches per second (no pass/fail).

Run: PYTHONPATH=src python benchmarks/analyze_speed.py [launches]
Compares the roofline columns (by='launch') with the cost of merely copying the table,
and shows what aggregation (by='name', in roofline.kernels.aggregate) adds.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from roofline.analysis import analyze
from roofline.kernels import empty_frame, validate
from roofline.machine import Machine


def table(n: int, kernels: int = 500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    f = empty_frame(n)
    f["launch_id"] = pd.array(np.arange(n), dtype="Int64")
    f["kernel_name"] = pd.array([f"void k{i}<float>(float*)" for i in rng.integers(0, kernels, n)], dtype="string")
    f["phase"] = pd.array(np.array(["forward", "backward", "optimizer"])[rng.integers(0, 3, n)], dtype="string")
    f["time_s"] = rng.uniform(1e-6, 1e-3, n)
    f["sm_clock_hz"] = rng.uniform(1.2e9, 1.5e9, n)
    for c in ("fp64_flops", "fp16_flops", "tensor_flops"):
        f[c] = 0.0
    f["fp32_flops"] = rng.uniform(0, 1e10, n)
    f["flops"] = f["fp32_flops"]
    for c in ("l1_bytes", "l2_bytes", "dram_bytes"):
        f[c] = rng.uniform(1e3, 1e10, n)
    return validate(f)


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    m = Machine(name="V100", source="measured", sm_clock_hz=1.38e9,
                memory={"l1": 14336e9, "l2": 2996.77e9, "dram": 828.758e9},
                compute={"fp64": 7068.86e9, "fp32": 14137.72e9, "tensor_fp16": 113e12})
    t = table(n)
    copy = timed(lambda: t.copy(deep=True))
    launch = timed(lambda: analyze(t, m, by="launch"))
    name = timed(lambda: analyze(t, m, by="name"), repeat=1)
    print(f"{n} launches")
    print(f"  copy of the table      {copy:8.3f} s")
    print(f"  analyze by='launch'    {launch:8.3f} s  ({n / launch:,.0f} launches/s, {launch / copy:.1f}x a copy)")
    print(f"  analyze by='name'      {name:8.3f} s  ({n / name:,.0f} launches/s, aggregation included)")


if __name__ == "__main__":
    main()

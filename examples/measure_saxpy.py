"""Put Python code on the CPU's roofline: saxpy (y = a*x + y) timed with roofline.measured.

Per element saxpy reads x and y and writes y (12 B in float32) and does one multiply-add (2 FLOPs).
Two versions are measured into one kernel table:

- numpy, ``y += a * x``: one thread, and a temporary array for ``a * x`` (numpy's real traffic is
  about 20 B per element), so the point lands well under the DRAM roof;
- numba, a parallel loop: no temporary, all cores, close to the DRAM roof.

    PYTHONPATH=src python examples/measure_saxpy.py                 # measures the CPU (quick) first
    PYTHONPATH=src python examples/measure_saxpy.py --machine m.json  # or uses a machine file
"""

from __future__ import annotations

import argparse

import numpy as np

import roofline
from roofline.units import format_si


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26, help="elements per array (default 64 Mi: 256 MiB each)")
    ap.add_argument("--machine", help="machine file (ours, ERT roofline.json/sum); default: measure the CPU")
    args = ap.parse_args()

    if args.machine:
        machine = roofline.load_machine(args.machine)
    else:
        from roofline.bench.cpu.measure import measure_cpu

        machine = measure_cpu(mode="quick").machine
    x = np.ones(args.n, dtype=np.float32)
    y = np.ones(args.n, dtype=np.float32)
    counts = dict(flops=lambda x, y, a: 2 * x.size, bytes=lambda x, y, a: 12 * x.size, precision="fp32", repeats=5)

    with roofline.collecting() as runs:
        @roofline.measured("saxpy numpy", **counts)
        def saxpy_numpy(x: np.ndarray, y: np.ndarray, a: np.float32) -> None:
            y += a * x

        saxpy_numpy(x, y, np.float32(2.0))

        import numba

        @numba.njit(parallel=True)
        def saxpy_loop(x: np.ndarray, y: np.ndarray, a: np.float32) -> None:  # pragma: no cover - compiled
            for i in numba.prange(x.size):
                y[i] = a * x[i] + y[i]

        roofline.measured("saxpy numba", **counts)(saxpy_loop)(x, y, np.float32(2.0))

    result = roofline.analyze(runs.table(), machine=machine)
    print(f"machine: {machine.name}, DRAM {format_si(machine.memory['dram'], 'B/s')}")
    for t, (_, row) in zip(runs, result.frame.set_index("kernel_name").loc[[t.name for t in runs]].iterrows()):
        print(f"{t.name:12s} {format_si(t.time_s, 's'):>9s}  {format_si(t.bandwidth, 'B/s'):>10s} "
              f"({t.bandwidth / machine.memory['dram']:.0%} of DRAM)  {format_si(t.flop_rate, 'FLOP/s'):>13s}  "
              f"bound: {row['bound']}")


if __name__ == "__main__":
    main()

"""Characterize this CPU (default and thorough modes) and record the results.

Writes, per mode, to benchmarks/results/:
  cpu_<host>_<mode>.json  the Measurement: machine (our JSON), sweeps, checks, theoretical ceilings, notes
  cpu_<host>_<mode>.png   the working-set sweep with cache sizes and named plateaus
  cpu_<host>.txt          a summary of every mode: CPU, cores, caches, versions, command, date, ceilings,
                          sanity ratios and run times (also for quick mode, the CI setting)

Usage: PYTHONPATH=src python benchmarks/cpu_machine.py [--modes quick,default,thorough] [--force]
Timings are only meaningful on an otherwise idle machine: the script prints the load average, the
threads' share of time on a core, each ceiling's fastest / slowest repeat, and the warning
`roofline machine` would print.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from roofline.bench.cpu.measure import measure_cpu
from roofline.bench.reliability import assess, usable_cores
from roofline.bench.sweep import plot_sweep
from roofline.units import format_si

RESULTS = Path(__file__).parent / "results"


def host_tag() -> str:
    name = socket.gethostname().split(".")[0] or "host"
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name)[:40]


def measurement_dict(m) -> dict:
    return {
        "machine": m.machine.to_dict(),
        "theoretical": m.theoretical.to_dict() if m.theoretical else None,
        "sweeps": {k: v.to_dict(orient="list") for k, v in m.sweeps.items()},
        "checks": dict(m.checks), "cache_sizes": dict(m.cache_sizes), "clock_hz": dict(m.clock_hz),
        "notes": list(m.notes), "elapsed_s": m.elapsed_s,
    }


def summary(mode: str, m, load: tuple[float, float, float]) -> list[str]:
    mach = m.machine
    meta = mach.metadata
    lines = [f"== mode {mode}: {m.elapsed_s:.1f} s (load average before: {load[0]:.2f})"]
    for k, v in mach.compute.items():
        lines.append(f"  {k:5s} {format_si(v, 'FLOP/s'):>14s}  spread {mach.spread.get(k, float('nan')):.3f}")
    for k, v in mach.memory.items():
        p = meta["plateaus"].get(k, {})
        lines.append(f"  {k:5s} {format_si(v, 'B/s'):>14s}  spread {mach.spread.get(k, float('nan')):.3f}"
                     f"  plateau {p.get('first_size', 0) / 1024:.0f} KiB .. {p.get('last_size', 0) / 1024:.0f} KiB")
    lines.append(f"  FP64 / numpy matmul ({format_si(meta['numpy_matmul_flops'], 'FLOP/s')}): "
                 f"{m.checks['fp64_vs_numpy_matmul']:.2f}")
    lines.append(f"  DRAM / numpy copy ({format_si(meta['numpy_copy_bandwidth'], 'B/s')}): "
                 f"{m.checks['dram_vs_numpy_copy']:.2f}")
    by_width = ", ".join(f"{k}={format_si(v, 'FLOP/s')}" for k, v in meta["flops_by_width"].items())
    lines.append(f"  vector width of the fastest FP64 FMA kernel: {meta['vector_bits']} bit; by width: {by_width}")
    if m.theoretical:
        th = m.theoretical
        lines.append(f"  theoretical FP64 {format_si(th.compute['fp64'], 'FLOP/s')} "
                     f"(measured/theoretical {mach.compute['fp64'] / th.compute['fp64']:.2f}); "
                     f"assumed: {json.dumps(th.metadata.get('assumed'))}")
    lines.append(f"  threads on a core {meta['cpu_share']:.0%} of the time; fastest / slowest repeat: "
                 + ", ".join(f"{k} {r:.2f}" for k, r in meta["repeat_ratio"].items()))
    verdict = assess(meta["repeat_ratio"], load[0] / usable_cores(), meta["cpu_share"])
    if verdict.warning:
        lines.append(f"  warning: {verdict.warning}")
    lines += [f"  note: {n}" for n in m.notes]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="quick,default,thorough")
    ap.add_argument("--force", action="store_true", help="overwrite existing results")
    args = ap.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    tag = f"cpu_{host_tag()}"
    import numba
    import numpy

    head = None
    body: list[str] = []
    for mode in args.modes.split(","):
        load = os.getloadavg()
        t0 = time.perf_counter()
        m = measure_cpu(mode=mode, progress=lambda what, f: print(f"\r[{mode}] {f:4.0%} {what:60s}", end="",
                                                                   file=sys.stderr))
        print(f"\r[{mode}] done in {time.perf_counter() - t0:.1f} s" + " " * 60, file=sys.stderr)
        meta = m.machine.metadata
        if head is None:
            head = [
                f"CPU: {meta['cpu']} ({meta['vendor']}), {meta['threads']} threads on CPUs {meta['cpus']}, "
                f"{meta['physical_cores']} physical cores",
                f"caches per instance: {', '.join(f'{k}={v // 1024} KiB' for k, v in meta['cache_sizes_per_instance'].items())}; "
                f"for all threads: {', '.join(f'{k}={v // 1024} KiB' for k, v in meta['sweep_cache_sizes'].items())}",
                f"numba {numba.__version__}, numpy {numpy.__version__}, python {platform.python_version()}, "
                f"{platform.platform()}",
                f"command: PYTHONPATH=src {Path(sys.executable).name} benchmarks/cpu_machine.py "
                f"--modes {args.modes}",
                f"date: {datetime.now(timezone.utc).isoformat(timespec='seconds')}",
                "",
            ]
        body += summary(mode, m, load)
        if mode == "quick":
            continue  # the CI setting: timings and figures in the summary only
        out = RESULTS / f"{tag}_{mode}.json"
        if out.exists() and not args.force:
            raise SystemExit(f"{out} exists; pass --force to overwrite")
        out.write_text(json.dumps(measurement_dict(m), indent=1) + "\n")
        fig = plot_sweep(m.sweeps, cache_sizes=meta["sweep_cache_sizes"], plateaus=meta["plateaus"],
                         title=f"{meta['cpu']}, {meta['threads']} threads: read sweep ({mode})")
        fig.savefig(RESULTS / f"{tag}_{mode}.png", dpi=120)
    text = "\n".join((head or []) + body) + "\n"
    summary_path = RESULTS / f"{tag}.txt"
    if summary_path.exists() and not args.force:
        raise SystemExit(f"{summary_path} exists; pass --force to overwrite")
    summary_path.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the paper's 12-file DeepCAM set read and analyzed in-process, against the
authors'-style pandas processing of the same files.

Target (issue 14): ``api.analyze(api.read(files, fp16="paper"), machine, by="name")`` on the
12 one-metric ncu 2020 details pages of ``roofline.api.example_files()`` takes at most 30 ms.

Timed in one process, after a warm-up, the best of ``--repeat`` runs, the variants alternating
within each repeat (so a burst of load from elsewhere hits them all alike), wall
(``time.perf_counter``) and CPU (``time.process_time``) each:

* roofline: ``api.analyze(api.read(files, fp16="paper"), machine, by="name")``, the whole in-process
  use (read, merge, count, aggregate, analyze against the machine's ceilings);
* baseline: the Hierarchical Roofline authors' way of processing these files (their
  ``mlperf-deepcam/postprocess-PT.ipynb``, cyanguwa/DeepLearningProfiling, written here anew):
  per file, find the header line, ``pandas.read_csv`` the rest, sum the metric per kernel name;
  join the twelve per-kernel columns; time = sum(cycles) / (sum(clock) / launches); CC FLOPs,
  TC FLOPs = 512 x tensor instructions, arithmetic intensities and GFLOP/s per kernel;
* read: ``api.read(files, fp16="paper")`` alone (the kernel table, no analysis);
* readers: the twelve files into RawProfiles, ``split_runs`` and ``merge_profiles`` (the part the
  readers own: 15 ms of the 30 ms budget).

Both must give the same per-kernel answer, or the benchmark fails: FLOPs (CC + TC) and bytes
at every level equal within 1e-9, time within 0.1 % (the authors divide the summed cycles by the
mean clock, roofline sums each launch's cycles / clock: tests/test_deepcam_authors.py).

    python benchmarks/bench_small_files.py [--repeat 50]

Prints the results and writes benchmarks/results/bench_small_files.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow

import roofline
from roofline import api
from roofline.readers.dispatch import read_one
from roofline.readers.ncu.combine import merge_profiles, split_runs

from bench_env import cpu_model, write_report  # noqa: E402  (a sibling script: benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent
TARGET_MS = 30.0
READERS_TARGET_MS = 15.0
SASS = "sm__sass_thread_inst_executed_op_"


def authors_style(files: list[Path]) -> pd.DataFrame:
    """The authors' per-kernel table: one metric per file, summed per kernel name, then joined."""
    table: pd.DataFrame | None = None
    for path in files:
        with path.open() as fh:
            skip = next(i for i, line in enumerate(fh) if "Host Name" in line)  # the header line
        page = pd.read_csv(path, skiprows=skip)
        metric = page["Metric Name"].iloc[0]
        per_kernel = page.groupby("Kernel Name").agg(value=("Metric Value", "sum"), count=("ID", "count"))
        column = per_kernel["value"].rename(metric)
        table = per_kernel[["count"]].join(column) if table is None else table.join(column, how="inner")
    assert table is not None
    out = pd.DataFrame(index=table.index)
    out["count"] = table["count"]
    out["time"] = table["sm__cycles_elapsed.avg"] / (table["sm__cycles_elapsed.avg.per_second"] / table["count"])
    out["cc_flops"] = (table[SASS + "fadd_pred_on.sum"] + table[SASS + "fmul_pred_on.sum"]
                       + 2 * table[SASS + "ffma_pred_on.sum"] + table[SASS + "hadd_pred_on.sum"]
                       + table[SASS + "hmul_pred_on.sum"] + 2 * table[SASS + "hfma_pred_on.sum"])
    out["tc_flops"] = 512 * table["sm__inst_executed_pipe_tensor.sum"]
    out["flops"] = out["cc_flops"] + out["tc_flops"]
    out["dram_bytes"] = table["dram__bytes.sum"]
    out["l2_bytes"] = table["lts__t_bytes.sum"]
    out["l1_bytes"] = table["l1tex__t_bytes.sum"]
    for level in ("dram", "l2", "l1"):
        out[f"ai_{level}"] = out["flops"] / out[f"{level}_bytes"]
    out["gflops"] = out["flops"] / out["time"] / 2**30
    return out


def roofline_analysis(files: list[Path], machine: Path):  # type: ignore[no-untyped-def]
    return api.analyze(api.read(files, fp16="paper"), machine, by="name")


def readers(files: list[Path]) -> list:  # type: ignore[type-arg]
    return [merge_profiles(run) for run in split_runs([read_one(f) for f in files])]


def check_same_answer(analysis, baseline: pd.DataFrame) -> int:  # type: ignore[no-untyped-def]
    """Raises SystemExit when roofline and the baseline disagree on a kernel; returns the kernels compared."""
    ours = analysis.frame.set_index("kernel_name")
    problems = []
    if set(ours.index) != set(baseline.index):
        problems.append(f"kernels differ: {sorted(set(ours.index) ^ set(baseline.index))[:3]}")
    for name, theirs in baseline.iterrows():
        if name not in ours.index:
            continue
        row = ours.loc[name]
        pairs = [("launches", row["launches"], theirs["count"], 0.0),
                 ("FLOPs (CC + TC)", row["fp32_flops"] + row["fp16_flops"] + row["tensor_flops"], theirs["flops"],
                  1e-9),
                 ("tensor FLOPs", row["tensor_flops"], theirs["tc_flops"], 1e-9),
                 ("DRAM bytes", row["dram_bytes"], theirs["dram_bytes"], 1e-9),
                 ("L2 bytes", row["l2_bytes"], theirs["l2_bytes"], 1e-9),
                 ("L1 bytes", row["l1_bytes"], theirs["l1_bytes"], 1e-9),
                 ("time", row["time_s"], theirs["time"], 1e-3)]
        for what, a, b, rel in pairs:
            if not np.isclose(float(a), float(b), rtol=rel, atol=0):
                problems.append(f"{name[:60]}: {what} {a!r} (roofline) vs {b!r} (baseline)")
    if problems:
        raise SystemExit("roofline and the baseline disagree:\n  " + "\n  ".join(problems))
    return len(baseline)


def best_of(variants: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall and CPU seconds of each variant over ``repeat`` rounds, the variants alternating."""
    best = {name: (float("inf"), float("inf")) for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_small_files.txt")
    args = parser.parse_args(argv)
    files, machine = api.example_files()
    files = sorted(files)
    variants: dict[str, Callable[[], object]] = {
        "roofline": lambda: roofline_analysis(files, machine),
        "baseline": lambda: authors_style(files),
        "read": lambda: api.read(files, fp16="paper"),
        "readers": lambda: readers(files),
    }
    kernels = check_same_answer(roofline_analysis(files, machine), authors_style(files))
    for run in variants.values():  # warm-up: imports, caches, first allocations
        run()
    best = best_of(variants, args.repeat)
    ms = {name: (wall * 1e3, cpu * 1e3) for name, (wall, cpu) in best.items()}
    now = dt.datetime.now().isoformat(timespec="seconds")
    lines = [
        f"# bench_small_files: the paper's 12-file DeepCAM set, in-process ({now})",
        f"# machine: {os.cpu_count()} CPUs, {cpu_model()}; {platform.system()} {platform.release()}; "
        f"load average {os.getloadavg()[0]:.2f} at the start (other work on the machine slows every variant)",
        f"# python {platform.python_version()}, pandas {pd.__version__}, pyarrow {pyarrow.__version__}, "
        f"numpy {np.__version__}, roofline {roofline.__version__}",
        f"# {len(files)} files ({sum(f.stat().st_size for f in files) / 1e3:.0f} KB), {kernels} kernels; "
        f"best of {args.repeat} alternated runs after a warm-up; same per-kernel FLOPs, bytes and time (checked)",
        "",
        f"{'variant':<10} {'wall ms':>9} {'cpu ms':>9}",
    ]
    for name, (wall, cpu) in ms.items():
        lines.append(f"{name:<10} {wall:9.2f} {cpu:9.2f}")
    r_wall, r_cpu = ms["roofline"]
    b_wall, b_cpu = ms["baseline"]
    lines += [
        "",
        f"roofline / baseline: {r_wall / b_wall:.2f}x wall, {r_cpu / b_cpu:.2f}x CPU",
        f"roofline vs the {TARGET_MS:.0f} ms target: {r_wall:.1f} ms wall, {r_cpu:.1f} ms CPU "
        f"({'met' if max(r_wall, r_cpu) <= TARGET_MS else 'MISSED'})",
        f"readers (12 RawProfiles + split_runs + merge_profiles) vs their {READERS_TARGET_MS:.0f} ms: "
        f"{ms['readers'][0]:.1f} ms wall, {ms['readers'][1]:.1f} ms CPU "
        f"({'met' if max(ms['readers']) <= READERS_TARGET_MS else 'MISSED'})",
    ]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

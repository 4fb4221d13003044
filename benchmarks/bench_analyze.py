"""Benchmark: `roofline analyze` of a 1,000,000-launch ncu raw-page CSV vs plain ``pandas.read_csv``.

Targets (issue 14): the whole ``roofline analyze FILE`` command (read, count, aggregate, analyze,
guidance, the printed tables) takes at most 1.0x the time of a bare ``pandas.read_csv`` of the
same file, with peak memory under 1 GB. Also timed, to show where the time goes and to pick the
parser by measurement: a bare ``pyarrow.csv.read_csv`` of the same file (all columns, both
threads), and ``read_profile`` + ``aggregate`` alone. Each variant runs in its own child process
(fresh interpreter, so peak RSS is that variant's own); the time is measured inside the child
around the step only (imports excluded, after a warm-up on a small file); variants alternate;
the best of ``--repeat`` runs is kept.

    PYTHONPATH=src python benchmarks/bench_analyze.py [--launches 1000000] [--repeat 3]

Writes benchmarks/results/bench_analyze.txt.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bench_env import cpu_model, write_report  # noqa: E402  (a sibling script: benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent
ID_COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC"]
SASS = [f"sm__sass_thread_inst_executed_op_{p}{o}_pred_on.sum" for p in "dfh" for o in ("add", "mul", "fma")]
METRICS = {  # name -> unit printed in the units row
    "dram__bytes.sum": "byte", "gpu__time_duration.sum": "usecond", "l1tex__t_bytes.sum": "Kbyte",
    "lts__t_bytes.sum": "byte", "sm__cycles_elapsed.avg": "cycle", "sm__cycles_elapsed.avg.per_second": "cycle/nsecond",
    "sm__inst_executed_pipe_tensor.sum": "inst", **{s: "inst" for s in SASS},
    "launch__waves_per_multiprocessor": "", "sm__throughput.avg.pct_of_peak_sustained_elapsed": "%",
}


def kernel_names(count: int, rng: np.random.Generator) -> list[str]:
    templates = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::{op}_kernel_cuda(at::TensorIteratorBase&)::{{lambda()#1}}, at::detail::Array<char*, {n}> >(int, {op}, at::detail::Array<char*, {n}>)",
        "ampere_sgemm_{m}x{n}_{op}",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_{m}x{n}_{op}>(Params)",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<{m}, {n}, 128, 4, false, false, cutlass::half_t>, {op}>(Flash_fwd_params)",
    ]
    ops = ["add", "mul", "fill", "copy", "relu", "gelu", "softmax", "layer_norm", "nn", "tn", "nt"]
    names = set()
    while len(names) < count:
        t = templates[int(rng.integers(len(templates)))]
        names.add(t.format(op=ops[int(rng.integers(len(ops)))], n=int(rng.integers(1, 9)),
                           m=int(rng.choice([32, 64, 128, 256])) + len(names)))
    return sorted(names)


def generate(path: Path, launches: int, distinct: int = 300, seed: int = 0) -> None:
    """Write a realistic raw-page ncu CSV: program output, ==PROF== lines, header, units row, quoted values."""
    rng = np.random.default_rng(seed)
    names = np.array(kernel_names(distinct, rng), dtype=object)
    which = rng.integers(distinct, size=launches)
    cycles = rng.uniform(2e3, 5e7, launches)
    clock = rng.uniform(1.2, 1.41, launches)
    data: dict[str, object] = {
        "ID": np.arange(launches), "Process ID": 4242, "Process Name": "python3.11", "Host Name": "127.0.0.1",
        "Kernel Name": names[which], "Context": 1, "Stream": 7, "Block Size": "(256, 1, 1)",
        "Grid Size": "(1024, 1, 1)", "Device": 0, "CC": "8.0",
    }
    dram = rng.integers(0, 10**10, launches)
    data["dram__bytes.sum"] = [f"{v:,}" for v in dram.tolist()]  # thousands separators
    data["gpu__time_duration.sum"] = np.round(cycles / clock / 1e3, 2)
    data["l1tex__t_bytes.sum"] = np.round(dram * 2.5 / 1e3, 2)
    data["lts__t_bytes.sum"] = dram * 2
    data["sm__cycles_elapsed.avg"] = np.round(cycles, 2)
    data["sm__cycles_elapsed.avg.per_second"] = np.round(clock, 2)
    data["sm__inst_executed_pipe_tensor.sum"] = 0
    for s in SASS:
        data[s] = rng.integers(0, 10**9, launches)
    data["launch__waves_per_multiprocessor"] = np.round(rng.uniform(0, 20, launches), 2)
    data["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = np.round(rng.uniform(0, 100, launches), 2)
    frame = pd.DataFrame(data)
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("Loading model...\nstep 1 loss=0.93\n==PROF== Connected to process 4242 (/usr/bin/python3.11)\n")
        fh.write("==PROF== Disconnected from process 4242\n")
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(list(frame.columns))
        writer.writerow([""] * len(ID_COLUMNS) + [METRICS[c] for c in frame.columns[len(ID_COLUMNS):]])
        frame.to_csv(fh, header=False, index=False, quoting=csv.QUOTE_ALL, lineterminator="\n")


PREAMBLE_LINES = 4  # lines before the header in generate()
TARGET_RATIO = 1.0  # roofline analyze / pandas.read_csv, wall time
TARGET_PEAK = 1e9  # bytes of peak RSS


def pandas_step(path: Path) -> int:
    """The reference: plain pandas.read_csv of the same file (preamble and units row skipped)."""
    frame = pd.read_csv(path, skiprows=[*range(PREAMBLE_LINES), PREAMBLE_LINES + 1], thousands=",")
    return len(frame)


def arrow_step(path: Path) -> int:
    """The other parser: a bare pyarrow.csv.read_csv of the same file (every column, default
    threads), from the header line on; the units row and ==PROF== lines are left to it as rows
    (they cost it nothing to skip-convert: every column is read as text where they appear)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with path.open("rb") as fh:
        for _ in range(PREAMBLE_LINES):
            fh.readline()
        header = next(csv.reader([fh.readline().decode()]))
        fh.readline()  # the units row
        table = pcsv.read_csv(fh, read_options=pcsv.ReadOptions(column_names=header),
                              parse_options=pcsv.ParseOptions(invalid_row_handler=lambda row: "skip"),
                              convert_options=pcsv.ConvertOptions(null_values=["n/a", ""], strings_can_be_null=True))
    assert isinstance(table, pa.Table)
    return table.num_rows


def roofline_step(path: Path) -> int:
    """What is timed for roofline: read + count + aggregate by kernel name."""
    from roofline.kernels import aggregate  # imported before timing starts, in child()
    from roofline.readers import read_profile

    table = read_profile(path)
    by_name = aggregate(table.frame, by="name")
    return len(table) + len(by_name)


def analyze_step(path: Path) -> int:
    """What the issue times: the whole `roofline analyze FILE` command (read, count, analyze,
    guidance, the printed tables), with its terminal output discarded."""
    import contextlib
    import io

    from roofline.cli.app import main

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = main(["analyze", str(path), "--top", "10"])
    if code != 0:
        raise SystemExit(f"roofline analyze failed ({code}): {sink.getvalue()[-2000:]}")
    return len(sink.getvalue())


STEPS = {"pandas": pandas_step, "arrow": arrow_step, "roofline": roofline_step, "analyze": analyze_step}


def child(variant: str, path: Path) -> None:
    # One warm-up on a small file of the same shape first: imports and pandas' lazy first-use
    # initialisation are paid once per process whatever the file size, and are not what is compared.
    warm = path.with_name(path.stem + "_warmup.csv")
    if not warm.exists():
        generate(warm, 2000)
    STEPS[variant](warm)
    t0, c0 = time.perf_counter(), time.process_time()
    rows = STEPS[variant](path)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"variant": variant, "seconds": seconds, "cpu": cpu, "peak_bytes": peak_kib * 1024, "rows": rows}))


def run_child(variant: str, path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", variant, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv", type=Path, help="reuse this generated file instead of writing a new one")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_analyze.txt")
    ap.add_argument("--child", nargs=2, metavar=("VARIANT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = args.csv or Path(tmp) / "ncu_raw_1M.csv"
        if args.csv is None:
            t0 = time.perf_counter()
            generate(path, args.launches)
            print(f"generated {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s", flush=True)
        runs: dict[str, list[dict[str, float]]] = {v: [] for v in STEPS}
        for _ in range(args.repeat):
            for variant in runs:
                r = run_child(variant, path)
                runs[variant].append(r)
                print(f"  {variant:8s} wall {r['seconds']:6.2f} s  cpu {r['cpu']:6.2f} s  peak {r['peak_bytes'] / 1e9:.2f} GB",
                      flush=True)
        best = {v: min(r["seconds"] for r in rs) for v, rs in runs.items()}
        best_cpu = {v: min(r["cpu"] for r in rs) for v, rs in runs.items()}
        peak = {v: max(r["peak_bytes"] for r in rs) for v, rs in runs.items()}
        size = path.stat().st_size
    import pyarrow as pa

    lines = [
        "bench_analyze: `roofline analyze FILE` (and read_profile + aggregate alone) vs pandas.read_csv, ncu raw-page CSV",
        f"date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
        f"machine: {platform.machine()}, {cpu_model()}, os.cpu_count={os.cpu_count()}; "
        f"python {platform.python_version()}, pandas {pd.__version__}, pyarrow {pa.__version__}, numpy {np.__version__}",
        f"file: {args.launches:,} launches, {size / 1e6:.0f} MB, {len(ID_COLUMNS) + len(METRICS)} columns, 300 kernel names",
    ]
    labels = {"pandas": "pandas.read_csv", "arrow": "pyarrow.csv.read_csv", "roofline": "read_profile + aggregate",
              "analyze": "roofline analyze (whole command)"}
    for v in runs:
        lines.append(f"{labels[v]:34s} best of {args.repeat}: wall {best[v]:.2f} s, cpu {best_cpu[v]:.2f} s; "
                     f"peak RSS {peak[v] / 1e9:.2f} GB")
    for v in ("analyze", "roofline", "arrow"):
        ratio, ratio_cpu = best[v] / best["pandas"], best_cpu[v] / best_cpu["pandas"]
        verdict = f" (target <= {TARGET_RATIO}) -> {'PASS' if ratio <= TARGET_RATIO else 'FAIL'}" if v == "analyze" else ""
        lines.append(f"ratio {labels[v]} / pandas.read_csv: wall {ratio:.2f}, cpu {ratio_cpu:.2f}{verdict}")
    lines += [
        "(each variant in its own child process, alternating, after a warm-up run on a 2,000-launch file that "
        "takes imports and pandas' first-use set-up out of the timing; wall time is noisy on a shared 2-core box, "
        "process CPU time less so; the target is on wall time: pyarrow parses on both cores, pandas on one)",
        f"peak memory of roofline analyze {peak['analyze'] / 1e9:.2f} GB (target < {TARGET_PEAK / 1e9:.0f} GB) -> "
        f"{'PASS' if peak['analyze'] < TARGET_PEAK else 'FAIL'}",
    ]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: ``roofline merge`` of 1,000 per-rank Parquet kernel tables of 1,000 launches each.

Targets (issue 14): the merge into one Parquet kernel table in < 5 s and < 2 GB peak memory on
the 2-core VM, streaming. The per-rank files are made by the real code path: a generated
1,000-launch ncu raw-page CSV (:func:`bench_analyze.generate`: ==PROF== lines, units row, 300
kernel names) read with ``read_profile``, then per rank its times, clocks' cycles and bytes
scaled (in the kernel table and in the raw metrics alike) and its process id changed, written
with the writer of ``roofline analyze --parquet`` (:func:`roofline.readers.kernel_parquet.to_bytes`).

Timed, each in a fresh child process (peak RSS from ``getrusage`` in the child; the time around
the step only, imports excluded), alternating, best of ``--repeat``:

(a) ``roofline merge run.rank*.parquet -o merged.parquet`` (the CLI's ``main``, in process);
(b) the baseline: ``pandas.concat([pd.read_parquet(f) for f in files])`` + ``to_parquet``;
(c) ``roofline analyze merged.parquet`` (the whole command, its printed tables discarded);
(d) with ``--json``: ``roofline merge run.rank*.kernels.json -o merged.parquet`` (today's per-rank format).

    PYTHONPATH=src python benchmarks/bench_merge.py [--ranks 1000] [--launches 1000] [--repeat 3] [--json]

Writes benchmarks/results/bench_merge.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_analyze import generate  # noqa: E402  (the same realistic ncu CSV as bench_analyze)
from bench_env import write_report  # noqa: E402

#: Kernel-table columns and raw metrics scaled per rank (time and traffic differ between ranks).
TIME_COLUMNS = ("time_s",)
TIME_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg")
BYTE_COLUMNS = ("l1_bytes", "l2_bytes", "dram_bytes")
BYTE_METRICS = ("l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum")
MB = 1e6


def make_ranks(folder: Path, ranks: int, launches: int, json_too: bool) -> dict[str, float]:
    """Write ``run.rank<N>.parquet`` (and ``run.rank<N>.kernels.json``) for every rank; returns sizes and times."""
    from dataclasses import replace

    from roofline.readers import kernel_json, read_profile
    from roofline.readers.kernel_parquet import to_bytes

    csv_path = folder / "rank_template.csv"
    generate(csv_path, launches)
    base = read_profile(csv_path)
    rng = np.random.default_rng(14)
    stats = {"parquet_bytes": 0.0, "json_bytes": 0.0, "parquet_s": 0.0, "json_s": 0.0}
    for r in range(ranks):
        time_scale = rng.uniform(0.9, 1.1, len(base))  # per launch: ranks are not copies
        byte_scale = rng.uniform(0.95, 1.05, len(base))
        frame, metrics = base.frame.copy(), base.metrics.copy()
        for c in TIME_COLUMNS:
            frame[c] = frame[c] * time_scale
        for c in BYTE_COLUMNS:
            frame[c] = frame[c] * byte_scale
        for c in TIME_METRICS:
            metrics[c] = metrics[c] * time_scale
        for c in BYTE_METRICS:
            metrics[c] = metrics[c] * byte_scale
        frame["process_id"] = pd.array(np.full(len(frame), 5000 + r), dtype="Int64")
        table = replace(base, frame=frame, metrics=metrics, sources=(f"run.rank{r}.ncu-rep",))
        t0 = time.perf_counter()
        data = to_bytes(table)
        (folder / f"run.rank{r}.parquet").write_bytes(data)
        stats["parquet_s"] += time.perf_counter() - t0
        stats["parquet_bytes"] += len(data)
        if json_too:
            t0 = time.perf_counter()
            text = kernel_json.to_json(table)
            (folder / f"run.rank{r}.kernels.json").write_text(text)
            stats["json_s"] += time.perf_counter() - t0
            stats["json_bytes"] += len(text)
    csv_path.unlink()
    return stats


def existing(folder: Path, ranks: int, json_too: bool) -> dict[str, float] | None:
    """Sizes of rank files already in ``folder`` (``--folder``), or None when some are missing."""
    parquet = [folder / f"run.rank{r}.parquet" for r in range(ranks)]
    jsons = [folder / f"run.rank{r}.kernels.json" for r in range(ranks)] if json_too else []
    if not all(p.exists() for p in [*parquet, *jsons]) or len(_files(folder, ".parquet")) != ranks:
        return None
    return {"parquet_bytes": float(sum(p.stat().st_size for p in parquet)), "parquet_s": 0.0,
            "json_bytes": float(sum(p.stat().st_size for p in jsons)), "json_s": 0.0}


def _files(folder: Path, suffix: str) -> list[str]:
    return sorted(str(p) for p in folder.glob(f"run.rank*{suffix}"))


def merge_step(folder: Path, suffix: str = ".parquet") -> str:
    from roofline.cli.app import main

    out = folder / "merged.parquet"
    code = main(["merge", *_files(folder, suffix), "-o", str(out), "--force", "-q"])
    if code != 0:
        raise SystemExit(f"roofline merge failed ({code})")
    return str(out)


def merge_json_step(folder: Path) -> str:
    return merge_step(folder, ".kernels.json")


def pandas_step(folder: Path) -> str:
    out = folder / "merged_pandas.parquet"
    pd.concat([pd.read_parquet(f) for f in _files(folder, ".parquet")], ignore_index=True).to_parquet(out)
    return str(out)


def analyze_step(folder: Path) -> str:
    from roofline.cli.app import main

    merged = folder / "merged.parquet"
    if not merged.exists():
        merge_step(folder)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = main(["analyze", str(merged), "--top", "10"])
    if code != 0:
        raise SystemExit(f"roofline analyze failed ({code}): {sink.getvalue()[-2000:]}")
    return str(merged)


STEPS = {"merge": merge_step, "pandas": pandas_step, "analyze": analyze_step, "merge_json": merge_json_step}
LABELS = {"merge": "roofline merge -o merged.parquet", "pandas": "pandas concat(read_parquet) + to_parquet",
          "analyze": "roofline analyze merged.parquet", "merge_json": "roofline merge *.kernels.json -o .parquet"}


def child(variant: str, folder: Path) -> None:
    # imports before timing (what is compared is the work, not the interpreter's start)
    import pyarrow.parquet  # noqa: F401

    import roofline.cli.app  # noqa: F401
    import roofline.profiling.rank_tables  # noqa: F401
    import roofline.readers.kernel_parquet  # noqa: F401

    t0, c0 = time.perf_counter(), time.process_time()
    out = STEPS[variant](folder)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"variant": variant, "seconds": seconds, "cpu": cpu, "peak_bytes": peak_kib * 1024,
                      "out_bytes": Path(out).stat().st_size}))


def run_child(variant: str, folder: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", variant, str(folder)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--launches", type=int, default=1000, help="launches per rank")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="also time the merge of .kernels.json inputs")
    ap.add_argument("--folder", type=Path, help="generate the rank files here (kept), or reuse them if there")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_merge.txt")
    ap.add_argument("--child", nargs=2, metavar=("VARIANT", "FOLDER"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    import pyarrow

    import roofline

    variants = ["merge", "pandas", "analyze", *(["merge_json"] if args.json else [])]
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        reused = existing(folder, args.ranks, args.json)
        stats = reused or make_ranks(folder, args.ranks, args.launches, args.json)
        print(f"{'reused' if reused else 'generated'} {args.ranks} ranks x {args.launches} launches in {time.perf_counter() - t0:.1f} s: "
              f"Parquet {stats['parquet_bytes'] / MB:.1f} MB (written in {stats['parquet_s']:.1f} s)"
              + (f", JSON {stats['json_bytes'] / MB:.1f} MB (written in {stats['json_s']:.1f} s)" if args.json else ""),
              flush=True)
        runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
        for _ in range(args.repeat):
            for v in variants:
                r = run_child(v, folder)
                runs[v].append(r)
                print(f"  {LABELS[v]:44s} wall {r['seconds']:6.2f} s  cpu {r['cpu']:6.2f} s  "
                      f"peak {r['peak_bytes'] / 1e9:.2f} GB", flush=True)
    best = {v: min(r["seconds"] for r in rs) for v, rs in runs.items()}
    best_cpu = {v: min(r["cpu"] for r in rs) for v, rs in runs.items()}
    peak = {v: max(r["peak_bytes"] for r in rs) for v, rs in runs.items()}
    out_mb = {v: runs[v][-1]["out_bytes"] / MB for v in variants}
    lines = [
        f"bench_merge: roofline merge of {args.ranks:,} per-rank Parquet kernel tables x {args.launches:,} launches",
        f"date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}",
        f"machine: {platform.machine()}, os.cpu_count={os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; "
        f"python {platform.python_version()}, roofline {roofline.__version__}, pandas {pd.__version__}, "
        f"pyarrow {pyarrow.__version__}, numpy {np.__version__}",
        f"inputs: {args.ranks} Parquet files, {stats['parquet_bytes'] / MB:.1f} MB in all "
        f"({stats['parquet_bytes'] / args.ranks / 1e3:.0f} kB each)"
        + (f"; {args.ranks} .kernels.json files, {stats['json_bytes'] / MB:.1f} MB" if args.json else ""),
        f"outputs: merged.parquet {out_mb['merge']:.1f} MB (pandas baseline's {out_mb['pandas']:.1f} MB)",
    ]
    for v in variants:
        lines.append(f"{LABELS[v]:44s} best of {args.repeat}: wall {best[v]:.2f} s, cpu {best_cpu[v]:.2f} s; "
                     f"peak RSS {peak[v] / 1e9:.2f} GB")
    ratio, ratio_cpu = best["merge"] / best["pandas"], best_cpu["merge"] / best_cpu["pandas"]
    lines += [
        f"ratio roofline merge / pandas baseline: wall {ratio:.2f}, cpu {ratio_cpu:.2f}",
        f"target merge < 5 s: wall {best['merge']:.2f} s -> {'PASS' if best['merge'] < 5 else 'FAIL'}",
        f"target merge peak < 2 GB: {peak['merge'] / 1e9:.2f} GB -> {'PASS' if peak['merge'] < 2e9 else 'FAIL'}",
        "(each variant in its own child process, alternating, imports before the timer; wall time is noisy on a "
        "shared 2-core box, process CPU time less so)",
    ]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the per-rank Parquet kernel tables of a cluster job, analysed today (``roofline merge``
into one file, then ``roofline analyze`` of it, in memory) and out of core (``roofline analyze FOLDER
--engine duckdb``), issue 35 part 6.

The rank files are written with pyarrow directly (fast: no profile is read), in the
``roofline.kernels/1`` layout of ``roofline profile --parquet`` (every declared column, our footer):
per launch one of 300 kernel names (a few dominate, as in a training step), 4 phases, 40 PyTorch
operators, 60 module paths, grid and block, the rank's process id and device, log-normal times,
an SM clock, FP32/FP16/tensor FLOPs and L1/L2/DRAM bytes; instruction counts unknown (null), as in a
profile that did not collect them.

Each step runs in a fresh child process (peak RSS from ``getrusage`` in the child, imports before
the timer), under an address-space limit (``--memory-gb``, default 12) so that a step that cannot fit
fails there with a MemoryError instead of taking the shared machine's memory:

(a) today: ``roofline merge FILES -o merged.parquet``, then ``roofline analyze merged.parquet``;
(b) ``roofline analyze FOLDER --engine duckdb``.

    PYTHONPATH=src python benchmarks/bench_ranks.py [--ranks 1000] [--launches 100000] [--folder /tmp/...]

Writes benchmarks/results/bench_ranks.txt (``--out`` to change); deletes the files it wrote.
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
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_env import cpu_model, write_report  # noqa: E402

GB = 1e9
KERNELS, PHASES, OPS, MODULES = 300, 4, 40, 60


def _pool(prefix: str, n: int) -> list[str]:
    return [f"{prefix}_{i}" for i in range(n)]


def write_ranks(folder: Path, ranks: int, launches: int, seed: int = 0) -> float:
    """Write ``job.rank<N>.parquet`` for every rank; returns the bytes written."""
    import pyarrow as pa

    from roofline.readers import kernel_parquet
    from roofline.readers.kernel_parquet import TABLE_FIELDS

    rng = np.random.default_rng(seed)
    names = pa.array([f"void kernel_{i}<float, {i % 7}>(float const*, float*, int)" for i in range(KERNELS)])
    phases = pa.array(["forward", "backward", "optimizer", "data"])
    ops = pa.array(_pool("aten::op", OPS))
    modules = pa.array([f"Model.layer{i // 6}.block{i % 6}" for i in range(MODULES)])
    grids = pa.array(["(1024, 1, 1)", "(256, 4, 1)", "(80, 1, 1)"])
    popularity = 1.0 / np.arange(1, KERNELS + 1)  # a few kernels dominate (Zipf)
    popularity /= popularity.sum()
    schema = pa.schema(list(TABLE_FIELDS), metadata=kernel_parquet.file_metadata(fp16_convention="ncu"))
    total = 0
    for rank in range(ranks):
        k = rng.choice(KERNELS, size=launches, p=popularity)
        time_s = rng.lognormal(-11.0, 1.5, launches) * (1 + 0.01 * rank / max(ranks, 1))
        fp32 = np.floor(rng.lognormal(16, 2, launches))
        fp16 = np.where(k % 5 == 0, np.floor(rng.lognormal(15, 2, launches)), 0.0)
        tensor = np.where(k % 11 == 0, np.floor(rng.lognormal(22, 1, launches)), 0.0)
        columns: dict[str, pa.Array] = {
            "launch_id": pa.array(np.arange(launches, dtype=np.int64)),
            "kernel_name": names.take(pa.array(k)),
            "phase": phases.take(pa.array(k % PHASES)),
            "op": ops.take(pa.array((k * 7) % OPS)),
            "module": modules.take(pa.array((k * 3 + rng.integers(0, 2, launches)) % MODULES)),
            "process_id": pa.array(np.full(launches, 10_000 + rank, dtype=np.int64)),
            "device": pa.array(np.full(launches, rank % 8, dtype=np.int64)),
            "compute_capability": pa.array(["9.0"] * launches),
            "grid": grids.take(pa.array(k % 3)),
            "block": grids.take(pa.array((k + 1) % 3)),
            "stream": pa.array(np.full(launches, 7, dtype=np.int64)),
            "launches": pa.array(np.ones(launches, dtype=np.int64)),
            "time_s": pa.array(time_s),
            "sm_clock_hz": pa.array(rng.normal(1.755e9, 2e7, launches)),
            "fp32_flops": pa.array(fp32), "fp16_flops": pa.array(fp16), "tensor_flops": pa.array(tensor),
            "fp64_flops": pa.array(np.zeros(launches)),
            "tensor_precision": pa.array(np.where(k % 11 == 0, "fp16", None).tolist()),
            "flops": pa.array(fp32 + fp16 + tensor),
            "flops_partial": pa.array(np.zeros(launches, dtype=bool)),
            "l1_bytes": pa.array(np.floor(rng.lognormal(20, 2, launches))),
            "l2_bytes": pa.array(np.floor(rng.lognormal(19, 2, launches))),
            "dram_bytes": pa.array(np.floor(rng.lognormal(18, 2, launches))),
            "ops_partial": pa.array(np.ones(launches, dtype=bool)),
            "estimated": pa.array(np.zeros(launches, dtype=bool)),
        }
        columns["ops"] = columns["flops"]
        arrays = [columns[f.name] if f.name in columns else pa.nulls(launches, f.type) for f in TABLE_FIELDS]
        path = folder / f"job.rank{rank}.parquet"
        kernel_parquet.write(pa.Table.from_arrays(arrays, schema=schema), path)
        total += path.stat().st_size
    return total


def child(step: str, folder: Path, memory_gb: float) -> None:
    """Run one step in this (child) process and print its wall time and peak RSS as JSON."""
    limit = int(memory_gb * GB)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from roofline.cli.app import main

    files = sorted(str(p) for p in folder.glob("job.rank*.parquet"))
    merged = folder.parent / "merged.parquet"
    argv = {"merge": ["merge", *files, "-o", str(merged), "--force", "-q"],
            "analyze_merged": ["analyze", str(merged), "-q"],
            "duckdb": ["analyze", str(folder), "--engine", "duckdb", "-q"]}[step]
    start, cpu = time.perf_counter(), time.process_time()
    error = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    except MemoryError:
        code, error = -1, "MemoryError"
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GB
    print(json.dumps({"wall": wall, "cpu": cpu, "peak_gb": peak, "code": code, "error": error}))


def run_child(step: str, folder: Path, memory_gb: float) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, "--child", step, str(folder), "--memory-gb", str(memory_gb)],
                          capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:  # killed, or an error before the result line
        return {"wall": float("nan"), "peak_gb": float("nan"), "code": done.returncode,
                "error": (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}
    result: dict[str, object] = json.loads(lines[-1])
    if result["code"] != 0 and not result.get("error"):
        result["error"] = (done.stderr.strip().splitlines() or ["exit status " + str(result["code"])])[-1][:200]
    return result


def _fmt(r: dict[str, object]) -> str:
    text = f"wall {r['wall']:.2f} s, peak RSS {r['peak_gb']:.2f} GB"
    return text + (f"; FAILED ({r['error']})" if r["code"] != 0 else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=None, help="where the files go (default: a folder in /tmp)")
    parser.add_argument("--memory-gb", type=float, default=12.0, help="address-space limit of each step")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_ranks.txt")
    parser.add_argument("--child", nargs=2, metavar=("STEP", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), args.memory_gb)
        return 0
    import duckdb
    import pandas
    import pyarrow

    from roofline import __version__

    work = Path(tempfile.mkdtemp(prefix="bench-ranks-", dir=args.folder))
    ranks = work / "ranks"
    ranks.mkdir()
    try:
        start = time.perf_counter()
        size = write_ranks(ranks, args.ranks, args.launches)
        written = time.perf_counter() - start
        merge = run_child("merge", ranks, args.memory_gb)
        analyze = run_child("analyze_merged", ranks, args.memory_gb) if merge["code"] == 0 else \
            {"wall": float("nan"), "peak_gb": float("nan"), "code": 1, "error": "not run: the merge failed"}
        duck = run_child("duckdb", ranks, args.memory_gb)
        merged = work / "merged.parquet"
        merged_size = merged.stat().st_size if merged.exists() else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    today_ok = merge["code"] == 0 and analyze["code"] == 0
    today_wall = float(merge["wall"]) + float(analyze["wall"])  # type: ignore[arg-type]
    today_peak = max(float(merge["peak_gb"]), float(analyze["peak_gb"]))  # type: ignore[arg-type]
    command = "PYTHONPATH=src python benchmarks/bench_ranks.py " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        f"# bench_ranks: {args.ranks:,} rank Parquet files x {args.launches:,} launches "
        f"({args.ranks * args.launches:,} launches); date {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}; "
        f"machine {platform.machine()}, {cpu_model()}, os.cpu_count={os.cpu_count()}, load average "
        f"{os.getloadavg()[0]:.2f}; python {platform.python_version()}, roofline {__version__}, duckdb {duckdb.__version__}, "
        f"pandas {pandas.__version__}, pyarrow {pyarrow.__version__}; command: {command.strip()}",
        f"inputs: {args.ranks} files, {size / GB:.2f} GB in all, written by pyarrow in {written:.1f} s"
        + (f"; merged.parquet {merged_size / GB:.2f} GB" if merged_size else ""),
        f"(a) roofline merge -o merged.parquet       {_fmt(merge)}",
        f"    roofline analyze merged.parquet        {_fmt(analyze)}",
        f"    today, both steps                      wall {today_wall:.2f} s, peak RSS {today_peak:.2f} GB"
        + ("" if today_ok else " (did not complete)"),
        f"(b) roofline analyze FOLDER --engine duckdb {_fmt(duck)}",
    ]
    if today_ok and duck["code"] == 0:
        lines.append(f"ratio (b) / (a): wall {float(duck['wall']) / today_wall:.2f}, "  # type: ignore[arg-type]
                     f"peak RSS {float(duck['peak_gb']) / today_peak:.2f}")  # type: ignore[arg-type]
    lines.append(f"(each step in its own child process under a {args.memory_gb:g} GB address-space limit; "
                 "imports before the timer; wall time is noisy on a shared machine)")
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

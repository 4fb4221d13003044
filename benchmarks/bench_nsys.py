"""Benchmark: reading an Nsight Systems timeline of 1,000,000 kernel launches against a bare SQL SELECT.

Issue 35: a timeline of millions of launches is read in seconds. The file is made here with the
tables (and their exact CREATE statements) of a real nsys 2026.2 export (tests/data/nsys/
nsysai_mfu_before), filled with a PyTorch-like run: two processes, one launching thread each,
every launch called inside an ``aten::`` operator range inside a step range (push/pop NVTX), its
correlation id repeated between the processes as nsys does. Timed, each in a child process of its
own (fresh interpreter: peak RSS is the variant's own), after a warm-up read of a small file:

- ``select``: the bare SQL of the same kernel rows (times, ids, grid, block, names joined from
  StringIds) into a pandas frame, ``pandas.read_sql_query``: the floor any reader pays;
- ``timeline``: :func:`roofline.readers.nsys.timeline.read_timeline`, the kernel table with NVTX
  attribution (runtime calls joined by correlation id and process, the ranges around each call).

    PYTHONPATH=src python benchmarks/bench_nsys.py [--launches 1000000] [--repeat 3] [--dir DIR]

Writes benchmarks/results/bench_nsys.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_env import cpu_model, write_report  # noqa: E402  (a sibling script: benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE.parent / "tests" / "data" / "nsys" / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"
TABLES = ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "META_DATA_EXPORT")
OPS = ["aten::addmm", "aten::mul", "aten::add", "aten::copy_", "aten::native_layer_norm", "aten::gelu",
       "aten::_softmax", "aten::bmm"]
PER_STEP = 1000  # launches per step range
SELECT = ('SELECT k.start, k."end", k.deviceId, k.streamId, k.correlationId, k.globalPid, k.gridX, k.gridY, '
          "k.gridZ, k.blockX, k.blockY, k.blockZ, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
          "LEFT JOIN StringIds AS s ON s.id = k.demangledName ORDER BY k.start")


def generate(path: Path, launches: int, seed: int = 0) -> None:
    """A timeline of ``launches`` kernels in the real export's table layout (see the module docstring)."""
    rng = np.random.default_rng(seed)
    template = sqlite3.connect(f"file:{TEMPLATE}?mode=ro", uri=True)
    creates = {name: sql for name, sql in template.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
    template.close()
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    for name in TABLES:
        db.execute(creates[name])
    db.execute("INSERT INTO META_DATA_EXPORT (name, value) VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210')")
    names = [f"void at::native::kernel_{i}<float, {i % 7}>(at::TensorIteratorBase &)" for i in range(300)]
    db.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)", list(enumerate(names)))
    pids = np.array([144, 145], dtype=np.int64)
    n = launches
    proc = np.arange(n) % 2
    global_pid = pids[proc] << 24
    global_tid = global_pid + pids[proc]  # the main thread: tid == pid
    corr = np.arange(n) // 2 + 1  # ids repeat between the two processes
    api_start = 1_000_000 + np.arange(n) * 2_000
    start = api_start + 5_000
    end = start + rng.integers(1_000, 50_000, n)
    name = rng.integers(0, len(names), n)
    grid = rng.choice([1, 16, 108, 432, 1024], n)
    block = rng.choice([128, 256, 512], n)
    z = np.zeros(n, dtype=np.int64)
    one = np.ones(n, dtype=np.int64)
    db.executemany('INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId, correlationId, '
                   "globalPid, demangledName, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                   "registersPerThread, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                   "localMemoryTotal, gridId, tensorSizeMinusOneElements) "
                   "VALUES (?, ?, ?, 1, 7, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 32, 0, 0, 0, 0, 1, 0)",
                   zip(start.tolist(), end.tolist(), proc.tolist(), corr.tolist(), global_pid.tolist(), name.tolist(),
                       name.tolist(), grid.tolist(), one.tolist(), one.tolist(), block.tolist(), one.tolist(), one.tolist()))
    db.executemany('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, '
                   "returnValue) VALUES (?, ?, 0, ?, ?, 0, 0)",
                   zip(api_start.tolist(), (api_start + 1_500).tolist(), global_tid.tolist(), corr.tolist()))
    # NVTX: per process, a step range around every PER_STEP of its launches, an operator range around each
    ranges: list[tuple[int, int, int, str]] = []
    op = rng.integers(0, len(OPS), n)
    for p in (0, 1):
        mine = np.flatnonzero(proc == p)
        tid = int(global_tid[mine[0]])
        for s in range(0, len(mine), PER_STEP):
            block_rows = mine[s:s + PER_STEP]
            ranges.append((int(api_start[block_rows[0]]) - 100, int(api_start[block_rows[-1]]) + 1_900, tid,
                           f"step {s // PER_STEP}"))
        ranges += [(int(api_start[i]) - 50, int(api_start[i]) + 1_800, tid, f"{OPS[op[i]]}, seq = {i}, op_id = {i}")
                   for i in mine]
    db.executemany('INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, domainId, text) VALUES (?, ?, 59, ?, 0, ?)',
                   ranges)
    db.commit()
    db.close()


def child(variant: str, path: Path, warmup: Path) -> dict[str, float]:
    """One variant timed in this (fresh) process: the wall time of the read, and the peak RSS."""
    import resource

    if variant == "select":
        import pandas as pd

        def run(p: Path) -> int:
            db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            frame = pd.read_sql_query(SELECT, db)
            db.close()
            return len(frame)
    else:
        from roofline.readers.nsys.timeline import read_timeline

        def run(p: Path) -> int:
            return len(read_timeline(p).frame)
    run(warmup)
    t0 = time.perf_counter()
    rows = run(path)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "rows": rows, "peak_rss_b": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def measure(variant: str, path: Path, warmup: Path) -> dict[str, float]:
    env_path = str(HERE.parent / "src")
    out = subprocess.run([sys.executable, __file__, "--child", variant, str(path), str(warmup)], check=True,
                         capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="where the generated files go (default: a temporary folder)")
    ap.add_argument("--child", nargs=3, metavar=("VARIANT", "FILE", "WARMUP"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]), Path(args.child[2]))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        big, warmup = folder / f"timeline_{args.launches}.sqlite", folder / "timeline_warmup.sqlite"
        t0 = time.perf_counter()
        fresh = not big.exists()
        if fresh:
            generate(big, args.launches)
        if not warmup.exists():
            generate(warmup, 2_000, seed=1)
        made = f"made in {time.perf_counter() - t0:.1f} s" if fresh else f"made earlier in {folder}"
        runs: dict[str, list[dict[str, float]]] = {"select": [], "timeline": []}
        for _ in range(args.repeat):  # variants alternate; each ratio within one repetition
            for variant in runs:
                runs[variant].append(measure(variant, big, warmup))
        ratios = [t["wall_s"] / s["wall_s"] for s, t in zip(runs["select"], runs["timeline"])]
        med = {v: float(np.median([r["wall_s"] for r in rs])) for v, rs in runs.items()}
        rss = {v: float(np.median([r["peak_rss_b"] for r in rs])) for v, rs in runs.items()}
        lines = [
            f"bench_nsys: an Nsight Systems timeline of {args.launches:,} kernel launches (2 processes, "
            f"{args.launches * 1.001:,.0f} NVTX ranges) read as a kernel table vs a bare SQL SELECT of its kernel rows",
            f"date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}; machine: {platform.machine()}, "
            f"{cpu_model()}; python {platform.python_version()}; sqlite {sqlite3.sqlite_version}",
            f"file: {big.stat().st_size / 1e6:.0f} MB, {made} (layout of tests/data/nsys/nsysai_mfu_before)",
            f"  select (pandas.read_sql_query of the kernel rows)  median of {args.repeat}: wall {med['select']:.2f} s; "
            f"peak RSS {rss['select'] / 1e9:.2f} GB",
            f"  roofline read_timeline (table + NVTX attribution)  median of {args.repeat}: wall {med['timeline']:.2f} s; "
            f"peak RSS {rss['timeline'] / 1e9:.2f} GB",
            f"  ratio read_timeline / select: wall {float(np.median(ratios)):.2f} "
            f"(runs {', '.join(f'{r:.2f}' for r in ratios)})",
            "(each variant in a child process of its own, after a warm-up read of a 2,000-launch file; variants alternate)",
        ]
        write_report(lines, HERE / "results" / "bench_nsys.txt")


if __name__ == "__main__":
    main()

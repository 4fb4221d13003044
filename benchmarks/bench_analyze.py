"""Benchmark: `roofline analyze` of a 1,000,000-launch ncu raw-page CSV vs plain ``pandas.read_csv``.

Targets (issues 14 and 34): the whole ``roofline analyze FILE`` command (read, count, aggregate, analyze,
guidance, the printed tables) takes at most 1.0x the time of a bare ``pandas.read_csv`` of the
same file, with peak memory under 0.7 GB. Also timed, to show where the time goes and to pick the
parser by measurement: a bare ``pyarrow.csv.read_csv`` of the same file (all columns, both
threads), and ``read_profile`` + ``aggregate`` alone. Each variant runs in its own child process
(fresh interpreter, so peak RSS is that variant's own); the time is measured inside the child
around the step only (imports excluded, after a warm-up on a small file). Issue 34 adds the whole
processes, the way a user runs them (``roofline analyze FILE`` against ``python -c "import pandas;
pandas.read_csv(FILE)"``, start-up and imports on both sides), two files (plain numbers, and ncu's
default thousands separators in every cell), and a peak target of 0.7 GB. Variants alternate; each
ratio is taken within one repetition and the median of ``--repeat`` is reported.

    PYTHONPATH=src python benchmarks/bench_analyze.py [--launches 1000000] [--repeat 3] [--csv-dir DIR]

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


def generate(path: Path, launches: int, distinct: int = 300, seed: int = 0, numbers: str = "ncu") -> None:
    """Write a realistic raw-page ncu CSV: program output, ==PROF== lines, header, units row, quoted values.

    ``numbers``: ``"ncu"`` writes every metric cell as ncu does by default, with thousands separators
    (``"5,977,413.20"``, integers ``"1,234"``); ``"plain"`` writes plain numbers (``5977413.2``)."""
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
    data["dram__bytes.sum"] = dram
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
    for name in frame.columns[len(ID_COLUMNS):]:
        values = frame[name]
        if numbers == "ncu":
            spec = ",.2f" if values.dtype.kind == "f" else ","
            frame[name] = [format(v, spec) for v in values.tolist()]
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("Loading model...\nstep 1 loss=0.93\n==PROF== Connected to process 4242 (/usr/bin/python3.11)\n")
        fh.write("==PROF== Disconnected from process 4242\n")
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(list(frame.columns))
        writer.writerow([""] * len(ID_COLUMNS) + [METRICS[c] for c in frame.columns[len(ID_COLUMNS):]])
        frame.to_csv(fh, header=False, index=False, quoting=csv.QUOTE_ALL, lineterminator="\n")


PREAMBLE_LINES = 4  # lines before the header in generate()
TARGET_RATIO = 1.0  # roofline analyze / pandas.read_csv, wall time
TARGET_PEAK = 0.7e9  # bytes of peak RSS
NUMBERS = ("plain", "ncu")  # the files: plain numbers, and ncu's default thousands separators in every cell


def pandas_options(numbers: str) -> str:
    """The arguments of the reference ``pandas.read_csv`` call, as source text: the preamble and the
    units row skipped, and on ncu's numbers its thousands separator."""
    skip = [*range(PREAMBLE_LINES), PREAMBLE_LINES + 1]
    return f"skiprows={skip}" + (', thousands=","' if numbers == "ncu" else "")


def pandas_step(path: Path, numbers: str) -> int:
    """The reference: plain pandas.read_csv of the same file (preamble and units row skipped)."""
    frame = eval(f"pd.read_csv(path, {pandas_options(numbers)})")  # the very call the whole-process run makes
    return len(frame)


def arrow_step(path: Path, numbers: str) -> int:
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


def roofline_step(path: Path, numbers: str) -> int:
    """What is timed for roofline: read + count + aggregate by kernel name."""
    from roofline.kernels import aggregate  # imported before timing starts, in child()
    from roofline.readers import read_profile

    table = read_profile(path)
    by_name = aggregate(table.frame, by="name")
    return len(table) + len(by_name)


def analyze_step(path: Path, numbers: str) -> int:
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
#: Whole processes, the way a user runs them: start-up and imports included on both sides.
PROCESSES = ("pandas process", "analyze process")


def child(variant: str, path: Path, numbers: str) -> None:
    # One warm-up on a small file of the same shape first: imports and pandas' lazy first-use
    # initialisation are paid once per process whatever the file size, and are not what is compared.
    warm = path.with_name(path.stem + "_warmup.csv")
    if not warm.exists():
        generate(warm, 2000, numbers=numbers)
    STEPS[variant](warm, numbers)
    t0, c0 = time.perf_counter(), time.process_time()
    rows = STEPS[variant](path, numbers)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"variant": variant, "seconds": seconds, "cpu": cpu, "peak_bytes": peak_kib * 1024, "rows": rows}))


def child_environment() -> dict[str, str]:
    """This process's environment, with Python's bytecode cache on: an installed roofline has its
    modules compiled (pip compiles them, as it did pandas'), so a child must not compile them from
    source on every start (``PYTHONDONTWRITEBYTECODE=1`` here costs ``roofline analyze`` 0.1 s a run)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(variant: str, path: Path, numbers: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", variant, str(path), numbers],
                         capture_output=True, text=True, check=True, env=child_environment())
    return json.loads(out.stdout.strip().splitlines()[-1])


def process_command(variant: str, path: Path, numbers: str) -> list[str]:
    """The command line of a whole-process variant: the ``roofline`` console script of this Python
    (``python -m roofline`` where there is none), or ``python -c "import pandas; pandas.read_csv(FILE)"``."""
    if variant == "pandas process":
        return [sys.executable, "-c", f"import pandas; pandas.read_csv({str(path)!r}, {pandas_options(numbers)})"]
    script = Path(sys.executable).with_name("roofline")
    start = [str(script)] if script.exists() else [sys.executable, "-m", "roofline"]
    return [*start, "analyze", str(path), "--top", "10"]


def run_process(variant: str, path: Path, numbers: str) -> dict[str, float]:
    """Time a whole process from its start to its exit (wall), its CPU time and peak RSS (``wait4``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(process_command(variant, path, numbers), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_environment())
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{variant} failed ({proc.returncode}): {err[-2000:]}")
    return {"variant": variant, "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_bytes": usage.ru_maxrss * 1024}


def median(values: list[float]) -> float:
    return float(np.median(values))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv-dir", type=Path, help="reuse the files plain_<N>.csv and ncu_<N>.csv generated "
                                                  "here before (written there when absent)")
    ap.add_argument("--numbers", nargs="+", choices=NUMBERS, default=list(NUMBERS))
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_analyze.txt")
    ap.add_argument("--child", nargs=3, metavar=("VARIANT", "PATH", "NUMBERS"), help=argparse.SUPPRESS)
    ap.add_argument("--generate", nargs=3, metavar=("PATH", "LAUNCHES", "NUMBERS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.generate:
        generate(Path(args.generate[0]), int(args.generate[1]), numbers=args.generate[2])
        return 0
    if args.child:
        child(args.child[0], Path(args.child[1]), args.child[2])
        return 0
    import pyarrow as pa
    import roofline

    lines = [
        "bench_analyze: `roofline analyze FILE` (and read_profile + aggregate alone) vs pandas.read_csv, ncu raw-page CSV",
        f"date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}; roofline from {Path(roofline.__file__).parent}",
        f"machine: {platform.machine()}, {cpu_model()}, os.cpu_count={os.cpu_count()}; "
        f"python {platform.python_version()}, pandas {pd.__version__}, pyarrow {pa.__version__}, numpy {np.__version__}",
    ]
    labels = {"pandas": "pandas.read_csv", "arrow": "pyarrow.csv.read_csv", "roofline": "read_profile + aggregate",
              "analyze": "roofline analyze (in process)", "pandas process": "python -c pandas.read_csv (process)",
              "analyze process": "roofline analyze FILE (process)"}
    verdicts: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.csv_dir or Path(tmp)
        for numbers in args.numbers:
            path = folder / f"{numbers}_{args.launches // 1000}k.csv" if args.launches % 1_000_000 else \
                folder / f"{numbers}_{args.launches // 1_000_000}M.csv"
            if not path.exists():  # made by a child: a peak RSS is inherited through fork and exec (Linux keeps
                # the larger of the parent's and the child's), so a parent that had built the 1M-row frame itself
                # made every child's peak read as its own 0.8 GB
                t0 = time.perf_counter()
                subprocess.run([sys.executable, __file__, "--generate", str(path), str(args.launches), numbers],
                               check=True, env=child_environment())
                print(f"generated {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s", flush=True)
            runs: dict[str, list[dict[str, float]]] = {v: [] for v in (*STEPS, *PROCESSES)}
            for _ in range(args.repeat):  # variants alternate; a ratio is taken within one repetition
                for variant in runs:
                    r = run_process(variant, path, numbers) if variant in PROCESSES else run_child(variant, path, numbers)
                    runs[variant].append(r)
                    print(f"  {numbers:5s} {variant:16s} wall {r['seconds']:6.2f} s  cpu {r['cpu']:6.2f} s  "
                          f"peak {r['peak_bytes'] / 1e9:.2f} GB", flush=True)
            wall = {v: [r["seconds"] for r in rs] for v, rs in runs.items()}
            cpu = {v: [r["cpu"] for r in rs] for v, rs in runs.items()}
            peak = {v: [r["peak_bytes"] for r in rs] for v, rs in runs.items()}
            lines.append(f"file ({numbers} numbers): {args.launches:,} launches, {path.stat().st_size / 1e6:.0f} MB, "
                         f"{len(ID_COLUMNS) + len(METRICS)} columns, 300 kernel names; reference "
                         f"pandas.read_csv(FILE, {pandas_options(numbers)})")
            for v in runs:
                lines.append(f"  {labels[v]:36s} median of {args.repeat}: wall {median(wall[v]):.2f} s, "
                             f"cpu {median(cpu[v]):.2f} s; peak RSS {median(peak[v]) / 1e9:.2f} GB")
            for v, ref in (("analyze", "pandas"), ("analyze process", "pandas process"), ("roofline", "pandas"),
                           ("arrow", "pandas")):
                ratios = [a / b for a, b in zip(wall[v], wall[ref])]  # each from one repetition
                ratio, ratio_cpu = median(ratios), median([a / b for a, b in zip(cpu[v], cpu[ref])])
                verdict = ""
                if v.startswith("analyze"):
                    verdicts.append(ratio <= TARGET_RATIO)
                    verdict = f" (target <= {TARGET_RATIO}) -> {'PASS' if ratio <= TARGET_RATIO else 'FAIL'}"
                lines.append(f"  ratio {labels[v]} / {labels[ref]}: wall {ratio:.2f} "
                             f"(runs {', '.join(f'{x:.2f}' for x in ratios)}), cpu {ratio_cpu:.2f}{verdict}")
            top = max(median(peak["analyze"]), median(peak["analyze process"]))
            verdicts.append(top < TARGET_PEAK)
            lines.append(f"  peak memory of roofline analyze {top / 1e9:.2f} GB (target < {TARGET_PEAK / 1e9:.1f} GB) -> "
                         f"{'PASS' if top < TARGET_PEAK else 'FAIL'}")
    lines += [
        "(in-process variants: each in its own child process, after a warm-up run on a 2,000-launch file that takes "
        "imports and pandas' first-use set-up out of the timing; process variants: the whole command, start-up and "
        "imports included on both sides; variants alternate; ratios are taken within one repetition, then the median; "
        "the target is on wall time: pyarrow parses on both cores, pandas on one; every child runs with Python's "
        "bytecode cache on, as an installed package has it)",
        f"all targets: {'PASS' if all(verdicts) else 'FAIL'}",
    ]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Validate the instruction roofline on a real GPU (issue 11): the memory-pattern walls, our counts, and the
shared-memory ceiling, in one command.

    PYTHONPATH=src python3 benchmarks/validate_instruction_gpu.py OUTDIR [--ncu ncu] [--arch 9.0] [--dry-run]

1. ``walls``: one ``roofline profile --clock-control none`` run (the real ncu) of micro-kernels whose
   memory pattern is known, each launched once (``python THIS target``): global loads from one address
   for the whole warp (``wall_broadcast``: 1 sector per instruction), of 32 consecutive 4-byte words
   (``wall_coalesced``: 4), of a random 32-byte sector per lane (``wall_random``: 32); shared loads of
   32 consecutive words (``wall_shared_free``: 1 wavefront) and of one bank for the whole warp
   (``wall_shared_conflict``: 32). Each must land on its wall: ``global_ii`` (or ``shared_ii``) of the
   kernel table within 5 % of 1, 1/4, 1/32, 1 and 1/32. The same run profiles the ``roofline machine``
   shared-memory and INT32 kernels, whose counts (:class:`~roofline.bench.gpu.kernels.SharedConfig`,
   :class:`~roofline.bench.gpu.kernels.IntConfig`) ncu must reproduce.
2. ``machine``: the default ``roofline machine`` characterization in this process (``measure_gpu``):
   the measured shared-memory and INT32 ceilings against the spec at the clock seen while they ran, and
   the whole default run under 60 s.

Writes under OUTDIR seven files (a device run returns at most eight: add the log): ``instr.ncu-rep``,
``instr.ncu.csv``, ``instr.kernels.json`` (the profile), ``profile.log``, ``machine.json``, ``summary.json``
and ``summary.md``; prints the summary table. About 2 minutes on an H100 (estimate: the profile of 8 small
kernels ~1 min, the characterization ~30 s), well inside the 5 minutes asked.

``--dry-run`` needs no GPU and no ncu: the profile is replaced by the report a perfect GPU would give
(``ideal_report``, written to OUTDIR/instr.ideal.csv and read by the same reader), and the
characterization is skipped. Nothing here changes the GPU's clocks or settings.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from roofline.bench.gpu.kernels import (  # noqa: E402
    INT_SOURCE,
    SHARED_KERNEL,
    SHARED_SOURCES,
    SHARED_UNROLL,
    IntConfig,
    SharedConfig,
)

#: Launch of every micro-kernel: 512 blocks of 256 threads = 4096 warps.
BLOCKS, THREADS = 512, 256
WARPS = BLOCKS * THREADS // 32
GLOBAL_ITERS, SHARED_ITERS, BENCH_ITERS = 64, 256, 64
#: Words in the global array: one row of every thread per iteration (32 MiB of floats).
WORDS = GLOBAL_ITERS * BLOCKS * THREADS
SHARED_WORDS = 32 * 32  #: the wall kernels' shared array: 32 rows of 32 words
TOLERANCE = 0.05
#: Kernel -> (column, transactions per LD/ST instruction on its wall).
WALLS: dict[str, tuple[str, float]] = {
    "wall_broadcast": ("global_ii", 1.0), "wall_coalesced": ("global_ii", 1 / 4), "wall_random": ("global_ii", 1 / 32),
    "wall_shared_free": ("shared_ii", 1.0), "wall_shared_conflict": ("shared_ii", 1 / 32),
}

WALL_SOURCE = r"""
extern "C" __global__ void wall_broadcast(const float* a, float* out, int iters)
{
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += a[k];  // one address for all 32 lanes: 1 sector
    if (acc == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void wall_coalesced(const float* a, float* out, int iters)
{
    const long long n = (long long)gridDim.x * blockDim.x;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += a[k * n + i];  // 32 consecutive words: 128 B, 4 sectors
    if (acc == -1.0f) out[i] = acc;
}

extern "C" __global__ void wall_random(const float* a, float* out, int iters, unsigned int sectors)
{
    unsigned int h = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u + 12345u;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        h ^= h << 13; h ^= h >> 17; h ^= h << 5;  // xorshift32
        acc += a[(unsigned long long)(h % sectors) * 8];  // one word of a random 32-byte sector per lane
    }
    if (acc == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void wall_shared_free(float* out, int iters)
{
    __shared__ float s[32 * 32];
    for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) s[i] = (float)i;
    __syncthreads();
    volatile float* v = s;
    const int lane = threadIdx.x & 31;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += v[(k & 31) * 32 + lane];  // each bank once: 1 wavefront
    if (acc == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void wall_shared_conflict(float* out, int iters)
{
    __shared__ float s[32 * 32];
    for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) s[i] = (float)i;
    __syncthreads();
    volatile float* v = s;
    const int lane = threadIdx.x & 31;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += v[lane * 32 + (k & 31)];  // 32 rows of one bank: 32 wavefronts
    if (acc == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def bench_configs() -> tuple[SharedConfig, SharedConfig, IntConfig]:
    return (SharedConfig(4, BLOCKS, THREADS, BENCH_ITERS), SharedConfig(16, BLOCKS, THREADS, BENCH_ITERS),
            IntConfig(BLOCKS, THREADS, BENCH_ITERS))


def ideal_counts() -> dict[str, dict[str, int]]:
    """What ncu counts for each kernel on a perfect GPU, by hand: {kernel: {count: value}}.

    ``global_ld`` / ``shared_ld`` / ``shared_st``: warp instructions; ``global_ld_sectors``: 32-byte sectors;
    ``shared_ld_wavefronts`` / ``shared_st_wavefronts``: 128-byte wavefronts; ``int_ops``: integer thread
    instructions. Global walls: WARPS x GLOBAL_ITERS loads of 1, 4 or 32 sectors. Shared walls: WARPS x
    SHARED_ITERS loads of 1 or 32 wavefronts, after a fill of 1024 words / 256 threads = 4 conflict-free
    stores per thread. ``roofline machine``'s shared kernels: their configs' loads, after a fill of
    1024 (4-byte) or 2048 (16-byte) words; its INT32 kernel: IntConfig.ops.
    """
    loads = WARPS * GLOBAL_ITERS
    out: dict[str, dict[str, int]] = {
        name: {"global_ld": loads, "global_ld_sectors": loads * sectors}
        for name, sectors in (("wall_broadcast", 1), ("wall_coalesced", 4), ("wall_random", 32))
    }
    fill = WARPS * (SHARED_WORDS // THREADS)
    for name, wavefronts in (("wall_shared_free", 1), ("wall_shared_conflict", 32)):
        out[name] = {"shared_ld": WARPS * SHARED_ITERS, "shared_ld_wavefronts": WARPS * SHARED_ITERS * wavefronts,
                     "shared_st": fill, "shared_st_wavefronts": fill}
    ld32, ld128, ints = bench_configs()
    for cfg in (ld32, ld128):
        words = 2 * SHARED_UNROLL[cfg.width] * 32 * cfg.width // 4
        stores = cfg.blocks * (cfg.threads // 32) * (words // cfg.threads)
        out[cfg.kernel_name] = {"shared_ld": cfg.warp_loads, "shared_ld_wavefronts": cfg.wavefronts,
                                "shared_st": stores, "shared_st_wavefronts": stores}
    out[ints.kernel_name] = {"int_ops": ints.ops}
    return out


# -- the program profiled (python THIS target) ------------------------------------------------------------

def run_targets(launch: bool = True) -> dict[str, Any]:
    """Launch every kernel once (after compiling them all) and return what was launched."""
    ld32, ld128, ints = bench_configs()
    info: dict[str, Any] = {"blocks": BLOCKS, "threads": THREADS, "global_iters": GLOBAL_ITERS,
                            "shared_iters": SHARED_ITERS, "bench_iters": BENCH_ITERS, "expected": ideal_counts()}
    if not launch:
        return info
    import cupy as cp
    import numpy as np

    walls = cp.RawModule(code=WALL_SOURCE)
    bench = {name: cp.RawModule(code=src) for name, src in
             ((SHARED_KERNEL[4], SHARED_SOURCES[4]), (SHARED_KERNEL[16], SHARED_SOURCES[16]), ("int_mix", INT_SOURCE))}
    a = cp.arange(WORDS, dtype=cp.float32)
    out = cp.empty(BLOCKS * THREADS, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.int32)
    grid, block = (BLOCKS,), (THREADS,)
    walls.get_function("wall_broadcast")(grid, block, (a, out, np.int32(GLOBAL_ITERS)))
    walls.get_function("wall_coalesced")(grid, block, (a, out, np.int32(GLOBAL_ITERS)))
    walls.get_function("wall_random")(grid, block, (a, out, np.int32(GLOBAL_ITERS), np.uint32(WORDS // 8)))
    walls.get_function("wall_shared_free")(grid, block, (out, np.int32(SHARED_ITERS)))
    walls.get_function("wall_shared_conflict")(grid, block, (out, np.int32(SHARED_ITERS)))
    for cfg in (ld32, ld128):
        bench[cfg.kernel_name].get_function(cfg.kernel_name)(grid, block, (sink, np.int32(cfg.iters)))
    ints_out = cp.empty(BLOCKS * THREADS, dtype=cp.uint32)
    bench["int_mix"].get_function("int_mix")(grid, block, (ints_out, np.uint32(0x9E3779B9), np.int32(ints.iters)))
    cp.cuda.Device().synchronize()
    return info


# -- the checks ---------------------------------------------------------------------------------------------

#: ncu metric (and its unit in the raw page) of each ideal count: the names roofline.counting reads.
IDEAL_METRICS = {
    "global_ld": ("smsp__sass_inst_executed_op_global_ld.sum", "inst"),
    "global_ld_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector"),
    "shared_ld": ("smsp__sass_inst_executed_op_shared_ld.sum", "inst"),
    "shared_st": ("smsp__sass_inst_executed_op_shared_st.sum", "inst"),
    "shared_ld_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", ""),
    "shared_st_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", ""),
    "int_ops": ("sm__sass_thread_inst_executed_op_integer_pred_on.sum", "inst"),
}
#: Metrics of the ideal report that are zero for every kernel (no global stores, no local memory).
IDEAL_ZEROS = {"smsp__sass_inst_executed_op_global_st.sum": "inst", "smsp__sass_inst_executed_op_local_ld.sum": "inst",
               "smsp__sass_inst_executed_op_local_st.sum": "inst",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "sector",
               "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": "sector",
               "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": "sector"}


def ideal_report(path: Path, compute_capability: str = "9.0") -> Path:
    """The raw ncu page (``ncu --import --page raw --csv``) a perfect GPU would give: one row per kernel."""
    head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC"]
    metrics = {**dict(IDEAL_METRICS.values()), "gpu__time_duration.sum": "usecond", **IDEAL_ZEROS}
    lines = [",".join(f'"{h}"' for h in head + list(metrics)),
             ",".join(['""'] * len(head) + [f'"{u}"' for u in metrics.values()])]
    for i, (kernel, counts) in enumerate(ideal_counts().items()):
        ident = [i, 4242, "python3", "127.0.0.1", kernel, 1, 7, f"({THREADS}, 1, 1)", f"({BLOCKS}, 1, 1)", 0,
                 compute_capability]
        values = [counts.get(k, 0) for k in IDEAL_METRICS] + [100.0] + [0] * len(IDEAL_ZEROS)
        lines.append(",".join(f'"{v}"' for v in ident + values))
    path.write_text("\n".join(lines) + "\n")
    return path


def _by_kernel(frame: Any) -> dict[str, dict[str, float]]:
    """Counts per kernel (summed over launches), with the library's instruction columns."""
    from roofline.analysis.patterns import instruction_columns

    cols = ["global_inst", "l1_transactions", "shared_inst", "shared_transactions", "int_ops", "warp_inst",
            "time_s", "shared_bytes"]
    present = [c for c in cols if c in frame.columns]
    grouped = frame.groupby(frame["kernel_name"].astype(str), sort=False)[present].sum(min_count=1)
    derived = instruction_columns(grouped)
    out: dict[str, dict[str, float]] = {}
    for name in grouped.index:
        key = next((k for k in ideal_counts() if str(name).startswith(k)), str(name))
        row = {c: _num(grouped.at[name, c]) for c in present}
        row.update({c: derived.at[name, c] for c in ("global_ii", "shared_ii", "global_pattern", "shared_pattern")})
        out[key] = row
    return out


def _num(value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.nan
    return v


def _verdict(ratio: float | None, low: float, high: float) -> str:
    if ratio is None or not math.isfinite(ratio):
        return "NOT COUNTED"
    return "PASS" if low <= ratio <= high else "FAIL"


def check_counts(kernels: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per check: the walls (5 %), the shared kernels' load wavefronts (1 %), INT32 (ncu / ours in [1, 1.03])."""
    rows: list[dict[str, Any]] = []
    for kernel, (column, wall) in WALLS.items():
        k = kernels.get(kernel, {})
        value = k.get(column)
        value = float(value) if value is not None and not isinstance(value, str) else math.nan
        ratio = value / wall if math.isfinite(value) else None
        pattern = k.get("global_pattern" if column == "global_ii" else "shared_pattern")
        rows.append({"check": f"{kernel}: {column}", "measured": value, "expected": wall, "ratio": ratio,
                     "pattern": None if pattern is None or str(pattern) == "<NA>" else str(pattern),
                     "verdict": _verdict(ratio, 1 - TOLERANCE, 1 + TOLERANCE),
                     "note": None if kernel in kernels else "kernel not in the profile"})
    ideal = ideal_counts()
    for cfg in bench_configs()[:2]:
        k = kernels.get(cfg.kernel_name, {})
        want = ideal[cfg.kernel_name]["shared_ld_wavefronts"] + ideal[cfg.kernel_name]["shared_st_wavefronts"]
        got = _num(k.get("shared_transactions"))
        ratio = got / want if math.isfinite(got) else None
        rows.append({"check": f"{cfg.kernel_name}: shared wavefronts (loads {cfg.wavefronts} + fill)", "measured": got,
                     "expected": want, "ratio": ratio, "pattern": None, "verdict": _verdict(ratio, 0.99, 1.01),
                     "note": f"bytes counted by roofline machine: {cfg.bytes_moved}"})
    ints = bench_configs()[2]
    got = _num(kernels.get(ints.kernel_name, {}).get("int_ops"))
    ratio = got / ints.ops if math.isfinite(got) else None
    rows.append({"check": "int_mix: integer instructions (ncu / IntConfig.ops)", "measured": got, "expected": ints.ops,
                 "ratio": ratio, "pattern": None, "verdict": _verdict(ratio, 1.0, 1.03),
                 "note": "ncu also counts the loop counter and set-up (about 1 %), which IntConfig leaves out"})
    return rows


def part_walls(out: Path, summary: dict[str, Any], args: argparse.Namespace) -> None:
    from roofline.readers import kernel_json, read_profile

    if args.dry_run:
        table = read_profile([ideal_report(out / "instr.ideal.csv", args.arch or "9.0")])
        summary["profile"] = {"dry_run": True, "report": "instr.ideal.csv"}
    else:
        cmd = [sys.executable, "-m", "roofline", "profile", "-o", str(out / "instr"), "--force", "--ncu", args.ncu, "--clock-control", "none",
               "--kernel-name", "regex:^(wall_|shared_ld|int_mix)", *(["--arch", args.arch] if args.arch else []),
               "--", sys.executable, str(Path(__file__).resolve()), "target", *(["--no-launch"] if args.no_launch else [])]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=args.timeout, env=env)
        (out / "profile.log").write_text(proc.stdout + proc.stderr)
        summary["profile"] = {"command": shlex.join(cmd), "rc": proc.returncode,
                              "seconds": round(time.perf_counter() - t0, 2), "log": "profile.log"}
        if not (out / "instr.kernels.json").exists():
            summary["checks"] = [{"check": "roofline profile", "verdict": f"NOT RUN (rc {proc.returncode}, see profile.log)"}]
            return
        table = kernel_json.read(out / "instr.kernels.json")
    kernels = _by_kernel(table.frame)
    summary["kernels"] = kernels
    summary["checks"] = check_counts(kernels)


def run_machine(mode: str) -> Any:
    """The ``roofline machine`` characterization of GPU 0 (tests replace this with a fake GPU)."""
    from roofline.bench.gpu.measure import measure_gpu

    return measure_gpu(mode=mode)  # type: ignore[arg-type]


def part_machine(out: Path, summary: dict[str, Any], args: argparse.Namespace) -> None:
    rows = summary.setdefault("checks", [])
    if args.dry_run:
        rows.append({"check": "roofline machine", "verdict": "NOT RUN (dry run)"})
        return
    try:
        m = run_machine(args.mode)
    except Exception as exc:  # record and go on: the walls above are kept
        rows.append({"check": "roofline machine", "verdict": f"NOT RUN ({type(exc).__name__}: {exc})"})
        return
    m.machine.save(out / "machine.json", force=True)
    checks = dict(m.checks)
    shared, int32 = m.machine.memory.get("shared"), m.machine.compute.get("int32")
    summary["machine"] = {"shared": shared, "shared_by_width": m.machine.metadata.get("shared_by_width"),
                          "shared_wavefronts_per_s": shared / 128 if shared else None, "int32": int32,
                          "clock_hz": dict(m.clock_hz), "checks": checks, "notes": list(m.notes),
                          "elapsed_s": m.elapsed_s}
    r = checks.get("shared_vs_theoretical_at_observed_clock")
    rows.append({"check": "shared memory vs 128 B/clk/SM x SMs x observed clock", "measured": shared,
                 "expected": shared / r if r else None, "ratio": r, "verdict": _verdict(r, 0.80, 1.05),
                 "note": f"by load width (B): {m.machine.metadata.get('shared_by_width')}"})
    r = checks.get("int32_vs_theoretical_at_observed_clock")
    rows.append({"check": "INT32 mix vs the Programming Guide's 64/clk/SM x SMs x observed clock", "measured": int32,
                 "expected": int32 / r if r else None, "ratio": r, "verdict": _verdict(r, 0.80, 2.05),
                 "note": "IMAD (FMA pipe) and IADD3 (ALU) issue side by side: up to 2x the one-class figure"})
    rows.append({"check": f"{args.mode} run under 60 s (60 s / in-process time)", "measured": m.elapsed_s,
                 "expected": 60.0, "ratio": 60.0 / m.elapsed_s if m.elapsed_s else None,
                 "verdict": _verdict(60.0 / m.elapsed_s if m.elapsed_s else None, 1.0, math.inf)})


def render(summary: dict[str, Any]) -> str:
    """The summary as a Markdown table."""
    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "-"
        return f"{v:.4g}" if isinstance(v, (int, float)) else str(v)

    lines = ["# Instruction roofline on a GPU: walls, counts, shared-memory ceiling", "",
             f"date: {summary.get('date')}  ", f"dry run: {summary.get('dry_run')}", "",
             "| check | measured | expected | ratio | pattern | verdict |", "|---|---|---|---|---|---|"]
    for r in summary.get("checks", []):
        lines.append(f"| {r['check']} | {fmt(r.get('measured'))} | {fmt(r.get('expected'))} | {fmt(r.get('ratio'))} | "
                     f"{fmt(r.get('pattern'))} | {r['verdict']} |")
    if summary.get("environment"):
        lines += ["", "```", json.dumps(summary["environment"], indent=2), "```"]
    if summary.get("profile"):
        lines += ["", f"profile: `{json.dumps(summary['profile'])}`"]
    return "\n".join(lines) + "\n"


def part_env(summary: dict[str, Any], args: argparse.Namespace) -> None:
    env: dict[str, Any] = {"python": sys.version.split()[0]}
    for name, cmd in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,clocks.sm,"
                                      "clocks.max.sm", "--format=csv,noheader"]), ("ncu", [args.ncu, "--version"])):
        if args.dry_run:
            continue
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            env[name] = (p.stdout.strip().splitlines() or ["?"])[-1]
        except (OSError, subprocess.TimeoutExpired) as exc:
            env[name] = f"unavailable ({exc})"
    summary["environment"] = env


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["target"]:  # the profiled program
        info = run_targets(launch="--no-launch" not in argv)
        print("TARGET " + json.dumps(info), flush=True)
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir", type=Path)
    p.add_argument("--ncu", default="ncu", help="the ncu executable (default: ncu on PATH)")
    p.add_argument("--arch", default=None, help="compute capability for roofline profile's metric set (default: detected)")
    p.add_argument("--mode", default="default", choices=("quick", "default", "thorough"), help="roofline machine mode")
    p.add_argument("--parts", default="walls,machine", help="comma-separated: walls, machine")
    p.add_argument("--dry-run", action="store_true", help="no GPU, no ncu: a perfect GPU's report, no characterization")
    p.add_argument("--no-launch", action="store_true", help=argparse.SUPPRESS)  # the target prints, launches nothing
    p.add_argument("--timeout", type=int, default=300, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    if set(parts) - {"walls", "machine"}:
        p.error(f"unknown parts: {', '.join(sorted(set(parts) - {'walls', 'machine'}))}")
    args.outdir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "dry_run": args.dry_run,
                               "command": shlex.join([sys.executable, *sys.argv])}
    part_env(summary, args)
    if "walls" in parts:
        part_walls(args.outdir, summary, args)
    if "machine" in parts:
        part_machine(args.outdir, summary, args)
    (args.outdir / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    text = render(summary)
    (args.outdir / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

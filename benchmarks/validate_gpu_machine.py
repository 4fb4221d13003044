"""Validate `roofline machine` on a real NVIDIA GPU (issue 3): one command, everything in one run.

    PYTHONPATH=src python3 benchmarks/validate_gpu_machine.py OUTDIR [--device 0] [--mode default]

Runs, in this order and in one process (plus one CLI subprocess):

1. ``roofline machine --gpu N -o ... --png ... --ert-json ...`` as a user would, timed wall-clock
   (Python start-up and imports included): the "whole default run under 60 s" target;
2. ``measure_gpu`` in-process (a second characterization: run-to-run differences are reported);
3. same-run references: a plain device-to-device copy (``torch.Tensor.copy_``, 2 GiB, bytes read
   + written) and a plain ``torch.matmul`` of random 8192^3 BF16 and FP16 matrices (CUDA events,
   median of 10 after 3 warm-ups);
4. the issue's targets, each as a ratio measured in this run.

Writes into OUTDIR (at most 7 files, so that a device run can return them with a log):
summary.md, summary.json, machine.json, sweeps.csv, cli_output.txt, sweep.png, roofline_ert.json.
Prints the summary table last. Never changes the GPU's clocks or settings.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def environment(device: int) -> dict[str, Any]:
    """GPU, driver, CUDA, library versions and the clocks right now (NVML), as reported."""
    env: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(),
                           "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        from roofline.machine.gpu_info import read_device_info

        env["device"] = read_device_info(device).to_dict()
    except Exception as exc:
        env["device_error"] = f"{type(exc).__name__}: {exc}"
    try:
        import pynvml as nv

        nv.nvmlInit()
        h = nv.nvmlDeviceGetHandleByIndex(device)
        env["nvml"] = {
            "sm_clock_now_hz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM) * 1e6,
            "mem_clock_now_hz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM) * 1e6,
            "sm_clock_max_hz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM) * 1e6,
            "mem_clock_max_hz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM) * 1e6,
            "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3,
            "temperature_c": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
        }
        nv.nvmlShutdown()
    except Exception as exc:
        env["nvml_error"] = f"{type(exc).__name__}: {exc}"
    for mod in ("cupy", "torch", "numpy"):
        try:
            env[f"{mod}_version"] = __import__(mod).__version__
        except Exception as exc:
            env[f"{mod}_version"] = f"unavailable ({exc})"
    try:
        import torch

        env["torch_cuda"] = torch.version.cuda
    except Exception:
        pass
    return env


def run_cli(device: int, mode: str, outdir: Path) -> dict[str, Any]:
    """The user's command, timed; its table goes to cli_output.txt, its files into OUTDIR."""
    with tempfile.TemporaryDirectory() as tmp:
        machine_json = Path(tmp) / "cli_machine.json"
        cmd = [sys.executable, "-m", "roofline", "machine", "--gpu", str(device), "-o", str(machine_json),
               "--png", str(outdir / "sweep.png"), "--force"]
        try:
            import roofline.machine.ert  # noqa: F401  (the ERT export ships with the CPU work)

            cmd += ["--ert-json", str(outdir / "roofline_ert.json")]
        except ImportError:
            pass
        if mode != "default":
            cmd.append(f"--{mode}")
        envvars = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=envvars, timeout=540)
        wall = time.perf_counter() - t0
        (outdir / "cli_output.txt").write_text(
            f"$ {shlex.join(cmd)}\n# exit {proc.returncode}, {wall:.1f} s wall\n\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
        out: dict[str, Any] = {"command": shlex.join(cmd), "exit": proc.returncode, "wall_s": wall}
        if machine_json.exists():
            out["machine"] = json.loads(machine_json.read_text())
        return out


def events_median(fn: Any, repeats: int = 10, warmup: int = 3) -> float:
    """Median seconds of ``fn()`` timed with torch CUDA events."""
    import torch

    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


def torch_references(device: int) -> dict[str, Any]:
    """Plain device-to-device copy and torch.matmul 8192^3 (bf16, fp16) on random data."""
    import torch

    dev = torch.device("cuda", device)
    out: dict[str, Any] = {}
    n_bytes = 2 * 2**30
    src = torch.randint(0, 255, (n_bytes,), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    t = events_median(lambda: dst.copy_(src))
    out["copy_bytes"] = n_bytes
    out["copy_bandwidth"] = 2 * n_bytes / t  # read + written
    del src, dst
    n = 8192
    for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        t = events_median(lambda: torch.matmul(a, b))
        out[f"matmul_{name}_flops"] = 2 * n**3 / t
        del a, b
    torch.cuda.empty_cache()
    return out


def targets(m: Any, refs: dict[str, Any], cli: dict[str, Any], spec: Any) -> list[dict[str, Any]]:
    """The issue's targets as (name, ratio, threshold, pass) rows; None where not measurable.

    ``spec``: the GPU's :class:`~roofline.machine.gpu_specs.GpuSpec` (live counts and clocks,
    vendor datasheet figures when the product is known), or None.
    """
    from roofline.machine.theoretical import theoretical_from_spec

    mach = m.machine
    rows: list[dict[str, Any]] = []

    def add(name: str, value: float | None, threshold: float, note: str = "") -> None:
        ok = None if value is None or not math.isfinite(value) else value >= threshold
        rows.append({"target": name, "ratio": value, "threshold": threshold, "pass": ok, "note": note})

    ds = dict(spec.datasheet) if spec else {}
    dram = mach.memory.get("dram")
    add("HBM vs datasheet", dram / ds["dram"] if dram and "dram" in ds else None, 0.90,
        f"datasheet {ds.get('dram', float('nan')) / 1e12:.3g} TB/s")
    add("HBM vs torch copy_ (same run)", dram / refs["copy_bandwidth"] if dram and "copy_bandwidth" in refs else None, 1.0)
    add("HBM vs cudaMemcpy D2D (same run)", m.checks.get("dram_vs_copy"), 1.0)
    for key in ("fp64", "fp32"):
        clock = m.clock_hz.get(key)
        if spec and key in mach.compute and clock:
            at = theoretical_from_spec(spec, sm_clock_hz=clock).compute[key]
            add(f"{key.upper()} vs theoretical at observed clock", mach.compute[key] / at, 0.95,
                f"observed {clock / 1e6:.0f} MHz")
        else:
            add(f"{key.upper()} vs theoretical at observed clock", None, 0.95, "not measured")
    for key in ("tensor_bf16", "tensor_fp16"):
        v = mach.compute.get(key)
        add(f"dense {key} vs datasheet", v / ds[key] if v and key in ds else None, 0.75)
        ref = refs.get(f"matmul_{key.split('_')[1]}_flops")
        add(f"torch.matmul 8192^3 {key.split('_')[1]} vs datasheet (reference)",
            ref / ds[key] if ref and key in ds else None, 0.75, "plain torch, for comparison")
    l2 = mach.memory.get("l2")
    if spec and spec.arch == "gh100":
        add("L2 vs 7.8 TB/s (H100 target)", l2 / 7.8e12 if l2 else None, 1.0)
    l1, l1_clock = mach.memory.get("l1"), m.clock_hz.get("l1")
    if spec and l1 and l1_clock:
        add("L1 vs 128 B/clk/SM x SMs x observed clock", l1 / (128 * spec.sms * l1_clock), 0.80,
            f"observed {l1_clock / 1e6:.0f} MHz")
    else:
        add("L1 vs 128 B/clk/SM x SMs x observed clock", None, 0.80, "not measured")
    wall = cli.get("wall_s")
    add("default run under 60 s (CLI wall clock, 60 s / time)", 60.0 / wall if wall else None, 1.0,
        f"{wall:.1f} s" if wall else "CLI failed")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--mode", default="default", choices=("quick", "default", "thorough"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    args.outdir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"command": shlex.join([sys.executable, *sys.argv]), "errors": {}}
    summary["environment_before"] = environment(args.device)
    print(json.dumps(summary["environment_before"], indent=1), flush=True)

    try:
        summary["cli"] = run_cli(args.device, args.mode, args.outdir)
        print(f"CLI: exit {summary['cli']['exit']} in {summary['cli']['wall_s']:.1f} s", flush=True)
    except Exception as exc:
        summary["errors"]["cli"] = f"{type(exc).__name__}: {exc}"
        summary["cli"] = {}

    from roofline.machine.gpu_bench import measure_gpu

    def progress(label: str, f: float) -> None:
        print(f"  [{f:5.1%}] {label}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    m = measure_gpu(device=args.device, mode=args.mode, progress=progress)
    summary["in_process_wall_s"] = time.perf_counter() - t0
    m.machine.save(args.outdir / "machine.json", force=True)
    import pandas as pd

    pd.concat([df.assign(sweep=name) for name, df in m.sweeps.items()]).to_csv(args.outdir / "sweeps.csv", index=False)
    summary["measured"] = m.machine.to_dict()
    summary["theoretical"] = m.theoretical.to_dict() if m.theoretical else None
    summary["checks"], summary["notes"], summary["clock_hz"] = dict(m.checks), list(m.notes), dict(m.clock_hz)
    summary["cache_sizes"] = dict(m.cache_sizes)

    try:
        summary["references"] = torch_references(args.device)
    except Exception as exc:
        summary["errors"]["references"] = f"{type(exc).__name__}: {exc}"
        summary["references"] = {}
    spec = None
    try:
        from roofline.machine.gpu_info import read_device_info
        from roofline.machine.theoretical import spec_from_device

        spec = spec_from_device(read_device_info(args.device))
    except Exception as exc:
        summary["errors"]["spec"] = f"{type(exc).__name__}: {exc}"
    summary["targets"] = targets(m, summary["references"], summary["cli"], spec)
    cli_machine = summary["cli"].get("machine")
    if cli_machine:  # run-to-run: the CLI's characterization against the in-process one
        summary["run_to_run"] = {
            k: cli_machine[g][k] / v for g in ("memory", "compute")
            for k, v in m.machine.to_dict()[g].items() if k in cli_machine.get(g, {})}
    summary["environment_after"] = environment(args.device)
    (args.outdir / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    text = render(summary)
    (args.outdir / "summary.md").write_text(text)
    print(text)
    return 0


def render(s: dict[str, Any]) -> str:
    from roofline.units import format_si

    dev = s["environment_before"].get("device", {})
    lines = [f"# roofline machine validation: {dev.get('name', '?')}", "",
             f"- date (UTC): {s['environment_before']['date_utc']}",
             f"- GPU: {dev.get('name')} (cc {dev.get('compute_capability')}, {dev.get('sms')} SMs), "
             f"driver {dev.get('driver_version')}, CUDA runtime {dev.get('cuda_runtime_version')}, "
             f"driver API {dev.get('cuda_driver_version')}, CuPy {dev.get('cupy_version')}, "
             f"torch {s['environment_before'].get('torch_version')} (CUDA {s['environment_before'].get('torch_cuda')})",
             f"- clocks before: {s['environment_before'].get('nvml')}",
             f"- clocks observed during the run (Hz): {s.get('clock_hz')}",
             f"- command: `{s['command']}`; CLI: `{s.get('cli', {}).get('command')}`",
             f"- CLI wall time {s.get('cli', {}).get('wall_s', float('nan')):.1f} s; in-process "
             f"measure_gpu {s.get('in_process_wall_s', float('nan')):.1f} s", "",
             "| ceiling | measured | theoretical |", "|---|---|---|"]
    th = (s.get("theoretical") or {})
    for group, unit in (("memory", "B/s"), ("compute", "FLOP/s")):
        for k, v in s["measured"][group].items():
            lines.append(f"| {k} | {format_si(v, unit)} | {format_si((th.get(group) or {}).get(k), unit)} |")
    lines += ["", "| target | ratio | threshold | pass | note |", "|---|---|---|---|---|"]
    for r in s["targets"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        lines.append(f"| {r['target']} | {ratio} | {r['threshold']} | {r['pass']} | {r['note']} |")
    refs = s.get("references", {})
    if refs:
        lines += ["", f"references (same run): torch copy_ {format_si(refs.get('copy_bandwidth'), 'B/s')}, "
                  f"torch.matmul bf16 {format_si(refs.get('matmul_bf16_flops'), 'FLOP/s')}, "
                  f"fp16 {format_si(refs.get('matmul_fp16_flops'), 'FLOP/s')}"]
    if s.get("run_to_run"):
        lines += ["", "run to run (CLI run / in-process run): " + ", ".join(
            f"{k} {v:.3f}" for k, v in s["run_to_run"].items())]
    for n in s.get("notes", []):
        lines.append(f"- note: {n}")
    for k, e in s.get("errors", {}).items():
        lines.append(f"- ERROR in {k}: {e}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

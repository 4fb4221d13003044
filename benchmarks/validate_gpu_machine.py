"""Validate `roofline machine` on a real NVIDIA GPU (issues 3 and 15): one command, everything in one run.

    PYTHONPATH=src python3 benchmarks/validate_gpu_machine.py OUTDIR [--device 0] [--mode default] [--dry-run]

Runs, in this order and in one process (plus one CLI subprocess):

1. ``roofline machine --gpu N -o ... --png ... --ert-json ...`` as a user would, timed wall-clock
   (Python start-up and imports included): the "whole default run under 60 s" target;
2. ``measure_gpu`` in-process (a second characterization: run-to-run differences are reported);
3. same-run references: a plain device-to-device copy (``torch.Tensor.copy_``, 2 GiB, bytes read
   + written) and a plain ``torch.matmul`` of random 8192^3 BF16 and FP16 matrices (CUDA events,
   median of 10 after 3 warm-ups);
4. the issue's targets, each as a ratio measured in this run (:func:`targets`), and every ceiling
   with its spread and the SM clock seen while it ran.

Writes into OUTDIR: summary.md, summary.json, machine.json, cli_machine.json (the CLI run's), sweeps.csv,
cli_output.txt, sweep.png, roofline_ert.json. Prints the summary table last. Never changes the GPU's clocks or settings.

``--dry-run`` needs no GPU: ``measure_gpu`` runs on the fake GPU of tests/fake_gpu.py (an
H100-like cache model), the CLI step and the torch references are recorded as "NOT RUN (dry run)",
and every file is still written (sweep.png from the fake sweeps). Nothing it writes is measured:
the machine's name says so.
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
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DRY_RUN = "NOT RUN (dry run)"
#: torch.matmul reference size (the issue's 8192^3)
MATMUL_N = 8192


def fake_gpu() -> Any:
    """The fake H100 of tests/fake_gpu.py (dry runs only: it is test code)."""
    sys.path.insert(0, str(REPO / "tests"))
    from fake_gpu import FakeGpu

    return FakeGpu()


def environment(device: int, fake: Any = None) -> dict[str, Any]:
    """GPU, driver, CUDA, library versions and the clocks right now (NVML), as reported; with a
    ``fake`` GPU (dry run) its device record and no NVML."""
    env: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(),
                           "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if fake is not None:
        env["device"] = fake.device_info().to_dict()
        env["dry_run"] = f"fake GPU {type(fake).__module__}.{type(fake).__name__}: {DRY_RUN}, nothing measured"
        env["nvml"] = DRY_RUN
    else:
        _device_environment(device, env)
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


def _device_environment(device: int, env: dict[str, Any]) -> None:
    try:
        from roofline.machine.gpu_device import read_device_info

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


def run_cli(device: int, mode: str, outdir: Path) -> dict[str, Any]:
    """The user's command, timed; its table goes to cli_output.txt, its files into OUTDIR."""
    with tempfile.TemporaryDirectory() as tmp:
        machine_json = Path(tmp) / "cli_machine.json"
        cmd = [sys.executable, "-m", "roofline", "machine", "--gpu", str(device), "-o", str(machine_json),
               "--png", str(outdir / "sweep.png"), "--force"]
        try:
            import roofline.writing.ert_json  # noqa: F401  (the ERT export ships with the CPU work)

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
            # kept beside the in-process one: if that run is cut short, the CLI's measurement still comes back
            (outdir / "cli_machine.json").write_text(machine_json.read_text())
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
    """Plain device-to-device copy and torch.matmul 8192^3 (bf16, fp16) on random data (B/s, FLOP/s)."""
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
    n = MATMUL_N
    for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        t = events_median(lambda: torch.matmul(a, b))
        out[f"matmul_{name}_flops"] = 2 * n**3 / t
        del a, b
    torch.cuda.empty_cache()
    return out


class _Rows:
    """Target rows: ``ratio >= threshold`` passes; threshold None is recorded only (the issue gives none)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, name: str, value: float | None, threshold: float | None, note: str = "") -> None:
        if value is not None and not math.isfinite(value):
            value = None
        ok = None if value is None or threshold is None else value >= threshold
        if value is None and note.startswith(DRY_RUN):
            verdict, note = DRY_RUN, note[len(DRY_RUN):].lstrip(":; ")
        elif value is None:
            verdict = "not measured"
        elif threshold is None:
            verdict = "recorded"
        else:
            verdict = "pass" if ok else "MISS"
        self.rows.append({"target": name, "ratio": value, "threshold": threshold, "pass": ok, "verdict": verdict,
                          "note": note})

    def check(self, name: str, ok: bool | None, note: str) -> None:
        """A yes/no check (no ratio)."""
        verdict = "not checked" if ok is None else ("pass" if ok else "MISS")
        self.rows.append({"target": name, "ratio": None, "threshold": None, "pass": ok, "verdict": verdict,
                          "note": note})


def _why_missing(source: dict[str, Any], what: str) -> str:
    return source.get("not_run") or f"no {what}"


def _not_measured(m: Any, key: str) -> str:
    """The measurement's own note on why ``key`` is missing, or 'not measured'."""
    return next((n for n in m.notes if n.startswith(f"{key} not measured")), f"{key} not measured")


def targets(m: Any, refs: dict[str, Any], cli: dict[str, Any], spec: Any,
            machine_file: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The issue's targets as rows (target, ratio, threshold, pass, verdict, note); ratio None where
    not measurable, never a made-up one.

    ``m``: the in-process :class:`~roofline.bench.evidence.Measurement`; ``refs``: the same
    run's torch references (:func:`torch_references`, or ``{"not_run": why}``); ``cli``: the CLI
    run (:func:`run_cli`, or ``{"not_run": why}``); ``spec``: the GPU's
    :class:`~roofline.machine.specs.GpuSpec` (live counts and clocks, vendor datasheet figures
    when the product is known), or None; ``machine_file``: machine.json as written, or None.
    """
    rows = _Rows()
    _memory_targets(rows, m, refs, spec)
    _fma_targets(rows, m, spec)
    _tensor_targets(rows, m, refs, spec)
    ok, note = machine_file_check(machine_file)
    rows.check("machine.json: schema roofline.machine/1, source measured, name with H100 or H200", ok, note)
    wall = cli.get("wall_s") if cli.get("exit", 0) == 0 else None  # a CLI that failed fast passes nothing
    rows.add("default run under 60 s (CLI wall clock, 60 s / time)", 60.0 / wall if wall else None, 1.0,
             f"{wall:.1f} s" if wall else _why_missing(cli, f"CLI wall time (CLI exit {cli.get('exit')})"))
    return rows.rows


def _memory_targets(rows: _Rows, m: Any, refs: dict[str, Any], spec: Any) -> None:
    mach = m.machine
    ds = dict(spec.datasheet) if spec else {}
    dram = mach.memory.get("dram")
    rows.add("HBM vs datasheet", dram / ds["dram"] if dram and "dram" in ds else None, 0.90,
             f"datasheet {ds['dram'] / 1e12:.3g} TB/s" if "dram" in ds else "no datasheet figure")
    copy = refs.get("copy_bandwidth")
    rows.add("HBM vs torch copy_ (same run)", dram / copy if dram and copy else None, 1.0,
             "bytes read + written" if copy else _why_missing(refs, "torch copy_ reference"))
    rows.add("HBM vs cudaMemcpy D2D (same run)", m.checks.get("dram_vs_copy"), 1.0)
    l2 = mach.memory.get("l2")
    if spec and spec.arch == "gh100":
        rows.add("L2 vs 7.8 TB/s (H100 target)", l2 / 7.8e12 if l2 else None, 1.0)
    l1, l1_clock = mach.memory.get("l1"), m.clock_hz.get("l1")
    if spec and l1 and l1_clock:
        rows.add("L1 vs 128 B/clk/SM x SMs x observed clock", l1 / (128 * spec.sms * l1_clock), 0.80,
                 f"observed {l1_clock / 1e6:.0f} MHz")
    else:
        rows.add("L1 vs 128 B/clk/SM x SMs x observed clock", None, 0.80, "not measured")
    found = [k for k in ("l1", "l2", "dram") if k in mach.memory]
    rows.check("sweep shows the L1, L2 and HBM plateaus", len(found) == 3,
               f"plateaus found: {', '.join(found) or 'none'} (see sweep.png)")


def _fma_targets(rows: _Rows, m: Any, spec: Any) -> None:
    from roofline.machine.theoretical import theoretical_from_spec

    names = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16 (half2 FMA)", "bf16": "BF16 (bfloat162 FMA)"}
    for key, label in names.items():
        clock, value = m.clock_hz.get(key), m.machine.compute.get(key)
        at = theoretical_from_spec(spec, sm_clock_hz=clock).compute.get(key) if spec and clock else None
        if value and at:
            rows.add(f"{label} vs theoretical at observed clock", value / at, 0.95, f"observed {clock / 1e6:.0f} MHz")
        else:
            rows.add(f"{label} vs theoretical at observed clock", None, 0.95,
                     _not_measured(m, key) if not value else "no theoretical rate or clock")


def _tensor_targets(rows: _Rows, m: Any, refs: dict[str, Any], spec: Any) -> None:
    from roofline.bench.gpu.gemm import gemm_kinds_for

    mach = m.machine
    ds = dict(spec.datasheet) if spec else {}
    n = mach.metadata.get("gemm_n")
    for key in ("tensor_bf16", "tensor_fp16"):
        v, p = mach.compute.get(key), key.split("_")[1]
        ratio, note = _vs_datasheet(m, key, ds)
        rows.add(f"dense {key} vs datasheet", ratio, 0.75, note)
        ref = refs.get(f"matmul_{p}_flops")
        size = f"roofline GEMM {n}^3, torch.matmul {MATMUL_N}^3" + ("" if n == MATMUL_N else " (NOT the same size)")
        rows.add(f"dense {key} vs torch.matmul {MATMUL_N}^3 (same run)", v / ref if v and ref else None, 0.95,
                 size if v and ref else (_not_measured(m, key) if not v else _why_missing(refs, "torch.matmul reference")))
        rows.add(f"torch.matmul {MATMUL_N}^3 {p} vs datasheet (reference)", ref / ds[key] if ref and key in ds else None,
                 None, "plain torch, for comparison" if ref else _why_missing(refs, "torch.matmul reference"))
    cc = mach.metadata.get("device", {}).get("compute_capability")  # "9.0", as DeviceInfo.to_dict writes it
    has = gemm_kinds_for(tuple(int(part) for part in str(cc).split("."))) if cc else []  # type: ignore[arg-type]
    library = str(mach.metadata.get("gemm_library") or "")
    for key in ("tensor_tf32", "tensor_fp8", "tensor_int8"):
        if key not in has:
            continue
        ratio, note = _vs_datasheet(m, key, ds)
        if ratio is not None:
            note = "recorded (the issue gives no threshold)"
        if key == "tensor_fp8" and key in mach.compute:
            note += ("; WITHOUT fast accumulation (understated)" if "WITHOUT fast accumulation" in library
                     else "; fast accumulation" if "use_fast_accum=True" in library else f"; GEMM library {library!r}")
        rows.add(f"dense {key} vs datasheet", ratio, None, note)


def _vs_datasheet(m: Any, key: str, ds: dict[str, float]) -> tuple[float | None, str]:
    """(measured ``key`` / datasheet, "") or (None, why not)."""
    v = m.machine.compute.get(key)
    if not v:
        return None, _not_measured(m, key)
    if key not in ds:
        return None, f"no datasheet figure for {key}"
    return v / ds[key], ""


def machine_file_check(d: dict[str, Any] | None) -> tuple[bool | None, str]:
    """Issue 15 item 5: schema roofline.machine/1, source measured, a name containing H100 or H200."""
    if d is None:
        return None, "no machine.json"
    from roofline.machine.model import SCHEMA

    found = f"schema {d.get('schema')!r}, source {d.get('source')!r}, name {d.get('name')!r}"
    name = str(d.get("name", ""))
    ok = d.get("schema") == SCHEMA and d.get("source") == "measured" and ("H100" in name or "H200" in name)
    return ok, found


def theoretical_at_clock(m: Any, spec: Any) -> dict[str, float]:
    """Each measured ceiling's theoretical value at the SM clock seen while it ran (DRAM: not SM-clocked)."""
    from roofline.machine.theoretical import theoretical_from_spec

    out: dict[str, float] = {}
    if spec is None:
        return out
    for group in ("memory", "compute"):
        for key in getattr(m.machine, group):
            clock = m.clock_hz.get(key)
            if clock:
                value = getattr(theoretical_from_spec(spec, sm_clock_hz=clock), group).get(key)
                if value:
                    out[key] = value
    return out


def _dry_run_machine(m: Any) -> Any:
    """The fake GPU's measurement, named so that nobody takes it for a measured one."""
    mach = m.machine
    mach = replace(mach, name=f"{mach.name} [DRY RUN, not measured]",
                   metadata={**mach.metadata, "dry_run": "tests/fake_gpu.py FakeGpu: not a measurement"})
    return replace(m, machine=mach)


def _save_sweep_png(m: Any, path: Path) -> None:
    from roofline.bench.sweep import plot_sweep

    fig = plot_sweep(dict(m.sweeps), dict(m.cache_sizes) or None, title=f"{m.machine.name}: bandwidth vs working set")
    fig.savefig(path, dpi=150)


def _read_spec(args: argparse.Namespace, fake: Any) -> Any:
    from roofline.machine.gpu_device import read_device_info
    from roofline.machine.theoretical import spec_from_device

    return spec_from_device(fake.device_info() if fake is not None else read_device_info(args.device))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--mode", default="default", choices=("quick", "default", "thorough"))
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the fake GPU of the tests, nothing measured")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    out: Path = args.outdir
    out.mkdir(parents=True, exist_ok=True)
    fake = fake_gpu() if args.dry_run else None
    summary: dict[str, Any] = {"command": shlex.join([sys.executable, *sys.argv]), "dry_run": args.dry_run,
                               "mode": args.mode, "errors": {}}
    summary["environment_before"] = environment(args.device, fake)
    print(json.dumps(summary["environment_before"], indent=1), flush=True)

    if args.dry_run:
        summary["cli"] = {"not_run": DRY_RUN, "command": f"roofline machine --gpu {args.device} ({DRY_RUN})"}
        (out / "cli_output.txt").write_text(f"{DRY_RUN}: roofline machine --gpu {args.device} needs a GPU\n")
    else:
        try:
            summary["cli"] = run_cli(args.device, args.mode, out)
            print(f"CLI: exit {summary['cli']['exit']} in {summary['cli']['wall_s']:.1f} s", flush=True)
        except Exception as exc:
            summary["errors"]["cli"] = f"{type(exc).__name__}: {exc}"
            summary["cli"] = {}

    from roofline.bench.gpu.measure import measure_gpu

    def progress(label: str, f: float) -> None:
        print(f"  [{f:5.1%}] {label}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    try:
        m = measure_gpu(device=args.device, mode=args.mode, progress=progress, backend=fake)
    except Exception as exc:  # the CLI's output and the environment are still worth keeping
        summary["errors"]["measure_gpu"] = f"{type(exc).__name__}: {exc}"
        return _finish(out, summary, 1, args.device, fake)
    if args.dry_run:
        m = _dry_run_machine(m)
    summary["in_process_wall_s"] = time.perf_counter() - t0
    m.machine.save(out / "machine.json", force=True)
    import pandas as pd

    pd.concat([df.assign(sweep=name) for name, df in m.sweeps.items()]).to_csv(out / "sweeps.csv", index=False)
    if args.dry_run or not (out / "sweep.png").exists():
        try:
            _save_sweep_png(m, out / "sweep.png")
            summary["sweep_png"] = "from the in-process run" + ("" if args.dry_run else " (the CLI wrote none)")
        except Exception as exc:
            summary["errors"]["sweep_png"] = f"{type(exc).__name__}: {exc}"
    summary["measured"] = m.machine.to_dict()
    summary["theoretical"] = m.theoretical.to_dict() if m.theoretical else None
    summary["checks"], summary["notes"], summary["clock_hz"] = dict(m.checks), list(m.notes), dict(m.clock_hz)
    summary["cache_sizes"] = dict(m.cache_sizes)

    if args.dry_run:
        summary["references"] = {"not_run": DRY_RUN}
    else:
        try:
            summary["references"] = torch_references(args.device)
        except Exception as exc:
            summary["errors"]["references"] = f"{type(exc).__name__}: {exc}"
            summary["references"] = {}
    spec = None
    try:
        spec = _read_spec(args, fake)
    except Exception as exc:
        summary["errors"]["spec"] = f"{type(exc).__name__}: {exc}"
    summary["theoretical_at_clock"] = theoretical_at_clock(m, spec)
    machine_file = json.loads((out / "machine.json").read_text())
    summary["targets"] = targets(m, summary["references"], summary["cli"], spec, machine_file)
    cli_machine = summary["cli"].get("machine")
    if cli_machine:  # run-to-run: the CLI's characterization against the in-process one
        summary["run_to_run"] = {
            k: cli_machine[g][k] / v for g in ("memory", "compute")
            for k, v in m.machine.to_dict()[g].items() if k in cli_machine.get(g, {})}
    return _finish(out, summary, 0, args.device, fake)


def _finish(out: Path, summary: dict[str, Any], rc: int, device: int, fake: Any) -> int:
    """Write summary.json and summary.md, print the summary; ``rc`` back."""
    summary["environment_after"] = environment(device, fake)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    text = render(summary)
    (out / "summary.md").write_text(text)
    print(text)
    return rc


def _fmt(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def render(s: dict[str, Any]) -> str:
    """summary.md: the environment, every ceiling with its spread and clock, every target."""
    env = s["environment_before"]
    dev = env.get("device", {})
    cli = s.get("cli", {})
    title = f"{dev.get('name', '?')}" + (" -- DRY RUN on a fake GPU, nothing here is measured" if s.get("dry_run") else "")
    lines = [f"# roofline machine validation: {title}", "",
             f"- date (UTC): {env['date_utc']}",
             f"- GPU: {dev.get('name')} (cc {dev.get('compute_capability')}, {dev.get('sms')} SMs), "
             f"driver {dev.get('driver_version')}, CUDA runtime {dev.get('cuda_runtime_version')}, "
             f"driver API {dev.get('cuda_driver_version')}, CuPy {dev.get('cupy_version')}, "
             f"torch {env.get('torch_version')} (CUDA {env.get('torch_cuda')})",
             f"- clocks before: {env.get('nvml')}",
             f"- command: `{s['command']}`; CLI: `{cli.get('command')}`",
             f"- CLI wall time {_fmt(cli.get('wall_s'), '.1f')} s{' (' + cli['not_run'] + ')' if 'not_run' in cli else ''}; "
             f"in-process measure_gpu {_fmt(s.get('in_process_wall_s'), '.1f')} s (mode {s.get('mode')})"]
    if s.get("measured"):
        lines += ["", *_ceiling_table(s)]
    lines += ["", "| target | ratio | threshold | verdict | note |", "|---|---|---|---|---|"]
    for r in s.get("targets", []):
        lines.append(f"| {r['target']} | {_fmt(r['ratio'])} | {_fmt(r['threshold'], 'g')} | {r['verdict']} | {r['note']} |")
    from roofline.units import format_si

    refs = s.get("references", {})
    if refs.get("not_run"):
        lines += ["", f"references (same run): torch copy_ and torch.matmul {refs['not_run']}"]
    elif refs:
        lines += ["", f"references (same run): torch copy_ {format_si(refs.get('copy_bandwidth'), 'B/s')}, "
                  f"torch.matmul {MATMUL_N}^3 bf16 {format_si(refs.get('matmul_bf16_flops'), 'FLOP/s')}, "
                  f"fp16 {format_si(refs.get('matmul_fp16_flops'), 'FLOP/s')}"]
    if s.get("run_to_run"):
        lines += ["", "run to run (CLI run / in-process run): " + ", ".join(
            f"{k} {v:.3f}" for k, v in s["run_to_run"].items())]
    lines += [f"- note: {n}" for n in s.get("notes", [])]
    lines += [f"- ERROR in {k}: {e}" for k, e in s.get("errors", {}).items()]
    return "\n".join(lines) + "\n"


def _ceiling_table(s: dict[str, Any]) -> list[str]:
    """Every ceiling: measured, spread, the SM clock seen while it ran, theoretical at the vendor's
    clocks and at that clock, and measured / theoretical at that clock."""
    from roofline.units import format_si

    th = s.get("theoretical") or {}
    at_clock = s.get("theoretical_at_clock", {})
    spread = s["measured"].get("spread", {})
    clocks = s.get("clock_hz", {})
    lines = ["| ceiling | measured | spread | SM clock | theoretical (vendor clocks) | theoretical at that clock "
             "| measured / theoretical at that clock |", "|---|---|---|---|---|---|---|"]
    for group, unit in (("memory", "B/s"), ("compute", "FLOP/s")):
        for k, v in s["measured"][group].items():
            clock = clocks.get(k)
            at = at_clock.get(k)
            lines.append(
                f"| {k} | {format_si(v, unit)} | {'-' if k not in spread else f'{100 * spread[k]:.1f} %'} "
                f"| {'-' if not clock else f'{clock / 1e6:.0f} MHz'} | {format_si((th.get(group) or {}).get(k), unit)} "
                f"| {format_si(at, unit)} | {_fmt(v / at if at else None)} |")
    return lines


if __name__ == "__main__":
    sys.exit(main())

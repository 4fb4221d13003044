"""Validate `roofline profile` on a real GPU: the checks of issue 4 in one script.

    PYTHONPATH=src python benchmarks/validate_profile_gpu.py OUTDIR [--parts env,targets,deepcam,paper,cf]

Writes under OUTDIR every raw output (.ncu-rep, ncu CSV, kernel tables, logs) and
``summary.json`` + ``summary.md`` (GPU, driver, CUDA, ncu versions, clocks, the exact
commands, the checks and their verdicts). Parts, each runnable alone (a device
session allows 10 minutes per command):

- env:     versions and clocks (nvidia-smi, ncu --version, nvcc, torch, cupy)
- targets: SAXPY DRAM bytes within 2% of 12 N; FP32 GEMM FLOPs within 1% of 2MNK;
           TF32/FP16/BF16 tensor GEMM FLOPs within 1% of 2MNK; which FP16 convention
           (ncu: 2 hadd + 2 hmul + 4 hfma, paper: hadd + hmul + 2 hfma) matches a
           kernel of known FLOPs using __hfma2 and one using scalar __hfma
- deepcam: one `roofline profile` of examples/deepcam_mini.py (timed; phases counted)
- paper:   the same program under ncu once per metric, as the paper's scripts did
           (15 runs, timed); the ratio paper / ours goes to the summary
- cf:      `roofline profile --no-counters` of deepcam_mini on the GPU (CUPTI times)
- examples: profile examples/saxpy.py and examples/deepcam_mini.py in full, for fixtures
- pair:    one side of a projection pair (saxpy at three sizes, deepcam_mini), under pair/<gpu>/:
           run on an H100 and on an H200, then `benchmarks/validate_projection.py` on the pair
- torch:   `roofline profile --torch` of examples/transformer_block.py (eager and torch.compile'd)
           and deepcam_mini: per-module charts and reports, the share of kernel time attributed
           to an operator and a module, backward launches with their module, measured vs
           estimated FLOPs per operator

Nothing here is a pass/fail test of the package: it records numbers for a person.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
NCU = os.environ.get("NCU", "ncu")  # set by --ncu
#: The metrics of the paper's per-metric runs (Yang et al., arXiv 2009.05257; DeepCAM scripts).
PAPER_METRICS = [
    "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    *[f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum" for p in "dfh" for op in ("add", "mul", "fma")],
    "sm__inst_executed_pipe_tensor.sum", "dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
]
DEEPCAM_ARGS = ["--device", "cuda", "--size", "64", "--batch", "2", "--steps", "1", "--width", "8"]


def sh(cmd: list[str], log: Path, summary: dict, timeout: int = 580) -> tuple[int, float, str]:
    """Run a command (argument list), log its output, record it; (returncode, seconds, output)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env)
        rc, text = out.returncode, out.stdout + out.stderr
    except subprocess.TimeoutExpired as exc:
        rc, text = 124, f"TIMEOUT after {timeout} s\n{exc.stdout or ''}"
    except FileNotFoundError as exc:
        rc, text = 127, str(exc)
    seconds = time.perf_counter() - t0
    log.write_text(text)
    summary.setdefault("commands", []).append({"cmd": shlex.join(cmd), "rc": rc, "seconds": round(seconds, 3),
                                               "log": log.name})
    return rc, seconds, text


def part_env(out: Path, summary: dict) -> None:
    env: dict[str, Any] = {}
    q = "name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,memory.total,power.limit"
    rc, _, text = sh(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], out / "nvidia-smi.txt", summary)
    env["nvidia_smi"] = text.strip()
    for name, cmd in (("ncu", [NCU, "--version"]), ("nvcc", ["nvcc", "--version"])):
        rc, _, text = sh(cmd, out / f"{name}-version.txt", summary)
        env[name] = text.strip().splitlines()[-1] if rc == 0 and text.strip() else f"unavailable (rc {rc})"
    rc, _, text = sh([PY, "-c", "import torch, json; print(json.dumps({'torch': torch.__version__, "
                      "'cuda': torch.version.cuda, 'cudnn': torch.backends.cudnn.version(), "
                      "'gpu': torch.cuda.get_device_name() if torch.cuda.is_available() else None}))"],
                     out / "torch.txt", summary)
    env["torch"] = text.strip().splitlines()[-1] if rc == 0 else "unavailable"
    rc, _, text = sh([PY, "-c", "import cupy; print(cupy.__version__)"], out / "cupy.txt", summary)
    env["cupy"] = text.strip() if rc == 0 else "unavailable"
    summary["environment"] = env


def _profile(out: Path, name: str, program: list[str], summary: dict, extra: list[str] = ()) -> tuple[int, float, str]:
    cmd = [PY, "-m", "roofline", "profile", "-o", str(out / name), "--json", str(out / f"{name}.json"),
           "--force", "--ncu", NCU, *extra, "--", *program]
    return sh(cmd, out / f"{name}.log", summary)


def _table(out: Path, name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "src"))
    from roofline.readers import kernel_json

    return kernel_json.read(out / f"{name}.kernels.json")


def _target_line(text: str) -> dict:
    for line in text.splitlines():
        if line.startswith("TARGET "):
            return json.loads(line[len("TARGET "):])
    return {}


def _sum(frame, col: str) -> float:  # type: ignore[no-untyped-def]
    return float(frame[col].sum(min_count=1))


def _metric_sum(metrics, name: str) -> float | None:  # type: ignore[no-untyped-def]
    for prefix in ("sm__", "smsp__"):
        col = prefix + name
        if col in metrics.columns:
            return float(metrics[col].astype(float).sum())
    return None


def part_targets(out: Path, summary: dict) -> None:
    checks = summary.setdefault("checks", {})
    targets = [
        ("saxpy", ["saxpy", "--n", str(1 << 28)]),
        *[(f"gemm_{d}", ["gemm", "--dtype", d, "--m", "4096", "--n", "4096", "--k", "4096"])
          for d in ("fp32", "tf32", "fp16", "bf16")],
        ("hfma2", ["hfma2", "--threads", str(1 << 20), "--iters", "256"]),
        ("hfma", ["hfma", "--threads", str(1 << 20), "--iters", "256"]),
    ]
    for name, args in targets:
        rc, seconds, text = _profile(out, name, [PY, str(ROOT / "benchmarks" / "gpu_targets.py"), *args], summary,
                                     ["--nvtx-include", "target/"])
        known = _target_line(text)
        entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2), "known": known}
        if rc != 0 or not known or not (out / f"{name}.kernels.json").exists():
            entry["verdict"] = "NOT RUN (see log)"
            checks[name] = entry
            continue
        t = _table(out, name)
        f = t.frame
        entry["launches"] = int(len(f))
        entry["kernels"] = sorted(set(f["kernel_name"].astype(str)))[:5]
        entry["phases"] = sorted(set(f["phase"].dropna().astype(str)))
        if name == "saxpy":
            measured, want, tol = _sum(f, "dram_bytes"), known["dram_bytes"], 0.02
            entry.update(measured_dram_bytes=measured, expected=want)
        elif name == "gemm_fp32":
            measured, want, tol = _sum(f, "fp32_flops"), known["flops"], 0.01
            entry.update(measured_fp32_flops=measured, measured_tensor_flops=_sum(f, "tensor_flops"), expected=want)
        elif name.startswith("gemm_"):
            measured, want, tol = _sum(f, "tensor_flops"), known["flops"], 0.01
            entry.update(measured_tensor_flops=measured, precisions=sorted(set(f["tensor_precision"].dropna())),
                         expected=want)
        else:
            hadd = _metric_sum(t.metrics, "sass_thread_inst_executed_op_hadd_pred_on.sum") or 0.0
            hmul = _metric_sum(t.metrics, "sass_thread_inst_executed_op_hmul_pred_on.sum") or 0.0
            hfma = _metric_sum(t.metrics, "sass_thread_inst_executed_op_hfma_pred_on.sum")
            want = known["flops"]
            entry["hfma_inst"] = hfma
            if hfma is None:
                entry["verdict"] = "NO hfma COUNTER"
                checks[name] = entry
                continue
            conv = {"ncu": 2 * hadd + 2 * hmul + 4 * hfma, "paper": hadd + hmul + 2 * hfma}
            entry["ratio_to_known"] = {k: v / want for k, v in conv.items()}
            entry["matches"] = [k for k, v in conv.items() if abs(v / want - 1) <= 0.01]
            entry["verdict"] = "convention(s) matching: " + (", ".join(entry["matches"]) or "none")
            checks[name] = entry
            continue
        entry["ratio"] = measured / want if want else None
        entry["verdict"] = "PASS" if entry["ratio"] is not None and abs(entry["ratio"] - 1) <= tol else "FAIL"
        entry["tolerance"] = tol
        checks[name] = entry


def part_deepcam(out: Path, summary: dict) -> None:
    rc, seconds, _ = _profile(out, "deepcam", [PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS], summary)
    entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
    if (out / "deepcam.kernels.json").exists():
        f = _table(out, "deepcam").frame
        entry["launches"] = int(len(f))
        entry["launches_by_phase"] = {str(k): int(v) for k, v in f["phase"].fillna("(none)").value_counts().items()}
    summary.setdefault("timing", {})["roofline_profile_s"] = round(seconds, 2)
    summary.setdefault("checks", {})["deepcam"] = entry


def part_paper(out: Path, summary: dict) -> None:
    paper = out / "paper_per_metric"
    paper.mkdir(exist_ok=True)
    total = 0.0
    for metric in PAPER_METRICS:
        cmd = [NCU, "--metrics", metric, "--nvtx", "--target-processes", "all", "--clock-control", "none",
               "--csv", "--log-file", str(paper / f"out.{metric}"), "--",
               PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS]
        rc, seconds, _ = sh(cmd, paper / f"log.{metric}", summary)
        total += seconds
    timing = summary.setdefault("timing", {})
    timing["paper_per_metric_s"] = round(total, 2)
    timing["paper_runs"] = len(PAPER_METRICS)
    if timing.get("roofline_profile_s"):
        timing["ratio_paper_over_ours"] = round(total / timing["roofline_profile_s"], 2)


def part_cf(out: Path, summary: dict) -> None:
    rc, seconds, _ = _profile(out, "deepcam_cf", [PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS],
                              summary, ["--no-counters"])
    entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
    if (out / "deepcam_cf.kernels.json").exists():
        f = _table(out, "deepcam_cf").frame
        entry.update(rows=int(len(f)), all_estimated=bool(f["estimated"].all()),
                     devices=sorted({int(d) for d in f["device"].dropna()}),
                     positive_times=int((f["time_s"] > 0).sum()))
    summary.setdefault("checks", {})["deepcam_counter_free"] = entry


def part_examples(out: Path, summary: dict) -> None:
    _profile(out, "example_saxpy", [PY, str(ROOT / "examples" / "saxpy.py"), "--backend", "torch", "--device", "cuda",
                                    "--n", str(1 << 26), "--repeat", "3"], summary)
    _profile(out, "example_deepcam", [PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS], summary)


def part_pair(out: Path, summary: dict) -> None:
    """One side of a projection pair (issue 13): run on the H100, then on the H200 (another device call
    with the other kind), then copy both folders into tests/data/ncu/pairs/h100_h200_examples/ with a
    pair.json naming the source and target files (match "name"; saxpy is the memory-bound program)."""
    import re

    smi = str(summary.get("environment", {}).get("nvidia_smi", "")).splitlines()  # header, then one line per GPU
    gpu = smi[1].split(",")[0].strip() if len(smi) > 1 else "gpu"  # run the env part first
    side = out / "pair" / re.sub(r"[^a-z0-9]+", "_", str(gpu).lower()).strip("_")
    side.mkdir(parents=True, exist_ok=True)
    for n in (1 << 24, 1 << 26, 1 << 28):  # saxpy at three sizes: over and within a 50 MB L2
        _profile(side, f"saxpy_{n}", [PY, str(ROOT / "examples" / "saxpy.py"), "--backend", "torch", "--device",
                                      "cuda", "--n", str(n), "--repeat", "3"], summary)
    _profile(side, "deepcam", [PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS], summary)
    summary.setdefault("checks", {})["pair_side"] = {"gpu": gpu, "folder": str(side)}


#: A small transformer training step (issue 12): big enough that its GEMMs use tensor cores.
TBLOCK_ARGS = ["--device", "cuda", "--batch", "8", "--seq", "512", "--dim", "512", "--heads", "8", "--layers", "2",
               "--steps", "1", "--vocab", "4096"]


def _attribution(out: Path, name: str) -> dict[str, Any]:
    """How much of the kernel time `--torch` attributed, and the measured vs estimated FLOPs per operator."""
    from roofline.analysis.estimate import measured_vs_estimated

    table = _table(out, name)
    f = table.frame
    total = float(f["time_s"].sum())
    entry: dict[str, Any] = {
        "launches": int(len(f)),
        "time_with_op": round(float(f.loc[f["op"].notna(), "time_s"].sum()) / total, 4) if total else None,
        "time_with_module": round(float(f.loc[f["module"].notna(), "time_s"].sum()) / total, 4) if total else None,
        "phases": {str(k): int(v) for k, v in f["phase"].value_counts(dropna=False).items()},
        "backward_launches_with_module": int(((f["phase"] == "backward") & f["module"].notna()).sum()),
        "backward_launches": int((f["phase"] == "backward").sum()),
    }
    estimate = out / f"{name}.estimate.kernels.json"
    if estimate.exists():
        from roofline.readers import read_profile

        cmp = measured_vs_estimated(table, read_profile([estimate]), by="op")
        entry["measured_vs_estimated_by_op"] = json.loads(cmp.to_json(orient="records"))
    return entry


def part_torch(out: Path, summary: dict) -> None:
    """`roofline profile --torch` of the transformer block (eager and compiled) and of deepcam_mini."""
    runs = {
        "tblock_torch": [PY, str(ROOT / "examples" / "transformer_block.py"), *TBLOCK_ARGS],
        "tblock_torch_compiled": [PY, str(ROOT / "examples" / "transformer_block.py"), *TBLOCK_ARGS, "--compile"],
        "deepcam_torch": [PY, str(ROOT / "examples" / "deepcam_mini.py"), *DEEPCAM_ARGS],
    }
    for name, program in runs.items():
        extra = ["--torch", "--by", "module", "--depth", "2", "--png", str(out / f"{name}_modules.png"),
                 "--html", str(out / f"{name}.html")]
        rc, seconds, _ = _profile(out, name, program, summary, extra)
        entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
        if (out / f"{name}.kernels.json").exists():
            entry.update(_attribution(out, name))
        summary.setdefault("checks", {})[name] = entry


PARTS = {"env": part_env, "pair": part_pair, "targets": part_targets, "deepcam": part_deepcam, "paper": part_paper, "cf": part_cf,
         "examples": part_examples, "torch": part_torch}


def write_summary(out: Path, summary: dict) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    lines = ["# roofline profile: GPU validation", "", f"date: {summary.get('date')}", ""]
    env = summary.get("environment", {})
    for k, v in env.items():
        lines += [f"- **{k}**: `{v}`" if "\n" not in str(v) else f"- **{k}**:\n\n```\n{v}\n```"]
    lines += ["", "## Checks", "", "| check | verdict | detail |", "|---|---|---|"]
    for name, c in summary.get("checks", {}).items():
        detail = {k: v for k, v in c.items() if k not in ("verdict", "kernels")}
        lines.append(f"| {name} | {c.get('verdict', '')} | `{json.dumps(detail, default=str)[:300]}` |")
    lines += ["", "## Timing", "", f"```\n{json.dumps(summary.get('timing', {}), indent=2)}\n```", "",
              "## Commands", ""]
    lines += [f"- `{c['cmd']}` -> rc {c['rc']}, {c['seconds']} s" for c in summary.get("commands", [])]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir", type=Path)
    p.add_argument("--parts", default="env,targets,deepcam,paper,cf", help=f"comma-separated: {','.join(PARTS)}")
    p.add_argument("--ncu", default="ncu", help="the ncu executable (default: ncu on PATH)")
    a = p.parse_args(argv)
    global NCU
    NCU = a.ncu
    parts = [x.strip() for x in a.parts.split(",") if x.strip()]
    unknown = [x for x in parts if x not in PARTS]
    if unknown:
        p.error(f"unknown parts: {', '.join(unknown)}")
    if shutil.which("nvidia-smi") is None:
        print("warning: nvidia-smi not found; this script is meant for a machine with an NVIDIA GPU", file=sys.stderr)
    a.outdir.mkdir(parents=True, exist_ok=True)
    path = a.outdir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}  # parts may run in separate calls
    summary["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for part in parts:
        print(f"== {part}", flush=True)
        PARTS[part](a.outdir, summary)
        write_summary(a.outdir, summary)
    print((a.outdir / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

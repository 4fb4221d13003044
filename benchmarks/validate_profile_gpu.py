"""Validate `roofline profile` on a real GPU: the checks of issue 4 in one script.

    PYTHONPATH=src python benchmarks/validate_profile_gpu.py OUTDIR [--parts env,targets,deepcam,paper,cf]
    PYTHONPATH=src python benchmarks/validate_profile_gpu.py OUTDIR --dry-run --parts all   # no GPU, no ncu

Writes under OUTDIR every raw output (.ncu-rep, ncu CSV, kernel tables, logs) and
``summary.json`` + ``summary.md`` (GPU, driver, CUDA, ncu versions, clocks, the exact
commands, the checks and their verdicts). Parts, each runnable alone (a device
session allows 10 minutes per command):

- env:     versions and clocks (nvidia-smi, ncu --version, nvcc, torch, cupy)
- targets: SAXPY DRAM bytes within 2% of 12 N; FP32 GEMM FLOPs within 1% of 2MNK;
           TF32/FP16/BF16 tensor GEMM FLOPs within 1% of 2MNK; which FP16 convention
           (ncu: 2 hadd + 2 hmul + 4 hfma, paper: hadd + hmul + 2 hfma) matches a
           kernel of known FLOPs using __hfma2 and one using scalar __hfma
- deepcam: one `roofline profile` of examples/deepcam_mini.py (timed), then the paper's figures in
           kind: a hierarchical roofline chart per phase (forward, backward, optimizer) and of the
           whole step, the analysis JSON, an HTML report where plotly is importable; launches,
           time, FLOPs and DRAM bytes per phase
- paper:   the same program under ncu once per metric, as the paper's scripts did
           (15 runs, timed, each rc kept); the ratio paper / ours when every run succeeded
- cf:      `roofline profile --no-counters` of deepcam_mini on the GPU (CUPTI times), and per phase
           its time, FLOPs and DRAM bytes against the measured ones (estimated / measured)
- examples: profile examples/saxpy.py and examples/deepcam_mini.py in full, for fixtures: per
           example the .ncu-rep, the raw-page CSV and the details-page CSV
- pair:    one side of a projection pair (saxpy at three sizes, deepcam_mini), under pair/<gpu>/:
           run on an H100 and on an H200, then `benchmarks/validate_projection.py` on the pair
- torch:   `roofline profile --torch` of deepcam_mini and examples/transformer_block.py (eager and
           torch.compile'd; part torch_compiled: that run alone): per-module charts and reports, the share of kernel time attributed
           to an operator and a module, backward launches with their module, measured vs
           estimated FLOPs per operator

Nothing here is a pass/fail test of the package: it records numbers for a person.

``--dry-run``: no GPU, no ncu. ncu is benchmarks/profile_dry_run.py (tests/profiling/fake_ncu.py
underneath), which hands back, for each profiled program, the sm_90 raw page of a GPU counting exactly
the analytic work under the names ``roofline profile`` requests on sm_90; the programs run without GPU
work (gpu_targets.py --no-launch, the examples on the CPU at small sizes); ``--arch 9.0`` is passed.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_dry_run as dry  # noqa: E402

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
DRY_DEEPCAM_ARGS = ["--device", "cpu", "--size", "16", "--batch", "1", "--steps", "1", "--width", "4"]
#: The phases examples/deepcam_mini.py marks (roofline.torch.annotate's names).
PHASES = ("forward", "backward", "optimizer")
#: Set by main: --dry-run (the programs launch no GPU work, ncu is profile_dry_run's).
DRY_RUN = False
#: Set by main (--paper-metrics): how many of PAPER_METRICS the paper part runs (all by default).
PAPER_RUNS = len(PAPER_METRICS)
#: Set by main (--deadline-s): time.monotonic() after which the paper part starts no further run; None: no limit.
DEADLINE: float | None = None
#: Set by main (--parts): the parts asked for, in order. With a deadline, a part's runs leave what the parts after it
#: reserve (RESERVE_S) and are stopped past it; a run that would start with less than MIN_RUN_S left is not started.
PARTS_ASKED: list[str] = []
RESERVE_S = {"pair": 50.0, "cf": 30.0}
MIN_RUN_S = 15.0


def slot(part: str) -> float:
    """Seconds a run of ``part`` may take: to the deadline, less what the parts asked after it reserve (580 s, a
    device command's limit, when there is no deadline)."""
    if DEADLINE is None:
        return 580.0
    after = PARTS_ASKED[PARTS_ASKED.index(part) + 1:] if part in PARTS_ASKED else []
    return DEADLINE - time.monotonic() - sum(RESERVE_S.get(p, 0.0) for p in after)


def not_started(part: str, summary: dict, name: str) -> bool:
    """True (and the run recorded as not started) when ``part`` has under MIN_RUN_S for ``name``."""
    left = slot(part)
    if left >= MIN_RUN_S:
        return False
    summary.setdefault("not_started", []).append(f"{part}: {name} ({left:.0f} s left before the deadline)")
    return True


def deepcam_program() -> list[str]:
    return [PY, str(ROOT / "examples" / "deepcam_mini.py"), *(DRY_DEEPCAM_ARGS if DRY_RUN else DEEPCAM_ARGS)]


def saxpy_program(n: int) -> list[str]:
    return [PY, str(ROOT / "examples" / "saxpy.py"), "--backend", "torch", "--device", "cpu" if DRY_RUN else "cuda",
            "--n", str(n), "--repeat", "3"]


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc; none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def sh(cmd: list[str], log: Path, summary: dict, timeout: int = 580,
       env_extra: dict[str, str] | None = None) -> tuple[int, float, str]:
    """Run a command (argument list), log its output, record it; (returncode, seconds, output). Past ``timeout`` the
    command and everything it started (ncu's profiled program) are killed: the next run finds the GPU free."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(env_extra or {}))
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                env=env)
        try:
            text, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            for pid in [*descendants(proc.pid), proc.pid]:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            partial, _ = proc.communicate()
            rc, text = 124, f"TIMEOUT after {timeout} s (killed with its children)\n{partial}"
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
    if DRY_RUN:
        env["nvidia_smi"] = "not run (dry run)"
    else:
        rc, _, text = sh(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], out / "nvidia-smi.txt", summary)
        env["nvidia_smi"] = text.strip()
    env["dry_run"] = DRY_RUN
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


def _profile(out: Path, name: str, program: list[str], summary: dict, extra: tuple[str, ...] | list[str] = (),
             ideal: list[dict[str, Any]] | None = None, timeout: float = 580) -> tuple[int, float, str]:
    """One `roofline profile` run writing OUT/NAME.{ncu-rep,ncu.csv,kernels.json,json,log}. Dry run: the
    fake ncu hands back ``ideal`` (launches, :func:`profile_dry_run.ideal_report`), on sm_90."""
    env_extra = None
    if DRY_RUN:
        (out / "dry_run").mkdir(exist_ok=True)
        report = dry.ideal_report(out / "dry_run" / f"{name}.ideal.csv", ideal or dry.deepcam_launches())
        env_extra = {"FAKE_NCU_RECORDED": str(report)}
        extra = [*extra, "--arch", dry.CC]
    cmd = [PY, "-m", "roofline", "profile", "-o", str(out / name), "--json", str(out / f"{name}.json"),
           "--force", "--ncu", NCU, *extra, "--", *program]
    return sh(cmd, out / f"{name}.log", summary, timeout=max(1, int(timeout)), env_extra=env_extra)


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


#: The targets: name -> gpu_targets.py arguments.
TARGETS: dict[str, list[str]] = {
    "saxpy": ["saxpy", "--n", str(1 << 28)],
    **{f"gemm_{d}": ["gemm", "--dtype", d, "--m", "4096", "--n", "4096", "--k", "4096"]
       for d in ("fp32", "tf32", "fp16", "bf16")},
    "hfma2": ["hfma2", "--threads", str(1 << 20), "--iters", "256"],
    "hfma": ["hfma", "--threads", str(1 << 20), "--iters", "256"],
}


def _known(args: list[str]) -> dict:
    """The analytic counts of a target (gpu_targets.analytic), for the dry run's ideal report."""
    import gpu_targets

    what, rest = args[0], args[1:]
    size = {rest[i].lstrip("-"): rest[i + 1] for i in range(0, len(rest), 2)}
    if what == "gemm":
        what = f"gemm_{size.pop('dtype')}"
    return gpu_targets.analytic(what, **{k: int(v) for k, v in size.items()})


def _fp16_check(name: str, metrics, known: dict) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Which FP16 convention (ncu: 2 hadd + 2 hmul + 4 hfma; paper: hadd + hmul + 2 hfma) gives the known FLOPs."""
    counts = {op: _metric_sum(metrics, f"sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("hadd", "hmul", "hfma")}
    entry: dict[str, Any] = {f"{op}_inst": v for op, v in counts.items()}
    lacking = [op for op, v in counts.items() if v is None]
    if lacking:
        entry["verdict"] = f"NO COUNTER ({', '.join(lacking)})"
        return entry
    hadd, hmul, hfma = (float(counts[op] or 0.0) for op in ("hadd", "hmul", "hfma"))  # all known (checked above)
    conv = {"ncu": 2 * hadd + 2 * hmul + 4 * hfma, "paper": hadd + hmul + 2 * hfma}
    want = known["flops"]
    entry["expected"] = want
    entry["ratio_to_known"] = {k: v / want for k, v in conv.items()}
    entry["matches"] = [k for k, v in conv.items() if abs(v / want - 1) <= 0.01]
    entry["verdict"] = "convention(s) matching: " + (", ".join(entry["matches"]) or "none")
    return entry


def fp16_verdict(checks: dict) -> dict[str, Any]:
    """The `--fp16` default the measurement supports: the convention that matches the half2 kernel (__hfma2,
    what vectorized FP16 code runs); the scalar __hfma kernel says how scalar half FMAs are counted."""
    pair, scalar = checks.get("hfma2", {}), checks.get("hfma", {})
    matches = pair.get("matches")
    if matches is None:
        return {"verdict": "NOT SETTLED (hfma2 not measured)"}
    if len(matches) != 1:
        return {"verdict": f"NOT SETTLED (hfma2 matches {', '.join(matches) or 'no convention'})"}
    default = matches[0]
    line = (f"the measurement supports --fp16 {default}" + (" (the current default)" if default == "ncu"
                                                           else ": change the default from ncu"))
    if scalar.get("matches") is not None:
        line += f"; scalar __hfma matches {', '.join(scalar['matches']) or 'no convention'}"
    return {"verdict": line, "supported_default": default}


#: Hopper's per-instruction-kind tensor counters (ncu --query-metrics --chip gh100) for each GEMM target's
#: type. roofline's formula table reads the per-type totals (sm__ops_path_tensor_src_*); the GEMM targets
#: also collect these, in the same run, so that one GPU session shows which counters reach 2MNK.
PER_KIND = {
    "gemm_tf32": ("op_hgmma_src_tf32_dst_fp32", "op_hmma_src_tf32_dst_fp32"),
    "gemm_fp16": ("op_hgmma_src_fp16", "op_hmma_src_fp16"),
    "gemm_bf16": ("op_hgmma_src_bf16_dst_fp32", "op_hmma_src_bf16_dst_fp32"),
}


def compute_capability() -> str | None:
    """The GPU's compute capability ('9.0'), from nvidia-smi; '9.0' in a dry run; None if unknown."""
    if DRY_RUN:
        return dry.CC
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    return lines[0] if out.returncode == 0 and lines else None


def per_kind_metrics(name: str, cc: str | None) -> list[str]:
    """`roofline profile --metrics` for a GEMM target on Hopper: the architecture's set plus the per-kind
    tensor counters of its type; [] (the default set) elsewhere."""
    if cc != "9.0" or name not in PER_KIND:
        return []
    from roofline.profiling.metricsets import metric_set

    names = [*metric_set(cc), *(f"sm__ops_path_tensor_{k}.sum" for k in PER_KIND[name])]
    return ["--metrics", ",".join(dict.fromkeys(names))]


def part_targets(out: Path, summary: dict) -> None:
    checks = summary.setdefault("checks", {})
    cc = compute_capability()
    for name, args in TARGETS.items():
        known_now = _known(args)
        program = [PY, str(ROOT / "benchmarks" / "gpu_targets.py"), *(["--no-launch"] if DRY_RUN else []), *args]
        rc, seconds, text = _profile(out, name, program, summary,
                                     ["--nvtx-include", "target/", *per_kind_metrics(name, cc)],
                                     ideal=dry.target_launches(name, known_now) if DRY_RUN else None)
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
        if name in ("hfma2", "hfma"):
            entry.update(_fp16_check(name, t.metrics, known))
            checks[name] = entry
            continue
        if name == "saxpy":
            measured, want, tol = _sum(f, "dram_bytes"), known["dram_bytes"], 0.02
            entry.update(measured_dram_bytes=measured, expected=want)
        elif name == "gemm_fp32":
            measured, want, tol = _sum(f, "fp32_flops"), known["flops"], 0.01
            entry.update(measured_fp32_flops=measured, measured_tensor_flops=_sum(f, "tensor_flops"), expected=want)
        else:
            measured, want, tol = _sum(f, "tensor_flops"), known["flops"], 0.01
            entry.update(measured_tensor_flops=measured, precisions=sorted(set(f["tensor_precision"].dropna())),
                         expected=want)
            kinds = {k: _metric_sum(t.metrics, f"ops_path_tensor_{k}.sum") for k in PER_KIND.get(name, ())}
            if kinds:  # None: not collected (not Hopper, or the dry run's ideal report has only the set's names)
                entry["per_kind_ops"] = kinds
                known_kinds = [v for v in kinds.values() if v is not None]
                entry["per_kind_ratio"] = sum(known_kinds) / want if known_kinds and want else None
        entry["ratio"] = measured / want if want and measured == measured else None
        entry["verdict"] = "PASS" if entry["ratio"] is not None and abs(entry["ratio"] - 1) <= tol else "FAIL"
        entry["tolerance"] = tol
        checks[name] = entry
    checks["fp16_convention"] = fp16_verdict(checks)


def per_phase(frame) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Launches, time (s), FLOPs and DRAM bytes per phase ("(none)": outside every phase); unknown is None."""
    from roofline.kernels import aggregate

    rows = aggregate(frame, ("phase",))
    out: dict[str, dict[str, Any]] = {}
    for _, r in rows.iterrows():
        key = "(none)" if _num(r["launches"]) is None or str(r["phase"]) in ("<NA>", "nan", "None") else str(r["phase"])
        out[key] = {q: _num(r[q]) for q in ("launches", "time_s", "flops", "dram_bytes")}
    return out


def _num(value: Any) -> float | None:
    """A finite float, else None (unknown)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def _plotly() -> bool:
    try:
        import plotly  # noqa: F401
    except ImportError:
        return False
    return True


def deepcam_figures(out: Path, summary: dict, name: str = "deepcam") -> dict[str, Any]:
    """The paper's figures in kind: `roofline analyze` charts per phase and of the whole step, the analysis JSON,
    an HTML report where plotly is importable. Returns file name -> rc or the reason it was not written."""
    table = str(out / f"{name}.kernels.json")
    analyze = [PY, "-m", "roofline", "analyze", table, "--force", "--quiet"]
    written: dict[str, Any] = {}
    for phase in PHASES:
        png = f"{name}_{phase}.png"
        rc, _, _ = sh([*analyze, "--nvtx", phase, "--png", str(out / png)], out / f"{name}_{phase}.analyze.log", summary)
        written[png] = rc
    whole = [*analyze, "--png", str(out / f"{name}_step.png"), "--json", str(out / f"{name}.analysis.json")]
    if _plotly():
        whole += ["--html", str(out / f"{name}.html")]
    else:
        written[f"{name}.html"] = "not written: plotly missing"
    rc, _, _ = sh(whole, out / f"{name}_step.analyze.log", summary)
    written.update({f"{name}_step.png": rc, f"{name}.analysis.json": rc})
    if _plotly():
        written[f"{name}.html"] = rc
    return written


def part_deepcam(out: Path, summary: dict) -> None:
    rc, seconds, _ = _profile(out, "deepcam", deepcam_program(), summary)
    entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
    if (out / "deepcam.kernels.json").exists():
        f = _table(out, "deepcam").frame
        entry["launches"] = int(len(f))
        entry["per_phase"] = per_phase(f)
        entry["phases_missing"] = [p for p in PHASES if p not in entry["per_phase"]]
        entry["verdict"] = "PASS" if not entry["phases_missing"] else "FAIL (phases missing)"
        entry["figures"] = deepcam_figures(out, summary)
    else:
        entry["verdict"] = "NOT RUN (see deepcam.log)"
    summary.setdefault("timing", {})["roofline_profile_s"] = round(seconds, 2)
    summary.setdefault("checks", {})["deepcam"] = entry


def part_paper(out: Path, summary: dict) -> None:
    """The paper's method: one ncu run of the DeepCAM step per metric, one after another, timed. With a deadline
    (--deadline-s), no run starts that the mean of those before would take past it; then the runs made are
    measured, and the 15 runs' time is projected from their mean, said as such."""
    paper = out / "paper_per_metric"
    paper.mkdir(exist_ok=True)
    total = 0.0
    runs: dict[str, int] = {}
    seconds_each: dict[str, float] = {}
    planned = PAPER_METRICS[:PAPER_RUNS]
    timing = summary.setdefault("timing", {})
    timing.pop("paper_stopped", None)
    for metric in planned:
        mean = total / len(runs) if runs else 0.0
        if DEADLINE is not None and time.monotonic() + mean > DEADLINE:
            timing["paper_stopped"] = f"deadline: {len(runs)} of {len(planned)} runs made"
            break
        cmd = [NCU, "--metrics", metric, "--nvtx", "--target-processes", "all", "--clock-control", "none",
               "--csv", "--log-file", str(paper / f"out.{metric}"), "--", *deepcam_program()]
        rc, seconds, _ = sh(cmd, paper / f"log.{metric}", summary)
        runs[metric] = rc
        seconds_each[metric] = round(seconds, 2)
        total += seconds
        # kept run by run: a step cut short still says how far it got
        timing.update(paper_per_metric_s=round(total, 2), paper_runs=len(runs), paper_run_rc=dict(runs),
                      paper_run_s=dict(seconds_each))
        write_summary(out, summary)
    timing.update(paper_per_metric_s=round(total, 2), paper_runs=len(runs), paper_run_rc=dict(runs),
                  paper_run_s=dict(seconds_each), paper_runs_planned=len(planned))
    failed = [m for m, rc in runs.items() if rc != 0]
    ours = timing.get("roofline_profile_s")
    for key in ("ratio_paper_over_ours", "paper_projected_s", "ratio_projected_paper_over_ours", "projection"):
        timing.pop(key, None)
    if failed:
        timing["ratio_paper_over_ours"] = f"not computed: {len(failed)} run(s) failed: {', '.join(failed)}"
    elif not ours:
        timing["ratio_paper_over_ours"] = "not computed: run the deepcam part first (its time is the denominator)"
    elif len(runs) == len(planned):
        timing["ratio_paper_over_ours"] = round(total / ours, 2)
    elif runs:
        projected = total / len(runs) * len(planned)
        timing["ratio_paper_over_ours"] = f"not measured: {len(runs)} of {len(planned)} runs made (deadline)"
        timing["paper_projected_s"] = round(projected, 2)
        timing["ratio_projected_paper_over_ours"] = round(projected / ours, 2)
        timing["projection"] = (f"PROJECTED, not measured: the mean of the {len(runs)} runs made x {len(planned)} "
                                "runs, over one roofline profile run")
    else:
        timing["ratio_paper_over_ours"] = "not computed: no run made before the deadline"


def compare_phases(measured: dict[str, dict[str, Any]], estimated: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per phase (of either side): estimated and measured time, FLOPs and DRAM bytes and estimated / measured;
    None where either side is unknown or the measured value is 0."""
    out: dict[str, Any] = {}
    for phase in dict.fromkeys([*measured, *estimated]):
        m, e = measured.get(phase, {}), estimated.get(phase, {})
        row: dict[str, Any] = {}
        for q in ("launches", "time_s", "flops", "dram_bytes"):
            mv, ev = m.get(q), e.get(q)
            row[f"measured_{q}"], row[f"estimated_{q}"] = mv, ev
            if q != "launches":
                row[f"{q}_ratio"] = ev / mv if mv and ev is not None else None
        out[phase] = row
    return out


def part_cf(out: Path, summary: dict) -> None:
    if not_started("cf", summary, "deepcam_cf"):
        summary["cf_per_phase"] = "not run (deadline)"
        return
    rc, seconds, _ = _profile(out, "deepcam_cf", deepcam_program(), summary, ["--no-counters"], timeout=slot("cf"))
    entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
    if (out / "deepcam_cf.kernels.json").exists():
        f = _table(out, "deepcam_cf").frame
        # A GPU program's operators on CPU tensors (model set-up, Adam's step counts) take host time, which
        # Nsight Compute never sees: the GPU's rows are compared, the host's are counted apart.
        host = f["device"].isna()
        entry.update(rows=int(len(f)), all_estimated=bool(f["estimated"].all()),
                     devices=sorted({int(d) for d in f["device"].dropna()}),
                     positive_times=int((f["time_s"] > 0).sum()),
                     host_rows=int(host.sum()), host_time_s=_num(f.loc[host, "time_s"].sum()))
        measured = next((m for m in ("deepcam", "deepcam_torch") if (out / f"{m}.kernels.json").exists()), None)
        if measured:  # the deepcam part's run, else the torch part's of the same program
            compared = f[~host] if (~host).any() else f  # a CPU run (the dry run): every row
            summary["cf_per_phase"] = compare_phases(per_phase(_table(out, measured).frame), per_phase(compared))
            entry["measured_side"] = f"{measured}.kernels.json"
        else:
            summary["cf_per_phase"] = "not compared: run the deepcam or torch part first (the measured side)"
    summary.setdefault("checks", {})["deepcam_counter_free"] = entry


def ideal_saxpy(n: int) -> list[dict[str, Any]] | None:
    """The dry run's report of examples/saxpy.py at N (one launch of 12 N bytes); None on a GPU."""
    return dry.target_launches("saxpy", {"dram_bytes": 12 * n, "flops": 2 * n}) if DRY_RUN else None


def part_examples(out: Path, summary: dict) -> None:
    """Full profiles of examples/saxpy.py and deepcam_mini for fixtures: per example NAME.ncu-rep, the raw page
    (NAME.ncu.csv, written by roofline profile) and the details page (NAME.details.csv). The deepcam part's run of
    the same program with the same arguments, where there is one, is the deepcam example (no second ncu run): its
    deepcam.ncu-rep and deepcam.ncu.csv are renamed example_deepcam.*."""
    n = 1 << 12 if DRY_RUN else 1 << 26
    runs = {"example_saxpy": (saxpy_program(n), ideal_saxpy(n)), "example_deepcam": (deepcam_program(), None)}
    files: dict[str, Any] = {}
    for name, (program, ideal) in runs.items():
        reused = name == "example_deepcam" and (out / "deepcam.ncu-rep").exists() and (out / "deepcam.ncu.csv").exists()
        if reused:
            for suffix in (".ncu-rep", ".ncu.csv"):  # renamed, not copied: the files come back once
                os.replace(out / f"deepcam{suffix}", out / f"{name}{suffix}")
            rc = summary.get("checks", {}).get("deepcam", {}).get("rc", 0)
        else:
            rc, _, _ = _profile(out, name, program, summary, ideal=ideal)
        rep = out / f"{name}.ncu-rep"
        if rep.exists():
            rc_d, _, text = sh([NCU, "--import", str(rep), "--csv", "--page", "details"], out / f"{name}.details.log",
                               summary)
            if rc_d == 0:
                (out / f"{name}.details.csv").write_text(text)
        sizes = {suffix: (out / f"{name}{suffix}").stat().st_size if (out / f"{name}{suffix}").exists() else None
                 for suffix in (".ncu-rep", ".ncu.csv", ".details.csv")}
        files[name] = {"rc": rc, "bytes": sizes, **({"from": "the deepcam part's run (deepcam.* renamed)"} if reused else {})}
    summary.setdefault("checks", {})["examples"] = {
        "files": files, "verdict": "PASS" if all(None not in f["bytes"].values() for f in files.values()) else
        "FAIL (a file is missing)"}


def part_pair(out: Path, summary: dict) -> None:
    """One side of a projection pair (issue 13): run on the H100, then on the H200 (another device call
    with the other kind), then copy both folders into tests/data/ncu/pairs/h100_h200_examples/ with a
    pair.json naming the source and target files (match "name"; saxpy is the memory-bound program)."""
    import re

    smi = str(summary.get("environment", {}).get("nvidia_smi", "")).splitlines()  # header, then one line per GPU
    gpu = smi[1].split(",")[0].strip() if len(smi) > 1 else "gpu"  # run the env part first
    side = out / "pair" / re.sub(r"[^a-z0-9]+", "_", str(gpu).lower()).strip("_")
    side.mkdir(parents=True, exist_ok=True)
    for n in (1 << 26, 1 << 28, 1 << 24):  # saxpy at three sizes: over and within a 50 MB L2 (2^26: the H100's example)
        n = n >> 14 if DRY_RUN else n
        if not not_started("pair", summary, f"saxpy_{n}"):
            _profile(side, f"saxpy_{n}", saxpy_program(n), summary, ideal=ideal_saxpy(n), timeout=slot("pair"))
    if (out / "deepcam_torch.kernels.json").exists():  # the torch part's run of the same program: no second ncu run
        (side / "deepcam.FROM").write_text("deepcam: the torch part's run, ../../deepcam_torch.* (same program and "
                                           "arguments, under --torch)\n")
    elif not not_started("pair", summary, "deepcam"):
        _profile(side, "deepcam", deepcam_program(), summary, timeout=slot("pair"))
    summary.setdefault("checks", {})["pair_side"] = {"gpu": gpu, "folder": str(side)}


#: A small transformer training step (issue 12): big enough that its GEMMs use tensor cores.
TBLOCK_ARGS = ["--device", "cuda", "--batch", "8", "--seq", "512", "--dim", "512", "--heads", "8", "--layers", "2",
               "--steps", "1", "--vocab", "4096"]


def tblock_args() -> list[str]:
    """TBLOCK_ARGS; in a dry run on the CPU at a toy size."""
    if not DRY_RUN:
        return TBLOCK_ARGS
    return ["--device", "cpu", "--batch", "1", "--seq", "16", "--dim", "32", "--heads", "2", "--layers", "1",
            "--steps", "1", "--vocab", "64"]


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


def part_torch(out: Path, summary: dict, only: tuple[str, ...] = (), part: str = "torch") -> None:
    """`roofline profile --torch` of deepcam_mini (first: the pair and cf parts reuse it), then of the transformer
    block eager and torch.compile'd, each in what the deadline leaves (``only``: those runs alone)."""
    runs = {
        "deepcam_torch": deepcam_program(),
        "tblock_torch": [PY, str(ROOT / "examples" / "transformer_block.py"), *tblock_args()],
        "tblock_torch_compiled": [PY, str(ROOT / "examples" / "transformer_block.py"), *tblock_args(), "--compile"],
    }
    for name, program in runs.items():
        if only and name not in only:
            continue
        if not_started(part, summary, name):
            summary.setdefault("checks", {})[name] = {"verdict": "NOT RUN (deadline)"}
            continue
        extra = ["--torch", "--by", "module", "--depth", "2", "--png", str(out / f"{name}_modules.png"),
                 *(["--html", str(out / f"{name}.html")] if _plotly() else [])]  # the device lacks plotly
        rc, seconds, _ = _profile(out, name, program, summary, extra, timeout=slot(part))
        entry: dict[str, Any] = {"rc": rc, "seconds": round(seconds, 2)}
        if (out / f"{name}.kernels.json").exists():
            entry.update(_attribution(out, name))
            if name == "deepcam_torch":
                entry["per_phase"] = per_phase(_table(out, name).frame)
        summary.setdefault("checks", {})[name] = entry


PARTS = {"env": part_env, "targets": part_targets, "deepcam": part_deepcam, "paper": part_paper, "cf": part_cf,
         "examples": part_examples, "pair": part_pair, "torch": part_torch,
         "torch_compiled": lambda out, summary: part_torch(out, summary, ("tblock_torch_compiled",), "torch_compiled")}


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def phase_tables(summary: dict) -> list[str]:
    """Markdown: the deepcam step per phase, and the counter-free estimate against it per phase."""
    lines: list[str] = []
    phases = summary.get("checks", {}).get("deepcam", {}).get("per_phase")
    if phases:
        lines += ["", "## deepcam_mini per phase (measured)", "", "| phase | launches | time (s) | FLOPs | DRAM bytes |",
                  "|---|---|---|---|---|"]
        lines += [f"| {p} | {_fmt(r['launches'])} | {_fmt(r['time_s'])} | {_fmt(r['flops'])} | {_fmt(r['dram_bytes'])} |"
                  for p, r in phases.items()]
    cf = summary.get("cf_per_phase")
    if isinstance(cf, dict):
        lines += ["", "## Counter-free estimate vs measured, per phase (estimated / measured; - unknown)", "",
                  "| phase | time est. | time meas. | ratio | FLOPs est. | FLOPs meas. | ratio | DRAM B est. | "
                  "DRAM B meas. | ratio |", "|---|---|---|---|---|---|---|---|---|---|"]
        for p, r in cf.items():
            cells = [f"{_fmt(r[f'estimated_{q}'])} | {_fmt(r[f'measured_{q}'])} | {_fmt(r[f'{q}_ratio'])}"
                     for q in ("time_s", "flops", "dram_bytes")]
            lines.append(f"| {p} | " + " | ".join(cells) + " |")
    elif cf:
        lines += ["", f"Counter-free estimate vs measured: {cf}"]
    return lines


def write_summary(out: Path, summary: dict) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    lines = ["# roofline profile: GPU validation", "", f"date: {summary.get('date')}",
             f"dry run: {summary.get('dry_run', False)} (a dry run measures nothing)", ""]
    env = summary.get("environment", {})
    for k, v in env.items():
        lines += [f"- **{k}**: `{v}`" if "\n" not in str(v) else f"- **{k}**:\n\n```\n{v}\n```"]
    lines += ["", "## Checks", "", "| check | verdict | detail |", "|---|---|---|"]
    for name, c in summary.get("checks", {}).items():
        detail = {k: v for k, v in c.items() if k not in ("verdict", "kernels", "per_phase")}
        lines.append(f"| {name} | {c.get('verdict', '')} | `{json.dumps(detail, default=str)[:300]}` |")
    lines += phase_tables(summary)
    lines += ["", "## Timing", "", f"```\n{json.dumps(summary.get('timing', {}), indent=2)}\n```", "",
              "## Commands", ""]
    lines += [f"- `{c['cmd']}` -> rc {c['rc']}, {c['seconds']} s" for c in summary.get("commands", [])]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    global NCU, DRY_RUN, PAPER_RUNS, DEADLINE
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir", type=Path)
    p.add_argument("--parts", default="env,targets,deepcam,paper,cf",
                   help=f"comma-separated: {','.join(PARTS)}, or all")
    p.add_argument("--ncu", default="ncu", help="the ncu executable (default: ncu on PATH)")
    p.add_argument("--dry-run", action="store_true",
                   help="no GPU, no ncu: a perfect H100's reports from benchmarks/profile_dry_run.py")
    p.add_argument("--paper-metrics", type=int, default=len(PAPER_METRICS),
                   help="run only the first N of the paper's per-metric runs (the dry run's test)")
    p.add_argument("--deadline-s", type=float, default=None,
                   help="no run starts past this many seconds from now: the paper part stops at its mean, the torch, pair "
                        "and cf parts leave what the parts after them reserve")
    a = p.parse_args(argv)
    PAPER_RUNS = a.paper_metrics
    DEADLINE = None if a.deadline_s is None else time.monotonic() + a.deadline_s
    parts = [x.strip() for x in a.parts.split(",") if x.strip()]
    if parts == ["all"]:
        parts = list(PARTS)
    PARTS_ASKED[:] = parts
    unknown = [x for x in parts if x not in PARTS]
    if unknown:
        p.error(f"unknown parts: {', '.join(unknown)}")
    DRY_RUN = a.dry_run
    a.outdir.mkdir(parents=True, exist_ok=True)
    NCU = str(dry.write_ncu_wrapper(a.outdir / "dry_run")) if DRY_RUN else a.ncu
    if not DRY_RUN and shutil.which("nvidia-smi") is None:
        print("warning: nvidia-smi not found; this script is meant for a machine with an NVIDIA GPU", file=sys.stderr)
    path = a.outdir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}  # parts may run in separate calls
    summary["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    summary["dry_run"] = DRY_RUN
    for part in parts:
        print(f"== {part}", flush=True)
        PARTS[part](a.outdir, summary)
        write_summary(a.outdir, summary)
    print((a.outdir / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

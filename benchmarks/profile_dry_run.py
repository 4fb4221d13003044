"""The dry run of benchmarks/validate_profile_gpu.py: a perfect H100's ncu reports, and an ncu that hands them back.

Two uses:

* imported by the validation script (``--dry-run``): :func:`ideal_report` writes, for each profiled
  program, the raw page (``ncu --import R --csv --page raw``) of an sm_90 GPU that counts exactly the
  analytic work, under the metric names ``roofline profile`` requests on sm_90
  (:func:`roofline.profiling.metricsets.metric_set`): :func:`sm90_names` takes every name from the
  formula table and refuses one the metric set lacks, so the names we request are the names we read;
* run as ``ncu`` (:func:`write_ncu_wrapper` writes the executable): ``--version``; ``--import R ...``
  prints R (raw and details page alike: the details CSV of a dry run is the raw page); a profile run
  with ``--export`` is tests/profiling/fake_ncu.py's (it runs the program, copies
  ``$FAKE_NCU_RECORDED`` to the report); a per-metric run without ``--export`` (the paper's method)
  runs the program and writes ``--log-file`` as the paper's CSV would be, with the one metric.

Nothing here touches a GPU.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

CC = "9.0"
#: ncu's push/pop NVTX column (ncu 2024.1.1's header; tests/test_names.py) and a range's six empty attributes.
PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
_NONE6 = ":none:none:none:none:none:none"
HEAD = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, "Kernel Name", "Context", "Stream", "Block Size",
        "Grid Size", "Device", "CC"]
#: A launch of the synthetic deepcam step: (phase, kernel, tensor fp16 FLOPs, fp32 FLOPs, DRAM bytes, time in s).
DEEPCAM_LAUNCHES: tuple[tuple[str, str, float, float, float, float], ...] = (
    ("forward", "conv_fwd_hgmma", 4.0e9, 0.0, 2.0e7, 40e-6),
    ("forward", "bn_relu_fwd", 0.0, 1.0e7, 1.0e7, 10e-6),
    ("backward", "conv_dgrad_hgmma", 4.0e9, 0.0, 2.0e7, 40e-6),
    ("backward", "conv_wgrad_hgmma", 4.0e9, 0.0, 2.0e7, 40e-6),
    ("backward", "bn_relu_bwd", 0.0, 2.0e7, 2.0e7, 20e-6),
    ("optimizer", "adam_multi_tensor", 0.0, 1.0e6, 3.0e6, 5e-6),
)


def sm90_names() -> dict[str, str]:
    """The sm_90 metric that carries each count, from the formula table: ``dram_bytes``, ``ffma``,
    ``hfma`` (thread instructions), ``time`` and ``tensor_<precision>`` (fp16, bf16, tf32 operations).
    Raises ValueError when one is not in the metric set ``roofline profile`` requests on sm_90."""
    from roofline.counting import GPU_TIME, TENSOR_PATHS, flops, tensor
    from roofline.profiling.metricsets import metric_set

    names = {"time": GPU_TIME.name, "dram_bytes": "dram__bytes.sum", "ffma": flops.sass("ffma").name,
             "hfma": flops.HFMA.name}
    for path in TENSOR_PATHS:
        if path.precision in ("fp16", "bf16", "tf32"):
            (names[f"tensor_{path.precision}"],) = tensor.requested(path, CC)
    requested = set(metric_set(CC))
    lacking = sorted(n for n in names.values() if n not in requested)
    if lacking:
        raise ValueError(f"not requested by roofline profile on sm_{CC.replace('.', '')}: {', '.join(lacking)}")
    return names


def target_launches(name: str, known: dict[str, Any]) -> list[dict[str, Any]]:
    """The one launch of a target (benchmarks/gpu_targets.py) as a perfect GPU counts it, inside NVTX ``target``:
    saxpy 12 N DRAM bytes and N FFMA; an FP32 GEMM MNK FFMA (2MNK FLOPs); a tensor GEMM 2MNK operations of its
    type; hfma2 / hfma one HFMA thread instruction per iteration and thread."""
    n = sm90_names()
    counts: dict[str, float] = {n["time"]: 1e-3}
    if name == "saxpy":
        counts.update({n["dram_bytes"]: known["dram_bytes"], n["ffma"]: known["flops"] / 2})
    elif name == "gemm_fp32":
        counts[n["ffma"]] = known["flops"] / 2
    elif name.startswith("gemm_"):
        precision = "fp16" if name == "gemm_fp16" else name.removeprefix("gemm_")
        counts[n[f"tensor_{precision}"]] = known["flops"]
    else:
        counts[n["hfma"]] = known["hfma_inst"]
    return [{"kernel": f"{name}_kernel", "phase": "target", "counts": counts}]


def deepcam_launches() -> list[dict[str, Any]]:
    """:data:`DEEPCAM_LAUNCHES` as launches (no analytic truth: numbers to check the per-phase sums by hand)."""
    n = sm90_names()
    return [{"kernel": kernel, "phase": phase,
             "counts": {n["tensor_fp16"]: tensor_flops, n["ffma"]: fp32_flops / 2, n["dram_bytes"]: dram, n["time"]: t}}
            for phase, kernel, tensor_flops, fp32_flops, dram, t in DEEPCAM_LAUNCHES]


def _unit(metric: str) -> str:
    if metric.startswith("gpu__time_duration"):
        return "nsecond"
    if "bytes" in metric:
        return "byte"
    if metric.endswith(".per_second"):
        return "cycle/second"
    return "cycle" if "cycles" in metric else ""


def ideal_report(path: Path, launches: list[dict[str, Any]]) -> Path:
    """Write the raw page of ``launches`` on sm_90: every metric ``roofline profile`` requests there
    (:func:`roofline.counting.required_metrics`), 0 unless the launch sets it; time in ns; the SM clock
    at 1.755 GHz; each launch inside its NVTX push/pop range (``<default domain>:PHASE``)."""
    from roofline.counting import required_metrics

    metrics = list(dict.fromkeys(required_metrics(CC)))
    clock = 1.755e9
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(HEAD + metrics)
        w.writerow([""] * len(HEAD) + [_unit(m) for m in metrics])
        for i, launch in enumerate(launches):
            counts = dict(launch["counts"])
            time_s = counts.get("gpu__time_duration.sum", 1e-3)
            counts.update({"gpu__time_duration.sum": time_s * 1e9, "sm__cycles_elapsed.avg": time_s * clock,
                           "sm__cycles_elapsed.avg.per_second": clock})
            ident = [i, 4242, "python3", "127.0.0.1", f'4242  "<default domain>:{launch["phase"]}{_NONE6}"',
                     launch["kernel"], 1, 7, "(256, 1, 1)", "(1024, 1, 1)", 0, CC]
            w.writerow(ident + [repr(float(counts.get(m, 0.0))) for m in metrics])
    return path


def write_ncu_wrapper(folder: Path) -> Path:
    """An executable ``ncu`` in ``folder`` that runs this module as ncu (with this Python)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "ncu"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def _per_metric_run(argv: list[str]) -> int:
    """The paper's run (``--metrics ONE --csv --log-file F -- CMD``): run CMD, write F with one row."""
    command = argv[argv.index("--") + 1:]
    metric = argv[argv.index("--metrics") + 1] if "--metrics" in argv else "?"
    print(f"==PROF== Connected to process {os.getpid()} ({command[0]})", flush=True)
    rc = subprocess.run(command).returncode
    if "--log-file" in argv:
        Path(argv[argv.index("--log-file") + 1]).write_text(
            '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
            f'"0","dry_run_kernel","{metric}","","0"\n')
    print(f"==PROF== Disconnected from process {os.getpid()}", flush=True)
    return rc


def ncu_main(argv: list[str]) -> int:
    if "--version" in argv:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion dry-run (benchmarks/profile_dry_run.py)")
        return 0
    if "--import" in argv:
        sys.stdout.write(Path(argv[argv.index("--import") + 1]).read_text())
        return 0
    if "--export" not in argv and "--query-metrics" not in argv:
        return _per_metric_run(argv)
    sys.path.insert(0, str(ROOT / "tests" / "profiling"))
    import fake_ncu

    return int(fake_ncu.main(argv))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--print-names"]:
        print(json.dumps(sm90_names(), indent=2))
        raise SystemExit(0)
    raise SystemExit(ncu_main(sys.argv[1:]))

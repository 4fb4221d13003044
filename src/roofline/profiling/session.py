"""``roofline profile`` as a function: run, fall back, read, and say what happened.

Exit statuses (:class:`Outcome.exit_code`), also documented in docs/profiling.md:

====  =====================================================================
0     the program ran to its end and was profiled (with counters, or in
      counter-free mode when asked or after a permission error)
1     unexpected failure (a bug: please report it)
2     bad input or usage: no ncu, no GPU, program not found, output exists
3     the program failed (non-zero exit); what was profiled is analyzed
4     ncu may not read the counters (ERR_NVGPUCTRPERM) and ``--no-fallback``
      was given; nothing analyzed
130   interrupted (Ctrl-C); what was profiled before is analyzed
====  =====================================================================
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from roofline.errors import InputError, OutputExistsError, RooflineError
from roofline.writing.safe import check_writable, write_text
from roofline.kernels import KernelTable
from roofline.readers import kernel_json as table_file
from roofline.profiling.ncu_output import PERMISSION_HELP, NcuProgress
from roofline.profiling.settings import ProfileSettings
from roofline.units import counted

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_PROGRAM_FAILED = 3
EXIT_NO_COUNTERS = 4
EXIT_INTERRUPTED = 130
#: The most times ncu is run while metrics of our set it refuses are dropped one refusal at a time.
MAX_NCU_RUNS = 5

LineSink = Callable[[str, bool], None]
ProgressSink = Callable[[NcuProgress], None]


@dataclass(frozen=True)
class Outcome:
    """What ``roofline profile`` did: the table (None when nothing was profiled), files, status."""

    table: KernelTable | None
    mode: str  # "ncu", "rocprofv3" or "counter-free"
    status: str  # "ok", "program-failed", "interrupted", "permission-denied"
    exit_code: int
    files: tuple[Path, ...]
    notes: tuple[str, ...]
    program_returncode: int | None
    kernels_profiled: int
    #: ``--torch`` under ncu: the counter-free estimate of the same run's operators, or None.
    estimate: KernelTable | None = None


def _status(interrupted: bool, failed: bool) -> tuple[str, int]:
    if interrupted:
        return "interrupted", EXIT_INTERRUPTED
    if failed:
        return "program-failed", EXIT_PROGRAM_FAILED
    return "ok", EXIT_OK


def outputs(settings: ProfileSettings) -> dict[str, Path]:
    """The files a run writes, by kind."""
    return {"report": settings.path(".ncu-rep"), "csv": settings.path(".ncu.csv"),
            "table": settings.path(".kernels.json"), "estimate": settings.path(".estimate.kernels.json")}


def check_outputs(settings: ProfileSettings) -> None:
    """Refuse before running anything if an output exists (without --force) or its folder is missing."""
    files = outputs(settings)
    for kind, p in files.items():
        if kind == "estimate" and not (settings.counters and settings.torch and settings.estimate):
            continue
        if settings.counters or kind == "table":
            check_writable(p, force=settings.force)


def run_with_counters(settings: ProfileSettings, *, on_line: LineSink | None = None,
                      on_progress: ProgressSink | None = None) -> Outcome:
    """Profile with Nsight Compute; on a permission error fall back to counter-free mode (unless told not to)."""
    from roofline.profiling.ncu_runner import find_ncu, find_program

    files = outputs(settings)
    ncu = find_ncu(settings.ncu)
    env = dict(os.environ, **dict(settings.extra_env))
    find_program(settings.command, env)
    if settings.torch:
        with tempfile.TemporaryDirectory(prefix="roofline-torch-") as folder:
            return _with_counters(settings, files, ncu, _torch_env(settings, folder, env), on_line, on_progress,
                                  estimate_folder=Path(folder) if settings.estimate else None)
    return _with_counters(settings, files, ncu, env, on_line, on_progress)


def _torch_env(settings: ProfileSettings, folder: str, env: dict[str, str]) -> dict[str, str]:
    """The environment of ``--torch`` under ncu: attribution ranges, and the untimed estimate when asked."""
    from roofline.profiling.counter_free.launch import counter_free_env

    return counter_free_env(folder, env, record=settings.estimate, timed=False, attribute=True)


def _read_estimate(folder: Path, settings: ProfileSettings, files: dict[str, Path]) -> tuple[KernelTable | None, str | None]:
    """The estimate recorded beside an ncu run (written to PREFIX.estimate.kernels.json), or why there is none."""
    from roofline.profiling.counter_free.collect import collect

    try:
        table = collect(folder)
    except RooflineError as exc:
        return None, f"no estimate of the operators beside the measured values: {exc.render()}"
    write_text(files["estimate"], table_file.to_json(table), force=settings.force)
    return table, None


def _with_counters(settings: ProfileSettings, files: dict[str, Path], ncu: str, env: dict[str, str],
                   on_line: LineSink | None, on_progress: ProgressSink | None, *,
                   estimate_folder: Path | None = None) -> Outcome:
    from roofline.profiling import metricsets
    from roofline.profiling.ncu_runner import (
        detect_compute_capability, export_raw_csv, listed_metrics, ncu_command, run_ncu)

    metrics = list(settings.metrics) if settings.metrics else metricsets.metric_set(
        settings.arch or detect_compute_capability(env))
    unlisted: list[str] = []
    if not settings.metrics:
        # Our set names what every architecture of the table may have (on Blackwell, several spellings
        # of one counter across ncu releases): keep what this GPU's catalog lists, so that ncu refuses
        # nothing. A user's --metrics is passed as given.
        listed = listed_metrics(ncu, metrics, env=env)
        if listed is not None:
            unlisted = [m for m in metrics if m not in listed]
            metrics = [m for m in metrics if m in listed]
    command = ncu_command(settings, metrics, files["report"], ncu=ncu)
    log.info("running %s", command)
    run = run_ncu(command, files["report"], env=env, on_line=on_line, on_progress=on_progress)
    dropped: list[str] = []
    # Our set may name metrics this chip or ncu release lacks (names are checked against NVIDIA's
    # docs, not every chip), and ncu refuses them one run at a time: drop each refused metric of
    # our set and run again, rather than profile nothing. A metric the user named is never dropped.
    for _ in range(MAX_NCU_RUNS - 1):
        refused = run.progress.refused(metrics)
        if not refused or run.report is not None or settings.metrics:
            break
        dropped += [m for m in refused if m not in dropped]
        metrics = [m for m in metrics if m not in refused]
        command = ncu_command(settings, metrics, files["report"], ncu=ncu)
        log.info("ncu does not know %s; running again without: %s", ", ".join(refused), command)
        run = run_ncu(command, files["report"], env=env, on_line=on_line, on_progress=on_progress)
    if run.report is None and not settings.metrics and run.progress.refused(metrics):
        raise InputError(
            f"ncu still refuses metrics of the roofline set after {MAX_NCU_RUNS} runs: "
            + ", ".join(run.progress.refused(metrics))
            + (f" (already left out: {', '.join(dropped)})" if dropped else ""),
            hint="pass the metrics this GPU has with --metrics (ncu --query-metrics lists them), or --arch",
        )
    if run.progress.permission_error:
        if not settings.fallback:
            return Outcome(None, "ncu", "permission-denied", EXIT_NO_COUNTERS, (), (PERMISSION_HELP,),
                           run.returncode, run.progress.kernels)
        try:
            fallback = run_counter_free(settings, on_line=on_line)
        except RooflineError as exc:
            return Outcome(None, "counter-free", "permission-denied", EXIT_NO_COUNTERS, (),
                           (PERMISSION_HELP, f"the counter-free fallback failed too: {exc.render()}"),
                           run.returncode, run.progress.kernels)
        fallback_notes = (PERMISSION_HELP, "continued in counter-free mode: every point is estimated")
        return Outcome(fallback.table, fallback.mode, fallback.status, fallback.exit_code, fallback.files,
                       fallback_notes + fallback.notes, fallback.program_returncode, fallback.kernels_profiled)
    if run.report is None and run.progress.unknown_metrics:
        raise InputError(
            "ncu refused the metric list: " + "; ".join(e for e in run.progress.errors if "find metric" in e),
            hint="leave these out of --metrics (ncu --query-metrics lists what this GPU has)",
        )
    status, code = _status(run.interrupted, run.program_failed)
    notes: list[str] = []
    if unlisted:
        notes.append(f"left out {counted(len(unlisted), 'metric')} of the roofline set that this GPU's Nsight Compute "
                     f"does not list (ncu --query-metrics): {', '.join(unlisted)}; the analysis says what stays unknown")
    if dropped:
        notes.append(f"ncu does not know {', '.join(dropped)} on this GPU: the program was profiled again "
                     f"without {'it' if len(dropped) == 1 else 'them'}, and what "
                     f"{'it' if len(dropped) == 1 else 'they'} would have counted is unknown")
    if run.program_failed:
        rc = run.progress.app_error_code if run.progress.app_error_code is not None else run.returncode
        notes.append(f"the program failed (exit status {rc}); analyzing the {run.progress.kernels} "
                     "kernel launches profiled before it stopped")
    if run.interrupted:
        notes.append(f"interrupted; analyzing the {run.progress.kernels} kernel launches profiled so far")
    if run.report is None:
        if code != EXIT_OK:
            return Outcome(None, "ncu", status, code, (), (*notes, "ncu wrote no report: nothing to analyze"),
                           run.returncode, run.progress.kernels)
        raise InputError(
            "ncu profiled no kernel" + (f" ({'; '.join(run.progress.errors)})" if run.progress.errors else ""),
            hint="does the program launch CUDA kernels? check --kernel-name, --launch-skip and --nvtx-include",
        )
    csv_path = export_raw_csv(ncu, run.report, files["csv"], force=settings.force)
    from roofline.readers import read_profile

    table = read_profile([csv_path], fp16=settings.fp16)
    write_text(files["table"], table_file.to_json(table), force=settings.force)
    written: tuple[Path, ...] = (run.report, csv_path, files["table"])
    estimate = None
    if estimate_folder is not None:
        estimate, why_not = _read_estimate(estimate_folder, settings, files)
        written += (files["estimate"],) if estimate is not None else ()
        notes += [why_not] if why_not else []
    return Outcome(table, "ncu", status, code, written, tuple(notes), run.returncode, run.progress.kernels,
                   estimate=estimate)


def run_counter_free(settings: ProfileSettings, *, on_line: LineSink | None = None) -> Outcome:
    """Run the program with the counter-free recorder in its Python processes, and collect the table."""
    from roofline.profiling.counter_free.collect import collect
    from roofline.profiling.counter_free.launch import counter_free_env
    from roofline.profiling.ncu_runner import find_program, run_streaming

    files = outputs(settings)
    base = dict(os.environ, **dict(settings.extra_env))
    find_program(settings.command, base)
    with tempfile.TemporaryDirectory(prefix="roofline-cf-") as folder:
        env = counter_free_env(folder, base)
        returncode, _, interrupted = run_streaming(settings.command, env=env, on_line=on_line)
        failed = returncode != 0 and not interrupted
        status, code = _status(interrupted, failed)
        notes = []
        if failed:
            notes.append(f"the program failed (exit status {returncode}); analyzing what ran before")
        if interrupted:
            notes.append("interrupted; analyzing the operators recorded so far")
        try:
            table = collect(folder)
        except InputError:
            if code != EXIT_OK:
                return Outcome(None, "counter-free", status, code, (), (*notes, "nothing was recorded"),
                               returncode, 0)
            raise
    write_text(files["table"], table_file.to_json(table), force=settings.force)
    return Outcome(table, "counter-free", status, code, (files["table"],), tuple(notes), returncode, len(table))


def profile(settings: ProfileSettings, *, on_line: LineSink | None = None,
            on_progress: ProgressSink | None = None) -> Outcome:
    """Profile ``settings.command`` as ``roofline profile`` does (see the module's exit statuses)."""
    from roofline.profiling.rocprof_runner import wants_amd

    if settings.counters and wants_amd(settings, dict(os.environ, **dict(settings.extra_env))):
        if not settings.torch:
            return run_with_rocprof(settings, on_line=on_line)
        outcome = run_counter_free(settings, on_line=on_line)
        note = "--torch is not available with rocprofv3 (AMD GPUs) yet: continued without counters (every point is estimated)"
        return replace(outcome, notes=(note, *outcome.notes))
    check_outputs(settings)
    if not settings.counters:
        return run_counter_free(settings, on_line=on_line)
    if settings.torch:
        missing = _why_no_counters(settings)
        if missing is not None:
            outcome = run_counter_free(settings, on_line=on_line)
            note = f"{missing}: --torch continued without counters (every point is estimated)"
            return replace(outcome, notes=(note, *outcome.notes))
    return run_with_counters(settings, on_line=on_line, on_progress=on_progress)


def _why_no_counters(settings: ProfileSettings) -> str | None:
    """Why this machine cannot profile with Nsight Compute (no ncu, no NVIDIA GPU), or None when it can."""
    from roofline.errors import ToolNotFoundError
    from roofline.profiling.ncu_runner import detect_compute_capability, find_ncu

    try:
        find_ncu(settings.ncu)
        if settings.arch is None:
            detect_compute_capability(dict(os.environ, **dict(settings.extra_env)))
    except ToolNotFoundError as exc:
        return exc.message
    return None


def amd_outputs(settings: ProfileSettings) -> dict[str, Path]:
    """The files an AMD run writes: rocprofv3's output folder and the kernel table."""
    return {"folder": settings.path(".rocprofv3"), "table": settings.path(".kernels.json")}


def run_with_rocprof(settings: ProfileSettings, *, on_line: LineSink | None = None) -> Outcome:
    """Profile on an AMD GPU with rocprofv3, one run per counter pass
    (:mod:`roofline.profiling.rocprof_runner`), and read the passes back as one table."""
    import shutil

    from roofline.profiling.ncu_runner import find_program
    from roofline.profiling.rocprof_runner import check_amd_settings, run_rocprof
    from roofline.readers.amd.rocprof_outputs import read_rocprof

    files = amd_outputs(settings)
    check_amd_settings(settings)
    check_writable(files["table"], force=settings.force)
    if files["folder"].exists():
        if not settings.force or not files["folder"].is_dir():
            raise OutputExistsError(f"{files['folder']} exists (rocprofv3's outputs of an earlier run)",
                                    hint="pass --force to replace it, or choose another -o")
        shutil.rmtree(files["folder"])
    find_program(settings.command, dict(os.environ, **dict(settings.extra_env)))
    run = run_rocprof(settings, files["folder"], on_line=on_line)
    status, code = _status(run.interrupted, run.failed)
    try:
        table = read_rocprof(files["folder"], arch=run.arch)
    except InputError as exc:
        if code != EXIT_OK:
            return Outcome(None, "rocprofv3", status, code, (), (*run.notes, f"nothing to analyze: {exc.message}"),
                           run.returncode, 0)
        raise
    write_text(files["table"], table_file.to_json(table), force=settings.force)
    return Outcome(table, "rocprofv3", status, code, (files["folder"], files["table"]), run.notes, run.returncode,
                   len(table))

"""Run Nsight Compute once over a program, streaming its progress, keeping what it profiled.

:func:`ncu_command` builds the argument list (never a shell string);
:func:`run_ncu` runs it in its own process group, parses ncu's lines as they come
(:class:`~roofline.profiling.ncu_output.NcuProgress`), forwards Ctrl-C to ncu and the
program and waits for ncu to write what it has, and returns an :class:`NcuRun`.
"""

from __future__ import annotations

import csv
import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.errors import InputError, ToolNotFoundError
from roofline.profiling.ncu_output import NcuProgress
from roofline.profiling.settings import ProfileSettings
from roofline.readers.ncu.numbers import c_numbers

log = logging.getLogger(__name__)

NCU_INSTALL_HINT = (
    "install NVIDIA Nsight Compute (it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu, or as the "
    "'nsight-compute' package from NVIDIA's repositories) and put ncu on PATH, or pass --ncu PATH; "
    "for PyTorch programs, --no-counters estimates a roofline without it"
)


def find_ncu(ncu: str) -> str:
    """The ncu executable's path, or :class:`ToolNotFoundError` with how to get it."""
    found = shutil.which(ncu)
    if found is None:
        raise ToolNotFoundError(f"Nsight Compute ({ncu}) was not found", hint=NCU_INSTALL_HINT)
    return found


def find_program(command: Sequence[str], env: Mapping[str, str] | None = None) -> None:
    """Raise :class:`InputError` when the program to profile cannot be found or run."""
    program = command[0]
    path = (env or os.environ).get("PATH")
    if os.sep in program or (os.altsep and os.altsep in program):
        if not Path(program).exists():
            raise InputError("the program to profile does not exist", path=program)
        if not os.access(program, os.X_OK):
            raise InputError("the program to profile is not executable", path=program,
                             hint=f"chmod +x {program}, or run it through its interpreter (python {program})")
    elif shutil.which(program, path=path) is None:
        raise InputError(f"program not found on PATH: {program}", hint="check the command after --")


def detect_compute_capability(env: Mapping[str, str] | None = None) -> str:
    """The compute capability of the GPU the program will see first ('9.0').

    Asks ``nvidia-smi --query-gpu=compute_cap``, else NVML (nvidia-ml-py). Honours a
    numeric first entry of ``CUDA_VISIBLE_DEVICES``.
    """
    env = os.environ if env is None else env
    visible = env.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    index = int(visible) if visible.isdigit() else 0
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        try:
            out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30)
            caps = [line.strip() for line in out.stdout.splitlines() if line.strip()]
            if out.returncode == 0 and len(caps) > index:
                return caps[index]
            log.debug("nvidia-smi compute_cap query failed: %s", out.stderr.strip())
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("nvidia-smi failed: %s", exc)
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(pynvml.nvmlDeviceGetHandleByIndex(index))
            return f"{major}.{minor}"
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # no NVML library, no driver, no GPU
        log.debug("NVML failed: %s", exc)
    raise ToolNotFoundError(
        "no NVIDIA GPU found (nvidia-smi and NVML could not report one)",
        hint="run on a machine with a GPU and driver, pass --arch (e.g. --arch 9.0) if the GPU is there "
        "but not visible to nvidia-smi, or use --no-counters for a CPU estimate of a PyTorch program",
    )


def ncu_command(settings: ProfileSettings, metrics: Sequence[str], report: Path, ncu: str = "ncu") -> list[str]:
    """The ncu argument list: one run, every metric, NVTX, all processes, the chosen clock control."""
    cmd = [
        ncu,
        "--metrics", ",".join(metrics),
        "--nvtx",
        "--target-processes", "all",
        "--clock-control", settings.clock_control,
        "--export", str(report),
    ]
    if settings.force:
        cmd.append("--force-overwrite")
    if settings.kernel_name is not None:
        cmd += ["--kernel-name", settings.kernel_name]
    if settings.launch_skip is not None:
        cmd += ["--launch-skip", str(settings.launch_skip)]
    if settings.launch_count is not None:
        cmd += ["--launch-count", str(settings.launch_count)]
    for rng in settings.nvtx_include:
        cmd += ["--nvtx-include", rng]
    return [*cmd, "--", *settings.command]


@dataclass(frozen=True)
class NcuRun:
    """What one ncu run did.

    ``returncode`` is ncu's (which passes on the program's); ``interrupted`` is True
    when Ctrl-C (SIGINT) arrived; ``report`` is the .ncu-rep when ncu wrote one.
    """

    command: tuple[str, ...]
    returncode: int
    progress: NcuProgress
    interrupted: bool
    report: Path | None

    @property
    def program_failed(self) -> bool:
        return (not self.interrupted) and (self.returncode != 0 or self.progress.app_error_code not in (None, 0))


def _signal_group(proc: subprocess.Popen[str], sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_streaming(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    on_line: Callable[[str, bool], None] | None = None,
    on_progress: Callable[[NcuProgress], None] | None = None,
) -> tuple[int, NcuProgress, bool]:
    """Run ``command`` (ncu, or the program itself), streaming its output; (returncode, progress, interrupted).

    ``on_line(line, is_ncu)`` gets every output line (ncu's own lines flagged), and
    ``on_progress`` the progress after each ncu line. A KeyboardInterrupt (Ctrl-C) while
    running is forwarded as SIGINT to the child's process group (ncu and the program);
    we then wait for it to finish (ncu writes what it has). A second Ctrl-C kills the group.
    """
    progress = NcuProgress()

    def handle(line: str) -> None:
        is_ncu = progress.feed(line)
        if on_line is not None:
            on_line(line, is_ncu)
        if is_ncu and on_progress is not None:
            on_progress(progress)

    try:
        proc = subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
            bufsize=1, env=dict(env) if env is not None else None, start_new_session=True,
        )
    except FileNotFoundError:
        raise ToolNotFoundError(f"cannot run {command[0]}", hint=NCU_INSTALL_HINT) from None
    interrupted = False
    assert proc.stdout is not None
    try:
        try:
            for line in proc.stdout:
                handle(line)
        except KeyboardInterrupt:
            interrupted = True
            log.info("interrupted: forwarding SIGINT to pid %d's group and waiting for it", proc.pid)
            _signal_group(proc, signal.SIGINT)
            try:
                for line in proc.stdout:
                    handle(line)
            except KeyboardInterrupt:
                _signal_group(proc, signal.SIGKILL)
        returncode = proc.wait()
    finally:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
    return returncode, progress, interrupted


def run_ncu(
    command: Sequence[str],
    report: Path,
    *,
    env: Mapping[str, str] | None = None,
    on_line: Callable[[str, bool], None] | None = None,
    on_progress: Callable[[NcuProgress], None] | None = None,
) -> NcuRun:
    """Run an ncu argument list (:func:`ncu_command`) that exports to ``report``; see :func:`run_streaming`."""
    returncode, progress, interrupted = run_streaming(command, env=env, on_line=on_line, on_progress=on_progress)
    written = report if report.exists() else None
    return NcuRun(tuple(command), returncode, progress, interrupted, written)


#: Names ``ncu --query-metrics`` does not list (launch and device attributes, section-defined metrics):
#: never checked against a catalog.
UNLISTED = ("launch__", "device__", "derived__")


def listed_metrics(ncu: str, names: Sequence[str], *, env: Mapping[str, str] | None = None,
                   chips: Sequence[str] = ()) -> set[str] | None:
    """Of ``names``, those ncu's metric catalog lists for every chip queried, exactly (suffix included);
    None when ncu could not say (no driver, an ncu without ``--query-metrics``, a timeout).

    One ``ncu --query-metrics --query-metrics-mode suffix --metrics BASES --csv``: the GPUs on this
    system, or ``chips`` (e.g. ``("gh100",)``, no GPU needed). ncu leaves out bases it does not know;
    its CSV has one column per chip, "1" where the chip has the name. :data:`UNLISTED` names are
    taken as listed."""
    counters = [n for n in names if not n.startswith(UNLISTED)]
    bases = sorted({n.split(".")[0] for n in counters})
    if not bases:
        return set(names)
    cmd = [ncu, "--query-metrics", "--query-metrics-mode", "suffix", "--metrics", ",".join(bases), "--csv",
           *(["--chips", ",".join(chips)] if chips else [])]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("ncu --query-metrics failed: %s", exc)
        return None
    rows = [r for r in csv.reader(out.stdout.splitlines()) if r]
    header = next((i for i, r in enumerate(rows) if r[0] == "Metric name"), None)
    if out.returncode != 0 or header is None or len(rows[header]) < 5:
        log.debug("ncu --query-metrics gave no catalog (exit %s): %s", out.returncode,
                  (out.stdout + out.stderr).strip()[:300])
        return None
    chip_columns = range(4, len(rows[header]))
    known = {r[0] for r in rows[header + 1:] if len(r) == len(rows[header]) and all(r[c] == "1" for c in chip_columns)}
    if not known:  # a catalog that knows none of our counters is not one to trust
        return None
    return {n for n in names if n.startswith(UNLISTED) or n in known}


def export_raw_csv(ncu: str, report: Path, csv_path: Path, *, force: bool = False) -> Path:
    """Write ncu's raw page of ``report`` (one row per launch, every metric) as CSV, its numbers
    written the C way whatever the user's locale (:func:`roofline.readers.ncu.numbers.c_numbers`)."""
    from roofline.writing.safe import write_text

    out = subprocess.run([ncu, "--import", str(report), "--csv", "--page", "raw"],
                         capture_output=True, text=True, errors="replace", env=c_numbers())
    if out.returncode != 0 or not out.stdout.strip():
        raise InputError(f"ncu could not export the report: {out.stderr.strip() or 'no output'}", path=report)
    return write_text(csv_path, out.stdout, force=force)

"""``roofline profile --timeline``: the whole program under Nsight Systems, a sample of it under Nsight
Compute, and the two joined, in one command.

1. **The bare program**, timed: the baseline the two runs' overheads are given against.
2. **Nsight Systems** (``nsys profile -t cuda,nvtx[,osrt] --export sqlite``): every launch with the
   time it has in production; ``PREFIX.nsys-rep`` and ``PREFIX.sqlite``. A target-only nsys leaves its
   capture, ``PREFIX.qdstrm``, unimported: a QdstrmImporter found beside it, in Nsight Compute's folders or
   on PATH (or named: ``importer``) makes the report, ``nsys export`` the SQLite, and the capture is removed
   as nsys itself would (:mod:`roofline.readers.nsys.capture`).
3. **The sample** (:func:`roofline.readers.nsys.window.sample_window`): by default the second
   occurrence of the outermost repeated NVTX range (the second training step); ``--sample NAME[:N]``
   names another; with no repeated range, the whole program.
4. **Nsight Compute** over the sample only (``--launch-skip``/``--launch-count``), as ``roofline
   profile`` runs it: ``PREFIX.ncu-rep``, ``PREFIX.ncu.csv``.
5. **The join** (:func:`roofline.readers.nsys.join.join_counts`): ``PREFIX.kernels.json`` holds every
   launch of the timeline, its time from the timeline, its counts from the sample.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from roofline.errors import InputError, ToolNotFoundError
from roofline.profiling.session import (EXIT_INTERRUPTED, EXIT_PROGRAM_FAILED, LineSink, Outcome, ProgressSink,
                                       check_outputs, run_with_counters)
from roofline.profiling.settings import ProfileSettings
from roofline.readers import kernel_json as table_file
from roofline.readers.nsys.capture import CAPTURE_SUFFIX
from roofline.writing.safe import check_writable, write_text

NSYS_INSTALL_HINT = ("install NVIDIA Nsight Systems (it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/nsys, or as "
                     "the 'nsight-systems' package) and put nsys on PATH, or pass --nsys PATH")


@dataclass(frozen=True)
class Overheads:
    """Wall seconds of the bare program and of its runs under each tool."""

    bare_s: float
    nsys_s: float
    ncu_s: float | None = None

    def describe(self) -> str:
        parts = [f"the bare program {self.bare_s:.2f} s", f"under nsys {self.nsys_s:.2f} s "
                 f"({self.nsys_s / self.bare_s:.2f}x)" if self.bare_s > 0 else f"under nsys {self.nsys_s:.2f} s"]
        if self.ncu_s is not None:
            parts.append(f"under ncu (the sample) {self.ncu_s:.2f} s"
                         + (f" ({self.ncu_s / self.bare_s:.2f}x)" if self.bare_s > 0 else ""))
        return "wall time: " + ", ".join(parts)


def timeline_files(settings: ProfileSettings) -> dict[str, Path]:
    return {"report": settings.path(".nsys-rep"), "sqlite": settings.path(".sqlite")}


def check_timeline_outputs(settings: ProfileSettings) -> None:
    for path in (*timeline_files(settings).values(), settings.path(CAPTURE_SUFFIX)):
        check_writable(path, force=settings.force)


def nsys_command(settings: ProfileSettings, nsys: str) -> list[str]:
    """The nsys argument list: CUDA and NVTX (and OS runtime) traced, the SQLite export written beside the report."""
    report = timeline_files(settings)["report"]
    trace = "cuda,nvtx,osrt" if settings.osrt else "cuda,nvtx"
    return [nsys, "profile", "--trace", trace, "--output", str(report.with_suffix("")), "--force-overwrite",
            "true" if settings.force else "false", "--export", "sqlite", "--stats", "false", *settings.command]


def run_with_timeline(settings: ProfileSettings, *, on_line: LineSink | None = None,
                      on_progress: ProgressSink | None = None) -> Outcome:
    """The five steps of the module docstring; the outcome's table is the joined one."""
    from roofline.profiling.ncu_runner import find_ncu, find_program, run_streaming
    from roofline.readers.nsys.join import join_counts
    from roofline.readers.nsys.timeline import read_timeline
    from roofline.readers.nsys.window import parse_sample, sample_window

    nsys = shutil.which(settings.nsys)
    if nsys is None:
        raise ToolNotFoundError(f"Nsight Systems ({settings.nsys}) was not found", hint=NSYS_INSTALL_HINT)
    find_ncu(settings.ncu)  # before the program runs three times
    check_outputs(settings)
    check_timeline_outputs(settings)
    env = dict(os.environ, **dict(settings.extra_env))
    find_program(settings.command, env)
    files = timeline_files(settings)
    began = time.perf_counter()
    returncode, _, interrupted = run_streaming(list(settings.command), env=env, on_line=on_line)
    bare = time.perf_counter() - began
    if interrupted or returncode != 0:
        return Outcome(None, "timeline", "program-failed" if not interrupted else "interrupted",
                       EXIT_PROGRAM_FAILED if not interrupted else EXIT_INTERRUPTED, (),
                       (f"the program {'was interrupted' if interrupted else f'failed on its own (exit {returncode})'}"
                        ": nothing was profiled",), returncode, 0)
    said: list[str] = []

    def nsys_line(line: str, is_tool: bool) -> None:
        said.append(line.strip())
        if on_line is not None:
            on_line(line, is_tool)

    began = time.perf_counter()
    nsys_rc, _, interrupted = run_streaming(nsys_command(settings, nsys), env=env, on_line=nsys_line)
    under_nsys = time.perf_counter() - began
    if interrupted:
        return Outcome(None, "timeline", "interrupted", EXIT_INTERRUPTED, (), ("interrupted under nsys: nothing "
                       "was profiled",), nsys_rc, 0)
    imported = _import_capture(settings, nsys) if not files["report"].is_file() else None
    if not files["report"].is_file() or not files["sqlite"].is_file():
        last = [x for x in said if "error" in x.lower()] or [x for x in said if x]
        raise InputError(f"nsys wrote no {'report' if not files['report'].is_file() else 'SQLite export'} "
                         f"(exit {nsys_rc}): {last[-1] if last else 'no output'}",
                         path=files["report"], hint="run the nsys profile command alone to see why")
    name, occurrence = parse_sample(settings.sample) if settings.sample and settings.sample != "all" else (None, None)
    own = settings.launch_skip is not None or settings.launch_count is not None  # the user's own window
    window = None if settings.sample == "all" or own else sample_window(files["sqlite"], name, occurrence)
    counting = dataclasses.replace(settings, timeline=False, sample=None)
    if window is not None:
        counting = dataclasses.replace(counting, launch_skip=window.skip, launch_count=window.count)
    began = time.perf_counter()
    counted = run_with_counters(counting, on_line=on_line, on_progress=on_progress)
    overheads = Overheads(bare, under_nsys, time.perf_counter() - began)
    chose = ("counted " + window.describe() if window is not None else "counted the launches --launch-skip/--launch-count "
             "chose" if own else "counted every launch" + ("" if settings.sample == "all" else " (no NVTX range repeats)"))
    notes = [overheads.describe(), chose, *([imported] if imported else [])]
    if counted.table is None:
        return dataclasses.replace(counted, files=(files["report"], files["sqlite"], *counted.files),
                                   notes=(*notes, *counted.notes))
    joined = join_counts(read_timeline(files["sqlite"]), counted.table)
    table_path = settings.path(".kernels.json")
    write_text(table_path, table_file.to_json(joined), force=True)  # written by the counting run a moment ago
    return dataclasses.replace(counted, table=joined, mode="timeline",
                               files=(files["report"], files["sqlite"], *counted.files),
                               notes=(*notes, *counted.notes))


def _import_capture(settings: ProfileSettings, nsys: str) -> str | None:
    """When nsys left only its capture (a target-only nsys): the report imported from it, its SQLite export, the
    capture removed; a note naming the importer. None when there is no capture. Errors keep the capture."""
    from roofline.readers.nsys.capture import import_capture, importers, ordered, version_of
    from roofline.readers.nsys.timeline import export_sqlite

    capture, files = settings.path(CAPTURE_SUFFIX), timeline_files(settings)
    if not capture.is_file():
        return None
    found = importers(nsys, settings.ncu, settings.importer)
    used = import_capture(capture, files["report"], ordered(found, version_of(nsys)), force=settings.force)
    export_sqlite(files["report"], files["sqlite"], nsys, force=settings.force)
    capture.unlink()
    return f"nsys left its capture unimported (a target-only nsys): {used} imported it"

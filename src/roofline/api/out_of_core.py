"""Analysing kernel tables larger than memory: the per-rank Parquet tables of a cluster job grouped out
of core by an engine (:mod:`roofline.engine`: DuckDB embedded, or a Dask cluster), then analysed as
any grouped table is; and the per-rank timelines of a job broken down one rank at a time and combined
by the engine. Which engine runs when none is named: :func:`roofline.api.engines.engine_for`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from os import PathLike
from typing import Any

from roofline.analysis import analyze as _analyze
from roofline.analysis.breakdown import WINDOWS
from roofline.analysis.rank_breakdown import RankBreakdown
from roofline.analysis.result import UNKNOWN, Analysis
from roofline.analysis.work import require_work
from roofline.engine.aggregate import aggregate_files
from roofline.engine.breakdowns import combine
from roofline.engine.choice import Engine
from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.machine.resolve import resolve
from roofline.readers.dispatch import is_timeline, profile_files

__all__ = ["RankBreakdown", "analyze_out_of_core", "rank_breakdown"]

PathArg = str | PathLike[str]


def analyze_out_of_core(paths: Sequence[PathArg] | PathArg, machine: Any = None, *, by: str = "name",
                        work: str = "flops", engine: str | Engine = "duckdb",
                        allow_other_machine: bool = False, fp16: str = "ncu") -> tuple[Analysis, KernelTable]:
    """The analysis of the Parquet kernel tables ``paths`` (files, or folders of ``*.parquet``),
    grouped ``by`` out of core by ``engine`` (:func:`roofline.engine.aggregate_files`), and the grouped
    table it analysed. The ceilings are chosen as :func:`roofline.analyze` does, from the GPU and
    peak metrics of the first file's first launches (one rank of a job on one GPU model). The
    summary's time per phase is over every launch; the SM clock the ceilings are scaled to is the
    time-weighted mean of the groups' (equal to the launches' where every launch's time is known).
    Nsight Systems timelines among ``paths`` are the ranks of a job, each joined with the counting
    profile among the other inputs (:mod:`roofline.engine.timelines`; ``fp16``: its FP16 convention)."""
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    done = aggregate_files(list(paths), by=by, engine=engine, fp16=fp16)
    table = done.table
    require_work(table.frame, work, table.metric_hints)
    chosen = resolve(done.sample, machine, allow_other_machine=allow_other_machine)
    if chosen.notes:
        table = dataclasses.replace(table, warnings=(*table.warnings, *chosen.notes))
    result = _analyze(table, chosen.machine, by=by, work=work)
    named = sorted((UNKNOWN if phase is None else phase, seconds) for phase, seconds in done.phase_time.items())
    return dataclasses.replace(result, peaks=chosen.peaks, phase_times=dict(named), match=done.match), table


def rank_breakdown(paths: Sequence[PathArg] | PathArg, *, window: str = "run",
                   engine: str | Engine | None = None) -> RankBreakdown:
    """Where the time went across the ranks of a job: ``paths``, one Nsight Systems timeline per rank
    (files, or folders of them), each broken down per ``window`` (``"run"``, ``"phase"``, ``"step"``)
    alone, one file in memory at a time, and the rows combined across ranks by ``engine``
    (``"duckdb"``, embedded, the default; ``"dask://HOST:PORT"``: one task per file on that cluster):
    :func:`roofline.engine.breakdowns.combine`. Per window: the mean, smallest and largest wall,
    kernel, exposed communication and idle time over the GPUs, the straggler against the median,
    and idle by cause summed (:class:`~roofline.analysis.rank_breakdown.RankBreakdown`).

    A file that is not a timeline, a timeline without GPU work, an unknown window or the pandas
    engine raise :class:`~roofline.errors.InputError` naming it."""
    if window not in WINDOWS:
        raise InputError(f"unknown breakdown window {window!r}", hint=f"choose one of {', '.join(WINDOWS)}")
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    files = [f for p in paths for f in profile_files(p)]
    other = next((f for f in files if not is_timeline(f)), None)
    if other is not None:
        raise InputError("not a timeline: the per-rank breakdown reads one Nsight Systems timeline per rank",
                         path=other, hint="give each rank's .sqlite export or .nsys-rep (nsys profile -o run.%q{RANK})")
    chosen = Engine.parse(engine if engine is not None else "duckdb")
    if not chosen.out_of_core:
        raise InputError("the ranks' breakdowns are combined by an engine: duckdb (embedded) or dask://HOST:PORT, "
                         "not pandas", hint="leave --engine out for DuckDB")
    return combine(files, window, chosen)

"""Where a timeline's time went: :func:`breakdown` (one Nsight Systems timeline in memory, or the ranks of
a job combined by an engine), and a joined timeline's production times against Nsight Compute's replay
(:func:`replay_times`).
"""

from __future__ import annotations

from typing import overload

import pandas as pd

from roofline.analysis.breakdown import WINDOWS, Breakdown, breakdown as _breakdown, launch_roofline
from roofline.analysis.rank_breakdown import RankBreakdown
from roofline.analysis.replay import ReplayTimes, replay_times
from roofline.analysis.result import Analysis
from roofline.api.core import Data, table_of
from roofline.api.engines import is_paths, rank_timelines
from roofline.errors import InputError
from roofline.kernels import KernelTable

__all__ = ["Breakdown", "ReplayTimes", "breakdown", "replay_times"]


@overload
def breakdown(data: KernelTable | pd.DataFrame, analysis: Analysis | None = None, *, window: str = "run",
              fp16: str = "ncu", engine: None = None) -> Breakdown: ...
@overload
def breakdown(data: Data, analysis: Analysis | None = None, *, window: str = "run", fp16: str = "ncu",
              engine: str | None = None) -> Breakdown | RankBreakdown: ...
def breakdown(data: Data, analysis: Analysis | None = None, *, window: str = "run", fp16: str = "ncu",
              engine: str | None = None) -> Breakdown | RankBreakdown:
    """Where each device's time went in a timeline (an Nsight Systems export, read whole): per window
    (``"run"``, each NVTX ``"phase"``, or each ``"step"``), kernel time by bound, exposed communication
    and copies by kind, idle gaps by cause, and the savable time of each ranked together
    (:func:`roofline.analysis.breakdown.breakdown`). ``analysis``: the roofline analysis of the same table
    (:func:`analyze`), whose groups give each launch its bound and savable time; None: unknown.
    A table that is not a timeline raises :class:`~roofline.errors.InputError`.

    Several timelines (one per rank of a job: files or a folder), or an ``engine`` named
    (``"duckdb"``, ``"dask://HOST:PORT"``): each rank broken down alone and combined across ranks
    by that engine, a :class:`~roofline.analysis.rank_breakdown.RankBreakdown`
    (:func:`roofline.api.out_of_core.rank_breakdown`)."""
    if is_paths(data) and (engine is not None or rank_timelines(data) is not None):  # type: ignore[arg-type]
        if analysis is not None:
            raise InputError("an analysis gives the bounds of one timeline's kernels, not of several ranks'",
                             hint="break down the ranks without it (their timelines have no counters)")
        from roofline.api.out_of_core import rank_breakdown  # DuckDB or Dask: only for the ranks of a job

        return rank_breakdown(data, window=window, engine=engine)  # type: ignore[arg-type]
    if engine is not None:
        raise InputError(f"--engine {engine} reads timeline files; this data is already in memory",
                         hint="pass the files, or leave engine out")
    table = table_of(data, fp16=fp16)
    if table.activity is None:
        raise InputError("where the time goes needs a timeline: this profile has kernel times but not the gaps "
                         "between them", hint="give an Nsight Systems export (nsys export --type sqlite run.nsys-rep)")
    if window not in WINDOWS:
        raise InputError(f"unknown breakdown window {window!r}", hint=f"choose one of {', '.join(WINDOWS)}")
    roofline = launch_roofline(table, analysis) if analysis is not None else None
    return _breakdown(table.activity, window=window, roofline=roofline)

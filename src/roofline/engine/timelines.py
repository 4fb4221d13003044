"""A job's timelines, one per rank, as the Parquet kernel tables an engine aggregates.

``roofline analyze rank*.sqlite counts.ncu-rep --engine duckdb``: each rank's Nsight Systems timeline is
read alone, joined with the one counting profile among the inputs (:func:`roofline.readers.nsys.join.join_counts`:
time from the timeline, FLOPs and bytes from the counts), and written as a Parquet kernel table in a
folder of the caller's; then the engine aggregates those tables as the ranks of one job. Only one
rank's launches are in memory at a time; the counting profile is read once. Without a counting
profile the tables hold the timelines' times alone.

The tables are named for their timelines (``job.rank3.sqlite`` -> ``job.rank3.sqlite.parquet``; a
timeline whose name carries no rank gets its place among the timelines: ``x.sqlite.rank1.parquet``),
so the ranks and the ``source`` of every launch stay those of the user's files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from roofline.errors import InputError
from roofline.engine.choice import rank_of
from roofline.readers import kernel_parquet
from roofline.readers.dispatch import is_timeline, profile_files


def timeline_inputs(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[Path], list[Path]] | None:
    """``paths`` (folders expanded) split into timelines and the other inputs (the counting profile),
    or None when none of them is a timeline."""
    files = [f for p in paths for f in profile_files(p)]
    timelines = [f for f in files if is_timeline(f)]
    return (timelines, [f for f in files if f not in timelines]) if timelines else None


def write_rank_tables(timelines: Sequence[Path], counting: Sequence[Path], folder: Path, *,
                      fp16: str = "ncu") -> tuple[Path, ...]:
    """Each of ``timelines`` joined with the counting profile ``counting`` (none: times alone) and
    written to ``folder`` as a Parquet kernel table (module docstring); the tables, in the timelines'
    order. Each launch's ``match`` metric goes with it: the engine sums the match rate over the ranks."""
    from roofline.readers import read_profile
    from roofline.readers.nsys.join import join_counts
    from roofline.readers.nsys.timeline import read_timeline

    counts = read_profile(list(counting), fp16=fp16) if counting else None
    files: list[Path] = []
    for place, timeline in enumerate(timelines):
        table = read_timeline(timeline)
        if counts is not None:
            table = join_counts(table, counts, rate_note=False)
        name = timeline.name if rank_of(timeline) is not None else f"{timeline.name}.rank{place}"
        out = folder / f"{name}.parquet"
        if out in files:
            raise InputError("two timelines of the same name (one table per rank is written under its name)",
                             path=timeline, hint="give each rank's timeline a name of its own (NAME.rankN.sqlite)")
        kernel_parquet.write(kernel_parquet.to_arrow(table), out)
        files.append(out)
        del table
    return tuple(files)

"""The profiling side of the API: run a program under Nsight Compute (or without counters) and get
its kernel table (:func:`profile`), and merge the per-rank tables of a parallel run (:func:`merge_ranks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from roofline.profiling.rank_tables import merge_tables, merge_to_parquet
from roofline.profiling.ranks import rank_from_env
from roofline.profiling.session import LineSink, Outcome, ProgressSink, profile as _profile
from roofline.profiling.settings import ProfileSettings
from roofline.profiling.timeline_run import run_with_timeline
from roofline.readers.kernel_json import to_json
from roofline.writing.analysis_files import check_files, write_all

__all__ = ["Outcome", "ProfileSettings", "merge_ranks", "profile", "rank"]


def profile(settings: ProfileSettings, *, on_line: LineSink | None = None,
            on_progress: ProgressSink | None = None) -> Outcome:
    """Run ``settings.command`` under Nsight Compute with the roofline metrics (or without counters)
    and read what it recorded (:func:`roofline.profiling.session.profile`). ``on_line(line, is_ncu)``
    gets each line the program and ncu print; ``on_progress`` ncu's count of launches profiled.
    With ``settings.timeline``: under Nsight Systems, then a sample under Nsight Compute, joined
    (:func:`roofline.profiling.timeline_run.run_with_timeline`)."""
    if settings.timeline:
        return run_with_timeline(settings, on_line=on_line, on_progress=on_progress)
    return _profile(settings, on_line=on_line, on_progress=on_progress)


def rank(env: Mapping[str, str]) -> int | None:
    """This process's rank under torchrun, mpirun or srun, from its environment ``env``; None alone
    (:func:`roofline.profiling.ranks.rank_from_env`)."""
    return rank_from_env(env)


def merge_ranks(files: Sequence[Path], out: Path, *, fp16: str = "ncu", force: bool = False) -> tuple[int, int]:
    """Merge the per-rank kernel tables (or profiles) ``files`` into ``out``: a Parquet kernel table
    (streamed: :func:`roofline.profiling.rank_tables.merge_to_parquet`) when it ends in ``.parquet``,
    else a ``.kernels.json`` (``-``: standard output). Refuses before reading when ``out`` is an input
    or exists without ``force``. Returns (distinct ranks, rows)."""
    check_files([(out, False)], force=force, inputs=files)
    if out.suffix.lower() == ".parquet":
        summary = merge_to_parquet(files, out, fp16=fp16, force=force, inputs=files)
        return summary.ranks, summary.rows
    table = merge_tables(files, fp16=fp16)
    write_all([(out, lambda: to_json(table))], force=force, inputs=files)
    return int(table.metrics["rank"].dropna().nunique()), len(table)

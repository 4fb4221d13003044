"""Which engine reads a profile, and what an out-of-core engine refuses: :func:`engine_for` (DuckDB for
the per-rank Parquet tables of a job, pandas otherwise), :func:`check_out_of_core`. The analysis out of
core itself is :mod:`roofline.api.out_of_core`, loaded only when an engine other than pandas runs.

    >>> import roofline
    >>> result = roofline.analyze("ranks/", machine="h100-sxm", engine="duckdb")   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from roofline.engine.choice import Engine, default_engine
from roofline.errors import InputError
from roofline.readers.dispatch import rank_timelines

__all__ = ["Engine", "check_out_of_core", "engine_for", "is_paths", "rank_timelines"]

PathArg = str | PathLike[str]


def engine_for(paths: Sequence[PathArg] | PathArg, engine: str | Engine | None = None) -> Engine:
    """The engine that reads ``paths``: ``engine`` as named (``"pandas"``, ``"duckdb"``,
    ``"dask://HOST:PORT"``), else DuckDB for several Parquet kernel tables whose names carry a rank
    (``run.rank0.parquet``, ...: the per-rank files of one job) and pandas for everything else
    (:func:`roofline.engine.default_engine`)."""
    if engine is not None:
        return Engine.parse(engine)
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    return default_engine([p for p in paths if str(p) != "-"]) if "-" not in map(str, paths) else Engine("pandas")


def check_out_of_core(engine: Engine, **asked: Any) -> None:
    """Refuse options an out-of-core engine cannot honour (``asked``: option name -> value, None or
    False when not given): each needs the launches in memory."""
    if not engine.out_of_core:
        return
    given = [name for name, value in asked.items() if value not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} the launches in memory, "
                         f"which --engine {engine.kind} does not hold",
                         hint="use --engine pandas (or roofline merge -o X.parquet, then analyze the file)")


def is_paths(data: Any) -> bool:
    """True when ``data`` names files (a path, or a sequence of paths), not a table."""
    if isinstance(data, (str, PathLike)):
        return True
    return isinstance(data, Sequence) and all(isinstance(p, (str, PathLike, Path)) for p in data)

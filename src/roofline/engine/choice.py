"""Which engine reads a profile: the engines ``--engine`` names (:class:`Engine`), and the default, DuckDB
for the per-rank Parquet kernel tables of one job (their names carry a rank: :func:`rank_of`), pandas for
everything else (:func:`default_engine`).

Light on purpose: every ``roofline analyze`` asks which engine reads its files, and most never go out
of core, so this module loads neither pyarrow's Parquet reader nor the engines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.errors import InputError

#: The rank in a per-rank file's name: ``run.rank3.kernels.json``, ``run.rank3.parquet``.
_RANK = re.compile(r"\.rank(\d+)(?:\.|$)")

#: The engines ``--engine`` names: pandas (in memory), DuckDB (embedded), a Dask scheduler's address.
ENGINES = ("pandas", "duckdb", "dask://HOST:PORT")
DASK_PREFIX = "dask://"


@dataclass(frozen=True)
class Engine:
    """An engine and its settings.

    ``kind``: ``"pandas"``, ``"duckdb"`` or ``"dask"``; ``address``: the Dask scheduler
    (``tcp://HOST:PORT``); ``memory_limit``: DuckDB's memory limit (``"4GB"``; None: half the
    machine's memory), beyond which it spills to ``temp_directory`` (None: a temporary folder removed
    afterwards); ``threads``: DuckDB's threads (None: one per core); ``timeout_s``: how long to wait for a
    Dask scheduler to answer."""

    kind: str
    address: str | None = None
    memory_limit: str | None = None
    temp_directory: Path | None = None
    threads: int | None = None
    timeout_s: float = 10.0

    @classmethod
    def parse(cls, text: str | Engine) -> Engine:
        """An engine from its name: ``pandas``, ``duckdb`` or ``dask://HOST:PORT``."""
        if isinstance(text, Engine):
            return text
        name = text.strip()
        if name in ("pandas", "duckdb"):
            return cls(name)
        if name.startswith(DASK_PREFIX):
            where = name[len(DASK_PREFIX):]
            host, _, port = where.rpartition(":")
            if not host or not port.isdigit():
                raise InputError(f"the Dask scheduler {name!r} is not HOST:PORT", hint="e.g. --engine dask://10.0.0.5:8786")
            return cls("dask", address=f"tcp://{where}")
        raise InputError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")

    @property
    def out_of_core(self) -> bool:
        return self.kind != "pandas"

    def describe(self) -> str:
        return f"Dask at {self.address}" if self.kind == "dask" else ("DuckDB" if self.kind == "duckdb" else "pandas")


def rank_of(path: str | Path) -> int | None:
    """The rank in a per-rank file name (``run.rank3.kernels.json`` -> 3), or None."""
    m = _RANK.search(Path(path).name)
    return int(m.group(1)) if m else None


def parquet_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The files ``paths`` names, a folder standing for the ``*.parquet`` files in it (sorted)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.glob("*.parquet") if f.is_file())
            if not found:
                raise InputError("the folder holds no Parquet kernel tables (*.parquet)", path=p,
                                 hint="an out-of-core engine reads Parquet kernel tables: roofline profile --parquet "
                                      "or roofline analyze --parquet writes them")
            files += found
        elif not p.exists():
            raise InputError("no such file or folder", path=p)
        else:
            files.append(p)
    if not files:
        raise InputError("no files given")
    return files


def is_rank_set(paths: Sequence[str | os.PathLike[str]]) -> bool:
    """True when ``paths`` are several Parquet kernel tables (a folder: its ``*.parquet``) whose names
    all carry a rank (``run.rank12.parquet``): the per-rank files of one job. The names are looked at
    first; only a set of rank names has its files' first bytes read (the Parquet magic)."""
    try:
        files = parquet_files(paths)
    except InputError:
        return False
    if len(files) < 2 or any(rank_of(f) is None for f in files):
        return False
    from roofline.readers.kernel_parquet import is_parquet  # pyarrow.parquet: only for a set of rank files

    return all(is_parquet(f) for f in files)


def default_engine(paths: Sequence[str | os.PathLike[str]]) -> Engine:
    """The engine used when none is named: DuckDB for the per-rank files of a job (:func:`is_rank_set`),
    pandas (in memory, as before) for everything else."""
    return Engine("duckdb") if is_rank_set(paths) else Engine("pandas")

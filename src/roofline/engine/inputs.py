"""The files an engine reads, checked by their footers before any row is read, and the engine named.

Only our Parquet kernel tables (``roofline.kernels/1``: :mod:`roofline.readers.kernel_parquet`) are
read out of core: their declared columns have one type each, which a query can rely on. A file
that is not one, a newer schema, declared columns of another type, or tables counting FP16 FLOPs
by different conventions are refused here, each with one message naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from roofline.errors import InputError
from roofline.readers import kernel_parquet
from roofline.readers.kernel_parquet import TABLE_FIELDS, Footer, check_declared

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


@dataclass(frozen=True)
class Inputs:
    """Checked kernel-table files: their footers in order, the declared columns any of them holds,
    whether they share one schema (else columns are matched by name), and their FP16 convention."""

    files: tuple[Path, ...]
    footers: tuple[Footer, ...]
    present: frozenset[str]
    uniform: bool
    fp16_convention: str

    @property
    def launches(self) -> int:
        return sum(f.num_rows for f in self.footers)


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


def check(paths: Sequence[str | os.PathLike[str]]) -> Inputs:
    """Read and check the footers of ``paths`` (files, or folders of ``*.parquet``); no row is read."""
    files = parquet_files(paths)
    footers = []
    for f in files:
        if not kernel_parquet.is_parquet(f):
            raise InputError("not a Parquet kernel table: an out-of-core engine reads only those", path=f,
                             hint="use --engine pandas for other profiles, or write the tables as Parquet "
                                  "(roofline analyze --parquet, roofline merge -o X.parquet)")
        footers.append(kernel_parquet.read_footer(f))
    conventions = sorted({f.fp16_convention for f in footers})
    if len(conventions) > 1:
        raise InputError(f"the tables count FP16 FLOPs by different conventions ({', '.join(conventions)})",
                         hint="re-read the profiles with one --fp16 convention")
    declared = {f.name: f.type for f in TABLE_FIELDS}
    schemas: list[pa.Schema] = []
    present: set[str] = set()
    for footer in footers:
        if any(footer.schema.equals(s) for s in schemas):  # ranks of one job: one schema, checked once
            continue
        schemas.append(footer.schema)
        check_declared(footer)
        present.update(n for n in footer.schema.names if n in declared)
    uniform = len(schemas) == 1 or len({tuple(n for n in s.names if n in declared) for s in schemas}) == 1
    return Inputs(tuple(files), tuple(footers), frozenset(present), uniform, conventions[0])

"""The files an engine reads, checked by their footers before any row is read.

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

from roofline.engine.choice import parquet_files
from roofline.errors import InputError
from roofline.readers import kernel_parquet
from roofline.readers.kernel_parquet import TABLE_FIELDS, Footer, check_declared

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

"""Combine the per-rank kernel tables of a parallel job into one (``roofline merge``).

Two ways, one result: :func:`merge_tables` builds the merged :class:`KernelTable` in memory
(for ``-o X.kernels.json``); :func:`merge_to_parquet` streams it into a Parquet kernel table
(``-o X.parquet``), holding one batch of ranks at a time, so that 1,000 ranks of 1,000 launches
merge in seconds and well under 2 GB. Either way every row keeps its ``process_id``, gets
``source`` = its file's name and, in the metrics, ``rank`` from the ``.rank<N>`` in that name.

The streaming merge checks every input before it writes a row: Parquet kernel tables by their
footers alone (schema version, FP16 convention, column types); any other input (``.kernels.json``,
a profile ``roofline analyze`` reads) is read once and set aside as a temporary Parquet file.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa

from roofline import kernels
from roofline.engine.choice import rank_of
from roofline.errors import InputError
from roofline.writing.safe import check_writable, writing
from roofline.kernels import KernelTable
from roofline.readers import kernel_json as table_file
from roofline.readers import kernel_parquet
from roofline.readers.kernel_parquet import METRIC_PREFIX, TABLE_FIELDS, Footer, check_declared

#: Rows gathered before a row group is written (a batch of ranks; bounds the memory held).
ROW_GROUP_ROWS = 1 << 17
RANK_FIELD = pa.field(METRIC_PREFIX + "rank", pa.int64())
#: Threads reading input files (decoding Parquet releases the GIL).
WORKERS = min(4, (os.cpu_count() or 1) + 1)
T = TypeVar("T")


def _read(path: Path, fp16: str) -> KernelTable:
    if path.name.endswith(".json"):
        return table_file.read(path)
    from roofline.readers import read_profile

    return read_profile([path], fp16=fp16)


def _refuse_mixed(conventions: set[str]) -> None:
    if len(conventions) > 1:
        raise InputError(f"the tables count FP16 FLOPs by different conventions ({', '.join(sorted(conventions))})",
                         hint="re-read the profiles with one --fp16 convention")


def merge_tables(paths: Sequence[str | Path], *, fp16: str = "ncu") -> KernelTable:
    """One table from per-rank tables (``*.kernels.json``, Parquet kernel tables, or any profile
    ``roofline analyze`` reads), in memory.

    Every row keeps its ``process_id`` and gets ``source`` = its file's name; the rank
    (from the ``.rank<N>`` in the name) goes to the ``rank`` column of ``metrics``.
    """
    if not paths:
        raise InputError("no files to merge")
    frames, metrics, sources, conventions = [], [], [], set()
    warnings: dict[str, None] = {}
    hints: dict[str, str] = {}
    for p in map(Path, paths):
        t = _read(p, fp16)
        conventions.add(t.fp16_convention)
        f = t.frame.copy(deep=False)  # copy-on-write: only source is new
        f["source"] = kernels.encoded_text([p.name], np.zeros(len(f), dtype=np.int64))  # one text, encoded
        frames.append(f)
        m = t.metrics.reset_index(drop=True).copy() if not t.metrics.empty else pd.DataFrame(index=range(len(f)))
        m["rank"] = pd.array([rank_of(p)] * len(f), dtype="Int64")
        metrics.append(m)
        warnings.update(dict.fromkeys(t.warnings))
        hints.update(t.metric_hints)
        sources.append(str(p))
    _refuse_mixed(conventions)
    frame = kernels.concat(frames)
    merged_metrics = pd.concat(metrics, ignore_index=True)
    merged_metrics.index = frame.index
    return KernelTable(frame=frame, metrics=merged_metrics, sources=tuple(sources), warnings=tuple(warnings),
                       fp16_convention=next(iter(conventions)), metric_hints=hints)


@dataclass(frozen=True)
class MergeSummary:
    """What :func:`merge_to_parquet` wrote: files merged, distinct ranks named, rows."""

    files: int
    ranks: int
    rows: int


def _footers(paths: Sequence[Path], fp16: str, spill: Path) -> list[Footer]:
    """Every input's footer, in order: Parquet kernel tables as they are (their footers checked
    first, all of them, before any other input is read), others read and written to ``spill``."""
    kinds = {p: kernel_parquet.is_parquet(p) for p in paths}
    parquet = [p for p in paths if kinds[p]]
    footers = dict(zip(parquet, _in_order([partial(kernel_parquet.read_footer, p) for p in parquet], WORKERS)))
    conventions = {f.fp16_convention for f in footers.values()}
    _refuse_mixed(conventions)
    for i, p in enumerate(paths):
        if kinds[p]:
            continue
        table = _read(p, fp16)
        _refuse_mixed(conventions | {table.fp16_convention})
        conventions.add(table.fp16_convention)
        tmp = spill / f"{i}.parquet"
        kernel_parquet.write(kernel_parquet.to_arrow(table), tmp)
        footers[p] = kernel_parquet.read_footer(tmp)
    return [footers[p] for p in paths]


def merged_schema(footers: Sequence[Footer]) -> pa.Schema:
    """The declared columns, then every metric of any input (first seen first, types promoted:
    an integer metric that is fractional elsewhere is float64), then ``metric:rank``."""
    metrics: dict[str, list[pa.Field]] = {}
    distinct: list[pa.Schema] = []
    for f in footers:
        if any(f.schema.equals(d) for d in distinct):  # ranks of one job: one schema, checked once
            continue
        distinct.append(f.schema)
        check_declared(f)
        for fld in f.schema:
            if fld.name.startswith(METRIC_PREFIX) and fld.name != RANK_FIELD.name:
                metrics.setdefault(fld.name, []).append(fld)
    fields = list(TABLE_FIELDS)
    for name, seen in metrics.items():
        try:
            fields.append(pa.unify_schemas([pa.schema([x]) for x in seen], promote_options="permissive").field(0))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"the inputs store metric {name[len(METRIC_PREFIX):]!r} as different types: {exc}") from None
    return pa.schema([*fields, RANK_FIELD])


@dataclass(frozen=True)
class _Target:
    """The merged schema and what conforming each input to it needs, worked out once."""

    schema: pa.Schema
    body: tuple[str, ...]  # every column but source and metric:rank, in order
    read: frozenset[str]  # the columns read from an input (all of body it has)
    source_at: int

    @classmethod
    def of(cls, schema: pa.Schema) -> _Target:
        body = tuple(n for n in schema.names if n not in ("source", RANK_FIELD.name))
        return cls(schema, body, frozenset(body), schema.get_field_index("source"))


def _conformed(data: pa.Table, target: _Target, source: str, rank: int | None) -> pa.Table:
    """``data`` with ``source`` and ``metric:rank`` set and the columns of ``target`` (absent ones null)."""
    n, schema = data.num_rows, target.schema
    names = data.schema.names
    if names == list(target.body) or target.read <= set(names):  # the usual case, in C++
        out = data if names == list(target.body) else data.select(list(target.body))
        out = out.add_column(target.source_at, "source", pa.repeat(pa.scalar(source, pa.string()), n))
        out = out.append_column(RANK_FIELD, pa.repeat(pa.scalar(rank, pa.int64()), n))
        return out if out.schema.equals(schema) else out.cast(schema)
    have = set(names)
    columns = []
    for fld in schema:
        if fld.name == "source":
            columns.append(pa.repeat(pa.scalar(source, pa.string()), n))
        elif fld.name == RANK_FIELD.name:
            columns.append(pa.repeat(pa.scalar(rank, pa.int64()), n))
        elif fld.name in have:
            col = data.column(fld.name)
            columns.append(col if col.type == fld.type else col.cast(fld.type))
        else:
            columns.append(pa.nulls(n, fld.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _in_order(jobs: Sequence[Callable[[], T]], workers: int) -> Iterator[T]:
    """Run ``jobs`` on a few threads (pyarrow decodes without the GIL), yielding results in order
    with at most ``2 * workers`` done ahead: memory stays bounded whatever the number of jobs."""
    with ThreadPoolExecutor(workers) as pool:
        ahead: deque[Future[T]] = deque()
        for job in jobs:
            ahead.append(pool.submit(job))
            if len(ahead) >= 2 * workers:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


def _read_part(footer: Footer, target: _Target, path: Path) -> pa.Table:
    """One input's rows in the merged schema, ``source`` its name, ``rank`` from its name."""
    wanted = [n for n in footer.schema.names if n in target.read]
    return _conformed(kernel_parquet.read_arrow(footer, wanted), target, path.name, rank_of(path))


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` that replaces it once the block ends without error
    (never half a file); created with the permissions an ordinary new file gets (umask applied)."""
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)  # reopened below with mode 0o666 & ~umask, not mkstemp's 0o600
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        yield Path(tmp)
        with writing(path):
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def merge_to_parquet(paths: Sequence[str | Path], out: str | Path, *, fp16: str = "ncu", force: bool = False,
                     inputs: Sequence[str | Path] = ()) -> MergeSummary:
    """Merge per-rank tables (as :func:`merge_tables`) into the Parquet kernel table ``out``, streaming.

    Refuses before writing: no inputs, an input that is the output, an existing ``out`` without
    ``force``, a Parquet file that is not a kernel table or of a newer schema, mixed FP16
    conventions, a metric stored as incompatible types. One row group per batch of ranks
    (:data:`ROW_GROUP_ROWS` rows)."""
    if not paths:
        raise InputError("no files to merge")
    files = [Path(p) for p in paths]
    dest = check_writable(out, force=force, inputs=[*files, *map(Path, inputs)])
    with tempfile.TemporaryDirectory(prefix="roofline-merge-") as spill:
        footers = _footers(files, fp16, Path(spill))
        schema = merged_schema(footers)
        warnings: dict[str, None] = {}
        notes: dict[str, dict[str, None]] = {}
        hints: dict[str, str] = {}
        for f in footers:
            warnings.update(dict.fromkeys(f.warnings))
            hints.update(f.metric_hints)
            for column, texts in f.column_notes.items():
                notes.setdefault(column, {}).update(dict.fromkeys(texts))
        meta = kernel_parquet.file_metadata(
            fp16_convention=footers[0].fp16_convention, sources=[str(p) for p in files], warnings=list(warnings),
            column_notes={c: list(t) for c, t in notes.items()}, metric_hints=hints)
        schema = schema.with_metadata(meta)
        rows = 0
        with _replacing(dest) as tmp:
            with kernel_parquet.writer(tmp, schema) as writer:
                batch: list[pa.Table] = []
                pending = 0
                target = _Target.of(schema)
                jobs = [partial(_read_part, footer, target, path) for path, footer in zip(files, footers)]
                for part in _in_order(jobs, WORKERS):
                    batch.append(part)
                    pending += part.num_rows
                    if pending >= ROW_GROUP_ROWS:
                        writer.write_table(pa.concat_tables(batch), row_group_size=pending)
                        rows, batch, pending = rows + pending, [], 0
                if batch or rows == 0:
                    writer.write_table(pa.concat_tables(batch) if batch else schema.empty_table(),
                                       row_group_size=max(pending, 1))
                    rows += pending
        ranks = {rank_of(p) for p in files}
    return MergeSummary(files=len(files), ranks=len(ranks - {None}), rows=rows)

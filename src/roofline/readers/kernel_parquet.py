"""Our kernel table as a Parquet file: what ``roofline analyze --parquet``, ``roofline profile
--parquet`` and ``roofline merge -o X.parquet`` write, and what ``roofline analyze X.parquet`` reads
back (docs/parquet.md).

The same table, columns and units as the ``*.kernels.json`` file (schema ``roofline.kernels/1``,
:mod:`roofline.readers.kernel_json`), in a columnar file. One row per launch. Columns: every
column of :data:`roofline.kernels.COLUMNS` under its own name and declared type (``Int64`` ->
int64, ``string`` -> string, ``boolean`` -> bool, ``float64`` -> double), then the raw profiler
metrics (:attr:`KernelTable.metrics`) as ``metric:<name>`` (the profiler's own metric name), so that
guidance works on a table read back. Unknown is null in every column, floats included: a NaN is
written as null and read back as NaN, so a query that asks ``IS NULL`` finds every unknown value.
The file's key-value metadata (:data:`KEYS`, named ``roofline:...`` like Arrow's own
``ARROW:schema``) holds the schema version, the SI unit of every declared column, the FP16
convention, the sources, the warnings, the column notes and the roofline version.

A file is ours when it starts with the Parquet magic ``PAR1`` and its footer has the
``roofline:schema`` key; reading checks only the footer first (:func:`read_footer`), which is what
``roofline merge`` needs to check 1,000 files cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike, fspath
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roofline import kernels
from roofline._version import __version__
from roofline.errors import InputError, RooflineError
from roofline.kernels import COLUMNS, KernelTable
from roofline.readers.kernel_json import SCHEMA

SCHEMA_NAME, _, _version = SCHEMA.partition("/")
#: The kernel-table schema version this module writes and the newest it reads.
VERSION = int(_version)
#: Raw metric columns are stored under this prefix, then the profiler's metric name.
METRIC_PREFIX = "metric:"
MAGIC = b"PAR1"
#: The key-value metadata of the file (values are UTF-8 text; JSON where marked).
KEYS = {
    "schema": "roofline:schema",                    # "roofline.kernels/1"
    "version": "roofline:version",                  # the roofline version that wrote the file
    "fp16_convention": "roofline:fp16_convention",  # "ncu" or "paper"
    "units": "roofline:units",                      # JSON {column: SI unit ("" when none)}
    "sources": "roofline:sources",                  # JSON [input file, ...]
    "warnings": "roofline:warnings",                # JSON [text, ...]
    "column_notes": "roofline:column_notes",        # JSON {column: [text, ...]}
    "metric_hints": "roofline:metric_hints",        # JSON {column: the metrics that supply it}
    "metric_prefix": "roofline:metric_prefix",      # "metric:"
}
#: Arrow type of each declared dtype.
ARROW_TYPES = {"Int64": pa.int64(), "string": pa.string(), "boolean": pa.bool_(), "float64": pa.float64()}
#: Pandas dtype of each Arrow type of a declared column, when read back (float64: numpy, null -> NaN).
_PANDAS_TYPES = {pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype(),
                 pa.bool_(): pd.BooleanDtype()}
_TEXT_TYPES = {pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}
#: The declared columns as Arrow fields, in table order.
TABLE_FIELDS: tuple[pa.Field, ...] = tuple(pa.field(c.name, ARROW_TYPES[c.dtype]) for c in COLUMNS)
UNITS: dict[str, str] = {c.name: c.unit for c in COLUMNS}


@dataclass(frozen=True)
class Footer:
    """What a kernel-table Parquet file says about itself, read from its footer alone."""

    path: Path
    schema: pa.Schema
    num_rows: int
    fp16_convention: str
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    column_notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: What to collect per column (:attr:`roofline.kernels.KernelTable.metric_hints`); none in a file
    #: written before the key existed.
    metric_hints: Mapping[str, str] = field(default_factory=dict)
    #: The parsed footer, handed back to pyarrow so that a second read does not parse it again.
    metadata: Any = None


def file_metadata(*, fp16_convention: str, sources: Sequence[str] = (), warnings: Sequence[str] = (),
                  column_notes: Mapping[str, Sequence[str]] | None = None,
                  metric_hints: Mapping[str, str] | None = None) -> dict[str, str]:
    """The key-value metadata of a kernel-table file (see :data:`KEYS`)."""
    return {
        KEYS["schema"]: SCHEMA,
        KEYS["version"]: __version__,
        KEYS["fp16_convention"]: fp16_convention,
        KEYS["units"]: json.dumps(UNITS),
        KEYS["sources"]: json.dumps(list(sources)),
        KEYS["warnings"]: json.dumps(list(warnings)),
        KEYS["column_notes"]: json.dumps({k: list(v) for k, v in (column_notes or {}).items()}),
        KEYS["metric_hints"]: json.dumps(dict(metric_hints or {})),
        KEYS["metric_prefix"]: METRIC_PREFIX,
    }


def _metric_array(name: str, values: pd.Series) -> pa.Array:
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
        raise RooflineError(f"metric {name!r} cannot be written to Parquet ({values.dtype}): {exc}") from None
    return arr.cast(pa.string()) if pa.types.is_large_string(arr.type) else arr


def to_arrow(table: KernelTable) -> pa.Table:
    """The kernel table (validated) and its metrics as one Arrow table with the file's metadata."""
    frame = table.frame
    if list(frame.columns) != list(kernels.COLUMN_NAMES) or any(
            str(frame[c.name].dtype) != c.dtype for c in COLUMNS):  # a reader's table is valid already
        frame = kernels.validate(frame)
    arrays: list[pa.Array] = []
    for f in TABLE_FIELDS:
        if f.name not in frame.columns:  # known-missing (absent): unknown in every row, as NaN was
            arrays.append(pa.nulls(len(frame), f.type))
            continue
        col = frame[f.name]
        # float64: NaN -> null (unknown); the extension dtypes carry their own mask; an encoded
        # identity (categorical) is an Arrow dictionary, cast to the file's text by Arrow
        arr = pa.array(col.to_numpy(), from_pandas=True) if f.type == pa.float64() else pa.array(col.array)
        arrays.append(arr if arr.type == f.type else arr.cast(f.type))
    fields = list(TABLE_FIELDS)
    metrics = table.metrics
    if len(metrics.columns):
        if len(metrics) != len(frame):
            raise RooflineError(f"the metrics have {len(metrics)} rows, the kernel table {len(frame)}")
        for name in metrics.columns:
            arr = _metric_array(str(name), metrics[name])
            arrays.append(arr)
            fields.append(pa.field(METRIC_PREFIX + str(name), arr.type))
    meta = file_metadata(fp16_convention=table.fp16_convention, sources=table.sources, warnings=table.warnings,
                         column_notes=table.column_notes, metric_hints=table.metric_hints)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))


def _write_options(schema: pa.Schema) -> dict[str, Any]:
    """The Parquet settings of every kernel-table file.

    Dictionary encoding for text columns only (kernel names repeat; measured values rarely do,
    and trying a dictionary on them doubles the writing time). LZ4 (Parquet's LZ4_RAW): a 1,000-launch
    rank file reads ~30 % faster than with zstd (which pays for a fresh context per page, and small
    files are all small pages) for ~20 % more bytes; that reading is most of a 1,000-rank merge. No
    ``ARROW:schema`` key: Parquet's own types say everything for int64, double, bool and string,
    and that key would repeat our metadata (a footer a third smaller, read ~10 % faster)."""
    text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    return {"compression": "lz4", "use_dictionary": text, "store_schema": False}


@contextmanager
def writer(where: str | PathLike[str] | pa.NativeFile, schema: pa.Schema) -> Iterator[pq.ParquetWriter]:
    """A Parquet writer of kernel-table files (one place: --parquet, merge and its spills write alike);
    the key-value metadata of ``schema`` (:func:`file_metadata`) goes into the footer."""
    with pq.ParquetWriter(where if isinstance(where, pa.NativeFile) else fspath(where), schema,
                          **_write_options(schema)) as out:
        yield out
        out.add_key_value_metadata(schema.metadata or {})


def write(data: pa.Table, where: str | PathLike[str] | pa.NativeFile) -> None:
    """Write an Arrow kernel table (:func:`to_arrow`) as one Parquet file."""
    with writer(where, data.schema) as out:
        out.write_table(data)


def to_bytes(table: KernelTable) -> bytes:
    """The kernel table as the bytes of a Parquet file (``roofline analyze --parquet``)."""
    sink = pa.BufferOutputStream()
    write(to_arrow(table), sink)
    return bytes(sink.getvalue().to_pybytes())


def is_parquet(path: str | PathLike[str]) -> bool:
    """True when the file starts with the Parquet magic (ours or not: see :func:`read_footer`)."""
    try:
        with open(fspath(path), "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def _json(meta: Mapping[bytes, bytes], key: str, default: Any, path: Path) -> Any:
    raw = meta.get(KEYS[key].encode())
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        raise InputError(f"the Parquet metadata {KEYS[key]!r} is not JSON", path=path) from None


def check_declared(footer: Footer) -> None:
    """Refuse a file whose declared kernel-table columns hold another type than declared (a large
    string for a string passes)."""
    declared = {f.name: f.type for f in TABLE_FIELDS}
    for fld in footer.schema:
        want = declared.get(fld.name)
        if want is not None and fld.type != want and not (want == pa.string() and fld.type == pa.large_string()):
            raise InputError(f"kernel-table column {fld.name!r} is {fld.type}, not {want}", path=footer.path,
                             hint="write kernel tables with roofline analyze --parquet or roofline merge")


def read_footer(path: str | PathLike[str]) -> Footer:
    """Read and check the footer of a kernel-table Parquet file (no row is read).

    Raises :class:`InputError` for a file that is not Parquet, a Parquet file that is not ours,
    or one written by a newer roofline (a schema version above :data:`VERSION`)."""
    p = Path(fspath(path))
    try:
        md = pq.read_metadata(p)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=p) from None
    meta = md.metadata or {}
    schema = meta.get(KEYS["schema"].encode(), b"").decode("utf-8", "replace")
    name, _, version = schema.partition("/")
    if name != SCHEMA_NAME:
        raise InputError(f"a Parquet file that is not a roofline kernel table (no {KEYS['schema']!r} = "
                         f"{SCHEMA!r} in its metadata)", path=p,
                         hint="write kernel tables with roofline analyze --parquet or roofline merge -o X.parquet")
    if not version.isdigit() or int(version) > VERSION:
        raise InputError(f"kernel table of schema {schema!r}, newer than this roofline reads ({SCHEMA!r})", path=p,
                         hint="upgrade roofline (pip install -U roofline) to read it")
    convention = meta.get(KEYS["fp16_convention"].encode(), b"ncu").decode("utf-8", "replace")
    if convention not in kernels.FP16_CONVENTIONS:
        raise InputError(f"unknown FP16 convention {convention!r} in the Parquet metadata", path=p)
    notes = _json(meta, "column_notes", {}, p)
    return Footer(
        path=p, schema=md.schema.to_arrow_schema(), num_rows=md.num_rows, fp16_convention=convention,
        sources=tuple(_json(meta, "sources", [], p)), warnings=tuple(_json(meta, "warnings", [], p)),
        column_notes={k: tuple(v) for k, v in notes.items()}, metric_hints=dict(_json(meta, "metric_hints", {}, p)),
        metadata=md,
    )


def read_arrow(footer: Footer, columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of the file ``footer`` was read from, as Arrow (the footer is not parsed again)."""
    try:
        # memory-mapped, one thread: ~15 % less CPU on small files; merge reads several files at once
        with pq.ParquetFile(footer.path, metadata=footer.metadata, memory_map=True) as file:
            return file.read(columns=columns, use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file: {exc}", path=footer.path) from None


def _encoded(column: pa.ChunkedArray) -> pd.Categorical:
    """An identity column read as an Arrow dictionary (``read_dictionary``), as an encoded kernel-table
    column: the dictionary's texts and the indices as codes (null: -1); no text is made per launch."""
    if not pa.types.is_dictionary(column.type):  # not text in the file (never written so): encoded here
        column = column.dictionary_encode()
    column = column.unify_dictionaries()  # one dictionary for every row group
    if not column.num_chunks:
        return kernels.encoded_text([], np.zeros(0, dtype=np.int64))
    texts = column.chunk(0).dictionary.to_pylist()
    codes = np.concatenate([pc.fill_null(chunk.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
                            for chunk in column.chunks])
    return kernels.encoded_text(texts, codes)


def _frame(data: pa.Table, footer: Footer) -> pd.DataFrame:
    """The validated kernel-table frame from the declared columns read (``data`` is used up), in
    the launch table's lean form: identity columns (:data:`~roofline.kernels.ENCODED_COLUMNS`,
    read as Arrow dictionaries) encoded straight from their dictionaries.

    Declared columns the file lacks (added to :data:`~roofline.kernels.COLUMNS` after it was
    written) are unknown; columns neither declared nor metrics are ignored."""
    names = set(data.column_names)
    encoded = {name: _encoded(data.column(name)) for name in kernels.ENCODED_COLUMNS if name in names}
    data = data.drop_columns(list(encoded))
    # self_destruct: each Arrow column is freed once converted (peak memory ~ one copy, not two)
    frame = data.to_pandas(types_mapper=_PANDAS_TYPES.get, self_destruct=True, split_blocks=True)
    for name, values in encoded.items():  # (validate puts the columns in declared order)
        frame[name] = values
    missing = [f.name for f in TABLE_FIELDS if f.name not in names]
    if missing:
        empty = kernels.empty_frame(len(frame))
        for name in missing:
            frame[name] = empty[name].to_numpy() if empty[name].dtype == "float64" else empty[name].array
        if "ops" in missing:
            frame = kernels.with_total_ops(frame)
    return kernels.lean(kernels.validate(frame, where=str(footer.path)))  # the launch table's contract


def _metrics(data: pa.Table, index: pd.Index) -> pd.DataFrame:
    """The raw metrics, their ``metric:`` prefix taken off (``data`` is used up)."""
    if not data.num_columns:
        return pd.DataFrame(index=index)
    names = [n[len(METRIC_PREFIX):] for n in data.column_names]
    metrics = data.to_pandas(types_mapper=_TEXT_TYPES.get, self_destruct=True, split_blocks=True)
    metrics.columns = names
    metrics.index = index
    return metrics


def _table(frame: pd.DataFrame, metrics: pd.DataFrame, footer: Footer) -> KernelTable:
    return KernelTable(frame=frame, metrics=metrics, sources=footer.sources, warnings=footer.warnings,
                       fp16_convention=footer.fp16_convention, column_notes=dict(footer.column_notes),
                       metric_hints=dict(footer.metric_hints))


def _metric_columns(schema: pa.Schema) -> list[str]:
    return [n for n in schema.names if n.startswith(METRIC_PREFIX)]


def _identities(schema: pa.Schema) -> list[str]:
    """The identity columns of the file, read as Arrow dictionaries (their distinct texts and codes)."""
    return [name for name in kernels.ENCODED_COLUMNS if name in schema.names]


def read(path: str | PathLike[str]) -> KernelTable:
    """Read a kernel-table Parquet file (see the module docstring): the declared columns first,
    then the metrics, each converted to pandas as it is read (1e6 launches: ~0.9 GB peak, not 1.4)."""
    footer = read_footer(path)
    present = set(footer.schema.names)
    try:
        with pq.ParquetFile(footer.path, metadata=footer.metadata, read_dictionary=_identities(footer.schema)) as file:
            frame = _frame(file.read(columns=[f.name for f in TABLE_FIELDS if f.name in present]), footer)
            metrics = _metrics(file.read(columns=_metric_columns(footer.schema)), frame.index)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file: {exc}", path=footer.path) from None
    return _table(frame, metrics, footer)


def read_head(path: str | PathLike[str], rows: int, metrics: Callable[[Sequence[str]], list[str]]) -> KernelTable:
    """The first ``rows`` launches of a kernel-table Parquet file, with the metrics ``metrics`` picks
    from the file's metric names (prefix taken off): a sample of a file too large to read whole (the
    out-of-core engines choose the ceilings from it)."""
    footer = read_footer(path)
    present = set(footer.schema.names)
    names = {n[len(METRIC_PREFIX):]: n for n in _metric_columns(footer.schema)}
    picked = [names[m] for m in metrics(list(names))]
    wanted = [f.name for f in TABLE_FIELDS if f.name in present]
    try:
        with pq.ParquetFile(footer.path, metadata=footer.metadata, read_dictionary=_identities(footer.schema)) as file:
            first = next(file.iter_batches(batch_size=max(1, rows), columns=[*wanted, *picked]), None)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file: {exc}", path=footer.path) from None
    data = pa.Table.from_batches([first]) if first is not None else pa.schema(
        [footer.schema.field(n) for n in [*wanted, *picked]]).empty_table()
    frame = _frame(data.select(wanted), footer)
    return _table(frame, _metrics(data.select(picked), frame.index), footer)

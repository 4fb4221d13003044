"""A CSV table read with pyarrow's multi-threaded columnar parser, in slabs, and its number columns.

Measured on the 2-core development VM (benchmarks/bench_analyze.py's 1,000,000-launch raw page,
380 MB): pyarrow's parser with two threads, reading only the columns asked for and the text
identities dictionary-encoded, takes about half the wall time of pandas' C engine; read in one
call it holds the whole file's bytes until the end (0.9 GB RSS), so the file is fed to it in slabs
of :data:`SLAB_BYTES` cut at line ends (:mod:`roofline.readers.slabs`: a file on disk memory-mapped
one slab at a time). Each slab's number columns
are written into arrays reserved for the whole file before the next slab is parsed, and those
arrays become the pandas frame's blocks as they are (:class:`Columns`): the numbers are copied once.
ncu never writes a line break inside a value, which is what cutting at line ends needs. In a large
file (:data:`THREADED_BYTES`) the next slab is parsed while this one's columns are converted and
copied, one column per thread (Arrow compute and NumPy release the GIL).

Numbers: pyarrow reads plain integers and decimals itself; a column it left as text (digit groups
``"1,234,567"``, ``"1 234"``, a decimal comma ``"1.234,5"``) is converted here with Arrow compute
(:func:`roofline.readers.ncu.numbers.plain_arrow`, then one cast: :func:`numbers`), per column,
never per value in Python; in a large file (:data:`COMPILED_BYTES`) text as ncu writes it by default
(``"1,234,567.89"``) is first read by a compiled loop, four times faster
(:mod:`roofline.readers.ncu.grouped`). In a file whose decimal mark is a comma pyarrow would read
``6.144`` (6144 grouped) as a decimal, so the caller asks for such columns as text.

Text is not checked for UTF-8 by pyarrow's parse (``check_utf8=False``: 0.13 of its 1.2 CPU seconds
on the 1e6-launch page); a column kept as text is checked when it is kept (:func:`check_utf8`), a
dictionary by its distinct values, and a column made numbers needs no check. The module loads no
pandas, and neither does the parse: it runs before pandas is loaded (:mod:`roofline.readers.ncu.ahead`).
pyarrow's own ``to_numpy`` and its conversion of Python values load pandas, so numbers are taken
from the Arrow buffers (:func:`to_numpy`) and compute functions are given Arrow values only.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from roofline.readers.ncu import grouped
from roofline.readers.ncu.numbers import plain_arrow
from roofline.readers.slabs import FileShrank, slabs

if TYPE_CHECKING:
    import pandas as pd

#: Bytes of the file parsed per pyarrow call: big enough for both threads to stay busy (8 blocks),
#: small enough that the raw text never dominates memory. 32 MiB rather than 64: each slab's Arrow
#: arrays are fresh memory the kernel zeroes, and two slabs are alive at a time; on the 2-core VM,
#: 1e6 launches with ncu's separators: peak 0.58 against 0.64 GB, 160-178 against 204-237 huge pages
#: faulted in, time no different beyond the noise (40 alternated pairs: 0.97-1.08x; results in
#: benchmarks/results/bench_analyze.txt).
SLAB_BYTES = 32 << 20
#: pyarrow's block size within a slab (one parallel task per block).
BLOCK_BYTES = 4 << 20
#: Files of at least this many bytes have their columns converted and copied by one thread per core.
THREADED_BYTES = 16 << 20
#: Files of at least this many bytes have their digit-grouped numbers read by the compiled loop of
#: :mod:`roofline.readers.ncu.grouped`: compiling it costs 50-80 ms once (llvmlite loaded), it saves
#: about 40 ms a million values (1e6 launches with ncu's separators: 0.55 CPU seconds).
COMPILED_BYTES = 64 << 20
#: Text columns stored as dictionaries (repeated kernel names cost one copy each).
DICTIONARY = pa.dictionary(pa.int32(), pa.string())


class MalformedRow(ValueError):
    """A data row with the wrong number of fields (not a ``==PROF==`` line), or a value pyarrow
    cannot read."""


class NotUtf8(ValueError):
    """Text that is not UTF-8 (read it again with ``encoding="latin1"``)."""


class Stopped(Exception):
    """The parse was asked to stop (:func:`read_slabs`' ``stop``) before the file's end."""


#: A column's piece from one slab: numbers as numpy (int64 without gaps, else float64 with NaN),
#: anything else as Arrow (text, dictionaries).
Piece: TypeAlias = "np.ndarray | pa.ChunkedArray"


@dataclass
class Columns:
    """The columns read so far. ``numeric`` columns are made numbers (and multiplied by their
    factor) slab by slab, each written into an array of its own reserved for the whole file
    (:attr:`capacity` rows, from the first slab's rows per byte), so that only one slab's text and
    Arrow arrays are alive at a time and the numbers are copied once. A numeric column with text in
    some slab, and every other column, is kept as one piece per slab (:attr:`parts`): numbers as
    numpy, text as Arrow."""

    names: list[str]
    numeric: dict[str, float]  # column -> factor to SI
    decimal_comma: bool = False
    #: Digit groups read by the compiled loop (:func:`~roofline.readers.ncu.grouped.grouped_numbers`).
    compiled: bool = False
    parts: dict[str, list[Piece]] = field(default_factory=dict)
    rows: int = 0
    #: Rows reserved in :attr:`filled` (grown when the file holds more).
    capacity: int = 0
    #: Numeric columns numbers in every slab so far: rows ``[0, rows)`` are filled. int64 while
    #: every value has been a whole number without a gap and the factor is 1, else float64.
    filled: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, table: pa.Table, pool: Executor | None = None) -> None:
        """Take one slab's columns. ``pool``: threads that convert and copy the columns side by side
        (Arrow compute and NumPy copies release the GIL)."""
        if table.num_rows == 0:  # a slab of ==PROF== lines only: its columns have no type
            return
        rows, end = self.rows, self.rows + table.num_rows
        if end > self.capacity:
            self._grow(max(end, self.capacity * 3 // 2))

        def convert(name: str) -> pa.ChunkedArray | pa.Array | None:
            return numbers(table.column(name), self.decimal_comma, self.compiled) if name in self.numeric else None

        each = pool.map if pool is not None else map
        fills: list[tuple[str, pa.ChunkedArray | pa.Array]] = []
        for name, converted in zip(self.names, list(each(convert, self.names))):
            factor = self.numeric.get(name)
            if factor is None or converted is None or name in self.parts:  # text, or numbers beside text
                if name in self.filled:  # text for the first time: the numbers so far become a piece
                    self.parts[name] = [self.filled.pop(name)[:rows].copy()]
                piece: Piece = table.column(name)
                if converted is None:  # kept as text: the parse did not check it (see read_slabs)
                    check_utf8(piece)
                if converted is not None and factor is not None:
                    piece = to_numpy(converted) * factor if factor != 1.0 else to_numpy(converted)
                self.parts.setdefault(name, []).append(piece)
            else:
                fills.append((name, converted))
        for name, converted in fills:  # each column's array chosen here: the threads only write into their own
            self._target(name, _whole(converted) and self.numeric[name] == 1.0)
        list(each(lambda job: self._fill(job[0], job[1], self.numeric[job[0]], rows), fills))
        self.rows = end

    def _target(self, name: str, whole: bool) -> None:
        """The array of ``name`` for the whole file: int64 while every value so far has been a
        whole number without a gap (and the factor 1), else float64."""
        target = self.filled.get(name)
        if target is None:
            self.filled[name] = np.empty(self.capacity, dtype=np.int64 if whole else np.float64)
        elif target.dtype.kind in "iu" and not whole:  # a fraction or a gap: the column is float from now on
            self.filled[name] = target.astype(np.float64)

    def _fill(self, name: str, converted: pa.ChunkedArray | pa.Array, factor: float, row: int) -> None:
        """Write a slab's numbers of ``name`` from ``row`` on, chunk by chunk (no joined copy)."""
        chunks = converted.chunks if isinstance(converted, pa.ChunkedArray) else [converted]
        target = self.filled[name]
        arrays = [to_numpy(c) for c in chunks]
        for values in arrays:
            out = target[row:row + len(values)]
            if factor != 1.0:
                np.multiply(values, factor, out=out)
            else:
                out[...] = values
            row += len(values)

    def _grow(self, capacity: int) -> None:
        for name, values in self.filled.items():
            grown = np.empty(capacity, dtype=values.dtype)
            grown[:self.rows] = values[:self.rows]
            self.filled[name] = grown
        self.capacity = capacity

    def arrow(self, name: str) -> pa.ChunkedArray:
        """A column kept as Arrow (identities), its pieces joined; dropped from the parts."""
        chunks = [c for p in self.parts.pop(name) for c in _chunks(p)]
        kinds = {c.type for c in chunks}
        if len(kinds) > 1:  # e.g. a dictionary in one slab, all-empty (null) in another
            chunks = [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c.cast(pa.string()) for c in chunks]
        return pa.chunked_array(chunks) if chunks else pa.chunked_array([], type=pa.string())

    def frame(self, order: Sequence[str], text: object) -> pd.DataFrame:
        """The ``order`` columns as one pandas frame: each numeric column its own block, adopted as
        it is (not copied); a column with text in any slab is text (``text``: its pandas dtype),
        with numbers from other slabs written as text. (pandas is imported here, not with the module:
        the parse runs before it is loaded, :mod:`roofline.readers.ncu.ahead`.)"""
        import pandas as pd

        position = {name: i for i, name in enumerate(order)}
        blocks: list[tuple[Any, np.ndarray]] = []
        for name in order:
            if name in self.filled:
                values = self.filled.pop(name)[:self.rows]
                blocks.append((values.reshape(1, -1), np.array([position[name]])))
            else:
                chunks = [c for p in self.parts.pop(name) for c in _text_chunks(p)]
                values = pa.chunked_array(chunks, type=pa.string()).to_pandas(types_mapper={pa.string(): text}.get)
                blocks.append((values.array, np.array([position[name]])))
        return _from_blocks(blocks, pd.RangeIndex(self.rows), pd.Index(list(order)))


def _chunks(piece: Piece) -> list[pa.Array]:
    return list(piece.chunks) if isinstance(piece, pa.ChunkedArray) else [piece]


def _text_chunks(piece: Piece) -> list[pa.Array]:
    """A piece as text chunks (numbers of a mostly-text column written back as text)."""
    if isinstance(piece, np.ndarray):
        return [pa.array(piece).cast(pa.string())]
    return [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c.cast(pa.string()) for c in _chunks(piece)]


def _from_blocks(blocks: list[tuple[Any, np.ndarray]], index: pd.Index, columns: pd.Index) -> pd.DataFrame:
    """A frame that adopts the 2-D blocks as they are (pandas' own constructor would copy them to
    consolidate), through pandas' public internals API (pandas 3)."""
    import pandas as pd

    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:  # pandas 2: the same frame, built by the constructor (one more copy)
        data: dict[Any, Any] = {}
        for values, placement in blocks:
            pieces = list(values) if isinstance(values, np.ndarray) else [values]
            data.update({columns[col]: piece for col, piece in zip(placement.tolist(), pieces)})
        return pd.DataFrame({c: data[c] for c in columns}, index=index)
    return create_dataframe_from_blocks(blocks, index=index, columns=columns)


def read_slabs(fh: BinaryIO, header: Sequence[str], include: Sequence[str], types: dict[str, pa.DataType], *,
               numeric: dict[str, float] | None = None, decimal_comma: bool = False, encoding: str = "utf8",
               slab_bytes: int | None = None, stop: threading.Event | None = None) -> Columns:
    """Parse ``fh`` (positioned at the first data row) into the ``include`` columns.

    ``types``: fixed column types (others inferred per slab); ``numeric``: the columns to make
    numbers, with the factor that takes each to SI (see :class:`Columns`). Rows that start with ``==`` (``==PROF==`` lines) are skipped;
    any other row with the wrong number of fields raises :class:`MalformedRow`. ``stop``: when it is
    set, the parse ends at the next slab, raising :class:`Stopped`.
    """
    bad: list[str] = []

    def on_invalid(row: pcsv.InvalidRow) -> str:
        if (row.text or "").startswith("=="):
            return "skip"
        bad.append(f"line {row.number}: {row.actual_columns} fields, {row.expected_columns} expected" if row.number
                   else f"a row with {row.actual_columns} fields, {row.expected_columns} expected")
        return "error"

    read = pcsv.ReadOptions(column_names=list(header), block_size=BLOCK_BYTES)
    if encoding != "utf8":  # any encoding, even "utf8", makes pyarrow transcode through Python
        read.encoding = encoding
    # A slab is parsed without a Python row handler first: the parser's threads drop what it holds
    # after read_csv returns, and dropping a Python object takes the GIL, which a thread cannot have
    # once the interpreter is ending (the process aborts: apache/arrow#49942). Only a slab with a row
    # of the wrong length (a ==PROF== line, a malformed row) is parsed again with the handler.
    plain = pcsv.ParseOptions()
    parse = pcsv.ParseOptions(invalid_row_handler=on_invalid)
    # Text is not checked for UTF-8 by the parse (1e6 launches: 0.13 of its 1.2 CPU seconds): a column
    # made numbers needs no check (any byte that is not ASCII fails the cast), and a column kept as
    # text is checked when it is kept (Columns.add), a dictionary by its few distinct values.
    conv = pcsv.ConvertOptions(include_columns=list(include), column_types=types, null_values=["n/a", ""],
                               strings_can_be_null=True, timestamp_parsers=[], check_utf8=False)
    out = Columns(list(include), dict(numeric or {}), decimal_comma)
    start = fh.tell()
    data_bytes = fh.seek(0, io.SEEK_END) - start  # the rows to reserve: the first slab's rows per byte, times this
    fh.seek(start)
    threads = min(os.cpu_count() or 1, 8) if data_bytes >= THREADED_BYTES else 1
    out.compiled = data_bytes >= COMPILED_BYTES and not decimal_comma
    if out.compiled and any(types.get(c) == pa.string() for c in out.numeric):
        grouped.prepare()  # compiled while the first slab is parsed (else when a column first needs it)

    def parsed(piece: pa.Buffer) -> tuple[pa.Table, int]:
        try:
            try:
                return pcsv.read_csv(piece, read_options=read, parse_options=plain,
                                     convert_options=conv), len(piece)
            except pa.ArrowInvalid as exc:
                if " columns, got " not in str(exc):
                    raise
            return pcsv.read_csv(piece, read_options=read, parse_options=parse,
                                 convert_options=conv), len(piece)
        except pa.ArrowInvalid as exc:
            if "UTF8" in str(exc) and encoding == "utf8":
                raise NotUtf8(str(exc)) from None
            if bad:
                raise MalformedRow(bad[0]) from None
            raise MalformedRow(str(exc).splitlines()[0]) from None

    pieces = _pieces(fh, slab_bytes or SLAB_BYTES)
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(threads)) if threads > 1 else None
        # the next slab is parsed while this one's columns are converted and copied (a slab is
        # asked for, and the last one unmapped, only once the one before it is parsed)
        ahead = stack.enter_context(ThreadPoolExecutor(1)) if threads > 1 else None
        piece = next(pieces, None)
        pending = ahead.submit(parsed, piece) if ahead is not None and piece is not None else None
        while piece is not None:
            if stop is not None and stop.is_set():
                raise Stopped
            table, piece_bytes = pending.result() if pending is not None else parsed(piece)
            piece = next(pieces, None)
            pending = ahead.submit(parsed, piece) if ahead is not None and piece is not None else None
            if not out.capacity and table.num_rows:  # the whole file's rows, as dense as this slab's, and 2 % more
                out.capacity = max(table.num_rows, int(table.num_rows * data_bytes / piece_bytes * 1.02))
            out.add(table, pool)
            del table
    return out


def check_utf8(text: Piece) -> None:
    """Raise :class:`NotUtf8` when a text column (plain or dictionary) holds bytes that are not
    UTF-8; numbers pass as they are."""
    if isinstance(text, np.ndarray) or not (pa.types.is_string(text.type) or pa.types.is_dictionary(text.type)):
        return
    try:
        text.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise NotUtf8(str(exc)) from None


def _pieces(fh: BinaryIO, size: int) -> Iterator[pa.Buffer]:
    """:func:`~roofline.readers.slabs.slabs`, a file that shrank while read said as a malformed row."""
    try:
        yield from slabs(fh, size)
    except FileShrank as exc:
        raise MalformedRow(str(exc)) from None


def numbers(values: pa.ChunkedArray | pa.Array, decimal_comma: bool,
            compiled: bool = False) -> pa.ChunkedArray | pa.Array | None:
    """A column as numbers: int64 or float64 as pyarrow read them, or text made plain
    (:func:`~roofline.readers.ncu.numbers.plain_arrow`) and cast; None when some value is not a
    number. All-empty columns become float64 (NaN). ``compiled``: text as ncu writes it is first
    read by the compiled loop (:func:`~roofline.readers.ncu.grouped.grouped_numbers`: the same
    numbers, four times faster).

    Text is first tried the way ncu writes it (digit groups of commas, or dots and a decimal comma,
    nothing around the value): the marks dropped and one cast, to float64 when the first value has a
    decimal mark or an exponent, else to int64 (a cast that fails costs ~20x one that succeeds: 0.28
    against 0.015 s a million values). Only when that fails are spaces trimmed, other digit groups
    (spaces, apostrophes) dropped and both types tried."""
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return values
    if pa.types.is_null(kind):
        return pc.cast(values, pa.float64())
    if pa.types.is_dictionary(kind):
        values = values.cast(pa.string())
    elif not pa.types.is_string(kind) and not pa.types.is_large_string(kind):
        return None
    quick = _quick_numbers(values, decimal_comma, compiled)
    if quick is not None:
        return quick
    if not _is_utf8(values):  # the text functions below need UTF-8; kept as text, it is refused there
        return None
    trimmed = pc.utf8_trim_whitespace(values)
    for spaced in (False, True):  # digits grouped by spaces or apostrophes are rare: looked for only when needed
        text = plain_arrow(trimmed, decimal_comma, spaced=spaced)
        text = pc.if_else(pc.cast(pc.binary_length(text), pa.bool_()), text, pa.nulls(len(text), pa.string()))
        for target in (pa.int64(), pa.float64()):
            try:
                return pc.cast(text, target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
    return None


def _quick_numbers(values: pa.ChunkedArray | pa.Array, decimal_comma: bool,
                   compiled: bool = False) -> pa.ChunkedArray | pa.Array | None:
    """:func:`numbers` of text as ncu writes it (see there); None when it is not so."""
    first = pc.drop_null(values[:64])
    if not len(first) or not _is_utf8(first):
        return None
    sample = first[0].as_py()
    if not sample or not (sample[0].isdigit() or sample[0] in "+-.") or not sample[-1].isdigit():
        return None  # spaces around it, or not a number (n/a, text)
    if compiled and not decimal_comma:  # (a text column, such as a name, never gets here: nothing compiled for it)
        fast = grouped.grouped_numbers(values)
        if fast is not None:
            return fast
    text = plain_arrow(values, decimal_comma, spaced=False)
    plain_sample = plain_arrow(first[:1], decimal_comma, spaced=False)[0].as_py()
    # int64 first, as the full path tries them, unless the first value already rules it out
    targets = (pa.float64(),) if any(c in plain_sample for c in ".eE") else (pa.int64(), pa.float64())
    for target in targets:
        try:
            return pc.cast(text, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    return None


def _is_utf8(text: pa.ChunkedArray | pa.Array) -> bool:
    try:
        check_utf8(text)
    except NotUtf8:
        return False
    return True


def _whole(column: pa.ChunkedArray | pa.Array) -> bool:
    """True when :func:`to_numpy` makes ``column`` int64 (integers without a gap)."""
    return pa.types.is_integer(column.type) and column.null_count == 0


def to_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numeric column as numpy: int64 when it is integers without gaps (exact counts), else
    float64 with NaN for the gaps. Made from the Arrow buffers (a view of one chunk, else one copy),
    not with pyarrow's ``to_numpy``, which loads pandas (the parse runs before pandas is loaded:
    :mod:`roofline.readers.ncu.ahead`)."""
    kind, dtype = (pa.int64(), np.int64) if _whole(column) else (pa.float64(), np.float64)
    column = pc.cast(column, kind)  # (nothing done when it is of that type already)
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    arrays = [_values(c, dtype) for c in chunks if len(c)]
    if len(arrays) == 1:
        return arrays[0]
    return np.concatenate(arrays) if arrays else np.empty(0, dtype=dtype)


def _values(chunk: pa.Array, dtype: type) -> np.ndarray:
    """A chunk of int64 or float64 as numpy, its gaps (float64 only) NaN."""
    values: np.ndarray = np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * 8)
    if not chunk.null_count:
        return values
    bits = np.frombuffer(chunk.buffers()[0], dtype=np.uint8)
    valid = np.unpackbits(bits, count=chunk.offset + len(chunk), bitorder="little")[chunk.offset:].view(bool)
    return np.where(valid, values, np.nan)

"""Where the table in an Nsight Compute CSV starts and how it is written (:func:`sniff`):
the header line after any program output, the raw page's units row, the page layout (raw or
details), the decimal mark (``1,234.5`` or ``1.234,5``: :mod:`roofline.readers.ncu.numbers`), and a cut-off last line.
The readers of the two pages (:mod:`roofline.readers.ncu.raw`, :mod:`roofline.readers.ncu.details`)
start from the :class:`CsvLayout` it returns.

Small files (up to :data:`WHOLE_FILE_BYTES`, such as the one-metric-per-file sets of a paper:
15 KB each) are read once, whole, and everything here works on those bytes; a small details
page whose every line is written the way ncu writes it (every field in double quotes, no quote
inside a value) is also split into its rows here (:func:`plain_rows`), which the details reader
then uses instead of a CSV parser: on ~100-row files a parser's fixed cost is most of the time.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from roofline.errors import InputError
from roofline.readers.ncu.numbers import MixedNumbers, decimal_comma, three_decimals
from roofline.readers.stream import to_utf8, utf16_codec

#: ncu's identity columns -> kernel-table columns.
ID_MAP = {
    "ID": "launch_id",
    "Kernel Name": "kernel_name",
    "Function Name": "kernel_name",
    "Process ID": "process_id",
    "Process Name": "process_name",  # tells runs apart (roofline.readers.ncu.combine); not a table column
    "Device": "device",
    "CC": "compute_capability",
    "Grid Size": "grid",
    "Block Size": "block",
    "Stream": "stream",
}
#: Columns that describe the launch or the row, never metrics.
NON_METRIC = {
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Function Name", "Kernel Time",
    "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
    "Metric Name", "Metric Unit", "Metric Value",
}
#: How many lines are scanned for the header (program output can be long).
MAX_PREAMBLE_LINES = 200_000
_SAMPLE_ROWS = 200
#: Files up to this size are read whole, once (the sniffing and the readers work on the bytes).
WHOLE_FILE_BYTES = 1 << 20


def is_non_metric(col: str) -> bool:
    return col in NON_METRIC or col.startswith(("Rule ", "Estimated Speedup")) or is_nvtx_column(col)


def is_nvtx_column(col: str) -> bool:
    """NVTX columns of an ncu CSV export made with ``--nvtx``: ``thread Domain:Push/Pop_Range:...``,
    ``Id:Domain:Start/Stop_Range:...``, ``Range:PL_Type:...`` beside ``Domain``, and ``NVTX...``
    (their layouts: :mod:`roofline.readers.ncu.names`)."""
    return nvtx_column_kind(col) is not None


def nvtx_column_kind(column: str) -> str | None:
    """Which NVTX layout an ncu CSV column holds: ``push_pop``, ``start_end``, ``range`` (ranges
    without their domain), ``domain`` (the domain beside a ``range`` column), ``legacy`` (``NVTX...``
    columns holding ``a/b``), or None for a column that is not NVTX."""
    if "Push/Pop_Range" in column:
        return "push_pop"
    if "Start/Stop_Range" in column or "Start/End_Range" in column:
        return "start_end"
    if column.startswith("Range:PL_Type:"):
        return "range"
    if column == "Domain":
        return "domain"
    if column.lower().startswith("nvtx"):
        return "legacy"
    return None


@dataclass(frozen=True)
class CsvLayout:
    """Where the table in an ncu CSV starts and how it is written."""

    path: Path
    header: list[str]
    data_offset: int  # byte offset of the first data row (after the units row, if any)
    layout: str  # "raw" or "details"
    units: list[str] | None  # the raw page's units row
    decimal_comma: bool  # "0,5", "1.234,5": roofline.readers.ncu.numbers
    sample: list[list[str]]  # first data rows, parsed
    data: bytes | None = None  # the whole file, when read into memory (a small file, a pipe; UTF-16 as UTF-8)
    rows: list[list[str]] | None = None  # every data row of a small, plainly quoted details page (plain_rows)
    notes: tuple[str, ...] = ()  # what the user is told about how the file was read

    def open(self) -> BinaryIO:
        """The file's bytes from the start: the file itself, or the copy in memory."""
        return io.BytesIO(self.data) if self.data is not None else self.path.open("rb")


def _decode(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")


def _parse_line(text: str) -> list[str]:
    try:
        return next(csv.reader([text]))
    except (csv.Error, StopIteration):
        return []


def looks_like_ncu_header(fields: list[str]) -> bool:
    return len(fields) >= 3 and fields[0] == "ID" and ("Kernel Name" in fields or "Function Name" in fields)


#: Where a header line may start: ``"ID"`` or ``ID,`` at a line start, after any byte-order marks.
_HEADER_START = re.compile(rb'^(?:\xef\xbb\xbf)*(?:"ID"|ID,)', re.MULTILINE)


def _header_in(data: bytes) -> tuple[list[str], int] | None:
    """The header and the offset of the line after it, in a file's bytes (the same lines
    :func:`_header_in_lines` would find, found by a regular expression instead of line by line)."""
    lines, counted_to = 0, 0
    for match in _HEADER_START.finditer(data):
        start = match.start()
        lines += data.count(b"\n", counted_to, start)
        counted_to = start
        if lines > MAX_PREAMBLE_LINES:
            return None
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        fields = _parse_line(_decode(data[start:end]))
        if looks_like_ncu_header(fields):
            return fields, end
    return None


def _header_in_lines(fh: BinaryIO) -> tuple[list[str], int] | None:
    """The header and the offset of the line after it, reading ``fh`` line by line from its start."""
    fh.seek(0)
    offset = 0
    for i, line in enumerate(fh):
        offset += len(line)
        text = _decode(line)
        if text.startswith(('"ID"', "ID,")):
            fields = _parse_line(text)
            if looks_like_ncu_header(fields):
                return fields, offset
        if i >= MAX_PREAMBLE_LINES:
            break
    return None


def sniff(path: Path, data: bytes | None = None) -> CsvLayout:
    """Find the header, the units row and the number convention of an ncu CSV.

    ``data``: the file's bytes when already in memory (a pipe); else ``path`` is read.
    Raises :class:`InputError` for empty files, HTML, binary data, files without an ncu
    header, and files with a header but no data.
    """
    if data is None:
        with path.open("rb") as fh:
            if 0 < os.fstat(fh.fileno()).st_size <= WHOLE_FILE_BYTES:  # a small file: read once, whole
                data = fh.read()
            elif utf16_codec(fh.read(2)) is not None:  # UTF-16: transcoded once, then read from memory
                fh.seek(0)
                data = fh.read()
    if data is not None and utf16_codec(data) is not None:
        data = to_utf8(data)
    with (io.BytesIO(data) if data is not None else path.open("rb")) as fh:
        head = fh.read(4096)
        if not head.strip():
            raise InputError("the file is empty", path=path, hint="re-run ncu with --csv and redirect its output to this file")
        if b"\x00" in head:
            raise InputError("not a CSV file (binary data)", path=path)
        lower = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
        if lower.startswith((b"<!doctype html", b"<html")) or b"<html" in lower[:512]:
            raise InputError("this is an HTML page, not an ncu CSV (saved from a browser by mistake?)", path=path,
                             hint="download the raw file, or export it with ncu --csv")
        found = _header_in(data) if data is not None else _header_in_lines(fh)
        if found is None:
            raise InputError(
                "not an Nsight Compute CSV: no header line starting with \"ID\",...,\"Kernel Name\" found",
                path=path, hint="export with ncu --csv --page raw (or --page details)",
            )
        header, data_offset = found
        fh.seek(data_offset)
        layout = "details" if ("Metric Name" in header and "Metric Value" in header) else "raw"
        units: list[str] | None = None
        rows = None
        if layout == "details" and data is not None and len(data) <= WHOLE_FILE_BYTES:
            rows = plain_rows(data[data_offset:], len(header))
        sample: list[list[str]] = [] if rows is None else rows[:_SAMPLE_ROWS]
        for line in fh if rows is None else ():
            text = _decode(line)
            if not text.strip():
                continue
            fields = _parse_line(text)
            if not sample and units is None and layout == "raw" and fields and fields[0] == "":
                units = fields
                data_offset += len(line)
                continue
            sample.append(fields)
            if len(sample) >= _SAMPLE_ROWS:
                break
    if not any(f and f[0].strip().isdigit() for f in sample):
        raise InputError("the CSV has a header but no data rows (truncated, or ncu profiled no kernel)", path=path,
                         hint="check that ncu matched kernels (--kernel-name, --launch-count) and that the file is complete")
    _check_last_line(path, len(header), data)
    comma, note = _decimal_comma(path, header, layout, sample)
    return CsvLayout(path, header, data_offset, layout, units, comma, sample, data, rows, () if note is None else (note,))


def plain_rows(body: bytes, ncols: int) -> list[list[str]] | None:
    """The rows of a table written the way ncu writes it, split without a CSV parser; None
    when any line is written otherwise.

    Plain: UTF-8; each line ``"v1","v2",...`` with exactly ``ncols`` values, every value in
    double quotes and none holding a quote (so ``","`` only ever separates values); line ends
    ``\n`` or ``\r\n``; empty lines skipped. Such rows are what a CSV parser makes of those
    lines, value for value; any other line (a ``==PROF==`` line after the table, a row that
    leaves out the trailing Rule columns, Latin-1 bytes) is left to the parser.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None
        text = text.replace("\r\n", "\n")
    lines = [line for line in text.split("\n") if line]
    # Every line "...": ncols values split at "," (2 ncols quotes at least), and no more quotes in
    # all than that: no quote is left inside a value.
    if text.count('"') != 2 * ncols * len(lines) or not all(
            len(line) > 1 and line[0] == line[-1] == '"' for line in lines):
        return None
    rows = [line[1:-1].split('","') for line in lines]
    return rows if all(len(row) == ncols for row in rows) else None


def _check_last_line(path: Path, ncols: int, data: bytes | None = None) -> None:
    """A file cut off mid-line (no final newline, short row or open quote) is refused."""
    if data is not None and data.endswith(b"\n"):
        return
    with (io.BytesIO(data) if data is not None else path.open("rb")) as fh:
        fh.seek(0, 2)
        size = fh.tell()
        block = min(size, 1 << 16)
        while True:
            fh.seek(size - block)
            tail = fh.read(block)
            if tail.endswith(b"\n"):
                return
            cut = tail.rfind(b"\n")
            if cut >= 0 or block == size:
                break
            block = min(size, block * 4)
    last = _decode(tail[cut + 1:])
    if last.startswith("=="):
        return  # a trailing ==PROF== line without newline
    if last.count('"') % 2 == 1 or len(_parse_line(last)) != ncols:
        raise InputError("the file is truncated: its last line is cut off", path=path,
                         hint="copy the whole file again, or re-run ncu")


def _decimal_comma(path: Path, header: list[str], layout: str, sample: list[list[str]]) -> tuple[bool, str | None]:
    """Whether the metric values' decimal mark is ``,`` (:mod:`roofline.readers.ncu.numbers`), and
    a note when nothing says so but a value could be a de_DE digit group. Only metric values are
    looked at (a CC of ``7.0`` says nothing)."""
    if layout == "details":
        cols = [header.index("Metric Value")]
    else:
        cols = [i for i, c in enumerate(header) if not is_non_metric(c)]
    values = [row[i] for row in sample for i in cols if i < len(row)]
    try:
        comma = decimal_comma(values)
    except MixedNumbers as exc:
        raise InputError(f"numbers written two ways: {exc}; cannot tell the decimal mark", path=path,
                         hint="re-export it with the C locale: LC_ALL=C ncu --import REPORT --csv ...") from None
    example = None if comma else three_decimals(values)
    if example is None:
        return comma, None
    return comma, (f"{path.name}: numbers such as '{example}' are read as decimals ({float(example):g}); ncu writes "
                   f"three decimals only as digit groups under locales such as de_DE ({example.replace('.', '')}): "
                   "if ncu wrote this file there, export it again with LC_ALL=C ncu --import REPORT --csv ...")

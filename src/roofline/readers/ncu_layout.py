"""Where the table in an Nsight Compute CSV starts and how it is written (:func:`sniff`):
the header line after any program output, the raw page's units row, the page layout (raw or
details), the number convention (``1,234.5`` or ``1.234,5``), and a cut-off last line.
The readers of the two pages (:mod:`roofline.readers.ncu_raw`, :mod:`roofline.readers.ncu_details`)
start from the :class:`CsvLayout` it returns."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from roofline.errors import InputError
from roofline.readers.names import nvtx_column_kind
from roofline.readers.stream import to_utf8, utf16_codec

#: ncu's identity columns -> kernel-table columns.
ID_MAP = {
    "ID": "launch_id",
    "Kernel Name": "kernel_name",
    "Function Name": "kernel_name",
    "Process ID": "process_id",
    "Process Name": "process_name",  # tells runs apart (roofline.readers.merge); not a table column
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


def is_non_metric(col: str) -> bool:
    return col in NON_METRIC or col.startswith(("Rule ", "Estimated Speedup")) or is_nvtx_column(col)


def is_nvtx_column(col: str) -> bool:
    """NVTX columns of an ncu CSV export made with ``--nvtx``: ``thread Domain:Push/Pop_Range:...``,
    ``Id:Domain:Start/Stop_Range:...``, ``Range:PL_Type:...`` beside ``Domain``, and ``NVTX...``
    (their layouts: :mod:`roofline.readers.names`)."""
    return nvtx_column_kind(col) is not None


@dataclass(frozen=True)
class CsvLayout:
    """Where the table in an ncu CSV starts and how it is written."""

    path: Path
    header: list[str]
    data_offset: int  # byte offset of the first data row (after the units row, if any)
    layout: str  # "raw" or "details"
    units: list[str] | None  # the raw page's units row
    european: bool  # "1.234,5" numbers
    sample: list[list[str]]  # first data rows, parsed
    data: bytes | None = None  # the whole file as UTF-8, when read into memory (a pipe, UTF-16)

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


def sniff(path: Path, data: bytes | None = None) -> CsvLayout:
    """Find the header, the units row and the number convention of an ncu CSV.

    ``data``: the file's bytes when already in memory (a pipe); else ``path`` is read.
    Raises :class:`InputError` for empty files, HTML, binary data, files without an ncu
    header, and files with a header but no data.
    """
    if data is None:
        with path.open("rb") as fh:
            if utf16_codec(fh.read(2)) is not None:  # UTF-16: transcoded once, then read from memory
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
        fh.seek(0)
        offset = 0
        header: list[str] | None = None
        for i, line in enumerate(fh):
            offset += len(line)
            text = _decode(line)
            if text.startswith(('"ID"', "ID,")):
                fields = _parse_line(text)
                if looks_like_ncu_header(fields):
                    header = fields
                    break
            if i >= MAX_PREAMBLE_LINES:
                break
        if header is None:
            raise InputError(
                "not an Nsight Compute CSV: no header line starting with \"ID\",...,\"Kernel Name\" found",
                path=path, hint="export with ncu --csv --page raw (or --page details)",
            )
        data_offset = offset
        layout = "details" if ("Metric Name" in header and "Metric Value" in header) else "raw"
        units: list[str] | None = None
        sample: list[list[str]] = []
        for line in fh:
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
    european = _detect_european(path, header, layout, sample)
    return CsvLayout(path, header, data_offset, layout, units, european, sample, data)


def _check_last_line(path: Path, ncols: int, data: bytes | None = None) -> None:
    """A file cut off mid-line (no final newline, short row or open quote) is refused."""
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


# Unambiguous evidence only: "1,234" and "0.125" (one group of three digits) fit both conventions.
_US = re.compile(r"^-?(\d{1,3}(,\d{3})+\.\d+|\d{1,3}(,\d{3}){2,}|\d+\.(\d{1,2}|\d{4,}))$")
_EU = re.compile(r"^-?(\d{1,3}(\.\d{3})+,\d+|\d{1,3}(\.\d{3}){2,}|\d+,(\d{1,2}|\d{4,}))$")


def _detect_european(path: Path, header: list[str], layout: str, sample: list[list[str]]) -> bool:
    """True when metric values use ``.`` for thousands and ``,`` for decimals.

    Evidence: a value whose decimal mark can only be ``,`` (``"0,5"``, ``"1.234,5"``)
    counts for European, one whose decimal mark can only be ``.`` (``"12.50"``,
    ``"1,234.5"``, ``"1,234,567"``) for the usual convention. Only metric values are looked
    at (a CC of ``7.0`` says nothing). ``"1,234"`` and ``"0.125"`` fit both and count for
    neither; with no evidence the usual convention is assumed.
    """
    if layout == "details":
        cols = [header.index("Metric Value")]
    else:
        cols = [i for i, c in enumerate(header) if not is_non_metric(c)]
    us = eu = 0
    for row in sample:
        for i in cols:
            if i < len(row):
                v = row[i]
                us += bool(_US.match(v))
                eu += bool(_EU.match(v))
    if us and eu:
        raise InputError("numbers use both '.' and ',' as decimal marks; cannot tell the locale", path=path,
                         hint="re-export with an English locale (LC_NUMERIC=C ncu ...)")
    return eu > 0

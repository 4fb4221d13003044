"""ncu ``--page raw``: which columns are read, as what, and their parse (:func:`parse_raw`).

The identity and metric columns are parsed with pyarrow in slabs (:mod:`roofline.readers.csv_arrow`):
text identities dictionary-encoded (a million launches of a few hundred kernels keep a few hundred
names), metrics made numbers in SI units per column with the units row. What the parse returns,
:class:`RawColumns`, becomes a raw profile in :mod:`roofline.readers.ncu.raw`.

This module imports no pandas, so that the parse can start while the rest of a program loads
(:mod:`roofline.readers.ncu.ahead`).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import pyarrow as pa

from roofline.errors import InputError
from roofline.readers import csv_arrow
from roofline.readers.ncu.layout import ID_MAP, CsvLayout, is_non_metric, is_nvtx_column
from roofline.units import si_factor

log = logging.getLogger(__name__)

#: Identity columns read as numbers (pyarrow infers them); the other identities are text.
_NUMERIC_IDS = ("ID", "Process ID", "Device", "Stream")


@dataclass
class RawColumns:
    """A raw page's columns as parsed: ``columns`` holds the ``id_cols`` and ``metric_cols`` (numbers
    in SI units; see :class:`~roofline.readers.csv_arrow.Columns`); ``units``: each column's unit as
    the units row prints it."""

    columns: csv_arrow.Columns
    id_cols: list[str]
    metric_cols: list[str]
    units: dict[str, str]


def parse_raw(layout: CsvLayout, stop: threading.Event | None = None) -> RawColumns:
    """Parse the raw page ``layout`` describes. ``stop``: when set, the parse ends at the next slab
    (:class:`~roofline.readers.csv_arrow.Stopped`). Raises :class:`~roofline.errors.InputError` for
    a header that names a column twice, a malformed row, and a header without data rows."""
    header = layout.header
    if len(set(header)) != len(header):
        raise InputError("the CSV header names a column twice", path=layout.path,
                         hint="re-export it with ncu --csv --page raw")
    metric_cols = [c for c in header if not is_non_metric(c)]
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    units = dict(zip(header, layout.units)) if layout.units else {}
    types = _types(id_cols, metric_cols, layout)
    columns = _read(layout, id_cols + metric_cols, types, {c: si_factor(units.get(c)) for c in metric_cols}, stop)
    if columns.rows == 0:
        raise InputError("the CSV has a header but no data rows", path=layout.path)
    return RawColumns(columns, id_cols, metric_cols, units)


def _types(id_cols: list[str], metric_cols: list[str], layout: CsvLayout) -> dict[str, pa.DataType]:
    """Text identities as dictionaries, NVTX columns as plain text (they are parsed per value).
    Metrics as text when the first rows write them with digit groups (``"5,977,413.20"``, ncu's
    default): pyarrow would try each number type on every block before falling back to text, and
    :func:`roofline.readers.csv_arrow.numbers` reads the text anyway. With a decimal comma, every
    metric as text: pyarrow would read ``6.144`` (6144) as a decimal."""
    types = {c: (pa.string() if is_nvtx_column(c) else csv_arrow.DICTIONARY) for c in id_cols if c not in _NUMERIC_IDS}
    if layout.decimal_comma:
        types.update(dict.fromkeys(metric_cols, pa.string()))
        return types
    position = {c: i for i, c in enumerate(layout.header)}
    for c in metric_cols:
        values = [row[position[c]] for row in layout.sample if position[c] < len(row)]
        if any("," in v for v in values):
            types[c] = pa.string()
    return types


def _read(layout: CsvLayout, include: list[str], types: dict[str, pa.DataType],
          numeric: dict[str, float], stop: threading.Event | None) -> csv_arrow.Columns:
    for encoding in ("utf8", "latin1"):
        with layout.open() as fh:
            fh.seek(layout.data_offset)
            try:
                return csv_arrow.read_slabs(fh, layout.header, include, types, numeric=numeric,
                                            decimal_comma=layout.decimal_comma, encoding=encoding, stop=stop)
            except csv_arrow.NotUtf8:
                log.debug("%s: not UTF-8, read as Latin-1", layout.path)
            except csv_arrow.MalformedRow as exc:
                raise InputError(f"malformed CSV ({exc})", path=layout.path,
                                 hint="the file may be truncated or edited; re-export it with ncu --csv") from None
    raise AssertionError("unreachable: Latin-1 decodes any bytes")

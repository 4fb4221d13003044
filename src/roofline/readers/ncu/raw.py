"""ncu ``--page raw``: one row per launch, one column per metric, a units row under the header.

Read with pyarrow's multi-threaded parser in slabs (:mod:`roofline.readers.csv_arrow`): only the
identity and metric columns, text identities dictionary-encoded (so a million launches of a few
hundred kernels keep a few hundred names), numbers converted to SI per column with the units row.
"""

from __future__ import annotations

import logging

import pandas as pd
import pyarrow as pa

from roofline.errors import InputError
from roofline.readers import csv_arrow
from roofline.readers.ncu.columns import arrow_identity, drop_junk_rows, finish_names, identity, with_op_stack
from roofline.readers.ncu.layout import ID_MAP, CsvLayout, is_non_metric, is_nvtx_column
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.units import si_factor

log = logging.getLogger(__name__)

#: Identity columns read as numbers (pyarrow infers them); the other identities are text.
_NUMERIC_IDS = ("ID", "Process ID", "Device", "Stream")


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
          numeric: dict[str, float]) -> csv_arrow.Columns:
    for encoding in ("utf8", "latin1"):
        with layout.open() as fh:
            fh.seek(layout.data_offset)
            try:
                return csv_arrow.read_slabs(fh, layout.header, include, types, numeric=numeric,
                                            decimal_comma=layout.decimal_comma, encoding=encoding)
            except csv_arrow.NotUtf8:
                log.debug("%s: not UTF-8, read as Latin-1", layout.path)
            except csv_arrow.MalformedRow as exc:
                raise InputError(f"malformed CSV ({exc})", path=layout.path,
                                 hint="the file may be truncated or edited; re-export it with ncu --csv") from None
    raise AssertionError("unreachable: Latin-1 decodes any bytes")


def read_raw(layout: CsvLayout) -> RawProfile:
    """``--page raw``: one row per launch; units from the units row."""
    header = layout.header
    if len(set(header)) != len(header):
        raise InputError("the CSV header names a column twice", path=layout.path,
                         hint="re-export it with ncu --csv --page raw")
    metric_cols = [c for c in header if not is_non_metric(c)]
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    units = dict(zip(header, layout.units)) if layout.units else {}
    types = _types(id_cols, metric_cols, layout)
    columns = _read(layout, id_cols + metric_cols, types, {c: si_factor(units.get(c)) for c in metric_cols})
    if columns.rows == 0:
        raise InputError("the CSV has a header but no data rows", path=layout.path)
    id_columns = {c: columns.arrow(c) for c in id_cols}
    metric_frame = columns.frame(metric_cols, pd.StringDtype())  # integer counts stay int64
    if pa.types.is_integer(id_columns["ID"].type) and not id_columns["ID"].null_count:  # every row a launch
        ids = arrow_identity(id_columns, columns.rows)
    else:  # rows whose ID is not a number (==PROF== lines after the table) dropped first
        frame = pa.table(id_columns).to_pandas()
        keep = pd.to_numeric(frame["ID"], errors="coerce").notna().to_numpy()
        frame = drop_junk_rows(frame, layout.path)
        metric_frame = metric_frame.loc[keep].reset_index(drop=True)
        ids = identity(frame, layout)
    del id_columns
    ids, warnings = finish_names(ids, layout.path)
    metric_units = {c: units.get(c, "") for c in metric_cols}
    metric_frame = with_op_stack(ids, metric_frame, metric_units)
    # The parse's slabs and the names' decoding are freed now, but Arrow's allocator keeps their pages
    # for itself, and what follows (counting, the kernel table) is NumPy's: hand them back (1e6
    # launches: 0.95 -> 0.86 GB peak for `roofline analyze`; about 10 us a call when there is nothing).
    pa.default_memory_pool().release_unused()
    return RawProfile(ids=ids, metrics=metric_frame, source=str(layout.path),
                      units=metric_units, warnings=layout.notes + tuple(warnings))

"""ncu ``--page raw``: one row per launch, one column per metric, a units row under the header.

The columns are parsed by :mod:`roofline.readers.ncu.raw_columns` (pyarrow's multi-threaded parser in
slabs: only the identity and metric columns, text identities dictionary-encoded, numbers converted to
SI per column with the units row); here they become a :class:`RawProfile`: launch identities and
kernel names, the metrics as one pandas frame.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from roofline.readers.ncu.columns import arrow_identity, drop_junk_rows, finish_names, identity, with_op_stack
from roofline.readers.ncu.layout import CsvLayout
from roofline.readers.ncu.raw_columns import RawColumns, parse_raw
from roofline.readers.ncu.raw_profile import RawProfile


def read_raw(layout: CsvLayout, parsed: RawColumns | None = None) -> RawProfile:
    """``--page raw``: one row per launch; units from the units row. ``parsed``: its columns when
    parsed already (:mod:`roofline.readers.ncu.ahead`), else parsed here (:func:`parse_raw`)."""
    if parsed is None:
        parsed = parse_raw(layout)
    columns, id_cols, metric_cols, units = parsed.columns, parsed.id_cols, parsed.metric_cols, parsed.units
    del parsed
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

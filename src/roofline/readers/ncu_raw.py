"""ncu ``--page raw``: one row per launch, one column per metric, a units row under the header."""

from __future__ import annotations


from roofline.readers.ncu_columns import drop_junk_rows, finish_names, identity, read_frame, to_numeric, with_op_stack
from roofline.readers.ncu_layout import ID_MAP, CsvLayout, is_non_metric, is_nvtx_column
from roofline.readers.profile import RawProfile
from roofline.units import si_factor


def read_raw(layout: CsvLayout) -> RawProfile:
    """``--page raw``: one row per launch; units from the units row."""
    header = layout.header
    metric_cols = [c for c in header if not is_non_metric(c)]
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    # No dtype hints at all: measured on 1e6 launches, the C parser's own inference beats any
    # ("str", "category", "float64"); a CC read as the number 8.0 is made text in as_string.
    text_ids: dict[str, str] = {}
    # No float64 dtype hints: with them the C parser is 2-3x slower than letting it infer.
    frame = read_frame(layout, id_cols + metric_cols, text_ids)
    if frame["ID"].dtype.kind not in "iu":
        frame = drop_junk_rows(frame, layout.path)
    units = dict(zip(header, layout.units)) if layout.units else {}
    metric_frame = frame[metric_cols]
    for col in metric_cols:
        values = metric_frame[col]
        if values.dtype.kind not in "iuf":  # integer counts stay int64 (exact, and no copy)
            numeric = to_numeric(values, layout.european)
            values = values.astype("string") if numeric is None else numeric
            metric_frame[col] = values
        factor = si_factor(units.get(col))
        if factor != 1.0 and values.dtype.kind in "iuf":
            metric_frame[col] = values * factor
    ids, warnings = finish_names(identity(frame, layout), layout.path)
    metric_units = {c: units.get(c, "") for c in metric_cols}
    metric_frame = with_op_stack(ids, metric_frame, metric_units)
    return RawProfile(ids=ids, metrics=metric_frame, source=str(layout.path),
                      units=metric_units, warnings=tuple(warnings))

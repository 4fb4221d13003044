"""ncu ``--page details`` (and ``--metrics`` without ``--page``): one row per (launch, metric),
pivoted here to one row per launch; section exports' display names mapped to metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from roofline.readers.ncu_columns import drop_junk_rows, finish_names, identity, read_frame, with_op_stack
from roofline.readers.ncu_display import is_display_name, metric_for
from roofline.readers.ncu_layout import ID_MAP, CsvLayout, is_nvtx_column
from roofline.readers.profile import RawProfile
from roofline.units import si_factor


def read_details(layout: CsvLayout) -> RawProfile:
    """``--page details``: one row per (launch, metric), pivoted to one row per launch."""
    header = layout.header
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    section = ["Section Name"] if "Section Name" in header else []
    cols = id_cols + section + ["Metric Name", "Metric Unit", "Metric Value"]
    text = {c: "str" for c in cols if c not in ("ID", "Process ID", "Device", "Stream")}
    frame = read_frame(layout, cols, text)
    frame = drop_junk_rows(frame, layout.path)
    frame = frame[frame["Metric Name"].notna()]
    frame = frame.assign(**{"Metric Name": _metric_names(frame)})
    warnings: list[str] = []
    dup = frame.duplicated(["ID", "Metric Name"], keep="first")
    if dup.any():
        names = sorted(set(frame.loc[dup, "Metric Name"]))
        warnings.append(f"{layout.path.name}: metrics listed twice for a launch (first value kept): {', '.join(names[:5])}")
        frame = frame[~dup]
    raw_values = frame["Metric Value"]
    thousands, decimal = (".", ",") if layout.european else (",", ".")
    cleaned = raw_values.str.replace(thousands, "", regex=False)
    if decimal != ".":
        cleaned = cleaned.str.replace(decimal, ".", regex=False)
    numeric = pd.to_numeric(cleaned, errors="coerce")
    units = frame["Metric Unit"].fillna("")
    factors = units.map({u: si_factor(u) for u in units.unique()}).astype("float64")
    value = numeric.astype("float64") * factors
    is_text = numeric.isna() & raw_values.notna() & (raw_values.str.strip() != "")
    text_metrics = set(frame.loc[is_text, "Metric Name"])
    launch = frame["ID"].astype("int64")
    order = pd.unique(launch)
    wide = pd.DataFrame({"ID": launch, "name": frame["Metric Name"], "value": value})
    numeric_part = wide[~wide["name"].isin(text_metrics)].pivot(index="ID", columns="name", values="value")
    parts = [numeric_part]
    if text_metrics:
        tw = pd.DataFrame({"ID": launch, "name": frame["Metric Name"], "value": raw_values})
        parts.append(tw[tw["name"].isin(text_metrics)].pivot(index="ID", columns="name", values="value").astype("string"))
    metrics = pd.concat(parts, axis=1).reindex(order)
    metrics.columns.name = None
    metric_order = list(pd.unique(frame["Metric Name"]))
    metrics = metrics[[m for m in metric_order if m in metrics.columns]]
    first = frame.drop_duplicates("ID", keep="first").set_index("ID").reindex(order).reset_index()
    unit_of = frame.drop_duplicates("Metric Name").set_index("Metric Name")["Metric Unit"].fillna("").to_dict()
    metrics = metrics.reset_index(drop=True)
    ids, name_warnings = finish_names(identity(first, layout), layout.path)
    metric_units = {str(k): str(v) for k, v in unit_of.items()}
    metrics = with_op_stack(ids, metrics, metric_units)
    return RawProfile(ids=ids, metrics=metrics, source=str(layout.path), units=metric_units,
                      warnings=tuple(warnings + name_warnings))


def _metric_names(frame: pd.DataFrame) -> pd.Series:
    """Metric names of a details page; section labels ("Duration") become the metric they show
    (:mod:`roofline.readers.ncu_display`); a label the table does not know stays ``Section: Label``."""
    names = frame["Metric Name"].astype(str)
    if "Section Name" in frame.columns:
        sections = frame["Section Name"].astype(object).where(frame["Section Name"].notna(), "")
    else:
        sections = pd.Series("", index=frame.index, dtype=object)
    codes, pairs = pd.factorize(pd.MultiIndex.from_arrays([sections.astype(str), names]))
    mapped = []
    for section, name in pairs:  # distinct (section, name) pairs only
        if not is_display_name(name):
            mapped.append(name)
            continue
        metric = metric_for(name, section or None)
        mapped.append(metric if metric is not None else (f"{section}: {name}" if section else name))
    return pd.Series(np.asarray(mapped, dtype=object)[codes], index=frame.index)

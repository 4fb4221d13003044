"""ncu ``--page details`` (and ``--metrics`` without ``--page``): one row per (launch, metric),
turned here into one row per launch; section exports' display names mapped to metrics.

Two ways in, one way on. A small page written plainly (the rows sniffing already split,
:func:`roofline.readers.ncu.layout.plain_rows`) is taken as it is; any other page goes through
pandas' parser (:func:`roofline.readers.ncu.columns.read_frame`). Both give the same columns,
one value per row, and the rest works on arrays: launches and metrics numbered in order of
first appearance (``pandas.factorize``), values scaled by their unit, and the launch x metric
table filled by those numbers, with no pivot and no MultiIndex. Fixed costs are what count on
small files: the paper's DeepCAM set is twelve pages of 35 rows each.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from roofline.errors import InputError
from roofline.readers.ncu.columns import (
    drop_junk_rows,
    frame_of,
    labels_of,
    launch_identities,
    read_frame,
    string_array,
    with_op_stack,
)
from roofline.readers.ncu.display import is_display_name, metric_for
from roofline.readers.ncu.layout import ID_MAP, CsvLayout, is_nvtx_column
from roofline.readers.ncu.numbers import plain, plain_arrow
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.units import si_factor

#: Columns the parser reads as numbers (the others are read as text).
NUMERIC_IDS = ("ID", "Process ID", "Device", "Stream")
#: Text pandas' parser reads as missing: its default ``na_values`` and ncu's ``n/a``. Plain rows
#: follow it, so that both ways in give the same table (tests/test_small_files.py checks the list
#: against pandas).
NA_TEXT = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
#: Longest launch ID or process ID taken from plain rows (longer ones may not fit in int64).
_MAX_DIGITS = 18
#: Longest object array factorized in Python rather than by pandas (faster below, slower above).
_PYTHON_FACTORIZE = 1000

Columns = dict[str, object]  # ncu column -> one value per row: a NumPy array or a pandas array


def read_details(layout: CsvLayout) -> RawProfile:
    """``--page details``: one row per (launch, metric), turned into one row per launch."""
    header = layout.header
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    section = ["Section Name"] if "Section Name" in header else []
    cols = id_cols + section + ["Metric Name", "Metric Unit", "Metric Value"]
    columns = _from_rows(layout, cols)
    if columns is None:
        columns = _from_parser(layout, cols)
    return _per_launch(columns, id_cols, layout)


def _from_rows(layout: CsvLayout, cols: list[str]) -> Columns | None:
    """The columns of plainly written rows, as pandas' parser would give them; None where that is
    not certain (a repeated header name, a column missing, an ID or process ID that is not plain
    digits): the parser then reads the page, and says what is wrong with it."""
    rows, header = layout.rows, layout.header
    if rows is None or not rows or len(set(header)) != len(header) or any(c not in header for c in cols):
        return None
    by_column = list(zip(*rows))
    position = {c: i for i, c in enumerate(header)}
    columns: Columns = {}
    for c in cols:
        values = by_column[position[c]]
        if c in NUMERIC_IDS:
            numbers = _integers(values, missing_allowed=c != "ID")
            if numbers is None:
                return None
            columns[c] = numbers
        else:
            columns[c] = np.array([None if v in NA_TEXT else v for v in values], dtype=object)
    return columns


def _integers(values: tuple[str, ...], missing_allowed: bool) -> np.ndarray | pd.arrays.IntegerArray | None:
    """Plain decimal digits as int64 (``Int64`` with <NA> for missing values where allowed); None
    for anything else (signs, separators, decimals: the parser's own rules apply to those)."""
    distinct = set(values)
    if len(distinct) == 1 and _plain_integers(list(distinct)):  # one process, one stream: one conversion
        data = np.full(len(values), int(values[0]), dtype=np.int64)
        return pd.arrays.IntegerArray(data, np.zeros(len(data), dtype=bool)) if missing_allowed else data
    if _plain_integers(list(values)):
        data = np.fromiter(map(int, values), dtype=np.int64, count=len(values))  # plain digits: none missing
        return pd.arrays.IntegerArray(data, np.zeros(len(data), dtype=bool)) if missing_allowed else data
    missing = np.fromiter((v in NA_TEXT for v in values), dtype=bool, count=len(values))
    if missing.any() and not missing_allowed:
        return None
    if not all(m or (v.isascii() and v.isdigit() and len(v) <= _MAX_DIGITS) for v, m in zip(values, missing)):
        return None
    data = np.fromiter((0 if m else int(v) for v, m in zip(values, missing)), dtype=np.int64, count=len(values))
    return pd.arrays.IntegerArray(data, missing) if missing_allowed else data


def _from_parser(layout: CsvLayout, cols: list[str]) -> Columns:
    """The columns as pandas' parser reads them (text as text, IDs as numbers), junk rows dropped."""
    text = {c: "str" for c in cols if c not in NUMERIC_IDS}
    frame = drop_junk_rows(read_frame(layout, cols, text), layout.path)
    columns: Columns = {c: frame[c].array if c in text else frame[c].to_numpy() for c in cols}
    columns["ID"] = _launch_ids(pd.to_numeric(frame["ID"]).to_numpy(), layout)  # numbers: junk rows are gone
    return columns


def _launch_ids(values: np.ndarray, layout: CsvLayout) -> np.ndarray:
    """Launch IDs as int64; refused when some is not a whole number that int64 holds."""
    try:
        ids = values.astype(np.int64)
        whole = values.dtype.kind == "i" or bool((ids == values).all())
    except (OverflowError, TypeError, ValueError):
        whole = False
    if not whole:
        raise InputError("launch IDs that are not whole numbers (or too large)", path=layout.path,
                         hint="ncu numbers launches 0, 1, 2, ...: re-export the file with ncu --csv")
    return ids


def _per_launch(columns: Columns, id_cols: list[str], layout: CsvLayout) -> RawProfile:
    """One row per launch and one column per metric, from the page's columns (one value per row)."""
    named = _known(columns["Metric Name"])
    if not named.all():
        columns = {c: v[named] for c, v in columns.items()}  # type: ignore[index]
    metric, metric_names = _metric_codes(columns["Metric Name"], columns.get("Section Name"))
    launch, launch_ids = _launch_codes(columns["ID"])  # type: ignore[arg-type]
    n_launches, n_metrics = len(launch_ids), len(metric_names)
    warnings: list[str] = list(layout.notes)
    one_row_each = n_launches == len(launch)  # a launch per row (a one-metric page): nothing can repeat
    repeated = None if one_row_each else _repeated(launch.astype(np.int64) * n_metrics + metric, n_launches * n_metrics)
    if repeated is not None:
        differ = _differing_repeats(launch.astype(np.int64) * n_metrics + metric, repeated, columns)
        names = sorted({metric_names[m] for m in metric[differ]})
        if names:  # a value shown in two sections (SM Active Cycles, say) is one value: nothing to say
            warnings.append(f"{layout.path.name}: metrics listed twice for a launch with different values "
                            f"(first value kept): {', '.join(names[:5])}")
        columns = {c: v[~repeated] for c, v in columns.items()}  # type: ignore[index]
        launch, metric = launch[~repeated], metric[~repeated]
    raw = columns["Metric Value"]
    numeric = _numbers(raw, layout.decimal_comma)
    unit_code, unit_names = _factorize(columns["Metric Unit"])
    factors = np.array([si_factor(u) for u in unit_names] + [si_factor("")])  # -1 (no unit): the last
    value = numeric * (factors[0] if len(unit_names) == 1 and unit_code.min() == 0 else factors[unit_code])
    text_metrics = sorted(set(metric[_is_text(raw, numeric)].tolist()))
    if one_row_each and n_metrics == 1:  # the values are the table, rows in launch order
        table = value.reshape(-1, 1)
    else:
        table = np.full((n_launches, n_metrics), np.nan)
        numeric_rows = ~np.isin(metric, text_metrics) if text_metrics else slice(None)
        table[launch[numeric_rows], metric[numeric_rows]] = value[numeric_rows]
    text_columns = {m: _text_column(raw, launch, metric, m, n_launches) for m in text_metrics}
    metrics = _metric_frame(table, metric_names, text_columns)
    # The row each metric first appears in (metric 0: row 0).
    first_unit = _first_rows(metric, n_metrics) if n_metrics > 1 else np.zeros(n_metrics, dtype=np.int64)
    unit_values = _take(columns["Metric Unit"], first_unit)
    metric_units = {name: "" if pd.isna(u) else str(u) for name, u in zip(metric_names, unit_values)}
    if one_row_each:  # the rows are the launches, in order
        id_values = {c: columns[c] for c in id_cols if c != "ID"}
    else:
        first_row = _first_rows(launch, n_launches)
        id_values = {c: _take(columns[c], first_row) for c in id_cols if c != "ID"}
    id_values["ID"] = launch_ids
    ids, name_warnings = launch_identities(id_values, n_launches, layout.path)
    metrics = with_op_stack(ids, metrics, metric_units)
    return RawProfile(ids=ids, metrics=metrics, source=str(layout.path), units=metric_units,
                      warnings=tuple(warnings + name_warnings), per_row_units=True)


def _known(values: object) -> np.ndarray:
    """Where values are there (plain rows' missing values are None)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values != None  # noqa: E711 (elementwise)
    return ~pd.isna(values)


def _metric_codes(names: object, sections: object | None) -> tuple[np.ndarray, list[str]]:
    """Each row's metric (numbered in order of first appearance) and the metric names.

    Section labels ("Duration") become the metric they show (:mod:`roofline.readers.ncu.display`);
    a label the table does not know stays ``Section: Label``. Only the distinct (section, name)
    pairs are looked at."""
    name_code, distinct_names = _factorize(names)
    if not any(is_display_name(str(n)) for n in distinct_names):  # metric names: the section says nothing
        return name_code, [str(n) for n in distinct_names]
    if sections is None:
        pair_code, pairs = name_code, [("", str(n)) for n in distinct_names]
    else:
        section_code, distinct_sections = _factorize(sections)
        width = len(distinct_names)
        pair_code, first = pd.factorize((section_code + 1) * width + name_code)
        labels = ["", *(str(s) for s in distinct_sections)]
        pairs = [(labels[c // width], str(distinct_names[c % width])) for c in first.tolist()]
    mapped = [_metric_of(name, section) for section, name in pairs]
    code, metric_names = pd.factorize(np.array(mapped, dtype=object))
    return code[pair_code].astype(np.int64), [str(m) for m in metric_names]


def _factorize(values: object) -> tuple[np.ndarray, list[Any]]:
    """Codes in order of first appearance (-1 where missing) and the distinct values, as
    ``pandas.factorize`` gives them; done in Python for plain rows' short object arrays (a
    quarter of the time there)."""
    if isinstance(values, np.ndarray) and values.dtype == object and len(values) <= _PYTHON_FACTORIZE:
        seen: dict[Any, int] = {}
        codes = [-1 if v is None else seen.setdefault(v, len(seen)) for v in values.tolist()]
        return np.array(codes, dtype=np.int64), list(seen)
    codes, uniques = pd.factorize(values)  # type: ignore[call-overload]
    return codes.astype(np.int64), list(uniques)


def _metric_of(name: str, section: str) -> str:
    if not is_display_name(name):
        return name
    metric = metric_for(name, section or None)
    return metric if metric is not None else (f"{section}: {name}" if section else name)


def _launch_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's launch, numbered in order of first appearance, and the launch IDs in that order."""
    if len(ids) > 1 and (ids[1:] > ids[:-1]).all():  # a launch per row, in order (a one-metric page)
        return np.arange(len(ids)), ids
    return pd.factorize(ids)  # type: ignore[return-value]


def _repeated(key: np.ndarray, size: int) -> np.ndarray | None:
    """Rows whose key an earlier row has (a metric listed twice for a launch); None when none is."""
    if len(key) == 0 or np.bincount(key, minlength=size).max() <= 1:
        return None
    return pd.Series(key).duplicated(keep="first").to_numpy()


def _differing_repeats(key: np.ndarray, repeated: np.ndarray, columns: Columns) -> np.ndarray:
    """Row positions of the ``repeated`` rows whose value or unit (as text) differs from the first
    row of their key."""
    rows = np.flatnonzero(repeated)
    first = pd.Series(np.arange(len(key))).groupby(key).transform("min").to_numpy()[rows]
    differ = np.zeros(len(rows), dtype=bool)
    for name in ("Metric Value", "Metric Unit"):
        text = pd.Series(columns[name], copy=False).astype("string")
        a, b = text.iloc[rows].reset_index(drop=True), text.iloc[first].reset_index(drop=True)
        differ |= (a.ne(b).fillna(True) & ~(a.isna() & b.isna())).to_numpy(dtype=bool)
    return rows[differ]


def _numbers(raw: object, comma: bool) -> np.ndarray:
    """Metric values as float64 (:mod:`roofline.readers.ncu.numbers`; NaN for what is not a number)."""
    if isinstance(raw, np.ndarray):  # text and None
        cleaned: list[Any] = [None if v is None else plain(v, comma) for v in raw.tolist()]
        if None not in cleaned and _plain_integers(cleaned):  # counts: read as to_numeric reads them, faster
            return np.fromiter(map(int, cleaned), dtype=np.int64, count=len(cleaned)).astype(np.float64)
        numbers = pd.to_numeric(np.array(cleaned, dtype=object), errors="coerce")
    else:
        values = pa.array(pd.Series(raw, copy=False).astype(object), type=pa.string(), from_pandas=True)
        text = plain_arrow(values, comma)
        numbers = pd.to_numeric(pd.Series(text.to_numpy(zero_copy_only=False)), errors="coerce")
    return np.asarray(numbers, dtype=np.float64)


def _plain_integers(values: list[Any]) -> bool:
    """Every value (text) plain ASCII digits that int64 holds (pandas reads such a column as int64)."""
    digits = "".join(values)
    return bool(values) and digits.isascii() and digits.isdigit() and min(map(len, values)) >= 1 \
        and max(map(len, values)) <= _MAX_DIGITS


def _is_text(raw: object, numeric: np.ndarray) -> np.ndarray:
    """Values that are there but are not numbers (a text metric), as a mask."""
    candidates = np.isnan(numeric) & _known(raw)
    if not candidates.any():
        return candidates
    where = np.flatnonzero(candidates)
    if isinstance(raw, np.ndarray):
        candidates[where] = [raw[i].strip() != "" for i in where]
    else:
        candidates[where] = (pd.Series(raw[where]).str.strip() != "").to_numpy()  # type: ignore[index]
    return candidates


def _text_column(raw: object, launch: np.ndarray, metric: np.ndarray, code: int, n: int) -> object:
    """A text metric's values per launch (``string``, <NA> where a launch has none)."""
    rows = np.flatnonzero(metric == code)
    values = raw[rows]  # type: ignore[index]
    out = np.full(n, None, dtype=object)
    out[launch[rows]] = values if isinstance(values, np.ndarray) else values.to_numpy(dtype=object, na_value=None)
    return string_array(out)


def _metric_frame(table: np.ndarray, names: list[str], text: dict[int, object]) -> pd.DataFrame:
    """The metrics frame: the table's columns, text metrics in place of theirs (labels as frame_of's)."""
    if not text:  # one float block
        return pd.DataFrame(table, columns=labels_of(names), index=pd.RangeIndex(len(table)), copy=False)
    return frame_of({name: text.get(j, table[:, j]) for j, name in enumerate(names)}, len(table))


def _first_rows(codes: np.ndarray, n: int) -> np.ndarray:
    """The first row of each of the ``n`` codes."""
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    return first


def _take(values: Any, rows: np.ndarray) -> Any:
    return values[rows]

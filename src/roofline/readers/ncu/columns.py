"""Columns shared by the two ncu CSV pages: the pandas read from the data's byte offset,
numbers with thousands separators, and the launch identities (IDs, names, NVTX attribution).

Identities are made as pandas arrays straight from what the page gives (a parsed frame's
columns, or plain rows' NumPy arrays) and put in one DataFrame call (:func:`frame_of`): on
the small files of a one-metric-per-file set, pandas' per-call costs are most of the time."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from roofline.errors import InputError
from roofline.kernels.arrays import encoded_text, is_lean, unknown_encoded
from roofline.readers.ncu.names import attribution_from_nvtx, demangle_names, has_mangled
from roofline.readers.ncu.layout import ID_MAP, CsvLayout, is_nvtx_column
from roofline.readers.ncu.raw_profile import IDENTITY

log = logging.getLogger(__name__)

INT_IDS = ("launch_id", "process_id", "device", "stream")


def read_kwargs(layout: CsvLayout) -> dict[str, object]:
    if layout.decimal_comma:
        return {"thousands": ".", "decimal": ","}
    return {"thousands": ","}


def read_frame(layout: CsvLayout, usecols: list[str], dtype: dict[str, str]) -> pd.DataFrame:
    with layout.open() as fh:
        fh.seek(layout.data_offset)
        kwargs = dict(header=None, names=layout.header, usecols=usecols, dtype=dtype or None, na_values=["n/a"],
                      skip_blank_lines=True, **read_kwargs(layout))
        try:
            # The parser's native UTF-8 path; any encoding argument makes pandas decode in Python (2x slower).
            return pd.read_csv(fh, **kwargs)
        except pd.errors.ParserError as exc:
            if "Too many columns specified" not in str(exc):
                raise InputError(f"malformed CSV ({exc})", path=layout.path,
                                 hint="the file may be truncated or edited; re-export it with ncu --csv") from None
            # Newer details pages end the header with 5 Rule/Estimated Speedup columns that rows
            # without a rule leave out; pandas refuses usecols then, so read every column and select.
            fh.seek(layout.data_offset)
            kwargs.pop("usecols")
            try:
                return pd.read_csv(fh, **kwargs)[usecols]
            except (pd.errors.ParserError, ValueError) as exc2:
                raise InputError(f"malformed CSV ({exc2})", path=layout.path,
                                 hint="the file may be truncated or edited; re-export it with ncu --csv") from None
        except UnicodeDecodeError:
            fh.seek(layout.data_offset)
            log.debug("%s: not UTF-8, read as Latin-1", layout.path)
            try:
                return pd.read_csv(fh, encoding="latin-1", **kwargs)
            except (pd.errors.ParserError, ValueError) as exc:
                raise InputError(f"malformed CSV ({exc})", path=layout.path,
                                 hint="the file may be truncated or edited; re-export it with ncu --csv") from None
        except (pd.errors.ParserError, ValueError) as exc:
            raise InputError(f"malformed CSV ({exc})", path=layout.path,
                             hint="the file may be truncated or edited; re-export it with ncu --csv") from None


_TEXT_IDS = ("Kernel Name", "Function Name", "Grid Size", "Block Size", "CC")


def as_string(values: pd.Series | np.ndarray | pd.api.extensions.ExtensionArray) -> pd.Series:
    """A column as the kernel table's ``string`` dtype; categories are decoded without a Python loop."""
    return pd.Series(text_array(values)) if not isinstance(values, pd.Series) else _as_string(values)


def text_array(values: pd.Series | np.ndarray | pd.api.extensions.ExtensionArray) -> pd.api.extensions.ExtensionArray:
    """:func:`as_string`'s values as a pandas array. A NumPy object array (text and None: plain rows,
    :mod:`roofline.readers.ncu.details`) goes to Arrow as it is: on small files a pandas round trip
    would be most of the cost."""
    if isinstance(values, np.ndarray):
        return string_array(values)
    return _as_string(values if isinstance(values, pd.Series) else pd.Series(values)).array


def _as_string(values: pd.Series) -> pd.Series:
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if categories.dtype.kind == "f":  # a CC like "8.0" read as the number 8.0
            categories = pd.Index([f"{v:.1f}" for v in categories], dtype=object)
        codes = values.cat.codes.to_numpy()
        dictionary = pa.array(categories.astype(str).to_numpy(dtype=object), type=pa.large_string())
        decoded = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), dictionary).cast(pa.large_string())
        out = pd.Series(pd.array(decoded, dtype=pd.StringDtype("pyarrow")), index=values.index)
        return out if str(out.dtype) == "string" else out.astype("string")
    if values.dtype.kind == "f":
        return values.map({v: f"{v:.1f}" for v in pd.unique(values.dropna())}).astype("string")
    if values.dtype == pd.StringDtype():  # an array of its own (over the same immutable Arrow data)
        return pd.Series(values.array.copy(), index=values.index)
    return values.astype("string")


def string_array(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Text and None (a NumPy object array) as the kernel table's ``string`` array (<NA> for None)."""
    return pd.arrays.ArrowStringArray(pa.chunked_array([pa.array(values, type=pa.large_string(), from_pandas=True)]))


def unknown_array(n: int, integer: bool) -> pd.api.extensions.ExtensionArray:
    """``n`` unknown values: ``Int64`` or ``string``, all <NA>."""
    if integer:
        return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
    return pd.arrays.ArrowStringArray(pa.chunked_array([pa.nulls(n, pa.large_string())]))


def _int_ids(values: object) -> pd.api.extensions.ExtensionArray:
    """An integer identity column (IDs, device, stream) as ``Int64``; what is not a number is <NA>."""
    if isinstance(values, pd.arrays.IntegerArray) and values.dtype == "Int64":
        return values
    if isinstance(values, pd.Series) and values.dtype.kind == "i" and not values.hasnans:
        # A copy: to_numpy may be a view of the frame's column, and the ids must own theirs.
        return pd.arrays.IntegerArray(values.to_numpy(dtype=np.int64, copy=True), np.zeros(len(values), dtype=bool))
    if isinstance(values, np.ndarray) and values.dtype == np.int64:
        array = values if values.flags.writeable else values.copy()  # a read-only view: another frame's
        return pd.arrays.IntegerArray(array, np.zeros(len(array), dtype=bool))
    numbers = pd.to_numeric(pd.Series(values) if isinstance(values, np.ndarray) else values, errors="coerce")
    return numbers.astype("Int64").array.copy()  # the ids' own (an Int64 input would come back as is)


def identity(frame: pd.DataFrame, layout: CsvLayout) -> pd.DataFrame:
    """The identity columns of a launch-per-row frame (ncu names) as kernel-table columns."""
    columns = {c: frame[c] for c in frame.columns if c in ID_MAP or is_nvtx_column(c)}
    # The arrays are the identity frame's own (none is the input's): no copy of a million names.
    return pd.DataFrame(identity_arrays(columns, len(frame), frame.index), index=frame.index, copy=False)


def arrow_identity(columns: Mapping[str, pa.ChunkedArray], n: int) -> pd.DataFrame:
    """:func:`identity` of the parser's own Arrow columns (``n`` launches), without a pandas frame
    between: a dictionary column goes over as its codes and its few texts, integers as NumPy."""
    values = {c: _from_arrow(a) for c, a in columns.items() if c in ID_MAP or is_nvtx_column(c)}
    return pd.DataFrame(identity_arrays(values, n), index=pd.RangeIndex(n), copy=False)


def _from_arrow(column: pa.ChunkedArray) -> object:
    """An Arrow column as :func:`identity_arrays` takes it: a dictionary as a categorical (one code a
    launch, -1 where missing; each text once), integers without a gap as NumPy, anything else as pandas."""
    if pa.types.is_dictionary(column.type):  # encoded as the kernel table keeps it, in one pass over the codes
        column = column.unify_dictionaries()
        texts = column.chunk(0).dictionary.to_pylist() if column.num_chunks else []
        codes = [pc.fill_null(c.indices, -1).to_numpy(zero_copy_only=False) for c in column.chunks]
        return encoded_text(texts, np.concatenate(codes) if codes else np.zeros(0, dtype=np.int32))
    if pa.types.is_integer(column.type) and column.null_count == 0:
        return column.to_numpy()  # read-only where it is Arrow's: the ids take their own copy
    return column.to_pandas()


def frame_of(arrays: Mapping[str, object], n: int, *, copy: bool = False) -> pd.DataFrame:
    """A DataFrame of ``n`` launches from NumPy or pandas arrays by name, made in one call; the
    arrays are its own (``copy=False``: made for it, by the caller) or copied (another frame's).

    Its column labels are plain Python text (object dtype, as pandas 2 made them): pandas 3
    infers an Arrow-backed ``str`` Index instead, which on these small frames costs three times
    as much to build and builds an Arrow hash table at the first look-up (measured on the 2-core
    VM, 10 identity columns: 200 -> 135 us a frame, 55 -> 12 us the first look-up). Columns all
    float64 NumPy arrays (merged one-metric files) are stacked into the one block pandas would
    make of them anyway."""
    labels = labels_of(list(arrays))
    values = list(arrays.values())
    if values and all(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in values):
        stacked: np.ndarray = np.column_stack(values)  # type: ignore[arg-type]
        return pd.DataFrame(stacked, columns=labels, index=pd.RangeIndex(n), copy=False)
    frame = pd.DataFrame(dict(enumerate(values)), index=pd.RangeIndex(n), copy=copy)
    frame.columns = labels
    return frame


#: NumPy's object dtype as an instance: pandas checks a dtype given so in a few ns, ``object`` itself
#: through a slower path (with a warnings context) on every Index made.
_OBJECT = np.dtype(object)


def labels_of(names: list[str]) -> pd.Index:
    """Column labels as plain Python text (see :func:`frame_of`)."""
    return pd.Index(names, dtype=_OBJECT)


def launch_identities(columns: Mapping[str, object], n: int, path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The kernel-table identity frame of ``n`` launches from their ncu columns (see
    :func:`identity_arrays`), kernel names demangled (:func:`finish_names`), built in one
    DataFrame call; and the warnings, naming the file."""
    arrays = identity_arrays(columns, n)
    given = next((columns[c] for c, ours in ID_MAP.items() if ours == "kernel_name" and c in columns), None)
    warnings: list[str] = []
    if has_mangled(arrays["kernel_name"] if given is None else given):
        names, warnings = demangle_names(pd.Series(arrays["kernel_name"]))
        arrays["kernel_name"] = names.array
    return frame_of(arrays, n), [f"{path.name}: {w}" for w in warnings]


def identity_arrays(columns: Mapping[str, object], n: int, index: pd.Index | None = None) -> dict[str, object]:
    """The kernel-table identity columns of ``n`` launches from their ncu columns (ncu names:
    Series, NumPy arrays or pandas arrays, one value per launch), as pandas arrays by name.

    Integer IDs: ``Int64`` (what is not a number is <NA>); text: ``string``; columns the input
    lacks: all <NA>; NVTX columns give phase, module, op and op_stack. ``index``: the launches'
    index, which the NVTX attribution is given (a fresh RangeIndex when None)."""
    out: dict[str, object] = {}
    for ncu_name, ours in ID_MAP.items():
        if ncu_name in columns and ours not in out:
            out[ours] = columns[ncu_name]
    arrays: dict[str, object] = {}
    for col in IDENTITY:
        if col in out and col in _ENCODED and _text_categories(out[col]):  # kept encoded: not decoded per launch
            arrays[col] = _encoded(out[col])
        elif col in out:
            arrays[col] = _int_ids(out[col]) if col in INT_IDS else text_array(out[col])  # type: ignore[arg-type]
        elif col in _ENCODED or col == "phase":  # unknown for every launch: one byte a launch, not a text each
            arrays[col] = unknown_encoded(n)
        else:
            arrays[col] = unknown_array(n, col in INT_IDS)
    nvtx = [c for c in columns if is_nvtx_column(c)]
    if nvtx:  # phase, module, op; op_stack goes to the metrics (with_op_stack)
        index = pd.RangeIndex(n) if index is None else index
        frame = pd.DataFrame({c: _series(columns[c]) for c in nvtx})
        attribution = attribution_from_nvtx(frame, process=pd.Series(arrays["process_id"], index=index),
                                            kernel_names=pd.Series(arrays["kernel_name"], index=index))
        for col in attribution.columns:
            arrays[col] = attribution[col].array
    if "process_name" in out:  # the same program's name for every launch, mostly: kept encoded when read so
        values = out["process_name"]
        arrays["process_name"] = (_encoded(values) if _text_categories(values)
                                  else text_array(values))  # type: ignore[arg-type]
    return arrays


#: Identity columns kept dictionary-encoded when the parser gives them so (a categorical of text).
_ENCODED = ("kernel_name", "grid", "block", "compute_capability")


def _encoded(values: Any) -> pd.Categorical:
    """A categorical of text (Series or array) as an encoded identity column (sorted text categories)."""
    categorical: Any = values.array if isinstance(values, pd.Series) else values
    if is_lean(categorical):  # the parser's own, encoded already (:func:`_from_arrow`)
        return categorical
    return encoded_text(categorical.categories.to_numpy(dtype=object), np.asarray(categorical.codes))


def _text_categories(values: object) -> bool:
    """True for a categorical (Series or array) of text categories (not numbers, such as a CC read as 8.0)."""
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype.kind in "OUT"


def _series(values: object) -> pd.Series:
    """A column as a Series on a fresh RangeIndex; an object array of text as the parser's text."""
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    if isinstance(values, np.ndarray) and values.dtype == object:
        return pd.Series(values, dtype="str")
    return pd.Series(values)


def with_op_stack(ids: pd.DataFrame, metrics: pd.DataFrame, units: dict[str, str]) -> pd.DataFrame:
    """Move the launches' PyTorch operator stacks (``op_stack``, from NVTX) from ids to the metrics."""
    if "op_stack" not in ids.columns:
        return metrics
    # concat, not assign: the parser's frame keeps one block per column (not copied), and inserting
    # into a frame of over 100 blocks makes pandas warn (an H100 raw page has 576 metrics).
    metrics = pd.concat([metrics, ids.pop("op_stack").set_axis(metrics.index).to_frame("op_stack")], axis=1)
    units["op_stack"] = ""
    return metrics


def finish_names(ids: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, list[str]]:
    """Mangled kernel names (``_Z...``) demangled in place; the warnings name the file."""
    given = ids["kernel_name"]
    names, warnings = demangle_names(given)
    if names is not given:
        ids["kernel_name"] = names
    return ids, [f"{path.name}: {w}" for w in warnings]


def drop_junk_rows(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Drop rows whose ID is not a number (``==PROF==`` lines after the table)."""
    ids = pd.to_numeric(frame["ID"], errors="coerce")
    bad = ids.isna()
    if bad.any():
        frame = frame.loc[~bad].reset_index(drop=True)
        log.debug("%s: dropped %d non-data rows", path, int(bad.sum()))
    if frame.empty:
        raise InputError("the CSV has a header but no data rows", path=path)
    return frame

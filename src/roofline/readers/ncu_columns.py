"""Columns shared by the two ncu CSV pages: the pandas read from the data's byte offset,
numbers with thousands separators, and the launch identities (IDs, names, NVTX attribution)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.readers.names import attribution_from_nvtx, demangle_names
from roofline.readers.ncu_layout import ID_MAP, CsvLayout, is_nvtx_column
from roofline.readers.profile import IDENTITY

log = logging.getLogger(__name__)

INT_IDS = ("launch_id", "process_id", "device", "stream")
def read_kwargs(layout: CsvLayout) -> dict[str, object]:
    if layout.european:
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


def to_numeric(col: pd.Series, european: bool) -> pd.Series | None:
    """Strings -> float64 (thousands separators removed); None when some value is not a number."""
    s = col.astype("string")
    thousands, decimal = (".", ",") if european else (",", ".")
    s = s.str.replace(thousands, "", regex=False)
    if decimal != ".":
        s = s.str.replace(decimal, ".", regex=False)
    out = pd.to_numeric(s, errors="coerce")
    if (out.isna() & s.notna() & (s.str.strip() != "")).any():
        return None
    return out.astype("float64")


_TEXT_IDS = ("Kernel Name", "Function Name", "Grid Size", "Block Size", "CC")


def as_string(values: pd.Series) -> pd.Series:
    """A column as the kernel table's ``string`` dtype; categories are decoded without a Python loop."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if categories.dtype.kind == "f":  # a CC like "8.0" read as the number 8.0
            categories = pd.Index([f"{v:.1f}" for v in categories], dtype=object)
        try:
            import pyarrow as pa

            codes = values.cat.codes.to_numpy()
            dictionary = pa.array(categories.astype(str).to_numpy(dtype=object), type=pa.large_string())
            decoded = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), dictionary).cast(pa.large_string())
            out = pd.Series(pd.array(decoded, dtype=pd.StringDtype("pyarrow")), index=values.index)
            return out if str(out.dtype) == "string" else out.astype("string")
        except ImportError:  # pyarrow is optional for pandas: same result, slower
            return values.cat.rename_categories(list(categories.astype(str))).astype("string")
    if values.dtype.kind == "f":
        return values.map({v: f"{v:.1f}" for v in pd.unique(values.dropna())}).astype("string")
    return values.astype("string")


def identity(frame: pd.DataFrame, layout: CsvLayout) -> pd.DataFrame:
    """The identity columns of a launch-per-row frame (ncu names) as kernel-table columns."""
    n = len(frame)
    out = {}
    for ncu_name, ours in ID_MAP.items():
        if ncu_name in frame.columns and ours not in out:
            out[ours] = frame[ncu_name]
    ids = pd.DataFrame(index=frame.index)
    for col in IDENTITY:
        if col in out:
            values = out[col]
            if col in INT_IDS:
                ids[col] = pd.to_numeric(values, errors="coerce").astype("Int64")
            else:
                ids[col] = as_string(values)
        else:
            ids[col] = pd.array([], dtype="Int64" if col in INT_IDS else "string").take(
                np.full(n, -1, dtype=np.intp), allow_fill=True)
    nvtx = [c for c in frame.columns if is_nvtx_column(c)]
    if nvtx:  # phase, module, op; op_stack goes to the metrics (with_op_stack)
        attribution = attribution_from_nvtx(frame[nvtx], process=ids["process_id"], kernel_names=ids["kernel_name"])
        for col in attribution.columns:
            ids[col] = attribution[col].set_axis(ids.index)
    if "process_name" in out:
        ids["process_name"] = as_string(out["process_name"])
    return ids


def with_op_stack(ids: pd.DataFrame, metrics: pd.DataFrame, units: dict[str, str]) -> pd.DataFrame:
    """Move the launches' PyTorch operator stacks (``op_stack``, from NVTX) from ids to the metrics."""
    if "op_stack" not in ids.columns:
        return metrics
    metrics = metrics.assign(op_stack=ids.pop("op_stack").set_axis(metrics.index).array)
    units["op_stack"] = ""
    return metrics


def finish_names(ids: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, list[str]]:
    names, warnings = demangle_names(ids["kernel_name"])
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

"""Nsight Compute CSV (``ncu --csv``), both page layouts, into a :class:`RawProfile`.

* ``--page raw``: one row per launch, one column per metric, a units row under the header.
* ``--page details`` (and ``--metrics`` without ``--page``): one row per metric
  (``Metric Name``, ``Metric Unit``, ``Metric Value``), pivoted here to one row per launch.

What real files do, and how it is handled:

* Program output and ``==PROF==``/``==WARNING==`` lines before the header: the header
  is found by scanning lines as text; ``pandas.read_csv`` then starts at its byte offset.
* Encodings (:mod:`roofline.readers.stream`): a UTF-8 byte-order mark is stripped; UTF-16
  LE/BE with a BOM (PowerShell's ``>``) is transcoded to UTF-8 in memory first; bytes that are
  not UTF-8 (Latin-1 kernel names) are read as Latin-1.
* Pipes and standard input: read whole into memory once by the caller and passed as ``data``.
* Thousands separators (``"837,859,712"``) and ``.00`` decimals: parsed natively by
  ``read_csv(thousands=",")``. European files (``"1.234.567,89"``) are detected from the
  values themselves and read with swapped separators; a file whose values show both
  conventions is refused rather than guessed.
* ``n/a``: NaN. Units (``nsecond``, ``usecond``, ``Kbyte``, ``cycle/nsecond``, ...):
  converted to SI per column (raw) or per value (details) with :func:`roofline.units.si_factor`.
  Percentages stay as printed (0-100).
* ``Kernel Time`` (2020 releases) is a timestamp, not a duration: ignored.
  ``Rule *`` and ``Estimated Speedup*`` values: ignored.
* ``Rule``/``Estimated Speedup`` header columns that a details page's rows leave out (newer
  ncu): the rows are read without them.
* Section exports (``--section``/``--set``): details pages name values by their section labels
  ("Duration", "DRAM Throughput"); :mod:`roofline.readers.ncu_display` maps them to metrics.
* NVTX: ncu's own ``--nvtx`` columns (``thread Domain:Push/Pop_Range:PL_Type:...``,
  ``Id:Domain:Start/Stop_Range:...``, ``Range:...`` beside ``Domain``) and ``NVTX``/``nvtx``
  columns give the phase (the innermost push/pop phase range, else the last start/stop range),
  the PyTorch module and operator (``op_stack`` joins the metrics) (:mod:`roofline.readers.names`,
  :mod:`roofline.readers.torch_ranges`; the header strings are checked against the real ncu binary).
* ``Process ID`` and ``Process Name`` tell runs of different programs apart
  (:mod:`roofline.readers.merge`).

Speed: one ``pandas.read_csv`` call from the data's byte offset, with no ``dtype`` or
``encoding`` arguments (measured: any of them makes the C parser 1.5-3x slower on 1e6
launches), then vectorised unit scaling per column.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.readers.names import attribution_from_nvtx, demangle_names, nvtx_column_kind
from roofline.readers.ncu_display import is_display_name, metric_for
from roofline.readers.profile import IDENTITY, RawProfile
from roofline.readers.stream import to_utf8, utf16_codec
from roofline.units import si_factor

log = logging.getLogger(__name__)

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
_INT_IDS = ("launch_id", "process_id", "device", "stream")
#: How many lines are scanned for the header (program output can be long).
MAX_PREAMBLE_LINES = 200_000
_SAMPLE_ROWS = 200


def _is_non_metric(col: str) -> bool:
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
        cols = [i for i, c in enumerate(header) if not _is_non_metric(c)]
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


def _read_kwargs(layout: CsvLayout) -> dict[str, object]:
    if layout.european:
        return {"thousands": ".", "decimal": ","}
    return {"thousands": ","}


def _read_frame(layout: CsvLayout, usecols: list[str], dtype: dict[str, str]) -> pd.DataFrame:
    with layout.open() as fh:
        fh.seek(layout.data_offset)
        kwargs = dict(header=None, names=layout.header, usecols=usecols, dtype=dtype or None, na_values=["n/a"],
                      skip_blank_lines=True, **_read_kwargs(layout))
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


def _to_numeric(col: pd.Series, european: bool) -> pd.Series | None:
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


def _as_string(values: pd.Series) -> pd.Series:
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


def _identity(frame: pd.DataFrame, layout: CsvLayout) -> pd.DataFrame:
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
            if col in _INT_IDS:
                ids[col] = pd.to_numeric(values, errors="coerce").astype("Int64")
            else:
                ids[col] = _as_string(values)
        else:
            ids[col] = pd.array([], dtype="Int64" if col in _INT_IDS else "string").take(
                np.full(n, -1, dtype=np.intp), allow_fill=True)
    nvtx = [c for c in frame.columns if is_nvtx_column(c)]
    if nvtx:  # phase, module, op; op_stack goes to the metrics (_with_op_stack)
        attribution = attribution_from_nvtx(frame[nvtx], process=ids["process_id"], kernel_names=ids["kernel_name"])
        for col in attribution.columns:
            ids[col] = attribution[col].set_axis(ids.index)
    if "process_name" in out:
        ids["process_name"] = _as_string(out["process_name"])
    return ids


def _with_op_stack(ids: pd.DataFrame, metrics: pd.DataFrame, units: dict[str, str]) -> pd.DataFrame:
    """Move the launches' PyTorch operator stacks (``op_stack``, from NVTX) from ids to the metrics."""
    if "op_stack" not in ids.columns:
        return metrics
    metrics = metrics.assign(op_stack=ids.pop("op_stack").set_axis(metrics.index).array)
    units["op_stack"] = ""
    return metrics


def _finish_names(ids: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, list[str]]:
    names, warnings = demangle_names(ids["kernel_name"])
    ids["kernel_name"] = names
    return ids, [f"{path.name}: {w}" for w in warnings]


def _drop_junk_rows(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Drop rows whose ID is not a number (``==PROF==`` lines after the table)."""
    ids = pd.to_numeric(frame["ID"], errors="coerce")
    bad = ids.isna()
    if bad.any():
        frame = frame.loc[~bad].reset_index(drop=True)
        log.debug("%s: dropped %d non-data rows", path, int(bad.sum()))
    if frame.empty:
        raise InputError("the CSV has a header but no data rows", path=path)
    return frame


def read_raw(layout: CsvLayout) -> RawProfile:
    """``--page raw``: one row per launch; units from the units row."""
    header = layout.header
    metric_cols = [c for c in header if not _is_non_metric(c)]
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    # No dtype hints at all: measured on 1e6 launches, the C parser's own inference beats any
    # ("str", "category", "float64"); a CC read as the number 8.0 is made text in _as_string.
    text_ids: dict[str, str] = {}
    # No float64 dtype hints: with them the C parser is 2-3x slower than letting it infer.
    frame = _read_frame(layout, id_cols + metric_cols, text_ids)
    if frame["ID"].dtype.kind not in "iu":
        frame = _drop_junk_rows(frame, layout.path)
    units = dict(zip(header, layout.units)) if layout.units else {}
    metric_frame = frame[metric_cols]
    for col in metric_cols:
        values = metric_frame[col]
        if values.dtype.kind not in "iuf":  # integer counts stay int64 (exact, and no copy)
            numeric = _to_numeric(values, layout.european)
            values = values.astype("string") if numeric is None else numeric
            metric_frame[col] = values
        factor = si_factor(units.get(col))
        if factor != 1.0 and values.dtype.kind in "iuf":
            metric_frame[col] = values * factor
    ids, warnings = _finish_names(_identity(frame, layout), layout.path)
    metric_units = {c: units.get(c, "") for c in metric_cols}
    metric_frame = _with_op_stack(ids, metric_frame, metric_units)
    return RawProfile(ids=ids, metrics=metric_frame, source=str(layout.path),
                      units=metric_units, warnings=tuple(warnings))


def read_details(layout: CsvLayout) -> RawProfile:
    """``--page details``: one row per (launch, metric), pivoted to one row per launch."""
    header = layout.header
    id_cols = [c for c in header if c in ID_MAP or is_nvtx_column(c)]
    section = ["Section Name"] if "Section Name" in header else []
    cols = id_cols + section + ["Metric Name", "Metric Unit", "Metric Value"]
    text = {c: "str" for c in cols if c not in ("ID", "Process ID", "Device", "Stream")}
    frame = _read_frame(layout, cols, text)
    frame = _drop_junk_rows(frame, layout.path)
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
    ids, name_warnings = _finish_names(_identity(first, layout), layout.path)
    metric_units = {str(k): str(v) for k, v in unit_of.items()}
    metrics = _with_op_stack(ids, metrics, metric_units)
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


def read_ncu_csv(path: str | Path, data: bytes | None = None) -> RawProfile:
    """Read one ncu CSV export (raw or details page) into a :class:`RawProfile`.

    ``data``: its bytes, when already read into memory (standard input, a pipe); ``path`` then
    only names it in messages."""
    p = Path(path)
    layout = sniff(p, data)
    profile = read_raw(layout) if layout.layout == "raw" else read_details(layout)
    if profile.ids["launch_id"].isna().all():
        raise InputError("no launch IDs in the CSV", path=p)
    return profile


def metric_columns(profile: RawProfile) -> list[str]:
    """Numeric metric names of a profile."""
    return [c for c in profile.metrics.columns if profile.metrics[c].dtype.kind in "iuf"]

"""Our kernel-table file (``*.kernels.json``, schema ``roofline.kernels/1``): what
``roofline profile`` writes next to the .ncu-rep and ``roofline merge`` combines.

    {"schema": "roofline.kernels/1", "fp16_convention": "ncu", "sources": [...],
     "warnings": [...], "metric_hints": {...}, "columns": [...], "rows": [[...], ...],
     "metrics": {"columns": [...], "rows": [[...], ...]}}

``metric_hints`` (column -> the metrics that supply it, :attr:`roofline.kernels.KernelTable.metric_hints`)
is absent from files written before it existed. Unknown values are ``null``. Units are those of :data:`roofline.kernels.COLUMNS` (SI).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from roofline import kernels
from roofline.errors import InputError
from roofline.kernels import KernelTable

SCHEMA = "roofline.kernels/1"
#: Kernel-table columns added within version 1: absent from older files, read as unknown (``ops``
#: and ``ops_partial`` are then derived from the FLOPs, as a lower bound).
ADDED_COLUMNS = ("run", "op", "module", "int_ops", "conversion_ops", "sfu_ops", "tensor_int_ops", "ops", "ops_partial", "shared_bytes",
                 "warp_inst", "global_inst", "shared_inst", "l1_transactions", "shared_transactions",
                 "l2_transactions", "dram_transactions", "tma_inst", "gmma_inst")


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _rows(frame: pd.DataFrame) -> list[list[Any]]:
    return [[_plain(v) for v in row] for row in frame.astype(object).itertuples(index=False, name=None)]


def to_json(table: KernelTable) -> str:
    """The kernel table (and its raw metrics) as our JSON text."""
    frame = kernels.widened(kernels.validate(table.frame))  # every declared column, text decoded
    doc = {
        "schema": SCHEMA,
        "fp16_convention": table.fp16_convention,
        "sources": list(table.sources),
        "warnings": list(table.warnings),
        "metric_hints": dict(table.metric_hints),
        "columns": list(frame.columns),
        "rows": _rows(frame),
        "metrics": {"columns": [str(c) for c in table.metrics.columns], "rows": _rows(table.metrics)},
    }
    return json.dumps(doc, allow_nan=False)


def _typed_columns(names: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """The declared columns of ``rows``, each built at once in its declared dtype (``null`` -> NaN or
    <NA>): ~2x faster than a frame of Python objects converted afterwards (merge of 1,000 ranks)."""
    columns = zip(*rows) if rows else ([] for _ in names)
    out: dict[str, Any] = {}
    for name, values in zip(names, columns):
        dtype = kernels.DTYPES.get(name)
        if dtype == "float64":
            out[name] = np.array(values, dtype=np.float64)  # None -> NaN
        elif dtype is not None:
            out[name] = pd.array(list(values), dtype=dtype)
    return out


def read(path: str | Path) -> KernelTable:
    """Read a ``*.kernels.json`` file."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise InputError("no such file", path=p) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a kernel-table JSON file: {exc}", path=p) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"not a kernel-table file (schema {SCHEMA!r} expected)", path=p,
                         hint="roofline merge combines the .kernels.json files that roofline profile writes")
    frame = pd.DataFrame(_typed_columns(doc["columns"], doc["rows"]), index=pd.RangeIndex(len(doc["rows"])))
    older = "ops" not in frame.columns
    for name in ADDED_COLUMNS:  # files written before the column existed
        if name not in frame.columns:
            frame[name] = pd.array([None] * len(frame), dtype=kernels.DTYPES[name])
    if older and "flops" in frame.columns:
        frame = kernels.with_total_ops(frame.astype({"flops": "float64"}))
    frame = kernels.lean(kernels.validate(frame, where=str(p)))  # the launch table's contract
    m = doc.get("metrics") or {"columns": [], "rows": []}
    metrics = pd.DataFrame(m["rows"], columns=m["columns"]) if m["columns"] else pd.DataFrame(index=frame.index)
    metrics.index = frame.index
    return KernelTable(frame=frame, metrics=metrics, sources=tuple(doc.get("sources", ())),
                       warnings=tuple(doc.get("warnings", ())), fp16_convention=doc.get("fp16_convention", "ncu"),
                       metric_hints=dict(doc.get("metric_hints") or {}))

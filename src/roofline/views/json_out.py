"""The analysis as plain data (schema ``roofline.analysis/1``), ready for ``json.dumps``.

Strict JSON: unknown values are ``null``, never NaN or Infinity (``json.dumps(d,
allow_nan=False)`` works). SI units throughout. The schema is documented in
docs/json-schema.md; fields are only ever added, never renamed, within version 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.kernels import FLOP_COLUMNS

SCHEMA = "roofline.analysis/1"
#: Levels always present (as keys, null when unknown) in "bytes" and "ai".
STANDARD_LEVELS = ("l1", "l2", "dram")


def _clean(value: Any) -> Any:
    """A JSON-safe scalar: NaN, NA and infinities become None; numpy scalars become Python."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def analysis_to_dict(analysis: Analysis) -> dict[str, Any]:
    """``{"schema", "machine", "by", "levels", "notes", "totals", "kernels": [...]}`` (see docs/json-schema.md)."""
    frame = analysis.ranked
    byte_levels = list(STANDARD_LEVELS) + [c[: -len("_bytes")] for c in frame.columns
                                           if c.endswith("_bytes") and c[: -len("_bytes")] not in STANDARD_LEVELS]
    ai_levels = list(STANDARD_LEVELS) + [lv for lv in analysis.levels if lv not in STANDARD_LEVELS]
    kernels = []
    for r in frame.to_dict("records"):
        flops = {c[: -len("_flops")]: _clean(r[c]) for c in FLOP_COLUMNS}
        flops["total"] = _clean(r["flops"])
        kernels.append({
            "name": _clean(r["kernel_name"]),
            "run": _clean(r.get("run")),
            "launch_id": _clean(r.get("launch_id")),
            "process_id": _clean(r.get("process_id")),
            "launches": _clean(r["launches"]),
            "phase": _clean(r["phase"]),
            "time_s": _clean(r["time_s"]),
            "flops": flops,
            "flops_partial": bool(_clean(r["flops_partial"])),
            "estimated": bool(_clean(r["estimated"])),
            "bytes": {lv: _clean(r.get(f"{lv}_bytes")) for lv in byte_levels},
            "ai": {lv: _clean(r.get(f"ai_{lv}")) for lv in ai_levels},
            "flop_rate": _clean(r["flop_rate"]),
            "bound": _clean(r["bound"]),
            "region": _clean(r["region"]),
            "locality": _clean(r["locality"]),
            "attainable": _clean(r["attainable"]),
            "pct_of_roofline": _clean(r["pct_of_roofline"]),
            "roofline_time_s": _clean(r["roofline_time_s"]),
            "savable_time_s": _clean(r["savable_time_s"]),
            "time_share": _clean(r["time_share"]),
            "compute_ceiling": _clean(r["compute_ceiling"]),
            "compute_peak": _clean(r["compute_peak"]),
        })
    return {
        "schema": SCHEMA,
        "machine": _clean(analysis.machine.to_dict()) if analysis.machine is not None else None,
        "by": analysis.by,
        "levels": list(analysis.levels),
        "notes": list(analysis.notes),
        "totals": _clean(analysis.totals),
        "kernels": kernels,
    }

"""The analysis as plain data (schema ``roofline.analysis/1``), ready for ``json.dumps``.

Strict JSON: unknown values are ``null``, never NaN or Infinity (``json.dumps(d,
allow_nan=False)`` works). SI units throughout, with one named exception: ``gips`` (warp
giga-instructions per second, the Instruction Roofline's unit) beside the SI ``inst_per_s``.
The schema is documented in docs/json-schema.md; fields are only ever added, never renamed,
within version 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.breakdown import Breakdown
from roofline.analysis.replay import ReplayTimes
from roofline.analysis.result import Analysis
from roofline.kernels import FLOP_COLUMNS, TRANSACTION_COLUMNS
from roofline.views.chart.rows import undrawn_kernels
from roofline.views.replay_time import replay_dict
from roofline.views.time_breakdown import breakdown_dict

SCHEMA = "roofline.analysis/1"
#: Levels always present (as keys, null when unknown) in "bytes" and "ai".
STANDARD_LEVELS = ("l1", "shared", "l2", "dram")
#: Levels of the instruction roofline: keys of "transactions" and "intensity" (always present).
TRANSACTION_LEVELS = tuple(TRANSACTION_COLUMNS)
#: Kernel-table operation columns -> their key in a kernel's "ops" object.
OP_KEYS = {"int_ops": "int", "conversion_ops": "conversion", "sfu_ops": "sfu", "tensor_int_ops": "tensor_int"}
#: Warp instructions per second in one GIPS.
GIPS = 1e9


def json_safe(value: Any) -> Any:
    """A JSON-safe value: NaN, NA and infinities become None; numpy scalars become Python; dicts and
    lists are cleaned member by member."""
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
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


_clean = json_safe


def _ops(r: dict[str, Any]) -> dict[str, Any]:
    """A kernel's ``"ops"`` object: operations by kind (OP), their ``total`` and whether it is ``partial``."""
    ops = {key: _clean(r.get(col)) for col, key in OP_KEYS.items()}
    ops["total"] = _clean(r.get("ops"))
    ops["partial"] = bool(_clean(r.get("ops_partial")))
    return ops


def _instructions(r: dict[str, Any]) -> dict[str, Any]:
    """A kernel's ``"instructions"`` object (the Instruction Roofline's figures; null where unknown)."""
    rate = _clean(r.get("inst_rate"))
    return {
        "warp": _clean(r.get("warp_inst")),
        "inst_per_s": rate,
        "gips": rate / GIPS if rate is not None else None,
        "transactions": {lv: _clean(r.get(col)) for lv, col in TRANSACTION_COLUMNS.items()},
        "intensity": {lv: _clean(r.get(f"ii_{lv}")) for lv in TRANSACTION_LEVELS},
        "global": {"instructions": _clean(r.get("global_inst")), "per_transaction": _clean(r.get("global_ii")),
                   "pattern": _clean(r.get("global_pattern"))},
        "shared": {"instructions": _clean(r.get("shared_inst")), "per_transaction": _clean(r.get("shared_ii")),
                   "pattern": _clean(r.get("shared_pattern"))},
        "tma": _clean(r.get("tma_inst")),
        "gmma": _clean(r.get("gmma_inst")),
        "off_the_walls": _clean(r.get("pattern_note")),
    }


def work_units(analysis: Analysis) -> dict[str, str]:
    """The units of the analysis' work (``work``, ``rate``, ``traffic``, ``intensity``, ``traffic_rate``),
    held by the kernels' ``flop_rate``, ``ai``, ``attainable`` and ``compute_peak``."""
    spec = analysis.work_spec
    return {"work": spec.unit, "rate": spec.rate_unit, "traffic": spec.traffic_unit,
            "intensity": spec.intensity_unit, "traffic_rate": spec.traffic_rate_unit}


def undrawn(analysis: Analysis) -> list[dict[str, Any]]:
    """The kernels the analysis' roofline chart cannot place, longest first: ``name``, ``phase``,
    ``time_s``, ``time_share``, ``reason`` and ``category`` (:func:`roofline.views.chart.rows.undrawn_kernels`)."""
    return [{"name": u.kernel, "phase": u.phase, "time_s": _clean(u.time_s), "time_share": _clean(u.time_share),
             "reason": u.reason, "category": u.category} for u in undrawn_kernels(analysis)]


def comparison_to_dict(comparison: pd.DataFrame, by: str | None = None, depth: int | None = None) -> dict[str, Any]:
    """The measured-vs-estimated table (:func:`roofline.analysis.estimate.measured_vs_estimated`) as
    ``{"by", "depth", "rows": [...]}``; each row has its keys (``op`` and ``phase``, or ``module``), ``label``,
    and ``time_s``, ``flops``, ``dram_bytes`` as ``{"measured", "estimated", "ratio"}`` (ratio = estimated /
    measured), ``launches`` as ``{"measured", "estimated"}``; null where unknown. ``by``: ``"op"`` or
    ``"module"``, read from the table's key columns when not given."""
    view = by if by is not None else ("op" if "op" in comparison.columns else "module")
    keys = ["op", "phase"] if view == "op" else ["module"]
    rows = []
    for r in comparison.to_dict("records"):
        row: dict[str, Any] = {k: _clean(r.get(k)) for k in keys}
        row["label"] = _clean(r.get("label"))
        for name, ratio in (("time_s", "time_ratio"), ("flops", "flops_ratio"), ("dram_bytes", "dram_bytes_ratio")):
            row[name] = {"measured": _clean(r.get(f"measured_{name}")), "estimated": _clean(r.get(f"estimated_{name}")),
                         "ratio": _clean(r.get(ratio))}
        launches = {side: _clean(r.get(f"{side}_launches")) for side in ("measured", "estimated")}
        row["launches"] = {k: int(v) if isinstance(v, float) else v for k, v in launches.items()}
        rows.append(row)
    return {"by": view, "depth": depth, "rows": rows}


def analysis_to_dict(analysis: Analysis, comparison: pd.DataFrame | None = None,
                     breakdown: Breakdown | None = None, replay: ReplayTimes | None = None) -> dict[str, Any]:
    """``{"schema", "machine", "profile_peaks", "by", "depth", "work", "units", "levels", "notes", "totals", "undrawn",
    "kernels": [...]}`` (see docs/json-schema.md), ``"vendor"`` (:func:`vendor_to_dict`) for an AMD profile,
    ``"estimate"`` (:func:`comparison_to_dict`) when
    a measured-vs-estimated ``comparison`` is given, ``"breakdown"`` (where a timeline's time went:
    :func:`roofline.views.time_breakdown.breakdown_dict`) when ``breakdown`` is given, and ``"match"``
    (:meth:`roofline.kernels.match_rate.MatchRate.to_dict`: how a timeline's launches found their counts)
    when the analysis is of a timeline joined with counts, in memory or out of core, and ``"replay"``
    (:func:`roofline.views.replay_time.replay_dict`: production time against Nsight Compute's replay)
    when ``replay`` is given."""
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
            "op": _clean(r.get("op")),
            "module": _clean(r.get("module")),
            "time_s": _clean(r["time_s"]),
            "flops": flops,
            "flops_partial": bool(_clean(r["flops_partial"])),
            "ops": _ops(r),
            "instructions": _instructions(r),
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
            "inconsistent": _clean(r.get("inconsistent")),
        })
    depth = getattr(analysis, "depth", None)
    out = {
        "schema": SCHEMA,
        "machine": _clean(analysis.machine.to_dict()) if analysis.machine is not None else None,
        "profile_peaks": _clean(beside.to_dict()) if (beside := analysis.peaks_beside) is not None else None,
        "by": analysis.by,
        "depth": depth,
        "work": analysis.work,
        "units": work_units(analysis),
        "levels": list(analysis.levels),
        "notes": list(analysis.notes),
        "totals": _clean(analysis.totals),
        "undrawn": undrawn(analysis),
        "kernels": kernels,
    }
    if comparison is not None:
        by = analysis.by if analysis.by in ("op", "module") else None
        out["estimate"] = comparison_to_dict(comparison, by, depth if by == "module" else None)
    if breakdown is not None:
        out["breakdown"] = _clean(breakdown_dict(breakdown))
    if analysis.match is not None:
        out["match"] = analysis.match.to_dict()
    if replay is not None:
        out["replay"] = _clean(replay_dict(replay))
    if (vendor := vendor_to_dict(analysis)) is not None:
        out["vendor"] = vendor
    return out


def vendor_to_dict(analysis: Analysis) -> dict[str, Any] | None:
    """Whose GPU the profile is of, for a profile other than NVIDIA's (an AMD Instinct's): ``{"name": "amd",
    "arch": "gfx942" | None, "level_names": {level: name}, "compute_unit": "CU", "thread_group": "wavefront",
    "thread_group_size": 64}``; None for NVIDIA's or an unknown vendor (the JSON as it always was)."""
    words = analysis.words
    if not words.is_amd:
        return None
    return {"name": words.vendor, "arch": analysis.arch,
            "level_names": {lv: words.level(lv) for lv in (*STANDARD_LEVELS, *analysis.levels)},
            "compute_unit": words.compute_unit, "thread_group": words.thread_group,
            "thread_group_size": words.thread_group_size}

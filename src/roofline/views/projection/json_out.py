"""A projection as JSON-ready data: schema ``roofline.projection/1`` (docs/json-schema.md).

Strict JSON (``json.dumps(..., allow_nan=False)`` passes): an unknown value is ``null``, and so is
an infinite one, whose meaning the schema states (``high_time_s`` null on a projected kernel: its
time there is unbounded above). Units SI: seconds; speed-ups and fractions are plain ratios.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from roofline.projection import NOTE_CODES, SCHEMA, TOTAL_KEYS, Projection
from roofline.views.json_out import json_safe, vendor_to_dict

#: Per-kernel fields after the keys, in the frame's units.
KERNEL_FIELDS = ("launches", "time_s", "roofline_time_s", "pct_of_roofline", "bound", "best_time_s",
                 "projected_time_s", "low_time_s", "high_time_s", "bound_target", "speedup", "speedup_low",
                 "speedup_high", "gain_s", "projected", "why")
#: Totals that are counts.
COUNTS = ("kernels", "unprojected", "slower")



def _totals(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (int(values[k]) if k in COUNTS else json_safe(values[k])) for k in TOTAL_KEYS}


def _kernel(row: pd.Series, keys: tuple[str, ...]) -> dict[str, Any]:
    out = {k: json_safe(row[k]) for k in keys}
    out.update({k: json_safe(row[k]) for k in KERNEL_FIELDS})
    if out["launches"] is not None:
        out["launches"] = int(out["launches"])
    out["notes"] = [{"code": str(code), "text": str(text)} for code, text in row["note_list"]]
    out["note_text"] = str(row["note_text"])
    return out


def projection_to_dict(proj: Projection) -> dict[str, Any]:
    """The projection as JSON-ready data (schema ``roofline.projection/1``): the machines as applied,
    levels, keys, notes, what the note codes mean, the program's totals (with how many kernels get
    slower there, their time here and share of it, and the time they add there), the phases (``[]`` when
    not by phase) and one entry per kernel, in the frame's order (projected gain first, so those that
    get slower, ``gain_s`` < 0, after every other projected kernel); ``vendors`` when a side is an AMD GPU."""
    phases = [{"phase": str(r["phase"]), **_totals(r)} for _, r in proj.phase_totals().iterrows()]
    out = {
        "schema": SCHEMA,
        "source": proj.source.to_dict(),
        "target": proj.target.to_dict(),
        "levels": list(proj.levels),
        "keys": list(proj.keys),
        "notes": list(proj.notes),
        "note_codes": dict(NOTE_CODES),
        "totals": _totals(proj.totals),
        "phases": phases,
        "kernels": [_kernel(r, proj.keys) for _, r in proj.frame.iterrows()],
    }
    here, there = vendor_to_dict(proj.source_analysis), vendor_to_dict(proj.target_analysis)
    if here is not None or there is not None:  # an AMD side: each side's vendor (null: NVIDIA's or unknown)
        out["vendors"] = {"source": here, "target": there}
    return out

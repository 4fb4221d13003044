"""Compare two analyses (before and after a change, or one program on two GPUs).

``compare(before, after)`` matches kernels by name (and by phase when both analyses
are grouped by phase) and returns a :class:`Comparison`: one row per kernel with its
time, FLOP/s, intensities, bound and distance to the roofline before and after, plus
kernels that are new or vanished, and totals. Each analysis keeps its own machine,
so two GPUs are each held to their own ceilings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.kernels.vendor import NVIDIA_WORDS, bound_words
from roofline.units import format_number

#: Exit status of ``roofline compare --fail-if-slower`` when the total time grew too much.
EXIT_SLOWER = 1

#: Per-kernel quantities compared (suffixed ``_before`` and ``_after``).
COMPARED = ("launches", "time_s", "flops", "flop_rate", "bound", "region", "pct_of_roofline", "savable_time_s")


@dataclass(frozen=True)
class Comparison:
    """Two analyses side by side.

    ``frame``: one row per kernel (and phase, when matched by phase) with ``status``
    (``"matched"``, ``"new"``: only after, ``"vanished"``: only before), the
    :data:`COMPARED` columns and ``ai_{level}`` for every level of either analysis,
    each suffixed ``_before`` / ``_after``, plus ``time_change_s`` and
    ``time_change_pct`` (percent, positive = slower). Rows are ordered by the larger of
    the two times. ``keys`` are the matching columns; ``levels`` the union of levels.
    """

    before: Any
    after: Any
    frame: pd.DataFrame
    keys: tuple[str, ...]
    levels: tuple[str, ...]

    @property
    def totals(self) -> dict[str, float]:
        """Total time before and after (s, all kernels), the change (s and percent), kernel counts."""
        tb = float(np.nansum(self.frame["time_s_before"].to_numpy(dtype=float)))
        ta = float(np.nansum(self.frame["time_s_after"].to_numpy(dtype=float)))
        status = self.frame["status"]
        return {
            "time_s_before": tb,
            "time_s_after": ta,
            "time_change_s": ta - tb,
            "time_change_pct": 100.0 * (ta - tb) / tb if tb > 0 else math.nan,
            "speedup": tb / ta if ta > 0 else math.nan,
            "matched": int((status == "matched").sum()),
            "new": int((status == "new").sum()),
            "vanished": int((status == "vanished").sum()),
        }

    def slower_than(self, pct: float) -> bool:
        """True when the total time grew by more than ``pct`` percent."""
        change = self.totals["time_change_pct"]
        return bool(math.isfinite(change) and change > pct)

    @property
    def same_machine(self) -> bool:
        mb, ma = getattr(self.before, "machine", None), getattr(self.after, "machine", None)
        if mb is None or ma is None:
            return mb is ma
        return dict(mb.memory) == dict(ma.memory) and dict(mb.compute) == dict(ma.compute)


def _keys(before: Any, after: Any) -> list[str]:
    by_b, by_a = getattr(before, "by", "name"), getattr(after, "by", "name")
    if "launch" in (by_b, by_a):
        raise InputError("cannot compare per-launch analyses", hint="compare by name or by phase")
    if by_b == by_a == "phase":
        return ["phase", "kernel_name"]
    return ["kernel_name"]


def _side(analysis: Any, keys: list[str], levels: list[str], suffix: str) -> pd.DataFrame:
    f = analysis.frame
    out = pd.DataFrame({k: f[k].astype("string").fillna("(none)") for k in keys})
    for col in COMPARED:
        out[f"{col}{suffix}"] = f[col] if col in f.columns else np.nan
    for lv in levels:
        out[f"ai_{lv}{suffix}"] = f[f"ai_{lv}"].astype(float) if f"ai_{lv}" in f.columns else np.nan
    dup = out.duplicated(keys)
    if dup.any():
        names = ", ".join(out.loc[dup, keys[-1]].astype(str).head(3))
        raise InputError(f"kernels appear more than once after grouping: {names}",
                         hint="compare analyses grouped by name or by phase")
    return out


def compare(before: Any, after: Any) -> Comparison:
    """Match the kernels of two analyses (``roofline.analysis.Analysis``) and line up their numbers."""
    keys = _keys(before, after)
    levels = list(dict.fromkeys([*getattr(before, "levels", ()), *getattr(after, "levels", ())]))
    b = _side(before, keys, levels, "_before")
    a = _side(after, keys, levels, "_after")
    frame = b.merge(a, on=keys, how="outer", indicator=True, sort=False)
    frame["status"] = frame.pop("_merge").map({"both": "matched", "left_only": "vanished", "right_only": "new"})
    frame["status"] = frame["status"].astype("string")
    tb, ta = frame["time_s_before"].astype(float), frame["time_s_after"].astype(float)
    frame["time_change_s"] = ta - tb
    frame["time_change_pct"] = 100.0 * (ta - tb) / tb.where(tb > 0)
    frame["_order"] = np.fmax(tb.to_numpy(), ta.to_numpy())
    frame = frame.sort_values("_order", ascending=False, kind="stable", na_position="last").drop(columns="_order")
    if "phase" in keys:
        frame["phase"] = frame["phase"].replace("(none)", pd.NA)
    return Comparison(before=before, after=after, frame=frame.reset_index(drop=True), keys=tuple(keys),
                      levels=tuple(levels))


# -- outputs ------------------------------------------------------------------------------------
def _clean(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def comparison_to_dict(comp: Comparison) -> dict[str, Any]:
    """The comparison as JSON-ready data (schema ``roofline.comparison/1``; NaN becomes null)."""
    def machine(analysis: Any) -> Any:
        m = getattr(analysis, "machine", None)
        return None if m is None else m.to_dict()

    return {
        "schema": "roofline.comparison/1",
        "keys": list(comp.keys),
        "levels": list(comp.levels),
        "machine_before": machine(comp.before),
        "machine_after": machine(comp.after),
        "totals": {k: _clean(v) for k, v in comp.totals.items()},
        "kernels": [{k: _clean(v) for k, v in row.items()} for row in comp.frame.to_dict("records")],
    }


def _ai(value: float) -> str:
    """An intensity (FLOP/B) with 3 significant digits, never in exponent notation."""
    return format_number(value, digits=3)


def _arrow(before: Any, after: Any, fmt: Any) -> str:
    b, a = _clean(before), _clean(after)
    if b is None and a is None:
        return "-"
    return f"{fmt(b) if b is not None else '-'} → {fmt(a) if a is not None else '-'}"


#: ``sort_changes`` keys -> the compared quantity (the larger of before and after orders the rows).
CHANGE_SORT_KEYS = {"time": "time_s", "savable": "savable_time_s", "flops": "flops", "ai": None}


def sort_changes(comp: Comparison, key: str = "time") -> pd.DataFrame:
    """The comparison's rows ordered by ``key`` (time, savable, flops, ai: the DRAM intensity, else the
    outermost level with data), the larger of before and after first, unknown last; a copy."""
    if key not in CHANGE_SORT_KEYS:
        raise InputError(f"unknown sort key {key!r}; choose one of {', '.join(CHANGE_SORT_KEYS)}")
    if key == "time":
        return comp.frame
    base = CHANGE_SORT_KEYS[key]
    if base is None:
        levels = [lv for lv in (["dram"] if "dram" in comp.levels else []) + list(reversed(comp.levels))]
        base = next((f"ai_{lv}" for lv in levels
                     if comp.frame[[f"ai_{lv}_before", f"ai_{lv}_after"]].notna().any().any()), "time_s")
    order = np.fmax(comp.frame[f"{base}_before"].to_numpy(dtype=float), comp.frame[f"{base}_after"].to_numpy(dtype=float))
    ranked = comp.frame.assign(_order=order)
    return ranked.sort_values("_order", ascending=False, kind="stable", na_position="last").drop(columns="_order")


def _bound(value: Any, words: Any) -> str:
    """A side's bound in its words (an AMD GPU's: 'HBM', 'Matrix FP16'), '-' when unknown."""
    return "-" if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) \
        else bound_words(str(value), words)


def changes_table(comp: Comparison, *, top: int | None = 20, sort: str = "time") -> Any:
    """A rich Table of the changes per kernel (ordered by ``sort``: :func:`sort_changes`) with a totals row."""
    from rich.table import Table
    from rich.text import Text

    from roofline.kernels.labels import short_names
    from roofline.units import format_si, format_time

    tot = comp.totals
    t = Table(title="Changes (before → after)", show_footer=True,
              caption=f"{tot['matched']} kernel{'' if tot['matched'] == 1 else 's'} matched, {tot['new']} new, "
                      f"{tot['vanished']} vanished")
    t.add_column("kernel", overflow="fold", max_width=44, footer="total")
    t.add_column("status")
    t.add_column("time", justify="right", no_wrap=True,
                 footer=f"{format_time(tot['time_s_before'])} → {format_time(tot['time_s_after'])}")
    pct = tot["time_change_pct"]
    t.add_column("change", justify="right", footer=f"{pct:+.1f}%" if math.isfinite(pct) else "-")
    t.add_column("FLOP/s", justify="right", no_wrap=True)
    before, after = (getattr(getattr(comp, side), "words", NVIDIA_WORDS) for side in ("before", "after"))
    amd = before.is_amd or after.is_amd  # NVIDIA's keys in upper case, as ever; else each side's words
    for lv in comp.levels:
        name = lv.upper() if not amd else " / ".join(dict.fromkeys((before.level(lv), after.level(lv))))
        t.add_column(f"AI {name}", justify="right", no_wrap=True)
    t.add_column("limiter")
    frame = sort_changes(comp, sort)
    rows = frame if top is None else frame.head(top)
    labels = short_names([str(n) for n in rows["kernel_name"]])
    for label, (_, r) in zip(labels, rows.iterrows()):
        name = label
        if "phase" in comp.keys and isinstance(r["phase"], str):
            name = f"[{r['phase']}] {name}"
        change = r["time_change_pct"]
        style = "red" if math.isfinite(change) and change > 0 else ("green" if math.isfinite(change) else "")
        cells: list[Text | str] = [Text(name), str(r["status"]), _arrow(r["time_s_before"], r["time_s_after"], format_time),
                 Text(f"{change:+.1f}%" if math.isfinite(change) else "-", style=style),
                 _arrow(r["flop_rate_before"], r["flop_rate_after"], lambda v: format_si(v, "FLOP/s"))]
        cells += [_arrow(r[f"ai_{lv}_before"], r[f"ai_{lv}_after"], _ai) for lv in comp.levels]
        cells.append(Text(_arrow(r["bound_before"], r["bound_after"], str) if not amd else
                          f"{_bound(r['bound_before'], before)} → {_bound(r['bound_after'], after)}"))
        t.add_row(*cells)
    return t

"""The HTML report's kernel table: its columns (the work's rate and intensity per level, the
warp-instruction rate and access patterns where counted), one row of values and display text per
kernel, and the filters and head the page's script fills and sorts.

Times in seconds, rates per second, intensities in work per byte (or per transaction), shown with
their units by :mod:`roofline.units`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.work import work_for
from roofline.views.work_words import WorkLabels, work_labels
from roofline.units import format_number, format_si, format_time
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords
from roofline.views.chart.style import bound_text, level_label
from roofline.views.report.cells import escape as _e
from roofline.views.report.cells import number as _num
from roofline.views.report.cells import percent as _pct
from roofline.views.report.cells import text as _str


def has_patterns(frame: pd.DataFrame) -> bool:
    """True when some kernel has a global or shared access pattern (its LD/ST counts were collected)."""
    return any(c in frame and bool(frame[c].notna().any()) for c in ("global_pattern", "shared_pattern"))


def has_instructions(frame: pd.DataFrame) -> bool:
    """True when some kernel has a warp-instruction rate."""
    return "inst_rate" in frame and bool(np.isfinite(frame["inst_rate"].to_numpy(dtype=float, na_value=np.nan)).any())


def table_columns(levels: Sequence[str], labels: WorkLabels | None = None, *, inst_rate: bool = False,
                  patterns: bool = False, words: VendorWords = NVIDIA_WORDS) -> list[dict[str, Any]]:
    """The kernel table's columns: the work's rate and intensity per level (``labels``: FLOPs when None;
    levels in the vendor's ``words``), the warp-instruction rate (``inst_rate``) and the access patterns
    (``patterns``) where counted."""
    labels = labels or work_labels(work_for("flops"))
    cols = [
        {"key": "rank", "label": "#", "num": True},
        {"key": "kernel_name", "label": "kernel", "num": False},
        {"key": "phase", "label": "phase", "num": False},
        {"key": "launches", "label": "launches", "num": True},
        {"key": "time_s", "label": "time", "num": True},
        {"key": "time_share", "label": "share", "num": True},
        {"key": "flop_rate", "label": labels.rate, "num": True},
    ]
    cols += [{"key": f"ai_{lv}", "label": f"{labels.intensity} {level_label(lv, words.levels)}", "num": True}
             for lv in levels]
    if inst_rate:
        cols.append({"key": "inst_rate", "label": "warp inst/s", "num": True})
    if patterns:
        # sorted by their numbers (LD/ST instructions per transaction), shown as text that may wrap
        cols += [{"key": "global_ii", "label": "global pattern", "num": False},
                 {"key": "shared_ii", "label": "shared pattern", "num": False}]
    cols += [
        {"key": "bound", "label": "bound", "num": False},
        {"key": "limiter_label", "label": "limited by", "num": False},
        {"key": "pct_of_roofline", "label": "% of roofline", "num": True},
        {"key": "savable_time_s", "label": "savable", "num": True},
    ]
    return cols


def _intensity_text(value: float | None, *, infinite: bool = False) -> str:
    return "∞" if infinite else format_number(value)


def _pattern_text(pattern: Any, per_transaction: float | None) -> str:
    """'random (0.0312)': the pattern and its LD/ST instructions per transaction; '-' when unknown."""
    name = _str(pattern)
    return "-" if name is None else f"{name} ({format_number(per_transaction)})"


def _bound(value: Any, words: VendorWords) -> str | None:
    """The bound as the table shows it (None when unknown), in the vendor's words."""
    text = _str(value)
    return None if text is None else bound_text(text, words)


def kernel_rows(analysis: Any, advice: pd.DataFrame, levels: Sequence[str],
                labels: WorkLabels | None = None) -> list[dict[str, Any]]:
    """One row per kernel of ``advice`` (rank order): the values the table sorts by and, under
    ``<key>__text``, the text it shows (times, rates and shares formatted with their units); the bound in
    the vendor's words (``analysis.words``)."""
    labels = labels or work_labels(work_for("flops"))
    words = getattr(analysis, "words", NVIDIA_WORDS)
    frame = analysis.frame
    rows = []
    for _, a in advice.iterrows():
        src = frame.loc[a["row"]]
        row: dict[str, Any] = {
            "id": int(a["rank"]), "rank": int(a["rank"]), "kernel_name": str(a["kernel_name"]),
            "display_name": str(a["label"]), "phase": _str(a["phase"]),
            "launches": _num(a["launches"]), "time_s": _num(a["time_s"]), "time_share": _num(a["time_share"]),
            "flop_rate": _num(src.get("flop_rate")), "bound": _bound(a["bound"], words), "limiter": _str(a["limiter_label"]),
            "limiter_label": _str(a["limiter_label"]), "pct_of_roofline": _num(a["pct_of_roofline"]),
            "savable_time_s": _num(a["savable_time_s"]),
            "inst_rate": _num(src.get("inst_rate")), "global_ii": _num(src.get("global_ii")),
            "shared_ii": _num(src.get("shared_ii")),
        }
        for lv in levels:
            raw = src.get(f"ai_{lv}")
            row[f"ai_{lv}"] = _num(raw)
            infinite = row[f"ai_{lv}"] is None and isinstance(raw, float) and math.isinf(raw) and raw > 0
            row[f"ai_{lv}__text"] = _intensity_text(row[f"ai_{lv}"], infinite=infinite)
        row["launches__text"] = "-" if row["launches"] is None else f"{row['launches']:,.0f}"
        row["time_s__text"] = format_time(row["time_s"])
        row["savable_time_s__text"] = format_time(row["savable_time_s"])
        row["time_share__text"] = _pct(row["time_share"])
        row["pct_of_roofline__text"] = _pct(row["pct_of_roofline"])
        row["flop_rate__text"] = format_si(row["flop_rate"], labels.rate_unit)
        row["inst_rate__text"] = format_si(row["inst_rate"], "inst/s")
        row["global_ii__text"] = _pattern_text(src.get("global_pattern"), row["global_ii"])
        row["shared_ii__text"] = _pattern_text(src.get("shared_pattern"), row["shared_ii"])
        rows.append(row)
    return rows


NUM_CLASS = " class='num'"


def kernel_table(columns: list[dict[str, Any]]) -> str:
    """The table's filters and head; the page's script fills its body from the rows' JSON."""
    heads = "".join(f"<th data-key='{_e(c['key'])}'{NUM_CLASS if c['num'] else ''}>"
                    f"<button type='button'>{_e(c['label'])}</button></th>" for c in columns)
    return (
        "<div class='controls'>"
        "<input id='filter-text' type='search' placeholder='filter by kernel name' aria-label='filter by kernel name'>"
        "<select id='filter-phase' aria-label='phase'><option value=''>all phases</option></select>"
        "<select id='filter-limiter' aria-label='limiter'><option value=''>all limiters</option></select>"
        "<span id='shown'></span></div>"
        f"<table id='kernels'><thead><tr>{heads}</tr></thead><tbody></tbody></table>"
    )

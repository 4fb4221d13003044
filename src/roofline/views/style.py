"""What the charts share: level colours and names, ceiling labels, and the points to draw."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.units import format_si

#: Marker colours per memory level, as in the Hierarchical Roofline paper (L1 blue, L2 red, HBM green).
LEVEL_COLORS = {"l1": "#1f4fb4", "l2": "#c8102e", "l3": "#e08a00", "dram": "#1a8f3a"}
FALLBACK_COLOR = "#6a3d9a"
LEVEL_LABELS = {"l1": "L1", "l2": "L2", "l3": "L3", "dram": "DRAM"}


def level_color(level: str) -> str:
    return LEVEL_COLORS.get(level, FALLBACK_COLOR)


def level_label(level: str, labels: Mapping[str, str] | None = None) -> str:
    """Display name of a memory level; ``labels`` overrides (e.g. ``{"dram": "HBM"}``)."""
    if labels and level in labels:
        return labels[level]
    return LEVEL_LABELS.get(level, level.upper())


def compute_label(key: str) -> str:
    """'fp64' -> 'FP64', 'tensor_fp16' -> 'Tensor FP16', 'tensor_int8' -> 'Tensor INT8'."""
    if key.startswith("tensor_"):
        return "Tensor " + key[len("tensor_"):].upper()
    return key.upper()


def compute_unit(key: str) -> str:
    return "OP/s" if key.endswith("int8") else "FLOP/s"


def memory_ceiling_label(level: str, bandwidth: float, labels: Mapping[str, str] | None = None) -> str:
    """e.g. 'HBM 829 GB/s'."""
    return f"{level_label(level, labels)} {format_si(bandwidth, 'B/s')}"


def compute_ceiling_label(key: str, peak: float) -> str:
    """e.g. 'FP64 7.07 TFLOP/s'."""
    return f"{compute_label(key)} {format_si(peak, compute_unit(key))}"


@dataclass(frozen=True)
class ChartRows:
    """The rows a chart draws, and the rows it cannot (no FLOPs, or unknown FLOPs/time)."""

    shown: pd.DataFrame
    zero_flop: pd.DataFrame
    unknown: pd.DataFrame
    total_time_s: float


def select_rows(analysis: Analysis, phase: str | None = None) -> ChartRows:
    """Split the analysis rows (optionally one phase) into drawable and not drawable, by time."""
    frame = analysis.ranked
    if phase is not None:
        if analysis.by == "name":
            raise ValueError("phase= needs an analysis by 'phase' or 'launch' (by 'name' sums over phases)")
        frame = frame[frame["phase"].astype("string").fillna("") == phase].reset_index(drop=True)
    flops = frame["flops"].to_numpy(dtype=float)
    rate = frame["flop_rate"].to_numpy(dtype=float)
    zero = flops == 0
    drawable = np.isfinite(rate) & (rate > 0)
    return ChartRows(
        shown=frame[drawable].reset_index(drop=True),
        zero_flop=frame[zero].reset_index(drop=True),
        unknown=frame[~drawable & ~zero].reset_index(drop=True),
        total_time_s=float(np.nansum(frame["time_s"].to_numpy(dtype=float))),
    )


def not_shown_note(rows: ChartRows) -> str:
    """e.g. '1 kernel without FLOPs (0.4% of time) not shown'; empty when all are shown."""
    parts = []
    for frame, what in ((rows.zero_flop, "without FLOPs"), (rows.unknown, "with unknown FLOPs or time")):
        if len(frame):
            t = float(np.nansum(frame["time_s"].to_numpy(dtype=float)))
            share = f"{100 * t / rows.total_time_s:.1f}% of time" if rows.total_time_s > 0 else "time unknown"
            noun = "kernel" if len(frame) == 1 else "kernels"
            parts.append(f"{len(frame)} {noun} {what} ({share})")
    return "; ".join(parts) + " not shown" if parts else ""


def chart_levels(analysis: Analysis, levels: list[str] | tuple[str, ...] | None) -> list[str]:
    """The analysed levels to draw, innermost first; unknown names raise ValueError."""
    if levels is None:
        return list(analysis.levels)
    bad = [lv for lv in levels if lv not in analysis.levels]
    if bad:
        raise ValueError(f"levels not in the analysis: {', '.join(bad)} (analysed: {', '.join(analysis.levels)})")
    return [lv for lv in analysis.levels if lv in levels]

"""What the charts share: level colours and names, which ceilings to draw and their labels,
where each ceiling comes from, and the points to draw (and those that cannot be drawn)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.analysis.roofline import PRECISION_KEYS, TENSOR_DEFAULT
from roofline.errors import InputError
from roofline.machine.model import SOURCES, Machine
from roofline.machine.model import compute_unit as model_compute_unit
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


#: Display names of the compute keys that are not a precision.
COMPUTE_NAMES = {"int32": "INT32", "conversion": "Conversion", "sfu": "SFU", "warp_inst": "Warp instructions"}


def compute_label(key: str) -> str:
    """'fp64' -> 'FP64', 'tensor_fp16' -> 'Tensor FP16', 'tensor_int8' -> 'Tensor INT8', 'sfu' -> 'SFU'."""
    if key.startswith("tensor_"):
        return "Tensor " + key[len("tensor_"):].upper()
    return COMPUTE_NAMES.get(key, key.upper())


def compute_unit(key: str) -> str:
    """'FLOP/s', 'OP/s' or 'inst/s' (see :func:`roofline.machine.model.compute_unit`)."""
    return model_compute_unit(key)


def memory_ceiling_label(level: str, bandwidth: float, labels: Mapping[str, str] | None = None) -> str:
    """e.g. 'HBM 829 GB/s'."""
    return f"{level_label(level, labels)} {format_si(bandwidth, 'B/s')}"


def compute_ceiling_label(key: str | Sequence[str], peak: float) -> str:
    """e.g. 'FP64 7.07 TFLOP/s'; several keys of one value: 'FP32, Tensor FP64 10.6 TFLOP/s'."""
    keys = [key] if isinstance(key, str) else list(key)
    units = {compute_unit(k) for k in keys}
    unit = units.pop() if len(units) == 1 else "FLOP/s"
    return f"{', '.join(compute_label(k) for k in keys)} {format_si(peak, unit)}"


#: Ceilings closer than this (relative) are one line with one label: 'FP32, Tensor FP64 10.6 TFLOP/s'.
EQUAL_PEAK_RTOL = 5e-3
#: Modes of the ``ceilings`` keyword of every chart.
CEILING_MODES = ("used", "all")


def used_compute_keys(frame: pd.DataFrame) -> list[str]:
    """Machine compute keys of the precisions the rows do FLOPs in (a FLOP column > 0).

    Tensor FLOPs name their ceiling from ``tensor_precision`` (``tensor_fp16`` when not
    known, as the analysis does). Unknown (NaN) counts use nothing.
    """
    keys: list[str] = []
    for col, key in PRECISION_KEYS.items():
        if col in frame and (frame[col].to_numpy(dtype=float) > 0).any():
            keys.append(key)
    if "tensor_flops" in frame:
        used = frame["tensor_flops"].to_numpy(dtype=float) > 0
        if used.any():
            prec = frame["tensor_precision"].astype("string").str.lower()[used]
            keys += sorted({TENSOR_DEFAULT if pd.isna(p) else f"tensor_{p}" for p in prec})
    return keys


def chart_compute_ceilings(machine: Machine | None, frame: pd.DataFrame, ceilings: str = "used") -> dict[str, float]:
    """The compute ceilings a chart draws, highest first.

    ``"used"``: the precisions the kernels in ``frame`` use plus the machine's highest
    FLOP/s ceiling (what the chart would be measured against); ``"all"``: every one.
    """
    if ceilings not in CEILING_MODES:
        raise ValueError(f"ceilings must be one of {', '.join(CEILING_MODES)}, not {ceilings!r}")
    if machine is None or not machine.compute:
        return {}
    comp = dict(machine.compute)
    if ceilings == "used":
        flop = {k: v for k, v in comp.items() if compute_unit(k) == "FLOP/s"} or comp
        keep = {k for k in used_compute_keys(frame) if k in comp} | {max(flop, key=lambda k: flop[k])}
        comp = {k: v for k, v in comp.items() if k in keep}
    return dict(sorted(comp.items(), key=lambda kv: -kv[1]))


def merge_equal_ceilings(compute: Mapping[str, float]) -> list[tuple[tuple[str, ...], float]]:
    """Group ceilings of (nearly) equal value, highest first: one line and one label per group."""
    groups: list[tuple[list[str], float]] = []
    for key, peak in sorted(compute.items(), key=lambda kv: -kv[1]):
        if groups and abs(groups[-1][1] - peak) <= EQUAL_PEAK_RTOL * groups[-1][1]:
            groups[-1][0].append(key)
        else:
            groups.append(([key], peak))
    return [(tuple(keys), peak) for keys, peak in groups]


#: How the caption names each source of a ceiling.
SOURCE_WORDS = {"measured": "measured", "theoretical": "theoretical (datasheet)",
                "from-profile": "from the profile's peak metrics"}


def ceiling_source(machine: Machine, key: str) -> str:
    """'measured', 'theoretical' or 'from-profile' for one ceiling.

    Per-ceiling origins (``metadata['ceiling_sources']``, e.g. 'measured: ERT ...',
    kept when machines are combined) win over the machine's own ``source``.
    """
    source_of = getattr(machine, "source_of", None)  # per-ceiling sources, where the model has them
    if source_of is not None:
        try:
            return str(source_of(f"{'memory' if key in machine.memory else 'compute'}.{key}"))
        except KeyError:
            pass
    origins = machine.metadata.get("ceiling_sources")
    if isinstance(origins, Mapping) and isinstance(origins.get(key), str):
        head = origins[key].split(":", 1)[0].strip().lower()
        if head in SOURCES:
            return head
    return machine.source


def ceilings_caption(machine: Machine, keys: Iterable[str], level_labels: Mapping[str, str] | None = None) -> str:
    """e.g. 'ceilings: V100 at 1.31 GHz; measured: L1, L2, DRAM, FP64; theoretical (datasheet): FP32'."""
    by_source: dict[str, list[str]] = {}
    for key in keys:
        name = level_label(key, level_labels) if key in machine.memory else compute_label(key)
        by_source.setdefault(ceiling_source(machine, key), []).append(name)
    clk = f" at {format_si(machine.sm_clock_hz, 'Hz')}" if machine.sm_clock_hz else ""
    parts = [f"{SOURCE_WORDS.get(src, src)}: {', '.join(names)}" for src, names in by_source.items()]
    if len(by_source) == 1:
        return f"ceilings: {machine.name}{clk}, all {SOURCE_WORDS.get(next(iter(by_source)), '')}"
    return f"ceilings: {machine.name}{clk}; " + "; ".join(parts)


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


#: How many of the kernels not drawn the note names (longest first).
NOT_SHOWN_NAMED = 3


def _share(t: float, total: float) -> str:
    return f"{100 * t / total:.1f}%" if total > 0 and np.isfinite(t) else "time unknown"


def not_shown_note(rows: ChartRows, names: Sequence[str] | None = None) -> str:
    """e.g. '1 kernel without FLOPs (0.4% of time) not shown: cleanup 0.4%'; empty when all are shown.

    The longest few of each kind are named with their share of the time. ``names``
    (optional): display names for ``zero_flop`` then ``unknown`` rows, in order.
    """
    from roofline.views.names import short_names

    parts = []
    offset = 0
    for frame, what in ((rows.zero_flop, "without FLOPs"), (rows.unknown, "with unknown FLOPs or time")):
        if len(frame):
            times = frame["time_s"].to_numpy(dtype=float)
            t = float(np.nansum(times))
            share = f"{_share(t, rows.total_time_s)} of time" if rows.total_time_s > 0 else "time unknown"
            noun = "kernel" if len(frame) == 1 else "kernels"
            labels = (list(names[offset:offset + len(frame)]) if names is not None
                      else short_names(list(frame["kernel_name"].astype(str))))
            order = sorted(range(len(frame)), key=lambda i: -np.nan_to_num(times[i], nan=-1.0))
            named = ", ".join(f"{labels[i]} {_share(times[i], rows.total_time_s)}" if np.isfinite(times[i])
                              else f"{labels[i]} (time unknown)" for i in order[:NOT_SHOWN_NAMED])
            more = f", {len(frame) - NOT_SHOWN_NAMED} more" if len(frame) > NOT_SHOWN_NAMED else ""
            parts.append(f"{len(frame)} {noun} {what} ({share}) not shown: {named}{more}")
        offset += len(frame)
    return "; ".join(parts)


#: The ncu metrics that give a kernel its time and FLOPs (FP32; add the d/h variants for FP64/FP16).
TIME_AND_FLOP_METRICS = ("gpu__time_duration.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                         "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
                         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum")


def require_drawable(rows: ChartRows) -> None:
    """Raise InputError when no row can be drawn (no kernel has counted FLOPs and a time)."""
    if len(rows.shown):
        return
    n = len(rows.zero_flop) + len(rows.unknown)
    what = ((f"none of the {n} kernels has" if n > 1 else "the kernel has no") + " counted FLOPs and a time"
            if n else "the analysis has no kernels")
    raise InputError(
        f"nothing to draw on a roofline chart: {what}",
        hint="profile with the FLOP and time metrics, e.g. ncu --metrics " + ",".join(TIME_AND_FLOP_METRICS)
        + " (and the dadd/dmul/dfma, hadd/hmul/hfma variants for FP64 and FP16, "
        "sm__inst_executed_pipe_tensor.sum for tensor cores), or ncu --set full",
    )


def chart_levels(analysis: Analysis, levels: Sequence[str] | None) -> list[str]:
    """The analysed levels to draw, innermost first; unknown names raise ValueError."""
    if levels is None:
        return list(analysis.levels)
    bad = [lv for lv in levels if lv not in analysis.levels]
    if bad:
        raise ValueError(f"levels not in the analysis: {', '.join(bad)} (analysed: {', '.join(analysis.levels)})")
    return [lv for lv in analysis.levels if lv in levels]

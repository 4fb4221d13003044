"""What the charts share: level colours, markers and names, axis texts and units of each work, which
ceilings to draw and their labels, and where each ceiling comes from. The rows a chart draws (and
those it cannot, with why) are in :mod:`roofline.views.chart.rows`, re-exported here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from roofline.analysis.result import Analysis
from roofline.analysis.compute_peak import TENSOR_DEFAULT
from roofline.analysis.work import FLOPS, TENSOR, Work
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords
from roofline.machine.model import (
    COMPUTE_KEYS, FLOP_KEYS, SOURCES, Machine, base_compute_key, compute_variant, variant_words,
)
from roofline.machine.model import compute_unit as model_compute_unit
from roofline.units import format_si
from roofline.views.chart.rows import (
    NOT_SHOWN_NAMED,
    ChartRows,
    UndrawnKernel,
    not_shown_note,
    require_drawable,
    select_rows,
    undrawn_kernels,
)

__all__ = ["NOT_SHOWN_NAMED", "ChartRows", "UndrawnKernel", "not_shown_note",
           "require_drawable", "select_rows", "undrawn_kernels"]

#: Marker colours per memory level, as in the Hierarchical Roofline paper (L1 blue, L2 red, HBM green);
#: shared memory (not in the paper) purple, L3 orange.
LEVEL_COLORS = {"l1": "#1f4fb4", "shared": "#8e3bb5", "l2": "#c8102e", "l3": "#e08a00", "dram": "#1a8f3a"}
FALLBACK_COLOR = "#555555"
#: NVIDIA's names of the levels (and a table's of unknown vendor); an AMD table's are its vendor's
#: (:func:`vendor_labels`, :mod:`roofline.kernels.vendor`).
LEVEL_LABELS = dict(NVIDIA_WORDS.levels)
#: Marker shapes per level (matplotlib): circles, but shared memory, whose square tells it from L1
#: (same SRAM, often the same intensity) without colour.
LEVEL_MARKERS = {"shared": "s"}
DEFAULT_MARKER = "o"


def level_color(level: str) -> str:
    return LEVEL_COLORS.get(level, FALLBACK_COLOR)


def level_marker(level: str) -> str:
    """The matplotlib marker of a level's kernels ('o', or 's' for shared memory)."""
    return LEVEL_MARKERS.get(level, DEFAULT_MARKER)


#: How charts write a work's traffic unit: the paper's "GTXN/s" (Ding & Williams, PMBS 2019) as
#: 'Gtxn/s', short enough for a ceiling label at 3.5 in.
TRAFFIC_UNIT_WORDS = {"B": "B", "transaction": "txn"}


@dataclass(frozen=True)
class AxisTexts:
    """Axis titles and the units of a work's chart: ``rate_unit`` for y ticks and compute labels,
    ``traffic_rate_unit`` for memory-ceiling labels ('B/s' or 'txn/s')."""

    x_label: str
    y_label: str
    rate_unit: str
    traffic_rate_unit: str
    intensity_unit: str


def axis_texts(work: Work = FLOPS) -> AxisTexts:
    """The axis titles and units of a chart of ``work`` (FLOPS, OPS or INSTRUCTIONS)."""
    traffic = TRAFFIC_UNIT_WORDS.get(work.traffic_unit, work.traffic_unit)
    if work.kind == "instructions":
        return AxisTexts("Instruction intensity (warp instructions per transaction)",
                         "Performance (warp instructions/s)", "inst/s", f"{traffic}/s", "inst/transaction")
    if work.kind == "ops":
        return AxisTexts("Operational intensity (OP/byte)", "Performance (OP/s)", "OP/s", f"{traffic}/s", "OP/B")
    return AxisTexts("Arithmetic intensity (FLOP/byte)", "Performance (FLOP/s)", "FLOP/s", f"{traffic}/s", "FLOP/B")


def level_label(level: str, labels: Mapping[str, str] | None = None) -> str:
    """Display name of a memory level; ``labels`` overrides (e.g. ``{"dram": "HBM"}``)."""
    if labels and level in labels:
        return labels[level]
    return LEVEL_LABELS.get(level, level.upper())


def vendor_labels(words: VendorWords, level_labels: Mapping[str, str] | None = None) -> dict[str, str]:
    """The levels' display names in the vendor's words (``analysis.words``: 'vL1D', 'LDS', 'HBM' on AMD),
    ``level_labels`` over them (NVIDIA's are :data:`LEVEL_LABELS`)."""
    return {**words.levels, **(level_labels or {})}


#: Display names of the compute keys that are not a precision.
COMPUTE_NAMES = {"int32": "INT32", "conversion": "Conversion", "sfu": "SFU", "warp_inst": "Warp instructions"}


def compute_label(key: str, words: VendorWords | None = None) -> str:
    """'fp64' -> 'FP64', 'tensor_fp16' -> 'Tensor FP16', 'tensor_int8' -> 'Tensor INT8', 'sfu' -> 'SFU';
    a variant key: 'fp64_scalar_fma' -> 'FP64 scalar FMA', 'fp64_no_fma' -> 'FP64 no-FMA'. In AMD's
    ``words``: 'tensor_fp16' -> 'Matrix FP16', 'tensor_tf32' -> 'Matrix XF32'."""
    variant = compute_variant(key)
    if variant:
        return f"{compute_label(base_compute_key(key), words)} {variant_words(variant)}"
    w = words or NVIDIA_WORDS
    if key.startswith("tensor_"):
        return f"{w.matrix} {w.precision(key[len('tensor_'):])}"
    return COMPUTE_NAMES.get(key, w.precision(key))


def bound_text(bound: str, words: VendorWords) -> str:
    """A row's ``bound`` (a level or compute key) as a view shows it: NVIDIA's keys as they are ('dram',
    'tensor_fp16'), AMD's in its words ('HBM+MALL (EA)', 'Matrix FP16'); other values as they are."""
    if not words.is_amd:
        return bound
    if bound in words.levels:
        return words.level(bound)
    base = base_compute_key(bound)
    return compute_label(bound, words) if base in COMPUTE_KEYS or base.startswith("tensor_") else bound


def compute_unit(key: str) -> str:
    """'FLOP/s', 'OP/s' or 'inst/s' (see :func:`roofline.machine.model.compute_unit`)."""
    return model_compute_unit(key)


def memory_ceiling_label(level: str | Sequence[str], bandwidth: float, labels: Mapping[str, str] | None = None,
                         unit: str = "B/s") -> str:
    """e.g. 'HBM 829 GB/s'; with ``unit='txn/s'`` (a transaction rate): 'L1 800 Gtxn/s'; levels of one
    ceiling: 'Shared, DRAM 100 Gtxn/s'."""
    levels = [level] if isinstance(level, str) else list(level)
    return f"{', '.join(level_label(lv, labels) for lv in levels)} {format_si(bandwidth, unit)}"


def compute_ceiling_label(key: str | Sequence[str], peak: float, words: VendorWords | None = None) -> str:
    """e.g. 'FP64 7.07 TFLOP/s'; several keys of one value: 'FP32, Tensor FP64 10.6 TFLOP/s'; FLOP and
    other operation ceilings of one value: 'FP32, INT32 25 TOP/s' (a FLOP is an operation); in AMD's
    ``words`` 'Matrix FP16 1.31 PFLOP/s'."""
    keys = [key] if isinstance(key, str) else list(key)
    units = {compute_unit(k) for k in keys}
    unit = units.pop() if len(units) == 1 else ("OP/s" if units <= {"FLOP/s", "OP/s"} else "FLOP/s")
    return f"{', '.join(compute_label(k, words) for k in keys)} {format_si(peak, unit)}"


#: Ceilings closer than this (relative) are one line with one label: 'FP32, Tensor FP64 10.6 TFLOP/s'.
EQUAL_PEAK_RTOL = 5e-3
#: Modes of the ``ceilings`` keyword of every chart.
CEILING_MODES = ("used", "all")


def used_compute_keys(frame: pd.DataFrame, work: Work = FLOPS) -> list[str]:
    """Machine compute keys of the work the rows do (a part column of ``work`` > 0): the precisions
    of their FLOPs; under OPS also int32, conversion, tensor_int8; under INSTRUCTIONS warp_inst.

    Tensor FLOPs name their ceiling from ``tensor_precision`` (``tensor_fp16`` when not
    known, as the analysis does). Unknown (NaN) counts use nothing.
    """
    keys: list[str] = []
    for col, key in work.parts:
        if col not in frame:
            continue
        used = frame[col].to_numpy(dtype=float) > 0
        if not used.any():
            continue
        if key == TENSOR:
            prec = frame["tensor_precision"].astype("string").str.lower()[used]
            keys += sorted({TENSOR_DEFAULT if pd.isna(p) else f"tensor_{p}" for p in prec})
        else:
            keys.append(key)
    return list(dict.fromkeys(keys))


def work_has_key(work: Work, key: str) -> bool:
    """True when a chart of ``work`` may draw the compute ceiling ``key``: :meth:`Work.uses_key`, and
    every FLOP ceiling on the FLOP and operation charts (BF16 has no FLOP column of its own, so no
    work part names it, but it is a FLOP/s ceiling all the same). A variant key (``fp64_scalar``, an ERT
    file's scalar ceiling) goes where its base key goes."""
    base = base_compute_key(key)
    return work.uses_key(base) or (work.kind in ("flops", "ops") and base in FLOP_KEYS)


def chart_compute_ceilings(machine: Machine | None, frame: pd.DataFrame, ceilings: str = "used",
                           work: Work = FLOPS) -> dict[str, float]:
    """The compute ceilings a chart of ``work`` draws, highest first: only those the work is held
    to (:meth:`Work.uses_key`: no INT32 or warp-instruction line on a FLOP chart).

    ``"used"``: the ceilings of the work the kernels in ``frame`` do, plus the machine's highest
    (FLOP/s under FLOPS) ceiling of the work (what the chart would be measured against);
    ``"all"``: every one of the work's, variant keys too (an ERT file's scalar, vector and no-FMA
    ceilings: ``fp64_scalar``, :func:`roofline.machine.model.compute_variant`).
    """
    if ceilings not in CEILING_MODES:
        raise ValueError(f"ceilings must be one of {', '.join(CEILING_MODES)}, not {ceilings!r}")
    if machine is None or not machine.compute:
        return {}
    comp = {k: v for k, v in machine.compute.items() if work_has_key(work, k)}
    if not comp:
        return {}
    if ceilings == "used":
        comp = {k: v for k, v in comp.items() if not compute_variant(k)} or comp
        top = {k: v for k, v in comp.items() if work.kind != "flops" or compute_unit(k) == "FLOP/s"} or comp
        keep = {k for k in used_compute_keys(frame, work) if k in comp} | {max(top, key=lambda k: top[k])}
        comp = {k: v for k, v in comp.items() if k in keep}
    return dict(sorted(comp.items(), key=lambda kv: -kv[1]))


def memory_ceilings(machine: Machine | None, levels: Sequence[str], work: Work = FLOPS) -> dict[str, float]:
    """Level -> the level's ceiling in the work's traffic per second (B/s, or transactions/s:
    :meth:`Work.level_ceiling`), for the ``levels`` the machine has one for."""
    out: dict[str, float] = {}
    for lv in levels:
        value = work.level_ceiling(machine, lv)
        if value is not None:
            out[lv] = value
    return out


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


def ceilings_caption(machine: Machine, keys: Iterable[str], level_labels: Mapping[str, str] | None = None,
                     words: VendorWords | None = None) -> str:
    """e.g. 'ceilings: V100 at 1.31 GHz; measured: L1, L2, DRAM, FP64; theoretical (datasheet): FP32'
    (compute ceilings in the vendor's ``words``: 'Matrix FP16' on AMD)."""
    by_source: dict[str, list[str]] = {}
    for key in keys:
        name = level_label(key, level_labels) if key in machine.memory else compute_label(key, words)
        by_source.setdefault(ceiling_source(machine, key), []).append(name)
    clk = f" at {format_si(machine.sm_clock_hz, 'Hz')}" if machine.sm_clock_hz else ""
    parts = [f"{SOURCE_WORDS.get(src, src)}: {', '.join(names)}" for src, names in by_source.items()]
    if len(by_source) == 1:
        return f"ceilings: {machine.name}{clk}, all {SOURCE_WORDS.get(next(iter(by_source)), '')}"
    return f"ceilings: {machine.name}{clk}; " + "; ".join(parts)


def chart_levels(analysis: Analysis, levels: Sequence[str] | None) -> list[str]:
    """The analysed levels to draw, innermost first; unknown names raise ValueError."""
    if levels is None:
        return list(analysis.levels)
    bad = [lv for lv in levels if lv not in analysis.levels]
    if bad:
        raise ValueError(f"levels not in the analysis: {', '.join(bad)} (analysed: {', '.join(analysis.levels)})")
    return [lv for lv in analysis.levels if lv in levels]

"""Hierarchical roofline maths over a kernel table: pure, vectorised, no I/O, no plotting.

For each kernel (row) and each memory level ``l`` the machine and the table both know:

* arithmetic intensity ``ai_l = flops / bytes_l`` (FLOP/B),
* attainable ``min(compute_peak, ai_l * BW_l)`` (FLOP/s),
* time at the roofline ``max(flops / compute_peak, bytes_l / BW_l over l)`` (s),
  whose largest term names the ``bound``.

``compute_peak`` is the FLOP-weighted harmonic mean of the peaks of the precisions
the kernel uses, i.e. the peak that would run its FLOP mix in the least time:
``flops / sum_p(flops_p / peak_p)``.

When the machine lacks a peak the kernel uses, that peak is unknown (:mod:`roofline.analysis.compute_peak`),
but a lower bound often decides the bound anyway: memory binds whenever ``max_l(bytes_l / BW_l)`` is at
least the longest the compute term can be, ``min(time, flops / peak_low)``, where
``peak_low`` is the harmonic mean of per-precision lower bounds (:data:`~roofline.analysis.compute_peak.PEAK_AT_LEAST`,
or the spec of the GPU the machine names) and ``time`` stands for the kernel's achieved
rate, a lower bound on its peak since it reached it. Then the bound, roofline time,
attainable, % of roofline, savable time and region are known; compute_peak and
compute_use stay unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.columns import COLUMNS, level_columns
from roofline.analysis.limits import INCONSISTENT, limit_reasons
from roofline.analysis.compute_peak import compute_peaks, spec_ceilings
from roofline.analysis.patterns import instruction_arrays
from roofline.analysis.result import UNKNOWN, Analysis
from roofline.analysis.work import Work, work_for
from roofline.kernels import GroupBy, KernelTable, aggregate_columns, by_name, frame_of, group_keys, strings, validate
from roofline.kernels.match_rate import match_rate
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords, vendor_and_arch, words_for
from roofline.machine.model import MEMORY_LEVELS, Machine, level_order
from roofline.units import counted, format_si

log = logging.getLogger(__name__)

#: Rows as columns: name -> float64 numpy array, or extension array (``aggregate_columns``).
Columns = Mapping[str, Any]

#: A kernel is "poor" (the paper's poor-performance region) when it uses less than this
#: fraction of its compute ceiling AND of every bandwidth ceiling: it is far below the
#: roofline on every axis, so neither more bandwidth nor more FLOP/s is what holds it
#: back (latency, occupancy, launch overhead, divergence...). Equivalent to
#: ``pct_of_roofline < POOR_USE``.
POOR_COMPUTE_USE = 0.5
POOR_BW_USE = 0.5

#: Cache-locality reading (Yang et al., "Hierarchical Roofline Analysis", sec. on data
#: locality): the gap between the intensities of two levels is the ratio of their
#: traffic, ``ai_outer / ai_inner = bytes_inner / bytes_outer``, i.e. how many times
#: each byte that came through the outer level was used at the inner one. Below this
#: factor the dots sit close together on the chart: data streams through with little
#: reuse. At or above it, the inner level is filtering at least half of the traffic.
LOCALITY_GAP = 2.0

def _byte_column(level: str) -> str:
    return f"{level}_bytes"


def analyze(table: KernelTable | pd.DataFrame, machine: Machine | None = None, *,
            by: GroupBy | str = "name", depth: int | None = None, work: str | Work = "flops") -> Analysis:
    """Hold every kernel of ``table`` to the ceilings of ``machine``.

    ``by``: ``"name"`` (one row per kernel name, launches summed), ``"phase"`` (per
    phase and name), ``"op"`` (per PyTorch operator and phase), ``"module"`` (per module path,
    phases summed), ``"launch"`` (no aggregation), or a tuple of key columns for a drill-down
    (``("module", "op", "phase", "kernel_name")``); grouped rows carry their label in
    ``kernel_name`` (:func:`roofline.kernels.aggregate`). ``depth``: module paths cut to this many
    components first (``DeepCamMini.enc1.0`` at 2 is ``DeepCamMini.enc1``; None: whole paths).
    The result's ``by`` is the view's name, or the drill-down's keys comma-joined. ``work``: what the roofline counts,
    ``"flops"`` (the default), ``"ops"`` (FLOPs and integer, conversion and integer tensor
    operations) or ``"instructions"`` (the instruction roofline: warp instructions against
    transactions per level; :mod:`roofline.analysis.work`). The machine is first scaled to
    the kernels' clock (time-weighted mean of ``sm_clock_hz``). Without a machine the
    intensities and achieved rates are filled and the ceiling columns are unknown.
    Returns an :class:`Analysis`; the input is not modified.
    """
    group_keys(by)  # a ValueError naming the choices before any work
    if depth is not None and depth < 1:
        raise ValueError("depth must be at least 1")
    spec = work_for(work)
    notes: list[str] = []
    hints: Mapping[str, str] = {}
    if isinstance(table, KernelTable):
        frame = table.frame
        hints = table.metric_hints
        notes.extend(table.warnings)
        if spec.kind != "flops":  # what the profile lacks for this work: unknown columns, lower bounds
            wanted = [c for c, _ in spec.parts] + list(spec.traffic.values())
            wanted += ["global_inst", "shared_inst"] if spec.kind == "instructions" else []
            notes.extend(n for c in dict.fromkeys(wanted) for n in table.column_notes.get(c, ()))
    else:
        frame = validate(table)

    phase_times = _phase_times(frame)
    vendor, arch = vendor_and_arch(frame)
    words = words_for(vendor, arch)
    kernel_clock = _capped_clock(frame, _mean_clock(frame), machine, notes, words)
    applied = _apply_clock(kernel_clock, machine, notes, words)
    rows = aggregate_columns(frame, by, depth, table=table if isinstance(table, KernelTable) else None)

    traffic = {lv: col for lv, col in spec.traffic.items() if col in rows}
    counted_levels = [lv for lv, col in traffic.items() if not np.isnan(rows[col]).all()]
    if applied is None:
        levels = level_order(counted_levels)
        notes.append("no machine given: intensities and achieved rates only, no ceilings, bound or region "
                     "(pass --machine: a file from `roofline machine -o machine.json`, or a GPU name from "
                     "`roofline machine --list-specs`)")
    else:
        ceiled = [lv for lv in applied.levels if spec.level_ceiling(applied, lv) is not None]
        levels = [lv for lv in ceiled if lv in counted_levels]
        skipped = [lv for lv in ceiled if lv not in levels]
        if skipped:
            what = "transaction" if spec.transaction_bytes else "byte"
            collect = [hints[traffic[lv]] for lv in skipped if lv in traffic and traffic[lv] in hints]
            notes.append(f"machine levels without {what} counts in the table, not analysed: {_named(skipped, words)}"
                         + (f" (collect {', '.join(collect)})" if collect else ""))
        unceiled = [lv for lv in counted_levels if lv not in ceiled]
        if unceiled:
            notes.append(f"the machine has no bandwidth ceiling for {_named(unceiled, words)}: not analysed")

    columns = {**rows, **_roofline_columns(rows, applied, levels, notes, kernel_clock, spec, hints, words),
               **instruction_arrays(rows, len(rows["time_s"]))}
    _mark_inconsistent(columns, applied, levels, kernel_clock, spec, notes, hints, words)
    out = frame_of(columns)
    return Analysis(frame=out, machine=applied, levels=tuple(levels), by=by_name(by), notes=tuple(notes),
                    phase_times=phase_times, work=spec.kind, depth=depth, metric_hints=hints,
                    vendor=vendor, arch=arch, match=match_rate(table) if isinstance(table, KernelTable) else None)


def _named(levels: list[str], words: VendorWords) -> str:
    """Levels in a note: NVIDIA's keys as they are ('l1, l2'), an AMD GPU's in its words ('vL1D, L2')."""
    return ", ".join(words.level(lv) if words.is_amd else lv for lv in levels)


def _mark_inconsistent(columns: dict[str, Any], machine: Machine | None, levels: list[str],
                       kernel_clock: float | None, work: Work, notes: list[str], hints: Mapping[str, str],
                       words: VendorWords = NVIDIA_WORDS) -> None:
    """Fill ``inconsistent`` (:mod:`roofline.analysis.limits`) and set those rows' region to 'inconsistent';
    ``hints``: what to collect (the table's :attr:`~roofline.kernels.KernelTable.metric_hints`); the reasons
    name ceilings in the vendor's ``words``."""
    n = len(columns["time_s"])
    spec_peak = None
    if machine is not None:
        spec = spec_ceilings(machine, kernel_clock)
        if spec is not None:
            spec_peak = compute_peaks(columns, spec, [], kernel_clock, work)[0]
    ceiling_of = {lv: c for lv in levels if (c := work.level_ceiling(machine, lv)) is not None} if machine else {}
    found = limit_reasons(columns, machine, levels, compute_peak=np.asarray(columns["compute_peak"], dtype=float),
                          compute_key=np.asarray(columns["compute_ceiling"].to_numpy(dtype=object, na_value=None)),
                          spec_peak=spec_peak, rate_unit=work.rate_unit, ceiling_of=ceiling_of, hints=hints,
                          words=words)
    flagged = np.array([r is not None for r in found.reasons], dtype=bool)
    columns["inconsistent"] = strings(found.reasons)
    for column, mask in (("region", found.rates), ("global_pattern", found.global_walls),
                         ("shared_pattern", found.shared_walls)):
        if mask.any():
            values = columns[column].to_numpy(dtype=object, na_value=None)
            values[mask] = INCONSISTENT
            columns[column] = strings(values)
    if flagged.any():
        t = np.asarray(columns["time_s"], dtype=float)
        share = np.nansum(np.where(flagged, t, 0.0)) / np.nansum(t) if np.nansum(t) > 0 else float("nan")
        notes.append(f"{counted(int(flagged.sum()), 'kernel')} ({share:.0%} of the time) "
                     f"{'has' if flagged.sum() == 1 else 'have'} figures beyond physical limits, shown as inconsistent "
                     "counters, not diagnosed (the 'inconsistent' column says why)")


def _phase_times(frame: pd.DataFrame) -> dict[str, float]:
    if not len(frame):
        return {}
    t = frame["time_s"].to_numpy(dtype=float)
    phase = frame["phase"].array
    if phase.isna().all():  # no NVTX ranges (most profiles): one phase, unknown
        known = ~np.isnan(t)
        return {UNKNOWN: float(np.bincount(np.zeros(len(t), dtype=np.intp), weights=np.where(known, t, 0.0))[0])} \
            if known.any() else {}
    codes, phases = pd.factorize(phase, use_na_sentinel=False)  # integer work: 1e6 launches
    known = ~np.isnan(t)
    sums = np.bincount(codes, weights=np.where(known, t, 0.0), minlength=len(phases))
    counted = np.bincount(codes, weights=known, minlength=len(phases))
    names = [UNKNOWN if pd.isna(p) else str(p) for p in phases]
    return {name: float(total) for name, total, c in sorted(zip(names, sums, counted)) if c > 0}


def _mean_clock(frame: pd.DataFrame) -> float | None:
    """The time-weighted mean SM clock of the launches (Hz), None when no launch has one."""
    t = frame["time_s"].to_numpy(dtype=float)
    clk = frame["sm_clock_hz"].to_numpy(dtype=float)
    ok = np.isfinite(t) & np.isfinite(clk) & (t > 0)
    if not ok.any():
        return None
    if not ok.all():  # (else the same sums, without copies)
        t, clk = t[ok], clk[ok]
    return float(np.sum(t * clk) / np.sum(t))


#: A launch's SM clock reads above the device's maximum when it exceeds it by more than this share
#: (ncu prints clocks to four or more digits).
CLOCK_SLACK = 0.005


def _capped_clock(frame: pd.DataFrame, mean_clock: float | None, machine: Machine | None,
                  notes: list[str], words: VendorWords = NVIDIA_WORDS) -> float | None:
    """The kernels' clock the ceilings are scaled to: the time-weighted mean of their SM clocks, each
    taken as at most the device's highest SM clock (:attr:`Machine.max_sm_clock_hz`); launches whose
    counters read a higher clock are named in a note. ncu's SM clock (its elapsed SM cycles per second) is
    the SM's elapsed cycles over the launch's duration, and the cycle counters run a little longer
    than the duration: on kernels of a few microseconds it reads up to 15 % high (an H100's DeepCAM
    step: 1.81-2.29 GHz at a 1.98 GHz maximum). The note names the clock in the vendor's ``words``."""
    highest = machine.max_sm_clock_hz if machine is not None else None
    if highest is None or mean_clock is None:
        return mean_clock
    clk = frame["sm_clock_hz"].to_numpy(dtype=float)
    above = np.isfinite(clk) & (clk > highest * (1 + CLOCK_SLACK))
    if not above.any():
        return min(mean_clock, highest)
    t = frame["time_s"].to_numpy(dtype=float)
    total = np.nansum(t)
    share = f" ({np.nansum(np.where(above, t, 0.0)) / total:.0%} of the time)" if total > 0 else ""
    capped = _mean_clock(frame.assign(sm_clock_hz=np.fmin(clk, highest)))
    why = "the counters' elapsed cycles" if words.is_amd else "ncu's elapsed cycles"
    now, was = format_si(capped, "Hz"), format_si(mean_clock, "Hz")
    mean = f"mean clock is {now}, not {was}" if now != was else f"mean clock is {now} (lower by less than shown)"
    notes.append(f"{counted(int(above.sum()), 'launch', 'launches')}{share} read an {words.clock} above the device's "
                 f"maximum {format_si(highest, 'Hz')} (up to {format_si(float(np.nanmax(clk[above])), 'Hz')}; "
                 f"{why} over a short duration overstate it): taken as the maximum, so the kernels' {mean}")
    return capped


def _apply_clock(mean_clock: float | None, machine: Machine | None, notes: list[str],
                 words: VendorWords = NVIDIA_WORDS) -> Machine | None:
    """The machine scaled to the time-weighted mean SM clock of the launches (the notes in the vendor's
    ``words``: an AMD GPU's engine clock and HBM)."""
    if machine is None:
        return None
    assumed = machine.metadata.get("clock_assumed")
    if isinstance(assumed, str) and assumed:
        notes.append(assumed)
    if mean_clock is None:
        notes.append(f"kernel clocks unknown: ceilings of {machine.name!r} used as given, not scaled")
        return machine
    if machine.sm_clock_hz is None:
        notes.append(f"machine {machine.name!r} records no {words.clock}: ceilings used as given, not scaled "
                     f"to the kernels' {format_si(mean_clock, 'Hz')}")
        return machine
    notes.append(f"ceilings scaled from {format_si(machine.sm_clock_hz, 'Hz')} to the kernels' "
                 f"time-weighted mean {words.clock} {format_si(mean_clock, 'Hz')} "
                 f"({words.level('dram')} bandwidth not scaled)")
    return machine.scaled_to_clock(mean_clock)


def _roofline_columns(frame: Columns, machine: Machine | None, levels: list[str],
                      notes: list[str], kernel_clock: float | None = None, work: Work | None = None,
                      hints: Mapping[str, str] | None = None, words: VendorWords = NVIDIA_WORDS) -> Columns:
    """The analysis columns (:func:`~roofline.analysis.columns.level_columns` of ``levels``, then
    :data:`~roofline.analysis.columns.COLUMNS`) of aggregated rows given as columns (float arrays
    and extension arrays, :func:`roofline.kernels.aggregate_columns`)."""
    spec = work if work is not None else work_for("flops")
    time = frame["time_s"]
    n = len(time)
    flops = frame[spec.total]  # the work: FLOPs, OPs or warp instructions
    zero = flops == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        flop_rate = flops / time

        lacking_note = ""
        lacking = np.zeros(n, dtype=bool)
        if machine is not None:
            peak, key, peak_low, lacking, lacking_note = compute_peaks(frame, machine, notes, kernel_clock, spec)
        else:
            peak, key, peak_low = np.full(n, np.nan), np.full(n, None, dtype=object), np.full(n, np.nan)
        # The compute term is 0 for kernels known to do no FLOPs, whatever the ceiling.
        t_compute = np.where(zero, 0.0, flops / peak)
        # The longest the compute term can be: flops / (a lower bound on the peak), and never
        # more than the kernel's own time (its achieved rate is at most its peak). NaN: unbounded.
        t_compute_max = np.where(np.isfinite(t_compute), t_compute, np.fmin(flops / peak_low, time))

        new: dict[str, object] = {}
        mem_terms = np.full((n, len(levels)), np.nan)
        for j, lv in enumerate(levels):
            column = spec.traffic_column(lv)
            nbytes = frame[column] if column is not None else np.full(n, np.nan)
            ai = flops / nbytes
            ai = np.where(zero & (nbytes >= 0), 0.0, ai)  # 0 FLOPs over any bytes is 0 FLOP/B
            bw = nbytes / time
            level_ceiling = spec.level_ceiling(machine, lv)
            ceiling = level_ceiling if level_ceiling is not None else np.nan
            roof_l = ai * ceiling
            # with the peak unknown, the level's roof is the attainable where it is below every possible peak
            below_any_peak = lacking & ~np.isfinite(peak) & (roof_l <= flops / t_compute_max)
            attainable_l = np.where(zero & np.isfinite(ai) & np.isfinite(ceiling), 0.0,
                                    np.where(below_any_peak, roof_l, np.minimum(peak, roof_l)))
            new[f"ai_{lv}"] = ai
            new[f"bw_{lv}"] = bw
            new[f"attainable_{lv}"] = attainable_l
            new[f"bw_use_{lv}"] = bw / ceiling
            mem_terms[:, j] = nbytes / ceiling

        any_mem = np.isfinite(mem_terms).any(axis=1)
        mem_max = np.nanmax(np.where(np.isfinite(mem_terms), mem_terms, -np.inf), axis=1, initial=-np.inf) \
            if len(levels) else np.full(n, -np.inf)
        # memory binds whatever the unknown peak is: its term is at least the longest compute term
        mem_decides = lacking & ~np.isfinite(t_compute) & any_mem & (mem_max >= t_compute_max)
        ok = (np.isfinite(t_compute) & any_mem) | mem_decides
        roof_time = np.where(ok, np.where(mem_decides, mem_max, np.maximum(t_compute, mem_max)), np.nan)
        if lacking_note:
            undecided = int((lacking & ~mem_decides).sum())
            decided = int((lacking & mem_decides).sum())
            notes.append(lacking_note + (
                f"; for {decided} of them a memory roof is below that bound, so memory binds whatever the peak "
                "(bound, roofline time, attainable, % of roofline, savable time and region known)" if decided else "") + (
                f"; {undecided} remain of unknown bound and region: give a machine with that ceiling "
                "(measured, or a GPU spec name as a second -m)" if undecided else ""))
        partial_mem = ok & ~np.isfinite(mem_terms).all(axis=1) if len(levels) else np.zeros(n, bool)
        if partial_mem.any():
            notes.append(f"byte counts missing at some level for {counted(int(partial_mem.sum()), 'kernel')}: "
                         "their roofline time is a lower bound")

        # bound: the largest term; memory levels innermost first, then compute
        terms = np.column_stack([np.where(np.isfinite(mem_terms), mem_terms, -np.inf),
                                 np.where(np.isfinite(t_compute), t_compute, -np.inf)]) \
            if n else np.zeros((0, len(levels) + 1))
        arg = np.argmax(terms, axis=1) if n else np.zeros(0, dtype=int)
        is_compute = arg == len(levels)
        names = np.array([*levels, None], dtype=object)[arg] if n else np.zeros(0, dtype=object)
        names[is_compute] = key[is_compute]
        names[~(ok & (roof_time > 0))] = None
        bound = names

        attain_stack = np.column_stack([np.asarray(new[f"attainable_{lv}"], dtype=float) for lv in levels]) if levels else np.full((n, 1), np.nan)
        attainable = np.where(np.isfinite(attain_stack).any(axis=1),
                              np.nanmin(np.where(np.isfinite(attain_stack), attain_stack, np.inf), axis=1), np.nan) \
            if n else np.zeros(0)
        compute_use = np.where(zero & np.isfinite(time) & (machine is not None), 0.0, flop_rate / peak)
        bw_stack = np.column_stack([np.asarray(new[f"bw_use_{lv}"], dtype=float) for lv in levels]) if levels else np.full((n, 1), np.nan)
        bw_use = np.where(np.isfinite(bw_stack).any(axis=1),
                          np.nanmax(np.where(np.isfinite(bw_stack), bw_stack, -np.inf), axis=1), np.nan) \
            if n else np.zeros(0)
        pct = roof_time / time
        savable = np.maximum(0.0, time - roof_time)

        # where memory decides, compute_use < bw_use, so 'poor' is bw_use < POOR_BW_USE alone
        known_region = pd.notna(bound) & np.isfinite(time) & np.isfinite(bw_use) & (np.isfinite(compute_use) | mem_decides)
        compute_use_or_less = np.where(mem_decides & ~np.isfinite(compute_use), bw_use, compute_use)
        poor = (compute_use_or_less < POOR_COMPUTE_USE) & (bw_use < POOR_BW_USE)
        region_code = np.where(~known_region, 0, np.where(poor, 1, np.where(is_compute, 2, 3)))
        region = np.array(["unknown", "poor", "compute-bound", "memory-bound"], dtype=object)[region_code]
        total = float(np.nansum(time))
        time_share = time / total if total > 0 else np.full(n, np.nan)

    new.update({
        "flop_rate": flop_rate,
        "compute_ceiling": strings(key),
        "compute_peak": peak,
        "attainable": attainable,
        "roofline_time_s": roof_time,
        "pct_of_roofline": pct,
        "savable_time_s": savable,
        "bound": strings(bound),
        "region": strings(region),
        "compute_use": compute_use,
        "bw_use": bw_use,
        "locality": strings(_locality(frame, levels)),
        "time_share": time_share,
        "inconsistent": strings(np.full(n, None, dtype=object)),  # filled by _mark_inconsistent
    })
    _flag_notes(frame, notes, spec, hints or {}, words)
    return {c.name: np.asarray(new[c.name], dtype=np.float64) if c.dtype == "float64" else new[c.name]
            for c in (*level_columns(levels), *COLUMNS)}


def _locality(frame: Columns, levels: list[str]) -> np.ndarray:
    """'streaming', 'l1-reuse', 'l2-reuse', 'l1-l2-reuse' or None, from byte ratios between levels."""
    n = len(frame["time_s"])
    if not {"l1", "l2", "dram"} <= set(levels):
        return np.full(n, None, dtype=object)
    b1, b2, bd = (frame[_byte_column(lv)] for lv in ("l1", "l2", "dram"))
    with np.errstate(divide="ignore", invalid="ignore"):
        gap_l1 = b1 / b2   # = ai_l2 / ai_l1: uses in L1 per byte through L2
        gap_l2 = b2 / bd   # = ai_dram / ai_l2: uses in L2 per byte from DRAM
    known = ~np.isnan(gap_l1) & ~np.isnan(gap_l2)
    r1 = gap_l1 >= LOCALITY_GAP
    r2 = gap_l2 >= LOCALITY_GAP
    code = np.where(~known, 4, r1.astype(np.int8) + 2 * r2.astype(np.int8))
    return np.array(["streaming", "l1-reuse", "l2-reuse", "l1-l2-reuse", None], dtype=object)[code]


def nothing_recorded(frame: Columns, work: Work) -> np.ndarray:
    """Rows with no time, no work and no traffic at any level: nothing was recorded for them (ncu's
    profiling of the launch failed or was cut short; the reader's note says so), so collecting more
    metrics, the advice for uncounted work, would not help."""
    blank = np.isnan(np.asarray(frame["time_s"], dtype=float)) & np.isnan(np.asarray(frame[work.total], dtype=float))
    for column in work.traffic.values():
        if column in frame:
            blank &= np.isnan(np.asarray(frame[column], dtype=float))
    return blank


def _flag_notes(frame: Columns, notes: list[str], work: Work, hints: Mapping[str, str],
                words: VendorWords = NVIDIA_WORDS) -> None:
    what = {"flops": "FLOP", "ops": "operation", "instructions": "instruction"}[work.kind]
    if work.partial:
        partial = frame[work.partial].to_numpy(dtype=bool, na_value=False)
        if partial.any():
            packed = " (or packed instructions count once)" if words.is_amd else ""
            notes.append(f"a{'n' if what[0] in 'aeiou' else ''} {what} component is missing{packed} for "
                         f"{counted(int(partial.sum()), 'kernel')} ({work.partial}): "
                         f"their {work.unit}s, intensities and {work.rate_unit} are lower bounds")
    estimated = frame["estimated"].to_numpy(dtype=bool, na_value=False)
    if estimated.any():
        notes.append(f"estimated counts, not hardware counters, for {counted(int(estimated.sum()), 'kernel')}")
    blank = nothing_recorded(frame, work)
    unknown = np.isnan(frame[work.total]) & ~blank
    if unknown.any():
        collect = f" (collect {hints[work.total]})" if work.total in hints else ""
        notes.append(f"no {what} counts for {counted(int(unknown.sum()), 'kernel')}{collect}")
    if blank.any():
        notes.append(f"nothing recorded for {counted(int(blank.sum()), 'kernel')} (no time, {what}s or traffic): "
                     "profile again what the profile's note names")

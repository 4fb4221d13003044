"""The projection itself: both analyses, the roofline times here and there, the range, the result."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from roofline.analysis.roofline import analyze
from roofline.errors import InputError
from roofline.analysis.result import Analysis
from roofline.kernels import KernelTable, validate
from roofline.kernels.vendor import VendorWords, machine_vendor, table_words, words_for
from roofline.machine.model import Machine
from roofline.projection.machines import l2_size, memory_roof, roof, substituted, used_keys, with_levels
from roofline.projection.notes import Terms, judge, l2_capacity
from roofline.projection.model import Projection
from roofline.units import format_si


def _in_target_words(analysis: Analysis, target: Machine) -> Analysis:
    """The kernels on the target named in the target's vendor's words (an AMD profile projected onto an
    NVIDIA GPU speaks NVIDIA's, and back), where the target machine tells its vendor
    (:func:`roofline.kernels.vendor.machine_vendor`); else the source's, as the table's."""
    vendor, arch = machine_vendor(target.name, target.metadata)
    if vendor is None or (vendor == analysis.vendor and arch in (None, analysis.arch)):
        return analysis
    return dataclasses.replace(analysis, vendor=vendor, arch=arch)


def project(table: KernelTable, target: Machine, source: Machine, *, by: str = "name",
            target_clock_hz: float | None = None, source_l2_bytes: float | None = None) -> Projection:
    """Project the kernels of ``table`` (measured on ``source``) onto ``target``.

    ``by``: ``"name"`` or ``"phase"`` (per phase and name; the totals then come per phase too).
    ``target_clock_hz``: the SM clock the target runs at (default: the target machine's own).
    ``source_l2_bytes``: the source's L2 size as the profile's device attributes record it (else the
    source machine's). Returns a :class:`Projection`; raises :class:`InputError` when nothing can be
    projected.
    """
    if by not in ("name", "phase"):
        raise ValueError("a projection is by 'name' or by 'phase'")
    notes: list[str] = []
    here: VendorWords = table_words(table.frame if isinstance(table, KernelTable) else table)
    vendor, arch = machine_vendor(target.name, target.metadata)
    there = words_for(vendor, arch) if vendor is not None else here
    if target_clock_hz is not None:
        if target.sm_clock_hz is None:
            notes.append(f"the target {target.name!r} records no {there.clock}: its ceilings used as given, not at "
                         f"{format_si(target_clock_hz, 'Hz')}")
        else:
            target = target.scaled_to_clock(target_clock_hz)
    src_analysis = analyze(table, source, by=by)
    levels = [lv for lv in src_analysis.levels if lv in target.memory]
    dropped = [lv for lv in src_analysis.levels if lv not in target.memory]
    if dropped:  # the same levels on both sides, so that the fraction of the roofline means the same
        names = (there.level(lv) if there.is_amd else lv.upper() for lv in dropped)
        notes.append(f"no {', '.join(names)} ceiling on the target {target.name!r}: that level "
                     "left out of both rooflines (its time there is not bounded by it)")
        src_analysis = analyze(table, with_levels(source, levels), by=by)
    src_applied = src_analysis.machine
    assert src_applied is not None
    lv_t = tuple(levels)
    frame = validate(src_analysis.frame)
    tgt_machine, subs = substituted(with_levels(target, levels), used_keys(frame))
    capacity = l2_capacity(frame, source_l2_bytes or l2_size(source), l2_size(target), levels, notes)

    tframe = frame.copy()
    tframe["sm_clock_hz"] = np.nan  # the target at its own clock
    tframe["dram_bytes"] = np.where(capacity.smaller, np.fmax(capacity.dram, capacity.l2), capacity.dram)
    opt = tframe.copy()
    opt["dram_bytes"] = np.where(capacity.larger, 0.0, capacity.dram)
    tgt_analysis = _in_target_words(analyze(tframe, tgt_machine, by="launch"), target)
    tgt_opt = _in_target_words(analyze(opt, tgt_machine, by="launch"), target) \
        if (capacity.smaller.any() or capacity.larger.any()) else tgt_analysis
    for a in (tgt_analysis, tgt_opt):  # same order as the source rows (stable sort on the same times)
        if not a.frame["kernel_name"].equals(frame["kernel_name"]):
            raise AssertionError("projection rows out of order")
    notes.extend(n for n in tgt_analysis.notes if not n.startswith("kernel clocks unknown"))
    clock = tgt_machine.sm_clock_hz
    notes.insert(0, f"the target {target.name!r} at {format_si(clock, 'Hz') if clock else 'its stated'} {there.clock}; "
                    f"the source {source.name!r} at the kernels' own clock")

    roof_src, mem_only_src = roof(src_analysis)
    roof_tgt, mem_only_tgt = roof(tgt_analysis)
    time = frame["time_s"].to_numpy(dtype=float)
    # the time above the roofline (latency, issue, stalls) counted in SM cycles: it keeps its cycles
    # on the target, so its seconds scale with the ratio of the clocks (1 where a clock is unknown)
    cycles = frame["sm_clock_hz"].to_numpy(dtype=float) / (clock or np.nan)
    cycles = np.where(np.isfinite(cycles) & (cycles > 0), cycles, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        projected = time * roof_tgt / roof_src
        fixed = roof_tgt + np.maximum(time - roof_src, 0.0) * cycles
    terms = Terms(time=time, launches=frame["launches"].to_numpy(dtype=float), roof_src=roof_src, roof_tgt=roof_tgt,
                  roof_opt=roof(tgt_opt)[0], mem_src=memory_roof(src_analysis.frame, src_applied, src_analysis.levels),
                  mem_tgt=memory_roof(tgt_analysis.frame, tgt_analysis.machine, tgt_analysis.levels),
                  mem_only_src=mem_only_src, mem_only_tgt=mem_only_tgt, projected=projected,
                  low=np.fmin(roof_tgt, projected), high=np.fmax(projected, fixed))
    v = judge(frame, src_analysis.frame, tgt_analysis.frame, terms, capacity, subs, src_applied, tgt_machine, lv_t,
              src_analysis.metric_hints)

    ok = np.array([w is None for w in v.why], dtype=bool)
    projected = np.where(ok, terms.projected, np.nan)
    low, high = terms.low, terms.high
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame({
            **{k: frame[k] for k in (["phase", "kernel_name"] if by == "phase" else ["kernel_name"])},
            "launches": frame["launches"],
            "time_s": time, "roofline_time_s": roof_src, "pct_of_roofline": roof_src / time,
            "bound": src_analysis.frame["bound"].to_numpy(), "best_time_s": np.where(ok, roof_tgt, np.nan),
            "projected_time_s": projected, "low_time_s": np.where(v.ranged, low, np.nan),
            "high_time_s": np.where(v.ranged, high, np.nan), "bound_target": tgt_analysis.frame["bound"].to_numpy(),
            "speedup": time / projected, "speedup_low": np.where(ok, time / high, np.nan),
            "speedup_high": np.where(ok, time / low, np.nan),
            "gain_s": time - projected, "projected": ok, "why": v.why,
            "notes": [tuple(dict.fromkeys(c)) for c in v.codes], "note_text": ["; ".join(t) for t in v.texts],
            "note_list": [tuple(zip(c, t)) for c, t in zip(v.codes, v.texts)],
        })
    if not ok.any():
        reasons = ", ".join(sorted({str(w) for w in v.why if w}))
        raise InputError(f"no kernel could be projected ({reasons})",
                         hint="the profile needs times and FLOP or byte counts (ncu --set full, or roofline profile)")
    if not ok.all():
        share = np.nansum(time[~ok]) / np.nansum(time) if np.nansum(time) > 0 else math.nan
        notes.append(f"{int((~ok).sum())} kernel(s), {share:.1%} of the time, not projected (see the unprojected list)")
    if subs:
        notes.append("held to substitute ceilings on the target: " + ", ".join(f"{k} -> {s}" for k, s in subs.items()))

    # the kernels at their projected times, on the target's roofline (for the charts)
    shown = tgt_analysis.frame.copy()
    shown["time_s"] = projected
    with np.errstate(divide="ignore", invalid="ignore"):
        shown["flop_rate"] = shown["flops"].to_numpy(dtype=float) / projected
        shown["pct_of_roofline"] = roof_tgt / projected
    shown["savable_time_s"] = np.maximum(projected - roof_tgt, 0.0)
    target_view = dataclasses.replace(tgt_analysis, frame=shown, by=src_analysis.by, machine=tgt_machine)
    order = np.argsort(-np.where(ok, out["gain_s"].to_numpy(dtype=float), -np.inf), kind="stable")
    return Projection(frame=out.iloc[order].reset_index(drop=True), source=src_applied, target=tgt_machine,
                      keys=tuple(k for k in ("phase", "kernel_name") if k in out.columns), levels=lv_t,
                      source_analysis=src_analysis, target_analysis=target_view, notes=tuple(dict.fromkeys(notes)))

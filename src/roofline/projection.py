"""Roofline projection: the kernels of a profile measured on one machine, on another machine's ceilings.

A kernel's FLOPs per precision and bytes per level, measured once, bound its time on any machine
whose ceilings we know. For each kernel (row of an analysis by name, or by phase and name):

* ``best_time_s``: its roofline time on the target, ``max(FLOPs_p / peak_p, bytes_l / BW_l)``: the
  best case, at 100% of the target's roofline;
* ``projected_time_s``: the time if it keeps the fraction of its roofline it reaches today,
  ``time_s x best_time_s / roofline_time_s`` (the default projection);
* ``low_time_s`` .. ``high_time_s``: the range. Its low end is the best case; its high end the larger
  of the projection and the time if the part of today's time above the roofline (latency, launch,
  stalls) keeps its SM cycles (``best + (time - roofline) x clock here / clock there``); then widened
  by each kernel's notes.

What the model cannot know is said, as a note on the kernel (:data:`NOTE_CODES`), and widens its
range: a limiter that changes (high end: the new limiter at today's use of it), precisions the
target lacks (held to a substitute ceiling, :data:`SUBSTITUTES`, or left unbounded), launches too
short for the roofline to matter (the range takes in today's time), L2 capacities that differ (a
working set that reuses the L2 here and may not fit the target's: its L2 bytes charged to DRAM
there, as a stated assumption; one that may newly fit: DRAM traffic may fall), and unknown FLOP
components (high end: today's time x the largest ratio of the two machines' ceilings it could use).

Both rooflines use the memory levels that both machines have ceilings for, so that the fraction of
the roofline means the same on both sides. The source machine is scaled to the kernels' clock (as in
every analysis); the target is taken at its own clock, or at ``target_clock_hz``.
Pure: no I/O, no plotting; views take a :class:`Projection`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.result import UNKNOWN, Analysis
from roofline.analysis.roofline import LOCALITY_GAP, analyze
from roofline.errors import InputError
from roofline.kernels import KernelTable, validate
from roofline.machine.model import FLOP_KEYS, Machine
from roofline.units import format_si, format_time

SCHEMA = "roofline.projection/1"

#: Launches shorter than this (mean per launch) are set by launch overhead and latency more than by
#: any roofline: a kernel launch costs a few microseconds on every CUDA GPU.
SHORT_LAUNCH_S = 5e-6

#: A kernel reuses the L2 when at least this many bytes pass through L2 per byte from DRAM (the
#: analysis' locality gap).
L2_REUSE = LOCALITY_GAP

#: Compute key the target lacks -> (the key its FLOPs are held to instead, factor on the bytes at the
#: high end of the range, why). FP8 GEMMs run in FP16 where there are no FP8 tensor cores (Ampere and
#: older), moving twice the bytes; BF16 in FP16 (Volta, Turing); TF32 on the FP32 units (Volta, Turing).
SUBSTITUTES: Mapping[str, tuple[str, float, str]] = {
    "tensor_fp8": ("tensor_fp16", 2.0, "FP8 data in FP16 move twice the bytes"),
    "tensor_bf16": ("tensor_fp16", 1.0, "same data size"),
    "tensor_tf32": ("fp32", 1.0, "TF32 GEMMs on the FP32 units"),
    "bf16": ("fp32", 1.0, "BF16 arithmetic in FP32"),
}

#: Per-kernel notes: code -> what it means (the text on each kernel says the figures).
NOTE_CODES: Mapping[str, str] = {
    "limiter-change": "the limiter changes between the machines (memory-bound here, compute-bound there, or across "
                      "levels); high end: the new limiter at the share of it the kernel uses today",
    "precision-substituted": "the target lacks a compute ceiling the kernel uses; its FLOPs held to a substitute",
    "precision-unknown": "the target has no ceiling for a precision the kernel uses: its time there is unbounded "
                         "above unless memory binds whatever that peak is",
    "short-launch": "launches too short for the roofline to matter (launch overhead, latency): the range takes in "
                    "today's time",
    "l2-smaller": "a working set that reuses the L2 here may not fit the target's smaller L2: its L2 bytes charged "
                  "to DRAM there (assumption); low end: today's DRAM bytes",
    "l2-larger": "a working set larger than the L2 here fits the target's: DRAM traffic may fall; low end: no DRAM term",
    "unknown-flops": "a FLOP component was not counted: high end at today's time x the largest ratio of the "
                     "ceilings that component could use",
    "above-roofline": "faster than the roofline here: the source ceilings are too low; the projection keeps the ratio",
}


@dataclass(frozen=True)
class Projection:
    """Kernels measured on ``source``, projected onto ``target``.

    ``frame``: one row per kernel (per phase and kernel when ``keys`` has ``phase``), longest projected
    gain first: the keys, ``launches``, ``time_s`` (measured), ``roofline_time_s`` and
    ``pct_of_roofline`` (here), ``bound``, ``best_time_s``, ``projected_time_s``, ``low_time_s``,
    ``high_time_s`` (inf: unbounded), ``bound_target``, ``speedup`` (time / projected),
    ``speedup_low`` (time / high), ``speedup_high`` (time / low), ``gain_s`` (time - projected),
    ``projected`` (False: no projection, see ``why``; a kernel whose precision the target lacks keeps
    its range: at least the memory roof there, unbounded above), ``notes`` (tuple of codes,
    :data:`NOTE_CODES`), ``note_list`` (tuple of (code, sentence with the kernel's figures), in the order
    raised) and ``note_text`` (the sentences, '; '-joined). ``source_analysis``: the analysis against the
    source machine; ``target_analysis``: the kernels on the target at their projected times (for the
    charts: ``compare(source_analysis, target_analysis)``). ``notes``: sentences about the whole
    projection (assumptions, clocks, levels left out).
    """

    frame: pd.DataFrame
    source: Machine
    target: Machine
    keys: tuple[str, ...]
    levels: tuple[str, ...]
    source_analysis: Analysis
    target_analysis: Analysis
    notes: tuple[str, ...] = ()

    @property
    def totals(self) -> dict[str, float]:
        """The program: sums over the projected kernels, speed-up and its range, and coverage."""
        return _totals(self.frame, float(np.nansum(self.frame["time_s"].to_numpy(dtype=float))))

    def phase_totals(self) -> pd.DataFrame:
        """One row per phase (``unknown`` for kernels outside any) with :attr:`totals`' columns; empty
        when the projection is not by phase."""
        if "phase" not in self.keys:
            return pd.DataFrame(columns=["phase", *TOTAL_KEYS])
        phase = self.frame["phase"].astype("string").fillna(UNKNOWN)
        rows = [{"phase": p, **_totals(self.frame[phase == p], float(np.nansum(self.frame.loc[phase == p, "time_s"])))}
                for p in phase.unique()]
        return pd.DataFrame(rows).sort_values("time_s", ascending=False, kind="stable").reset_index(drop=True)

    def unprojected(self) -> pd.DataFrame:
        """The kernels that could not be projected, with why."""
        return self.frame.loc[~self.frame["projected"], [*self.keys, "time_s", "why"]]


TOTAL_KEYS = ("time_s", "projected_time_s", "best_time_s", "low_time_s", "high_time_s", "speedup", "speedup_low",
              "speedup_high", "coverage", "kernels", "unprojected")


def _totals(frame: pd.DataFrame, all_time: float) -> dict[str, float]:
    ok = frame["projected"].to_numpy(dtype=bool)
    f = frame[ok]
    t = float(f["time_s"].sum())
    sums = {c: float(f[c].sum()) for c in ("projected_time_s", "best_time_s", "low_time_s", "high_time_s")}
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "time_s": t, **sums,
            "speedup": t / sums["projected_time_s"] if sums["projected_time_s"] > 0 else math.nan,
            "speedup_low": t / sums["high_time_s"] if sums["high_time_s"] > 0 else math.nan,
            "speedup_high": t / sums["low_time_s"] if sums["low_time_s"] > 0 else math.inf,
            "coverage": t / all_time if all_time > 0 else math.nan,
            "kernels": int(ok.sum()), "unprojected": int((~ok).sum()),
        }


# -- machines -------------------------------------------------------------------------------------
def l2_size(machine: Machine | None) -> float | None:
    """The L2 capacity (B) a machine records: ``metadata['l2_bytes']``, a measured GPU's sweep cache
    sizes, or the spec of the GPU it names; None when unknown."""
    if machine is None:
        return None
    meta = machine.metadata
    for value in (meta.get("l2_bytes"), (meta.get("sweep_cache_sizes") or {}).get("l2"),
                  (meta.get("cache_sizes") or {}).get("l2")):
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    from roofline.machine.gpu_specs import spec_for_device_name

    for name in (meta.get("gpu"), machine.name):
        spec = spec_for_device_name(name) if isinstance(name, str) and name else None
        if spec is not None and spec.l2_bytes:
            return float(spec.l2_bytes)
    return None


def profile_l2_bytes(table: KernelTable) -> float | None:
    """The L2 size the profile's device attributes record (``device__attribute_l2_cache_size``)."""
    m = table.metrics
    col = "device__attribute_l2_cache_size"
    if m is None or col not in m.columns:
        return None
    values = pd.to_numeric(m[col], errors="coerce").dropna()
    return float(values.median()) if len(values) else None


def _bytes(value: float | None) -> str:
    return format_si(value, "B")


def _with_levels(machine: Machine, levels: list[str]) -> Machine:
    memory = {lv: machine.memory[lv] for lv in levels if lv in machine.memory}
    sources = {k: v for k, v in machine.sources.items() if not k.startswith("memory.") or k[7:] in memory}
    return dataclasses.replace(machine, memory=memory, sources=sources)


def _substituted(target: Machine, used: set[str]) -> tuple[Machine, dict[str, str]]:
    """The target with a substitute ceiling for each used key it lacks (:data:`SUBSTITUTES`)."""
    added: dict[str, float] = {}
    subs: dict[str, str] = {}
    for key in sorted(used):
        if key in target.compute or key not in SUBSTITUTES:
            continue
        sub = SUBSTITUTES[key][0]
        if sub in target.compute:
            added[key], subs[key] = target.compute[sub], sub
    if not added:
        return target, subs
    return dataclasses.replace(target, compute={**target.compute, **added}), subs


# -- per-kernel terms ------------------------------------------------------------------------------
def _memory_roof(frame: pd.DataFrame, machine: Machine | None, levels: tuple[str, ...]) -> np.ndarray:
    """max over levels of bytes / bandwidth (NaN where no level has bytes)."""
    n = len(frame)
    if machine is None or not levels:
        return np.full(n, np.nan)
    terms = np.column_stack([frame[f"{lv}_bytes"].to_numpy(dtype=float) / machine.memory[lv] for lv in levels])
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(terms).any(axis=1), np.nanmax(np.where(np.isfinite(terms), terms, -np.inf), axis=1),
                        np.nan)


def _roof(analysis: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """Roofline time per row, and whether it rests on the memory terms alone (no FLOP counts)."""
    roof = analysis.frame["roofline_time_s"].to_numpy(dtype=float)
    mem = _memory_roof(analysis.frame, analysis.machine, analysis.levels)
    no_flops = ~np.isfinite(analysis.frame["flops"].to_numpy(dtype=float))
    memory_only = ~np.isfinite(roof) & no_flops & np.isfinite(mem)
    return np.where(memory_only, mem, roof), memory_only


def _used_keys(frame: pd.DataFrame) -> set[str]:
    keys = {k for col, k in (("fp64_flops", "fp64"), ("fp32_flops", "fp32"), ("fp16_flops", "fp16"))
            if (frame[col].fillna(0) > 0).any()}
    tensor = frame.loc[frame["tensor_flops"].fillna(0) > 0, "tensor_precision"].astype("string").str.lower()
    keys |= {f"tensor_{p}" for p in tensor.dropna().unique()}
    if tensor.isna().any():
        keys.add("tensor_fp16")
    return keys


def _unknown_flop_keys(row: pd.Series) -> list[str]:
    """Compute keys the uncounted FLOPs of a row could run on (from which FLOP columns are NaN)."""
    keys: list[str] = []
    if pd.isna(row["fp64_flops"]):
        keys += ["fp64", "tensor_fp64"]
    if pd.isna(row["fp32_flops"]):
        keys += ["fp32"]
    if pd.isna(row["fp16_flops"]):
        keys += ["fp16", "bf16"]
    if pd.isna(row["tensor_flops"]):
        keys += ["tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8"]
    return keys


#: FLOP column -> the ncu counters that count it (named when it was not collected).
FLOP_COUNTERS = {
    "fp64_flops": "sm__sass_thread_inst_executed_op_d{add,mul,fma}_pred_on.sum",
    "fp32_flops": "sm__sass_thread_inst_executed_op_f{add,mul,fma}_pred_on.sum",
    "fp16_flops": "sm__sass_thread_inst_executed_op_h{add,mul,fma}_pred_on.sum",
    "tensor_flops": "sm__inst_executed_pipe_tensor.sum (Hopper: sm__ops_path_tensor_src_*)",
}


def _kind(bound: Any, levels: tuple[str, ...]) -> str | None:
    if bound is None or bound is pd.NA or (isinstance(bound, float) and math.isnan(bound)):
        return None
    return "memory" if str(bound) in levels else "compute"


def project(table: KernelTable, target: Machine, source: Machine, *, by: str = "name",
            target_clock_hz: float | None = None, source_l2_bytes: float | None = None) -> Projection:
    """Project the kernels of ``table`` (measured on ``source``) onto ``target``.

    ``by``: ``"name"`` or ``"phase"`` (per phase and name; the totals then come per phase too).
    ``target_clock_hz``: the SM clock the target runs at (default: the target machine's own).
    ``source_l2_bytes``: the source's L2 size when the machine does not record it (the profile's
    device attributes). Returns a :class:`Projection`; raises :class:`InputError` when nothing can be
    projected.
    """
    if by not in ("name", "phase"):
        raise ValueError("a projection is by 'name' or by 'phase'")
    notes: list[str] = []
    src_analysis = analyze(table, source, by=by)
    src_applied = src_analysis.machine
    if target_clock_hz is not None:
        if target.sm_clock_hz is None:
            notes.append(f"the target {target.name!r} records no SM clock: its ceilings used as given, not at "
                         f"{format_si(target_clock_hz, 'Hz')}")
        else:
            target = target.scaled_to_clock(target_clock_hz)
    levels = [lv for lv in src_analysis.levels if lv in target.memory]
    dropped = [lv for lv in src_analysis.levels if lv not in target.memory]
    if dropped:
        notes.append(f"no {', '.join(lv.upper() for lv in dropped)} ceiling on the target {target.name!r}: that level "
                     "left out of both rooflines (its time there is not bounded by it)")
    if dropped:
        src_analysis = analyze(table, _with_levels(source, levels), by=by)
        src_applied = src_analysis.machine
    lv_t = tuple(levels)
    frame = validate(src_analysis.frame)
    used = _used_keys(frame)
    tgt_machine, subs = _substituted(_with_levels(target, levels), used)

    # L2 capacity: reuse here that may not fit there, or a working set that may newly fit
    l2_src = l2_size(source) or source_l2_bytes
    l2_tgt = l2_size(target)
    launches = frame["launches"].to_numpy(dtype=float)
    dram = frame["dram_bytes"].to_numpy(dtype=float)
    l2b = frame["l2_bytes"].to_numpy(dtype=float)
    working = dram / np.where(launches > 0, launches, np.nan)  # bytes from DRAM per launch: the footprint
    smaller = np.zeros(len(frame), bool)
    larger = np.zeros(len(frame), bool)
    if l2_src and l2_tgt and "dram" in levels:
        with np.errstate(invalid="ignore"):
            if l2_tgt < l2_src:
                smaller = (l2b >= L2_REUSE * dram) & (working > l2_tgt)
            elif l2_tgt > l2_src:
                larger = (working > l2_src) & (working <= l2_tgt)
    elif "dram" in levels:
        missing = [w for w, v in (("here", l2_src), ("on the target", l2_tgt)) if not v]
        notes.append(f"L2 size unknown {' and '.join(missing)}: cache-capacity effects not assessed")
    if l2_src and l2_tgt and l2_src != l2_tgt:
        notes.append(f"L2 {_bytes(l2_src)} here, {_bytes(l2_tgt)} on the target: a kernel's DRAM bytes "
                     "per launch stand for its working set")
    if smaller.any():
        notes.append(f"assumption: the L2 bytes of {int(smaller.sum())} kernel(s) that reuse the L2 here with a "
                     f"working set over the target's {_bytes(l2_tgt)} L2 are charged to DRAM on the target")

    tframe = frame.copy()
    tframe["sm_clock_hz"] = np.nan  # the target at its own clock
    charged = np.where(smaller, np.fmax(dram, l2b), dram)
    tframe["dram_bytes"] = charged
    opt = tframe.copy()
    opt["dram_bytes"] = np.where(larger, 0.0, dram)
    tgt_analysis = analyze(tframe, tgt_machine, by="launch")
    tgt_opt = analyze(opt, tgt_machine, by="launch") if (smaller.any() or larger.any()) else tgt_analysis
    for a in (tgt_analysis, tgt_opt):  # same order as the source rows (stable sort on the same times)
        if not a.frame["kernel_name"].equals(frame["kernel_name"]):
            raise AssertionError("projection rows out of order")
    notes.extend(n for n in tgt_analysis.notes if not n.startswith("kernel clocks unknown"))
    clock = tgt_machine.sm_clock_hz
    notes.insert(0, f"the target {target.name!r} at {format_si(clock, 'Hz') if clock else 'its stated'} SM clock; "
                    f"the source {source.name!r} at the kernels' own clock")

    roof_src, mem_only_src = _roof(src_analysis)
    roof_tgt, mem_only_tgt = _roof(tgt_analysis)
    roof_opt, _ = _roof(tgt_opt)
    time = frame["time_s"].to_numpy(dtype=float)
    # the time above the roofline (latency, issue, stalls) counted in SM cycles: it keeps its cycles
    # on the target, so its seconds scale with the ratio of the clocks (1 where a clock is unknown)
    cycles = frame["sm_clock_hz"].to_numpy(dtype=float) / (tgt_machine.sm_clock_hz or np.nan)
    cycles = np.where(np.isfinite(cycles) & (cycles > 0), cycles, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        projected = time * roof_tgt / roof_src
        fixed = roof_tgt + np.maximum(time - roof_src, 0.0) * cycles
    low = np.fmin(roof_tgt, projected)
    high = np.fmax(projected, fixed)
    # memory roof alone on the target where a peak is missing there: a lower bound, unbounded above
    mem_tgt = _memory_roof(tgt_analysis.frame, tgt_analysis.machine, tgt_analysis.levels)
    mem_src = _memory_roof(src_analysis.frame, src_applied, src_analysis.levels)

    sf, tf = src_analysis.frame, tgt_analysis.frame
    codes: list[list[str]] = [[] for _ in range(len(frame))]
    texts: list[list[str]] = [[] for _ in range(len(frame))]
    why = np.full(len(frame), None, dtype=object)
    ranged = np.zeros(len(frame), dtype=bool)  # unprojected rows that still have a range
    ratio_cache: dict[tuple[str, ...], float] = {}

    def note(i: int, code: str, text: str) -> None:
        codes[i].append(code)
        texts[i].append(text)

    for i in range(len(frame)):
        row = frame.iloc[i]
        b_src, b_tgt = sf["bound"].iloc[i], tf["bound"].iloc[i]
        k_src, k_tgt = _kind(b_src, lv_t), _kind(b_tgt, lv_t)
        if not np.isfinite(time[i]):
            why[i] = "no time measured"
            continue
        if not np.isfinite(roof_src[i]):
            counted = [c for c in ("flops", "l1_bytes", "shared_bytes", "l2_bytes", "dram_bytes")
                       if np.isfinite(float(row[c]))]
            why[i] = ("no FLOP or byte counts" if not counted else
                      f"no counts at the levels both machines have ceilings for ({', '.join(lv_t) or 'none'})"
                      if not np.isfinite(mem_src[i]) and not np.isfinite(float(row["flops"])) else
                      "its roofline here is unknown (a ceiling it uses is missing on the source machine)")
            continue
        # precisions
        row_keys = _used_keys(frame.iloc[[i]])
        for key in sorted(row_keys & set(subs)):
            sub = subs[key]
            factor, reason = SUBSTITUTES[key][1], SUBSTITUTES[key][2]
            note(i, "precision-substituted", f"{key} FLOPs held to the target's {sub} ceiling: it has no {key} "
                                             f"ceiling ({reason})")
            if factor != 1.0:
                high[i] = max(high[i], factor * projected[i])
        lacking = sorted(k for k in row_keys if k not in tgt_machine.compute)
        if lacking:
            if np.isfinite(roof_tgt[i]):
                note(i, "precision-unknown", f"the target has no {', '.join(lacking)} ceiling; memory binds there "
                                             "whatever it is")
            else:
                low[i] = mem_tgt[i] if np.isfinite(mem_tgt[i]) else 0.0
                projected[i], high[i] = np.nan, np.inf
                note(i, "precision-unknown", f"the target has no {', '.join(lacking)} ceiling: its time there is at "
                                             f"least {format_time(low[i])}, unbounded above")
                why[i] = f"the target has no {', '.join(lacking)} ceiling"
                ranged[i] = True  # not projected, but bounded below
                continue
        if not np.isfinite(roof_tgt[i]):
            why[i] = "no roofline on the target (no counts at its levels)"
            continue
        # limiter
        if b_src is not pd.NA and b_tgt is not pd.NA and str(b_src) != str(b_tgt) and k_src and k_tgt:
            use = (sf[f"bw_use_{b_tgt}"].iloc[i] if k_tgt == "memory" and f"bw_use_{b_tgt}" in sf.columns
                   else sf["compute_use"].iloc[i] if k_tgt == "compute" else np.nan)
            if np.isfinite(use) and use > 0:
                high[i] = max(high[i], roof_tgt[i] / use)
            note(i, "limiter-change", f"limited by {b_src} here, by {b_tgt} there" +
                 (f" (it uses {use:.0%} of {b_tgt} today)" if np.isfinite(use) and use > 0 else ""))
        if roof_src[i] > time[i] * 1.0001:
            note(i, "above-roofline", f"{roof_src[i] / time[i]:.0%} of its roofline here: the source ceilings are low")
        # launch overhead
        per_launch = time[i] / launches[i] if launches[i] > 0 else time[i]
        if per_launch < SHORT_LAUNCH_S:
            low[i], high[i] = min(low[i], time[i]), max(high[i], time[i])
            note(i, "short-launch", f"{format_time(per_launch)} per launch: launch overhead and latency, not the "
                                    "roofline, set it, so the range takes in today's time")
        # L2 capacity
        if smaller[i]:
            low[i] = min(low[i], roof_opt[i])
            note(i, "l2-smaller", f"{l2b[i] / dram[i]:.1f} B through L2 per DRAM byte in a {_bytes(l2_src)} L2, "
                                  f"working set ~{_bytes(working[i])}: over the target's {_bytes(l2_tgt)}, "
                                  "its L2 bytes are charged to DRAM there")
        if larger[i]:
            low[i] = min(low[i], roof_opt[i])
            note(i, "l2-larger", f"working set ~{_bytes(working[i])}: over the {_bytes(l2_src)} L2 here, "
                                 f"within the target's {_bytes(l2_tgt)}: DRAM traffic may fall")
        # unknown FLOP components
        if bool(row["flops_partial"]) or mem_only_src[i] or mem_only_tgt[i]:
            cand = tuple(k for k in _unknown_flop_keys(row) if k in src_applied.compute and k in tgt_machine.compute)
            if cand not in ratio_cache:
                ratio_cache[cand] = max((src_applied.compute[k] / tgt_machine.compute[k] for k in cand), default=math.nan)
            r = ratio_cache[cand]
            uncounted = [FLOP_COUNTERS[c] for c in FLOP_COUNTERS if pd.isna(row[c])]
            what = ("no FLOP counts" if mem_only_src[i] else "a FLOP component not counted") + (
                f" (collect {', '.join(uncounted)})" if uncounted else "")
            if np.isfinite(r):
                high[i] = max(high[i], time[i] * r)
                note(i, "unknown-flops", f"{what}: the high end takes today's time x {r:.3g} (the largest "
                                         "ratio of the ceilings those FLOPs could use)")
            else:
                high[i] = np.inf
                note(i, "unknown-flops", f"{what}, and no ceiling they could use is known on both machines: unbounded "
                                         "above")

    ok = np.array([w is None for w in why])
    ranged |= ok
    projected = np.where(ok, projected, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame({
            **{k: frame[k] for k in (["phase", "kernel_name"] if by == "phase" else ["kernel_name"])},
            "launches": frame["launches"],
            "time_s": time, "roofline_time_s": roof_src, "pct_of_roofline": roof_src / time,
            "bound": sf["bound"].to_numpy(), "best_time_s": np.where(ok, roof_tgt, np.nan),
            "projected_time_s": projected, "low_time_s": np.where(ranged, low, np.nan),
            "high_time_s": np.where(ranged, high, np.nan), "bound_target": tf["bound"].to_numpy(),
            "speedup": time / projected, "speedup_low": time / high, "speedup_high": time / low,
            "gain_s": time - projected, "projected": ok, "why": why,
            "notes": [tuple(dict.fromkeys(c)) for c in codes], "note_text": ["; ".join(t) for t in texts],
            "note_list": [tuple(zip(c, t)) for c, t in zip(codes, texts)],
        })
    for c in ("speedup_low", "speedup_high"):
        out[c] = np.where(ok, out[c], np.nan)
    if not ok.any():
        reasons = ", ".join(sorted({str(w) for w in why if w}))
        raise InputError(f"no kernel could be projected ({reasons})",
                         hint="the profile needs times and FLOP or byte counts (ncu --set full, or roofline profile)")
    if not ok.all():
        share = np.nansum(time[~ok]) / np.nansum(time) if np.nansum(time) > 0 else math.nan
        notes.append(f"{int((~ok).sum())} kernel(s), {share:.1%} of the time, not projected (see the unprojected list)")
    if subs:
        notes.append("held to substitute ceilings on the target: " + ", ".join(f"{k} -> {v}" for k, v in subs.items()))

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

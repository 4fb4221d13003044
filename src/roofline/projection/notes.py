"""What the roofline model cannot know about a projected kernel: the notes, and how each widens its range.

:func:`l2_capacity` flags the kernels whose L2 working set may not fit the target's smaller L2 (or may
newly fit a larger one); :func:`judge` walks the kernels once, says why one cannot be projected, and
for the others raises each note of :data:`NOTE_CODES` that applies with its figures, widening the
kernel's range (:class:`Terms`, changed in place).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.roofline import LOCALITY_GAP
from roofline.machine.model import Machine
from roofline.projection.machines import substitution, unknown_flop_keys, used_keys
from roofline.units import format_si, format_time

#: Launches shorter than this (mean per launch) are set by launch overhead and latency more than by
#: any roofline: a kernel launch costs a few microseconds on every CUDA GPU.
SHORT_LAUNCH_S = 5e-6

#: A kernel reuses the L2 when at least this many bytes pass through L2 per byte from DRAM (the
#: analysis' locality gap).
L2_REUSE = LOCALITY_GAP

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


#: FLOP column -> the key of what to collect for it (:mod:`roofline.counting.hints`), named, from the
#: kernel table's ``metric_hints``, when it was not collected.
FLOP_HINT_KEYS = {column: f"flop:{column}" for column in ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops")}


def _bytes(value: float | None) -> str:
    return format_si(value, "B")


@dataclass
class Capacity:
    """The L2 sizes (B; None: unknown) and, per row, the kernels flagged ``smaller`` (reuse here in a
    working set over the target's smaller L2) or ``larger`` (a working set over the L2 here, within the
    target's), with their ``working`` set (DRAM bytes per launch), ``l2`` and ``dram`` bytes."""

    here: float | None
    there: float | None
    smaller: np.ndarray
    larger: np.ndarray
    working: np.ndarray
    l2: np.ndarray
    dram: np.ndarray


def l2_capacity(frame: pd.DataFrame, here: float | None, there: float | None, levels: list[str],
                notes: list[str]) -> Capacity:
    """Which kernels the two L2 sizes concern (a kernel's DRAM bytes per launch stand for its working set)."""
    launches = frame["launches"].to_numpy(dtype=float)
    dram = frame["dram_bytes"].to_numpy(dtype=float)
    l2b = frame["l2_bytes"].to_numpy(dtype=float)
    working = dram / np.where(launches > 0, launches, np.nan)
    smaller = np.zeros(len(frame), bool)
    larger = np.zeros(len(frame), bool)
    if here and there and "dram" in levels:
        with np.errstate(invalid="ignore"):
            if there < here:
                smaller = (l2b >= L2_REUSE * dram) & (working > there)
            elif there > here:
                larger = (working > here) & (working <= there)
    elif "dram" in levels:
        missing = [w for w, v in (("here", here), ("on the target", there)) if not v]
        notes.append(f"L2 size unknown {' and '.join(missing)}: cache-capacity effects not assessed")
    if here and there and here != there:
        notes.append(f"L2 {_bytes(here)} here, {_bytes(there)} on the target: a kernel's DRAM bytes "
                     "per launch stand for its working set")
    if smaller.any():
        notes.append(f"assumption: the L2 bytes of {int(smaller.sum())} kernel(s) that reuse the L2 here with a "
                     f"working set over the target's {_bytes(there)} L2 are charged to DRAM on the target")
    return Capacity(here, there, smaller, larger, working, l2b, dram)


@dataclass
class Terms:
    """Per row: today's ``time`` and ``launches``; the roofline time here (``roof_src``), there
    (``roof_tgt``) and there with the optimistic DRAM bytes (``roof_opt``); the memory roofs alone
    (``mem_src``, ``mem_tgt``) and whether a roof rests on them for want of FLOP counts
    (``mem_only_src``, ``mem_only_tgt``); the ``projected`` time and its range ``low`` .. ``high``."""

    time: np.ndarray
    launches: np.ndarray
    roof_src: np.ndarray
    roof_tgt: np.ndarray
    roof_opt: np.ndarray
    mem_src: np.ndarray
    mem_tgt: np.ndarray
    mem_only_src: np.ndarray
    mem_only_tgt: np.ndarray
    projected: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass
class Verdicts:
    """Per row: ``why`` it was not projected (None: it was), whether it keeps a range all the same
    (``ranged``), and its notes as parallel lists of ``codes`` and ``texts``."""

    why: np.ndarray
    ranged: np.ndarray
    codes: list[list[str]] = field(default_factory=list)
    texts: list[list[str]] = field(default_factory=list)

    def note(self, i: int, code: str, text: str) -> None:
        self.codes[i].append(code)
        self.texts[i].append(text)


def _kind(bound: Any, levels: tuple[str, ...]) -> str | None:
    if bound is None or bound is pd.NA or (isinstance(bound, float) and math.isnan(bound)):
        return None
    return "memory" if str(bound) in levels else "compute"


def judge(frame: pd.DataFrame, here: pd.DataFrame, there: pd.DataFrame, terms: Terms, capacity: Capacity,
          subs: Mapping[str, str], source: Machine, target: Machine, levels: tuple[str, ...],
          hints: Mapping[str, str]) -> Verdicts:
    """Walk the kernels: why each cannot be projected, else its notes and widened range.

    ``frame``: the kernel rows (as aggregated for the source analysis); ``here`` / ``there``: the
    source and target analyses' frames (same rows, same order); ``subs``: precisions held to a stand-in
    on the target; ``source`` / ``target``: the machines as applied; ``hints``: what to collect (the
    kernel table's :attr:`~roofline.kernels.KernelTable.metric_hints`; none for a table that names no tool).
    """
    n = len(frame)
    v = Verdicts(why=np.full(n, None, dtype=object), ranged=np.zeros(n, dtype=bool),
                 codes=[[] for _ in range(n)], texts=[[] for _ in range(n)])
    t = terms
    ratio_cache: dict[tuple[str, ...], float] = {}
    for i in range(n):
        row = frame.iloc[i]
        b_src, b_tgt = here["bound"].iloc[i], there["bound"].iloc[i]
        k_src, k_tgt = _kind(b_src, levels), _kind(b_tgt, levels)
        if not np.isfinite(t.time[i]):
            v.why[i] = "no time measured"
            continue
        if not np.isfinite(t.roof_src[i]):
            counted = [c for c in ("flops", "l1_bytes", "shared_bytes", "l2_bytes", "dram_bytes")
                       if np.isfinite(float(row[c]))]
            v.why[i] = ("no FLOP or byte counts" if not counted else
                        f"no counts at the levels both machines have ceilings for ({', '.join(levels) or 'none'})"
                        if not np.isfinite(t.mem_src[i]) and not np.isfinite(float(row["flops"])) else
                        "its roofline here is unknown (a ceiling it uses is missing on the source machine)")
            continue
        # precisions
        row_keys = used_keys(frame.iloc[[i]])
        for key in sorted(row_keys & set(subs)):
            factor, reason = substitution(key, subs[key])
            v.note(i, "precision-substituted", f"{key} FLOPs held to the target's {subs[key]} ceiling: it has no "
                                               f"{key} ceiling ({reason})")
            if factor != 1.0:
                t.high[i] = max(t.high[i], factor * t.projected[i])
        lacking = sorted(k for k in row_keys if k not in target.compute)
        if lacking:
            if np.isfinite(t.roof_tgt[i]):
                v.note(i, "precision-unknown", f"the target has no {', '.join(lacking)} ceiling; memory binds there "
                                               "whatever it is")
            else:
                t.low[i] = t.mem_tgt[i] if np.isfinite(t.mem_tgt[i]) else 0.0
                t.projected[i], t.high[i] = np.nan, np.inf
                v.note(i, "precision-unknown", f"the target has no {', '.join(lacking)} ceiling: its time there is "
                                               f"at least {format_time(t.low[i])}, unbounded above")
                v.why[i] = f"the target has no {', '.join(lacking)} ceiling"
                v.ranged[i] = True  # not projected, but bounded below
                continue
        if not np.isfinite(t.roof_tgt[i]):
            v.why[i] = "no roofline on the target (no counts at its levels)"
            continue
        # limiter
        if b_src is not pd.NA and b_tgt is not pd.NA and str(b_src) != str(b_tgt) and k_src and k_tgt:
            use = (here[f"bw_use_{b_tgt}"].iloc[i] if k_tgt == "memory" and f"bw_use_{b_tgt}" in here.columns
                   else here["compute_use"].iloc[i] if k_tgt == "compute" else np.nan)
            if np.isfinite(use) and use > 0:
                t.high[i] = max(t.high[i], t.roof_tgt[i] / use)
            v.note(i, "limiter-change", f"limited by {b_src} here, by {b_tgt} there" +
                   (f" (it uses {use:.0%} of {b_tgt} today)" if np.isfinite(use) and use > 0 else ""))
        if t.roof_src[i] > t.time[i] * 1.0001:
            v.note(i, "above-roofline", f"{t.roof_src[i] / t.time[i]:.0%} of its roofline here: the source ceilings "
                                        "are low")
        # launch overhead
        per_launch = t.time[i] / t.launches[i] if t.launches[i] > 0 else t.time[i]
        if per_launch < SHORT_LAUNCH_S:
            t.low[i], t.high[i] = min(t.low[i], t.time[i]), max(t.high[i], t.time[i])
            v.note(i, "short-launch", f"{format_time(per_launch)} per launch: launch overhead and latency, not the "
                                      "roofline, set it, so the range takes in today's time")
        # L2 capacity
        c = capacity
        if c.smaller[i]:
            t.low[i] = min(t.low[i], t.roof_opt[i])
            v.note(i, "l2-smaller", f"{c.l2[i] / c.dram[i]:.1f} B through L2 per DRAM byte in a {_bytes(c.here)} L2, "
                                    f"working set ~{_bytes(c.working[i])}: over the target's {_bytes(c.there)}, "
                                    "its L2 bytes are charged to DRAM there")
        if c.larger[i]:
            t.low[i] = min(t.low[i], t.roof_opt[i])
            v.note(i, "l2-larger", f"working set ~{_bytes(c.working[i])}: over the {_bytes(c.here)} L2 here, "
                                   f"within the target's {_bytes(c.there)}: DRAM traffic may fall")
        # unknown FLOP components
        if bool(row["flops_partial"]) or t.mem_only_src[i] or t.mem_only_tgt[i]:
            cand = tuple(k for k in unknown_flop_keys(row) if k in source.compute and k in target.compute)
            if cand not in ratio_cache:
                ratio_cache[cand] = max((source.compute[k] / target.compute[k] for k in cand), default=math.nan)
            r = ratio_cache[cand]
            uncounted = [hints[key] for col, key in FLOP_HINT_KEYS.items() if pd.isna(row[col]) and key in hints]
            what = ("no FLOP counts" if t.mem_only_src[i] else "a FLOP component not counted") + (
                f" (collect {', '.join(uncounted)})" if uncounted else "")
            if np.isfinite(r):
                t.high[i] = max(t.high[i], t.time[i] * r)
                v.note(i, "unknown-flops", f"{what}: the high end takes today's time x {r:.3g} (the largest "
                                           "ratio of the ceilings those FLOPs could use)")
            else:
                t.high[i] = np.inf
                v.note(i, "unknown-flops", f"{what}, and no ceiling they could use is known on both machines: "
                                           "unbounded above")
    v.ranged |= np.array([w is None for w in v.why], dtype=bool)
    return v

"""The :class:`Analysis`: what :func:`roofline.analysis.analyze` returns, and its summaries.

Data only: views (charts, tables, JSON) take an ``Analysis`` and never compute
roofline maths themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.work import Work, lower_bound_rows, work_for
from roofline.kernels.labels import label_map, short_name
from roofline.kernels.match_rate import MatchRate
from roofline.kernels.vendor import VendorWords, words_for
from roofline.machine.model import Machine

#: Label used in summaries for rows whose bound or phase is unknown.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Analysis:
    """A kernel table with roofline columns, the machine it was held to, and notes.

    ``frame``: the (aggregated) kernel table plus the columns of
    :mod:`roofline.analysis.columns`, sorted by time, longest first.
    ``machine``: the machine as applied (scaled to the kernels' clock), or None.
    ``levels``: memory levels analysed, innermost first.
    ``by``: the aggregation, ``"name"``, ``"phase"``, ``"launch"``, ``"op"``, ``"module"`` or
    drill-down keys joined by commas (``"module,op,phase,kernel_name"``); ``depth``: the module
    depth rows were cut to (None: whole paths).
    ``notes``: what a reader of the results must know (missing ceilings,
    clock scaling, lower bounds), as sentences.
    ``phase_times``: seconds per phase, from the launches before aggregation
    (``"unknown"`` for launches outside any phase).
    ``work``: what the roofline counts, ``"flops"``, ``"ops"`` or ``"instructions"``; under the
    latter two the columns named for FLOPs (``flops`` aside) hold that work: ``flop_rate`` is OP/s or
    warp instructions/s, ``ai_<level>`` OP/B or instructions per transaction, ``bw_<level>`` B/s or
    transactions/s (:attr:`work_spec` gives the units).
    ``peaks``: the profile's own peak metrics as a machine (Nsight Compute's ``.peak_sustained`` x clock,
    as given, not scaled), shown beside the ceilings used; None when the profile has none.
    ``metric_hints``: what to collect for each column a view may find missing (the kernel table's
    :attr:`~roofline.kernels.KernelTable.metric_hints`: column or work -> the tool's metrics that supply
    it, keys of :mod:`roofline.counting.hints`); empty when the table's reader named no tool.
    ``vendor``: whose GPU the kernels ran on, ``"nvidia"`` or ``"amd"`` (the table's ``compute_capability``:
    :func:`roofline.kernels.vendor.table_vendor`); None when unknown or mixed. ``arch``: the table's one
    architecture ('9.0', 'gfx942'), None when unknown or several. Views name levels, units and compute
    ceilings in that vendor's words (:attr:`words`).
    ``match``: for a timeline joined with a counting profile, how its launches found their counts
    (:class:`~roofline.kernels.match_rate.MatchRate`); None for any other table.
    """

    frame: pd.DataFrame
    machine: Machine | None
    levels: tuple[str, ...]
    by: str
    notes: tuple[str, ...] = ()
    phase_times: Mapping[str, float] = field(default_factory=dict)
    work: str = "flops"
    depth: int | None = None
    peaks: Machine | None = None
    metric_hints: Mapping[str, str] = field(default_factory=dict)
    vendor: str | None = None
    arch: str | None = None
    match: MatchRate | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "phase_times", MappingProxyType(dict(self.phase_times)))
        object.__setattr__(self, "metric_hints", MappingProxyType(dict(self.metric_hints)))

    def __reduce__(self) -> tuple:
        """Pickle with ``phase_times`` as a plain dict (a read-only mapping view cannot be pickled)."""
        return (self.__class__, (self.frame, self.machine, self.levels, self.by, self.notes, dict(self.phase_times),
                                 self.work, self.depth, self.peaks, dict(self.metric_hints), self.vendor, self.arch,
                                 self.match))

    @property
    def words(self) -> VendorWords:
        """The vendor's words for levels, units and compute ceilings (:func:`roofline.kernels.vendor.words_for`;
        NVIDIA's when the vendor is unknown)."""
        return words_for(self.vendor, self.arch)

    @property
    def peaks_beside(self) -> Machine | None:
        """The profile's own peak metrics (:attr:`peaks`) at the clock of the ceilings used, for showing
        beside them; None when the profile has none."""
        if self.peaks is None:
            return None
        clock = self.machine.sm_clock_hz if self.machine is not None else None
        return self.peaks.scaled_to_clock(clock) if clock else self.peaks

    @cached_property
    def labels(self) -> Mapping[str, str]:
        """Short label of each kernel name (``str`` of the ``kernel_name`` value), made over every row,
        longest first (:func:`roofline.kernels.labels.label_map`): every view of this analysis names a
        kernel alike, whichever rows it shows (``name #2`` is the second longest kernel of that name)."""
        return MappingProxyType(label_map(str(n) for n in pd.unique(self.frame["kernel_name"])))

    def kernel_labels(self, names: Iterable[object]) -> list[str]:
        """The :attr:`labels` of kernel ``names`` (of any of the rows, in any order); a name the rows
        lack is shortened alone (:func:`roofline.kernels.labels.short_name`)."""
        labels = self.labels
        return [labels.get(str(n)) or short_name(str(n)) for n in names]

    @property
    def sums_phases(self) -> bool:
        """True when a row sums launches of every phase (by kernel name or by module): its ``phase``
        lists them, comma-joined, rather than naming one."""
        return self.by in ("name", "module")

    @property
    def row_noun(self) -> str:
        """What a row is, for captions: "kernels", "operators", "modules" or "groups"."""
        return {"op": "operators", "module": "modules"}.get(self.by, "groups" if "," in self.by else "kernels")

    @property
    def work_spec(self) -> Work:
        """What the roofline counts (:class:`roofline.analysis.work.Work`): its columns and units."""
        return work_for(self.work)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def total_time_s(self) -> float:
        """Sum of the known kernel times, seconds (0 for an empty table)."""
        return float(np.nansum(self.frame["time_s"].to_numpy(dtype=float)))

    @property
    def ranked(self) -> pd.DataFrame:
        """Rows by time, longest first (unknown times last), with their limiter (``bound``); a copy."""
        out = self.frame.sort_values("time_s", ascending=False, kind="stable", na_position="last")
        return out.reset_index(drop=True)

    @property
    def zero_flop_mask(self) -> np.ndarray:
        """True for rows known to execute no FLOPs (they cannot sit on a log FLOP/s axis); a 0 that
        is only a lower bound (a FLOP counter missing) is not known to be none."""
        flops = self.frame["flops"].to_numpy(dtype=float)
        return (flops == 0) & ~lower_bound_rows(self.frame, "flops")

    @property
    def zero_work_mask(self) -> np.ndarray:
        """True for rows known to do none of the analysis's work (0 FLOPs, 0 OPs or 0 instructions),
        as :attr:`zero_flop_mask`."""
        work = self.frame[self.work_spec.total].to_numpy(dtype=float, na_value=np.nan)
        return (work == 0) & ~lower_bound_rows(self.frame, self.work_spec)

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-table summary, SI units.

        Keys: ``time_s`` (total), ``launches``, ``kernels`` (rows), ``flops`` (known total),
        ``time_by_phase`` (s), ``share_by_bound`` and ``share_by_region`` (fractions of
        the total time), ``zero_flop_kernels``, ``zero_flop_time_s`` and ``zero_flop_share``
        (kernels known to execute no FLOPs), ``lower_bound_zero_flop_kernels`` and
        ``lower_bound_zero_flop_time_s`` (0 FLOPs counted, but a FLOP counter missing),
        ``unknown_flop_time_s`` (kernels whose FLOPs were not counted),
        ``savable_time_s`` (sum of time above the roofline over kernels where known; NaN
        when unknown for all, e.g. without a machine). ``work`` names the analysis's work and
        ``work_total`` is its known total (FLOP, OP or warp instructions); ``zero_work_kernels``,
        ``zero_work_time_s``, ``lower_bound_zero_work_kernels``, ``lower_bound_zero_work_time_s`` and
        ``unknown_work_time_s`` are the zero-FLOP and unknown-FLOP figures for that work.
        """
        f = self.frame
        time = f["time_s"].to_numpy(dtype=float)
        # unknown, not 0 s, when no row has a time (a file of counts without the launch duration)
        total = float(np.nansum(time)) if len(time) == 0 or not np.isnan(time).all() else float("nan")
        flops = f["flops"].to_numpy(dtype=float)

        def shares(col: str) -> dict[str, float]:
            if not total > 0:
                return {}
            keys = f[col].astype("string").fillna(UNKNOWN)
            sums = pd.Series(time, index=f.index).groupby(keys.to_numpy(dtype=object), sort=True).sum(min_count=1)
            return {str(k): float(v) / total for k, v in sums.items() if not np.isnan(v)}

        work = f[self.work_spec.total].to_numpy(dtype=float, na_value=np.nan)
        zero, zero_work = self.zero_flop_mask, self.zero_work_mask
        bound, bound_work = (flops == 0) & ~zero, (work == 0) & ~zero_work

        def time_of(rows: np.ndarray) -> float:
            return float(np.nansum(np.where(rows, time, 0.0)))

        zero_time = time_of(zero)
        return {
            "time_s": total,
            "launches": int(f["launches"].sum()) if len(f) else 0,
            "kernels": int(len(f)),
            "flops": _nansum_or_nan(flops),  # unknown (null), not 0, when no kernel's FLOPs are known
            "time_by_phase": dict(self.phase_times),
            "share_by_bound": shares("bound"),
            "share_by_region": shares("region"),
            "zero_flop_kernels": int(zero.sum()),
            "zero_flop_time_s": zero_time,
            "zero_flop_share": zero_time / total if total > 0 else float("nan"),
            "lower_bound_zero_flop_kernels": int(bound.sum()),
            "lower_bound_zero_flop_time_s": time_of(bound),
            "unknown_flop_time_s": float(np.nansum(np.where(np.isnan(flops), time, 0.0))),
            "savable_time_s": _nansum_or_nan(f["savable_time_s"].to_numpy(dtype=float)),
            "work": self.work,
            "work_total": _nansum_or_nan(work),
            "zero_work_kernels": int(zero_work.sum()),
            "zero_work_time_s": time_of(zero_work),
            "lower_bound_zero_work_kernels": int(bound_work.sum()),
            "lower_bound_zero_work_time_s": time_of(bound_work),
            "unknown_work_time_s": float(np.nansum(np.where(np.isnan(work), time, 0.0))),
        }


def _nansum_or_nan(values: np.ndarray) -> float:
    """Sum of the known values; NaN when none is known (unknown is not zero)."""
    known = values[~np.isnan(values)]
    return float(known.sum()) if known.size else float("nan")

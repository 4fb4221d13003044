"""Production time against Nsight Compute's replay time, for a timeline joined with a counting profile.

Nsight Compute replays each kernel alone, serialized, its caches flushed; the timeline has the time the
kernel took as the program ran it (beside other streams, caches warm or shared). A joined table keeps,
for each launch that found its counts, the counting run's time of that launch (or its configuration's
mean) as ``replay_time_s`` (:mod:`roofline.readers.nsys.join`). Here both times are summed over the
launches that have both, per kernel and per class of kernel (what bounds it, from the roofline of the
same analysis), and their ratio, production over replay, says how far the counting run's times are from
the program's: above 1, the kernel ran slower in production (contention, a shared GPU), below 1 faster
(warm caches, clocks). Unmatched launches have no replay time and are left out of both sums, never
counted as zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.result import UNKNOWN, Analysis
from roofline.kernels import KernelTable, has_runs

#: The columns of :attr:`ReplayTimes.kernels` and :attr:`ReplayTimes.classes` besides their key.
COLUMNS = ("launches", "time_s", "replay_time_s", "ratio")
#: The metric of a table grouped out of core (:data:`roofline.engine.plan.REPLAY_SUMS`) that counts each group's
#: launches with both times; its ``replay_production_s`` and ``replay_time_s`` sum the two times over them.
GROUPED = "replay_launches"


@dataclass(frozen=True)
class ReplayTimes:
    """Production and replay seconds of the launches that have both.

    ``kernels``: one row per kernel (``run`` too when the table holds several runs; ``kernel_name``) with
    ``launches``, ``time_s`` (the timeline's), ``replay_time_s`` (the counting run's) and ``ratio``
    (production / replay), longest first; ``classes``: the same per ``bound`` (the analysis's limiter of each
    kernel; empty unless the analysis is by kernel name); ``launches``/``time_s``/``replay_time_s``: over all
    of them; ``left_out``: launches of the table without a replay time (unmatched)."""

    kernels: pd.DataFrame
    classes: pd.DataFrame
    launches: int
    time_s: float
    replay_time_s: float
    left_out: int

    @property
    def ratio(self) -> float:
        """Production over replay seconds, over every launch that has both (NaN when there is no replay time)."""
        return self.time_s / self.replay_time_s if self.replay_time_s > 0 else float("nan")


def replay_times(table: KernelTable, analysis: Analysis | None = None) -> ReplayTimes | None:
    """The :class:`ReplayTimes` of ``table``, a timeline joined with counts, or such tables grouped out of core
    by kernel name (None for any other table); ``analysis``: the roofline of the same table by kernel name,
    whose bounds class the kernels."""
    metrics, frame = table.metrics, table.frame
    if "replay_time_s" not in metrics.columns or len(metrics) != len(frame):
        return None
    keys = ["run", "kernel_name"] if has_runs(frame) else ["kernel_name"]
    if GROUPED in metrics.columns:  # grouped out of core by kernel name: each row's sums (REPLAY_SUMS)
        rows = pd.DataFrame({k: frame[k].astype("string").to_numpy(dtype=object, na_value=None) for k in keys})
        rows["launches"] = metrics[GROUPED].to_numpy(dtype=np.int64)
        rows["time_s"] = metrics["replay_production_s"].to_numpy(dtype=np.float64)
        rows["replay_time_s"] = metrics["replay_time_s"].to_numpy(dtype=np.float64)
        rows = rows[rows["launches"].to_numpy() > 0]
        every = frame["launches"].to_numpy(dtype=np.float64, na_value=np.nan)
        left_out = int(np.nansum(every)) - int(rows["launches"].sum())
    else:
        replay = metrics["replay_time_s"].to_numpy(dtype=np.float64, na_value=np.nan)
        time = frame["time_s"].to_numpy(dtype=np.float64, na_value=np.nan)
        both = np.isfinite(replay) & np.isfinite(time)
        rows = pd.DataFrame({k: frame[k].astype("string").to_numpy(dtype=object, na_value=None)[both] for k in keys})
        rows["launches"] = 1
        rows["time_s"] = time[both]
        rows["replay_time_s"] = replay[both]
        left_out = int(len(frame) - both.sum())
    kernels = _summed(rows, keys)
    classes = _summed(rows.assign(bound=_bounds(rows, analysis, keys)), ["bound"]) if _by_name(analysis) else \
        pd.DataFrame(columns=["bound", *COLUMNS])
    return ReplayTimes(kernels=kernels, classes=classes, launches=int(rows["launches"].sum()),
                       time_s=float(rows["time_s"].sum()), replay_time_s=float(rows["replay_time_s"].sum()),
                       left_out=left_out)


def _by_name(analysis: Analysis | None) -> bool:
    return analysis is not None and analysis.by == "name"


def _bounds(rows: pd.DataFrame, analysis: Analysis | None, keys: list[str]) -> list[str]:
    """Each launch's class: its kernel's ``bound`` in ``analysis`` (by kernel name), ``unknown`` where none."""
    assert analysis is not None
    f = analysis.frame
    bound = f["bound"].astype("string").fillna(UNKNOWN).to_numpy(dtype=object)
    of = dict(zip(zip(*(f[k].astype("string").to_numpy(dtype=object, na_value=None) for k in keys)), bound))
    return [of.get(key, UNKNOWN) for key in zip(*(rows[k] for k in keys))]


def _summed(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``rows`` summed per ``keys`` with the ratio, longest production time first."""
    out = rows.groupby(keys, dropna=False, sort=False)[["launches", "time_s", "replay_time_s"]].sum().reset_index()
    replay = out["replay_time_s"].to_numpy(dtype=np.float64)
    out["ratio"] = np.where(replay > 0, out["time_s"].to_numpy(dtype=np.float64) / np.where(replay > 0, replay, 1.0),
                            np.nan)
    out["launches"] = out["launches"].astype(np.int64)
    return out.sort_values("time_s", ascending=False, kind="stable").reset_index(drop=True)

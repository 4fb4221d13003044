"""What an out-of-core aggregation computes, column by column, and what it reads: one plan for
every engine (:mod:`roofline.engine.duck`, :mod:`roofline.engine.cluster`).

The aggregation is :func:`roofline.kernels.aggregate` run where the launches are (the files),
in two levels:

1. **Fine groups** (the engine's work: every launch read once, in parallel, out of core): one row
   per distinct (group keys, ``phase``, ``op``, ``module``, ``source``), holding for each summed
   column its sum over the known values and how many values were known, the launch count, the
   clock's weights, the flags' "any", and the descriptive columns' smallest and largest value
   and count. Every one of these combines by summing (or min / max), so any engine computes
   them with plain hash aggregation, partition by partition.
2. **Groups** (:func:`roofline.engine.sql.group_sql`, small: a few rows per kernel and file): the
   fine rows summed into the rows :func:`roofline.kernels.aggregate` gives; a sum is unknown when a
   launch's value was (``count(col) = count(*)``), a descriptive column keeps its value where every
   launch agrees (``min = max``, none missing), ``phase``/``op``/``module``/``source`` list their
   distinct values, sorted, comma-joined. The time per phase (the analysis' ``phase_times``) comes
   from the fine rows too.

``run`` is always a group key: a table of one run has ``run`` null throughout, and grouping by a
null key is grouping without it, as :func:`roofline.kernels.group_keys` does.

Tables of timelines joined with counts (every file holding the per-launch ``match`` metric) have it as
one more fine key, so that the match rate (:func:`roofline.engine.sql.match_sql`) comes from the fine
rows as the time per phase does, on every engine; the groups sum over it. Grouped by kernel name, such
tables also give, per group, production against Nsight Compute's replay time over the launches that have
both (``replay``: the per-launch ``replay_time_s`` metric): :data:`REPLAY_SUMS`, the table's metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from roofline.kernels import (COLUMNS, DTYPES, SUMMED, GroupBy, frame_of, group_keys, longest_first, row_labels,
                              unknown_values)

#: Descriptive columns kept where every launch of a group agrees (else unknown).
COMMON = ("process_id", "device", "compute_capability", "grid", "block", "stream", "tensor_precision")
#: True columns: true for a group when true for any of its launches.
FLAGS = ("flops_partial", "ops_partial", "estimated")
#: Columns listing their distinct values per group when they are not keys.
LISTED = ("phase", "op", "module", "source")
#: Views the engines compute (``"launch"`` keeps every launch: not an aggregation).
VIEWS = ("name", "phase", "op", "module")
#: Per group of a kernel-name aggregation of joined timelines: the launches with both a production and a replay
#: time, and the two times summed over them (the grouped table's metrics; :func:`roofline.api.replay_times`).
REPLAY_SUMS = ("replay_launches", "replay_production_s", "replay_time_s")


def sum_name(column: str) -> str:
    """The fine column holding the sum of ``column``'s known values."""
    return f"s__{column}"


def count_name(column: str) -> str:
    """The fine column holding how many of ``column``'s values are known."""
    return f"n__{column}"


@dataclass(frozen=True)
class Plan:
    """The columns of one aggregation: ``keys`` (``run`` first), the fine keys (``keys`` and the
    listed columns), and the declared columns the files hold (``present``; the others are unknown)."""

    by: str
    keys: tuple[str, ...]
    fine_keys: tuple[str, ...]
    present: frozenset[str]
    #: The files' column of the per-launch ``match`` metric (how a timeline's launch found its counts),
    #: when every file holds it; None otherwise.
    match: str | None = None
    #: The files' column of the per-launch ``replay_time_s`` metric, when every file holds it and the launches
    #: are grouped by kernel name; None otherwise.
    replay: str | None = None

    @classmethod
    def of(cls, by: GroupBy | str, present: frozenset[str], match: str | None = None,
           replay: str | None = None) -> Plan:
        if by not in VIEWS:
            raise ValueError(f"the out-of-core engines aggregate by {', '.join(VIEWS)}, not {by!r}")
        keys = tuple(group_keys(by, runs=True))
        fine = tuple(dict.fromkeys([*keys, *LISTED, *([match] if match else [])]))
        return cls(str(by), keys, fine, present, match, replay if by == "name" and "time_s" in present else None)

    @property
    def read(self) -> tuple[str, ...]:
        """The columns read from the files (the only ones an engine reads): declared ones, ``match`` and
        ``replay``."""
        wanted = [*self.fine_keys, *SUMMED, "sm_clock_hz", *FLAGS, *COMMON, *([self.replay] if self.replay else [])]
        return tuple(c for c in dict.fromkeys(wanted)
                     if (c in self.present or c in (self.match, self.replay)) and c != "source")

    @property
    def summed(self) -> tuple[str, ...]:
        """Summed columns the files hold (the others are unknown in every group)."""
        return tuple(c for c in SUMMED if c in self.present)

    @property
    def common(self) -> tuple[str, ...]:
        return tuple(c for c in COMMON if c in self.present and c not in self.keys)

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(c for c in FLAGS if c in self.present)

    @property
    def listed(self) -> tuple[str, ...]:
        return tuple(c for c in LISTED if c not in self.keys)


def _declared(name: str, values: Any) -> Any:
    """``values`` (a pandas Series of the group rows) in the declared dtype of column ``name``."""
    dtype = DTYPES[name]
    if dtype == "float64":
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    if dtype == "string":
        return pd.array(values.astype(object).where(values.notna(), None).tolist(), dtype="string")
    return pd.array(values.astype(object).where(values.notna(), None).tolist(), dtype=dtype)


def groups_frame(rows: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The kernel table of groups from the engine's group rows (:func:`roofline.engine.sql.group_sql`'s
    columns: the declared ones it computes), as :func:`roofline.kernels.aggregate` gives it: every
    declared column in its declared dtype, labels in ``kernel_name`` where it is not a key, rows by
    time, longest first."""
    n = len(rows)
    rows = _ordered(rows)
    out: dict[str, Any] = {}
    for column in COLUMNS:
        name = column.name
        if name in rows.columns:
            out[name] = _declared(name, rows[name])
        elif column.dtype == "float64":
            out[name] = np.full(n, np.nan)
        elif column.dtype == "boolean":
            out[name] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
        else:
            out[name] = unknown_values(column.dtype, n)
    if "kernel_name" not in plan.keys:
        out["kernel_name"] = row_labels([k for k in plan.keys], out)
    return frame_of(out)


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """The group rows by time, longest first (the grouped table's order)."""
    order = longest_first(rows["time_s"].to_numpy(dtype=np.float64, na_value=np.nan)) if len(rows) else np.zeros(0, int)
    return rows.iloc[order].reset_index(drop=True)


def groups_metrics(rows: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The grouped table's metrics, in :func:`groups_frame`'s row order: :data:`REPLAY_SUMS` when the plan
    sums replay times, else none."""
    rows = _ordered(rows)
    if plan.replay is None:
        return pd.DataFrame(index=rows.index)
    return pd.DataFrame({c: rows[c].to_numpy(dtype=np.float64, na_value=0.0) for c in REPLAY_SUMS}, index=rows.index)


def phase_time(rows: pd.DataFrame) -> Mapping[str | None, float]:
    """Known GPU time per phase (s) from the engine's per-phase rows (``phase``, ``time_s``, ``known``),
    phases with no known time left out; None: launches outside every phase."""
    found: dict[str | None, float] = {}
    for phase, total, known in rows[["phase", "time_s", "known"]].itertuples(index=False):
        if known and known > 0:
            found[None if phase is None or pd.isna(phase) else str(phase)] = float(total)
    return found

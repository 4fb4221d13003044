"""The raw metrics the guidance rules read (named by :mod:`roofline.counting.raw_metrics`), and how
launches combine.

A kernel table's ``metrics`` frame holds ncu's metrics per launch (SI units; ncu's
percentages stay in percent, 0..100). When the analysis groups launches (by kernel
name, or by phase and name), the metrics must be grouped the same way:
percentages, ratios and rates become time-weighted means; counts (sectors,
requests) are summed, so that ratios of counts (sectors per request) are taken
after summing. :func:`metrics_per_row` does that, once, for every rule.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

# The metric names, their sections and which add up: counting holds them (roofline.counting.raw_metrics).
from roofline.counting.raw_metrics import (
    SM_THROUGHPUT, MEMORY_THROUGHPUT, WAVES_PER_SM, GLOBAL_LD_SECTORS, GLOBAL_LD_REQUESTS, GLOBAL_ST_SECTORS,
    GLOBAL_ST_REQUESTS, LOCAL_LD_SECTORS, LOCAL_ST_SECTORS, GLOBAL_LD_BYTES_PER_SECTOR_PCT,
    GLOBAL_ST_BYTES_PER_SECTOR_PCT, L1_HIT_RATE, L2_HIT_RATE, ACCESS_SIZE_INSTRUCTIONS,
    L2_THEORETICAL_SECTORS_GLOBAL, L2_THEORETICAL_SECTORS_GLOBAL_IDEAL, L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE,
    L1_WAVEFRONTS_SHARED, L1_WAVEFRONTS_SHARED_IDEAL, SHARED_LD_BANK_CONFLICTS, SHARED_ST_BANK_CONFLICTS,
    INST_EXECUTED_PCT, GLOBAL_LD_BYTES_PER_SECTOR, GLOBAL_ST_BYTES_PER_SECTOR, SECTOR_BYTES, ALL_METRICS,
    ALSO_READ, COLUMN_METRICS, SECTION_OF, is_count,
)
from roofline.kernels import KernelTable, group_ids, group_keys, has_runs

__all__ = [
    "SM_THROUGHPUT", "MEMORY_THROUGHPUT", "WAVES_PER_SM", "GLOBAL_LD_SECTORS", "GLOBAL_LD_REQUESTS",
    "GLOBAL_ST_SECTORS", "GLOBAL_ST_REQUESTS", "LOCAL_LD_SECTORS", "LOCAL_ST_SECTORS",
    "GLOBAL_LD_BYTES_PER_SECTOR_PCT", "GLOBAL_ST_BYTES_PER_SECTOR_PCT", "L1_HIT_RATE", "L2_HIT_RATE",
    "ACCESS_SIZE_INSTRUCTIONS", "L2_THEORETICAL_SECTORS_GLOBAL", "L2_THEORETICAL_SECTORS_GLOBAL_IDEAL",
    "L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE", "L1_WAVEFRONTS_SHARED", "L1_WAVEFRONTS_SHARED_IDEAL",
    "SHARED_LD_BANK_CONFLICTS", "SHARED_ST_BANK_CONFLICTS", "INST_EXECUTED_PCT", "GLOBAL_LD_BYTES_PER_SECTOR",
    "GLOBAL_ST_BYTES_PER_SECTOR", "SECTOR_BYTES", "ALL_METRICS", "ALSO_READ", "COLUMN_METRICS", "SECTION_OF",
    "is_count", "aggregate_metrics", "metrics_per_row", "present",
]


def _numeric(frame: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
    cols = [n for n in names if n in frame.columns]
    return pd.DataFrame({n: pd.to_numeric(frame[n], errors="coerce") for n in cols}, index=frame.index, dtype=float)



def _key_frame(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for k in keys:
        out[k] = frame[k].astype("string").fillna("(none)")
    return out


def _group_index(launches: pd.DataFrame, keys: list[str],
                 groups: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, pd.Index]:
    """Group ids (shared with the kernel table's aggregation; ``groups`` when already known) and the
    index of key values per group."""
    group, first = groups if groups is not None else group_ids(launches, keys)
    firsts = _key_frame(launches[keys].iloc[first], keys)
    if len(keys) == 1:
        return group, pd.Index(firsts[keys[0]].to_numpy(), name=keys[0])
    return group, pd.MultiIndex.from_frame(firsts)


def aggregate_metrics(launches: pd.DataFrame, metrics: pd.DataFrame, by: str,
                      names: Iterable[str] = (*ALL_METRICS, *ALSO_READ), *,
                      groups: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """Combine per-launch metrics into one row per group of launches.

    ``launches`` is the per-launch kernel table (``kernel_name``, ``phase``, ``launch_id``,
    ``time_s``) and ``metrics`` the raw metrics with the same index. Counts are summed
    (NaN if any launch lacks the count); intensive metrics are time-weighted means over
    the launches that have them (the plain mean where those launches recorded no time).
    Returns a frame indexed by the group keys (strings, with unknown phases as ``"(none)"``)
    holding the metrics in ``names`` that are present. Vectorised: the keys are factorized
    once (``groups``: their group ids and first rows, when known) and every metric is summed with
    ``np.bincount``.
    """
    keys = group_keys(by, runs=has_runs(launches))
    values = _numeric(metrics, names)  # select first: reindexing every raw column costs seconds at 1e6 rows
    if not values.index.equals(launches.index):
        values = values.reindex(launches.index)
    group, index = _group_index(launches, keys, groups)
    if values.empty:
        return pd.DataFrame(index=index)
    n = len(index)
    t = pd.to_numeric(launches["time_s"], errors="coerce").to_numpy(dtype=float)

    def total(weights: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=weights, minlength=n)

    out = {}
    for name in values.columns:
        v = values[name].to_numpy(dtype=float)
        nan = np.isnan(v)
        known = total(~nan)
        if is_count(name):
            summed = total(np.where(nan, 0.0, v))
            summed[total(nan) > 0] = np.nan  # a launch lacks the count: the sum is unknown
            out[name] = summed
            continue
        ok = ~nan & ~np.isnan(t)
        num = total(np.where(ok, v * np.where(ok, t, 0.0), 0.0))
        den = total(np.where(ok, t, 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
            plain = np.where(known > 0, total(np.where(nan, 0.0, v)) / np.where(known > 0, known, 1.0), np.nan)
        out[name] = np.where(np.isnan(mean), plain, mean)
    return pd.DataFrame(out, index=index)


def _launches_of(rows: pd.DataFrame, launches: pd.DataFrame, keys: list[str],
                 groups: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """True for the launches in the groups (``groups``: the launches' group ids and each group's first
    launch) whose keys are those of a row of ``rows``, matched as :func:`metrics_per_row` looks them up
    (as text, a missing key as ``"(none)"``); every launch of a group whose text is not unique."""
    gid, first = groups
    _, index = _group_index(launches, keys, groups)
    if not index.is_unique:  # a key named "(none)" beside a missing one: keep both, as the lookup does
        wanted = index.isin(_row_index(rows, keys))
    else:
        wanted = np.zeros(len(first), dtype=bool)
        position = index.get_indexer(_row_index(rows, keys))
        wanted[position[position >= 0]] = True
    return wanted[gid]


def _row_index(frame: pd.DataFrame, keys: list[str]) -> pd.Index:
    """The keys of the rows of ``frame`` as :func:`aggregate_metrics` indexes groups."""
    key_frame = _key_frame(frame, keys)
    return pd.Index(key_frame[keys[0]]) if len(keys) == 1 else pd.MultiIndex.from_frame(key_frame)


def metrics_per_row(frame: pd.DataFrame, by: str, table: KernelTable | None, *, only_rows: bool = False) -> pd.DataFrame:
    """Metrics aligned to the rows of an analysis ``frame`` grouped ``by``.

    ``table`` is the per-launch kernel table the analysis came from. Returns a frame with
    the same index as ``frame``; a metric absent from the profile is absent as a column,
    a metric unknown for a row is NaN. Without a table, the result has no columns.
    ``only_rows``: combine only the launches of ``frame``'s rows (a few rows of a large table).
    """
    if table is None or table.metrics is None or table.metrics.empty:
        return pd.DataFrame(index=frame.index)
    if not any(n in table.metrics.columns for n in (*ALL_METRICS, *ALSO_READ)):
        return pd.DataFrame(index=frame.index)  # no metric a rule reads: nothing to group
    keys = group_keys(by, runs=has_runs(table.frame))
    launches, metrics = table.frame, table.metrics
    groups = table.group_ids(keys)  # kept by the table: its analysis grouped these launches already
    if only_rows:  # the columns read, of the rows' launches only
        keep = np.flatnonzero(_launches_of(frame, launches, keys, groups))
        launches = launches[list(dict.fromkeys([*keys, "run", "time_s"]))].take(keep)
        metrics = metrics[[n for n in (*ALL_METRICS, *ALSO_READ) if n in metrics.columns]].take(keep)
        agg = aggregate_metrics(launches, metrics, by)
    else:
        agg = aggregate_metrics(launches, metrics, by, groups=groups)
    if agg.shape[1] == 0:
        return pd.DataFrame(index=frame.index)
    out = agg.reindex(_row_index(frame, keys))
    out.index = frame.index
    return out


def present(row: pd.Series, names: Iterable[str]) -> list[str]:
    """The metrics among ``names`` that have a finite value in ``row``."""
    found = []
    for n in names:
        v = row.get(n, np.nan)
        try:
            if v is not None and np.isfinite(float(v)):
                found.append(n)
        except (TypeError, ValueError):
            continue
    return found

"""The raw Nsight Compute metrics the guidance rules read, and how launches combine.

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

from roofline.kernels import KernelTable, group_ids, group_keys, has_runs

# -- Speed of Light (ncu section SpeedOfLight) ---------------------------------------
SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
WAVES_PER_SM = "launch__waves_per_multiprocessor"

# -- Memory workload (ncu section MemoryWorkloadAnalysis_Tables) ----------------------
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
GLOBAL_ST_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
#: Local memory (register spills, per-thread arrays indexed at run time): L1 sectors of its loads and stores.
LOCAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
#: Useful bytes per 32-byte sector, in percent of 32 bytes.
GLOBAL_LD_BYTES_PER_SECTOR_PCT = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
GLOBAL_ST_BYTES_PER_SECTOR_PCT = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"
L1_HIT_RATE = "l1tex__t_sector_hit_rate.pct"
L2_HIT_RATE = "lts__t_sector_hit_rate.pct"
#: Memory instructions by access size per thread (ncu's MemoryCacheAccessPattern rule uses them
#: to find the ideal sectors per request).
ACCESS_SIZE_INSTRUCTIONS = {
    1: "smsp__sass_inst_executed_op_memory_8b.sum",
    2: "smsp__sass_inst_executed_op_memory_16b.sum",
    4: "smsp__sass_inst_executed_op_memory_32b.sum",
    8: "smsp__sass_inst_executed_op_memory_64b.sum",
    16: "smsp__sass_inst_executed_op_memory_128b.sum",
}
# -- Source counters (ncu section SourceCounters, rule UncoalescedGlobalAccess) --------
L2_THEORETICAL_SECTORS_GLOBAL = "memory_l2_theoretical_sectors_global"
L2_THEORETICAL_SECTORS_GLOBAL_IDEAL = "memory_l2_theoretical_sectors_global_ideal"
L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE = "derived__memory_l2_theoretical_sectors_global_excessive"
#: Shared-memory wavefronts and the ideal count for the same accesses without bank conflicts (ncu rule
#: UncoalescedSharedAccess).
L1_WAVEFRONTS_SHARED = "memory_l1_wavefronts_shared"
L1_WAVEFRONTS_SHARED_IDEAL = "memory_l1_wavefronts_shared_ideal"
# -- Shared-memory bank conflicts (ncu section MemoryWorkloadAnalysis_Tables, rule SharedMemoryConflicts) --
#: Extra wavefronts that bank conflicts cost shared loads and stores.
SHARED_LD_BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_ST_BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
# -- Instruction issue (ncu section ComputeWorkloadAnalysis) ---------------------------
#: Warp instructions executed per SM, in percent of the peak of 1 per scheduler per cycle (4 per SM).
INST_EXECUTED_PCT = "sm__inst_executed.avg.pct_of_peak_sustained_elapsed"
#: Useful bytes per 32-byte sector of global loads and stores, in bytes (0..32): the ``.ratio`` form of
#: :data:`GLOBAL_LD_BYTES_PER_SECTOR_PCT` that ``--set full`` reports hold. Read where present,
#: not collected (``roofline profile`` collects the ``.pct`` form).
GLOBAL_LD_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
GLOBAL_ST_BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"

#: Bytes per sector: the unit of every L1TEX/L2 transfer.
SECTOR_BYTES = 32.0

#: Every metric a rule reads.
ALL_METRICS: tuple[str, ...] = (
    SM_THROUGHPUT, MEMORY_THROUGHPUT, WAVES_PER_SM,
    GLOBAL_LD_SECTORS, GLOBAL_LD_REQUESTS, GLOBAL_ST_SECTORS, GLOBAL_ST_REQUESTS, LOCAL_LD_SECTORS, LOCAL_ST_SECTORS,
    GLOBAL_LD_BYTES_PER_SECTOR_PCT, GLOBAL_ST_BYTES_PER_SECTOR_PCT, L1_HIT_RATE, L2_HIT_RATE,
    *ACCESS_SIZE_INSTRUCTIONS.values(),
    L2_THEORETICAL_SECTORS_GLOBAL, L2_THEORETICAL_SECTORS_GLOBAL_IDEAL, L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE,
    L1_WAVEFRONTS_SHARED, L1_WAVEFRONTS_SHARED_IDEAL, SHARED_LD_BANK_CONFLICTS, SHARED_ST_BANK_CONFLICTS,
    INST_EXECUTED_PCT,
)
#: Metrics a rule reads where a profile has them but that ``roofline profile`` does not collect (other
#: spellings of collected ones).
ALSO_READ: tuple[str, ...] = (GLOBAL_LD_BYTES_PER_SECTOR, GLOBAL_ST_BYTES_PER_SECTOR)

#: The ncu metrics that supply each kernel-table or analysis column a rule needs (named when the
#: column is unknown; the formulas are in :mod:`roofline.counting`).
COLUMN_METRICS: dict[str, tuple[str, ...]] = {
    "global_inst": ("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"),
    "l1_transactions": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    "shared_inst": ("smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"),
    "shared_transactions": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    "warp_inst": ("smsp__inst_executed.sum",),
    "inst_rate": ("smsp__inst_executed.sum",),
}


def is_count(metric: str) -> bool:
    """True for metrics that add up over launches (``.sum`` counters and source-counter sector totals).

    Everything else (percentages, ``.ratio``, ``.avg``, ``per_second``, launch attributes)
    is an intensive quantity and is combined as a time-weighted mean.
    """
    if metric.startswith(("memory_l2_theoretical_sectors", "derived__memory_l2_theoretical_sectors",
                          "memory_l1_wavefronts_shared", "derived__memory_l1_wavefronts_shared")):
        return True
    return metric.endswith(".sum")


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


#: The ncu section that collects each metric (``ncu --section NAME``), to name in hints.
SECTION_OF: dict[str, str] = {
    SM_THROUGHPUT: "SpeedOfLight",
    MEMORY_THROUGHPUT: "SpeedOfLight",
    WAVES_PER_SM: "LaunchStats",
    GLOBAL_LD_SECTORS: "MemoryWorkloadAnalysis_Tables",
    GLOBAL_LD_REQUESTS: "MemoryWorkloadAnalysis_Tables",
    GLOBAL_ST_SECTORS: "MemoryWorkloadAnalysis_Tables",
    GLOBAL_ST_REQUESTS: "MemoryWorkloadAnalysis_Tables",
    GLOBAL_LD_BYTES_PER_SECTOR_PCT: "MemoryWorkloadAnalysis_Tables",
    GLOBAL_ST_BYTES_PER_SECTOR_PCT: "MemoryWorkloadAnalysis_Tables",
    L1_HIT_RATE: "MemoryWorkloadAnalysis",
    L2_HIT_RATE: "MemoryWorkloadAnalysis",
    L2_THEORETICAL_SECTORS_GLOBAL: "SourceCounters",
    L2_THEORETICAL_SECTORS_GLOBAL_IDEAL: "SourceCounters",
    L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE: "SourceCounters",
    L1_WAVEFRONTS_SHARED: "SourceCounters",
    L1_WAVEFRONTS_SHARED_IDEAL: "SourceCounters",
    SHARED_LD_BANK_CONFLICTS: "MemoryWorkloadAnalysis_Tables",
    SHARED_ST_BANK_CONFLICTS: "MemoryWorkloadAnalysis_Tables",
}

"""The raw Nsight Compute metrics read as they are, not through a formula: those the guidance rules read.

The guidance (:mod:`roofline.guidance`) reads these from a kernel table's ``metrics`` frame (ncu's
metrics per launch, SI units; ncu's percentages stay in percent, 0..100) by the names given here;
``roofline profile`` collects them (:mod:`roofline.profiling.metricsets`). :data:`SECTION_OF` names the
ncu section that collects each, :data:`COLUMN_METRICS` the metrics that supply each kernel-table or
analysis column a rule needs, and :func:`is_count` which of them add up over launches. Also here, for
the packages that read a profile's ``metrics`` beyond the rules: the L2 size its device attributes
record (:data:`DEVICE_L2_BYTES`, the projection) and the prefixes that mark a metric as ncu's
(:data:`NCU_PREFIXES`, telling a GPU profile from a CPU one).
"""

from __future__ import annotations

# -- Beyond the rules: device attributes and metric names ---------------------------
#: The L2 size of the profile's GPU in bytes: a device attribute ncu records with every launch
#: (:func:`roofline.projection.machines.profile_l2_bytes`).
DEVICE_L2_BYTES = "device__attribute_l2_cache_size"
#: Name prefixes of Nsight Compute metrics (units of an NVIDIA GPU): a table whose ``metrics`` hold one
#: came from a GPU (:func:`roofline.machine.processor.table_processor`).
NCU_PREFIXES = ("sm__", "smsp__", "dram__", "lts__", "l1tex__", "gpu__", "gpc__", "device__attribute_", "launch__",
                "fbpa__", "tpc__", "idc__")

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

#: Metric names that are counts although they do not end in ``.sum``: the Source Counters' sector and
#: wavefront totals.
COUNT_PREFIXES = ("memory_l2_theoretical_sectors", "derived__memory_l2_theoretical_sectors",
                  "memory_l1_wavefronts_shared", "derived__memory_l1_wavefronts_shared")


def is_count(metric: str) -> bool:
    """True for metrics that add up over launches (``.sum`` counters and source-counter sector totals).

    Everything else (percentages, ``.ratio``, ``.avg``, ``per_second``, launch attributes)
    is an intensive quantity and is combined as a time-weighted mean.
    """
    return metric.startswith(COUNT_PREFIXES) or metric.endswith(".sum")


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

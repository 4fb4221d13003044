"""The analysis columns added to a kernel table by ``roofline.analysis.analyze``.

Declared as data, like the kernel table (see :mod:`roofline.kernels`). Levels are
the machine's memory levels that the table has bytes for (``l1``, ``l2``, ``dram``;
CPU machines may add ``l3``). NaN wherever an input is unknown.
"""

from __future__ import annotations

from roofline.kernels import Column

#: Per-level columns; ``{level}`` is replaced by each level name.
PER_LEVEL: tuple[Column, ...] = (
    Column("ai_{level}", "float64", "FLOP/B", "arithmetic intensity at the level: flops / {level}_bytes"),
    Column("bw_{level}", "float64", "B/s", "achieved bandwidth at the level: {level}_bytes / time_s"),
    Column("attainable_{level}", "float64", "FLOP/s", "min(compute_peak, ai_{level} x the level's bandwidth ceiling); with the peak unknown, the level's roof where it is below a lower bound on the peak, else NaN"),
    Column("bw_use_{level}", "float64", "", "bw_{level} / the level's bandwidth ceiling (0..1+)"),
)

COLUMNS: tuple[Column, ...] = (
    Column("flop_rate", "float64", "FLOP/s", "achieved FLOP/s: flops / time_s"),
    Column("compute_ceiling", "string", "", "machine compute key the kernel is held to, e.g. 'fp32', 'tensor_fp16', or 'mixed'"),
    Column("compute_peak", "float64", "FLOP/s", "the compute ceiling: FLOP-weighted harmonic mean of the peaks of the precisions the kernel uses; NaN when the machine lacks one"),
    Column("attainable", "float64", "FLOP/s", "min over levels of attainable_{level}"),
    Column("roofline_time_s", "float64", "s", "time at the roofline: max(flops / compute_peak, bytes_l / bandwidth_l over levels)"),
    Column("pct_of_roofline", "float64", "", "roofline_time_s / time_s (1.0 = on the roofline); defined for zero-FLOP kernels too"),
    Column("savable_time_s", "float64", "s", "max(0, time_s - roofline_time_s)"),
    Column("bound", "string", "", "the ceiling that binds: a memory level ('dram', 'l2', 'l1') or the compute key; a memory level also when a compute peak is missing but a lower bound on it shows memory binds"),
    Column("region", "string", "", "'compute-bound', 'memory-bound', 'poor' (compute and bandwidth use both < 50%), "
           "'inconsistent' (a figure beyond a physical limit: see inconsistent), or 'unknown'"),
    Column("compute_use", "float64", "", "flop_rate / compute_peak"),
    Column("bw_use", "float64", "", "max over levels of bw_use_{level}"),
    Column("locality", "string", "", "cache-locality reading from the intensities: 'streaming', 'l2-reuse', 'l1-reuse', 'l1-l2-reuse', or <NA>"),
    Column("time_share", "float64", "", "time_s / total time of the table"),
    Column("inconsistent", "string", "", "the physical limits the row's figures break, '; '-joined (achieved above a "
           "ceiling or the spec, > 32 sectors or wavefronts per instruction; roofline.analysis.limits), <NA> when none"),
)


def level_columns(levels: list[str]) -> list[Column]:
    """The per-level columns for the given levels, with names and descriptions filled in."""
    out = []
    for level in levels:
        for c in PER_LEVEL:
            out.append(Column(c.name.format(level=level), c.dtype, c.unit, c.description.format(level=level)))
    return out

#: Instruction-roofline columns added to every analysis (:mod:`roofline.analysis.patterns`), whatever
#: the work: warp-instruction throughput, instruction intensity per level, and the memory-access
#: pattern of loads and stores (the walls of Ding and Williams's Instruction Roofline Model).
INSTRUCTION_COLUMNS: tuple[Column, ...] = (
    Column("inst_rate", "float64", "inst/s", "warp instructions per second: warp_inst / time_s (x 1e-9 = warp GIPS)"),
    Column("ii_l1", "float64", "inst/transaction", "instruction intensity at L1: warp_inst / l1_transactions"),
    Column("ii_shared", "float64", "inst/transaction", "instruction intensity in shared memory: warp_inst / shared_transactions"),
    Column("ii_l2", "float64", "inst/transaction", "instruction intensity at L2: warp_inst / l2_transactions"),
    Column("ii_dram", "float64", "inst/transaction", "instruction intensity at DRAM: warp_inst / dram_transactions"),
    Column("global_ii", "float64", "inst/transaction", "global and local memory warp instructions (LD/ST, LDGSTS, "
           "atomics, reductions) per L1 sector of theirs: 1 on the stride-0 wall, 1/4 on the unit-stride wall "
           "(4-byte words), 1/32 on the random wall"),
    Column("shared_ii", "float64", "inst/transaction", "shared-memory warp instructions (LDS, STS, LDSM, STSM, "
           "atomics, LDGSTS) per wavefront of theirs: 1 without bank conflicts, 1/n with n-way conflicts; NaN where "
           "TMA ran (its shared traffic has no instructions to pair with: pattern_note)"),
    Column("global_pattern", "string", "", "global access pattern from global_ii: 'stride-0', 'unit-stride', "
           "'strided' or 'random'; <NA> when unknown or no global loads/stores"),
    Column("shared_pattern", "string", "", "shared-memory pattern from shared_ii: 'conflict-free' or "
           "'<n>-way conflicts' (n = wavefronts per instruction, rounded); <NA> when unknown or none"),
    Column("pattern_note", "string", "", "traffic the walls leave out, in words: TMA instructions (no shared-wall "
           "figure then) and warpgroup MMAs reading shared memory; <NA> when none"),
)

"""Nsight Compute's display names -> metric names, for exports made with ``--section``/``--set``.

A details-page export of a run made with sections (``--set full``, ``--section SpeedOfLight``...)
names each value by the label its section file gives it ("Duration", "DRAM Throughput") and
the section's display name ("GPU Speed Of Light Throughput"), not by the metric. This table
maps them back to the metric each label shows, so such a file feeds the same formulas and
guidance rules as a ``--metrics`` export. A label that two sections use for different metrics
("Memory Throughput": a percentage in Speed of Light, bytes per second in Memory Workload
Analysis) is told apart by the section.

Source: the ``Header`` metrics (``Label``/``Name`` pairs) of the section files Nsight Compute
2024.1.1 ships (``sections/*.section``), and for the roofline chart section its ``Metrics`` and
chart blocks; tests/test_ncu_display.py checks every entry against the
section files of the installed ncu.
"""

from __future__ import annotations

#: section display name -> {label: metric name}
SECTIONS: dict[str, dict[str, str]] = {
    "GPU Speed Of Light Throughput": {
        "Duration": "gpu__time_duration.sum",
        "Elapsed Cycles": "gpc__cycles_elapsed.max",
        "SM Frequency": "gpc__cycles_elapsed.avg.per_second",
        "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
        "SM Active Cycles": "sm__cycles_active.avg",
        "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "Memory Throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    },
    "Memory Workload Analysis": {
        "Memory Throughput": "dram__bytes.sum.per_second",
        "Mem Busy": "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
        "Max Bandwidth": "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed",
        "Mem Pipes Busy": "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "L1/TEX Hit Rate": "l1tex__t_sector_hit_rate.pct",
        "L2 Hit Rate": "lts__t_sector_hit_rate.pct",
    },
    "Compute Workload Analysis": {
        "Executed Ipc Elapsed": "sm__inst_executed.avg.per_cycle_elapsed",
        "Executed Ipc Active": "sm__inst_executed.avg.per_cycle_active",
        "Issued Ipc Active": "sm__inst_issued.avg.per_cycle_active",
        "SM Busy": "sm__instruction_throughput.avg.pct_of_peak_sustained_active",
        "Issue Slots Busy": "sm__inst_issued.avg.pct_of_peak_sustained_active",
    },
    "Instruction Statistics": {
        "Executed Instructions": "smsp__inst_executed.sum",
        "Issued Instructions": "smsp__inst_issued.sum",
    },
    "Launch Statistics": {
        "Grid Size": "launch__grid_size",
        "Block Size": "launch__block_size",
        "Registers Per Thread": "launch__registers_per_thread",
        "Threads": "launch__thread_count",
        "Waves Per SM": "launch__waves_per_multiprocessor",
        "# SMs": "launch__sm_count",
        "Static Shared Memory Per Block": "launch__shared_mem_per_block_static",
        "Dynamic Shared Memory Per Block": "launch__shared_mem_per_block_dynamic",
    },
    "Occupancy": {
        "Theoretical Occupancy": "sm__maximum_warps_per_active_cycle_pct",
        "Achieved Occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
        "Achieved Active Warps Per SM": "sm__warps_active.avg.per_cycle_active",
    },
    # The roofline chart section (Metrics and chart blocks, not a header): the FP32/FP64 rates
    # per cycle and the clocks Nsight Compute's own roofline multiplies them by.
    "GPU Speed Of Light Roofline Chart": {
        "Theoretical Predicated-On FFMA Thread Instructions Executed":
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
        "Theoretical Predicated-On DFMA Thread Instructions Executed":
            "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
        "Predicated-On FFMA Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
        "Predicated-On DFMA Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed",
        "Theoretical Predicated-On FFMA Operations": "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
        "Theoretical Predicated-On DFMA Operations": "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",
        "SM Frequency": "smsp__cycles_elapsed.avg.per_second",
        "Theoretical DRAM Bytes Accessible": "dram__bytes.sum.peak_sustained",
        "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
        "Predicated-On FFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
        "Predicated-On DFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2",
        "Predicated-On FADD Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
        "Predicated-On FMUL Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
        "Predicated-On DADD Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
        "Predicated-On DMUL Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
        "DRAM Bandwidth": "dram__bytes.sum.per_second",
    },
    "GPU and Memory Workload Distribution": {
        "Total SM Elapsed Cycles": "sm__cycles_elapsed.sum",
        "Total DRAM Elapsed Cycles": "dram__cycles_elapsed.sum",
        "Average SM Active Cycles": "sm__cycles_active.avg",
    },
}

#: Sections whose labels repeat other sections' for other metrics of the same quantity (the roofline
#: chart's "SM Frequency" is smsp's clock, Speed of Light's gpc's): left out of UNAMBIGUOUS.
CHART_SECTIONS = ("GPU Speed Of Light Roofline Chart",)
#: Labels that mean one metric whichever section shows them (for exports without a section column).
_BY_LABEL: dict[str, str] = {}
for _section, _labels in SECTIONS.items():
    if _section not in CHART_SECTIONS:
        for _label, _metric in _labels.items():
            _BY_LABEL.setdefault(_label, _metric)
UNAMBIGUOUS: dict[str, str] = {
    label: metric for label, metric in _BY_LABEL.items()
    if len({labels[label] for name, labels in SECTIONS.items() if label in labels and name not in CHART_SECTIONS}) == 1
}


def is_display_name(name: str) -> bool:
    """True for a label ("Duration"), False for a metric name (``gpu__time_duration.sum``)."""
    return "__" not in name


def metric_for(label: str, section: str | None) -> str | None:
    """The metric a section's label shows; None when the table does not know it."""
    if section is not None and section in SECTIONS:
        return SECTIONS[section].get(label)
    return UNAMBIGUOUS.get(label)

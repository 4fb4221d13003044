"""The Python API, and the command line's one library: read, analyze, plot, compare, project
(:mod:`roofline.api.core`; a large CSV parsed while the rest loads: :mod:`roofline.api.parse_ahead`; which engine reads: :mod:`roofline.api.engines`; out of core:
:mod:`roofline.api.out_of_core`; where a timeline's time went: :mod:`roofline.api.production`), measure a machine (:mod:`roofline.api.hardware`), profile a program and
merge ranks (:mod:`roofline.api.profiling`), write the files (:mod:`roofline.api.outputs`), advice and
comparisons' tables (:mod:`roofline.api.reports`).

    >>> from roofline import api
    >>> result = api.analyze("report.csv", machine="h100-sxm")   # doctest: +SKIP
    >>> result.frame.head()                                       # doctest: +SKIP
    >>> api.plot(result).savefig("roofline.png")                  # doctest: +SKIP
    >>> api.measure_machine(api.processor_to_measure(cpu=True), mode="quick").machine   # doctest: +SKIP

Each name loads its module on first use (:mod:`roofline._lazy`): ``roofline machine --spec`` needs
no pandas, ``roofline --help`` nothing at all. The modules themselves import what they use at their
top, but for the charts' libraries (matplotlib, plotly), the benchmarks and the advice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofline._lazy import attach

#: Public name -> the api module that defines it.
_NAMES = {
    **dict.fromkeys(("Analysis", "Comparison", "Data", "KernelTable", "Machine", "MachineArg", "Projection", "PathArg",
                     "analyze", "at_depth", "compare", "example_files", "instruction_analysis", "load_machine",
                     "machine_for", "plot", "project", "read", "select_launches", "table_of"), "roofline.api.core"),
    **dict.fromkeys(("Breakdown", "ReplayTimes", "breakdown", "replay_times"), "roofline.api.production"),
    **dict.fromkeys(("Measurement", "Processor", "check_ert_export", "cpu_machine_for", "ert_document", "gpu_specs",
                     "load_per_core", "measure_machine", "processor_to_measure", "reliability_warning",
                     "save_sweep", "theoretical"), "roofline.api.hardware"),
    **dict.fromkeys(("AHEAD_BYTES", "ReadAhead", "read_ahead"), "roofline.api.parse_ahead"),
    **dict.fromkeys(("Engine", "check_out_of_core", "engine_for", "rank_timelines"), "roofline.api.engines"),
    **dict.fromkeys(("RankBreakdown", "analyze_out_of_core", "rank_breakdown"), "roofline.api.out_of_core"),
    **dict.fromkeys(("Outcome", "ProfileSettings", "merge_ranks", "profile", "rank"), "roofline.api.profiling"),
    **dict.fromkeys(("OutputRequest", "check_drawable", "check_files", "check_not_input", "check_replaceable",
                     "check_targets", "check_writable", "figure_bytes", "input_files", "is_stdio", "record_text",
                     "save", "write_all", "write_bytes", "write_text"), "roofline.api.outputs"),
    **dict.fromkeys(("EXIT_SLOWER", "advice", "changes_table", "comparison_to_dict", "diagnosis",
                     "measured_vs_estimated"), "roofline.api.reports"),
}
_SUBMODULES = ("core", "engines", "hardware", "out_of_core", "outputs", "parse_ahead", "production", "profiling", "reports")

__all__ = sorted(_NAMES)

__getattr__, __dir__ = attach(__name__, _NAMES, _SUBMODULES)

if TYPE_CHECKING:  # what the names are, for type checkers and readers
    from roofline.api.core import (Analysis, Comparison, Data, KernelTable, Machine, MachineArg, Projection, PathArg,
                                   analyze, at_depth, compare, example_files, instruction_analysis, load_machine,
                                   machine_for, plot, project, read, select_launches, table_of)
    from roofline.api.production import Breakdown, ReplayTimes, breakdown, replay_times
    from roofline.api.outputs import (OutputRequest, check_drawable, check_files, check_not_input, check_replaceable,
                                    check_targets, check_writable, figure_bytes, input_files, is_stdio, record_text,
                                    save, write_all, write_bytes, write_text)
    from roofline.api.hardware import (Measurement, Processor, check_ert_export, cpu_machine_for, ert_document,
                                       gpu_specs, load_per_core, measure_machine, processor_to_measure,
                                       reliability_warning, save_sweep, theoretical)
    from roofline.api.parse_ahead import AHEAD_BYTES, ReadAhead, read_ahead
    from roofline.api.engines import Engine, check_out_of_core, engine_for, rank_timelines
    from roofline.api.out_of_core import RankBreakdown, analyze_out_of_core, rank_breakdown
    from roofline.api.profiling import Outcome, ProfileSettings, merge_ranks, profile, rank
    from roofline.api.reports import (EXIT_SLOWER, advice, changes_table, comparison_to_dict, diagnosis,
                                      measured_vs_estimated)

"""roofline: hierarchical roofline analysis of GPU and CPU programs.

Data flows one way: readers -> one kernel table -> machine resolve (the ceilings) -> analysis ->
guidance -> views -> writing; the CLI is a thin layer over :mod:`roofline.api`. docs/architecture.md
draws the path with one line per package.

    >>> import roofline
    >>> table = roofline.read(["profile.csv"])               # doctest: +SKIP
    >>> result = roofline.analyze(table, machine="v100.json")  # doctest: +SKIP
    >>> fig = roofline.plot(result)                            # doctest: +SKIP
    >>> roofline.compare(before, after).totals                 # doctest: +SKIP
    >>> roofline.project("report.ncu-rep", to="h200").totals     # doctest: +SKIP
    >>> roofline.machine.theoretical("h100-sxm")               # doctest: +SKIP

Importing the package has no side effects and imports nothing else: every public name
and submodule (``roofline.machine``, ``roofline.torch``, ``roofline.views`` ...) is
imported on first use, and no plotting, GPU or PyTorch library is imported until a
function that needs it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofline._lazy import attach

from roofline._version import __version__

#: Public functions and classes -> the module that defines them.
_NAMES = {
    "Machine": "roofline.machine.model",
    "KernelTable": "roofline.kernels",
    "Analysis": "roofline.analysis.result",
    "Comparison": "roofline.comparison",
    "RooflineError": "roofline.errors",
    "InputError": "roofline.errors",
    "MachineError": "roofline.errors",
    "read": "roofline.api",
    "analyze": "roofline.api",
    "plot": "roofline.api",
    "load_machine": "roofline.api",
    "compare": "roofline.api",
    "project": "roofline.api",
    "breakdown": "roofline.api",
    "Projection": "roofline.projection",
    "phase": "roofline.phases",
    # The measurement API lives in roofline.measuring and comparisons in roofline.comparison (compare
    # itself, taking profiles as analyze does, in roofline.api): a submodule named like a function would
    # replace that function on the package once imported.
    "measure": "roofline.measuring",
    "measured": "roofline.measuring",
    "collecting": "roofline.measuring",
    "Collector": "roofline.measuring",
}

#: Subpackages and modules reachable as attributes after ``import roofline``.
_SUBMODULES = (
    "analysis", "api", "attribution", "bench", "cli", "comparison", "counting", "engine", "errors", "guidance", "kernels",
    "machine", "measuring", "phases", "profiling", "projection", "readers", "torch", "units", "views", "writing",
)

__getattr__, __dir__ = attach(__name__, _NAMES, _SUBMODULES, eager=("__version__",))

__all__ = ["__version__", *_NAMES, "machine", "torch"]

if TYPE_CHECKING:  # what type checkers and editors see; at run time these are resolved lazily
    from roofline import machine, torch
    from roofline.analysis.result import Analysis
    from roofline.api import analyze, breakdown, compare, load_machine, plot, project, read
    from roofline.comparison import Comparison
    from roofline.errors import InputError, MachineError, RooflineError
    from roofline.kernels import KernelTable
    from roofline.machine.model import Machine
    from roofline.measuring import Collector, collecting, measure, measured
    from roofline.phases import phase
    from roofline.projection import Projection

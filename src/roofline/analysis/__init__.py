"""Pure roofline analysis over a kernel table: no I/O, no plotting.

``analyze(table, machine, by=...)`` returns an :class:`Analysis` whose ``frame`` has
every kernel-table column plus the columns declared in :mod:`roofline.analysis.columns`.
:func:`roofline.analysis.breakdown.breakdown` cuts a timeline's wall time per device into kernel time by
bound, exposed communication and idle gaps by cause (:mod:`roofline.analysis.intervals`).
"""

from roofline.analysis.result import Analysis
from roofline.analysis.roofline import analyze

__all__ = ["Analysis", "analyze"]

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.analysis.<module>`` after ``import roofline``).
_SUBMODULES = ("breakdown", "columns", "estimate", "compute_peak", "intervals", "patterns", "rank_breakdown",
               "replay", "result", "roofline", "work")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=__all__)

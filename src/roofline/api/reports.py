"""What the API says about an analysis besides its table: advice, a kernel's diagnosis, the
measured-vs-estimated comparison, and a comparison's table of changes and JSON document.

The advice and diagnoses come from :mod:`roofline.guidance`, loaded when asked for (an
``ImportError`` says it is not installed).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from roofline.analysis.estimate import measured_vs_estimated as _measured_vs_estimated
from roofline.analysis.result import Analysis
from roofline.comparison import EXIT_SLOWER, changes_table, comparison_to_dict
from roofline.kernels import KernelTable

__all__ = ["EXIT_SLOWER", "advice", "changes_table", "comparison_to_dict", "diagnosis", "measured_vs_estimated"]


def advice(analysis: Analysis, metrics: KernelTable | pd.DataFrame | None = None, *, top: int = 5) -> Any:
    """The "what to work on" table for the ``top`` kernels of ``analysis`` (a rich renderable);
    ``metrics``: the KernelTable analysed, or its raw metrics (:func:`roofline.guidance.advice_renderable`)."""
    from roofline.guidance import advice_renderable

    return advice_renderable(analysis, metrics, top=top)


def diagnosis(analysis: Analysis, metrics: KernelTable | pd.DataFrame | None, kernel: str) -> Any:
    """The full diagnosis of the kernels whose name matches ``kernel`` (regular expression or exact
    name), longest first, as a rich renderable (:func:`roofline.guidance.explain_renderable`)."""
    from roofline.guidance import explain_renderable

    return explain_renderable(analysis, metrics, kernel)


def measured_vs_estimated(measured: KernelTable, estimated: KernelTable, *, by: str = "op",
                          depth: int | None = None) -> pd.DataFrame:
    """Measured vs estimated time (s), FLOPs and DRAM bytes (B) per operator and phase (``by="op"``)
    or per module path cut to ``depth`` components (``by="module"``), with their ratios
    (:func:`roofline.analysis.estimate.measured_vs_estimated`)."""
    return _measured_vs_estimated(measured, estimated, by=by, depth=depth)

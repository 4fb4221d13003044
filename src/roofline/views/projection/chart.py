"""Charts of a projection: each kernel here (hollow) with an arrow to where it lands there (filled).

The before/after roofline of :mod:`roofline.views.chart.compare`, fed
``compare(proj.source_analysis, proj.target_analysis)``: the source's ceilings solid, the target's
dashed, the two sides called "here" and "there", the title the program's projection and what gets
slower there (:func:`~roofline.views.projection.table.projection_title`). The kernels drawn are those
whose time changes most, faster or slower (not the longest ones: a kernel that gets slower there is
drawn before one that gains less time than it loses). Kernels that could not be projected have no time
there, so only their point here is drawn, after the others. Both functions return a Figure; the caller
saves it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from roofline.comparison import Comparison, compare
from roofline.projection import Projection
from roofline.views.chart.compare import comparison_figure, comparison_plotly
from roofline.views.projection.table import projection_title

#: The words for the two sides of a projection (legend, hover): measured here, projected there.
SIDES = ("here", "there")


def projection_comparison(proj: Projection) -> Comparison:
    """The kernels here and there, matched, for the before/after chart machinery: ordered by how much
    their time changes (``|time_change_s|``, largest first), those without a time there last."""
    comp = compare(proj.source_analysis, proj.target_analysis)
    change = np.abs(comp.frame["time_change_s"].to_numpy(dtype=float))
    order = np.argsort(-np.where(np.isfinite(change), change, -np.inf), kind="stable")
    return dataclasses.replace(comp, frame=comp.frame.iloc[order].reset_index(drop=True))


def projection_figure(proj: Projection, *, top: int = 15, ceilings: str = "used", width: float = 7.0) -> Any:
    """Matplotlib Figure: the ``top`` kernels (by how much their time changes, faster or slower) on both
    machines' rooflines, an arrow per kernel and memory level from here to there. ``ceilings``:
    ``"used"`` or ``"all"`` (:func:`~roofline.views.chart.compare.comparison_figure`)."""
    return comparison_figure(projection_comparison(proj), top=top, title=projection_title(proj, sep="\n"),
                             width=width, ceilings=ceilings, sides=SIDES)


def projection_plotly(proj: Projection, *, top: int = 15, ceilings: str = "used") -> Any:
    """Plotly Figure of :func:`projection_figure` (names and numbers in the hover text)."""
    return comparison_plotly(projection_comparison(proj), top=top, title=projection_title(proj), ceilings=ceilings,
                             sides=SIDES)

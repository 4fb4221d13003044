"""A machine's ceilings on their own: the roofs, without kernels (the full chart lives in the views).

``plot_machine(machine) -> Figure``: attainable FLOP/s against arithmetic intensity (FLOP/B), one
roof per memory level (``min(peak, AI x bandwidth)``) under each compute ceiling, log axes,
decimal units. Object-oriented matplotlib; the caller saves the figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from roofline.machine.model import Machine
from roofline.units import format_si

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def plot_machine(machine: Machine, title: str | None = None) -> Figure:
    """Roofs of ``machine``: one line per memory level, one flat line per compute ceiling."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    fig = Figure(figsize=(7, 4.8), layout="constrained")
    ax = fig.add_subplot()
    peaks = {k: v for k, v in machine.compute.items()}
    top = max(peaks.values()) if peaks else None
    bws = dict(machine.memory)
    lo_ai = 1e-2
    hi_ai = max([1e2] + [10 * top / bw for bw in bws.values()] if top else [1e2])
    ai = np.logspace(np.log10(lo_ai), np.log10(hi_ai), 400)
    for level, bw in bws.items():
        y = ai * bw if top is None else np.minimum(ai * bw, top)
        ax.plot(ai, y, lw=2, label=f"{level.upper()} {format_si(bw, 'B/s')}")
    for key, peak in peaks.items():
        ax.axhline(peak, color="black", lw=1, ls="--" if key != max(peaks, key=lambda k: peaks[k]) else "-")
        ax.annotate(f"{key} {format_si(peak, 'FLOP/s')}", (hi_ai, peak), ha="right", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("attainable performance")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_si(v, "FLOP/s")))
    ax.grid(True, which="major", alpha=0.3)
    if bws:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title or f"{machine.name} ({machine.source})")
    return fig

"""Where a timeline's time went, as a chart: one horizontal stacked bar per device and window
(:class:`~roofline.analysis.breakdown.Breakdown`), its wall time cut into kernel time by bound, exposed
communication and copies by kind, and idle time by cause. A plotly Figure for the HTML report."""

from __future__ import annotations

from typing import Any

from roofline.analysis.breakdown import Breakdown
from roofline.views.time_breakdown import shown_windows

#: Colours by family: kernels in blues, communication and copies in oranges, idle in greys.
_FAMILY_COLOURS = {"kernels": ("#1f4e79", "#2e75b6", "#5b9bd5", "#9dc3e6", "#bdd7ee"),
                   "communication": ("#c55a11", "#ed7d31", "#f4b183", "#f8cbad", "#fbe5d6"),
                   "idle": ("#404040", "#7f7f7f", "#a6a6a6", "#d9d9d9")}


def breakdown_plotly(breakdown: Breakdown, top: int | None = 10) -> Any:
    """The stacked bars (a plotly Figure), the ``top`` longest windows per device, milliseconds on x."""
    import plotly.graph_objects as go

    windows = shown_windows(breakdown, top)
    names = [f"GPU {w.device}: {w.name}" for w in windows]
    fig = go.Figure()
    for family, title, parts in (("kernels", "kernel", lambda w: w.kernel_s),
                                 ("communication", "exposed", lambda w: w.communication_s),
                                 ("idle", "idle", lambda w: w.idle_s)):
        keys = sorted({k for w in windows for k in parts(w)}, key=lambda k: -sum(parts(w).get(k, 0.0) for w in windows))
        colours = _FAMILY_COLOURS[family]
        for i, key in enumerate(keys):
            fig.add_trace(go.Bar(y=names, x=[parts(w).get(key, 0.0) * 1e3 for w in windows], orientation="h",
                                 name=f"{title}: {key}", marker_color=colours[i % len(colours)],
                                 hovertemplate="%{y}<br>" + f"{title}: {key}" + ": %{x:.4g} ms<extra></extra>"))
    fig.update_layout(barmode="stack", height=max(260, 60 + 34 * len(windows)), xaxis_title="time (ms)",
                      yaxis={"autorange": "reversed"}, legend={"orientation": "h", "y": -0.25},
                      margin={"l": 10, "r": 10, "t": 30, "b": 10}, template="plotly_white")
    return fig

"""Views of a :class:`~roofline.projection.Projection` (``roofline project``), in one place.

- :func:`projection_table`, :func:`phase_table` -> rich Tables (:mod:`roofline.views.projection.table`)
- :func:`projection_figure` -> matplotlib Figure, :func:`projection_plotly` -> plotly Figure: each kernel
  here with an arrow to there (:mod:`roofline.views.projection.chart`)
- :func:`projection_html` -> str: one self-contained page (:mod:`roofline.views.projection.html`)
- :func:`projection_to_dict` -> dict, schema ``roofline.projection/1`` (:mod:`roofline.views.projection.json_out`)

They take data and return data; the caller prints or saves. matplotlib and plotly are imported
only when a chart is drawn.
"""

from __future__ import annotations

from roofline.views.projection.chart import projection_figure, projection_plotly
from roofline.views.projection.html import projection_html
from roofline.views.projection.json_out import projection_to_dict
from roofline.views.projection.table import phase_table, projection_table, projection_title

__all__ = ["phase_table", "projection_figure", "projection_html", "projection_plotly", "projection_table",
           "projection_title", "projection_to_dict"]

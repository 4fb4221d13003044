"""Views of an :class:`~roofline.analysis.Analysis`: they take data and return data.

- :mod:`roofline.views.chart.static`: ``roofline_figure`` -> matplotlib Figure
- :mod:`roofline.views.chart.interactive`: ``roofline_plotly`` -> plotly Figure, ``roofline_html`` -> str
- :mod:`roofline.views.chart.instructions`: ``instruction_figure`` -> matplotlib Figure (the instruction
  roofline and the memory-pattern walls)
- :mod:`roofline.views.chart.instructions_interactive`: ``instruction_plotly`` -> plotly Figure,
  ``instruction_html`` -> str
- :mod:`roofline.views.chart.rows`: ``undrawn_kernels`` -> the kernels a chart cannot place, with why
- :mod:`roofline.views.terminal`: ``kernel_table_renderable``, ``summary_renderable`` -> rich renderables
- :mod:`roofline.views.json_out`: ``analysis_to_dict`` -> dict (schema ``roofline.analysis/1``)
- :mod:`roofline.views.report`: the HTML report (``report_html`` -> str), one offline file
- :mod:`roofline.views.projection`: the views of a projection (``roofline project``)
- :mod:`roofline.views.notebook`: the notebook display of an analysis (registered with IPython)
- :mod:`roofline.views.machine_table`: ``ceilings_table``, ``specs_table`` -> rich tables of a machine's ceilings
- :mod:`roofline.kernels.labels`: ``short_name``, ``short_names`` for C++ kernel names

Import the module you need: importing this package imports neither matplotlib nor plotly.
"""

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.views.<module>`` after ``import roofline``).
_SUBMODULES = ("chart", "json_out", "machine_table", "notebook", "projection", "report", "terminal", "work_words")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=())

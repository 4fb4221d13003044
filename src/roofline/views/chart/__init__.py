"""Roofline charts: static (matplotlib) and interactive (plotly), hierarchical and instruction rooflines,
before/after, a machine's roofs alone, and what they share (:mod:`.style`, :mod:`.layout`, :mod:`.rows`)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("compare", "instructions", "instructions_interactive", "interactive", "layout", "machine", "rows", "static", "style")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

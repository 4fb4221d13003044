"""The HTML report: one self-contained, offline file (:mod:`.html`), its drill-down and its assets."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("assets", "drilldown", "html")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

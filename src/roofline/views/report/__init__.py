"""The HTML report: one self-contained, offline file (:mod:`.html`), its kernel table (:mod:`.kernel_table`),
its cells' escaping and values (:mod:`.cells`), its drill-down (:mod:`.drilldown`) and its assets (:mod:`.assets`)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("assets", "cells", "drilldown", "html", "kernel_table")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

"""Readers of machine files: ours, ERT's ``roofline.json`` and ``sum`` files, NERSC's plotting input."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("ert", "files")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

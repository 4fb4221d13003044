"""Writing files: safely (:mod:`.safe`: never an input, never a user's file without --force), an analysis'
files (:mod:`.analysis_files`), figures (:mod:`.figures`), a record of what a command wrote
(:mod:`.record`), and ceilings in ERT's layout (:mod:`.ert_json`)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("analysis_files", "ert_json", "figures", "record", "safe")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

"""The Nsight Compute wing: every reader of ncu output and everything that knows its layouts.

- CSV exports: :mod:`.layout` (where the table starts, how it is written), :mod:`.numbers`, :mod:`.columns`,
  :mod:`.csv_export` (both pages), :mod:`.raw` (over :mod:`.raw_columns`, its parse, which loads no pandas,
  and :mod:`.ahead`, that parse started while the rest of a program loads; :mod:`.grouped` reads ncu's
  digit-grouped numbers with a compiled loop), :mod:`.details`, :mod:`.summary`, :mod:`.display`
  (display names of sections -> metric names); reports: :mod:`.rep` (``.ncu-rep``); :mod:`.printed`.
- :mod:`.raw_profile` (what one input holds before counting), :mod:`.combine` (which inputs describe the
  same launches, and merging them), :mod:`.matching` (matching launches across inputs), :mod:`.count` (a raw profile counted by :mod:`roofline.counting` into a kernel table).
- :mod:`.names`: kernel names and NVTX ranges as ncu prints them.
- :mod:`.peaks`: the machine a profile's own peak metrics describe; :mod:`.peak_columns`: the metrics it reads.
"""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("ahead", "columns", "combine", "count", "csv_export", "details", "display", "grouped", "layout", "matching", "names", "numbers", "peak_columns", "peaks", "printed", "raw", "raw_columns", "raw_profile", "rep", "summary")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

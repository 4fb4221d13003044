"""Nsight Systems timelines: the SQLite export (``nsys export --type sqlite``), and ``.nsys-rep``
reports exported through ``nsys`` when it is on PATH.

A timeline has what Nsight Compute's replay does not: the kernels' times as the program ran them
(overlapping on streams, beside communication), and every launch of a whole run. It has no
counters: FLOPs and bytes are unknown in a timeline's kernel table.

- :mod:`~roofline.readers.nsys.export`: the export's tables across nsys versions (2020-2026), read
  with :mod:`sqlite3` into pandas.
- :mod:`~roofline.readers.nsys.ranges`: the NVTX ranges open around each launch on the CPU side.
- :mod:`~roofline.readers.nsys.timeline`: one timeline as a kernel table (:func:`read_timeline`).
- :mod:`~roofline.readers.nsys.join`: a timeline's launches with the counts of a profile of the same
  program (production-time roofline).
- :mod:`~roofline.readers.nsys.capture`: a capture a target-only nsys left (``.qdstrm``) imported into a
  report by Nsight Systems' QdstrmImporter.
- :mod:`~roofline.readers.nsys.window`: which launches of a timeline a counting run should profile.
- :mod:`~roofline.readers.nsys.gpu_activity`: the rest of the timeline, carried with the table: copies,
  memsets, the host's launching and synchronizing calls, the repeating outermost ranges (steps).
"""

from roofline._lazy import attach

#: Nsight Systems reports, which ``nsys export`` turns into SQLite, and captures a target-only nsys did not
#: import (``.qdstrm``, imported first: :mod:`~roofline.readers.nsys.capture`); the format is told by the name.
REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".qdstrm")

#: Modules reachable as attributes.
_SUBMODULES = ("capture", "export", "gpu_activity", "join", "ranges", "timeline", "window")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=("REPORT_SUFFIXES",))

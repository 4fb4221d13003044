"""Which AMD tool wrote a path, and its reader: the one seam :mod:`roofline.readers.dispatch` calls."""

from __future__ import annotations

from pathlib import Path

from roofline.kernels import KernelTable
from roofline.readers.amd import omniperf, rocprof_outputs

#: The kinds of AMD input, as :func:`amd_kind` names them.
AMD_KINDS = ("omniperf", rocprof_outputs.KIND)


def amd_kind(path: Path) -> str | None:
    """``"omniperf"`` for an Omniperf / rocprof-compute workload folder or a file of one; ``"rocprof"`` for
    a rocprofv3 output folder or file, or rocprof v1's results (:mod:`roofline.readers.amd.rocprof_outputs`);
    None otherwise."""
    if omniperf.is_workload(path):
        return "omniperf"
    return rocprof_outputs.rocprof_kind(path)


def amd_input(path: Path) -> Path:
    """What is read for ``path`` of an AMD kind: a workload's folder for any file of it (read once); a
    rocprof output as given (a file is read with its run's companions)."""
    if not path.is_dir() and omniperf.is_workload(path):  # a workload's file: its folder, read once
        return path.parent
    return path


def read_amd(path: Path, kind: str) -> KernelTable:
    """The kernel table of an AMD input of ``kind`` (:func:`amd_kind`)."""
    if kind == "omniperf":
        return omniperf.read_workload(path)
    if kind == rocprof_outputs.KIND:
        return rocprof_outputs.read_rocprof(path)
    raise ValueError(f"not an AMD input kind: {kind!r}")

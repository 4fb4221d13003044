"""Which AMD tool wrote a path, and its reader: the one seam :mod:`roofline.readers.dispatch` calls."""

from __future__ import annotations

from pathlib import Path

from roofline.kernels import KernelTable
from roofline.readers.amd import omniperf

#: The kinds of AMD input, as :func:`amd_kind` names them.
AMD_KINDS = ("omniperf",)


def amd_kind(path: Path) -> str | None:
    """``"omniperf"`` for an Omniperf / rocprof-compute workload folder or a file of one; None otherwise."""
    if omniperf.is_workload(path):
        return "omniperf"
    return None


def amd_input(path: Path) -> Path:
    """What is read for ``path`` of an AMD kind: a workload's folder for any file of it (read once)."""
    return path if path.is_dir() else path.parent


def read_amd(path: Path, kind: str) -> KernelTable:
    """The kernel table of an AMD input of ``kind`` (:func:`amd_kind`)."""
    if kind == "omniperf":
        return omniperf.read_workload(path)
    raise ValueError(f"not an AMD input kind: {kind!r}")

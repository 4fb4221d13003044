"""Which AMD tool wrote a path, and its reader: the one seam :mod:`roofline.readers.dispatch` calls."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from roofline.readers.amd import kinds

if TYPE_CHECKING:
    from roofline.kernels import KernelTable

#: The kinds of AMD input, as :func:`amd_kind` names them.
AMD_KINDS = ("omniperf", kinds.KIND)


def amd_kind(path: Path, head: bytes | None = None) -> str | None:
    """``"omniperf"`` for an Omniperf / rocprof-compute workload folder or a file of one; ``"rocprof"`` for
    a rocprofv3 output folder or file, or rocprof v1's results (:mod:`roofline.readers.amd.rocprof_outputs`);
    None otherwise. ``head``: a file's first bytes when the caller read them already."""
    if head is not None:  # a file whose first bytes the caller holds: told by its name and content, no stat
        if path.name in kinds.FILE_NAMES and kinds.is_workload(path):
            return "omniperf"
        return kinds.KIND if kinds.file_kind(path, head) is not None else None
    if kinds.is_workload(path):
        return "omniperf"
    return kinds.rocprof_kind(path)


def amd_folder(path: Path, *, is_dir: bool | None = None) -> Path | None:
    """What :func:`roofline.readers.dispatch` reads in place of ``path``: an AMD output folder as it is
    (not expanded into its files), a workload's folder for any file of it (read once); None for anything
    else (a rocprof file is read as given, its kind told by its content). ``is_dir``: whether ``path``
    is a folder, when the caller knows (None: looked up)."""
    if path.is_dir() if is_dir is None else is_dir:
        return path if amd_kind(path) is not None else None
    return path.parent if kinds.is_workload(path, is_dir=False) else None


def read_amd(path: Path, kind: str) -> KernelTable:
    """The kernel table of an AMD input of ``kind`` (:func:`amd_kind`); its reader loads here."""
    if kind == "omniperf":
        from roofline.readers.amd.omniperf import read_workload

        return read_workload(path)
    if kind == kinds.KIND:
        from roofline.readers.amd.rocprof_outputs import read_rocprof

        return read_rocprof(path)
    raise ValueError(f"not an AMD input kind: {kind!r}")

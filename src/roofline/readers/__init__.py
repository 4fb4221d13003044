"""Readers: one module per input format, one written contract.

Every profile reader has the shape of :class:`ProfileReader`: it takes paths and
returns a :class:`~roofline.kernels.KernelTable` validated against the declared
schema. Machine readers return a :class:`~roofline.machine.Machine`.

Readers import the model; the model imports no reader. Nsight Compute's readers are one wing,
:mod:`roofline.readers.ncu`; machine files are read by :mod:`roofline.readers.machines`; here are
the dispatch by file (:mod:`.dispatch`), our own Parquet and ``.kernels.json`` tables, torch ranges,
and what any reader may use: pyarrow's CSV parser in slabs (:mod:`.csv_arrow`) of a file cut at line ends
(:mod:`.slabs`), pipes and encodings (:mod:`.stream`).
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # (not imported with the package: the CSV parse starts before pandas is loaded)
    from roofline.kernels import KernelTable
    from roofline.machine.model import Machine
    from roofline.readers.ncu.ahead import ReadAhead

PathArg = str | PathLike[str]


class ProfileReader(Protocol):
    def __call__(self, paths: Sequence[PathArg], *, fp16: str = "ncu") -> KernelTable: ...


def read_profile(paths: Sequence[PathArg] | PathArg, *, fp16: str = "ncu", ahead: ReadAhead | None = None) -> KernelTable:
    """Read one or more profiler outputs (ncu CSV, .ncu-rep, our kernel-table JSON) into one table.

    Files describing the same launches (one metric per file, several passes) are
    merged by launch; files of separate runs (e.g. two programs) are kept apart,
    side by side, each row naming its run in the ``run`` column. ``fp16`` picks the FP16 FLOP convention: ``"ncu"`` (Nsight
    Compute's roofline: 2 hadd + 2 hmul + 4 hfma, counting paired half instructions)
    or ``"paper"`` (hadd + hmul + 2 hfma, as the Hierarchical Roofline paper). ``ahead``: the parse of
    one of the files, started before the program loaded the rest (:func:`roofline.readers.ncu.ahead.read_ahead`).
    """
    from roofline.readers.dispatch import read_profile as _read

    return _read(paths, fp16=fp16, ahead=ahead)


def read_machine(path: PathArg, *, pick: Sequence[str] = ()) -> Machine:
    """Read ceilings from our JSON, an ERT ``roofline.json``, an ERT ``sum`` file or NERSC plotting input;
    ``pick``: compute entries of an ERT file to use instead of each precision's highest
    (:func:`roofline.readers.machines.ert.choose_compute`)."""
    from roofline.readers.machines.files import read_machine as _read

    return _read(path, pick=tuple(pick))

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.readers.<module>`` after ``import roofline``).
_SUBMODULES = ("csv_arrow", "dispatch", "kernel_json", "kernel_parquet", "machines", "ncu", "nsys", "slabs", "stream",
               "torch_forest", "torch_launches", "torch_ranges")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=("PathArg", "ProfileReader", "read_machine", "read_profile"))

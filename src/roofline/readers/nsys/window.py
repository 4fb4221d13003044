"""Which launches of a timeline a counting run should profile: :func:`sample_window`.

A training or inference loop repeats one outermost NVTX range (``train_step``, ``ProfilerStep#N``,
``decode``): its occurrences launch the same kernels. ``roofline profile --timeline`` counts one of
them, by default the second (the first warms up: allocations, autotuning, compilation), and the
join gives its counts to every occurrence (:mod:`roofline.readers.nsys.join`).

The window is told to Nsight Compute as launches in launch order: ``--launch-skip`` the launches the
process made before the occurrence began, ``--launch-count`` those it made inside. Launches are
counted per process in the order their CUDA calls were made, as ncu counts them; the process is the
one that launched most kernels (the ranks of a data-parallel job launch the same sequence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.attribution import module_from_range, parse_op_range, phase_name
from roofline.errors import InputError
from roofline.readers.nsys.export import PUSH_POP, Export
from roofline.units import counted

#: A step's number at the end of its range's name (``ProfilerStep#12``, ``Batch 12``, ``step_12``).
_STEP_NUMBER = re.compile(r"(?:#|\s+|_)\d+$")


@dataclass(frozen=True)
class Window:
    """One occurrence of a range: its name, which occurrence (1 = first) of how many, its span on
    the CPU (ns, the timeline's clock), and the launches of ``pid`` before it (``skip``) and in it (``count``)."""

    name: str
    occurrence: int
    occurrences: int
    start_ns: int
    end_ns: int
    pid: int
    skip: int
    count: int

    def describe(self) -> str:
        return (f"occurrence {self.occurrence} of {self.occurrences} of the NVTX range {self.name!r}: "
                f"{counted(self.count, 'kernel launch', 'kernel launches')} after the first {self.skip} "
                f"(process {self.pid})")


def parse_sample(text: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME:N`` (the N-th occurrence, from 1) as given to ``--sample``; None: not said."""
    name, sep, n = text.rpartition(":")
    if sep and n.isdigit() and name and not name.endswith(":"):
        if int(n) < 1:
            raise InputError(f"--sample {text!r}: occurrences count from 1")
        return name, int(n)
    return text, None


def sample_window(path: Path, name: str | None = None, occurrence: int | None = None) -> Window | None:
    """The window of an nsys SQLite export to count: occurrence ``occurrence`` (None: the second, or
    the only one) of the push/pop range
    ``name`` (named as a phase is, without emit_nvtx's ``, seq = N`` or a step's ``#N``), or with
    ``name`` None of the outermost range that repeats: of the program's own ranges (not operators,
    autograd nodes or modules; named without a step number) that enclose launches and repeat at least
    three times (else twice: a loop of epochs around a loop of batches gives the batch), the one
    enclosing most launches (the earliest among equals). None when no range repeats (and none is
    named). A ``name`` given is matched as the program wrote it, else as a step name."""
    with Export(path) as export:
        kernels = export.kernels()
        ranges = export.nvtx_ranges()
    pushed = ranges[ranges["kind"] == PUSH_POP] if len(ranges) else ranges
    if kernels.empty:
        raise InputError("the timeline holds no kernel launches", path=path,
                         hint="check that the program launches CUDA kernels")
    pid = _busiest(kernels)
    mine = pushed[pushed["pid"] == pid] if len(pushed) else pushed
    if mine.empty:
        if name is not None:
            raise InputError(f"the timeline has no NVTX range {name!r} in process {pid}", path=path,
                             hint="name a range the program opens (nsys profile -t cuda,nvtx records them)")
        return None
    calls = np.sort(kernels[kernels["pid"] == pid]["api_start"].dropna().to_numpy(dtype=np.int64))
    mine = mine.assign(name=[_step_name(str(t)) for t in mine["text"]]).sort_values(["start", "end"])
    mine = mine[[n is not None for n in mine["name"]]]
    mine = mine.assign(launches=np.searchsorted(calls, mine["end"].to_numpy(dtype=np.int64), "left")
                       - np.searchsorted(calls, mine["start"].to_numpy(dtype=np.int64), "left"))
    if name is None:  # the repeated range that holds most launches: the outermost, as inner ones hold fewer
        candidates = _not_inside_same(mine[mine["launches"] > 0])
        totals = candidates.groupby("name").agg(count=("start", "size"), launches=("launches", "sum"),
                                                first=("start", "min"))
        steady = totals[totals["count"] >= 3]  # a first occurrence to warm up, then at least two alike
        totals = (steady if len(steady) else totals[totals["count"] >= 2]).sort_values(
            ["launches", "first"], ascending=[False, True])
        if totals.empty:
            return None
        name = str(totals.index[0])
        chosen = candidates[candidates["name"] == name]
    else:  # the name as the program wrote it, else as a step (Batch -> Batch 1, Batch 2, ...)
        exact = mine.assign(name=[phase_name(str(t)) for t in mine["text"]])
        chosen = _not_inside_same(exact[exact["name"] == name]) if (exact["name"] == name).any() \
            else _not_inside_same(mine[mine["name"] == _step_name(name)])
        if chosen.empty:
            raise InputError(f"the timeline has no NVTX range {name!r} in process {pid}", path=path,
                             hint="name a range the program opens, or leave --sample out")
    if occurrence is None:
        occurrence = 2 if len(chosen) >= 2 else 1
    if occurrence > len(chosen):
        raise InputError(f"the NVTX range {name!r} occurs {len(chosen)} time(s), not {occurrence}", path=path,
                         hint=f"--sample {name}:{len(chosen)}")
    row = chosen.iloc[occurrence - 1]
    start, end = int(row["start"]), int(row["end"])
    skip = int(np.sum(calls < start))
    count = int(np.sum((calls >= start) & (calls < end)))
    return Window(name, occurrence, len(chosen), start, end, pid, skip, count)


def _busiest(kernels: pd.DataFrame) -> int:
    """The process that launched most kernels (the lowest id among equals)."""
    counts = kernels["pid"].value_counts()
    return int(min(counts[counts == counts.max()].index))


def _step_name(text: str) -> str | None:
    """A range's name as a step: a phase's name, without a step number (``ProfilerStep#12``, ``Batch 12``:
    ``ProfilerStep``, ``Batch``); None for
    operator, autograd-node and module ranges (they repeat inside every step)."""
    if module_from_range(text) is not None or parse_op_range(text) is not None:
        return None
    return _STEP_NUMBER.sub("", phase_name(text)) or None


def _not_inside_same(ranges: pd.DataFrame) -> pd.DataFrame:
    """The ranges not enclosed by an earlier one of the same name on their thread (a recursion counts once)."""
    if ranges.empty:
        return ranges
    key = [ranges["tid"], ranges["name"]]
    reach = ranges.groupby(key)["end"].cummax().groupby(key).shift(1)
    return ranges[~(ranges["end"] <= reach).to_numpy()]

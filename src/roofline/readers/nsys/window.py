"""Which launches of a timeline a counting run should profile: :func:`sample_window`.

A training or inference loop repeats one NVTX range, a step (``train_step``, ``ProfilerStep#N``,
``Batch N``; the rule: :mod:`roofline.kernels.steps`): its occurrences launch the same kernels.
``roofline profile --timeline`` counts one of
them, by default the second (the first warms up: allocations, autotuning, compilation), and the
join gives its counts to every occurrence (:mod:`roofline.readers.nsys.join`).

The window is told to Nsight Compute as launches in launch order: ``--launch-skip`` the launches the
process made before the occurrence began, ``--launch-count`` those it made inside. Launches are
counted per process in the order their CUDA calls were made, as ncu counts them; the process is the
one that launched most kernels (the ranks of a data-parallel job launch the same sequence).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.attribution import phase_name
from roofline.errors import InputError
from roofline.readers.nsys.export import PUSH_POP, Export
from roofline.kernels.steps import choose, occurrences, spans, step_name
from roofline.units import counted


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
    #: The range is a phase of each iteration: the window runs on to the next occurrence's start
    #: (:func:`roofline.kernels.steps.spans`).
    widened: bool = False

    def describe(self) -> str:
        what = (f"the iteration from occurrence {self.occurrence} of {self.occurrences} of the NVTX range {self.name!r} "
                f"to {'the next one' if self.occurrence < self.occurrences else 'the last launch'} (launches fall between "
                "its occurrences: a phase, not a step)" if self.widened else
                f"occurrence {self.occurrence} of {self.occurrences} of the NVTX range {self.name!r}")
        return (f"{what}: {counted(self.count, 'kernel launch', 'kernel launches')} after the first {self.skip} "
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
    the only one) of the push/pop range ``name`` (matched as the program wrote it, without
    emit_nvtx's ``, seq = N``, else as a step name: ``Batch`` for ``Batch 1``, ``Batch 2``...), or with
    ``name`` None of the process's step (:mod:`roofline.kernels.steps`). None when no range
    repeats (and none is named)."""
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
    by_rule = name is None  # the step chosen by the rule (a range the user names is counted as it is)
    if name is None:
        candidates = occurrences(mine)
        name = choose(candidates, calls)
        if name is None:
            return None
        chosen = candidates[(candidates["name"] == name).to_numpy()]
    else:  # the name as the program wrote it, else as a step (Batch -> Batch 1, Batch 2, ...)
        written = mine[[phase_name(str(t)) == name for t in mine["text"]]]
        if len(written):
            chosen = occurrences(written.assign(text=name), any_domain=True)
        else:
            found = occurrences(mine, any_domain=True)
            chosen = found[(found["name"] == step_name(name)).to_numpy()]
        if chosen.empty:
            raise InputError(f"the timeline has no NVTX range {name!r} in process {pid}", path=path,
                             hint="name a range the program opens, or leave --sample out")
    if occurrence is None:
        occurrence = 2 if len(chosen) >= 2 else 1
    if occurrence > len(chosen):
        raise InputError(f"the NVTX range {name!r} occurs {len(chosen)} time(s), not {occurrence}", path=path,
                         hint=f"--sample {name}:{len(chosen)}")
    starts, ends, widened = spans(chosen, calls) if by_rule else (chosen["start_ns"], chosen["end_ns"], False)
    start, end = int(starts[occurrence - 1]), int(ends[occurrence - 1])
    skip = int(np.sum(calls < start))
    count = int(np.sum((calls >= start) & (calls < end)))
    return Window(name, occurrence, len(chosen), start, end, pid, skip, count, widened)


def _busiest(kernels: pd.DataFrame) -> int:
    """The process that launched most kernels (the lowest id among equals)."""
    counts = kernels["pid"].value_counts()
    return int(min(counts[counts == counts.max()].index))

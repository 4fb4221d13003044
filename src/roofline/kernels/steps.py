"""What a step of a timeline is: the one rule both the per-step breakdown (:mod:`roofline.analysis.breakdown`)
and the sample ``roofline profile --timeline`` counts (:mod:`roofline.readers.nsys.window`) use.

A training or inference loop repeats one NVTX range around each iteration (``train_step``,
``ProfilerStep#12``, ``Batch 12``). Of a process's push/pop ranges:

- **candidates**: the program's own ranges of NVTX's default domain (not PyTorch's operator,
  autograd-node or module ranges), named as a phase is (without emit_nvtx's ``, seq = N``) and
  without a step number at the end (``#12``, `` 12``, ``_12``); a range inside an earlier one of the
  same name on its thread (a recursion) is not an occurrence of its own;
- **the step**: the name whose occurrences repeat at least three times (else twice: a first one to
  warm up, then at least two alike; a loop of two epochs around a loop of batches gives the batch)
  and enclose the most launches (counted by the start of the CUDA call that made them), the earliest
  among equals. Each of its occurrences is a step;
- **a phase, not an iteration** (:func:`spans`): when the launches made between one occurrence's end and
  the next one's start number more than a quarter of those made inside the occurrences, the range marks a
  part of each iteration, not the iteration. roofline.torch.annotate's ``forward`` is an example: backward
  and optimizer launches fall between. So is ``backward`` when a program pushes all three phases. Each step
  then runs from its occurrence's start to the next occurrence's start, the last one to the process's last
  launching call. The real step ranges of the public timelines in tests/data/nsys have no launch between
  their occurrences: MNIST's 59 ``Batch`` ranges hold 8,990 launches, with none between them.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from roofline.attribution import EMIT_NVTX_SUFFIX, module_from_range, parse_op_range, phase_name

#: A step's number at the end of its range's name (``ProfilerStep#12``, ``Batch 12``, ``step_12``).
_STEP_NUMBER = re.compile(r"(?:#|\s+|_)\d+$")
#: emit_nvtx's suffix where :func:`~roofline.attribution.phase_name` cuts it (not at a name's start).
_SUFFIX = "(?s)^(.+?)" + EMIT_NVTX_SUFFIX.pattern
#: Columns of :func:`occurrences` (as :data:`roofline.kernels.activity.HOST_COLUMNS`).
COLUMNS = ("pid", "tid", "start_ns", "end_ns", "name")


def step_name(text: str) -> str | None:
    """A range's name as a step (``ProfilerStep#12``, ``Batch 12``: ``ProfilerStep``, ``Batch``); None
    for operator, autograd-node and module ranges, and for an empty name."""
    text = str(text)
    if module_from_range(text) is not None or parse_op_range(text) is not None:
        return None
    named = phase_name(text)
    return _STEP_NUMBER.sub("", named) or named or None


def step_names(texts: pd.Series) -> np.ndarray:
    """:func:`step_name` of each text (an object array): emit_nvtx's per-call suffix cut off every text at
    once (Arrow's regular expressions), then each distinct rest named once (a PyTorch step has about
    one distinct text per range)."""
    values = pa.array(pd.Series(texts, dtype=object).fillna(""), type=pa.string(), from_pandas=True)
    rest = pc.dictionary_encode(pc.replace_substring_regex(values, pattern=_SUFFIX, replacement=r"\1"))
    named = np.array([step_name(t) for t in rest.dictionary.to_pylist()] + [None], dtype=object)
    return named[rest.indices.to_numpy(zero_copy_only=False)] if len(values) else np.zeros(0, dtype=object)


def occurrences(ranges: pd.DataFrame, *, any_domain: bool = False) -> pd.DataFrame:
    """The candidate occurrences (:data:`COLUMNS`, in start order) of the push/pop ``ranges`` (the
    frame of :meth:`~roofline.readers.nsys.export.Export.nvtx_ranges`, ``kind`` 59 rows); ``any_domain``:
    of every NVTX domain, not only the default one."""
    rows = ranges if any_domain else ranges[ranges["domain"].isna()]
    names = step_names(rows["text"])
    found = pd.DataFrame({"pid": rows["pid"].to_numpy(dtype=np.int64), "tid": rows["tid"].to_numpy(dtype=np.int64),
                          "start_ns": rows["start"].to_numpy(dtype=np.int64),
                          "end_ns": rows["end"].to_numpy(dtype=np.int64), "name": pd.array(names, dtype="string")})
    found = found[found["name"].notna().to_numpy()].sort_values(["tid", "start_ns", "end_ns"],
                                                                 ascending=[True, True, False], kind="stable")
    key = [found["tid"], found["name"]]
    reach = found.groupby(key)["end_ns"].cummax().groupby(key).shift(1)  # the furthest end of the same name before
    found = found[~(found["end_ns"] <= reach).to_numpy()]
    return found.sort_values(["start_ns", "end_ns"], kind="stable").reset_index(drop=True)


def launches_in(steps: pd.DataFrame, calls: np.ndarray) -> np.ndarray:
    """How many of ``calls`` (sorted call starts, ns, of the steps' process) each step encloses."""
    return (np.searchsorted(calls, steps["end_ns"].to_numpy(dtype=np.int64), "left")
            - np.searchsorted(calls, steps["start_ns"].to_numpy(dtype=np.int64), "left"))


def choose(steps: pd.DataFrame, calls: np.ndarray) -> str | None:
    """The step's name among one process's candidate ``steps`` (module docstring); ``calls``: the
    process's launching calls' starts, sorted. None when no name repeats around a launch."""
    if steps.empty:
        return None
    held = steps.assign(launches=launches_in(steps, calls))
    held = held[held["launches"] > 0]
    totals = held.groupby("name").agg(count=("start_ns", "size"), launches=("launches", "sum"),
                                      first=("start_ns", "min"))
    steady = totals[totals["count"] >= 3]
    totals = (steady if len(steady) else totals[totals["count"] >= 2]).sort_values(
        ["launches", "first"], ascending=[False, True])
    return None if totals.empty else str(totals.index[0])


def spans(chosen: pd.DataFrame, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each step's span ``(start_ns, end_ns)`` from the chosen name's occurrences (:data:`COLUMNS`, in start order)
    and the process's launching calls' starts (sorted), and whether the range is a phase whose steps were
    widened to whole iterations (module docstring)."""
    start = chosen["start_ns"].to_numpy(dtype=np.int64)
    end = chosen["end_ns"].to_numpy(dtype=np.int64)
    if len(start) < 2:
        return start, end, False
    inside = launches_in(chosen.iloc[:-1], calls).sum()
    between = (np.searchsorted(calls, start[1:], "left") - np.searchsorted(calls, end[:-1], "left")).clip(0).sum()
    if between * 4 <= inside:
        return start, end, False
    last = int(calls[-1]) + 1 if len(calls) else int(end[-1])
    return start, np.r_[start[1:], max(last, int(end[-1]))], True

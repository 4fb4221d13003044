"""Combine the per-rank kernel tables of a parallel job into one (``roofline merge``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from roofline import kernels
from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.readers import kernel_json as table_file

_RANK = re.compile(r"\.rank(\d+)(?:\.|$)")


def rank_of(path: str | Path) -> int | None:
    """The rank in a per-rank file name (``run.rank3.kernels.json`` -> 3), or None."""
    m = _RANK.search(Path(path).name)
    return int(m.group(1)) if m else None


def _read(path: Path, fp16: str) -> KernelTable:
    if path.name.endswith(".json"):
        return table_file.read(path)
    from roofline.readers import read_profile

    return read_profile([path], fp16=fp16)


def merge_tables(paths: Sequence[str | Path], *, fp16: str = "ncu") -> KernelTable:
    """One table from per-rank tables (``*.kernels.json``, or any profile ``roofline analyze`` reads).

    Every row keeps its ``process_id`` and gets ``source`` = its file's name; the rank
    (from the ``.rank<N>`` in the name) goes to the ``rank`` column of ``metrics``.
    """
    if not paths:
        raise InputError("no files to merge")
    frames, metrics, warnings, sources, conventions = [], [], [], [], set()
    for p in map(Path, paths):
        t = _read(p, fp16)
        conventions.add(t.fp16_convention)
        f = t.frame.copy()
        f["source"] = pd.array([p.name] * len(f), dtype="string")
        frames.append(f)
        m = t.metrics.reset_index(drop=True).copy() if not t.metrics.empty else pd.DataFrame(index=range(len(f)))
        m["rank"] = pd.array([rank_of(p)] * len(f), dtype="Int64")
        metrics.append(m)
        warnings += [w for w in t.warnings if w not in warnings]
        sources.append(str(p))
    if len(conventions) > 1:
        raise InputError(f"the tables count FP16 FLOPs by different conventions ({', '.join(sorted(conventions))})",
                         hint="re-read the profiles with one --fp16 convention")
    frame = kernels.concat(frames)
    merged_metrics = pd.concat(metrics, ignore_index=True)
    merged_metrics.index = frame.index
    return KernelTable(frame=frame, metrics=merged_metrics, sources=tuple(sources), warnings=tuple(warnings),
                       fp16_convention=next(iter(conventions)))

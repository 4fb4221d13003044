"""Where the time went across the ranks of a job: each rank's :class:`~roofline.analysis.breakdown.Breakdown`
as long-form rows (:func:`window_rows`), and what an engine's combination of those rows across ranks
(:mod:`roofline.engine.breakdowns`) becomes for people: a :class:`RankBreakdown`. Pure: no I/O.

**Rows** (:data:`ROW_COLUMNS`), one per rank, device, window and part of the window's time:
``category`` :data:`WALL` (the window's length), :data:`KERNEL` (by bound), :data:`COMMUNICATION`
(exposed, by kind), :data:`IDLE` (by cause), :data:`OVERLAP` and :data:`HIDDEN` (both within the
kernel and communication time); ``part`` the bound, kind or cause (empty for the others); ``seconds``.

**Windows across ranks** are matched by ``key``: ``"run"``; a step's number (each rank's step N,
whatever its range is called); a phase's name. Each GPU's window is one **member** (a rank whose file
holds several GPUs gives one member per GPU). Per key: the members' mean, smallest and largest wall,
kernel, exposed communication and idle time; the **straggler**, the member with the longest wall
time, against the median wall time of the members; and each part's seconds summed over the members.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.breakdown import Breakdown

#: The long-form rows' columns: the rank's label, its GPU, the window (``key`` matched across ranks,
#: ``ordinal`` orders the keys, ``name`` as the rank calls it, ``start_ns`` on the rank's clock), and
#: the part's ``category``, ``part`` and ``seconds``.
ROW_COLUMNS = ("rank", "device", "key", "ordinal", "name", "start_ns", "category", "part", "seconds")
#: Row categories.
WALL, KERNEL, COMMUNICATION, IDLE, OVERLAP, HIDDEN = ("wall", "kernel", "communication", "idle", "overlap",
                                                     "hidden communication")
#: The categories whose parts are summed over the ranks (:attr:`RankWindow.parts`).
PARTED = (KERNEL, COMMUNICATION, IDLE)
#: A step window's number at the end of its name (``train_step #3``).
_NUMBER = re.compile(r" #(\d+)$")


def window_rows(breakdown: Breakdown, rank: str) -> pd.DataFrame:
    """The long-form rows (:data:`ROW_COLUMNS`) of one rank's ``breakdown``, labelled ``rank``."""
    records: list[tuple[object, ...]] = []
    ordinals: dict[int, int] = {}
    for w in breakdown.windows:
        ordinals[w.device] = ordinals.get(w.device, 0) + 1
        number = _NUMBER.search(w.name) if breakdown.window == "step" else None
        key = number.group(1) if number else w.name
        ordinal = int(number.group(1)) if number else ordinals[w.device]
        head = (rank, w.device, key, ordinal, w.name, w.start_ns)
        records.append((*head, WALL, "", w.wall_s))
        for category, parts in ((KERNEL, w.kernel_s), (COMMUNICATION, w.communication_s), (IDLE, w.idle_s)):
            records += [(*head, category, str(part), float(seconds)) for part, seconds in parts.items()]
        records.append((*head, OVERLAP, "", w.overlap_s))
        records.append((*head, HIDDEN, "", w.hidden_communication_s))
    columns: list[tuple[object, ...]] = list(zip(*records)) if records else [() for _ in ROW_COLUMNS]
    dtypes = ("string", "int64", "string", "int64", "string", "int64", "string", "string", "float64")
    return pd.DataFrame({name: pd.array(list(values), dtype=dtype)
                         for name, values, dtype in zip(ROW_COLUMNS, columns, dtypes)})


@dataclass(frozen=True)
class Spread:
    """One quantity over the members of a window: mean, smallest and largest, seconds."""

    mean_s: float
    min_s: float
    max_s: float


@dataclass(frozen=True)
class RankWindow:
    """One window across the ranks: ``key`` (``"run"``, the step number, the phase), ``name`` (the
    names the ranks give it), ``members`` (GPUs that have it); ``wall``, ``kernel``,
    ``communication`` (exposed) and ``idle`` over the members; the straggler (``straggler_rank`` and
    ``straggler_device``: the longest wall time, ``wall.max_s``) and the members' ``median_wall_s``;
    ``parts``: category (:data:`PARTED`) -> bound, kind or cause -> seconds summed over the members."""

    key: str
    name: str
    members: int
    wall: Spread
    kernel: Spread
    communication: Spread
    idle: Spread
    straggler_rank: str
    straggler_device: int
    median_wall_s: float
    parts: Mapping[str, Mapping[str, float]]

    @property
    def straggler_excess_s(self) -> float:
        """How much longer the straggler's window is than the median, seconds."""
        return self.wall.max_s - self.median_wall_s

    @property
    def straggler_ratio(self) -> float:
        """The straggler's wall time over the median (NaN when the median is 0)."""
        return self.wall.max_s / self.median_wall_s if self.median_wall_s > 0 else float("nan")


@dataclass(frozen=True)
class RankBreakdown:
    """Where the time went across the ranks of a job: the ``window`` kind, the ``ranks`` (one label per
    file, in order), the ``windows`` across ranks in order, each rank's long-form ``rows``
    (:data:`ROW_COLUMNS`), the ``engine`` that combined them, and ``notes``."""

    window: str
    ranks: tuple[str, ...]
    windows: tuple[RankWindow, ...]
    rows: pd.DataFrame
    engine: str
    notes: tuple[str, ...] = ()


#: Columns of the per-window statistics an engine computes (:func:`rank_windows` reads them).
STAT_COLUMNS = ("key", "ordinal", "name", "members",
                *(f"{q}_{s}" for q in ("wall", "kernel", "communication", "idle") for s in ("mean", "min", "max")),
                "median_wall", "straggler_rank", "straggler_device")


def rank_windows(stats: pd.DataFrame, parts: pd.DataFrame) -> tuple[RankWindow, ...]:
    """The windows across ranks from an engine's per-window ``stats`` (:data:`STAT_COLUMNS`, in order)
    and ``parts`` (``key``, ``category``, ``part``, ``seconds`` summed over the members)."""
    summed: dict[str, dict[str, dict[str, float]]] = {}
    for key, category, part, seconds in parts[["key", "category", "part", "seconds"]].itertuples(index=False):
        summed.setdefault(str(key), {}).setdefault(str(category), {})[str(part)] = float(seconds)
    out = []
    for row in stats.to_dict("records"):
        def spread(q: str, row: dict[str, object] = row) -> Spread:
            return Spread(*(float(np.asarray(row[f"{q}_{s}"], dtype=float)) for s in ("mean", "min", "max")))

        key = str(row["key"])
        by_category = summed.get(key, {})
        out.append(RankWindow(key=key, name=str(row["name"]), members=int(row["members"]),  # type: ignore[call-overload]
                              wall=spread("wall"), kernel=spread("kernel"), communication=spread("communication"),
                              idle=spread("idle"), straggler_rank=str(row["straggler_rank"]),
                              straggler_device=int(row["straggler_device"]),  # type: ignore[call-overload]
                              median_wall_s=float(row["median_wall"]),  # type: ignore[arg-type]
                              parts={c: dict(sorted(by_category.get(c, {}).items(), key=lambda kv: -kv[1]))
                                     for c in PARTED}))
    return tuple(out)

"""How a timeline's launches found their counts when joined with a counting profile
(:func:`roofline.readers.nsys.join.join_counts`): the ``match`` metric of each launch, and the rate over
a table (:class:`MatchRate`), which the analysis states in its notes and its JSON ``match`` block,
in memory (:func:`match_rate`) and out of core (the engines sum the same metric in the files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from roofline.kernels.schema import KernelTable
from roofline.units import counted

#: How a launch found its counts, in the ``match`` metric.
EXACT, CONFIGURATION, UNMATCHED = "exact", "configuration", "unmatched"
KINDS = (EXACT, CONFIGURATION, UNMATCHED)


@dataclass(frozen=True)
class MatchRate:
    """How many of a timeline's launches, and how much of its time (s), matched exactly, by configuration, or not."""

    launches: dict[str, int]
    time_s: dict[str, float]

    @classmethod
    def of(cls, launches: Mapping[str | None, float], time_s: Mapping[str | None, float]) -> MatchRate:
        """The rate of counts per kind (a missing kind: none; ``None`` counts as unmatched, as a launch of a
        table that was not joined does)."""
        n: dict[str, int] = {k: 0 for k in KINDS}
        t: dict[str, float] = {k: 0.0 for k in KINDS}
        for kind, count in launches.items():
            n[kind if kind is not None and kind in KINDS else UNMATCHED] += int(count)
        for kind, seconds in time_s.items():
            t[kind if kind is not None and kind in KINDS else UNMATCHED] += float(seconds)
        return cls(n, t)

    def summary(self, where: str | None = None) -> str:
        """The rate in words; ``where``: the timelines it is over (``"3 timelines"``), when several."""
        total_n, total_t = sum(self.launches.values()), sum(self.time_s.values())
        parts = []
        for what, words in ((EXACT, "exactly"), (CONFIGURATION, "by configuration (the counting run's mean)"),
                            (UNMATCHED, "unmatched (counts unknown)")):
            share = self.time_s[what] / total_t if total_t > 0 else 0.0
            parts.append(f"{counted(self.launches[what], 'launch', 'launches')} {words}, {share:.1%} of the time")
        launches = counted(total_n, 'timeline launch', 'timeline launches') + (f" of {where}" if where else "")
        return f"counts joined to {launches}: " + "; ".join(parts)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{"launches": {kind: n}, "time_s": {kind: s}}`` over :data:`KINDS` (the JSON ``match`` block)."""
        return {"launches": {k: int(self.launches[k]) for k in KINDS}, "time_s": {k: float(self.time_s[k]) for k in KINDS}}


def match_rate(table: KernelTable) -> MatchRate | None:
    """The match rate of a joined table (its ``match`` metric, one per launch), also of several joined
    tables stacked; None for a table that was not joined."""
    if "match" not in table.metrics.columns or len(table.metrics) != len(table.frame):
        return None
    kind = table.metrics["match"].astype("string").fillna(UNMATCHED).to_numpy(dtype=object)
    time = table.frame["time_s"].to_numpy(dtype=np.float64)
    return MatchRate({k: int((kind == k).sum()) for k in KINDS}, {k: float(np.nansum(time[kind == k])) for k in KINDS})

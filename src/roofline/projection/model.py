"""The :class:`Projection`: what :func:`roofline.projection.project` returns, and its totals. Data only."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.result import UNKNOWN, Analysis
from roofline.machine.model import Machine

SCHEMA = "roofline.projection/1"


@dataclass(frozen=True)
class Projection:
    """Kernels measured on ``source``, projected onto ``target``.

    ``frame``: one row per kernel (per phase and kernel when ``keys`` has ``phase``), longest projected
    gain first (so the kernels that get slower there, :meth:`slower`, after every other projected one;
    the views show them in a section of their own): the keys, ``launches``, ``time_s`` (measured), ``roofline_time_s`` and
    ``pct_of_roofline`` (here), ``bound``, ``best_time_s``, ``projected_time_s``, ``low_time_s``,
    ``high_time_s`` (inf: unbounded), ``bound_target``, ``speedup`` (time / projected),
    ``speedup_low`` (time / high), ``speedup_high`` (time / low), ``gain_s`` (time - projected),
    ``projected`` (False: no projection, see ``why``; a kernel whose precision the target lacks keeps
    its range: at least the memory roof there, unbounded above), ``notes`` (tuple of codes,
    :data:`NOTE_CODES`), ``note_list`` (tuple of (code, sentence with the kernel's figures), in the order
    raised) and ``note_text`` (the sentences, '; '-joined). ``source_analysis``: the analysis against the
    source machine; ``target_analysis``: the kernels on the target at their projected times (for the
    charts: ``compare(source_analysis, target_analysis)``). ``notes``: sentences about the whole
    projection (assumptions, clocks, levels left out).
    """

    frame: pd.DataFrame
    source: Machine
    target: Machine
    keys: tuple[str, ...]
    levels: tuple[str, ...]
    source_analysis: Analysis
    target_analysis: Analysis
    notes: tuple[str, ...] = ()

    @property
    def totals(self) -> dict[str, float]:
        """The program: sums over the projected kernels, speed-up and its range, and coverage; and the
        kernels that get slower there (:meth:`slower`): ``slower`` (how many), ``slower_time_s`` (their time
        here), ``slower_share`` (of the time of all kernels, as ``coverage``) and ``slower_added_s`` (the
        time they add there: projected minus today's, summed)."""
        return _totals(self.frame, float(np.nansum(self.frame["time_s"].to_numpy(dtype=float))))

    def phase_totals(self) -> pd.DataFrame:
        """One row per phase (``unknown`` for kernels outside any) with :attr:`totals`' columns; empty
        when the projection is not by phase."""
        if "phase" not in self.keys:
            return pd.DataFrame(columns=["phase", *TOTAL_KEYS])
        phase = self.frame["phase"].astype("string").fillna(UNKNOWN)
        rows = [{"phase": p, **_totals(self.frame[phase == p], float(np.nansum(self.frame.loc[phase == p, "time_s"])))}
                for p in phase.unique()]
        return pd.DataFrame(rows).sort_values("time_s", ascending=False, kind="stable").reset_index(drop=True)

    def unprojected(self) -> pd.DataFrame:
        """The kernels that could not be projected, with why."""
        return self.frame.loc[~self.frame["projected"], [*self.keys, "time_s", "why"]]

    def slower(self) -> pd.DataFrame:
        """The projected kernels that get slower there (projected time above today's: ``gain_s`` < 0), the
        most time lost first: the rows :attr:`totals` counts in ``slower``."""
        f = self.frame[slower_mask(self.frame)]
        return f.sort_values("gain_s", ascending=True, kind="stable")


TOTAL_KEYS = ("time_s", "projected_time_s", "best_time_s", "low_time_s", "high_time_s", "speedup", "speedup_low",
              "speedup_high", "coverage", "kernels", "unprojected", "slower", "slower_time_s", "slower_share",
              "slower_added_s")


def slower_mask(frame: pd.DataFrame) -> np.ndarray:
    """Per row: projected, and slower there than here (``gain_s`` < 0)."""
    gain = frame["gain_s"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        return frame["projected"].to_numpy(dtype=bool) & (gain < 0)


def _totals(frame: pd.DataFrame, all_time: float) -> dict[str, float]:
    ok = frame["projected"].to_numpy(dtype=bool)
    f = frame[ok]
    t = float(f["time_s"].sum())
    sums = {c: float(f[c].sum()) for c in ("projected_time_s", "best_time_s", "low_time_s", "high_time_s")}
    slow = frame[slower_mask(frame)]
    slow_t = float(slow["time_s"].sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "time_s": t, **sums,
            "speedup": t / sums["projected_time_s"] if sums["projected_time_s"] > 0 else math.nan,
            "speedup_low": t / sums["high_time_s"] if sums["high_time_s"] > 0 else math.nan,
            "speedup_high": t / sums["low_time_s"] if sums["low_time_s"] > 0 else math.inf,
            "coverage": t / all_time if all_time > 0 else math.nan,
            "kernels": int(ok.sum()), "unprojected": int((~ok).sum()),
            "slower": len(slow), "slower_time_s": slow_t,
            "slower_share": slow_t / all_time if all_time > 0 else math.nan,
            "slower_added_s": float(-slow["gain_s"].sum()),
        }



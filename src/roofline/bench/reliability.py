"""Whether a measured machine's figures can be trusted: the load before measuring, the spread of repeats.

Pure decision logic, no measuring: ``roofline machine`` reads the load average before it starts
(:func:`load_per_core`), the benchmarks record each ceiling's repeats as max/min
(:func:`repeat_ratio`, kept in ``Machine.metadata['repeat_ratio']``), and :func:`assess` turns both
into at most one warning sentence naming the ceilings affected.

Other processes on the cores only ever slow a benchmark down, and not evenly: two runs of
``roofline machine --cpu --quick`` on a shared 2-core machine gave FP64 80.8 then 51.8 GFLOP/s.
A ceiling whose repeats differ by more than :data:`MAX_REPEAT_RATIO` (fastest over slowest), or a
load average above :data:`MAX_LOAD_PER_CORE` per usable core before the run, or measuring
threads that were on a core less than :data:`MIN_CPU_SHARE` of the time, says so.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: Fastest over slowest repeat of one ceiling above which its figure is called unreliable.
MAX_REPEAT_RATIO = 1.2
#: Load average (1 min) per usable core, before measuring, above which the machine is called busy.
MAX_LOAD_PER_CORE = 0.5
#: Share of the wall time the measuring threads were on a core (CPU benchmark) below which they shared it.
MIN_CPU_SHARE = 0.8


def repeat_ratio(values: Iterable[float]) -> float:
    """Fastest over slowest of the finite, positive repeats (1.0 = identical); NaN with fewer than two."""
    kept = [float(v) for v in values if math.isfinite(v) and v > 0]
    if len(kept) < 2:
        return float("nan")
    return max(kept) / min(kept)


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def load_per_core() -> float | None:
    """The 1-minute load average over the usable cores, or None where the OS has no load average."""
    try:
        one_minute = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows
        return None
    return one_minute / usable_cores()


@dataclass(frozen=True)
class Verdict:
    """``unsteady``: ceilings whose repeats varied more than allowed, with their max/min ratio;
    ``load_per_core``: the load before measuring when it was too high, else None;
    ``cpu_share``: the measuring threads' share of time on a core when it was too low, else None;
    ``warning``: one sentence for the user, or None when the figures look reliable."""

    unsteady: Mapping[str, float]
    load_per_core: float | None
    cpu_share: float | None
    warning: str | None


def assess(ratios: Mapping[str, float], load: float | None, cpu_share: float | None = None, *,
           max_ratio: float = MAX_REPEAT_RATIO, max_load: float = MAX_LOAD_PER_CORE,
           min_share: float = MIN_CPU_SHARE) -> Verdict:
    """Judge a measurement from each ceiling's repeat ratio (fastest / slowest), the load per core
    before it, and (CPU benchmark) the share of the wall time its threads were on a core.

    NaN ratios (too few repeats) and an unknown load or share (None, NaN) say nothing either way.
    """
    unsteady = {k: float(r) for k, r in ratios.items() if math.isfinite(r) and r > max_ratio}
    busy = load if load is not None and math.isfinite(load) and load > max_load else None
    shared = cpu_share if cpu_share is not None and math.isfinite(cpu_share) and cpu_share < min_share else None
    if not unsteady and busy is None and shared is None:
        return Verdict({}, None, None, None)
    reasons = []
    if busy is not None:
        reasons.append(f"the load average was {busy:.2f} per core before measuring (over {max_load:g})")
    if shared is not None:
        reasons.append(f"the measuring threads were on a core {shared:.0%} of the time (under {min_share:.0%})")
    if unsteady:
        worst = sorted(unsteady.items(), key=lambda kv: -kv[1])
        listed = ", ".join(f"{k} {r:.2f}x" for k, r in worst)
        reasons.append(f"repeats varied (fastest / slowest over {max_ratio:g}x): {listed}")
    return Verdict(unsteady, busy, shared, "figures may be unreliable, other processes were probably using the machine: "
                   + "; ".join(reasons) + ". Measure again on an idle machine.")

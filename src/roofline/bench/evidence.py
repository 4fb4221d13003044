"""What a machine characterization returns: measured ceilings plus the evidence behind them.

Both ``roofline.bench.gpu.measure.measure_gpu`` and ``roofline.bench.cpu.measure.measure_cpu``
return a :class:`Measurement`; the ``roofline machine`` command prints and saves it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from roofline.machine.model import Machine

Mode = Literal["quick", "default", "thorough"]

#: Progress callback: (what is being measured, fraction of the whole run done in 0..1).
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Measurement:
    """Measured ceilings (``machine``, source 'measured') and how they were found.

    - ``sweeps``: working-set sweeps by name (e.g. 'read', 'rmw'); each a DataFrame with
      columns ``size_bytes`` (working set, B), ``bandwidth`` (median B/s), ``spread`` (relative).
    - ``theoretical``: the theoretical ceilings of the same machine, when known.
    - ``checks``: sanity ratios measured in the same run, e.g. ``{"dram_vs_copy": 1.04}``.
    - ``cache_sizes``: bytes per level as read from the system, e.g. ``{"l1": 262144, "l2": 52428800}``.
    - ``clock_hz``: SM (or core) clock observed during the run, per ceiling where known.
    - ``notes``: plain sentences for the user (what was assumed, what could not be measured).
    - ``elapsed_s``: wall time of the whole characterization.
    """

    machine: Machine
    sweeps: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    theoretical: Machine | None = None
    checks: Mapping[str, float] = field(default_factory=dict)
    cache_sizes: Mapping[str, int] = field(default_factory=dict)
    clock_hz: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    elapsed_s: float = float("nan")

"""`RawProfile`: what one profiler input holds before counting.

A reader of a profiler format (ncu CSV, .ncu-rep) returns a :class:`RawProfile`:
launch identities (ID, name, device, ...) and the raw metrics, one row per launch,
values in SI units under the tool's own metric names. :mod:`roofline.readers.ncu.combine`
joins several of them; :mod:`roofline.counting` turns one into a kernel table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

#: Identity columns of a raw profile (kernel-table names), in this order.
IDENTITY = ("launch_id", "kernel_name", "phase", "process_id", "device", "compute_capability", "grid", "block", "stream")


@dataclass(frozen=True)
class RawProfile:
    """One input's launches.

    ``ids`` has the :data:`IDENTITY` columns (unknown values are <NA>); ``metrics``
    has one column per raw metric (numbers in SI units: float64, or int64 for
    integer counts as printed; strings for non-numeric metrics), same index as ``ids``. ``units`` maps each metric to the
    unit the tool printed (before conversion). ``source`` names the input file. ``printed``: the
    values were read from text the tool printed, rounded to its digits (a CSV export), not from
    the values a report stores (``ncu_report``); ``per_row_units``: printed with a unit per row (a
    details page), not one per column; see :mod:`roofline.readers.ncu.printed`.
    """

    ids: pd.DataFrame
    metrics: pd.DataFrame
    source: str
    units: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    printed: bool = True
    per_row_units: bool = False

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def sass_instrumented(self) -> bool:
        """True when the input collected SASS-instruction metrics (instrumented replay passes)."""
        return any(is_sass_metric(m) for m in self.metrics.columns)


def is_sass_metric(name: str) -> bool:
    """Metrics counted by SASS patching (``sm__sass_*``, ``smsp__sass_*``): their passes inflate cycles."""
    return name.startswith(("sm__sass_", "smsp__sass_"))


def is_timing_metric(name: str) -> bool:
    """Metrics that carry a launch's duration or clock (``gpu__time_duration``, ``gpu__time_active``,
    ``*__cycles_elapsed``)."""
    return name.startswith(("gpu__time_duration", "gpu__time_active", "sm__cycles_elapsed", "smsp__cycles_elapsed"))


#: Metrics that describe the profiling session, not the launch: ncu's own bookkeeping (``profiler__*``:
#: replay passes, memory saved for replay, sampler buffers, timestamps), which follows from the metrics
#: collected and the moment; and the kernel's code address in its process (``launch__function_pcs``: a
#: real GENE pair on one V100 reads 35187008513920 in one run of the program and 35187008280064 in the
#: next). Two sessions of one program give them different values for the same launch.
SESSION_PREFIXES = ("profiler__",)
SESSION_METRICS = frozenset({"launch__function_pcs"})


def is_session_metric(name: str) -> bool:
    """Metrics of the profiling session rather than of the launch (:data:`SESSION_PREFIXES`,
    :data:`SESSION_METRICS`): not evidence that two files describe different launches."""
    return name.startswith(SESSION_PREFIXES) or name in SESSION_METRICS


def empty_ids(n: int) -> pd.DataFrame:
    """An identity frame of ``n`` rows, everything unknown."""
    dtypes = {"launch_id": "Int64", "process_id": "Int64", "device": "Int64", "stream": "Int64"}
    return pd.DataFrame({c: pd.array([pd.NA] * n, dtype=dtypes.get(c, "string")) for c in IDENTITY})

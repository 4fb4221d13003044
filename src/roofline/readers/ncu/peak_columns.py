"""Which of a profile's metrics the ceilings are read from (:mod:`roofline.readers.ncu.peaks`): the device's
name and clocks, the peak metrics, the "% of peak" that imply a peak, and what those need (cycles, time).

A table that carries a profile's metrics onto other launches (a timeline joined with its counts,
:mod:`roofline.readers.nsys.join`) keeps these, not the two thousand columns of a ``--set full`` export.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from roofline.counting.flops import GPC_CLOCK, GPC_CYCLES, GPU_ACTIVE, GPU_TIME, GPU_TIME_AVG, SM_CLOCK as SM_RATE, SM_CYCLES
from roofline.readers.ncu.peaks import (BLACKWELL_TENSOR_PEAKS, DENSE_TENSOR_PEAKS, DEVICE_NAME, HFMA_FLOPS, ISSUE_PEAKS,
                                        MAX_CLOCK_METRIC, MEMORY_PEAKS, OP_PEAKS, SM_CLOCK, SM_COUNT, TENSOR_V100,
                                        VOLTA_TURING_TENSOR_PEAKS, fp16_peaks, scalar_peaks)

_PEAK = ".sum.peak_sustained"
#: Suffixes of the figures a unit's cycles and instances are read from (``lts__cycles_elapsed.sum``).
_CYCLES = ("__cycles_elapsed.avg", "__cycles_elapsed.sum", "__cycles_elapsed.max", "__cycles_elapsed.avg.per_second")


@cache
def _named() -> frozenset[str]:
    names: set[str] = {DEVICE_NAME, MAX_CLOCK_METRIC, TENSOR_V100, *SM_CLOCK, *SM_COUNT}
    for table in (DENSE_TENSOR_PEAKS, BLACKWELL_TENSOR_PEAKS, VOLTA_TURING_TENSOR_PEAKS, OP_PEAKS):
        names.update(n for alternatives in table.values() for n in alternatives)
    names.update(m for op in ("dfma", "ffma") for _, m in scalar_peaks(op))
    names.update(m for convention in HFMA_FLOPS for _, m in fp16_peaks(convention))
    for alternatives, clock in MEMORY_PEAKS.values():
        names.update(m for _, m in alternatives)
        names.add(clock)
    for peak in ISSUE_PEAKS.values():
        names.update((*peak.peaks, *peak.pct, peak.clock, *peak.achieved.forms()))
    for counter in (GPU_TIME, GPU_TIME_AVG, GPU_ACTIVE, SM_CYCLES, SM_RATE, GPC_CYCLES, GPC_CLOCK):
        names.update(counter.forms())
    names.update(n[: -len(_PEAK)] + ".avg.peak_sustained" for n in list(names) if n.endswith(_PEAK))
    return frozenset(names)


def peak_columns(columns: Iterable[str]) -> list[str]:
    """The names of ``columns`` that :func:`~roofline.readers.ncu.peaks.machine_from_profile`,
    :func:`~roofline.readers.ncu.peaks.device_names` and :func:`~roofline.readers.ncu.peaks.max_clock_hz`
    can read (in their order)."""
    named = _named()
    return [c for c in columns if c in named or c.endswith(_CYCLES)]


def kept(columns: Sequence[str], also: Iterable[str]) -> list[str]:
    """``columns`` that are :func:`peak_columns` or among ``also`` (the guidance's metrics), in order."""
    wanted = set(peak_columns(columns)) | set(also)
    return [c for c in columns if c in wanted]

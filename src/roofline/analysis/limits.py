"""Physical limits on every derived figure: the one place a row's figures are checked before any view.

A figure beyond what the hardware can do is not a finding about the kernel but about the counters or
the ceilings it was divided by. The reasons go in the row's ``inconsistent`` column (<NA> on consistent
rows); a rate above a ceiling makes the row's ``region`` "inconsistent", a load/store pattern beyond
the walls makes its ``global_pattern`` or ``shared_pattern`` "inconsistent" (the row's roofline
figures stand); views and guidance show them as "inconsistent counters", never as a diagnosis.

=========================================  =====================================================================
limit                                      why
=========================================  =====================================================================
achieved <= ceiling x :data:`SLACK`         FLOP/s (OP/s, warp instructions/s) against the compute ceiling the row
                                           is held to, bytes/s against each level's bandwidth ceiling; above it
                                           the ceiling is wrong (measured low, or at another clock), the clock
                                           the ceilings were scaled to is, or the FP16 convention differs
achieved <= the device's spec x SLACK      FLOP/s against the GPU's datasheet rate of the same precisions at
                                           the kernels' clock (when the machine names a GPU we have a spec of)
sectors per global LD/ST instruction       a warp instruction's 32 threads touch at most 32 sectors
<= 32
wavefronts per shared LD/ST instruction    a shared access is at most 32-way conflicted
<= 32
=========================================  =====================================================================

:data:`SLACK` (5 %) leaves room for the rounding of printed counters and for the clock the ceilings
were scaled to, which is a time-weighted mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords
from roofline.machine.model import Machine, ceiling_label
from roofline.units import format_si

#: Achieved may exceed a ceiling by this factor before the row is inconsistent.
SLACK = 1.05
#: Sectors a warp's global load or store can touch, and wavefronts a shared access can take.
MAX_PER_INSTRUCTION = 32.0
#: The region of a row whose figures break a limit.
INCONSISTENT = "inconsistent"


@dataclass(frozen=True)
class Limits:
    """What :func:`limit_reasons` found, per row: the reasons ('; '-joined, None where none), and which
    rows break a rate limit (``rates``), the global-access walls (``global_walls``) or the shared ones."""

    reasons: np.ndarray
    rates: np.ndarray
    global_walls: np.ndarray
    shared_walls: np.ndarray


def _array(columns: Mapping[str, Any], name: str, n: int) -> np.ndarray:
    if name not in columns:
        return np.full(n, np.nan)
    values = columns[name]
    return values.astype(float, copy=False) if isinstance(values, np.ndarray) else \
        values.to_numpy(dtype=float, na_value=np.nan)


def _causes(machine: Machine, key: str, kind: str, fp16: bool) -> str:
    """The likely causes of an achieved rate above ``machine``'s ceiling ``kind.key``."""
    try:
        source = machine.source_of(f"{kind}.{key}")
    except KeyError:
        source = machine.source
    causes = []
    if source == "measured":
        causes.append("the measured ceiling is below what this GPU delivers (measure again, or compare with "
                      "its spec: --machine SPEC)")
    elif source == "from-profile":
        causes.append("the profile's peak metric is not this unit's real rate")
    else:
        causes.append("the spec figure does not hold for this GPU")
    if machine.metadata.get("scaled_from_sm_clock_hz"):
        causes.append("the kernel ran at another clock than the ceilings were scaled to")
    if fp16:
        causes.append("FP16 FLOPs and the FP16 ceiling counted under different conventions (--fp16)")
    return "likely " + "; or ".join(causes)


def _collect(metrics: str | None) -> str:
    """': collect METRICS', or nothing when the table names no metric."""
    return f": collect {metrics}" if metrics else ""


def limit_reasons(rows: Mapping[str, Any], machine: Machine | None, levels: list[str] | tuple[str, ...], *,
                  compute_peak: np.ndarray, compute_key: np.ndarray, spec_peak: np.ndarray | None,
                  rate_unit: str = "FLOP/s", ceiling_of: Mapping[str, float] | None = None,
                  hints: Mapping[str, str] | None = None, words: VendorWords = NVIDIA_WORDS) -> Limits:
    """Per row, the limits its figures break (see the module docstring).

    ``rows`` are the analysis's columns (``flop_rate``, ``bw_<level>``, ``global_ii``, ``shared_ii``,
    ``fp16_flops``); ``compute_peak`` and ``compute_key`` the ceiling each row is held to;
    ``spec_peak`` the same rows' peak from the GPU's spec (None: no spec); ``ceiling_of`` each level's
    bandwidth ceiling in the unit ``bw_<level>`` is in; ``hints`` what to collect (the kernel table's
    :attr:`~roofline.kernels.KernelTable.metric_hints`: the cp.async and ldmatrix instruction counters);
    ``words``: the vendor's, for the ceilings a reason names (an AMD GPU's 'HBM', 'Matrix FP16')."""
    labels, matrix = (dict(words.levels), words.matrix) if words.is_amd else (None, "Tensor")
    n = len(compute_peak)
    ldgsts = _collect((hints or {}).get("ldgsts_inst"))
    ldsm = _collect((hints or {}).get("ldsm_inst"))
    reasons: list[list[str]] = [[] for _ in range(n)]
    rates = np.zeros(n, dtype=bool)
    rate = _array(rows, "flop_rate", n)
    fp16 = _array(rows, "fp16_flops", n) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        over = rate / compute_peak
        for i in np.flatnonzero(over > SLACK):
            key = str(compute_key[i]) if compute_key[i] is not None else "compute"
            label = ceiling_label(key, labels, matrix) if key != "mixed" else "mixed-precision"
            cause = _causes(machine, key, "compute", bool(fp16[i])) if machine is not None and key != "mixed" else ""
            reasons[i].append(f"achieved {format_si(rate[i], rate_unit)} is {over[i]:.2f}x its {label} ceiling"
                              + (f" ({cause})" if cause else ""))
            rates[i] = True
        if spec_peak is not None:
            over_spec = rate / spec_peak
            for i in np.flatnonzero((over_spec > SLACK) & ~(over > SLACK)):
                reasons[i].append(f"achieved {format_si(rate[i], rate_unit)} is {over_spec[i]:.2f}x the device's "
                                  "spec rate for its precisions (counters or the kernels' clock are off)")
                rates[i] = True
        for level in levels:
            ceiling = (ceiling_of or {}).get(level)
            if not ceiling:
                continue
            use = _array(rows, f"bw_{level}", n) / ceiling
            mall_label = (labels or {}).get("dram", "") if level == "dram" else ""
            mall = "MALL" in mall_label
            for i in np.flatnonzero(use > SLACK):
                if mall:  # MI300's EA traffic counts Infinity Cache hits: above HBM's bandwidth is no counter error
                    reasons[i].append(f"{mall_label} traffic is {use[i]:.2f}x HBM's bandwidth: it counts Infinity "
                                      "Cache (MALL) hits, which can go faster; its HBM bytes alone are not known")
                    rates[i] = True
                    continue
                cause = _causes(machine, level, "memory", False) if machine is not None else ""
                reasons[i].append(f"{ceiling_label('memory.' + level, labels)} traffic is {use[i]:.2f}x its bandwidth "
                                  "ceiling" + (f" ({cause})" if cause else ""))
                rates[i] = True
        sectors = 1.0 / _array(rows, "global_ii", n)
        global_over = sectors > MAX_PER_INSTRUCTION
        for i in np.flatnonzero(global_over):
            reasons[i].append(f"{sectors[i]:.0f} L1 sectors per global load/store instruction, above the 32 a warp "
                              "can touch: sectors of instructions that were not counted (cp.async" + ldgsts
                              + "; atomics, reductions)")
        wavefronts = 1.0 / _array(rows, "shared_ii", n)
        shared_over = wavefronts > MAX_PER_INSTRUCTION
        for i in np.flatnonzero(shared_over):
            reasons[i].append(f"{wavefronts[i]:.0f} wavefronts per shared load/store instruction, above the 32 of a "
                              "32-way conflict: wavefronts of instructions that were not counted (ldmatrix" + ldsm
                              + "; cp.async, atomics)")
    return Limits(np.array(["; ".join(r) if r else None for r in reasons], dtype=object), rates, global_over,
                  shared_over)

"""The compute peak each kernel is held to: the harmonic mean of the peaks of the precisions it uses.

``compute_peak = flops / sum_p(flops_p / peak_p)``: the peak that would run the kernel's FLOP mix (or
operation, or instruction mix, :mod:`roofline.analysis.work`) in the least time. Where the machine
lacks a peak the kernel uses, the peak is unknown and a lower bound on it is worked out (the GPU's
spec, or :data:`PEAK_AT_LEAST`), for :mod:`roofline.analysis.roofline` to decide the bound anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.work import TENSOR, Work, work_for
from roofline.machine.model import Machine
from roofline.machine.specs import spec_for_device_name
from roofline.machine.theoretical import theoretical_from_spec
from roofline.units import counted, format_si

#: Rows as columns: name -> float64 numpy array, or extension array (``aggregate_columns``).
Columns = Mapping[str, Any]

#: A precision holding at least this share of a kernel's FLOPs names its compute ceiling;
#: below it the ceiling is "mixed" (still the harmonic mean of the peaks used).
DOMINANT_PRECISION_SHARE = 0.9

#: FLOP column -> machine compute key (tensor is resolved per row from tensor_precision).
PRECISION_KEYS = {"fp64_flops": "fp64", "fp32_flops": "fp32", "fp16_flops": "fp16"}
TENSOR_DEFAULT = "tensor_fp16"

#: Lower bounds between precisions, used only when the machine lacks a peak: the FP32 peak
#: is at least the FP64 peak on every processor (NVIDIA GPUs since Fermi: FP64 is 1/2 to
#: 1/64 of FP32, or equal on GH100's vector units; AMD CDNA: equal or 1/2; CPUs' SIMD: 1/2).
#: A measured FP64 ceiling is itself at most the FP64 peak, so it bounds FP32 from below.
PEAK_AT_LEAST: dict[str, tuple[str, ...]] = {"fp32": ("fp64",)}


def spec_ceilings(machine: Machine, kernel_clock: float | None) -> Machine | None:
    """Theoretical ceilings of the GPU the machine names (``metadata['gpu']`` or its name), at the
    machine's clock, else the kernels' clock, else the spec's; None when no known GPU is named."""
    for name in (machine.metadata.get("gpu"), machine.name):
        spec = spec_for_device_name(name) if isinstance(name, str) and name else None
        if spec is not None:
            return theoretical_from_spec(spec, sm_clock_hz=machine.sm_clock_hz or kernel_clock)
    return None


def _peak_lower_bounds(machine: Machine, keys: list[str], kernel_clock: float | None) -> tuple[np.ndarray, dict[str, str]]:
    """Per compute key: the machine's peak, else a lower bound on it (NaN: none), and how each bound was had."""
    spec: Machine | None = None
    spec_looked = False
    low = np.full(len(keys), np.nan)
    how: dict[str, str] = {}
    for i, key in enumerate(keys):
        if key in machine.compute:
            low[i] = machine.compute[key]
            continue
        if not spec_looked:
            spec, spec_looked = spec_ceilings(machine, kernel_clock), True
        if spec is not None and key in spec.compute:
            low[i] = spec.compute[key]
            how[key] = f"{key} {format_si(low[i], 'FLOP/s')} from the {spec.name} spec"
            continue
        below = [(machine.compute[k], k) for k in PEAK_AT_LEAST.get(key, ()) if k in machine.compute]
        if below:
            low[i], k = max(below)
            how[key] = f"{key} >= the {k} ceiling {format_si(low[i], 'FLOP/s')}"
    return low, how


def compute_peaks(frame: Columns, machine: Machine, notes: list[str],
                   kernel_clock: float | None = None,
                   work: Work | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """Per row: harmonic-mean compute peak (work/s, NaN when a used ceiling is missing), the key,
    a lower bound on the peak (the peak where known; NaN where a used precision has no bound),
    which rows lack a ceiling they use, and the start of the note on them (the caller completes it).

    Keys are handled as integer codes into ``names`` (fast on millions of rows).
    """
    spec = work if work is not None else work_for("flops")
    n = len(frame["time_s"])
    columns = [c for c, _ in spec.parts]
    parts = np.column_stack([frame[c] for c in columns]) if n else np.zeros((0, len(columns)))
    used = parts > 0  # NaN compares False: unknown components cannot be weighted
    tensor_cols = [j for j, (_, k) in enumerate(spec.parts) if k == TENSOR]
    precision_codes, precisions = lower_codes(frame["tensor_precision"])
    no_prec = precision_codes < 0
    names = list(dict.fromkeys(k for _, k in spec.parts if k != TENSOR))
    codes = np.empty((n, len(columns)), dtype=np.int64)
    for j, (_, key) in enumerate(spec.parts):
        if key != TENSOR:
            codes[:, j] = names.index(key)
    if tensor_cols:
        default_code = len(names)
        names += [TENSOR_DEFAULT] + [f"tensor_{p}" for p in precisions]
        for j in tensor_cols:
            codes[:, j] = np.where(no_prec, default_code, precision_codes + default_code + 1)
    # the same key may appear twice in names (e.g. tensor_fp16 as default and as given): same peak
    peak_of = np.array([machine.compute.get(k, np.nan) for k in names])
    untyped = np.zeros(n, dtype=bool)
    for j in tensor_cols:
        untyped |= used[:, j] & no_prec
    if untyped.any():
        notes.append(f"tensor cores of unknown input type in {counted(int(untyped.sum()), 'kernel')}: "
                     f"held to the {TENSOR_DEFAULT} ceiling")
    peaks = peak_of[codes]
    lacking = used & np.isnan(peaks)
    low = np.full(n, np.nan)
    lacking_note = ""
    if lacking.any():
        missing = sorted({names[c] for c in np.unique(codes[lacking])})
        low_of, how = _peak_lower_bounds(machine, names, kernel_clock)
        with np.errstate(divide="ignore", invalid="ignore"):
            low_denom = np.where(used, parts / low_of[codes], 0.0).sum(axis=1)  # NaN where a bound is missing
            low = np.where(used.any(axis=1), np.where(used, parts, 0.0).sum(axis=1) / low_denom, np.nan)
        bounds = "; ".join(how[k] for k in missing if k in how)
        lacking_note = (f"the machine lacks the compute {'ceiling' if len(missing) == 1 else 'ceilings'} "
                        f"{', '.join(missing)} used by "
                        f"{counted(int(lacking.any(axis=1).sum()), 'kernel')}: their compute peak is unknown (lower bound"
                        + (f"s: {bounds}, and each kernel's achieved FLOP/s)" if bounds else
                           ": each kernel's achieved FLOP/s)"))

    with np.errstate(divide="ignore", invalid="ignore"):
        flops_used = np.where(used, parts, 0.0)
        known = flops_used.sum(axis=1)
        denom = np.where(used, parts / peaks, 0.0).sum(axis=1)
        any_used = used.any(axis=1)
        peak = np.where(any_used & ~lacking.any(axis=1), known / denom, np.nan)
        dominant = np.argmax(flops_used, axis=1)
        rows = np.arange(n)
        top_share = flops_used[rows, dominant] / known
    label_names = np.array([*names, "mixed", None], dtype=object)
    key_code = np.where(top_share >= DOMINANT_PRECISION_SHARE, codes[rows, dominant], len(names))
    key_code = np.where(any_used, key_code, len(names) + 1)
    low = np.where(np.isfinite(peak), peak, low)
    return peak, label_names[key_code], low, lacking.any(axis=1), lacking_note


def lower_codes(precision: pd.api.extensions.ExtensionArray) -> tuple[np.ndarray, list[str]]:
    """Tensor precisions lower-cased, as codes into their sorted distinct values (-1: unknown), the
    way ``pd.Categorical`` numbers them; worked on the distinct values only."""
    codes, uniques = pd.factorize(precision, use_na_sentinel=True)
    lowered = [str(u).lower() for u in uniques]
    categories = sorted(set(lowered))
    code_of = np.array([categories.index(v) for v in lowered] + [-1], dtype=np.int64)
    return code_of[codes], categories

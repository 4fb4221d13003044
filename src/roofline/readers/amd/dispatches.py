"""AMD dispatches as a kernel table: identities and times as the tool gave them, counts from the AMD
formula table (:mod:`roofline.counting.amd`).

Times are end - start timestamps (ns). A duration of zero or less is refused for its dispatch (the
time unknown, one note saying how many and why): Omniperf's ``timestamps.csv`` of some ROCm 6 runs
prints timestamps as ``8.1097E+14``, which keeps five digits of a nanosecond clock, so a dispatch's
start and end read the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from roofline.counting.amd import FAMILIES, count_amd
from roofline.errors import InputError
from roofline.kernels import KernelTable, known_sum, total_ops, validate
from roofline.kernels.schema import COLUMNS, lean
from roofline.readers.amd import DEVICE_NAME_COLUMN

#: Suffixes rocprof puts after a kernel's name (its code-object descriptor), dropped.
_KD = re.compile(r"\s*(\[clone \.kd\]|\(\.kd\))\s*$|\.kd$")


def kernel_name(name: object) -> str:
    """A kernel's name less rocprof's ``[clone .kd]`` / ``(.kd)`` / ``.kd`` suffix."""
    return _KD.sub("", str(name)).strip()


#: The identity columns a reader gives per dispatch (any may be absent: unknown).
ID_COLUMNS = ("launch_id", "kernel_name", "process_id", "device", "grid", "block", "stream")


def _nanoseconds(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps (ns) as an exact integer part and a fraction: the clock is past 2**53 ns, where a
    float64 keeps a quarter of a nanosecond at best, so text such as ``1248227793220373.0`` (a mean
    over passes) is split before it is parsed. Unreadable values: NaN fraction."""
    text = values.astype("string").str.strip()
    plain = text.str.fullmatch(r"[+-]?\d+(\.\d*)?").fillna(False).to_numpy(dtype=bool)
    whole = np.zeros(len(text), dtype=np.int64)
    frac = np.full(len(text), np.nan)
    if plain.any():
        parts = text[plain].str.split(".", n=1, expand=True).reindex(columns=[0, 1])
        whole[plain] = parts[0].astype("int64").to_numpy()
        digits = parts[1].astype("string").fillna("0").replace("", "0")
        frac[plain] = pd.to_numeric("0." + digits, errors="coerce").to_numpy(dtype=np.float64)
    other = ~plain  # E-notation and the like: as a float, whatever digits it kept
    if other.any():
        frac[other] = pd.to_numeric(text[other], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return whole, frac


def dispatch_times(start: pd.Series, end: pd.Series) -> tuple[np.ndarray, str | None]:
    """Seconds per dispatch from start and end timestamps (ns, numbers or their text), NaN where the
    duration is not positive; and the note saying how many were refused, or None."""
    w0, f0 = _nanoseconds(start)
    w1, f1 = _nanoseconds(end)
    seconds = ((w1 - w0) + (f1 - f0)) * 1e-9
    bad = ~(seconds > 0) & ~np.isnan(seconds)
    note = None
    if bad.any():
        shown = next((str(v) for v in start[bad] if "e" in str(v).lower()), None)
        why = (f" (timestamps written as {shown} keep too few digits)" if shown is not None else "")
        note = (f"{int(bad.sum())} of {len(seconds)} dispatches have an end timestamp not after their start{why}: "
                "their time is unknown, never 0")
        seconds[bad] = np.nan
    return seconds, note


def amd_table(ids: pd.DataFrame, counters: pd.DataFrame, arch: str, device_name: str | None, source: str,
              *, warnings: Sequence[str] = ()) -> KernelTable:
    """The kernel table of AMD dispatches: ``ids`` one row per dispatch (:data:`ID_COLUMNS` and
    ``time_s``), ``counters`` the same rows' counter totals (:func:`roofline.counting.amd.counter_totals`),
    ``arch`` the gfx target, ``device_name`` the GPU as the tool names it."""
    arch = str(arch).strip().lower()
    if arch not in FAMILIES:
        raise InputError(f"the GPU is {arch!r}, for which roofline has no AMD counter table (it knows "
                         f"{', '.join(FAMILIES)})", path=source)
    n = len(ids)
    counted = count_amd(counters.reset_index(drop=True), arch)
    frame = pd.DataFrame(index=pd.RangeIndex(n))
    for name in ID_COLUMNS:
        frame[name] = ids[name].to_numpy() if name in ids.columns else pd.NA
    frame["time_s"] = ids["time_s"].to_numpy(dtype=np.float64) if "time_s" in ids.columns else np.nan
    frame["sm_clock_hz"] = np.nan
    frame["compute_capability"] = arch
    frame["launches"] = 1
    for name, values in counted.columns.items():
        frame[name] = values
    flop_parts = [frame[c].to_numpy() if c in frame else np.full(n, np.nan)
                  for c in ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops")]
    flops, partial = known_sum(flop_parts)
    frame["flops"] = flops
    frame["flops_partial"] = partial | (counted.packed & ~np.isnan(flops))
    others = [frame[c].to_numpy() if c in frame else np.full(n, np.nan) for c in ("int_ops", "conversion_ops", "tensor_int_ops")]
    frame["ops"], frame["ops_partial"] = total_ops(flops, frame["flops_partial"].to_numpy(), others)
    frame["tensor_precision"] = counted.tensor_precision
    frame["estimated"] = False
    frame["source"] = source
    for c in COLUMNS:
        if c.name not in frame.columns and c.dtype != "float64":
            frame[c.name] = pd.NA
    table = lean(validate(frame, where=source), copy=False)
    metrics = counters.reset_index(drop=True).copy()
    metrics[DEVICE_NAME_COLUMN] = device_name
    notes = {column: (f"collect {', '.join(names)}",) for column, names in counted.missing.items()}
    unknown = [f"{column} unknown: collect {', '.join(names)}" for column, names in counted.missing.items()
               if column in ("l1_bytes", "shared_bytes", "l2_bytes", "dram_bytes", "tensor_flops") and arch != "gfx908"]
    return KernelTable(frame=table, metrics=metrics, sources=(source,),
                       warnings=tuple(dict.fromkeys([*warnings, *counted.notes, *unknown])), column_notes=notes)


"""A raw profile (:class:`~roofline.readers.profile.RawProfile`, one run's launches, merged) counted
with the formula table (:mod:`roofline.counting`) into a validated :class:`~roofline.kernels.KernelTable`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from roofline import counting
from roofline.errors import InputError, MissingMetricsError
from roofline.kernels import COLUMNS, FLOP_COLUMNS, OP_COLUMNS, KernelTable, validate, with_total_flops
from roofline.readers.profile import RawProfile


def _label(sources: Sequence[str]) -> str:
    names = [Path(s).name for s in sources]
    if len(names) <= 2:
        return ", ".join(names)
    return f"{len(names)} files ({names[0]}, ...)"


def build_table(profile: RawProfile, *, fp16: str = "ncu", sources: Sequence[str] = ()) -> KernelTable:
    """Count a (merged) raw profile into a validated kernel table."""
    where = profile.source if len(sources) <= 1 else None
    label = _label(sources or [profile.source])
    try:
        counted = counting.count(profile.metrics, profile.ids["compute_capability"], fp16=fp16)
    except InputError as exc:
        raise InputError(exc.message, path=where, hint=exc.hint) from None
    n = len(profile)
    ids = profile.ids.reset_index(drop=True)
    # flops and flops_partial by the kernel table's own rule, applied to the FLOP columns only
    # (with_total_flops copies what it is given; the whole table would be 1e6 x 24 values).
    flop_part = with_total_flops(pd.DataFrame({c: counted.columns[c] for c in (*FLOP_COLUMNS, *OP_COLUMNS)
                                               if c in counted.columns}))
    numbers = {**counted.columns, "flops": flop_part["flops"].to_numpy(), "ops": flop_part["ops"].to_numpy()}
    # The float columns are written into one preallocated 2-D block, which pandas adopts without
    # the copy it makes when it consolidates separate arrays (0.3 s at 1e6 launches).
    float_cols = [c.name for c in COLUMNS if c.dtype == "float64"]
    block = np.full((len(float_cols), n), np.nan)
    for i, name in enumerate(float_cols):
        if name in numbers:
            block[i] = numbers[name]
    frame = pd.DataFrame(block.T, columns=float_cols, copy=False)
    for c in COLUMNS:
        if c.dtype == "float64":
            continue
        if c.name == "tensor_precision":
            frame[c.name] = _strings(counted.columns[c.name])
        elif c.name in ("flops_partial", "ops_partial"):
            frame[c.name] = flop_part[c.name].array
        elif c.name in ids.columns:
            frame[c.name] = ids[c.name].astype(c.dtype)
        elif c.name == "source":
            frame[c.name] = pd.array([label], dtype="string").take(np.zeros(n, dtype=np.intp))
        elif c.name == "launches":
            frame[c.name] = pd.array(np.ones(n, dtype=np.int64), dtype="Int64")
        elif c.dtype == "boolean":
            frame[c.name] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
        else:
            frame[c.name] = pd.array([], dtype=c.dtype).take(np.full(n, -1, dtype=np.intp), allow_fill=True)
    known_time = not np.isnan(frame["time_s"].to_numpy()).all()
    known_flops = not frame[list(FLOP_COLUMNS)].isna().all().all()
    known_bytes = not frame[["l1_bytes", "l2_bytes", "dram_bytes"]].isna().all().all()
    if not (known_time or known_flops or known_bytes):
        needed = counting.required_metrics(_first_cc(profile) or "7.0")
        rates = [c for c in profile.metrics.columns
                 if str(c).endswith((".per_cycle_elapsed", ".per_second")) or str(c).startswith("derived__smsp__")]
        if rates:  # a roofline-chart section export: rates, but no duration to turn them into counts
            raise MissingMetricsError(
                f"the profile holds rates ({len(rates)}, e.g. {rates[0]}) but no launch duration to turn them into "
                "FLOP or byte counts", path=where,
                hint="read it together with an export of the same run that has the duration (the Speed of Light "
                     "section's \"Duration\", or gpu__time_duration.sum), or collect with: ncu --section SpeedOfLight "
                     "--section SpeedOfLight_RooflineChart",
            )
        raise MissingMetricsError(
            "the profile has none of the metrics needed for a roofline (time, FLOP or byte counters)",
            path=where, hint=counting.ncu_hint(needed),
        )
    frame = validate(frame, where=where)
    metrics = profile.metrics.reset_index(drop=True)
    metrics.index = frame.index
    warnings = [f"{label}: {w}" for w in counted.warnings]
    hinted = dict.fromkeys([*counted.missing_hints, *counted.lower_bounds])
    column_notes = {c: tuple(counted.hints_for([c])) for c in hinted}
    return KernelTable(frame=frame, metrics=metrics, sources=tuple(sources or [profile.source]),
                       warnings=tuple(dict.fromkeys([*profile.warnings, *warnings])), fp16_convention=fp16,
                       column_notes=column_notes)


def _strings(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """An object array of str/None as the ``string`` dtype (through pyarrow when present: 1e6 rows fast)."""
    try:
        import pyarrow as pa

        return pd.array(pa.array(values, type=pa.large_string()), dtype=pd.StringDtype("pyarrow"))
    except ImportError:
        return pd.array(values, dtype="string")


def _first_cc(profile: RawProfile) -> str | None:
    cc = profile.ids["compute_capability"].dropna()
    return str(cc.iloc[0]) if len(cc) else None

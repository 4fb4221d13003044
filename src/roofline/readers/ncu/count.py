"""A raw profile (:class:`~roofline.readers.ncu.raw_profile.RawProfile`, one run's launches, merged) counted
with the formula table (:mod:`roofline.counting`) into a validated :class:`~roofline.kernels.KernelTable`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from roofline import counting
from roofline.errors import InputError, MissingMetricsError
from roofline.kernels import (
    ABSENT_ALLOWED,
    COLUMNS,
    ENCODED_COLUMNS,
    FLOP_COLUMNS,
    NON_NEGATIVE,
    OP_COLUMNS,
    KernelTable,
    check_counts,
    encoded_text,
    flags,
    frame_of,
    is_lean,
    known_sum,
    repeated,
    strings,
    total_ops,
    unknown_encoded,
    unknown_values,
)
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.units import counted


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
    numbers = counted.columns
    # flops and ops by the kernel table's own rule (kernels.known_sum), on the counted arrays
    flops, flops_partial = known_sum([numbers[c] for c in FLOP_COLUMNS])
    ops, ops_partial = total_ops(flops, flops_partial, [numbers[c] for c in OP_COLUMNS])
    numbers = {**numbers, "flops": flops, "ops": ops}
    seen: set[int] = set()
    # a count column unknown for every launch is left out (known-missing) before anything is made for it
    absent = {name for name in ABSENT_ALLOWED if numbers.get(name) is None or bool(np.isnan(numbers[name]).all())}
    floats = {c.name: _owned(numbers.get(c.name), n, seen) for c in COLUMNS if c.dtype == "float64" and c.name not in absent}
    if not _any_known(floats):
        _no_roofline_metrics(profile, where)
    check_counts({name: floats[name] for name in NON_NEGATIVE if name in floats}, where)
    blank = _blank_launches(floats, profile.ids)
    for name in ABSENT_ALLOWED:  # and one that the blank launches alone had
        if name in floats and np.isnan(floats[name]).all():
            del floats[name]
    columns: dict[str, Any] = {}
    codes: dict[str, np.ndarray] = {}
    for c in COLUMNS:
        if c.dtype == "float64":
            if c.name in floats:
                columns[c.name] = floats[c.name]
        elif c.name == "tensor_precision":  # a type's name, or None, per launch: None throughout without
            # tensor work, made at once (1e6 launches: a Python object each to Arrow took 11-19 ms)
            precision = numbers[c.name]
            columns[c.name] = strings(precision) if np.count_nonzero(precision) else repeated(None, n)
        elif c.name in ("flops_partial", "ops_partial"):
            columns[c.name] = flags(flops_partial if c.name == "flops_partial" else ops_partial)
        elif c.name in profile.ids.columns:
            ids = profile.ids[c.name].array  # the profile's own: copied unless immutable (Arrow)
            if c.name in ENCODED_COLUMNS and c.dtype == "string" and len(ids) and bool(ids.isna().all()):
                columns[c.name] = unknown_encoded(n)  # (no phase, operator or module: one byte a launch)
                continue
            decoded = _decoded(ids)
            if decoded is not None:  # a categorical (or Arrow dictionary): its codes group the launches
                columns[c.name], codes[c.name] = decoded
            elif c.name in ENCODED_COLUMNS:  # text the reader gave plain: encoded here (distinct values)
                found, uniques = pd.factorize(ids, use_na_sentinel=True)
                columns[c.name] = encoded_text(np.asarray(uniques, dtype=object), found)
            else:
                columns[c.name] = ids.astype(c.dtype) if str(ids.dtype) != c.dtype else \
                    ids if isinstance(ids, pd.arrays.ArrowExtensionArray) else ids.copy()
        elif c.name == "source":  # one text for every launch: one category
            columns[c.name] = encoded_text([label], np.zeros(n, dtype=np.int64))
        elif c.name == "launches":
            columns[c.name] = pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), np.zeros(n, dtype=bool))
        elif c.dtype == "boolean":
            columns[c.name] = flags(np.zeros(n, dtype=bool))
        elif c.name in ENCODED_COLUMNS:
            columns[c.name] = unknown_encoded(n)
        else:
            columns[c.name] = unknown_values(c.dtype, n)
    # valid by construction: declared dtypes, and counts checked above. The float arrays are the
    # counted ones, adopted (1e6 launches: no 2-D copy).
    frame = frame_of(columns)
    metrics = profile.metrics.reset_index(drop=True)
    metrics.index = frame.index
    warnings = [f"{label}: {w}" for w in counted.warnings]
    if blank:
        warnings.insert(0, f"{label}: {blank}")
    hinted = dict.fromkeys([*counted.missing_hints, *counted.lower_bounds])
    column_notes = {c: tuple(counted.hints_for([c])) for c in hinted}
    table = KernelTable(frame=frame, metrics=metrics, sources=tuple(sources or [profile.source]),
                        warnings=tuple(dict.fromkeys([*profile.warnings, *warnings])), fp16_convention=fp16,
                        column_notes=column_notes, metric_hints=dict(counting.NCU_HINTS))
    if "kernel_name" in codes:  # the grouping by name, from the reader's codes: no hashing of 1e6 names
        table.keep_groups(["kernel_name"], codes["kernel_name"])
    return table


def _decoded(values: pd.api.extensions.ExtensionArray) -> tuple[pd.api.extensions.ExtensionArray, np.ndarray] | None:
    """A categorical of text, or an Arrow dictionary column, as the kernel table's encoded identity
    (:data:`~roofline.kernels.ENCODED_COLUMNS`: a categorical of ``string`` categories, sorted, never
    decoded per launch), and its codes (-1 where missing); None for any other column."""
    if is_lean(values):
        return values.copy(), np.asarray(values.codes)  # encoded so by the reader already: its own copy (a byte a launch)
    if isinstance(values.dtype, pd.CategoricalDtype) and values.dtype.categories.dtype.kind in "OUT":
        codes = np.asarray(values.codes)
        texts = values.dtype.categories.astype(str).to_numpy(dtype=object)
    elif isinstance(values.dtype, pd.ArrowDtype) and pa.types.is_dictionary(values.dtype.pyarrow_dtype):
        arrow = pa.array(values)
        arrow = arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow
        texts = arrow.dictionary.cast(pa.string()).to_numpy(zero_copy_only=False)
        codes = pc.fill_null(arrow.indices, -1).to_numpy(zero_copy_only=False)
    else:
        return None
    return encoded_text(texts, codes), codes


def _owned(values: np.ndarray | None, n: int, seen: set[int]) -> np.ndarray:
    """A float64 array the kernel table can own: ``values`` when nothing else holds it (a fresh
    result of counting, not met before: ``seen`` holds the ids of those taken), else a copy; NaN
    throughout when the column was not counted."""
    if values is None:
        return np.full(n, np.nan)
    if values.dtype != np.float64 or not values.flags.writeable or not values.flags.owndata or id(values) in seen:
        values = np.array(values, dtype=np.float64)
    seen.add(id(values))
    return values


def _any_known(floats: dict[str, np.ndarray]) -> bool:
    """True when some launch has a time, a FLOP count or a byte count (absent columns: unknown)."""
    return any(not np.isnan(floats[c]).all() for c in ("time_s", *FLOP_COLUMNS, "l1_bytes", "l2_bytes", "dram_bytes")
               if c in floats)


def _no_roofline_metrics(profile: RawProfile, where: str | None) -> NoReturn:
    """Raise :class:`MissingMetricsError`: the profile has no time, FLOP or byte counts."""
    needed = counting.required_metrics(_first_cc(profile) or "7.0")
    held = [c for c in needed if c in profile.metrics.columns]
    recorded = profile.metrics[held].apply(pd.to_numeric, errors="coerce").fillna(0).ne(0).any(axis=None)
    if held and not recorded:  # the counters were asked for, and ncu recorded none (a failed launch's stray 0s aside)
        raise MissingMetricsError(
            f"ncu recorded no value for {'its launch' if len(profile) == 1 else f'any of its {len(profile)} launches'}: the profile has "
            f"the counters' columns ({len(held)}, e.g. {held[0]}) but every one is empty, as when profiling failed "
            "or was cut short", path=where,
            hint="profile again; ncu's ==ERROR== lines say why a launch failed (--kernel-name NAME profiles one kernel)")
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


#: The columns a launch that ncu recorded has at least one of: its time, its work, its traffic.
RECORDED = ("time_s", "flops", "ops", "warp_inst", "l1_bytes", "shared_bytes", "l2_bytes", "dram_bytes")


def _blank_launches(floats: dict[str, np.ndarray], ids: pd.DataFrame) -> str | None:
    """Launches with no time, no work and no traffic in a profile where others have them: ncu recorded
    nothing for them, as when profiling one failed (ncu's own report shows a grid of (0, 0, 0) and every
    section NaN) or the run was stopped mid-replay. What such a launch does hold (a real H800 report
    reads 0 shared-memory instructions for a FlashAttention kernel) is not believable: every number of
    it is made unknown, here. Returns the warning; collecting more metrics would not help, profiling
    again would."""
    candidates = np.flatnonzero(np.isnan(floats["time_s"]))
    if not len(candidates):
        return None
    blank = candidates[np.logical_and.reduce([np.isnan(floats[c][candidates]) for c in RECORDED if c in floats])]
    if not len(blank):
        return None
    for values in floats.values():
        values[blank] = np.nan
    names = ids["kernel_name"].iloc[blank].dropna().astype(str) if "kernel_name" in ids else pd.Series([], dtype=str)
    shown = [n if len(n) <= 60 else n[:57] + "..." for n in dict.fromkeys(names)]
    which = "; ".join(shown[:3]) + (f"; and {len(shown) - 3} more kernels" if len(shown) > 3 else "")
    it = "it" if len(blank) == 1 else "them"
    return (f"ncu recorded no time, work or traffic for {counted(len(blank), 'launch', 'launches')}"
            f"{' (' + which + ')' if which else ''}: profiling {it} failed or was cut short, so {it} "
            f"{'is' if len(blank) == 1 else 'are'} left unknown (any other cell of {it} too) and collecting more "
            f"metrics would not help; profile {it} again (ncu --kernel-name NAME selects one kernel)")


def _first_cc(profile: RawProfile) -> str | None:
    cc = profile.ids["compute_capability"].dropna()
    return str(cc.iloc[0]) if len(cc) else None

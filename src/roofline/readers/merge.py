"""Merge several inputs that describe the same launches into one :class:`RawProfile`.

Typical case: one ncu run per metric (the DeepCAM data of the Hierarchical Roofline
paper: 12 files, one metric each, each run its own process). Launches are matched
by ncu's launch ID; the kernel names of matched launches must agree.

Timing rule: ncu's SASS-instruction metrics (``sm__sass_*``, ``smsp__sass_*``) are
collected by patching the kernel, which inflates its cycles (real data: 142 ms
instead of 0.92 ms). When more than one input carries timing
(``gpu__time_duration.*``, ``sm__cycles_elapsed.*``), timing is taken from the
inputs that collected no SASS metrics, and a warning says from which file.
Any other metric present in several inputs with different values: the first
input's value wins, with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.readers.profile import RawProfile, is_timing_metric


def _name(p: RawProfile) -> str:
    return Path(p.source).name


def _check_same_launches(base: RawProfile, other: RawProfile) -> pd.Series:
    """Row positions of ``other``'s launches in ``base`` order; raises when launches differ."""
    base_ids = base.ids["launch_id"]
    other_ids = other.ids["launch_id"]
    if other_ids.duplicated().any() or base_ids.duplicated().any():
        raise InputError("launch IDs repeat within a file; cannot match launches across files", path=other.source)
    if set(base_ids) != set(other_ids):
        only_a = sorted(set(base_ids) - set(other_ids))[:5]
        only_b = sorted(set(other_ids) - set(base_ids))[:5]
        raise InputError(
            f"the files do not describe the same launches: launch IDs differ from {_name(base)} "
            f"(only there: {only_a}; only here: {only_b})", path=other.source,
            hint="merge only files of the same program run with the same --launch-skip/--launch-count; analyse others separately",
        )
    position = pd.Series(np.arange(len(other_ids)), index=other_ids.to_numpy())
    order = position.loc[base_ids.to_numpy()].to_numpy()
    names_a = base.ids["kernel_name"].astype("string").to_numpy(dtype=object, na_value=None)
    names_b = other.ids["kernel_name"].astype("string").to_numpy(dtype=object, na_value=None)[order]
    differ = [(i, a, b) for i, (a, b) in enumerate(zip(names_a, names_b)) if a is not None and b is not None and a != b]
    if differ:
        i, a, b = differ[0]
        raise InputError(
            f"the files do not describe the same launches: launch {base_ids.iloc[i]} is {a[:80]!r} in "
            f"{_name(base)} but {b[:80]!r} here ({len(differ)} launches differ)", path=other.source,
            hint="merge only files of the same program run; analyse others separately",
        )
    return pd.Series(order)


def merge_profiles(profiles: Sequence[RawProfile]) -> RawProfile:
    """One profile with every metric of every input, one row per launch (first input's order)."""
    if not profiles:
        raise ValueError("no profiles to merge")
    if len(profiles) == 1:
        return profiles[0]
    base = profiles[0]
    warnings: list[str] = [w for p in profiles for w in p.warnings]
    aligned: list[pd.DataFrame] = []
    for p in profiles:
        order = _check_same_launches(base, p) if p is not base else pd.Series(np.arange(len(p)))
        aligned.append(p.metrics.iloc[order.to_numpy()].reset_index(drop=True))

    # Which inputs may supply timing.
    timing_inputs = [i for i, m in enumerate(aligned) if any(is_timing_metric(c) for c in m.columns)]
    drop_timing: set[int] = set()
    if len(timing_inputs) > 1:
        clean = [i for i in timing_inputs if not profiles[i].sass_instrumented]
        if clean and len(clean) < len(timing_inputs):
            drop_timing = set(timing_inputs) - set(clean)
            warnings.append(
                "timing taken from " + ", ".join(_name(profiles[i]) for i in clean)
                + " (no SASS-instruction metrics); ignored the timing of "
                + ", ".join(_name(profiles[i]) for i in sorted(drop_timing))
                + " (instrumented passes inflate cycles)"
            )
        elif not clean:
            warnings.append(
                "every input with timing also collected SASS-instruction metrics, whose instrumentation inflates "
                "cycles; timing may be too long (profile gpu__time_duration.sum in a run without sm__sass_* metrics)"
            )

    columns: dict[str, pd.Series] = {}
    origin: dict[str, int] = {}
    units: dict[str, str] = {}
    for i, m in enumerate(aligned):
        for c in m.columns:
            if i in drop_timing and is_timing_metric(c):
                continue
            if c not in columns:
                columns[c] = m[c]
                origin[c] = i
                units[c] = profiles[i].units.get(c, "")
                continue
            a, b = columns[c], m[c]
            same = a.equals(b) or (a.dtype.kind in "iuf" and b.dtype.kind in "iuf"
                                   and np.allclose(a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64),
                                                   rtol=1e-12, atol=0, equal_nan=True))
            if not same:
                warnings.append(f"{c} differs between {_name(profiles[origin[c]])} and {_name(profiles[i])}; "
                                f"kept {_name(profiles[origin[c]])}'s values")
    metrics = pd.DataFrame(columns)
    ids = base.ids.reset_index(drop=True).copy()
    for p in profiles[1:]:  # fill identity gaps (e.g. CC known in one file only)
        order = _check_same_launches(base, p)
        other = p.ids.iloc[order.to_numpy()].reset_index(drop=True)
        for col in ("phase", "device", "compute_capability", "grid", "block", "stream"):
            ids[col] = ids[col].fillna(other[col])
    source = ",".join(p.source for p in profiles)
    return RawProfile(ids=ids, metrics=metrics, source=source, units=units, warnings=tuple(dict.fromkeys(warnings)))

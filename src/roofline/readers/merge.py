"""Several profiler inputs: which describe the same launches (one run, merged into one
:class:`RawProfile`), and which are separate runs (kept apart, side by side).

One run split over files: one ncu run per metric (the DeepCAM data of the Hierarchical
Roofline paper: 12 files, one metric each, each run its own process). Launches are
matched by ncu's launch ID.

Runs (:func:`split_runs`): a file joins a run when it describes the run's launches: the
same launch IDs, the same kernel name at every ID, the same process name where both
files know it, and no metric measured in both with different values by different
processes (the files of a one-metric-per-file set measure different metrics; two runs
of one program measure the same ones and differ). Timing metrics do not count towards
that last test while one of the two files is SASS-instrumented (the timing rule below
arbitrates). Any other file starts a run of its own: two different programs, each
numbering its launches from 0, are two runs. The one error: a file from the same
process (same process ID, and same name where known) and with the same launch IDs,
whose kernel names differ, claims to be the run it contradicts. Launch IDs that repeat
within a file cannot be matched at all, and are refused when there are several files.

Timing rule: ncu's SASS-instruction metrics (``sm__sass_*``, ``smsp__sass_*``) are
collected by patching the kernel, which inflates its cycles (real data: 142 ms
instead of 0.92 ms). When more than one input of a run carries timing
(``gpu__time_duration.*``, ``sm__cycles_elapsed.*``), timing is taken from the
inputs that collected no SASS metrics, and a warning says from which file.
Any other metric present in several inputs of a run with different values: the first
input's value wins, with a warning.

Run labels (:func:`run_labels`): a run's file name less the suffixes we know
(``.kernels.json``, ``.ncu.csv``, ``.ncu-rep``, ``.ncu-repz``, ``.csv``): ``b`` for
``/x/b.ncu.csv``. A run of several files takes the longest common start of their names
(trailing ``.``, ``_``, ``-`` removed), or the first file's label when they share none.
Equal labels are told apart by their folders when those differ (``x/b``, ``y/b``), else by a
count (``b``, ``b#2``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.readers.profile import RawProfile, is_timing_metric
from roofline.units import counted

#: Suffixes left out of a run's label, longest first (matched without regard to case).
KNOWN_SUFFIXES = (".kernels.json", ".ncu.csv", ".ncu-repz", ".ncu-rep", ".csv")


def _name(p: RawProfile) -> str:
    return Path(p.source).name


def _refuse_repeated_ids(p: RawProfile) -> None:
    if p.ids["launch_id"].duplicated().any():
        raise InputError("launch IDs repeat within a file; cannot match launches across files", path=p.source)


def _check_same_launches(base: RawProfile, other: RawProfile) -> pd.Series:
    """Row positions of ``other``'s launches in ``base`` order; raises when launches differ."""
    base_ids = base.ids["launch_id"]
    other_ids = other.ids["launch_id"]
    _refuse_repeated_ids(other)
    _refuse_repeated_ids(base)
    if set(base_ids) != set(other_ids):
        # plain ints: a list of numpy integers prints as [np.int64(3), ...]
        only_a = ", ".join(str(int(i)) for i in sorted(set(base_ids) - set(other_ids))[:5]) or "none"
        only_b = ", ".join(str(int(i)) for i in sorted(set(other_ids) - set(base_ids))[:5]) or "none"
        raise InputError(
            f"the files do not describe the same launches: launch IDs differ from {_name(base)} "
            f"(only there: {only_a}; only here: {only_b})", path=other.source,
            hint="merge only files of the same program run with the same --launch-skip/--launch-count; analyse others separately",
        )
    order = _order(base, other)
    differ = _name_differences(base, other, order)
    if differ:
        i, a, b = differ[0]
        raise InputError(
            f"the files do not describe the same launches: launch {base_ids.iloc[i]} is {a[:80]!r} in "
            f"{_name(base)} but {b[:80]!r} here ({counted(len(differ), 'launch', 'launches')} {'differs' if len(differ) == 1 else 'differ'})", path=other.source,
            hint="merge only files of the same program run; analyse others separately",
        )
    return pd.Series(order)


def _order(base: RawProfile, other: RawProfile) -> np.ndarray:
    """Row positions of ``other``'s launches in ``base`` order (same launch-ID sets, no repeats)."""
    other_ids = other.ids["launch_id"]
    position = pd.Series(np.arange(len(other_ids)), index=other_ids.to_numpy())
    return position.loc[base.ids["launch_id"].to_numpy()].to_numpy()


def _name_differences(base: RawProfile, other: RawProfile, order: np.ndarray) -> list[tuple[int, str, str]]:
    names_a = base.ids["kernel_name"].astype("string").to_numpy(dtype=object, na_value=None)
    names_b = other.ids["kernel_name"].astype("string").to_numpy(dtype=object, na_value=None)[order]
    return [(i, a, b) for i, (a, b) in enumerate(zip(names_a, names_b)) if a is not None and b is not None and a != b]


def _known(p: RawProfile, column: str) -> set[object]:
    """The distinct known values of an identity column (empty when the reader has none)."""
    if column not in p.ids.columns:
        return set()
    return set(p.ids[column].dropna().tolist())


def _same_process(a: RawProfile, b: RawProfile) -> bool:
    """Both files name the same process(es): same known process IDs, and names that do not differ."""
    pids_a, pids_b = _known(a, "process_id"), _known(b, "process_id")
    if not pids_a or pids_a != pids_b:
        return False
    names_a, names_b = _known(a, "process_name"), _known(b, "process_name")
    return not (names_a and names_b and names_a != names_b)


def _measured_differently(a: RawProfile, b: RawProfile, order: np.ndarray) -> str | None:
    """A metric both files measured with different values (``b`` aligned to ``a`` by ``order``), or None.

    Timing metrics count only when neither file is SASS-instrumented: otherwise the
    difference is the instrumentation's, which the timing rule settles.
    """
    timing_counts = not (a.sass_instrumented or b.sass_instrumented)
    for c in a.metrics.columns:
        if c not in b.metrics.columns or (is_timing_metric(c) and not timing_counts):
            continue
        x, y = a.metrics[c].reset_index(drop=True), b.metrics[c].iloc[order].reset_index(drop=True)
        if not _same_values(x, y):
            return str(c)
    return None


def _same_values(a: pd.Series, b: pd.Series) -> bool:
    return bool(a.equals(b) or (a.dtype.kind in "iuf" and b.dtype.kind in "iuf"
                                and np.allclose(a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64),
                                                rtol=1e-12, atol=0, equal_nan=True)))


def _joins(run: list[RawProfile], p: RawProfile) -> bool:
    """True when ``p`` describes the launches of ``run`` (see the module docstring); raises when
    ``p`` claims to be that run (same process, same launch IDs) but names other kernels."""
    base = run[0]
    if set(base.ids["launch_id"]) != set(p.ids["launch_id"]):
        return False
    names_a, names_b = _known(base, "process_name"), _known(p, "process_name")
    if names_a and names_b and names_a != names_b:
        return False
    order = _order(base, p)
    if _name_differences(base, p, order):
        if _same_process(base, p):
            _check_same_launches(base, p)  # raises, naming the first launch that differs
        return False
    for member in run:
        if not _same_process(member, p) and _measured_differently(member, p, _order(member, p)) is not None:
            return False
    return True


def split_runs(profiles: Sequence[RawProfile]) -> list[list[RawProfile]]:
    """Group inputs into runs (see the module docstring), each run's files and the runs in input order."""
    if len(profiles) > 1:
        for p in profiles:
            _refuse_repeated_ids(p)
    runs: list[list[RawProfile]] = []
    for p in profiles:
        for run in runs:
            if _joins(run, p):
                run.append(p)
                break
        else:
            runs.append([p])
    return runs


def _label(path: str) -> str:
    name = Path(path).name
    for suffix in KNOWN_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def run_labels(runs: Sequence[Sequence[str]]) -> list[str]:
    """One label per run, from the paths of its files (see the module docstring)."""
    labels = []
    for paths in runs:
        names = [_label(p) for p in paths]
        if len(names) > 1:
            common = os.path.commonprefix(names).rstrip("._- ")
            labels.append(common or names[0])
        else:
            labels.append(names[0])
    folders = [Path(paths[0]).parent.name for paths in runs]
    for label in {x for x, n in Counter(labels).items() if n > 1}:  # equal labels: their folders, if they differ
        same = [i for i, x in enumerate(labels) if x == label]
        if all(folders[i] for i in same) and len({folders[i] for i in same}) == len(same):
            for i in same:
                labels[i] = f"{folders[i]}/{label}"
    seen: Counter[str] = Counter()
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def merge_profiles(profiles: Sequence[RawProfile]) -> RawProfile:
    """One profile with every metric of every input, one row per launch (first input's order).

    The inputs must describe the same launches (one run, see :func:`split_runs`); raises
    :class:`InputError` when they do not."""
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
    keep_timing: dict[int, set[str]] = {}
    if len(timing_inputs) > 1:
        clean = [i for i in timing_inputs if not profiles[i].sass_instrumented]
        drop_timing = set(timing_inputs) - set(clean) if clean else set()
        # Exports of one process come from one ncu session, whose metrics of a launch agree with each
        # other (rates x cycles = counts): its instrumented file may still give what no clean file has
        # (the SM clock of a roofline-section export, say).
        clean_columns = {c for i in clean for c in aligned[i].columns if is_timing_metric(c)}
        keep_timing = {i: {c for c in aligned[i].columns if is_timing_metric(c) and c not in clean_columns}
                       for i in drop_timing if any(_same_process(profiles[i], profiles[c]) for c in clean)}
        if drop_timing:
            warnings.append(
                "timing taken from " + ", ".join(_name(profiles[i]) for i in clean)
                + " (no SASS-instruction metrics); ignored the timing of "
                + ", ".join(_name(profiles[i]) for i in sorted(drop_timing))
                + " (instrumented passes inflate cycles)"
                + "".join(f"; kept {_name(profiles[i])}'s {', '.join(sorted(cols))} (same process, no clean value)"
                          for i, cols in sorted(keep_timing.items()) if cols)
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
            if i in drop_timing and is_timing_metric(c) and c not in keep_timing.get(i, ()):
                continue
            if c not in columns:
                columns[c] = m[c]
                origin[c] = i
                units[c] = profiles[i].units.get(c, "")
                continue
            if not _same_values(columns[c], m[c]):
                warnings.append(f"{c} differs between {_name(profiles[origin[c]])} and {_name(profiles[i])}; "
                                f"kept {_name(profiles[origin[c]])}'s values")
    metrics = pd.DataFrame(columns)
    ids = base.ids.reset_index(drop=True).copy()
    for p in profiles[1:]:  # fill identity gaps (e.g. CC known in one file only)
        order = _check_same_launches(base, p)
        other = p.ids.iloc[order.to_numpy()].reset_index(drop=True)
        for col in ("phase", "op", "module", "device", "compute_capability", "grid", "block", "stream"):
            if col in ids.columns and col in other.columns:
                ids[col] = ids[col].fillna(other[col])
    source = ",".join(p.source for p in profiles)
    return RawProfile(ids=ids, metrics=metrics, source=source, units=units, warnings=tuple(dict.fromkeys(warnings)))

"""Several profiler inputs: which describe the same launches (one run, merged into one
:class:`RawProfile`), and which are separate runs (kept apart, side by side).

One run split over files: one ncu run per metric (the DeepCAM data of the Hierarchical
Roofline paper: 12 files, one metric each, each run its own process), or per metric group (GENE's
time/DRAM report and FLOP report, tests/data/ncu/v100_gene_dgdxy_rep_set_and_exports). Launches are
matched by ncu's launch ID. One rule whatever the form: the reports, their CSV exports, one of each, or
a folder holding both give one run and each launch once.

Runs (:func:`split_runs`): a file joins a run when it describes the run's launches: the
same launch IDs, the same kernel at every ID, the same process name where both
files know it, and no metric measured in both with different values by different
processes (the files of a one-metric-per-file set measure different metrics; two runs
of one program measure the same ones and differ). Values are compared to the digits a CSV
printed (:mod:`roofline.readers.ncu.printed`): a report read through ``ncu_report`` (full values, no
process ID) and its own CSV export (rounded, with one) are one run, and the report's values are
kept. Timing metrics do not count towards
that last test while one of the two files is SASS-instrumented (the timing rule below
arbitrates); metrics of the profiling session (``profiler__*``, ``launch__function_pcs``:
:func:`~roofline.readers.ncu.raw_profile.is_session_metric`) never do. A report, and its raw page, holds them
whatever metrics were asked for, and each session has its own values: counting them made two
reports of one set two runs while their details-page exports, which leave them out, were one.
Any other file starts a run of its own: two different programs, each numbering its launches
from 0, are two runs. The one error: a file from the same
process (same process ID, and same name where known) and with the same launch IDs,
whose kernels differ, claims to be the run it contradicts. Launch IDs that repeat
within a file cannot be matched at all, and are refused when there are several files.

Kernels are compared by :func:`~roofline.readers.ncu.names.same_kernel`, not by the text printed: ncu
versions print one kernel's name in different forms (a report read by ncu 2024.1.1 says
``flashinfer::norm::RMSNormKernel<(unsigned int)8, ...>``, its CSV export by ncu 2026.2.1
``norm::RMSNormKernel<8, ...>``; tests/data/ncu/h200_sections_rep_and_details_export), and a
report beside its own export is one run. The merged run names each launch by its fullest
form (the longest: the report's, there).

Timing rule: ncu's SASS-instruction metrics (``sm__sass_*``, ``smsp__sass_*``) are
collected by patching the kernel, which inflates its cycles (real data: 142 ms
instead of 0.92 ms). When more than one input of a run carries timing
(``gpu__time_duration.*``, ``sm__cycles_elapsed.*``), timing is taken from the
inputs that collected no SASS metrics, and a warning says from which file; unless every two
inputs share a timing metric and agree on it (exports of one session: nothing to settle).
A metric in several inputs of a run: a report's stored values win over a CSV's print of them;
between two prints of one value, each value comes from the one printed to more digits; values
that differ beyond the digits printed: the first input's, with a warning; a session metric whose
sessions differ: left out (none of its values is the launch's).

Speed: what matching needs of an input (launch IDs, kernel names, process IDs and names, metric
names) is taken from its frames once per call, as NumPy arrays and sets, and only when a test
needs it; files of one run usually list their launches in the same order, which one array
comparison tells (:mod:`roofline.readers.ncu.matching`). The merged metrics are made in one DataFrame
call (the paper's twelve one-metric files: a few milliseconds in all, not a few hundred).

Run labels (:func:`run_labels`): a run's file name less the suffixes we know
(``.kernels.json``, ``.ncu.csv``, ``.ncu-rep``, ``.ncu-repz``, ``.parquet``, ``.csv``, each CSV's
with ``.gz``): ``b`` for ``/x/b.ncu.csv``. A run of several files takes the longest common start of their names
(trailing ``.``, ``_``, ``-`` removed), or the first file's label when they share none.
Equal labels are told apart by their folders when those differ (``x/b``, ``y/b``), else by a
count (``b``, ``b#2``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from roofline.errors import InputError
from roofline.kernels.arrays import text_codes, used_text
from roofline.readers.ncu.columns import frame_of
from roofline.readers.ncu.matching import (
    Launches,
    check_same_launches,
    joined_codes,
    launch_order,
    launch_summaries,
    refuse_repeated_ids,
    same_process,
    same_text,
    shown_names,
    take,
)
from roofline.readers.ncu.printed import agree_as_printed, agree_printed, finer
from roofline.readers.ncu.raw_profile import RawProfile, is_session_metric, is_timing_metric
from roofline.units import si_factor

#: Suffixes left out of a run's label, longest first (matched without regard to case).
KNOWN_SUFFIXES = (".kernels.json", ".ncu.csv.gz", ".ncu.csv", ".ncu-repz", ".ncu-rep", ".parquet", ".csv.gz", ".csv")


def _measured_differently(a: RawProfile, b: RawProfile, order: np.ndarray | None) -> str | None:
    """A metric both files measured with different values (``b`` aligned to ``a`` by ``order``), or None.

    Values differ beyond the digits a printed file shows (:func:`_agree`). Timing metrics count
    only when neither file is SASS-instrumented: otherwise the difference is the
    instrumentation's, which the timing rule settles. Metrics of the profiling session
    (:func:`~roofline.readers.ncu.raw_profile.is_session_metric`) never count: a report holds them, and so
    does its raw page, whatever metrics were asked for, and each session has its own. Between a
    report's stored values and a printed export, one metric in a hundred may differ
    (:data:`PRINTED_OTHERWISE`).
    """
    common = [c for c in a.metrics.columns if c in b.metrics.columns and not is_session_metric(c)]
    timing_counts = not common or not (a.sass_instrumented or b.sass_instrumented)
    compared = [c for c in common if timing_counts or not is_timing_metric(c)]
    allowed = int(PRINTED_OTHERWISE * len(compared)) if a.printed != b.printed else 0
    differ: list[str] = []
    for c in compared:
        if not _agree(_values(a.metrics[c]), a, _take_array(_values(b.metrics[c]), order), b, c):
            differ.append(str(c))
            if len(differ) > allowed:
                return differ[0]
    return None


#: The share of metrics a report and its own CSV export may disagree on: ncu prints a few in other
#: units than it stores (``derived__pct_occupancy_per_shared_mem_size``: stored 2006 %/byte,
#: printed 2.006 %/Kbyte).
PRINTED_OTHERWISE = 0.01


def _agree(x: ExtensionArray | np.ndarray, a: RawProfile, y: ExtensionArray | np.ndarray, b: RawProfile,
           column: str) -> bool:
    """``a``'s and ``b``'s values of ``column`` (aligned) are one measurement: equal; or equal to the
    digits printed (a report's stored values and its own CSV export; two pages of one export);
    or, against a report, left out of the print."""
    if _same_values(x, y):
        return True
    if not (a.printed or b.printed):
        return False
    numbers = _is_numpy_number(x) and _is_numpy_number(y)
    if a.printed and b.printed:
        return numbers and bool(agree_printed(np.asarray(x), np.asarray(y), **_prints(a, b, column)).all())
    (stored, _), (printed, shown) = sorted(((x, a), (y, b)), key=lambda side: side[1].printed)
    if _is_numpy_number(stored) and bool(np.isnan(np.asarray(stored, dtype=np.float64)).all()):
        return True  # nothing stored to contradict what was printed ("no data", say)
    if not numbers:  # text: what was printed, as stored
        shown_values = pd.array(printed, dtype=object)
        told = ~np.asarray(pd.isna(shown_values), dtype=bool)
        return bool((np.asarray(stored, dtype=object)[told] == np.asarray(shown_values, dtype=object)[told]).all())
    return bool(agree_as_printed(np.asarray(stored), np.asarray(printed), factor=_factor(shown, column),
                                 per_row_units=shown.per_row_units).all())


def _prints(a: RawProfile, b: RawProfile, column: str) -> dict[str, Any]:
    """How ``a`` and ``b`` printed ``column``: :func:`roofline.readers.ncu.printed.agree_printed`'s keywords."""
    return {"factor_x": _factor(a, column), "factor_y": _factor(b, column),
            "per_row_x": a.per_row_units, "per_row_y": b.per_row_units}


def _factor(p: RawProfile, column: str) -> float:
    """The unit ``column`` was printed in, in SI."""
    return si_factor(p.units.get(column, ""))


def _take_array(values: ExtensionArray | np.ndarray, order: np.ndarray | None) -> ExtensionArray | np.ndarray:
    return values if order is None else values.take(order)


def _values(column: pd.Series) -> ExtensionArray | np.ndarray:
    """A column's values: a NumPy array for NumPy dtypes, else its pandas array."""
    return column.to_numpy() if isinstance(column.dtype, np.dtype) else column.array


def _same_values(a: ExtensionArray | np.ndarray, b: ExtensionArray | np.ndarray) -> bool:
    """Equal values (NaN equal to NaN, same dtype), or numbers equal within a relative 1e-12."""
    x, y = np.asarray(a) if _is_numpy_number(a) else a, np.asarray(b) if _is_numpy_number(b) else b
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):  # NumPy numbers: no Series per test
        if x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return True
        return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-12, atol=0, equal_nan=True))
    sa, sb = pd.Series(a), pd.Series(b)
    return bool(sa.equals(sb) or (sa.dtype.kind in "iuf" and sb.dtype.kind in "iuf"
                                  and np.allclose(sa.to_numpy(dtype=np.float64), sb.to_numpy(dtype=np.float64),
                                                  rtol=1e-12, atol=0, equal_nan=True)))


def _is_numpy_number(values: ExtensionArray | np.ndarray) -> bool:
    return isinstance(values.dtype, np.dtype) and values.dtype.kind in "iuf"


def _joins(run: list[RawProfile], p: RawProfile, launches: dict[int, Launches]) -> bool:
    """True when ``p`` describes the launches of ``run`` (see the module docstring); raises when
    ``p`` claims to be that run (same process, same launch IDs) but names other kernels."""
    base, a, b = run[0], launches[id(run[0])], launches[id(p)]
    if a.id_set != b.id_set:
        return False
    if a.process_names and b.process_names and a.process_names != b.process_names:
        return False
    if not a.same_names(b, launch_order(a, b)):
        if same_process(a, b):
            check_same_launches(base, p, launches)  # raises, naming the first launch that differs
        return False
    for member in run:
        m = launches[id(member)]
        if not m.metrics.isdisjoint(b.metrics) and not same_process(m, b) \
                and _measured_differently(member, p, launch_order(m, b)) is not None:
            return False
    return True


def split_runs(profiles: Sequence[RawProfile]) -> list[list[RawProfile]]:
    """Group inputs into runs (see the module docstring), each run's files and the runs in input order."""
    launches = launch_summaries(profiles)
    if len(profiles) > 1:
        for p in profiles:
            refuse_repeated_ids(p, launches[id(p)])
    runs: list[list[RawProfile]] = []
    for p in profiles:
        for run in runs:
            if _joins(run, p, launches):
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
    launches = launch_summaries(profiles)
    warnings: list[str] = [w for p in profiles for w in p.warnings]
    names = shown_names(profiles)
    orders = [None] + [check_same_launches(base, p, launches) for p in profiles[1:]]
    # Each input's metric columns in base order, as arrays: one DataFrame is made, at the end.
    aligned = [{c: _take_array(_values(v), order) for c, v in p.metrics.items()} for p, order in zip(profiles, orders)]

    # Which inputs may supply timing.
    timing_inputs = [i for i, m in enumerate(aligned) if any(is_timing_metric(c) for c in m)]
    drop_timing: set[int] = set()
    keep_timing: dict[int, set[str]] = {}
    if len(timing_inputs) > 1 and not _timing_agrees(profiles, aligned, timing_inputs):
        clean = [i for i in timing_inputs if not profiles[i].sass_instrumented]
        drop_timing = set(timing_inputs) - set(clean) if clean else set()
        # Exports of one process come from one ncu session, whose metrics of a launch agree with each
        # other (rates x cycles = counts): its instrumented file may still give what no clean file has
        # (the SM clock of a roofline-section export, say).
        clean_columns = {c for i in clean for c in aligned[i] if is_timing_metric(c)}
        keep_timing = {i: {c for c in aligned[i] if is_timing_metric(c) and c not in clean_columns}
                       for i in drop_timing
                       if any(same_process(launches[id(profiles[i])], launches[id(profiles[c])]) for c in clean)}
        if drop_timing:
            warnings.append(
                "timing taken from " + ", ".join(names[i] for i in clean)
                + " (no SASS-instruction metrics); ignored the timing of "
                + ", ".join(names[i] for i in sorted(drop_timing))
                + " (instrumented passes inflate cycles)"
                + "".join(f"; kept {names[i]}'s {', '.join(sorted(cols))} (same process, no clean value)"
                          for i, cols in sorted(keep_timing.items()) if cols)
            )
        elif not clean:
            warnings.append(
                "every input with timing also collected SASS-instruction metrics, whose instrumentation inflates "
                "cycles; timing may be too long (profile gpu__time_duration.sum in a run without sm__sass_* metrics)"
            )

    columns: dict[str, ExtensionArray | np.ndarray] = {}
    origin: dict[str, int] = {}
    units: dict[str, str] = {}
    sessions: set[str] = set()  # session metrics with one value per session: none is the launch's
    for i, m in enumerate(aligned):
        for c, values in m.items():
            if i in drop_timing and is_timing_metric(c) and c not in keep_timing.get(i, ()):
                continue
            if c in sessions:
                continue
            if c not in columns:
                columns[c] = values
                origin[c] = i
                units[c] = profiles[i].units.get(c, "")
                continue
            kept, new = profiles[origin[c]], profiles[i]
            if is_session_metric(c) and not _agree(columns[c], kept, values, new, c):
                sessions.add(c)
                del columns[c], origin[c], units[c]
            elif kept.printed != new.printed:  # one run (split_runs): the report's stored values, not a print of them
                if kept.printed:
                    columns[c], origin[c], units[c] = values, i, new.units.get(c, "")
            elif _agree(columns[c], kept, values, new, c):
                if kept.printed and _is_numpy_number(values) and _is_numpy_number(columns[c]):
                    more = finer(np.asarray(columns[c]), np.asarray(values), **_prints(kept, new, c))
                    if more.any():  # each value from the page that printed it to more digits
                        columns[c] = np.where(more, np.asarray(values, dtype=np.float64),
                                              np.asarray(columns[c], dtype=np.float64))
            else:
                warnings.append(f"{c} differs between {names[origin[c]]} and {names[i]}; "
                                f"kept {names[origin[c]]}'s values")
    metrics = frame_of(columns, len(base), copy=True)  # the inputs' own arrays: copied, as pandas would
    ids = _filled_ids(base, list(zip(profiles[1:], orders[1:])))
    ids["kernel_name"] = _fullest_names(ids["kernel_name"], [(launches[id(p)], order)
                                                              for p, order in zip(profiles[1:], orders[1:])])
    source = ",".join(p.source for p in profiles)
    return RawProfile(ids=ids, metrics=metrics, source=source, units=units, warnings=tuple(dict.fromkeys(warnings)),
                      printed=any(p.printed for p in profiles), per_row_units=any(p.per_row_units for p in profiles))


def _timing_agrees(profiles: Sequence[RawProfile], aligned: list[dict[str, Any]], inputs: list[int]) -> bool:
    """Every two of ``inputs`` share a timing metric, and every timing metric they share has one
    value per launch (to the digits printed): exports of one session (a report and its own CSV
    pages), nothing for the timing rule to settle."""
    timing = {i: {c for c in aligned[i] if is_timing_metric(c)} for i in inputs}
    for n, i in enumerate(inputs):
        for j in inputs[n + 1:]:
            shared = timing[i] & timing[j]
            if not shared or not all(_agree(aligned[i][c], profiles[i], aligned[j][c], profiles[j], c)
                                     for c in sorted(shared)):
                return False
    return True


def _fullest_names(names: pd.Series, others: list[tuple[Launches, np.ndarray | None]]) -> pd.Series:
    """Each launch's name in its fullest form among the inputs' (the longest; the first input's
    among equals): the names of one launch name one kernel (:func:`check_same_launches`), in the
    forms different ncu versions print (``flashinfer::norm::RMSNormKernel<(unsigned int)8, ...>``,
    not ``norm::RMSNormKernel<8, ...>``). ``others``: the other inputs and the order of their launches
    in ``names``'. Compared as codes into the inputs' distinct names, their lengths looked up per
    code: no name is decoded per launch."""
    texts, codes = text_codes(names)
    joint = list(texts)
    chosen = np.asarray(codes, dtype=np.int64)
    changed = False
    for launches, order in others:
        if order is None and same_text(names.array, launches.profile.ids["kernel_name"].array):
            continue  # (the files of one run mostly name their launches alike: told without encoding)
        other = take(joined_codes(joint, launches), order)
        if np.array_equal(other, chosen):
            continue
        length = np.array([len(t) for t in joint] + [-1])  # code -1 (unknown): length -1, shorter than any
        longer = (other >= 0) & (length[other] > length[chosen])
        if longer.any():
            chosen = np.where(longer, other, chosen)
            changed = True
    if not changed:
        return names
    return pd.Series(used_text(joint, chosen), index=names.index)


def _filled_text(values: ExtensionArray, other: ExtensionArray, fill: np.ndarray) -> pd.Categorical:
    """Text ``values`` with the launches marked ``fill`` taken from ``other`` (same launches, same
    order), as an encoded column: the two inputs' codes into their distinct texts, joined (nothing
    decoded per launch); a text no launch keeps is no category."""
    texts, codes = text_codes(values)
    other_texts, other_codes = text_codes(other)
    joined = np.where(fill, np.asarray(other_codes, dtype=np.int64) + len(texts), np.asarray(codes, dtype=np.int64))
    return used_text([*texts, *other_texts], joined)


#: Identity columns one input may know where the first does not (e.g. CC known in one file only).
_FILLED = ("phase", "op", "module", "process_id", "device", "compute_capability", "grid", "block", "stream")


def _filled_ids(base: RawProfile, others: list[tuple[RawProfile, np.ndarray | None]]) -> pd.DataFrame:
    """The first input's identity columns, their gaps filled from the other inputs, in order."""
    index = base.ids.index
    fresh = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    ids = base.ids.copy() if fresh else base.ids.reset_index(drop=True).copy()
    for col in _FILLED:
        if col not in ids.columns:
            continue
        values = given = ids[col].array
        missing = np.asarray(values.isna())
        for p, order in others:
            if not missing.any():
                break
            if col not in p.ids.columns:
                continue
            other = p.ids[col].array
            if isinstance(other, pd.Categorical) and not len(other.categories):  # encoded, no text: nothing to fill from
                continue
            unknown = np.asarray(other.isna())
            if unknown.all():  # nothing to fill from (the usual case: no input knows the column)
                continue
            if order is not None:
                other, unknown = other.take(order), unknown[order]
            if isinstance(values, pd.Categorical) or isinstance(other, pd.Categorical):  # encoded text
                fill = missing & ~unknown
                if not fill.any():
                    continue
                values = _filled_text(values, other, fill)
            elif other.dtype != values.dtype:  # never from our readers: pandas' own fill, as it always was
                values = pd.Series(values).fillna(pd.Series(other)).array
            else:
                fill = missing & ~unknown
                if not fill.any():
                    continue
                values = values.copy()
                values[fill] = other[fill]
            missing = np.asarray(values.isna())
        if values is not given:
            ids[col] = values
    return ids

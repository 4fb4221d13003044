"""A timeline's launches with the counts of a profile of the same program: :func:`join_counts`.

Nsight Compute replays each kernel alone, serialized, caches flushed: its counts (FLOPs, bytes,
instructions) are the kernel's, its times are not the program's. A timeline has the times, no
counts. The join gives each launch of the timeline the counts of the same launch in the counting
profile; its time stays the timeline's (the profile's time is kept as ``replay_time_s`` in the
metrics). So does its clock: the counting run's SM clock is kept as ``replay_sm_clock_hz``, and the
launch's ``sm_clock_hz`` stays the timeline's, unknown. Nsight Compute locks the SM clock to base by
default (585 MHz on a T4 that runs the program at up to 1.59 GHz): ceilings scaled to it would sit
below what the program reached, so the analysis takes the machine's clock instead.

Which launch is which, in this order:

1. **Kernel**: names compared as :func:`roofline.readers.ncu.names.same_kernel` does (function name,
   and template arguments where both print them): ncu and nsys print one kernel in different forms
   (``(int)8`` or ``8``, ``--print-kernel-base function``).
2. **Configuration**: the kernel with its grid and block, and the device when both sides ran on
   several devices.
3. **Exact**: within a configuration and the NVTX phase and operator (where both sides have NVTX
   ranges), when both sides hold as many launches they pair in order (the timeline's start order,
   the profile's launch order): every launch, when the counting run profiled the whole program.
4. **By configuration**: otherwise (the counting run profiled a sample: one step,
   ``--launch-count``, ``--nvtx-include``), a launch takes the mean per launch of the profile's
   launches of its configuration and operator, else of its configuration.
5. **Unmatched**: no launch of the configuration in the profile. Its counts stay unknown (never
   invented); its time counts.

The match rate (launches and time, exact / by configuration / unmatched) is in the table's
warnings, and each launch's match in its ``match`` metric.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from roofline.counting.raw_metrics import ALL_METRICS, ALSO_READ
from roofline.errors import InputError
from roofline.kernels import COUNT_COLUMNS, KernelTable, flags, text_codes, validate
from roofline.kernels.arrays import encoded_text, frame_of
from roofline.kernels.match_rate import CONFIGURATION, EXACT, UNMATCHED, MatchRate, match_rate
from roofline.kernels.schema import ABSENT_ALLOWED
from roofline.readers.ncu.names import kernel_key
from roofline.readers.ncu.peak_columns import kept
from roofline.units import format_si

#: Columns a launch takes from its counts (the timeline has none of them).
TAKEN = tuple(c for c in COUNT_COLUMNS if c != "launches")
_FLAGS = ("flops_partial", "ops_partial", "estimated")


def join_counts(timeline: KernelTable, counts: KernelTable, *, rate_note: bool = True) -> KernelTable:
    """``timeline``'s launches (their time, identity and NVTX ranges) with the counts of the same
    launches in ``counts`` (module docstring). Raises :class:`InputError` when ``counts`` has none.
    ``rate_note=False`` leaves the match rate out of the warnings (a caller that stacks several
    joined timelines says it once for all: :func:`match_rate`)."""
    t, c = timeline.frame, counts.frame
    where = ", ".join(counts.sources) or "the counting profile"
    have = [col for col in TAKEN if col in c.columns and c[col].notna().any()]
    if not have:
        raise InputError("the counting profile has no FLOP, byte or instruction counts to give the timeline",
                         path=where, hint="profile the program with Nsight Compute (roofline profile -- CMD)")
    kernel_t, kernel_c, loose = _kernels(t["kernel_name"], c["kernel_name"])
    config_keys = ["grid", "block", *(["device"] if _several(t, c, "device") else [])]
    nvtx = [k for k in ("phase", "op") if t[k].notna().any() and c[k].notna().any()]
    n_t, n_c = len(t), len(c)
    per_launch = _per_launch(c, have, counts.metrics)
    donor = np.full(n_t, -1, dtype=np.int64)  # the row of ``per_launch`` whose counts a launch takes
    match = np.full(n_t, 2, dtype=np.int8)  # 0 exact, 1 configuration, 2 unmatched
    single = bool((c["launches"].fillna(1) == 1).all())
    exact_t, exact_c = _codes(t, c, kernel_t, kernel_c, [*config_keys, *nvtx])
    if single:
        paired_t, paired_c = _pairs(exact_t, exact_c, _launch_order(c))
        donor[paired_t], match[paired_t] = paired_c, 0
    extra = [per_launch]
    offset = n_c
    for keys in ([*config_keys, "op"], config_keys) if "op" in nvtx else (config_keys,):
        left = np.flatnonzero(match == 2)
        if not len(left):
            break
        key_t, key_c = _codes(t, c, kernel_t, kernel_c, keys)
        means, found = _means(per_launch, key_c, c["launches"], key_t[left])
        donor[left[found >= 0]] = offset + found[found >= 0]
        match[left[found >= 0]] = 1
        extra.append(means)
        offset += len(means)
    table = pd.concat(extra, ignore_index=True)
    taken = table.take(np.where(donor >= 0, donor, len(table) - 1)) if len(table) else table
    unmatched = donor < 0
    frame = t.copy(deep=False)
    for col in TAKEN:
        if col in have:
            values = taken[col].to_numpy(dtype=np.float64, copy=True)
            values[unmatched] = np.nan
            frame[col] = values
        elif col not in ABSENT_ALLOWED:
            frame[col] = np.full(n_t, np.nan)
    for col in _FLAGS:
        values = taken[col].to_numpy(dtype=bool, copy=True) if col in taken else np.zeros(n_t, dtype=bool)
        values[unmatched] = False  # nothing known: not a lower bound, not an estimate
        frame[col] = flags(values)
    frame["tensor_precision"] = _text(taken["tensor_precision"], unmatched)
    frame["compute_capability"] = _text(taken["compute_capability"], unmatched,
                                        fill=_only(c["compute_capability"]))
    frame = validate(frame[[x for x in t.columns if x in frame.columns] +
                           [x for x in frame.columns if x not in t.columns]], where=str(timeline.sources[0]))
    time = t["time_s"].to_numpy(dtype=np.float64)
    rate = MatchRate({w: int((match == i).sum()) for i, w in enumerate((EXACT, CONFIGURATION, UNMATCHED))},
                     {w: float(np.nansum(time[match == i])) for i, w in enumerate((EXACT, CONFIGURATION, UNMATCHED))})
    metrics = _metrics(timeline, counts, taken, match, unmatched)
    notes = [rate.summary()] if rate_note else []
    clocks = c["sm_clock_hz"].to_numpy(dtype=np.float64)  # the profile's, whichever launches matched: one note for all ranks
    if np.isfinite(clocks).any():
        low, high = float(np.nanmin(clocks)), float(np.nanmax(clocks))
        span = format_si(low, "Hz") + (f" to {format_si(high, 'Hz')}" if high > low else "")
        notes.append(f"{where}: its SM clocks, {span}, are the counting run's, not the program's (Nsight Compute "
                     "locks the clock to base by default): the ceilings are not scaled to them; kept as the metric "
                     "replay_sm_clock_hz")
    if loose:
        notes.append(f"{where} names kernels by function only (ncu --print-kernel-base function): launches of "
                     "template variants of one function with the same grid and block share their counts")
    if not single:
        notes.append(f"{where} holds rows of several launches: counts were joined by configuration (mean per launch)")
    kept = [w for w in timeline.warnings if "has kernel times but no counters" not in w]
    return KernelTable(frame=frame, metrics=metrics, sources=(*timeline.sources, *counts.sources),
                       warnings=(*notes, *kept, *counts.warnings), fp16_convention=counts.fp16_convention,
                       column_notes=dict(counts.column_notes), metric_hints=dict(counts.metric_hints),
                       activity=timeline.activity)


def _several(t: pd.DataFrame, c: pd.DataFrame, column: str) -> bool:
    return t[column].nunique() > 1 and c[column].nunique() > 1


def _only(values: pd.Series) -> str | None:
    distinct = values.dropna().unique()
    return str(distinct[0]) if len(distinct) == 1 else None


def _kernels(t_names: pd.Series, c_names: pd.Series) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per launch of each side, the counting profile's kernel (an index into its distinct names;
    -1 on the timeline: none); and whether a match was by function name only."""
    t_texts, t_codes = text_codes(t_names)
    c_texts, c_codes = text_codes(c_names)
    by_function: dict[str, list[tuple[int, str | None]]] = {}
    for j, name in enumerate(c_texts):
        function, arguments = kernel_key(name)
        by_function.setdefault(function, []).append((j, arguments))
    found = np.full(len(t_texts) + 1, -1, dtype=np.int64)  # the last: a launch with no name
    loose = False
    for i, name in enumerate(t_texts):
        function, arguments = kernel_key(name)
        candidates = by_function.get(function, [])
        same = [j for j, a in candidates if a == arguments]
        either = [j for j, a in candidates if a is None or arguments is None]
        if same:
            found[i] = same[0]
        elif either:
            found[i], loose = either[0], True
    return found[np.asarray(t_codes, dtype=np.int64)], np.asarray(c_codes, dtype=np.int64), loose


def _codes(t: pd.DataFrame, c: pd.DataFrame, kernel_t: np.ndarray, kernel_c: np.ndarray,
           keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """One integer per launch of each side for (kernel, ``keys``), equal where the values are; -1 on
    the timeline where its kernel is not in the profile."""
    columns_t, columns_c = [kernel_t], [kernel_c]
    for key in keys:
        a, b = _shared(t[key], c[key])
        columns_t.append(a)
        columns_c.append(b)
    both = np.concatenate([np.stack(columns_t, axis=1), np.stack(columns_c, axis=1)]) + 1  # -1 (missing) -> 0
    _, codes = np.unique(both, axis=0, return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    code_t = codes[: len(t)]
    code_t[kernel_t < 0] = -1
    return code_t, codes[len(t):]


def _shared(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of two identity columns in one vocabulary of their texts (-1: missing)."""
    texts_a, codes_a = text_codes(a.astype("string") if a.dtype.kind in "iuf" or str(a.dtype) == "Int64" else a)
    texts_b, codes_b = text_codes(b.astype("string") if b.dtype.kind in "iuf" or str(b.dtype) == "Int64" else b)
    vocabulary = {text: i for i, text in enumerate(dict.fromkeys([*texts_a, *texts_b]))}
    remap_a = np.array([vocabulary[x] for x in texts_a] + [-1], dtype=np.int64)
    remap_b = np.array([vocabulary[x] for x in texts_b] + [-1], dtype=np.int64)
    return remap_a[np.asarray(codes_a, dtype=np.int64)], remap_b[np.asarray(codes_b, dtype=np.int64)]


def _launch_order(c: pd.DataFrame) -> np.ndarray:
    """The profile's rows in launch order (its launch ids; rows without one after, as they are)."""
    ids = c["launch_id"].to_numpy(dtype=np.float64, na_value=np.inf)
    return np.argsort(ids, kind="stable")


def _pairs(code_t: np.ndarray, code_c: np.ndarray, order_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Timeline rows and profile rows paired in order, within each code both sides hold as many times."""
    k = int(max(code_t.max(initial=-1), code_c.max(initial=-1))) + 1
    n_t = np.bincount(code_t[code_t >= 0], minlength=k)
    n_c = np.bincount(code_c, minlength=k)
    same = (n_t == n_c) & (n_t > 0)
    rows_t = np.flatnonzero((code_t >= 0) & same[np.maximum(code_t, 0)])
    rows_t = rows_t[np.argsort(code_t[rows_t], kind="stable")]  # by code, start order within
    rows_c = order_c[same[code_c[order_c]]]
    rows_c = rows_c[np.argsort(code_c[rows_c], kind="stable")]  # by code, launch order within
    return rows_t, rows_c


def _per_launch(c: pd.DataFrame, have: Sequence[str], metrics: pd.DataFrame) -> pd.DataFrame:
    """What a launch may take from each profile row: its counts, clock, flags, texts, time, and the
    metrics the analysis reads."""
    out: dict[str, np.ndarray] = {col: c[col].to_numpy(dtype=np.float64) for col in have}
    out["replay_time_s"] = c["time_s"].to_numpy(dtype=np.float64)
    out["replay_sm_clock_hz"] = c["sm_clock_hz"].to_numpy(dtype=np.float64)
    for col in _FLAGS:
        out[col] = c[col].fillna(False).to_numpy(dtype=bool)
    for col in ("tensor_precision", "compute_capability"):
        out[col] = c[col].astype(object).where(c[col].notna(), None).to_numpy(dtype=object)
    for name in _read_metrics(metrics) if len(metrics) == len(c) else []:
        out[name] = metrics[name].to_numpy()
    return pd.DataFrame(out)


def _read_metrics(metrics: pd.DataFrame) -> list[str]:
    """The profile metrics the analysis and guidance read (peaks, clocks, the device's name, the
    guidance's): the rest of a ``--set full`` profile (2,000 columns) is not repeated per timeline launch."""
    return kept(list(map(str, metrics.columns)), (*ALL_METRICS, *ALSO_READ))


def _means(per_launch: pd.DataFrame, key_c: np.ndarray, launches: pd.Series,
           wanted: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """Per profile key, the mean per launch of its rows (counts and numeric metrics; flags: any;
    texts: the one value, else none); and for each ``wanted`` key its row there (-1: not held)."""
    k = int(key_c.max(initial=-1)) + 1
    weight = launches.fillna(1).to_numpy(dtype=np.float64)
    total = np.bincount(key_c, weights=weight, minlength=k)
    rows = np.bincount(key_c, minlength=k)
    out: dict[str, np.ndarray] = {}
    for col in per_launch.columns:
        values = per_launch[col]
        if values.dtype == bool:
            out[col] = np.bincount(key_c, weights=values.to_numpy(dtype=np.float64), minlength=k) > 0
        elif values.dtype.kind in "iuf":  # counts summed over launches, per launch; metrics likewise
            v = values.to_numpy(dtype=np.float64)
            summed = np.bincount(key_c, weights=v, minlength=k)  # NaN in any launch: NaN
            per = total if col in COUNT_COLUMNS else rows.astype(np.float64)
            out[col] = np.divide(summed, per, out=np.full(k, np.nan), where=per > 0)
        else:
            firsts = pd.Series(values.to_numpy(dtype=object)).groupby(key_c).agg(
                lambda s: s.iloc[0] if s.nunique(dropna=False) == 1 else None)
            out[col] = firsts.reindex(range(k)).to_numpy(dtype=object)
    means = pd.DataFrame(out)
    size = max(k, int(wanted.max(initial=-1)) + 1)  # a timeline's key may be past the profile's last
    held = np.zeros(size + 1, dtype=bool)
    held[:k] = rows > 0
    position = np.where(wanted >= 0, wanted, size)
    return means, np.where(held[position], position, -1)


def _text(values: pd.Series, unmatched: np.ndarray, fill: str | None = None) -> pd.Categorical:
    texts = values.to_numpy(dtype=object).copy()
    texts[unmatched] = fill
    codes, uniques = pd.factorize(pd.Series(texts), use_na_sentinel=True)
    return encoded_text(list(uniques), codes)


def _metrics(timeline: KernelTable, counts: KernelTable, taken: pd.DataFrame, match: np.ndarray,
             unmatched: np.ndarray) -> pd.DataFrame:
    """The timeline's own metrics, each launch's match, its replay time and clock and the counting profile's
    metrics the analysis reads (unknown for an unmatched launch)."""
    words = np.array([EXACT, CONFIGURATION, UNMATCHED], dtype=object)
    columns: dict[str, object] = {}
    columns["match"] = encoded_text(list(words), match.astype(np.int64))
    for name in ("replay_time_s", "replay_sm_clock_hz"):
        replay = taken[name].to_numpy(dtype=np.float64, copy=True)
        replay[unmatched] = np.nan
        columns[name] = replay
    for name in _read_metrics(counts.metrics) if len(counts.metrics) == len(counts.frame) else []:
        values = taken[name].to_numpy(copy=True)
        if values.dtype.kind == "f":
            values[unmatched] = np.nan
        else:
            values = values.astype(object)
            values[unmatched] = None
        columns[name] = values
    return pd.concat([timeline.metrics, frame_of(columns, timeline.frame.index)], axis=1)

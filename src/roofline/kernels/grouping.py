"""Launches summed into rows: per kernel name, phase, operator, module or any key columns.

:func:`aggregate` (and :func:`aggregate_columns`, its rows as arrays for callers that add columns):
sums that keep unknowns unknown, the time-weighted mean clock, descriptive columns kept where the
launches agree, phases, operators and modules listed, rows labelled and sorted by time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from roofline.attribution import module_at_depth
from roofline.kernels.arrays import (
    flags,
    frame_of,
    group_ids,
    longest_first,
    recoded_text,
    repeated,
    sameness,
    strings,
    text_codes,
    unknown_values,
)
from roofline.kernels.schema import (
    COLUMNS,
    DTYPES,
    NO_OPERATOR,
    OUTSIDE_MODULES,
    SUMMED,
    GroupBy,
    KernelTable,
    column_or_nan,
    group_keys,
    has_runs,
    widened,
)


def cut_modules(frame: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """``frame`` with its ``module`` paths cut to ``depth`` components
    (:func:`roofline.attribution.module_at_depth`; comma-joined lists, as after :func:`aggregate` by
    name, member by member), held encoded (a categorical); the frame itself when ``depth`` is None.
    Works on the distinct paths only: nothing is decoded per launch."""
    if depth is None or "module" not in frame.columns:
        if depth is not None and depth < 1:
            raise ValueError("depth must be at least 1")
        return frame
    paths, _ = text_codes(frame["module"])  # the distinct paths (an encoded column's categories)
    cut = [",".join(dict.fromkeys(module_at_depth(p, depth) for p in path.split(","))) for path in paths]
    out = frame.copy(deep=False)  # copy-on-write: the caller's frame keeps its paths, no column is copied
    out["module"] = recoded_text(frame["module"], cut)  # encoded: codes renumbered, missing stays missing
    return out


def row_labels(keys: Sequence[str], firsts: Mapping[str, Any]) -> pd.api.extensions.ExtensionArray:
    """The ``kernel_name`` of grouped rows keyed by ``keys`` without ``kernel_name``: op rows
    ``aten::addmm [backward]``, module rows the path, drill-downs ``module / op [phase]``;
    an unknown op or module is :data:`NO_OPERATOR` / :data:`OUTSIDE_MODULES`. ``firsts``: the keys'
    values per row."""
    n = len(firsts[keys[0]])
    parts: list[list[str]] = [[] for _ in range(n)]
    phases: list[str | None] = [None] * n
    for k in keys:
        if k == "run":
            continue
        values = pd.array(firsts[k]).astype("string").tolist()
        for i, v in enumerate(values):
            missing = v is pd.NA or v is None
            if k == "phase":
                phases[i] = None if missing else str(v)
            elif k == "op":
                parts[i].append(NO_OPERATOR if missing else str(v))
            elif k == "module":
                parts[i].append(OUTSIDE_MODULES if missing else str(v))
            else:
                parts[i].append("?" if missing else f"{k} {v}")
    labels = [" / ".join(p) + (f" [{ph}]" if ph is not None else "") if p else (ph or "(no phase)")
              for p, ph in zip(parts, phases)]
    return strings(labels)


def _distinct_pairs(values: pd.api.extensions.ExtensionArray, gid: np.ndarray, *,
                    keep_missing: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (group, value code) pairs, and the values the codes stand for (integer work only)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=not keep_missing)
    width = len(uniques) + 1
    pair = pd.unique(gid.astype(np.int64) * width + (codes.astype(np.int64) + 1))
    return pair // width, pair % width - 1, np.asarray(uniques, dtype=object)


def _joined_distinct(values: pd.api.extensions.ExtensionArray, gid: np.ndarray,
                     order: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Per group, in ``order``: the distinct non-missing values, sorted and comma-joined; <NA> when none."""
    same = sameness(values)
    if same != "mixed":
        return repeated(None if same == "missing" else str(values[0]), len(order))
    groups, codes, names = _distinct_pairs(values, gid, keep_missing=False)
    present = codes >= 0
    joined: list[str | None] = [None] * len(order)
    members: dict[int, list[str]] = {}
    for g, c in zip(groups[present].tolist(), codes[present].tolist()):  # distinct pairs only: small
        members.setdefault(g, []).append(str(names[c]))
    for g, vals in members.items():
        joined[g] = ",".join(sorted(vals))
    return strings([joined[g] for g in order.tolist()])


def _repeat(values: pd.api.extensions.ExtensionArray, same: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` times the one value of ``values`` (``same`` is ``"one"``) or <NA> (``"missing"``)."""
    if isinstance(values, pd.arrays.ArrowStringArray) and values.dtype == pd.StringDtype():
        return repeated(None if same == "missing" else values[0], n)
    if same == "missing":
        return unknown_values("Int64", n) if isinstance(values, pd.arrays.IntegerArray) and str(values.dtype) == "Int64" \
            else values.take(np.full(n, -1, dtype=np.intp), allow_fill=True)
    return values.take(np.zeros(n, dtype=np.intp))


def _common_value(values: pd.api.extensions.ExtensionArray, gid: np.ndarray, first_rows: np.ndarray,
                  order: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Per group, in ``order``: the value when all launches agree (missing counts as a value), else <NA>."""
    same = sameness(values)
    if same != "mixed":
        return _repeat(values, same, len(order))
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    mixed = np.zeros(len(first_rows), dtype=bool)
    mixed[gid[codes != codes[first_rows][gid]]] = True  # a launch unlike its group's first
    return values.take(np.where(mixed, -1, first_rows)[order], allow_fill=True)


def _float_column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as floats, NaN where missing (a float64 column as it is: no conversion, no copy); an
    absent count column (known-missing) NaN throughout."""
    return column_or_nan(frame, name)


def _as_declared(name: str, values: Any) -> Any:
    """``values`` (a numpy or extension array) in the declared dtype of column ``name``."""
    dtype = DTYPES[name]
    if dtype == "float64":
        return np.asarray(values, dtype=np.float64)
    if str(values.dtype) == dtype:
        return values
    if dtype == "string" and isinstance(values, pd.Categorical) and values.categories.dtype == object:
        return strings(np.asarray(values, dtype=object))  # an encoded text's rows (3x faster than astype)
    return pd.array(values).astype(dtype)


def aggregate_columns(frame: pd.DataFrame, by: GroupBy | str = "name", depth: int | None = None, *,
                      table: KernelTable | None = None) -> dict[str, Any]:
    """:func:`aggregate`'s rows as columns (name -> numpy array for float64 columns, else extension
    array, in :data:`COLUMNS` order and their declared dtypes), for callers that add columns before
    making one frame (:func:`frame_of`). ``table``: the KernelTable whose ``frame`` this is, to group
    its launches once for every caller (:meth:`KernelTable.group_ids`)."""
    frame = cut_modules(frame, depth)
    if by == "launch":  # every launch a row: the whole declared table (absent columns, encoded text restored)
        frame = widened(frame)
        order = longest_first(frame["time_s"].to_numpy(dtype=float, na_value=np.nan))
        return {c.name: _as_declared(c.name, frame[c.name].to_numpy(dtype=float, na_value=np.nan)[order]
                                     if c.dtype == "float64" else frame[c.name].array.take(order))
                for c in COLUMNS}
    keys = group_keys(by, runs=has_runs(frame))
    # Group ids in order of first appearance, computed once; every reduction below groups on
    # these integers instead of hashing the (long) kernel names again (1e6 launches).
    kept = table is not None and table.frame is frame  # (cutting module paths made another frame)
    gid, first_rows = table.group_ids(keys) if kept else group_ids(frame, keys)  # type: ignore[union-attr]
    ngroups = len(first_rows)
    sums: dict[str, np.ndarray] = {}
    for col in SUMMED:  # bincount on the dense group ids: no sorting, one pass per column
        if col not in frame.columns:  # known-missing (a column the profile has no counter for)
            sums[col] = np.full(ngroups, np.nan)
            continue
        values = _float_column(frame, col)
        missing = np.isnan(values)
        if not missing.any():
            sums[col] = np.bincount(gid, weights=values, minlength=ngroups)
        elif missing.all():  # a column the profile does not have (most lack the instruction counts)
            sums[col] = np.full(ngroups, np.nan)
        else:
            total = np.bincount(gid, weights=np.where(missing, 0.0, values), minlength=ngroups)
            sums[col] = np.where(np.bincount(gid, weights=missing, minlength=ngroups) > 0, np.nan, total)
    t = _float_column(frame, "time_s")
    clk = _float_column(frame, "sm_clock_hz")
    ok = ~(np.isnan(clk) | np.isnan(t))
    wt = np.bincount(gid, weights=np.where(ok, t * clk, 0.0), minlength=ngroups)
    tw = np.bincount(gid, weights=np.where(ok, t, 0.0), minlength=ngroups)
    with np.errstate(invalid="ignore", divide="ignore"):
        sums["sm_clock_hz"] = np.where(np.bincount(gid, weights=ok, minlength=ngroups) > 0, wt / tw, np.nan)
    # every column below is made in this order (rows sorted by time, longest first): one take each
    order = longest_first(sums["time_s"])
    out: dict[str, Any] = {col: values[order] for col, values in sums.items()}
    launches = out["launches"]  # sums of integer counts: integers, <NA> where one was missing
    out["launches"] = pd.arrays.IntegerArray(np.where(np.isnan(launches), 0, launches).astype(np.int64),
                                             np.isnan(launches))
    for col in ("flops_partial", "ops_partial", "estimated"):
        marked = frame[col].array.to_numpy(dtype=bool, na_value=False)
        out[col] = flags(np.bincount(gid, weights=marked, minlength=ngroups)[order] > 0 if marked.any()
                         else np.zeros(ngroups, dtype=bool))
    for col in ("process_id", "device", "compute_capability", "grid", "block", "stream", "tensor_precision"):
        if col not in keys:
            out[col] = _common_value(frame[col].array, gid, first_rows, order)
    out["source"] = _joined_distinct(frame["source"].array, gid, order)
    for col in ("phase", "op", "module"):  # a kernel launched by several operators lists them all
        if col not in keys:
            out[col] = _joined_distinct(frame[col].array, gid, order)
    for k in dict.fromkeys([*keys, "run"]):  # run: a key with several runs, else <NA> throughout
        out[k] = frame[k].array.take(first_rows[order])  # take, then convert: not 1e6 strings
    if "kernel_name" not in keys:  # the row's label, so that every view shows it unchanged
        out["kernel_name"] = row_labels(keys, out)
    if "launch_id" not in keys:
        out["launch_id"] = unknown_values("Int64", ngroups)
    return {c.name: _as_declared(c.name, out[c.name]) for c in COLUMNS}


def aggregate(frame: pd.DataFrame, by: GroupBy | str = "name", depth: int | None = None) -> pd.DataFrame:
    """Sum launches into one row per group, within each run (a kernel name found in two runs
    gives two rows; one run: ``run`` is <NA> on every row, and this is grouping without it).

    ``by`` (:func:`group_keys`): ``"name"`` (per kernel name), ``"phase"`` (per phase and name),
    ``"op"`` (per operator and phase: forward and backward of ``aten::addmm`` are two rows),
    ``"module"`` (per module path, phases summed), ``"launch"`` (no summing), or a tuple of key
    columns (``("module", "op", "phase", "kernel_name")``). ``depth``: module paths are first cut to
    this many components (:func:`cut_modules`; None: whole paths). Launches with an unknown key
    form their own row.

    Sums keep unknowns unknown: a quantity missing in any launch of a group is NaN
    for the group. ``sm_clock_hz`` is the time-weighted mean; ``launch_id`` is <NA>;
    descriptive columns keep their value when all launches agree, else <NA>; ``phase``, ``op``
    and ``module``, when not keys, list the distinct values, comma-separated. When
    ``kernel_name`` is not a key it holds the row's label (``aten::addmm [backward]``, the module
    path, ``(no operator)``, ``(outside modules)``), so that every view shows the row by it.
    Rows are sorted by time, longest first.
    """
    if by == "launch":
        frame = widened(cut_modules(frame, depth))
        return frame.sort_values("time_s", ascending=False, kind="stable", na_position="last").reset_index(drop=True)
    return frame_of(aggregate_columns(frame, by, depth))

"""The kernel table: one declared schema that every reader returns.

A kernel table is a :class:`pandas.DataFrame` with one row per kernel launch (or,
after :func:`aggregate`, per kernel name or per phase and name). Every column is
declared below with its dtype, its SI unit and what it means; readers build it,
:func:`validate` checks it, and analysis and views read only these columns.

Unknown is not zero: a quantity whose counter was not collected is NaN (or
``<NA>``), and ``flops_partial`` says when the FLOP total lacks a component.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from roofline.errors import InputError


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str
    unit: str
    description: str


#: The declared columns of a kernel table, in display order.
COLUMNS: tuple[Column, ...] = (
    Column("launch_id", "Int64", "", "launch number in the profile (ncu's ID); <NA> after aggregation"),
    Column("kernel_name", "string", "", "kernel name, demangled (C++ templates and all)"),
    Column("phase", "string", "", "NVTX range (e.g. forward, backward, optimizer) the launch ran in; <NA> when unknown"),
    Column("process_id", "Int64", "", "operating-system process id"),
    Column("device", "Int64", "", "GPU index (CUDA device ordinal)"),
    Column("compute_capability", "string", "", "SM architecture, e.g. '7.0', '9.0'"),
    Column("grid", "string", "", "grid size '(x, y, z)' where known"),
    Column("block", "string", "", "block size '(x, y, z)' where known"),
    Column("stream", "Int64", "", "CUDA stream id"),
    Column("launches", "Int64", "", "number of launches in the row (1 per launch)"),
    Column("time_s", "float64", "s", "GPU time of the launch (gpu__time_duration.sum, else cycles / clock)"),
    Column("sm_clock_hz", "float64", "Hz", "SM clock the launch ran at (sm__cycles_elapsed.avg.per_second)"),
    Column("fp64_flops", "float64", "FLOP", "FP64 FLOPs: dadd + dmul + 2 dfma (thread instructions)"),
    Column("fp32_flops", "float64", "FLOP", "FP32 FLOPs: fadd + fmul + 2 ffma"),
    Column("fp16_flops", "float64", "FLOP", "FP16 FLOPs, non-tensor; convention in the table's fp16 setting"),
    Column("tensor_flops", "float64", "FLOP", "tensor-core FLOPs (OPs for integer types)"),
    Column("tensor_precision", "string", "", "tensor input type when known: fp64, tf32, fp16, bf16, fp8, int8"),
    Column("flops", "float64", "FLOP", "sum of the known FLOP columns; NaN when none is known"),
    Column("flops_partial", "boolean", "", "True when a FLOP component is unknown, so flops is a lower bound"),
    Column("l1_bytes", "float64", "B", "bytes through L1/TEX (l1tex__t_bytes.sum)"),
    Column("l2_bytes", "float64", "B", "bytes through L2 (lts__t_bytes.sum)"),
    Column("dram_bytes", "float64", "B", "bytes to and from DRAM/HBM (dram__bytes.sum)"),
    Column("estimated", "boolean", "", "True when counts were estimated without hardware counters"),
    Column("run", "string", "", "the program run the row belongs to when the inputs hold several "
           "(its file name less .csv, .ncu-rep, .ncu.csv, .kernels.json); <NA> when they are one run"),
    Column("source", "string", "", "input file(s) the row came from"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
DTYPES: dict[str, str] = {c.name: c.dtype for c in COLUMNS}
FLOP_COLUMNS = ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops")
BYTE_COLUMNS = {"l1": "l1_bytes", "l2": "l2_bytes", "dram": "dram_bytes"}
#: Columns summed when launches are aggregated (NaN in any launch makes the sum NaN).
SUMMED = ("launches", "time_s", *FLOP_COLUMNS, "flops", "l1_bytes", "l2_bytes", "dram_bytes")

FP16_CONVENTIONS = ("ncu", "paper")
GroupBy = Literal["launch", "name", "phase"]


@dataclass(frozen=True)
class KernelTable:
    """What a reader returns: the kernel table plus what came with it.

    ``frame`` follows :data:`COLUMNS`. ``metrics`` holds the raw profiler metrics
    (one row per launch, same index as ``frame``, SI units, the tool's metric names)
    for analyses that need more than the table, e.g. Speed-of-Light percentages.
    """

    frame: pd.DataFrame
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    fp16_convention: str = "ncu"

    def __len__(self) -> int:
        return len(self.frame)


def empty_frame(n: int = 0) -> pd.DataFrame:
    """A table of ``n`` rows with every column unknown (launches = 1, flags False)."""
    data: dict[str, Any] = {}
    for c in COLUMNS:
        if c.dtype == "float64":
            data[c.name] = np.full(n, np.nan)
        else:  # all-missing extension array, built without a Python list of n NAs (fast for 1e6 rows)
            data[c.name] = pd.array([], dtype=c.dtype).take(np.full(n, -1, dtype=np.intp), allow_fill=True)
    frame = pd.DataFrame(data)
    frame["launches"] = pd.array(np.ones(n, dtype=np.int64), dtype="Int64")
    frame["flops_partial"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    frame["estimated"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    return frame


def from_records(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build a validated table from dicts; absent keys are unknown. ``flops`` is derived when absent."""
    rows = list(records)
    frame = empty_frame(len(rows))
    if rows:
        given = pd.DataFrame(rows)
        unknown = [c for c in given.columns if c not in DTYPES]
        if unknown:
            raise ValueError(f"unknown kernel-table columns: {', '.join(unknown)}")
        for col in given.columns:
            frame[col] = given[col].to_numpy()
        if "flops" not in given.columns:
            frame = with_total_flops(frame)
    if frame["launch_id"].isna().all():
        frame["launch_id"] = pd.array(np.arange(len(frame)), dtype="Int64")
    return validate(frame)


def with_total_flops(frame: pd.DataFrame) -> pd.DataFrame:
    """Set ``flops`` (sum of known components) and ``flops_partial`` from the component columns."""
    parts = frame[list(FLOP_COLUMNS)].to_numpy(dtype=float)
    known = ~np.isnan(parts)
    any_known = known.any(axis=1)
    total = np.where(any_known, np.nansum(np.where(known, parts, 0.0), axis=1), np.nan)
    out = frame.copy()
    out["flops"] = total
    out["flops_partial"] = pd.array(any_known & ~known.all(axis=1), dtype="boolean")
    return out


def validate(frame: pd.DataFrame, *, where: str | None = None) -> pd.DataFrame:
    """Check and coerce a frame to the declared schema; returns the frame in column order.

    Raises :class:`InputError` when columns are missing or values are impossible
    (negative times or counts). Extra columns are dropped.
    """
    missing = [c for c in COLUMN_NAMES if c not in frame.columns]
    if missing:
        raise InputError(f"kernel table lacks columns: {', '.join(missing)}", path=where)
    out = pd.DataFrame(index=frame.index)
    for c in COLUMNS:
        col = frame[c.name]
        try:
            out[c.name] = col.astype(c.dtype) if str(col.dtype) != c.dtype else col
        except (TypeError, ValueError) as exc:
            raise InputError(f"kernel-table column {c.name!r} is not {c.dtype}: {exc}", path=where) from None
    numeric = ["time_s", "sm_clock_hz", *FLOP_COLUMNS, "flops", "l1_bytes", "l2_bytes", "dram_bytes"]
    # column by column: no 2-D copy of the table (1e6 launches)
    bad = [n for n in numeric if (out[n].to_numpy(dtype=float) < 0).any()]
    if bad:
        raise InputError(f"negative values in {', '.join(bad)}", path=where)
    return out


def has_runs(frame: pd.DataFrame) -> bool:
    """True when rows name their run (the inputs were several runs, see ``run`` in :data:`COLUMNS`)."""
    return "run" in frame.columns and bool(frame["run"].notna().any())


def group_keys(by: str, *, runs: bool = False) -> list[str]:
    """The kernel-table columns that identify a row of a table grouped ``by`` (``run`` first
    when the table holds several runs: each numbers its launches and names its kernels on its own)."""
    if by == "launch":
        keys = ["launch_id"]
    elif by == "name":
        keys = ["kernel_name"]
    elif by == "phase":
        keys = ["phase", "kernel_name"]
    else:
        raise ValueError(f"by must be 'launch', 'name' or 'phase', not {by!r}")
    return ["run", *keys] if runs else keys


def _distinct_pairs(values: pd.Series, gid: np.ndarray, *, keep_missing: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (group, value code) pairs, and the values the codes stand for (integer work only)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=not keep_missing)
    width = len(uniques) + 1
    pair = pd.unique(gid.astype(np.int64) * width + (codes.astype(np.int64) + 1))
    return pair // width, pair % width - 1, np.asarray(uniques, dtype=object)


def _joined_distinct(values: pd.Series, gid: np.ndarray, ngroups: int) -> pd.Series:
    """Per group: the distinct non-missing values, sorted and comma-joined; <NA> when none."""
    groups, codes, names = _distinct_pairs(values, gid, keep_missing=False)
    present = codes >= 0
    joined: list[object] = [pd.NA] * ngroups
    members: dict[int, list[str]] = {}
    for g, c in zip(groups[present].tolist(), codes[present].tolist()):  # distinct pairs only: small
        members.setdefault(g, []).append(str(names[c]))
    for g, vals in members.items():
        joined[g] = ",".join(sorted(vals))
    return pd.Series(pd.array(joined, dtype="string"))


def _common_value(values: pd.Series, gid: np.ndarray, first_rows: np.ndarray) -> pd.Series:
    """Per group: the value when all launches agree (missing counts as a value), else <NA>."""
    groups, _, _ = _distinct_pairs(values, gid, keep_missing=True)
    distinct = np.bincount(groups, minlength=len(first_rows))
    first = values.iloc[first_rows].reset_index(drop=True)
    return first.where(pd.Series(distinct == 1))


def group_ids(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (numbered in order of first appearance) of the rows of ``frame`` by ``keys``,
    and the row of each group's first launch. Missing key values form their own group.

    Each key is factorized once on its own values (no string copies: this runs on 1e6 launches).
    """
    n = len(frame)
    codes = np.zeros(n, dtype=np.int64)
    for k in keys:
        c, uniques = pd.factorize(frame[k], sort=False, use_na_sentinel=False)
        codes = codes * (len(uniques) + 1) + c
    if len(keys) > 1:  # renumber the combined codes densely, still in order of first appearance
        codes, _ = pd.factorize(codes, sort=False)
    ngroups = int(codes.max()) + 1 if n else 0
    first = np.empty(ngroups, dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)  # the last write per group is its first row
    return codes.astype(np.int64, copy=False), first


def aggregate(frame: pd.DataFrame, by: GroupBy = "name") -> pd.DataFrame:
    """Sum launches into one row per kernel name (``by='name'``) or per phase and name,
    within each run: a kernel name found in two runs gives two rows (one run: ``run`` is
    <NA> on every row, and this is grouping by name alone).

    Sums keep unknowns unknown: a quantity missing in any launch of a group is NaN
    for the group. ``sm_clock_hz`` is the time-weighted mean; ``launch_id`` is <NA>;
    descriptive columns keep their value when all launches agree, else <NA>
    (``phase`` lists the phases, comma-separated, under ``by='name'``).
    Rows are sorted by time, longest first.
    """
    if by == "launch":
        return frame.sort_values("time_s", ascending=False, kind="stable", na_position="last").reset_index(drop=True)
    keys = group_keys(by, runs=has_runs(frame))
    frame = frame.reset_index(drop=True)
    # Group ids in order of first appearance, computed once; every reduction below groups on
    # these integers instead of hashing the (long) kernel names again (1e6 launches).
    gid, first_rows = group_ids(frame, keys)
    ngroups = len(first_rows)
    sums = pd.DataFrame(index=pd.RangeIndex(ngroups))
    for col in SUMMED:  # bincount on the dense group ids: no sorting, one pass per column
        values = frame[col].to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        total = np.bincount(gid, weights=np.where(missing, 0.0, values), minlength=ngroups)
        sums[col] = np.where(np.bincount(gid, weights=missing, minlength=ngroups) > 0, np.nan, total)
    t = frame["time_s"].to_numpy(dtype=float)
    clk = frame["sm_clock_hz"].to_numpy(dtype=float)
    ok = ~(np.isnan(clk) | np.isnan(t))
    wt = np.bincount(gid, weights=np.where(ok, t * clk, 0.0), minlength=ngroups)
    tw = np.bincount(gid, weights=np.where(ok, t, 0.0), minlength=ngroups)
    with np.errstate(invalid="ignore", divide="ignore"):
        sums["sm_clock_hz"] = np.where(np.bincount(gid, weights=ok, minlength=ngroups) > 0, wt / tw, np.nan)
    for col in ("flops_partial", "estimated"):
        flags = frame[col].to_numpy(dtype=bool, na_value=False)
        sums[col] = np.bincount(gid, weights=flags, minlength=ngroups) > 0
    for col in ("process_id", "device", "compute_capability", "grid", "block", "stream", "tensor_precision"):
        sums[col] = _common_value(frame[col], gid, first_rows)
    sums["source"] = _joined_distinct(frame["source"], gid, ngroups)
    if by == "name":
        sums["phase"] = _joined_distinct(frame["phase"], gid, ngroups)
    for k in dict.fromkeys([*keys, "run"]):  # run: a key with several runs, else <NA> throughout
        sums[k] = frame[k].iloc[first_rows].to_numpy()  # take, then convert: not 1e6 strings
    out = sums.reset_index(drop=True)
    out["launch_id"] = pd.array([pd.NA] * len(out), dtype="Int64")
    out = validate(out)
    return out.sort_values("time_s", ascending=False, kind="stable", na_position="last").reset_index(drop=True)


def describe_columns() -> str:
    """The schema as a Markdown table (used by the docs)."""
    lines = ["| column | dtype | unit | meaning |", "|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.unit or '-'} | {c.description} |" for c in COLUMNS]
    return "\n".join(lines)


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack kernel tables (e.g. measurements and profiles) into one validated table."""
    if not frames:
        return empty_frame(0)
    return validate(pd.concat([validate(f) for f in frames], ignore_index=True))

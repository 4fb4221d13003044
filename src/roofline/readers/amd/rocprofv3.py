"""rocprofv3 (ROCprofiler-SDK) outputs, and rocprof v1's ``results.csv``, as one kernel table.

rocprofv3 writes per run (``rocprofv3 --pmc A B -d DIR -o NAME --output-format csv -- app``), under
``DIR`` (by default ``HOST/PID_``-prefixed files, one ``pmc_N/`` or ``pass_N/`` folder per counter pass):

* ``*counter_collection.csv``: the **long form**, one row per counter per dispatch (``Dispatch_Id``,
  ``Agent_Id``, ``Queue_Id``, ``Process_Id``, ``Grid_Size`` and ``Workgroup_Size`` in work-items,
  ``Kernel_Name``, ``Counter_Name``, ``Counter_Value``, and from ROCm 6.3 ``Start_Timestamp`` /
  ``End_Timestamp``), each value already summed over the counter's hardware instances. It is pivoted
  to one row per dispatch (:func:`wide_from_long`); rocprof-compute 3.x's long files (``Dispatch_ID``,
  ``GPU_ID``, one file for all passes, ``X[n]`` per instance beside ``X_sum``) are read the same way;
* ``*kernel_trace.csv`` (``--kernel-trace``): dispatch times and grid/workgroup sizes per dimension;
* ``*agent_info.csv``: the agents, among them each GPU's gfx target (``Name``, ``Gfx_Target_Version``)
  and product name;
* the JSON (``--output-format json``) and rocpd SQLite (the default from ROCm 7) forms, and rocprof v1's
  ``results.csv``: :mod:`roofline.readers.amd.rocprof_files`.

Each counter pass is a run of the program of its own: the passes are merged by dispatch, matched by
GPU, kernel name and order (the n-th dispatch of a kernel in one pass is the n-th in the others),
counters of the first pass that has them. Time is end - start (ns): from a run traced without
counters (a ``kernel_trace.csv`` beside no counter file, as ``roofline profile`` records, the way
Omniperf's ``timestamps.csv`` is) when there is one, else the mean over the counter passes (each
file's own timestamps, or its run's ``kernel_trace.csv`` where the counter file has none); a duration
of 0 or less is refused, never used: that dispatch's time is unknown, with one note
(:func:`roofline.readers.amd.dispatches.dispatch_times`).
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.counting.amd import counter_totals
from roofline.errors import InputError
from roofline.readers.amd.dispatches import kernel_name
from roofline.readers.amd.dispatches import dispatch_times

#: Columns of the long form, each with the names rocprofv3 releases and rocprof-compute give it.
LONG_ALIASES: dict[str, tuple[str, ...]] = {
    "launch_id": ("Dispatch_Id", "Dispatch_ID"), "kernel_name": ("Kernel_Name",),
    "agent": ("Agent_Id", "GPU_ID", "Agent_Abs_Index"), "stream": ("Queue_Id", "Queue_ID"),
    "process_id": ("Process_Id", "Pid", "PID"), "items": ("Grid_Size",), "group": ("Workgroup_Size",),
    "start_ns": ("Start_Timestamp",), "end_ns": ("End_Timestamp",),
}
#: rocprof v1's ``results.csv`` id columns (the rest are counters).
V1_ALIASES: dict[str, tuple[str, ...]] = {"launch_id": ("Index",), "kernel_name": ("KernelName",), "agent": ("gpu-id",), "stream": ("queue-id",),
              "process_id": ("pid",), "items": ("grd",), "group": ("wgr",), "start_ns": ("BeginNs",),
              "end_ns": ("EndNs",)}
V1_META = ("queue-index", "tid", "lds", "scr", "vgpr", "arch_vgpr", "accum_vgpr", "sgpr", "fbar", "wave_size",
           "sig", "obj", "DispatchNs", "CompleteNs")
#: The per-dimension sizes of ``kernel_trace.csv`` (work-items and workgroup sizes).
TRACE_DIMS = (("Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"), ("Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"))
_PID_PREFIX = re.compile(r"^\d+_")


@dataclass(frozen=True)
class Pass:
    """One run of the program (one counter pass, or a trace without counters): ``ids`` one row per
    dispatch (``launch_id``, ``kernel_name``, ``agent``, ``process_id``, ``stream``, ``grid``,
    ``block``, ``start_ns``, ``end_ns``; any may be absent), ``counters`` the same rows' counters as
    collected (``X``, ``X_sum``, ``X[i]``): :func:`merge_passes` makes them totals once all passes are
    joined, so that rocprof's own ``X_sum`` is X's total whichever pass collected it."""

    ids: pd.DataFrame
    counters: pd.DataFrame
    source: str


@dataclass(frozen=True)
class Agents:
    """The GPUs a profile names: per agent id, the GPU's index, gfx target and name."""

    gpus: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["agent", "gpu", "arch", "name"]))


def read_csv(path: Path) -> pd.DataFrame:
    """A CSV file (plain or gzipped) as a frame, or :class:`InputError` naming it."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return pd.read_csv(io.BytesIO(fh.read()))
        return pd.read_csv(path)
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"not a readable CSV ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})",
                         path=path, hint="copy the rocprofv3 output again; the file may be cut short") from None


def _column(frame: pd.DataFrame, names: Sequence[str]) -> pd.Series | None:
    return next((frame[n] for n in names if n in frame.columns), None)


def agent_number(values: pd.Series) -> pd.Series:
    """Agent ids as integers: ``3``, ``"Agent 3"`` and ``"GPU 3"`` (rocprofv3's forms) all read 3."""
    text = values.astype(str).str.extract(r"(-?\d+)\s*$", expand=False)
    return pd.to_numeric(text, errors="coerce")


def sizes(items: pd.Series | None, group: pd.Series | None) -> tuple[list[object], list[object]]:
    """The grid in workgroups and the workgroup, ``'(x, 1, 1)'``, from rocprof's totals in work-items
    (the shape per dimension is not in the long form; its product is)."""
    if items is None or group is None:
        return [], []
    g = pd.to_numeric(group, errors="coerce")
    n = pd.to_numeric(items, errors="coerce") / g
    grid = [f"({int(np.ceil(v))}, 1, 1)" if pd.notna(v) else pd.NA for v in n]
    block = [f"({int(b)}, 1, 1)" if pd.notna(b) else pd.NA for b in g]
    return grid, block


def ids_of(frame: pd.DataFrame, aliases: Mapping[str, tuple[str, ...]]) -> pd.DataFrame:
    """The dispatch ids (:class:`Pass`) of rows of ``frame`` named by ``aliases``."""
    ids = pd.DataFrame(index=frame.index)
    for name, columns in aliases.items():
        values = _column(frame, columns)
        if values is None or name in ("items", "group"):
            continue
        if name == "kernel_name":
            ids[name] = values.map(kernel_name)
        elif name == "agent":
            ids[name] = agent_number(values)
        elif name in ("start_ns", "end_ns"):  # as written: dispatch_times subtracts them exactly (past 2**53 ns)
            ids[name] = values
        else:
            ids[name] = pd.to_numeric(values, errors="coerce")
    grid, block = sizes(_column(frame, aliases["items"]), _column(frame, aliases["group"]))
    if grid:
        ids["grid"], ids["block"] = grid, block
    return ids


def wide_from_long(long: pd.DataFrame, source: str) -> list[Pass]:
    """The long form (one row per counter per dispatch) as one :class:`Pass` per run: one row per
    dispatch, one column per counter. A file holding several passes (a dispatch id seen with several
    start timestamps: rocprof-compute's merged files) is split by them, the earliest first."""
    if "Counter_Name" not in long.columns or "Counter_Value" not in long.columns:
        raise InputError("not rocprofv3's counter collection (no Counter_Name and Counter_Value columns)", path=source)
    dispatch = _column(long, LONG_ALIASES["launch_id"])
    if dispatch is None or "Kernel_Name" not in long.columns:
        raise InputError("the counter collection names no dispatches (no Dispatch_Id and Kernel_Name columns)",
                         path=source, hint="give the counter_collection.csv that rocprofv3 wrote, unchanged")
    start = _column(long, LONG_ALIASES["start_ns"])
    key = pd.DataFrame({"d": pd.to_numeric(dispatch, errors="coerce"),
                        "t": pd.to_numeric(start, errors="coerce") if start is not None else 0.0})
    rows = key.drop_duplicates().reset_index()  # one row per dispatch of one pass, at its first row
    rows["pass"] = rows.groupby("d")["t"].rank(method="dense").fillna(1).astype(int) - 1
    instance = key.merge(rows[["d", "t"]].reset_index(names="i"), on=["d", "t"], how="left")["i"].to_numpy()
    values = pd.to_numeric(long["Counter_Value"], errors="coerce")
    wide = (pd.DataFrame({"i": instance, "c": long["Counter_Name"].astype(str), "v": values.to_numpy()})
            .pivot_table(index="i", columns="c", values="v", aggfunc="sum", dropna=False, sort=False))
    wide = wide.reindex(range(len(rows)))
    wide.columns.name = None
    ids = ids_of(long.loc[rows["index"]].reset_index(drop=True), LONG_ALIASES)
    passes = []
    for n in sorted(rows["pass"].unique()):
        mine = (rows["pass"] == n).to_numpy()
        label = source if rows["pass"].max() == 0 else f"{source} (pass {n + 1})"
        p_ids, p_counters = ids[mine].reset_index(drop=True), wide[mine].reset_index(drop=True)
        passes.append(Pass(p_ids, p_counters.dropna(axis=1, how="all"), label))
    return passes


def read_counter_file(path: Path) -> list[Pass]:
    """A ``counter_collection.csv`` (or rocprof-compute's long ``pmc_perf.csv``) as its passes."""
    return wide_from_long(read_csv(path), str(path))


def read_trace(path: Path) -> Pass:
    """A ``kernel_trace.csv``: dispatch ids, times and sizes per dimension, no counters."""
    frame = read_csv(path)
    if "Kernel_Name" not in frame.columns or "Start_Timestamp" not in frame.columns:
        raise InputError("not rocprofv3's kernel trace (no Kernel_Name and Start_Timestamp columns)", path=path)
    if "Kind" in frame.columns:
        frame = frame[frame["Kind"].astype(str).str.upper().eq("KERNEL_DISPATCH")]
    ids = ids_of(frame.reset_index(drop=True), LONG_ALIASES)
    (gx, gy, gz), (wx, wy, wz) = TRACE_DIMS
    if all(c in frame.columns for c in (gx, gy, gz, wx, wy, wz)):
        g = frame[[gx, gy, gz]].apply(pd.to_numeric, errors="coerce").to_numpy()
        w = frame[[wx, wy, wz]].apply(pd.to_numeric, errors="coerce").to_numpy()
        n = np.ceil(g / w)
        ids["grid"] = [f"({int(a)}, {int(b)}, {int(c)})" if not np.isnan([a, b, c]).any() else pd.NA for a, b, c in n]
        ids["block"] = [f"({int(a)}, {int(b)}, {int(c)})" if not np.isnan([a, b, c]).any() else pd.NA for a, b, c in w]
    return Pass(ids, pd.DataFrame(index=ids.index), str(path))


def gfx_name(version: object) -> str | None:
    """The gfx target of a KFD ``gfx_target_version`` (90402 -> gfx942, 90010 -> gfx90a, 90008 -> gfx908):
    major x 10000 + minor x 100 + stepping, minor and stepping written in hexadecimal."""
    v = pd.to_numeric(pd.Series([version]), errors="coerce").iloc[0]
    if pd.isna(v) or v <= 0:
        return None
    major, rest = divmod(int(v), 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def read_agents(path: Path) -> Agents:
    """The GPUs of ``agent_info.csv``: agent id (``Node_Id``), index among the GPUs, gfx target, name."""
    frame = read_csv(path)
    if "Agent_Type" not in frame.columns:
        raise InputError("not rocprofv3's agent information (no Agent_Type column)", path=path)
    gpus = frame[frame["Agent_Type"].astype(str).str.upper().eq("GPU")].reset_index(drop=True)
    arch = [str(n) if str(n).lower().startswith("gfx") else gfx_name(v)
            for n, v in zip(gpus.get("Name", pd.Series([None] * len(gpus))),
                            gpus.get("Gfx_Target_Version", pd.Series([None] * len(gpus))))]
    names = next((gpus[c] for c in ("Product_Name", "Marketing_Name", "Model_Name") if c in gpus.columns
                  and gpus[c].notna().any()), pd.Series([None] * len(gpus)))
    agent = _column(gpus, ("Node_Id", "Agent_Id", "Logical_Node_Id"))
    return Agents(pd.DataFrame({"agent": agent_number(agent) if agent is not None else range(len(gpus)),
                                "gpu": range(len(gpus)), "arch": arch, "name": names.to_numpy()}))


def _keys(ids: pd.DataFrame) -> pd.MultiIndex:
    """Each dispatch's match key across passes: GPU, kernel name, and its order among that kernel's dispatches."""
    agent = ids["agent"].fillna(-1) if "agent" in ids.columns else pd.Series(-1, index=ids.index)
    name = ids["kernel_name"].astype(str)
    nth = ids.groupby([agent, name], sort=False).cumcount()
    return pd.MultiIndex.from_arrays([agent.to_numpy(), name.to_numpy(), nth.to_numpy()], names=["agent", "kernel", "n"])


def _ordered(p: Pass) -> Pass:
    if "launch_id" not in p.ids.columns:
        return p
    order = np.argsort(p.ids["launch_id"].to_numpy(dtype=np.float64, na_value=np.inf), kind="stable")
    return Pass(p.ids.iloc[order].reset_index(drop=True), p.counters.iloc[order].reset_index(drop=True), p.source)


def merge_passes(passes: Sequence[Pass], timing: Sequence[Pass] = ()) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The dispatches of several passes of one program as one: ids (``time_s`` added) and counter
    totals (:func:`roofline.counting.amd.counter_totals` of the joined counters), one row per dispatch;
    and notes. Matched by :func:`_keys`; a counter of several passes is taken from the first; the time is the traced run's (``timing``) when there is one, else the mean
    over the passes; NaN where a duration of the dispatch was refused (:func:`_durations`)."""
    passes = [_ordered(p) for p in passes]
    ids = pd.concat([p.ids.set_axis(_keys(p.ids)) for p in passes])
    ids = ids[~ids.index.duplicated(keep="first")]
    counters = pd.DataFrame(index=ids.index)
    for p in passes:
        theirs = p.counters.set_axis(_keys(p.ids))
        new = [c for c in theirs.columns if c not in counters.columns]
        counters = counters.join(theirs[new], how="left")
    notes: list[str] = []
    sizes_seen = sorted({len(p.ids) for p in passes})
    if len(sizes_seen) > 1:
        notes.append(f"the {len(passes)} counter passes list {' / '.join(map(str, sizes_seen))} dispatches: matched "
                     "by GPU, kernel name and order; a dispatch missing from a pass lacks that pass's counters")
    seconds, refused = _durations([_ordered(t) for t in timing] if timing else passes, ids.index)
    if refused:
        notes.append(refused)
    ids = ids.assign(time_s=seconds)
    for p in [*timing]:  # the traced run's grid per dimension, where the long form had totals only
        theirs = _ordered(p).ids.set_axis(_keys(_ordered(p).ids))
        for column in ("grid", "block"):
            if column in theirs.columns:
                ids[column] = theirs[column].reindex(ids.index).combine_first(ids.get(column, pd.Series(dtype=object)))
    return ids.reset_index(drop=True), counter_totals(counters.reset_index(drop=True)), notes


def _durations(passes: Sequence[Pass], keys: pd.MultiIndex) -> tuple[np.ndarray, str | None]:
    """Per dispatch (``keys``), the mean over ``passes`` of its durations (s), as rocprof-compute does for its
    long files; NaN where a pass's duration of it was refused (not positive) or no pass timed it; and the
    refusal note."""
    timed = [p for p in passes if "start_ns" in p.ids.columns and "end_ns" in p.ids.columns]
    if not timed:
        return np.full(len(keys), np.nan), None
    start = pd.concat([p.ids["start_ns"] for p in timed], ignore_index=True)
    end = pd.concat([p.ids["end_ns"] for p in timed], ignore_index=True)
    seconds, note = dispatch_times(start, end)
    columns, at = [], 0
    for p in timed:
        mine = seconds[at:at + len(p.ids)]
        refused = np.isnan(mine) & p.ids["start_ns"].notna().to_numpy() & p.ids["end_ns"].notna().to_numpy()
        columns.append(pd.Series(np.where(refused, -np.inf, mine), index=_keys(p.ids)).reindex(keys))
        at += len(p.ids)
    table = pd.concat(columns, axis=1)
    mean = table.replace(-np.inf, np.nan).mean(axis=1, skipna=True).to_numpy(dtype=np.float64, copy=True)
    mean[(table == -np.inf).any(axis=1).to_numpy()] = np.nan
    return mean, note


"""Omniperf 1.x/2.x and rocprof-compute 3.x workload folders.

A workload folder (``omniperf profile -n NAME``, ``rocprof-compute profile``) holds, per GPU:

* ``pmc_perf.csv`` (or ``pmc_perf.csv.gz``): one wide row per dispatch, the counter passes joined (or,
  as rocprof-compute 3.x exports its rocpd database, one row per counter per dispatch, each pass with its
  own timestamps: a dispatch's time is then the mean over its passes):
  ids (``Dispatch_ID``, ``Kernel_Name``, ``GPU_ID``, ``Grid_Size`` or 1.x's ``grd``, ``Workgroup_Size``,
  ``pid``, ``queue-id``), counters per instance (``TCC_EA_WRREQ[0]``) and summed (``TCC_EA_WRREQ_sum``),
  and the counting pass's own timestamps;
* ``timestamps.csv``: the same dispatches timed in a pass without counters: their time is read from
  here when it holds them (matched by order when both list the same kernels, else by ``Dispatch_ID``);
* ``sysinfo.csv``: the GPU (2.x/3.x: ``gpu_model``, ``gpu_arch``, ``cu_per_gpu``, ``max_sclk``; 1.x:
  ``name``, ``gpu_soc``, ``numCU``, ``sclk``);
* ``pmc_dispatch_info.csv``: ids and names only (not needed beside ``pmc_perf.csv``);
* ``roofline.csv``: the empirical peaks measured on the GPU (rocm-amdgpu-bench), with Low/High bounds,
  per device: :func:`read_roofline_csv` makes them a measured :class:`~roofline.machine.model.Machine`.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.counting.amd import counter_totals
from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.machine.model import Machine
from roofline.readers.amd.dispatches import amd_table, dispatch_times, kernel_name
from roofline.readers.amd.kinds import WORKLOAD_FILES
from roofline.readers.amd.rocprofv3 import merge_passes, wide_from_long



#: Columns read as text: timestamps keep their own digits (:func:`roofline.readers.amd.dispatches.dispatch_times`).
TIMESTAMPS = ("Start_Timestamp", "End_Timestamp", "BeginNs", "EndNs")


def _csv(path: Path, *, text: bool = False) -> pd.DataFrame:
    """A CSV of the workload; ``text``: every cell as written; else the timestamps only."""
    dtype: object = str if text else dict.fromkeys(TIMESTAMPS, str)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return pd.read_csv(io.BytesIO(fh.read()), dtype=dtype)
        return pd.read_csv(path, dtype=dtype)
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"not a readable CSV ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})",
                         path=path, hint="copy the workload folder again; the file may be cut short") from None


def _first(frame: pd.DataFrame, *names: str) -> pd.Series | None:
    return next((frame[n] for n in names if n in frame.columns), None)


def gpu_of(sysinfo: pd.DataFrame, where: Path) -> tuple[str, str, dict[str, float]]:
    """The gfx target, the GPU's name and its figures (CUs, peak clock in Hz) from ``sysinfo.csv``."""
    row = sysinfo.iloc[0] if len(sysinfo) else pd.Series(dtype=object)
    arch = next((str(row[c]) for c in ("gpu_arch", "gpu_soc") if c in row.index), None)
    if not arch or not arch.lower().startswith("gfx"):
        raise InputError("sysinfo.csv names no gfx architecture (gpu_arch, or gpu_soc in Omniperf 1.x)", path=where,
                         hint="give the whole workload folder that Omniperf or rocprof-compute wrote")
    name = next((str(row[c]) for c in ("gpu_model", "name") if c in row.index and pd.notna(row[c])), arch)
    figures: dict[str, float] = {}
    for key, columns, scale in (("cus", ("cu_per_gpu", "numCU"), 1.0), ("max_clock_hz", ("max_sclk", "sclk"), 1e6)):
        value = next((pd.to_numeric(row[c], errors="coerce") for c in columns if c in row.index), np.nan)
        if pd.notna(value) and value > 0:
            figures[key] = float(value) * scale
    return arch.lower(), name, figures


def _times(perf: pd.DataFrame, folder: Path, names: pd.Series) -> tuple[np.ndarray, str | None, str]:
    """Seconds per dispatch, the refusal note, and which file they came from."""
    stamps_path = folder / "timestamps.csv"
    if stamps_path.is_file():
        stamps = _csv(stamps_path, text=True)
        if {"Start_Timestamp", "End_Timestamp"} <= set(stamps.columns) and len(stamps):
            theirs = stamps["Kernel_Name"].map(kernel_name) if "Kernel_Name" in stamps.columns else None
            if theirs is not None and len(stamps) == len(perf) and (theirs.to_numpy() == names.to_numpy()).all():
                seconds, note = dispatch_times(stamps["Start_Timestamp"], stamps["End_Timestamp"])
                return seconds, note, "timestamps.csv"
            if "Dispatch_ID" in stamps.columns and "Dispatch_ID" in perf.columns:
                by_id = stamps.drop_duplicates("Dispatch_ID").set_index("Dispatch_ID")  # (text, as read)
                ours = pd.to_numeric(perf["Dispatch_ID"], errors="coerce").astype("Int64").astype(str)
                start, end = ours.map(by_id["Start_Timestamp"]), ours.map(by_id["End_Timestamp"])
                if start.notna().all():
                    seconds, note = dispatch_times(start, end)
                    return seconds, note, "timestamps.csv"
    start, end = _first(perf, "Start_Timestamp", "BeginNs"), _first(perf, "End_Timestamp", "EndNs")
    if start is None or end is None:
        return np.full(len(perf), np.nan), "the workload has no dispatch timestamps: times are unknown", ""
    seconds, note = dispatch_times(start, end)
    return seconds, note, "pmc_perf.csv"


def read_workload(path: str | Path) -> KernelTable:
    """The kernel table of an Omniperf / rocprof-compute workload folder (or a file in one)."""
    given = Path(path)
    folder = given if given.is_dir() else given.parent
    perf_path = next((folder / f for f in WORKLOAD_FILES if (folder / f).is_file()), None)
    if perf_path is None or not (folder / "sysinfo.csv").is_file():
        raise InputError("not an Omniperf / rocprof-compute workload folder (it needs pmc_perf.csv and sysinfo.csv)",
                         path=folder, hint="give the folder that `rocprof-compute profile` (or omniperf) wrote per GPU")
    arch, device, figures = gpu_of(_csv(folder / "sysinfo.csv"), folder / "sysinfo.csv")
    perf = _csv(perf_path)
    if "Kernel_Name" not in perf.columns or not len(perf):
        raise InputError("pmc_perf.csv lists no dispatches (no Kernel_Name rows)", path=perf_path,
                         hint="profile again; the counter passes may have failed (see the workload's log.txt)")
    if "Counter_Name" in perf.columns:  # rocprof-compute 3.x's rocpd export: one row per counter per dispatch
        return _long_workload(perf, perf_path, folder, arch, device, figures)
    names = perf["Kernel_Name"].map(kernel_name)
    seconds, note, _ = _times(perf, folder, names)
    ids = pd.DataFrame({"launch_id": pd.to_numeric(perf.get("Dispatch_ID"), errors="coerce"),
                        "kernel_name": names, "time_s": seconds})
    for column, sources in (("device", ("GPU_ID", "gpu-id")), ("process_id", ("pid",)), ("stream", ("queue-id",))):
        values = _first(perf, *sources)
        if values is not None:
            ids[column] = pd.to_numeric(values, errors="coerce")
    items, group = _first(perf, "Grid_Size", "grd"), _first(perf, "Workgroup_Size", "wgr")
    if items is not None and group is not None:  # Grid_Size counts work-items; the table's grid counts workgroups
        groups = pd.to_numeric(items, errors="coerce") / pd.to_numeric(group, errors="coerce")
        ids["grid"] = [f"({int(g)}, 1, 1)" if pd.notna(g) and g == int(g) else pd.NA for g in groups]
        ids["block"] = [f"({int(b)}, 1, 1)" if pd.notna(b) else pd.NA for b in pd.to_numeric(group, errors="coerce")]
    warnings = [f"{folder.name}: {note}"] if note else []
    return _with_figures(amd_table(ids, counter_totals(perf), arch, device, str(folder), warnings=warnings), figures)


def _long_workload(perf: pd.DataFrame, path: Path, folder: Path, arch: str, device: str,
                   figures: dict[str, float]) -> KernelTable:
    """A workload whose pmc_perf.csv is in the long form, each dispatch's passes with their own
    timestamps: read as rocprofv3's counter collection is (its time the mean over the passes)."""
    ids, counters, notes = merge_passes(wide_from_long(perf, str(path)))
    ids = ids.rename(columns={"agent": "device"})
    warnings = [f"{folder.name}: {n}" for n in notes]
    return _with_figures(amd_table(ids, counters, arch, device, str(folder), warnings=warnings), figures)


def _with_figures(table: KernelTable, figures: dict[str, float]) -> KernelTable:
    """The table with the GPU's CU count and peak clock in its metrics (the specs read them)."""
    if figures:
        table.metrics["cu_per_gpu"] = figures.get("cus", np.nan)
        table.metrics["max_sclk_hz"] = figures.get("max_clock_hz", np.nan)
    return table


#: roofline.csv's columns: ceiling key -> (column, unit factor to SI). GB/s and GFLOP/s (GOP/s for INT8).
_ROOFLINE_COLUMNS = {
    "memory.dram": ("HBMBw", 1e9), "memory.l2": ("L2Bw", 1e9), "memory.l1": ("L1Bw", 1e9), "memory.shared": ("LDSBw", 1e9),
    "compute.fp32": ("FP32Flops", 1e9), "compute.fp64": ("FP64Flops", 1e9), "compute.tensor_bf16": ("MFMABF16Flops", 1e9),
    "compute.tensor_fp16": ("MFMAF16Flops", 1e9), "compute.tensor_fp32": ("MFMAF32Flops", 1e9),
    "compute.tensor_fp64": ("MFMAF64Flops", 1e9), "compute.tensor_int8": ("MFMAI8Ops", 1e9),
}


def read_roofline_csv(path: str | Path, device: int | None = None, name: str | None = None) -> Machine:
    """The empirical peaks of ``roofline.csv`` (rocm-amdgpu-bench, as Omniperf runs it) as a measured
    machine: the row of ``device`` (default: the first), GB/s and GFLOP/s taken to B/s and FLOP/s; the
    Low/High bounds give each ceiling's spread."""
    p = Path(path)
    frame = _csv(p)
    if "device" not in frame.columns or not len(frame):
        raise InputError("not a roofline.csv of empirical peaks (no device column)", path=p)
    rows = frame[frame["device"] == device] if device is not None else frame.iloc[:1]
    if not len(rows):
        raise InputError(f"roofline.csv has no row for device {device}", path=p,
                         hint=f"its devices: {', '.join(map(str, frame['device']))}")
    row = rows.iloc[0]
    memory: dict[str, float] = {}
    compute: dict[str, float] = {}
    spread: dict[str, float] = {}
    for key, (column, factor) in _ROOFLINE_COLUMNS.items():
        value = pd.to_numeric(row.get(column), errors="coerce")
        if pd.isna(value) or value <= 0:
            continue
        kind, level = key.split(".")
        (memory if kind == "memory" else compute)[level] = float(value) * factor
        bounds = [pd.to_numeric(row.get(c), errors="coerce") for c in frame.columns
                  if c.lower() in (f"{column}low".lower(), f"{column}high".lower())
                  or (column.startswith("MFMAI8") and c.lower() in ("mfmafi8opslow", "mfmai8opshigh"))]
        bounds = [b for b in bounds if pd.notna(b)]
        if len(bounds) == 2:
            spread[level] = float((max(bounds) - min(bounds)) / value)
    gpu = name or f"{p.parent.name} device {int(row['device'])}"
    return Machine(name=gpu, source="measured", memory=memory, compute=compute, spread=spread,
                   metadata={"file": str(p), "benchmark": "rocm-amdgpu-bench (roofline.csv)", "device": int(row["device"])})


def workload_machine(sources: tuple[str, ...], devices: list[int]) -> tuple[Machine, Path] | None:
    """The measured machine of the workload folder the table was read from: its ``roofline.csv`` row
    of the dispatches' device (the first row when that device has none), and the file; None when the
    table comes from no workload folder with a roofline.csv, or from several."""
    files = {Path(s) / "roofline.csv" for s in sources if (Path(s) / "roofline.csv").is_file()}
    if len(files) != 1:
        return None
    path = files.pop()
    frame = _csv(path)
    listed = set(pd.to_numeric(frame.get("device"), errors="coerce").dropna().astype(int)) if "device" in frame else set()
    device = devices[0] if len(devices) == 1 and devices[0] in listed else None
    return read_roofline_csv(path, device=device), path

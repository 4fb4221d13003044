"""A rocprofv3 output folder (or one of its files), or rocprof v1's ``results.csv``, as a kernel table.

What a path holds is told by content (:func:`file_kind`): rocprofv3's counter collection (long form),
kernel trace and agent information CSVs, its JSON and rocpd (SQLite) outputs, rocprof v1's results.
A folder is searched (:data:`~roofline.readers.amd.kinds.MAX_DEPTH` levels: ``DIR/pmc_N/HOST/PID_x``)
for rocprofv3's files by name. Counter files of one folder that differ only by their process id
prefix are one pass (the processes of one run); every other counter file, JSON or database is a pass
of its own, all merged by dispatch (:func:`roofline.readers.amd.rocprofv3.merge_passes`). A kernel trace
in a folder without counter files is a run traced without counters: its times are used.

The GPU: each dispatch's agent in ``agent_info.csv`` (or the JSON's and database's agents), else an
Omniperf / rocprof-compute ``sysinfo.csv`` beside the files, else the ``arch`` the caller knows
(``roofline profile`` asks rocprofv3).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd

from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.readers.amd.omniperf import gpu_of
from roofline.readers.amd.kinds import (AGENT_FILE, COUNTER_FILE, TRACE_FILE, _named, file_kind, folder_files,  # noqa: F401
                                        rocprof_kind)  # (file_kind and rocprof_kind: importable from here too)
from roofline.readers.amd.rocprof_files import read_json, read_rocpd, read_v1
from roofline.readers.amd.rocprofv3 import Agents, Pass, merge_passes, read_agents, read_counter_file, read_csv, read_trace
from roofline.readers.amd.dispatches import amd_table

_PID = re.compile(r"^\d+_")
HOW = ("give the folder rocprofv3 wrote (-d DIR): its counter_collection.csv files (--pmc, --output-format csv), "
       "with agent_info.csv beside them")


def _inputs(path: Path) -> list[tuple[Path, str]]:
    """The files read for ``path``: a folder's rocprofv3 files, or a file and its run's companions
    (``agent_info.csv``, and a counter file's ``kernel_trace.csv``, of the same prefix)."""
    if path.is_dir():
        files = folder_files(path)
        if not files:
            raise InputError("the folder holds no rocprofv3 outputs", path=path, hint=HOW)
        return files
    kind = file_kind(path)
    if kind is None:
        raise InputError("not a rocprofv3 or rocprof output", path=path, hint=HOW)
    prefix = path.name[: len(path.name) - len(COUNTER_FILE)] if path.name.endswith(COUNTER_FILE) else None
    out = [(path, kind)]
    for sibling in sorted(path.parent.iterdir()):
        if sibling == path or not sibling.is_file():
            continue
        if sibling.name.endswith(AGENT_FILE) or (prefix is not None and sibling.name == prefix + TRACE_FILE):
            out.append((sibling, _named(sibling.name) or ""))
    return out


def _group(path: Path) -> tuple[Path, str]:
    """Counter or trace files of one run: same folder, same name less a process id prefix."""
    return path.parent, _PID.sub("", path.name)


def _concat(passes: list[Pass], source: str) -> Pass:
    return Pass(pd.concat([p.ids for p in passes], ignore_index=True),
                pd.concat([p.counters for p in passes], ignore_index=True), source)


def _sysinfo(paths: list[Path]) -> tuple[str, str] | None:
    for folder in dict.fromkeys(p.parent for p in paths):
        for where in (folder, folder.parent):
            if (where / "sysinfo.csv").is_file():
                arch, name, _ = gpu_of(read_csv(where / "sysinfo.csv"), where / "sysinfo.csv")
                return arch, name
    return None


def _gpu(ids: pd.DataFrame, agents: Agents, sysinfo: tuple[str, str] | None, arch: str | None,
         device_name: str | None, where: Path) -> tuple[pd.DataFrame, str, str | None]:
    """The dispatches' device (GPU index), and the one gfx target and GPU name they ran on."""
    gpus = agents.gpus.drop_duplicates("agent").reset_index(drop=True)
    if len(gpus):
        if len(gpus) == 1 or "agent" not in ids.columns:
            row = pd.DataFrame([gpus.iloc[0]] * len(ids)).reset_index(drop=True)
        else:
            row = gpus.set_index("agent").reindex(ids["agent"].to_numpy()).reset_index(drop=True)
        archs = sorted({str(a).lower() for a in row["arch"].dropna()})
        if len(archs) > 1:
            raise InputError(f"the dispatches ran on GPUs of different kinds ({', '.join(archs)})", path=where,
                             hint="profile one kind of GPU at a time (HIP_VISIBLE_DEVICES)")
        if archs:
            names = row["name"].dropna().astype(str)
            ids = ids.assign(device=row["gpu"].to_numpy())
            return ids, archs[0], (names.iloc[0] if len(names) else device_name)
    if "agent" in ids.columns:
        ids = ids.assign(device=ids["agent"])
    if sysinfo is not None:
        return ids, sysinfo[0], sysinfo[1]
    if arch is not None:
        return ids, arch.lower(), device_name
    raise InputError("the profile does not name its GPU's architecture (no agent_info.csv beside it)", path=where,
                     hint="keep the agent_info.csv that rocprofv3 writes beside its counter files (rocprof v1's "
                          "results.csv names no GPU: put an agent_info.csv or Omniperf sysinfo.csv beside it)")


def read_rocprof(path: str | Path, *, arch: str | None = None, device_name: str | None = None) -> KernelTable:
    """The kernel table of a rocprofv3 output folder or file, or of rocprof v1's results.csv (see the
    module). ``arch`` and ``device_name`` name the GPU where the files do not."""
    given = Path(path)
    files = _inputs(given)
    runs: dict[tuple[Path, str], list[Pass]] = {}
    traces: dict[tuple[Path, str], list[Pass]] = {}
    extra: list[Pass] = []
    agents = []
    for p, kind in files:
        if kind == "counters":
            parts = read_counter_file(p)
            if len(parts) == 1:
                runs.setdefault(_group(p), []).append(parts[0])
            else:
                extra += parts
        elif kind == "trace":
            traces.setdefault(_group(p), []).append(read_trace(p))
        elif kind == "agents":
            agents.append(read_agents(p).gpus)
        elif kind in ("json", "rocpd"):
            parts, gpus = (read_json if kind == "json" else read_rocpd)(p)
            extra += parts
            agents.append(gpus.gpus)
        elif kind == "v1":
            extra.append(read_v1(p))
    counted_folders = {folder for folder, _ in runs}
    passes = [_with_trace(_concat(ps, ps[0].source), traces.get((g[0], g[1].replace(COUNTER_FILE, TRACE_FILE))))
              for g, ps in runs.items()] + extra
    timing = [_concat(ts, ts[0].source) for (folder, _), ts in traces.items() if folder not in counted_folders]
    if not passes:
        if timing:  # a kernel trace alone: times, no counters
            passes, timing = timing, []
        else:
            raise InputError("no counter collection among the rocprof outputs", path=given, hint=HOW)
    ids, counters, notes = merge_passes(passes, timing)
    frame = pd.concat(agents, ignore_index=True) if agents else Agents().gpus
    ids, gfx, name = _gpu(ids, Agents(frame), _sysinfo([p for p, _ in files]), arch, device_name, given)
    if timing:
        notes.insert(0, f"times from the run traced without counters ({', '.join(t.source for t in timing)})")
    table = amd_table(ids, counters, gfx, name, str(given), warnings=[f"{given.name}: {n}" for n in notes])
    return replace(table, sources=tuple(dict.fromkeys([str(given), *(str(p) for p, _ in files)])))


def _with_trace(p: Pass, traces: list[Pass] | None) -> Pass:
    """A counter pass with its own run's kernel trace: times and sizes per dimension where the
    counter file lacks them (rocprofv3 before ROCm 6.3 wrote no timestamps in counter_collection.csv)."""
    if not traces:
        return p
    trace = _concat(traces, traces[0].source)
    if "launch_id" not in trace.ids.columns or "launch_id" not in p.ids.columns:
        return p
    by_id = trace.ids.drop_duplicates("launch_id").set_index("launch_id")
    ids = p.ids.copy()
    for column in ("start_ns", "end_ns", "grid", "block"):
        if column in by_id.columns:
            theirs = ids["launch_id"].map(by_id[column])
            if column not in ids.columns:
                ids[column] = theirs
            elif column in ("grid", "block"):  # the trace's shape per dimension, where it has the dispatch
                ids[column] = theirs.where(theirs.notna(), ids[column])
            else:
                ids[column] = ids[column].fillna(theirs)
    return Pass(ids, p.counters, p.source)

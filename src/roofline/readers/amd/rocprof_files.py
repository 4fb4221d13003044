"""rocprofv3's JSON and rocpd (SQLite) outputs, and rocprof v1's ``results.csv``, as counter passes.

* **JSON** (``rocprofv3 --output-format json``, ``*_results.json``): ``{"rocprofiler-sdk-tool": [one
  object per process]}``, each with ``agents`` (``id.handle``, ``type`` 2 for a GPU, ``name`` the gfx
  target, ``product_name``), ``counters`` (``id.handle`` -> ``name``), ``kernel_symbols`` and
  ``callback_records.counter_collection``: per dispatch its ``dispatch_data.dispatch_info`` (ids, grid and
  workgroup sizes per dimension) and ``records``, one value per counter *and hardware instance*,
  summed here per counter as the CSV writer does. Times: the record's ``dispatch_data`` timestamps when
  the release writes them, else ``buffer_records.kernel_dispatch`` (``--kernel-trace``) by dispatch id.
* **rocpd** (``--output-format rocpd``, ROCm 7's default, ``*_results.db``): read through the database's
  own ``counters_collection`` view (one row per counter per dispatch, values summed over instances) and
  ``rocpd_info_agent``; a database without that view (an older rocpd schema) is refused with the way out
  (``rocpd convert -f csv``, then the CSV).
* **rocprof v1** ``results.csv`` (``rocprof -i input.txt -o results.csv``, ROCm 5 and 6): one wide row per
  dispatch, the passes of ``input.txt`` already joined by rocprof (``Index``, ``KernelName``, ``gpu-id``,
  ``queue-id``, ``pid``, ``grd``, ``wgr``, ..., the counters, ``BeginNs``, ``EndNs``). It does not name
  the GPU: its gfx target comes from an ``agent_info.csv`` or Omniperf ``sysinfo.csv`` beside it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd

from roofline.errors import InputError
from roofline.readers.amd.dispatches import kernel_name
from roofline.readers.amd.kinds import is_v1
from roofline.readers.amd.rocprofv3 import V1_ALIASES, V1_META, Agents, Pass, ids_of, read_csv, wide_from_long

#: rocprofiler's agent type of a GPU (ROCPROFILER_AGENT_TYPE_GPU).
AGENT_TYPE_GPU = 2


def _dims(d: object) -> tuple[float, float, float] | None:
    if not isinstance(d, dict):
        return None
    return tuple(float(d.get(k, 1) or 1) for k in ("x", "y", "z"))  # type: ignore[return-value]


def _shape(grid: tuple[float, float, float] | None, group: tuple[float, float, float] | None) -> tuple[object, object]:
    if grid is None or group is None or 0 in group:
        return pd.NA, pd.NA
    g = tuple(-(-int(a) // int(b)) for a, b in zip(grid, group))
    return f"({g[0]}, {g[1]}, {g[2]})", f"({int(group[0])}, {int(group[1])}, {int(group[2])})"


def _processes(data: object, path: Path) -> list[dict]:
    tool = data.get("rocprofiler-sdk-tool") if isinstance(data, dict) else None
    if tool is None:
        raise InputError("not a rocprofv3 JSON output (no rocprofiler-sdk-tool object)", path=path,
                         hint="give the *_results.json that rocprofv3 --output-format json wrote")
    return [p for p in (tool if isinstance(tool, list) else [tool]) if isinstance(p, dict)]


def _handle(value: object) -> object:
    return value.get("handle") if isinstance(value, dict) else value


def read_json(path: Path) -> tuple[list[Pass], Agents]:
    """A rocprofv3 JSON output: one pass (its dispatches with counters) and its GPUs."""
    try:
        with path.open("rb") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"not a readable JSON file ({exc})", path=path, hint="the file may be cut short") from None
    rows: list[dict] = []
    values: list[dict[str, float]] = []
    gpus: list[dict] = []
    for proc in _processes(data, path):
        pid = (proc.get("metadata") or {}).get("pid")
        names = {_handle(c.get("id")): c.get("name") for c in proc.get("counters") or []}
        symbols = {s.get("kernel_id"): s.get("formatted_kernel_name") or s.get("demangled_kernel_name")
                   or s.get("kernel_name") for s in proc.get("kernel_symbols") or []}
        for agent in proc.get("agents") or []:
            if agent.get("type") == AGENT_TYPE_GPU:
                gpus.append({"agent": _handle(agent.get("id")), "node": agent.get("node_id", len(gpus)),
                             "arch": agent.get("name"), "name": agent.get("product_name") or agent.get("model_name")})
        traced = {}
        for rec in ((proc.get("buffer_records") or {}).get("kernel_dispatch") or []):
            info = rec.get("dispatch_info") or {}
            traced[info.get("dispatch_id")] = (rec.get("start_timestamp"), rec.get("end_timestamp"))
        for rec in ((proc.get("callback_records") or {}).get("counter_collection") or []):
            dd = rec.get("dispatch_data") or {}
            info = dd.get("dispatch_info") or {}
            grid, block = _shape(_dims(info.get("grid_size")), _dims(info.get("workgroup_size")))
            start, end = (dd.get("start_timestamp"), dd.get("end_timestamp"))
            if start is None:
                start, end = traced.get(info.get("dispatch_id"), (None, None))
            rows.append({"launch_id": info.get("dispatch_id"), "kernel_name": kernel_name(symbols.get(info.get("kernel_id"))),
                         "agent": _handle(info.get("agent_id")), "process_id": pid,
                         "stream": _handle(info.get("queue_id")), "grid": grid, "block": block,
                         "start_ns": start, "end_ns": end})
            totals: dict[str, float] = {}
            for r in rec.get("records") or []:
                name = names.get(_handle(r.get("counter_id")))
                if name is not None:
                    totals[name] = totals.get(name, 0.0) + float(r.get("value") or 0.0)
            values.append(totals)
    if not rows:
        raise InputError("the JSON output holds no counter collection records", path=path,
                         hint="profile with rocprofv3 --pmc ... --output-format json")
    ids = pd.DataFrame(rows)
    for c in ("launch_id", "process_id", "start_ns", "end_ns"):
        ids[c] = pd.to_numeric(ids[c], errors="coerce")
    gpu_frame = pd.DataFrame(gpus, columns=["agent", "node", "arch", "name"]).sort_values("node", kind="stable")
    gpu_frame = gpu_frame.assign(gpu=range(len(gpu_frame)))[["agent", "gpu", "arch", "name"]].reset_index(drop=True)
    return [Pass(ids, pd.DataFrame(values), str(path))], Agents(gpu_frame)


#: The columns read from the rocpd database's ``counters_collection`` view, as the long form names them.
_ROCPD_COLUMNS = {"dispatch_id": "Dispatch_Id", "kernel_name": "Kernel_Name", "agent_id": "Agent_Id",
                  "pid": "Process_Id", "queue_id": "Queue_Id", "grid_size": "Grid_Size",
                  "workgroup_size": "Workgroup_Size", "counter_name": "Counter_Name", "value": "Counter_Value",
                  "start": "Start_Timestamp", "end": "End_Timestamp"}


def read_rocpd(path: Path) -> tuple[list[Pass], Agents]:
    """A rocpd database: its counter passes (one per database) and GPUs."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(f"not a readable SQLite database ({exc})", path=path) from None
    with con:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if "counters_collection" not in names or "rocpd_info_agent" not in names:
            raise InputError("a rocpd database without the counters_collection view (an older rocpd schema)",
                             path=path, hint=f"convert it with `rocpd convert -f csv -i {path}` and give the "
                                             "counter_collection.csv it writes")
        wanted = ", ".join(f'"{c}"' for c in _ROCPD_COLUMNS)
        long = pd.read_sql_query(f"SELECT {wanted} FROM counters_collection ORDER BY dispatch_id", con)
        agents = pd.read_sql_query("SELECT * FROM rocpd_info_agent", con)
    long = long.rename(columns=_ROCPD_COLUMNS)
    gpus = agents[agents["type"].astype(str).str.upper().eq("GPU")].reset_index(drop=True)
    order = gpus.get("type_index", pd.Series(range(len(gpus)))).fillna(0)
    gpus = gpus.assign(_o=order.to_numpy()).sort_values("_o", kind="stable").reset_index(drop=True)
    name = next((gpus[c] for c in ("product_name", "model_name") if c in gpus.columns and gpus[c].notna().any()),
                pd.Series([None] * len(gpus)))
    frame = pd.DataFrame({"agent": gpus["id"], "gpu": range(len(gpus)), "arch": gpus.get("name"), "name": name})
    return wide_from_long(long, str(path)), Agents(frame)


def read_v1(path: Path) -> Pass:
    """rocprof v1's ``results.csv``: one row per dispatch, its counter columns."""
    frame = read_csv(path)
    if not is_v1(frame.columns):
        raise InputError("not rocprof v1's results.csv (no Index and KernelName columns)", path=path)
    if not len(frame):
        raise InputError("results.csv lists no dispatches", path=path,
                         hint="does the program launch kernels? check rocprof's output for errors")
    ids_columns = {c for names in V1_ALIASES.values() for c in names} | set(V1_META)
    counters = frame[[c for c in frame.columns if c not in ids_columns]]
    return Pass(ids_of(frame, V1_ALIASES), counters.apply(pd.to_numeric, errors="coerce"), str(path))

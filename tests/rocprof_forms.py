"""rocprofv3's output forms laid out from a real run's values, for tests without an AMD GPU.

The values are the real ones of tests/data/amd/rocprofcompute_vcopy_mi300x_gfx942_rocpd/pmc_perf.csv.gz (vcopy on an
MI300X, rocprof-compute 3.2.0 over rocprofv3, ROCm 7.0: 12 counter passes x 3 dispatches, long form).
No public repository holds a rocprofv3 CSV folder with these counters, nor its JSON or rocpd outputs, so
this module writes them as rocprofv3 documents them (the column names of ROCm/rocprofiler-sdk's
source/docs/data/*.csv and its agent_info example; the JSON keys of source/docs/rocprofv3-schema.json;
the table and view names of the rocpd schema, source/share/rocprofiler-sdk-rocpd/*.sql), one recorded
pass per run. The fake rocprofv3 (tests/profiling/fake_rocprofv3.py) uses the same layout.
Standard library only: the fake runs it under any Python.
"""

from __future__ import annotations

import csv
import gzip
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "data" / "amd" / "rocprofcompute_vcopy_mi300x_gfx942_rocpd" / "pmc_perf.csv.gz"
#: The recorded GPU's agent (its GPU_ID, the KFD node) and what agent_info.csv says of it: the gfx target
#: and CU count of the run's sysinfo.csv (gfx942, 304 CUs, 2100 MHz), the product's name.
AGENT = 2
GPU = {"Name": "gfx942", "Gfx_Target_Version": 90402, "Cu_Count": 304, "Max_Engine_Clk_Fcompute": 2100,
       "Wave_Front_Size": 64, "Product_Name": "AMD Instinct MI300X"}
COUNTER_HEADER = ("Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id", "Grid_Size",
                  "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                  "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp")
TRACE_HEADER = ("Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
                "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
                "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z")
AGENT_HEADER = ("Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count", "Wave_Front_Size",
                "Cu_Count", "Gfx_Target_Version", "Max_Engine_Clk_Fcompute", "Name", "Vendor_Name", "Product_Name",
                "Model_Name")


def recorded_passes() -> list[dict]:
    """The recorded run as passes, in time order: per pass, its dispatches (id -> row of ids and
    timestamps) and values (counter -> dispatch id -> value)."""
    with gzip.open(RECORDED, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    starts: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        t = int(r["Start_Timestamp"])
        if t not in starts[r["Dispatch_ID"]]:
            starts[r["Dispatch_ID"]].append(t)
    passes: list[dict] = [{"dispatches": {}, "values": defaultdict(dict)} for _ in range(max(map(len, starts.values())))]
    for r in rows:
        n = sorted(starts[r["Dispatch_ID"]]).index(int(r["Start_Timestamp"]))
        d = int(r["Dispatch_ID"])
        passes[n]["dispatches"][d] = r
        passes[n]["values"][r["Counter_Name"]][d] = float(r["Counter_Value"])
    return passes


def _pass_of(passes: list[dict], counter: str) -> dict | None:
    return next((p for p in passes if counter in p["values"]), None)


def write_agents(path: Path) -> None:
    """agent_info.csv: two CPU agents (nodes 0, 1) and the recorded GPU (node 2)."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(AGENT_HEADER)
        for node in (0, 1):
            w.writerow([node, node, "CPU", 32, 0, 0, 32, 0, 0, "AMD EPYC 9354 32-Core Processor", "CPU",
                        "AMD EPYC 9354 32-Core Processor", ""])
        w.writerow([AGENT, AGENT, "GPU", 0, 1216, GPU["Wave_Front_Size"], GPU["Cu_Count"], GPU["Gfx_Target_Version"],
                    GPU["Max_Engine_Clk_Fcompute"], GPU["Name"], "AMD", GPU["Product_Name"], "aqua_vanjaram"])


def write_counters(path: Path, counters: list[str], pid: int, *, missing: set[str] = frozenset()) -> list[str]:
    """counter_collection.csv of one run asked for ``counters``: each counter's recorded values (from the
    recorded pass that has it), the timestamps of the first of those passes. Returns the counters the
    recording lacks (not written)."""
    passes = recorded_passes()
    have = [c for c in counters if c not in missing and _pass_of(passes, c) is not None]
    timed = _pass_of(passes, have[0]) if have else passes[0]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(COUNTER_HEADER)
        for d, r in sorted(timed["dispatches"].items()):
            for c in have:
                value = _pass_of(passes, c)["values"][c].get(d)
                if value is None:
                    continue
                w.writerow([d, d, f"Agent {AGENT}", 1, pid, pid, int(r["Grid_Size"]), int(r["Kernel_ID"]),
                            r["Kernel_Name"], int(r["Workgroup_Size"]), int(r["LDS_Per_Workgroup"]),
                            int(r["Scratch_Per_Workitem"]), int(r["Arch_VGPR"]), int(r["Accum_VGPR"]), int(r["SGPR"]),
                            c, value, int(r["Start_Timestamp"]), int(r["End_Timestamp"])])
    return [c for c in counters if c not in have]


def write_trace(path: Path, pid: int, *, zero_first: bool = False) -> None:
    """kernel_trace.csv: the dispatches and timestamps of the recorded first pass (vcopy's grid of
    1,048,576 work-items in workgroups of 256, as ``-n 1048576 -b 256`` launches it); ``zero_first``
    writes the first dispatch's end equal to its start."""
    first = recorded_passes()[0]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(TRACE_HEADER)
        for i, (d, r) in enumerate(sorted(first["dispatches"].items())):
            start, end = int(r["Start_Timestamp"]), int(r["End_Timestamp"])
            w.writerow(["KERNEL_DISPATCH", f"Agent {AGENT}", 1, 1, pid, d, int(r["Kernel_ID"]), r["Kernel_Name"], d,
                        start, start if zero_first and i == 0 else end, int(r["LDS_Per_Workgroup"]),
                        int(r["Scratch_Per_Workitem"]), int(r["Arch_VGPR"]), int(r["Accum_VGPR"]), int(r["SGPR"]),
                        int(r["Workgroup_Size"]), 1, 1, int(r["Grid_Size"]), 1, 1])


def write_json(path: Path, pass_index: int, pid: int = 3554) -> None:
    """``--output-format json`` of one recorded pass: per-instance counters ``X[i]`` as records of
    counter X (one per instance, as the JSON keeps them), ``X_sum`` and plain counters one record each."""
    p = recorded_passes()[pass_index]
    names = sorted({c.split("[")[0] for c in p["values"]})
    ids = {n: i + 1 for i, n in enumerate(names)}
    records = []
    for d, r in sorted(p["dispatches"].items()):
        values = [{"counter_id": {"handle": ids[c.split("[")[0]]}, "value": v[d]}
                  for c, v in sorted(p["values"].items()) if d in v]
        info = {"agent_id": {"handle": 7}, "queue_id": {"handle": 1}, "kernel_id": int(r["Kernel_ID"]), "dispatch_id": d,
                "workgroup_size": {"x": int(r["Workgroup_Size"]), "y": 1, "z": 1},
                "grid_size": {"x": int(r["Grid_Size"]), "y": 1, "z": 1}}
        records.append({"dispatch_data": {"correlation_id": {"internal": d, "external": 0}, "dispatch_info": info},
                        "records": values, "thread_id": pid})
    first = next(iter(p["dispatches"].values()))
    dispatch = [{"kind": 11, "thread_id": pid, "correlation_id": {"internal": d, "external": 0},
                 "start_timestamp": int(r["Start_Timestamp"]), "end_timestamp": int(r["End_Timestamp"]),
                 "dispatch_info": {"agent_id": {"handle": 7}, "dispatch_id": d, "kernel_id": int(r["Kernel_ID"])}}
                for d, r in sorted(p["dispatches"].items())]
    tool = {"metadata": {"pid": pid},
            "agents": [{"id": {"handle": 5}, "type": 1, "node_id": 0, "name": "AMD EPYC 9354 32-Core Processor"},
                       {"id": {"handle": 7}, "type": 2, "node_id": AGENT, "name": GPU["Name"],
                        "product_name": GPU["Product_Name"], "cu_count": GPU["Cu_Count"]}],
            "counters": [{"id": {"handle": i}, "name": n, "agent_id": {"handle": 7}} for n, i in ids.items()],
            "kernel_symbols": [{"kernel_id": int(first["Kernel_ID"]), "formatted_kernel_name": first["Kernel_Name"]}],
            "callback_records": {"counter_collection": records}, "buffer_records": {"kernel_dispatch": dispatch}}
    path.write_text(json.dumps({"rocprofiler-sdk-tool": [tool]}, indent=1))


def write_rocpd(path: Path, pass_index: int) -> None:
    """A rocpd database of one recorded pass: the tables a counters_collection view reads (rocpd's names,
    fewer columns), per-instance counters as one pmc event per instance, and the view summing them."""
    p = recorded_passes()[pass_index]
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, type TEXT, absolute_index INTEGER, type_index INTEGER,
            name TEXT, product_name TEXT, model_name TEXT);
        CREATE TABLE rocpd_info_kernel_symbol (id INTEGER PRIMARY KEY, display_name TEXT);
        CREATE TABLE rocpd_info_pmc (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE rocpd_kernel_dispatch (id INTEGER PRIMARY KEY, pid INTEGER, agent_id INTEGER, kernel_id INTEGER,
            dispatch_id INTEGER, queue_id INTEGER, start BIGINT, "end" BIGINT, workgroup_size_x INTEGER,
            workgroup_size_y INTEGER, workgroup_size_z INTEGER, grid_size_x INTEGER, grid_size_y INTEGER,
            grid_size_z INTEGER, event_id INTEGER);
        CREATE TABLE rocpd_pmc_event (id INTEGER PRIMARY KEY, event_id INTEGER, pmc_id INTEGER, value REAL);
        CREATE VIEW counters_collection AS SELECT K.dispatch_id, S.display_name AS kernel_name, K.agent_id, K.pid,
            K.queue_id, K.grid_size_x * K.grid_size_y * K.grid_size_z AS grid_size,
            K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z AS workgroup_size,
            I.name AS counter_name, SUM(E.value) AS value, K.start, K."end"
            FROM rocpd_pmc_event E JOIN rocpd_info_pmc I ON I.id = E.pmc_id
            JOIN rocpd_kernel_dispatch K ON K.event_id = E.event_id
            JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id GROUP BY K.id, I.id;
    """)
    con.execute("INSERT INTO rocpd_info_agent VALUES (1, 'CPU', 0, 0, 'AMD EPYC 9354 32-Core Processor', '', '')")
    con.execute("INSERT INTO rocpd_info_agent VALUES (3, 'GPU', ?, 0, ?, ?, 'aqua_vanjaram')",
                (AGENT, GPU["Name"], GPU["Product_Name"]))
    names = sorted({c.split("[")[0] for c in p["values"]})
    con.executemany("INSERT INTO rocpd_info_pmc VALUES (?, ?)", [(i + 1, n) for i, n in enumerate(names)])
    for d, r in sorted(p["dispatches"].items()):
        con.execute("INSERT INTO rocpd_info_kernel_symbol VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (int(r["Kernel_ID"]), r["Kernel_Name"]))
        con.execute("INSERT INTO rocpd_kernel_dispatch VALUES (?, 3554, 3, ?, ?, 1, ?, ?, ?, 1, 1, ?, 1, 1, ?)",
                    (d, int(r["Kernel_ID"]), d, int(r["Start_Timestamp"]), int(r["End_Timestamp"]),
                     int(r["Workgroup_Size"]), int(r["Grid_Size"]), 100 + d))
        for c, v in sorted(p["values"].items()):
            if d in v:
                con.execute("INSERT INTO rocpd_pmc_event (event_id, pmc_id, value) VALUES (?, ?, ?)",
                            (100 + d, names.index(c.split("[")[0]) + 1, v[d]))
    con.commit()
    con.close()

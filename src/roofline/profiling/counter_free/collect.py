"""Turn what the counter-free recorders wrote into one kernel table."""

from __future__ import annotations

import json
from dataclasses import replace
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from roofline import kernels
from roofline.errors import InputError, ToolNotFoundError
from roofline.kernels import KernelTable

#: Keys of a recorded row that are not kernel-table columns; kept in ``KernelTable.metrics``.
EXTRA_KEYS = ("overload", "shapes", "dtype", "device_type")
#: ``metrics`` columns naming where each process ran (:func:`roofline.machine.cpu_host.cpu_identity`):
#: host name, CPU model name, CPUID. A table whose rows all ran on this host's CPU is held to its ceilings.
HOST_COLUMNS = ("host", "cpu", "cpuid")


def rows_to_table(rows: Iterable[Mapping[str, Any]], source: str) -> KernelTable:
    """A kernel table (every row ``estimated``) from recorder rows; extra keys go to ``metrics``."""
    rows = list(rows)
    table_rows, extra = [], []
    for i, r in enumerate(rows):
        table_rows.append({k: v for k, v in r.items() if k in kernels.DTYPES} | {"source": source, "launch_id": i})
        extra.append({k: r.get(k) for k in EXTRA_KEYS})
    frame = kernels.from_records(table_rows)
    frame["estimated"] = pd.array([True] * len(frame), dtype="boolean")
    unknown = sorted({r["kernel_name"] for r in rows if r.get("fp32_flops") is None})
    warnings = []
    if unknown:
        warnings.append("counter-free mode has no FLOP formula for " + ", ".join(unknown)
                        + "; their FLOPs are unknown (NaN). Profile with Nsight Compute for measured counts.")
    if rows and all(r.get("time_s") is None for r in rows):  # recorded inside an ncu run: CUPTI is ncu's
        warnings.append("estimate recorded beside the Nsight Compute run: FLOPs from formulas and bytes from tensor "
                        "sizes (an estimate of DRAM traffic); no times (the measured kernels have them)")
    else:
        warnings.append("counter-free mode: times from the PyTorch profiler, FLOPs from formulas and bytes from "
                        "tensor sizes (an estimate of DRAM traffic; L1 and L2 bytes unknown). Every point is estimated.")
    return KernelTable(frame=frame, metrics=pd.DataFrame(extra, index=frame.index),
                       sources=(source,), warnings=tuple(warnings))


def _compiled_note(timed: bool) -> str:
    """What the estimate of a torch.compile'd program is (see Recorder's ignore_compile_internals)."""
    if timed:
        return ("the program uses torch.compile, which runs eagerly while the counter-free mode records: the "
                "operators, times and FLOPs are those of the eager program, not of the compiled kernels")
    return ("the program uses torch.compile: inside compiled regions the estimate sees only the operators the "
            "compiled code calls (matrix products, attention), not the fused Triton kernels, whose FLOPs and "
            "bytes are measured only")


def collect(folder: str | Path) -> KernelTable:
    """Read every ``ops.<pid>.json`` in ``folder`` into one table (process_id tells processes apart).

    Raises :class:`ToolNotFoundError` when a process could not start the recorder
    (no PyTorch in that Python) and nothing was recorded, :class:`InputError` when
    nothing was recorded at all.
    """
    folder = Path(folder)
    files = sorted(folder.glob("ops.*.json"))
    errors = [json.loads(p.read_text())["error"] for p in sorted(folder.glob("error.*.json"))]
    if not files:
        if errors:
            raise ToolNotFoundError(
                f"the counter-free mode could not start inside the program: {errors[0]}",
                hint="it records PyTorch programs: run the program with a Python that has torch installed")
        raise InputError("the counter-free mode recorded no PyTorch operator",
                         path=folder, hint="is the command a Python program that uses PyTorch?")
    tables = []
    for p in files:
        payload = json.loads(p.read_text())
        table = rows_to_table(payload["rows"], source=str(p))
        rank = payload.get("rank")  # torchrun, mpirun, srun: the process's rank (merge's metrics column)
        table.metrics["rank"] = pd.array([rank] * len(table.frame), dtype="Int64")
        where = payload.get("cpu_identity") or {}  # the host and CPU the process ran on (absent: older files)
        for column in HOST_COLUMNS:
            table.metrics[column] = pd.array([where.get(column)] * len(table.frame), dtype="string")
        if payload.get("compiled_frames"):
            table = replace(table, warnings=(*table.warnings, _compiled_note(bool(payload.get("timed", True)))))
        tables.append(table)
    frame = kernels.concat([t.frame for t in tables])
    metrics = pd.concat([t.metrics for t in tables], ignore_index=True)
    warnings = tuple(dict.fromkeys(w for t in tables for w in t.warnings))
    return KernelTable(frame=frame, metrics=metrics, sources=tuple(str(p) for p in files), warnings=warnings)

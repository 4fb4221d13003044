"""Timelines written in a real Nsight Systems export's tables, for tests that need a timeline of kernels
the public exports do not hold (a fake ``nsys`` hands one back; a timeline of a recorded ncu run's kernels).

The tables are made with the exact CREATE statements of the real nsys 2026.2 export
tests/data/nsys/nsysai_mfu_before (PROVENANCE.md there); only the columns the readers use are filled.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).parent / "data" / "nsys" / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"
TABLES = ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "META_DATA_EXPORT")


@dataclass(frozen=True)
class Launch:
    """One kernel launch: its name, grid and block, the CUDA call (start, on thread ``tid`` of process
    ``pid``) and its run on the GPU (``start``..``end``, ns)."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    call_ns: int
    start_ns: int
    end_ns: int
    pid: int = 4242
    tid: int = 4242
    device: int = 0
    stream: int = 7


def write_timeline(path: Path, launches: Sequence[Launch], ranges: Sequence[tuple[int, int, int, str]] = ()) -> Path:
    """An export at ``path`` holding ``launches`` and push/pop NVTX ``ranges`` (start, end, tid, text) of process 4242."""
    template = sqlite3.connect(f"file:{TEMPLATE}?mode=ro", uri=True)
    creates = dict(template.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    template.close()
    db = sqlite3.connect(path)
    for table in TABLES:
        db.execute(creates[table])
    db.execute("INSERT INTO META_DATA_EXPORT (name, value) VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210')")
    names = sorted({x.name for x in launches})
    db.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)", list(enumerate(names)))
    for corr, x in enumerate(launches, start=1):
        name = names.index(x.name)
        db.execute('INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId, correlationId, '
                   "globalPid, demangledName, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, "
                   "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, "
                   "tensorSizeMinusOneElements) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 32, 0, 0, 0, 0, 1, 0)",
                   (x.start_ns, x.end_ns, x.device, x.stream, corr, x.pid << 24, name, name, *x.grid, *x.block))
        db.execute('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, '
                   "returnValue) VALUES (?, ?, 0, ?, ?, 0, 0)", (x.call_ns, x.call_ns + 1_500, (x.pid << 24) + x.tid, corr))
    db.executemany('INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, domainId, text) VALUES (?, ?, 59, ?, 0, ?)',
                   [(s, e, (4242 << 24) + tid, text) for s, e, tid, text in ranges])
    db.commit()
    db.close()
    return path

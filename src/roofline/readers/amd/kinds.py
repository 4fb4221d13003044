"""What an AMD tool wrote, told cheaply: a path's kind by its name and first bytes, with no reader loaded.

Every input of every analysis is asked (:mod:`roofline.readers.dispatch`), so this module holds only
what telling needs (the standard library; ``sqlite3`` when a SQLite file is met): an Omniperf /
rocprof-compute workload by its file names (:func:`is_workload`), rocprofv3's and rocprof v1's outputs
by their header or magic (:func:`file_kind`), a rocprofv3 folder by its files (:func:`folder_files`).
The readers (:mod:`~roofline.readers.amd.omniperf`, :mod:`~roofline.readers.amd.rocprof_outputs`) load
when such an input is read.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterable
from pathlib import Path

#: The kind :func:`rocprof_kind` gives the AMD dispatch seam (:mod:`roofline.readers.amd.detect`).
KIND = "rocprof"
SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"
#: The file names of a rocprofv3 output folder (``PID_`` or ``NAME_`` before them).
COUNTER_FILE, TRACE_FILE, AGENT_FILE = "counter_collection.csv", "kernel_trace.csv", "agent_info.csv"
JSON_SUFFIX, DB_SUFFIXES = "results.json", ("results.db", ".rpd")
#: How deep a folder is searched for rocprofv3's files (DIR/pmc_N/HOST/PID_x.csv).
MAX_DEPTH = 4
#: The files that make a folder (or name a file of) an Omniperf / rocprof-compute workload.
WORKLOAD_FILES = ("pmc_perf.csv", "pmc_perf.csv.gz")

#: The files of a workload folder that name it (any of them given is the folder).
FILE_NAMES = (*WORKLOAD_FILES, "sysinfo.csv", "timestamps.csv", "pmc_dispatch_info.csv", "roofline.csv")


def is_workload(path: Path, *, is_dir: bool | None = None) -> bool:
    """True when ``path`` is an Omniperf/rocprof-compute workload folder or one of its files.
    ``is_dir``: whether ``path`` is a folder, when the caller knows (None: looked up)."""
    if is_dir is None:
        is_dir = path.is_dir()
    if path.name not in FILE_NAMES and not is_dir:  # (every other file: no look at its folder)
        return False
    folder = path if is_dir else path.parent
    return (folder / "sysinfo.csv").is_file() and any((folder / f).is_file() for f in WORKLOAD_FILES)


def has_roofline_csv(sources: Iterable[str]) -> bool:
    """True when a source of a table is a workload folder holding a roofline.csv (its measured peaks)."""
    return any((Path(s) / "roofline.csv").is_file() for s in sources)


def is_v1(header: Iterable[str]) -> bool:
    """True for the header of rocprof v1's ``results.csv``."""
    names = set(header)
    return "KernelName" in names and ("Index" in names or "gpu-id" in names)


def is_rocpd(path: Path) -> bool:
    """True for a SQLite database with rocpd's tables (rocprofv3's ``--output-format rocpd``)."""
    import sqlite3  # (only when a SQLite file is met)

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    except sqlite3.Error:
        return False
    return any(str(n).startswith("rocpd_") for n in names)


def _head(path: Path, size: int = 4096) -> bytes:
    with path.open("rb") as fh:
        head = fh.read(size)
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as fh:
                head = fh.read(size)
        except (OSError, EOFError):
            return b""
    return head


#: Column names one of which the header of every rocprof text output holds (see :func:`file_kind`).
_HEADER_MARKS = (b"Counter_Name", b"KernelName", b"Kernel_Name", b"Agent_Type")


def file_kind(path: Path, head: bytes | None = None) -> str | None:
    """What a file is: ``"counters"``, ``"trace"``, ``"agents"``, ``"json"``, ``"rocpd"``, ``"v1"``, or None.
    ``head``: its first bytes when the caller read them already (not gzip-compressed)."""
    if head is None or head.startswith(GZIP_MAGIC):
        try:
            head = _head(path)
        except OSError:
            return None
    if head.startswith(SQLITE_MAGIC):
        return "rocpd" if is_rocpd(path) else None
    if head.lstrip().startswith(b"{"):
        return "json" if b'"rocprofiler-sdk-tool"' in head else None
    if b"\x00" in head:  # binary (Parquet, a report): no rocprof text output
        return None
    first = head.split(b"\n", 1)[0]
    if not any(mark in first for mark in _HEADER_MARKS):  # (an ncu export, any other CSV: no parse)
        return None
    line = first.decode("utf-8", "replace").strip()
    try:
        header = {h.strip() for h in next(csv.reader([line]), [])}
    except csv.Error:  # not a CSV header line
        return None
    if {"Counter_Name", "Counter_Value"} <= header:
        return "counters"
    if is_v1(header):
        return "v1"
    if {"Kernel_Name", "Start_Timestamp"} <= header and ("Kind" in header or path.name.endswith(TRACE_FILE)):
        return "trace"
    if "Agent_Type" in header and path.name.endswith(AGENT_FILE):
        return "agents"
    return None


def _named(name: str) -> str | None:
    """The kind a file in a rocprofv3 folder has by its name, or None."""
    if name.endswith((COUNTER_FILE, COUNTER_FILE + ".gz")):
        return "counters"
    if name.endswith(TRACE_FILE):
        return "trace"
    if name.endswith(AGENT_FILE):
        return "agents"
    if name.endswith(JSON_SUFFIX):
        return "json"
    if name.endswith(DB_SUFFIXES):
        return "rocpd"
    return "v1" if name.endswith(".csv") else None


def folder_files(folder: Path) -> list[tuple[Path, str]]:
    """rocprofv3's files under ``folder`` (by name, then checked by content; at most :data:`MAX_DEPTH`
    levels down), sorted."""
    found: list[tuple[Path, str]] = []
    level = [folder]
    for _ in range(MAX_DEPTH + 1):
        deeper = []
        for d in level:
            try:
                entries = sorted(d.iterdir())
            except OSError:
                continue
            for e in entries:
                if e.is_dir():
                    deeper.append(e)
                elif (kind := _named(e.name)) is not None and (kind == "agents" or file_kind(e) == kind):
                    found.append((e, kind))
        level = deeper
    return sorted(found)


def rocprof_kind(path: Path, head: bytes | None = None) -> str | None:
    """:data:`KIND` for a rocprofv3 output folder or file, or rocprof v1's results.csv; None otherwise.
    ``head``: a file's first bytes when the caller read them already."""
    try:
        if path.is_dir():
            return KIND if any(k != "agents" for _, k in folder_files(path)) else None
        return KIND if path.is_file() and file_kind(path, head) is not None else None
    except OSError:
        return None



"""The tables of an Nsight Systems SQLite export, as nsys 2020.3 to 2026.2 write them.

Checked on six public exports (tests/data/nsys, PROVENANCE.md there), one per version:

- **Metadata**: ``META_DATA_EXPORT`` (2024.5 on) or ``EXPORT_META_DATA`` (2022.2), both ``(name,
  value)`` with ``EXPORT_PRODUCT_VERSION``; 2020.3 has neither.
- **Kernels**: ``CUPTI_ACTIVITY_KIND_KERNEL``, times in ns, names as ids into ``StringIds``
  (``demangledName``, ``shortName``; ``mangledName`` from 2022 on); later versions add columns
  (``greenContextId``, ``graphId``, clusters), which are not read.
- **Who launched it**: the CUDA runtime/driver call with the kernel's ``correlationId`` in
  ``CUPTI_ACTIVITY_KIND_RUNTIME``, within the same process (ids repeat between processes). 2022.2
  also writes call-stack rows (``eventClass`` 67) that repeat a call's id: only runtime (0) and
  driver (1) rows are read.
- **Process ids**: ``globalPid`` / ``globalTid`` hold the OS process id in bits 24-47.
- **NVTX**: ``NVTX_EVENTS`` (absent when nothing was annotated), push/pop ranges (``eventType``
  59) per thread and start/end ranges (60) per process, the text in ``text`` or, through
  ``textId``, in ``StringIds``, row by row (one file has both); domains named by their creation
  rows (75), the default domain id 0 (a NULL ``domainId`` is read as the default domain too).

Columns of a million rows are read as one text each (``group_concat``), parsed by NumPy
(:meth:`Export.integers`): fetching them row by row made millions of Python objects.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.errors import InputError

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
NVTX = "NVTX_EVENTS"
#: NVTX event types (ENUM_NSYS_EVENT_TYPE): a push/pop range, a start/end range, a domain's creation.
PUSH_POP, START_END, DOMAIN_CREATE = 59, 60, 75
#: Runtime-table event classes of API calls (2022.2 adds call-stack rows, class 67).
API_CLASSES = (0, 1)
#: How :meth:`Export.integers` reads a NULL (nsys leaves ids such as ``globalTid`` NULL at times).
NULL_INT = -(2**63)
#: Between texts read at once (:meth:`Export.integers`); a text holding it is read row by row.
TEXT_SEPARATOR = "\x1e"


def process_ids(global_ids: np.ndarray) -> np.ndarray:
    """The OS process ids in nsys's ``globalPid``/``globalTid`` (bits 24-47)."""
    return (np.asarray(global_ids, dtype=np.int64) >> 24) & 0xFFFFFF


def _no_calls() -> pd.DataFrame:
    return pd.DataFrame({c: pd.array([], dtype="Int64") for c in ("correlationId", "tid", "api_start", "api_end", "pid")})


class Export:
    """An open, read-only Nsight Systems SQLite export. ``source``: the file its errors name (the user's report or
    capture, when ``path`` is its export in a temporary folder), ``path`` itself by default."""

    def __init__(self, path: Path, source: Path | None = None):
        self.path = source or path
        try:
            self.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            self.tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a readable SQLite database ({exc})", path=self.path,
                             hint="export the report again: nsys export --type sqlite REPORT.nsys-rep") from None
        if KERNELS not in self.tables:
            what = "an Nsight Systems export with no CUDA kernels" if "StringIds" in self.tables \
                else "a SQLite database, not an Nsight Systems export"
            raise InputError(f"{what} (no {KERNELS} table)", path=self.path,
                             hint="profile with CUDA tracing on (nsys profile -t cuda,nvtx ...) and export with "
                                  "nsys export --type sqlite")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Export:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.db.execute(f'PRAGMA table_info("{table}")')]

    def query(self, sql: str) -> pd.DataFrame:
        try:
            return pd.read_sql_query(sql, self.db)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            raise InputError(f"the export cannot be read ({exc})", path=self.path,
                             hint="export the report again with nsys export --type sqlite") from None

    def version(self) -> str | None:
        """The nsys version that exported the file (None before 2022, whose exports do not say)."""
        for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
            if table in self.tables:
                row = self.db.execute(f"SELECT value FROM {table} WHERE name = 'EXPORT_PRODUCT_VERSION'").fetchone()
                if row:
                    return str(row[0])
        return None

    def integers(self, columns: Sequence[str], source: str,
                 text: str | None = None) -> tuple[list[np.ndarray], list[str]]:
        """Integer columns of one query (``SELECT columns source``) as int64 arrays, NULL as
        :data:`NULL_INT`, and the column ``text`` (NULL as ""; none when not asked for), rows in the
        order SQLite reads them (the same for every column).

        Each column comes back as one text (``group_concat``) that NumPy parses or Python splits: a
        million rows are a few strings, not millions of Python objects (5x faster than fetching rows)."""
        asked = [f"group_concat(ifnull({c}, {NULL_INT}))" for c in columns]
        if text is not None:
            asked.append(f"group_concat(ifnull({text}, ''), char({ord(TEXT_SEPARATOR)}))")
        try:
            found = self.db.execute(f"SELECT count(*), {', '.join(asked)} {source}").fetchone()
        except sqlite3.DatabaseError:  # e.g. a column longer than SQLite's longest text (1e9 bytes by default)
            return self._rows(columns, source, text)
        n = int(found[0])
        try:
            with warnings.catch_warnings():  # numpy warns, and stops, at a value that is not an integer
                warnings.simplefilter("error", DeprecationWarning)
                out = [np.fromstring(values, dtype=np.int64, sep=",") if n else np.zeros(0, dtype=np.int64)
                       for values in found[1:len(columns) + 1]]
        except (DeprecationWarning, ValueError):
            out = []
        if len(out) != len(columns) or any(len(a) != n for a in out):
            raise InputError("the export holds non-integer values where nsys writes integers", path=self.path,
                             hint="export the report again with nsys export --type sqlite")
        texts: list[str] = []
        if text is not None and n:
            texts = str(found[-1]).split(TEXT_SEPARATOR)
            if len(texts) != n:  # a text holding the separator: row by row
                texts = [str(t) for (t,) in self.db.execute(f"SELECT ifnull({text}, '') {source}")]
        return out, texts

    def _rows(self, columns: Sequence[str], source: str, text: str | None) -> tuple[list[np.ndarray], list[str]]:
        """:meth:`integers` fetched row by row (slower, for what one text per column cannot hold)."""
        asked = [f"ifnull({c}, {NULL_INT})" for c in columns] + ([f"ifnull({text}, '')"] if text is not None else [])
        try:
            rows = self.db.execute(f"SELECT {', '.join(asked)} {source}").fetchall()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"the export cannot be read ({exc})", path=self.path,
                             hint="export the report again with nsys export --type sqlite") from None
        ints = [np.fromiter((r[i] for r in rows), dtype=np.int64, count=len(rows)) for i in range(len(columns))]
        return ints, [str(r[-1]) for r in rows] if text is not None else []

    def kernels(self) -> pd.DataFrame:
        """Every kernel launch in start order: ``start``, ``end`` (ns), ``device``, ``stream``, ``pid``,
        ``grid``/``block`` (x, y, z columns), ``name_id`` (the demangled name's id in ``StringIds``:
        :meth:`names`), and from the call that launched it (same correlation id and process) ``tid``
        (nsys's ``globalTid``), ``api_start`` and ``api_end`` (ns), <NA> where the call is not in the file (a
        capture that began after it)."""
        names = ["start", "end", "device", "stream", "correlationId", "globalPid", "gridX", "gridY", "gridZ",
                 "blockX", "blockY", "blockZ", "name_id"]
        sql = ['start', '"end"', "deviceId", "streamId", "correlationId", "globalPid", "gridX", "gridY", "gridZ",
               "blockX", "blockY", "blockZ", "demangledName", "rowid"]
        (*values, rowid), _ = self.integers(sql, f"FROM {KERNELS}")
        order = np.lexsort((rowid, values[0]))  # ORDER BY start, rowid
        frame = pd.DataFrame({name: v[order] for name, v in zip(names, values)})
        frame["pid"] = process_ids(frame["globalPid"].to_numpy())
        tid = np.zeros(len(frame), dtype=np.int64)
        api_start = np.zeros(len(frame), dtype=np.int64)
        api_end = np.zeros(len(frame), dtype=np.int64)
        found = np.zeros(len(frame), dtype=bool)
        tid_known = found
        if RUNTIME in self.tables and not frame.empty:
            only_api = f" AND eventClass IN {API_CLASSES}" if "eventClass" in self.columns(RUNTIME) else ""
            (call_id, call_tid, call_start, call_end), _ = self.integers(
                ["correlationId", "globalTid", "start", '"end"'],
                f"FROM {RUNTIME} WHERE correlationId IN (SELECT correlationId FROM {KERNELS}){only_api}")
            # the first call per (correlation id, process): ids repeat between processes
            ids = pd.factorize(np.concatenate([frame["correlationId"].to_numpy(), call_id]))[0].astype(np.int64)
            keys = ids * (1 << 24) + np.concatenate([frame["pid"].to_numpy(), process_ids(call_tid)])
            kernel_keys, call_keys = keys[: len(frame)], keys[len(frame):]
            distinct, first = np.unique(call_keys, return_index=True)
            at = np.searchsorted(distinct, kernel_keys)
            found = at < len(distinct)
            found[found] = distinct[at[found]] == kernel_keys[found]
            call = first[at[found]]
            tid[found], api_start[found], api_end[found] = call_tid[call], call_start[call], call_end[call]
            tid_known = found & (tid != NULL_INT)
        frame["tid"] = pd.arrays.IntegerArray(tid, ~tid_known)  # exact ids: <NA>, not NaN
        frame["api_start"] = pd.arrays.IntegerArray(api_start, ~found)
        frame["api_end"] = pd.arrays.IntegerArray(api_end, ~found)
        return frame

    def _calls_of(self, table: str) -> pd.DataFrame:
        """The runtime/driver calls (``correlationId``, ``pid``, ``tid``, ``api_start``, ``api_end``) that
        issued the rows of ``table``, one per correlation id and process."""
        if RUNTIME not in self.tables:
            return _no_calls()
        only_api = f" AND eventClass IN {API_CLASSES}" if "eventClass" in self.columns(RUNTIME) else ""
        calls = self.query(f'SELECT correlationId, globalTid AS tid, start AS api_start, "end" AS api_end FROM {RUNTIME} '
                           f"WHERE correlationId IN (SELECT correlationId FROM {table}){only_api}")
        calls["pid"] = process_ids(calls["tid"].to_numpy())
        return calls.drop_duplicates(["correlationId", "pid"]).astype("Int64")  # exact ids: <NA>, not NaN

    def copies(self) -> pd.DataFrame | None:
        """Every memcpy in start order: ``start``, ``end`` (ns), ``device``, ``stream``, ``pid``, ``bytes``,
        ``copy_kind`` (CUPTI's memcpy kind: 1 HtoD, 2 DtoH, 8 DtoD, 10 peer...), ``src_device`` and
        ``dst_device`` (<NA> where the export has no such column), and the issuing call's ``api_start`` and
        ``api_end`` (<NA> where it is not in the file). None when the export has no memcpy table."""
        return self._gpu_rows(MEMCPY, "m.bytes, m.copyKind AS copy_kind", ("srcDeviceId", "dstDeviceId"))

    def memsets(self) -> pd.DataFrame | None:
        """Every memset as :meth:`copies` gives memcpys (without the kind and devices); None when the
        export has no memset table."""
        return self._gpu_rows(MEMSET, "m.bytes", ())

    def _gpu_rows(self, table: str, extra: str, optional: tuple[str, ...]) -> pd.DataFrame | None:
        if table not in self.tables:
            return None
        have = set(self.columns(table))
        more = "".join(f", m.{c}" if c in have else f", NULL AS {c}" for c in optional)
        rows = self.query(f'SELECT m.start, m."end", m.deviceId AS device, m.streamId AS stream, m.correlationId, '
                          f"m.globalPid, {extra}{more} FROM {table} AS m ORDER BY m.start, m.rowid")
        rows["pid"] = process_ids(rows["globalPid"].to_numpy())
        found = rows[["correlationId", "pid"]].astype("Int64").merge(self._calls_of(table), on=["correlationId", "pid"],
                                                                     how="left")
        rows["api_start"] = found["api_start"].array
        rows["api_end"] = found["api_end"].array
        return rows.rename(columns={"srcDeviceId": "src_device", "dstDeviceId": "dst_device"})

    def host_calls(self, named: Callable[[str], bool]) -> pd.DataFrame:
        """The runtime and driver calls whose name (``StringIds`` through ``nameId``, as nsys writes it,
        e.g. ``cudaStreamSynchronize_v3020``) ``named`` accepts: ``start``, ``end`` (ns), ``tid``, ``pid``,
        ``name``. Empty when the export has no runtime table."""
        empty = pd.DataFrame({"start": [], "end": [], "tid": [], "pid": [], "name": []})
        if RUNTIME not in self.tables or "nameId" not in self.columns(RUNTIME):
            return empty
        ids = [int(i) for i, v in self.db.execute(f"SELECT id, value FROM StringIds WHERE id IN "
                                                  f"(SELECT DISTINCT nameId FROM {RUNTIME})") if named(str(v))]
        if not ids:
            return empty
        only_api = f" AND r.eventClass IN {API_CLASSES}" if "eventClass" in self.columns(RUNTIME) else ""
        calls = self.query(f'SELECT r.start, r."end", r.globalTid AS tid, s.value AS name FROM {RUNTIME} AS r '
                           f"JOIN StringIds AS s ON s.id = r.nameId WHERE r.nameId IN ({', '.join(map(str, ids))})"
                           f"{only_api} ORDER BY r.start")
        calls["pid"] = process_ids(calls["tid"].to_numpy())
        return calls

    def names(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """The kernels' demangled names by their ``StringIds`` id (each distinct name once), or those of ``ids``."""
        wanted = f"SELECT DISTINCT demangledName FROM {KERNELS}" if ids is None else ", ".join(str(int(i)) for i in ids)
        rows = self.db.execute(f"SELECT id, value FROM StringIds WHERE id IN ({wanted})")
        return {int(i): str(v) for i, v in rows}

    def nvtx_ranges(self) -> pd.DataFrame:
        """The NVTX push/pop and start/end ranges: ``kind`` (59 or 60), ``start``, ``end`` (ns), ``tid``,
        ``text``, ``domain`` (its name; missing for the default domain), ``pid``. Empty when the file has
        no NVTX events. Ranges left open at the end of the capture are not read. (:meth:`nvtx` as a frame.)"""
        ranges = self.nvtx()
        if not len(ranges):
            return pd.DataFrame({"kind": [], "start": [], "end": [], "tid": [], "pid": [], "domain": [], "text": []})
        frame = pd.DataFrame({"kind": ranges.kind, "start": ranges.start, "end": ranges.end, "tid": ranges.tid,
                              "text": ranges.text})
        frame["domain"] = [ranges.domains[d] for d in ranges.domain_id.tolist()]
        frame["pid"] = ranges.pid
        return frame

    def nvtx(self) -> NvtxRanges:
        """The NVTX push/pop and start/end ranges as arrays (:class:`NvtxRanges`; none when the file has
        no NVTX events). Ranges left open at the end of the capture are not read."""
        if NVTX not in self.tables:
            return NvtxRanges.none()
        have = set(self.columns(NVTX))
        text = "COALESCE(n.text, s.value)" if "textId" in have else "n.text"
        join = "LEFT JOIN StringIds AS s ON s.id = n.textId" if "textId" in have else ""
        domain = "n.domainId" if "domainId" in have else "0"
        source = f'FROM {NVTX} AS n {join} WHERE n.eventType IN ({PUSH_POP}, {START_END}) AND n."end" IS NOT NULL'
        (kind, start, end, tid, domain_id), texts = self.integers(
            ["n.eventType", "n.start", 'n."end"', "n.globalTid", domain], source, text=text)
        if not len(kind):
            return NvtxRanges.none()
        names = self.query(f"SELECT {domain} AS domain_id, {text} AS text FROM {NVTX} AS n {join} "
                           f"WHERE n.eventType = {DOMAIN_CREATE}")
        named = dict(zip(names["domain_id"], names["text"]))
        domains = {int(d): None if d == 0 or d == NULL_INT else named.get(d) or f"domain {d}"
                   for d in np.unique(domain_id).tolist()}
        return NvtxRanges(kind=kind, start=start, end=end, tid=tid, pid=process_ids(tid), domain_id=domain_id,
                          domains=domains, text=texts)


@dataclass(frozen=True)
class NvtxRanges:
    """NVTX ranges of an export, one row per range: ``kind`` (59 push/pop or 60 start/end), ``start``,
    ``end`` (ns), ``tid`` (nsys's ``globalTid``), ``pid``, ``domain_id`` and ``domains`` (each id's
    name; None for the default domain), ``text``."""

    kind: np.ndarray
    start: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    pid: np.ndarray
    domain_id: np.ndarray
    domains: dict[int, str | None]
    text: list[str]

    @staticmethod
    def none() -> NvtxRanges:
        empty = np.zeros(0, dtype=np.int64)
        return NvtxRanges(empty, empty, empty, empty, empty, empty, {}, [])

    def __len__(self) -> int:
        return len(self.kind)

    def frame(self, kind: int) -> pd.DataFrame:
        """The ranges of one kind as a frame: ``kind``, ``start``, ``end``, ``tid``, ``pid``, ``domain``, ``text``."""
        rows = np.flatnonzero(self.kind == kind)
        return pd.DataFrame({"kind": self.kind[rows], "start": self.start[rows], "end": self.end[rows],
                             "tid": self.tid[rows], "pid": self.pid[rows],
                             "domain": pd.Series([self.domains[d] for d in self.domain_id[rows].tolist()],
                                                 dtype=object),
                             "text": pd.Series([self.text[i] for i in rows.tolist()], dtype=object)})

"""`read_profile`: any supported profiler output(s) -> one validated :class:`KernelTable`.

The format is detected by content (``.ncu-rep`` and ``.nsys-rep`` by their names, since they are
binary containers): Nsight Compute CSV (raw or details page), an Nsight Compute report, an Nsight
Systems timeline (its SQLite export, by the SQLite magic, or a ``.nsys-rep`` exported through
``nsys``: :mod:`roofline.readers.nsys`), or one of our kernel-table files (``*.kernels.json``, or
Parquet: the ``PAR1`` magic, then the footer's ``roofline.schema`` key,
:mod:`roofline.readers.kernel_parquet`), or an AMD tool's output (an Omniperf / rocprof-compute
workload folder or a file of one: :mod:`roofline.readers.amd`).
``-`` is standard input; pipes (``<(cmd)``, ``/dev/stdin``) are read once into memory
(:mod:`roofline.readers.stream`); a folder stands for the profiles in it
(:func:`profile_files`), skipping, with one warning, files in it that are not readable profiles.
Several files of one run are merged by launch, files of separate runs are kept apart
as runs (:mod:`roofline.readers.ncu.combine`); each run is counted with the formula table
(:mod:`roofline.counting`).
"""

from __future__ import annotations

import gzip
import os
import stat
from collections.abc import Sequence
from dataclasses import replace
from os import PathLike, fspath
from pathlib import Path
from typing import NamedTuple

from roofline.errors import InputError, MissingMetricsError
from roofline.kernels import FP16_CONVENTIONS, KernelTable, recoded_text, text_codes
from roofline.readers.amd.detect import AMD_KINDS, amd_folder, amd_kind, read_amd
from roofline.readers.ncu.count import build_table
from roofline.readers.ncu.ahead import ReadAhead
from roofline.readers.ncu.combine import merge_profiles, run_labels, split_runs
from roofline.readers.ncu.csv_export import read_ncu_csv
from roofline.readers.ncu.layout import WHOLE_FILE_BYTES
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.readers.nsys import REPORT_SUFFIXES as TIMELINE_REPORTS
from roofline.readers.stream import InMemory, is_stdio, is_stream, read_stream

REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")
#: Files taken from a folder given as a profile.
PROFILE_PATTERNS = ("*.csv", "*.csv.gz", "*.ncu-rep", "*.ncu-repz", "out.*", "*.kernels.json", "*.parquet",
                    "*.sqlite", "*.nsys-rep", "*.qdrep", "*.qdstrm")
#: The first bytes of a gzip file (a compressed CSV export, ``x.csv.gz``).
GZIP_MAGIC = b"\x1f\x8b"
#: The first bytes of a Parquet file.
PARQUET_MAGIC = b"PAR1"
#: The first bytes of a SQLite database (an Nsight Systems export).
SQLITE_MAGIC = b"SQLite format 3\x00"
#: How many skipped files a warning names.
MAX_NAMED = 5

Source = Path | InMemory


def profile_files(path: str | PathLike[str]) -> list[Path]:
    """The profile files an argument names: the file itself, or the profiles inside a folder
    (:data:`PROFILE_PATTERNS`, sorted). A folder without any is an :class:`InputError`."""
    p = Path(fspath(path))
    if not p.exists():
        raise InputError("no such file or folder", path=p)
    if not p.is_dir():
        return [p]
    files = sorted({f for pattern in PROFILE_PATTERNS for f in p.glob(pattern) if f.is_file()})
    # a capture beside its own report (imported by hand after nsys could not) is the same timeline
    files = [f for f in files if not (f.suffix == ".qdstrm" and f.with_suffix(".nsys-rep") in files)]
    if not files:
        raise InputError("the folder holds no profiles", path=p,
                         hint="give ncu CSV exports (*.csv), reports (*.ncu-rep), per-metric files (out.*), "
                              "Nsight Systems timelines (*.sqlite, *.nsys-rep) or kernel tables "
                              "(*.kernels.json, *.parquet)")
    return files


def _check_path(p: Path) -> None:
    if not p.exists():
        raise InputError("no such file", path=p)
    if p.is_dir():
        raise InputError("is a directory, not a profile", path=p, hint="pass the CSV or .ncu-rep files inside it")
    if p.stat().st_size == 0:
        raise InputError("the file is empty", path=p, hint="re-run ncu; its output may have gone elsewhere")


def _check_memory(src: InMemory) -> None:
    head = src.data[:4096]
    if not head.strip():
        raise InputError("no data (the stream is empty)", path=src.name,
                         hint="check the command that writes it: ncu ... --csv | roofline analyze -")
    if _is_kernel_json_bytes(head) or head.startswith(PARQUET_MAGIC):
        raise InputError("a kernel-table file (.kernels.json or Parquet) cannot be read from a pipe or standard input",
                         path=src.name, hint="give the file by its name")
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("binary data on a pipe or standard input (a .ncu-rep report?)", path=src.name,
                         hint="give a .ncu-rep report by its file name; a pipe can carry ncu CSV (ncu --import R --csv)")


def _gunzipped(p: Path) -> bytes:
    try:
        with gzip.open(p, "rb") as fh:
            return fh.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError; a cut-off file ends in EOFError
        raise InputError(f"not a readable gzip file ({exc or 'it ends too soon'})", path=p,
                         hint="the file may be truncated: copy it again (gunzip -t tests it)") from None


def read_one(path: str | PathLike[str] | InMemory) -> RawProfile:
    """Read one profiler output (format detected) into a :class:`RawProfile`.

    ``path`` may be an :class:`~roofline.readers.stream.InMemory` stream already read."""
    return _read_profiler_output(path, kind_known=False)


class Head(NamedTuple):
    """A regular file's first bytes, read once for every look at them (:func:`head_of`)."""

    data: bytes
    whole: bool  # ``data`` is the whole file (a small one: :data:`WHOLE_FILE_BYTES`)


#: Bytes of a larger file's head: enough for every format's magic and a kernel-table file's key.
HEAD_BYTES = 4096


def head_of(path: Source) -> Head | None:
    """``path``'s bytes when it is a regular file: whole when it is small (the CSV reader reads such a
    file whole: :data:`~roofline.readers.ncu.layout.WHOLE_FILE_BYTES`), else its first
    :data:`HEAD_BYTES`; None for anything else (a folder, a stream, a file that cannot be opened: the
    readers say why). One open and one ``fstat`` a file, not one each for its kind, its compression
    and its CSV layout (0.4 ms of the 12-file DeepCAM set's 17 ms)."""
    if isinstance(path, InMemory):
        return None
    try:
        with open(fspath(path), "rb") as fh:
            status = os.fstat(fh.fileno())
            if not stat.S_ISREG(status.st_mode):
                return None
            whole = status.st_size <= WHOLE_FILE_BYTES
            return Head(fh.read() if whole else fh.read(HEAD_BYTES), whole)
    except OSError:
        return None


def _read_profiler_output(path: str | PathLike[str] | InMemory, *, kind_known: bool,
                          head: Head | None = None, ahead: ReadAhead | None = None) -> RawProfile:
    """:func:`read_one`; ``kind_known``: the caller has found that ``path`` is no kernel table or timeline
    (:func:`_table_kind`), so its head is not read again for that; ``head``: its bytes read already
    (:func:`head_of`); ``ahead``: a parse started before, taken when it is this file's
    (:func:`~roofline.readers.ncu.csv_export.read_ncu_csv`)."""
    if isinstance(path, InMemory):
        _check_memory(path)
        return read_ncu_csv(Path(path.name), data=path.data)
    p = Path(fspath(path))
    if head is None or (head.whole and not head.data):  # (an empty file, said as _check_path says it)
        _check_path(p)
        with p.open("rb") as fh:
            compressed = fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    else:
        compressed = head.data.startswith(GZIP_MAGIC)
    if compressed:  # a gzip-compressed CSV: decompressed into memory, as a pipe's bytes are
        return read_ncu_csv(p, data=_gunzipped(p))
    if p.name.lower().endswith(REPORT_SUFFIXES):
        from roofline.readers.ncu.rep import read_ncu_rep

        return read_ncu_rep(p)
    if not kind_known and _table_kind(p) is not None:
        raise InputError("a kernel-table file or a timeline, not an Nsight Compute output", path=p,
                         hint="read it with roofline.readers.read_profile (roofline analyze)")
    return read_ncu_csv(p, data=head.data if head is not None and head.whole else None, ahead=ahead)


def read_profile(paths: Sequence[str | PathLike[str]] | str | PathLike[str], *, fp16: str = "ncu",
                 ahead: ReadAhead | None = None) -> KernelTable:
    """Read one or more profiler outputs into one kernel table (see :func:`roofline.readers.read_profile`).

    Profiler files of one run are merged by launch; separate runs (:func:`~roofline.readers.ncu.combine.split_runs`),
    and each kernel-table file, are stacked side by side, each row's ``run`` column naming its run
    (:func:`~roofline.readers.ncu.combine.run_labels`). A table of one run has ``run`` <NA>.
    ``ahead``: the parse of one of the files, started before (:mod:`roofline.readers.ncu.ahead`).
    """
    if fp16 not in FP16_CONVENTIONS:
        raise InputError(f"unknown FP16 convention {fp16!r}; choose one of {', '.join(FP16_CONVENTIONS)}")
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise InputError("no profile given")
    sources, folders = _sources(paths)
    heads = {p: head_of(p) for p in sources}  # each file's head read once, for its kind and its reader
    kinds = {p: _table_kind(p, heads[p]) for p in sources}
    timelines = [p for p in sources if kinds[p] == "nsys"]
    if timelines and len(timelines) < len(sources):  # a timeline and the counts of the same program
        return _joined(timelines, [p for p in sources if p not in timelines], fp16=fp16)
    # (files of the run, its table), raw profiler runs first, then our kernel-table files, as before.
    units: list[tuple[list[str], KernelTable]] = []
    raw = [p for p in sources if kinds[p] is None]
    tables = [p for p in sources if kinds[p] is not None]
    skipped: list[str] = []
    empty: list[str] = []  # runs with nothing for a roofline, beside others that have it
    if raw:
        profiles = []
        for p in raw:
            try:
                profiles.append(_read_profiler_output(p, kind_known=True, head=heads[p], ahead=ahead))
            except InputError as exc:
                if p not in folders:
                    raise
                skipped.append(f"{Path(fspath(p)).name} ({exc.message})")
        runs = split_runs(profiles)
        for run in runs:
            run_sources = [p.source for p in run]
            try:
                units.append((run_sources, build_table(merge_profiles(run), fp16=fp16, sources=run_sources)))
            except MissingMetricsError as exc:
                if len(runs) == 1 and not tables:
                    raise
                empty.append(f"{', '.join(Path(s).name for s in run_sources)}: {exc.message}")
    for p in tables:
        try:
            units.append(([fspath(p)], _read_table_file(p, kinds[p])))
        except InputError as exc:
            if p not in folders:
                raise
            skipped.append(f"{Path(fspath(p)).name} ({exc.message})")
    if not units and empty:
        raise MissingMetricsError("none of the runs has the metrics a roofline needs (time, FLOP or byte counters): "
                                  + "; ".join(empty[:MAX_NAMED]))
    if not units:
        raise InputError("none of the files in the folder is a readable profile", path=_folder_label(folders),
                         hint="; ".join(skipped[:MAX_NAMED]))
    if len(units) == 1:
        table = units[0][1]
    else:
        labels = run_labels([files for files, _ in units])
        table = _stack([_with_run(t, label) for (_, t), label in zip(units, labels)])
    if skipped:
        more = f" and {len(skipped) - MAX_NAMED} more" if len(skipped) > MAX_NAMED else ""
        note = (f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} in {_folder_label(folders)} "
                f"that {'are' if len(skipped) != 1 else 'is'} not a readable profile: "
                + "; ".join(skipped[:MAX_NAMED]) + more)
        table = replace(table, warnings=(note, *table.warnings))
    if empty:
        table = replace(table, warnings=(*(f"left out {e} (a run of its own, not merged with the other files)"
                                           for e in empty), *table.warnings))
    return table


def _joined(timelines: list[Source], counting: list[Source], *, fp16: str) -> KernelTable:
    """Timelines' launches with the counts of the other inputs, a profile of the same program
    (:func:`roofline.readers.nsys.join.join_counts`). Several timelines (the ranks of a job, each
    joined with the one counting profile) stand side by side as runs, as timelines alone do, with one
    match rate over all of them."""
    from roofline.readers.nsys.join import join_counts, match_rate
    from roofline.readers.nsys.timeline import read_timeline

    counts = read_profile(counting, fp16=fp16)
    if len(timelines) == 1:
        return join_counts(read_timeline(Path(fspath(timelines[0]))), counts)
    tables = [join_counts(read_timeline(Path(fspath(p))), counts, rate_note=False) for p in timelines]
    labels = run_labels([[fspath(p)] for p in timelines])
    table = _stack([_with_run(t, label) for t, label in zip(tables, labels)])
    rate = match_rate(table)
    assert rate is not None  # every joined table has its match metric
    return replace(table, warnings=(rate.summary(f"{len(timelines)} timelines"),
                                    *dict.fromkeys(table.warnings)))


def _sources(paths: Sequence[str | PathLike[str]]) -> tuple[list[Source], dict[Source, Path]]:
    """Files to read, in order: folders expanded, streams read into memory (standard input once).

    Returns the sources and, for those found in a folder, that folder."""
    out: list[Source] = []
    folders: dict[Source, Path] = {}
    stdin_used = False
    for path in paths:
        if isinstance(path, InMemory):
            out.append(path)
            continue
        mode = _mode(path)  # one stat a path (None: there is none)
        if is_stdio(path) or (mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)):  # a stream
            if is_stdio(path):
                if stdin_used:
                    raise InputError("standard input (-) is given twice", hint="it can be read once only")
                stdin_used = True
            out.append(read_stream(path))
        elif (folder := amd_folder(Path(fspath(path)), is_dir=mode is not None and stat.S_ISDIR(mode))) is not None:
            if folder not in out:  # an AMD output folder, read once
                out.append(folder)
        elif mode is not None and stat.S_ISDIR(mode):
            for f in profile_files(path):
                out.append(f)
                folders[f] = Path(fspath(path))
        else:
            out.append(Path(fspath(path)))
    return out, folders


def _mode(path: str | PathLike[str]) -> int | None:
    """``path``'s file mode (following links), or None when there is nothing there."""
    try:
        return os.stat(fspath(path)).st_mode
    except (OSError, ValueError):
        return None


def _folder_label(folders: dict[Source, Path]) -> str:
    names = list(dict.fromkeys(str(f) for f in folders.values()))
    return names[0] if len(names) == 1 else f"{len(names)} folders ({', '.join(names[:3])})"


def _with_run(table: KernelTable, label: str) -> KernelTable:
    """The table with ``run`` set to ``label``; a kernel-table file that already names its runs
    keeps them, after its own label (``x/a``, ``x/b`` for runs a and b of x.kernels.json)."""
    frame = table.frame.copy(deep=False)  # copy-on-write: only ``run`` is new
    texts, _ = text_codes(frame["run"])  # the distinct runs' names, relabelled; codes kept (nothing decoded)
    frame["run"] = recoded_text(frame["run"], [f"{label}/{t}" for t in texts], missing=label)
    return replace(table, frame=frame)


def _is_kernel_json_bytes(head: bytes) -> bool:
    head = head.lstrip()
    return head.startswith(b"{") and b'"roofline.kernels/1"' in head


def _table_kind(path: str | PathLike[str] | InMemory, known: Head | None = None) -> str | None:
    """``"json"`` or ``"parquet"`` for a kernel-table file (ours, from roofline profile, analyze
    --parquet or merge), ``"nsys"`` for an Nsight Systems timeline (SQLite by content, a report by
    its name), by content; None for anything else. Any Parquet or SQLite file counts: one that is
    not ours (or not an nsys export) is refused by its reader with a clear message, not read as CSV.
    ``known``: the file's head already read (:func:`head_of`; then it is a regular file)."""
    if isinstance(path, InMemory):
        return None  # refused by _check_memory: a stream is read as CSV
    p = Path(fspath(path))
    if known is None:
        if p.is_dir():
            return amd_kind(p)  # an AMD tool's output folder (any other folder was expanded into its files)
        if not p.is_file():
            return None
    if p.name.lower().endswith(TIMELINE_REPORTS):
        return "nsys"
    if known is None:
        with p.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    else:
        head = known.data[:HEAD_BYTES]
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    amd = amd_kind(p, head)  # (a rocpd database is SQLite too: asked before nsys)
    if amd is not None:
        return amd
    if head.startswith(SQLITE_MAGIC):
        return "nsys"
    return "json" if _is_kernel_json_bytes(head) else None


def _read_table_file(path: str | PathLike[str], kind: str | None) -> KernelTable:
    # Imported here: pyarrow.parquet is needed only when a Parquet file is met (not on the CSV path).
    if kind in AMD_KINDS:
        return read_amd(Path(fspath(path)), kind)
    if kind == "nsys":
        from roofline.readers.nsys.timeline import read_timeline

        return read_timeline(Path(fspath(path)))
    if kind == "parquet":
        from roofline.readers import kernel_parquet

        return kernel_parquet.read(Path(fspath(path)))
    from roofline.readers import kernel_json

    return kernel_json.read(Path(fspath(path)))


def _stack(tables: list[KernelTable]) -> KernelTable:
    """Several already-counted tables (e.g. a profile plus measurements) stacked into one."""
    import pandas as pd

    from roofline.kernels import concat

    conventions = {t.fp16_convention for t in tables}
    if len(conventions) > 1:
        raise InputError(f"the inputs count FP16 FLOPs by different conventions ({', '.join(sorted(conventions))})",
                         hint="re-read the ncu files with one --fp16 setting")
    frame = concat([t.frame for t in tables])
    metrics = pd.concat([t.metrics.reset_index(drop=True) for t in tables], ignore_index=True)
    metrics.index = frame.index
    return KernelTable(frame=frame, metrics=metrics, sources=tuple(s for t in tables for s in t.sources),
                       warnings=tuple(w for t in tables for w in t.warnings), fp16_convention=conventions.pop(),
                       metric_hints={k: v for t in tables for k, v in t.metric_hints.items()})


def is_timeline(path: str | PathLike[str]) -> bool:
    """True for an Nsight Systems timeline (a SQLite export by content, a report by its name)."""
    return _table_kind(path) == "nsys"


def rank_timelines(paths: Sequence[str | PathLike[str]] | str | PathLike[str]) -> list[Path] | None:
    """The files ``paths`` names (folders expanded: :func:`profile_files`) when more than one of them is
    a timeline (:func:`is_timeline`): one per rank of a job, to break down one at a time; None
    otherwise (one timeline or none, or standard input among them)."""
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    if any(isinstance(p, InMemory) or is_stream(p) for p in paths):
        return None
    files = [f for p in paths for f in profile_files(p)]
    return files if sum(is_timeline(f) for f in files) > 1 else None

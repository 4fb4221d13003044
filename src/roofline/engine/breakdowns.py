"""The step breakdown of a cluster job: one Nsight Systems timeline per rank, each broken down alone
(:func:`rank_rows`: read, break down, keep the few long-form rows, drop the launches), the rows
combined across ranks by DuckDB (:data:`STATS_SQL`, :data:`PARTS_SQL`). Memory holds one rank's
timeline at a time, and the rows.

The fan-out is the engine's: with DuckDB (embedded) the files are broken down one after another in
this process, each rank's rows inserted into DuckDB as it is done; with ``dask://HOST:PORT`` each file
is one task on the cluster (``Client.map`` of :func:`rank_rows`), and each task's rows are inserted as
it completes. Either way DuckDB combines them. A Dask worker needs roofline installed and must read
the files at the paths given (a shared file system), as for the aggregation (:mod:`.cluster`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
import pandas as pd

from roofline.analysis.breakdown import Breakdown, breakdown
from roofline.analysis.rank_breakdown import COMMUNICATION, IDLE, KERNEL, ROW_COLUMNS, STAT_COLUMNS, WALL, \
    RankBreakdown, rank_windows, window_rows
from roofline.engine.cluster import connect
from roofline.engine.choice import Engine
from roofline.errors import InputError, RooflineError
from roofline.readers import read_profile

#: The table DuckDB holds the ranks' rows in.
ROWS = "rank_rows"
#: Distinct notes named in full; the rest are counted.
NOTES_NAMED = 10

#: One row per member (rank, GPU, window) with its totals; then per key the statistics
#: (:data:`roofline.analysis.rank_breakdown.STAT_COLUMNS`), the straggler being the member with the
#: longest wall time (ties: the first rank label, device, start).
STATS_SQL = f"""
WITH members AS (
    SELECT key, rank, device, start_ns, min(ordinal) AS ordinal, min(name) AS name,
           sum(CASE WHEN category = '{WALL}' THEN seconds ELSE 0 END) AS wall,
           sum(CASE WHEN category = '{KERNEL}' THEN seconds ELSE 0 END) AS kernel,
           sum(CASE WHEN category = '{COMMUNICATION}' THEN seconds ELSE 0 END) AS communication,
           sum(CASE WHEN category = '{IDLE}' THEN seconds ELSE 0 END) AS idle
    FROM {ROWS} GROUP BY key, rank, device, start_ns),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY key ORDER BY wall DESC, rank, device, start_ns) AS place
    FROM members)
SELECT key, min(ordinal) AS ordinal, string_agg(DISTINCT name, ', ' ORDER BY name) AS name,
       count(*) AS members,
       {', '.join(f'avg({q}) AS {q}_mean, min({q}) AS {q}_min, max({q}) AS {q}_max'
                  for q in ('wall', 'kernel', 'communication', 'idle'))},
       median(wall) AS median_wall,
       max(CASE WHEN place = 1 THEN rank END) AS straggler_rank,
       max(CASE WHEN place = 1 THEN device END) AS straggler_device
FROM ranked GROUP BY key ORDER BY ordinal, key
"""

#: Each window's kernel time by bound, exposed communication by kind and idle time by cause, summed
#: over the members.
PARTS_SQL = f"""
SELECT key, category, part, sum(seconds) AS seconds FROM {ROWS}
WHERE category IN ('{KERNEL}', '{COMMUNICATION}', '{IDLE}') GROUP BY key, category, part ORDER BY key, category, part
"""


def rank_labels(files: Sequence[Path]) -> list[str]:
    """Each file's label: its name, or its path where two files share a name."""
    names = [f.name for f in files]
    return names if len(set(names)) == len(names) else [str(f) for f in files]


def rank_rows(path: str, label: str, window: str) -> tuple[pd.DataFrame, tuple[str, ...], str | None]:
    """One rank's timeline ``path`` broken down per ``window`` (``"run"``, ``"phase"``, ``"step"``), as
    long-form rows labelled ``label`` (:func:`roofline.analysis.rank_breakdown.window_rows`), with its notes.
    A file that cannot be broken down gives no rows and its error's text (a Dask worker returns the
    text, not the exception, so that the client says it as any other refusal)."""
    try:
        table = read_profile([path])
        if table.activity is None:
            raise InputError("not a timeline: the per-rank breakdown reads one Nsight Systems timeline per rank",
                             path=path)
        split = breakdown(table.activity, window=window)
    except InputError as exc:
        text = exc.render() if exc.path is not None else f"{path}: {exc.render()}"
        return window_rows(Breakdown(window=window, windows=(), bounds_known=False), label), (), text
    return window_rows(split, label), split.notes, None


def combine(files: Sequence[Path], window: str, engine: Engine) -> RankBreakdown:
    """The breakdown of each rank's timeline in ``files`` per ``window``, combined across ranks by DuckDB;
    the per-file work run by ``engine`` (DuckDB: here, one file at a time; Dask: one task per file)."""
    from roofline.engine import duck

    labels = rank_labels(files)
    duckdb = duck.duckdb_module()
    kept: list[pd.DataFrame] = []
    notes: dict[str, int] = {}
    with duck.connect(engine) as con:
        con.execute(f"CREATE TEMP TABLE {ROWS} (rank VARCHAR, device BIGINT, key VARCHAR, ordinal BIGINT, "
                    "name VARCHAR, start_ns BIGINT, category VARCHAR, part VARCHAR, seconds DOUBLE)")
        done = _on_dask(files, labels, window, engine) if engine.kind == "dask" else _here(files, labels, window)
        for rows, said, error in done:
            if error is not None:
                raise InputError(error)
            con.register("one_rank", rows)
            con.execute(f"INSERT INTO {ROWS} SELECT {', '.join(ROW_COLUMNS)} FROM one_rank")
            con.unregister("one_rank")
            kept.append(rows)
            for note in said:
                notes[note] = notes.get(note, 0) + 1
        try:
            stats = con.execute(STATS_SQL).df()
            parts = con.execute(PARTS_SQL).df()
        except duckdb.Error as exc:
            raise RooflineError(f"DuckDB could not combine the ranks' breakdowns: {exc}") from None
    if stats.empty:
        raise InputError(f"none of the {len(files)} timelines has a {window} window", hint="check the files")
    frame = pd.concat(kept, ignore_index=True)
    order = {label: i for i, label in enumerate(labels)}
    frame = frame.sort_values("rank", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    return RankBreakdown(window=window, ranks=tuple(labels), windows=rank_windows(stats[list(STAT_COLUMNS)], parts),
                         rows=frame, engine=engine.describe(), notes=_notes(notes, len(files)))


def _here(files: Sequence[Path], labels: Sequence[str], window: str) -> Iterator[tuple[pd.DataFrame, tuple[str, ...], str | None]]:
    for f, label in zip(files, labels):
        yield rank_rows(os.fspath(f), label, window)


def _on_dask(files: Sequence[Path], labels: Sequence[str], window: str,
             engine: Engine) -> Iterator[tuple[pd.DataFrame, tuple[str, ...], str | None]]:
    """One task per file on the Dask cluster at ``engine.address``, each task's result as it completes."""
    with connect(engine) as client:
        from distributed import as_completed

        futures = client.map(rank_rows, [os.fspath(f) for f in files], list(labels), window=window)
        try:
            for future in as_completed(futures, loop=client.loop):
                yield future.result()
        finally:
            client.cancel(futures)


def _notes(counts: dict[str, int], ranks: int) -> tuple[str, ...]:
    said = [f"{note} ({n} of {ranks} ranks)" if ranks > 1 else note for note, n in list(counts.items())[:NOTES_NAMED]]
    if len(counts) > NOTES_NAMED:
        said.append(f"{len(counts) - NOTES_NAMED} more distinct notes (see each rank alone: roofline analyze FILE)")
    return tuple(said)

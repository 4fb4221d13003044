"""Out-of-core aggregation: per-rank Parquet kernel tables (or the ranks' Nsight Systems timelines, joined
with their counts first) grouped by an engine into the table of groups :func:`roofline.kernels.aggregate`
gives (:func:`aggregate_files`). What each column means is :mod:`.plan`'s; the engines only run the query."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from roofline.engine.inputs import Inputs, check
from roofline.engine.choice import Engine
from roofline.engine.plan import VIEWS, Plan, groups_frame, groups_metrics, phase_time
from roofline.engine.timelines import timeline_inputs, write_rank_tables
from roofline.errors import InputError
from roofline.kernels import GroupBy, KernelTable
from roofline.kernels.match_rate import MatchRate
from roofline.readers import kernel_parquet
from roofline.readers.ncu.peak_columns import peak_columns

#: Launches of the first file read whole, with their metrics, to choose the ceilings from.
SAMPLE_LAUNCHES = 4096
#: The files' columns of the per-launch ``match`` and ``replay_time_s`` metrics of a timeline joined with counts.
MATCH = kernel_parquet.METRIC_PREFIX + "match"
REPLAY = kernel_parquet.METRIC_PREFIX + "replay_time_s"


@dataclass(frozen=True)
class Aggregated:
    """What an engine returns: ``table``, the grouped kernel table (declared columns and dtypes, one
    row per group, longest first; no per-launch metrics, but per group, for joined timelines grouped by kernel
    name, the sums of production and replay time: :data:`roofline.engine.plan.REPLAY_SUMS`); ``phase_time``, the known GPU time per phase
    over every launch (s; None: outside every phase); ``sample``, the first launches of the first
    file with their metrics (the GPU and its peak metrics, to choose the ceilings); ``files`` and
    ``launches`` read; ``engine``, which ran it; ``match``: how the launches of joined timelines found
    their counts, over every file (None when a file is not a joined timeline's table)."""

    table: KernelTable
    phase_time: Mapping[str | None, float]
    sample: KernelTable
    files: int
    launches: int
    engine: Engine
    match: MatchRate | None = None


def _notes(inputs: Inputs, engine: Engine) -> list[str]:
    said: dict[str, None] = {}
    for footer in inputs.footers:
        said.update(dict.fromkeys(footer.warnings))
    pooled = (f"{len(inputs.files)} kernel tables pooled as the ranks of one job, as roofline merge does "
              "(--engine pandas keeps each file a run of its own)") if len(inputs.files) > 1 else None
    return [*said, *([pooled] if pooled else []),
            f"aggregated out of core by {engine.describe()}: {inputs.launches:,} launches; the advice uses the "
            "kernel table alone (per-launch metrics are not read out of core)"]


def aggregate_files(paths: Sequence[str | os.PathLike[str]], by: GroupBy | str = "name",
                    engine: Engine | str = "duckdb", *, fp16: str = "ncu") -> Aggregated:
    """The per-rank Parquet kernel tables ``paths`` (files, or folders of ``*.parquet``) grouped
    ``by`` ``"name"``, ``"phase"``, ``"op"`` or ``"module"`` (:func:`roofline.kernels.aggregate`'s
    rows) by ``engine`` (``"duckdb"``, ``"dask://HOST:PORT"`` or an :class:`Engine`), out of core.

    Nsight Systems timelines among ``paths`` are the ranks of a job: each is joined with the counting
    profile among the other inputs, if any, and written as a Parquet kernel table first, one rank in
    memory at a time (:mod:`roofline.engine.timelines`; ``fp16``: how the counts count FP16 FLOPs).

    Refuses, before reading a row, inputs that are not our Parquet kernel tables, a newer schema,
    mixed FP16 conventions, declared columns of another type (:func:`roofline.engine.inputs.check`)."""
    chosen = Engine.parse(engine)
    if not chosen.out_of_core:
        raise InputError("the pandas engine reads the launches into memory: use roofline.analyze")
    if by not in VIEWS:
        raise InputError(f"out of core, launches are grouped by {', '.join(VIEWS)}, not {by!r}",
                         hint="--engine pandas for per-launch rows or drill-downs")
    split = timeline_inputs(paths)
    if split is None:
        return _aggregate(check(paths), by, chosen)
    if chosen.kind == "dask":
        raise InputError("timelines are turned into kernel tables on this machine, which a Dask cluster's workers "
                         "may not see", hint="write each rank's table where the workers see it (roofline analyze "
                                             "RANK.sqlite COUNTS --parquet DIR/NAME.rankN.parquet), then roofline "
                                             "analyze DIR --engine dask://HOST:PORT; or use --engine duckdb")
    timelines, counting = split
    with tempfile.TemporaryDirectory(prefix="roofline-ranks-", dir=chosen.temp_directory) as folder:
        files = write_rank_tables(timelines, counting, Path(folder), fp16=fp16)
        done = _aggregate(check(files), by, chosen, said=False)
    frame = done.table.frame.copy(deep=False)  # each group's source: its timeline's name, not its table's
    frame["source"] = frame["source"].replace({f.name: t.name for f, t in zip(files, timelines)})
    rate = (done.match.summary(f"{len(timelines)} timelines" if len(timelines) > 1 else None),) if done.match else ()
    table = dataclasses.replace(done.table, frame=frame, sources=(*map(str, timelines), *map(str, counting)),
                                warnings=(*rate, *done.table.warnings))
    return dataclasses.replace(done, table=table)


def _aggregate(inputs: Inputs, by: GroupBy | str, chosen: Engine, *, said: bool = True) -> Aggregated:
    """``inputs`` grouped ``by`` by the ``chosen`` engine. ``said``: the match rate over several joined
    timelines' tables leads the notes (each file's own note gives its own rate)."""
    joined = all(MATCH in footer.schema.names for footer in inputs.footers)
    replayed = all(REPLAY in footer.schema.names for footer in inputs.footers)
    plan = Plan.of(by, inputs.present, MATCH if joined else None, REPLAY if replayed else None)
    if chosen.kind == "dask":
        from roofline.engine import cluster

        groups, phases, matches = cluster.aggregate(inputs, plan, chosen)
    else:
        from roofline.engine import duck

        groups, phases, matches = duck.aggregate(inputs, plan, chosen)
    match = None
    if matches is not None:
        kinds = [None if k is None or k is pd.NA or k != k else str(k) for k in matches["kind"]]
        match = MatchRate.of(dict(_summed(kinds, matches["launches"])), dict(_summed(kinds, matches["time_s"])))
    hints: dict[str, str] = {}
    notes: dict[str, dict[str, None]] = {}
    for footer in inputs.footers:
        hints.update(footer.metric_hints)
        for column, texts in footer.column_notes.items():
            notes.setdefault(column, {}).update(dict.fromkeys(texts))
    rate = [match.summary(f"{len(inputs.files)} kernel tables")] if match and said and len(inputs.files) > 1 else []
    table = KernelTable(frame=groups_frame(groups, plan), metrics=groups_metrics(groups, plan),
                        sources=tuple(str(f) for f in inputs.files),
                        warnings=(*rate, *_notes(inputs, chosen)), fp16_convention=inputs.fp16_convention,
                        column_notes={c: tuple(t) for c, t in notes.items()}, metric_hints=hints)
    sample = kernel_parquet.read_head(inputs.files[0], SAMPLE_LAUNCHES, peak_columns)
    return Aggregated(table=table, phase_time=phase_time(phases), sample=sample, files=len(inputs.files),
                      launches=inputs.launches, engine=chosen, match=match)


def _summed(kinds: list[str | None], values: pd.Series) -> dict[str | None, float]:
    """``values`` summed per kind (the engine's rows, one per kind; NaN counts as nothing)."""
    out: dict[str | None, float] = {}
    for kind, value in zip(kinds, values.to_numpy(dtype=float, na_value=0.0)):
        out[kind] = out.get(kind, 0.0) + float(value)
    return out

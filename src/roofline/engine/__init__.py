"""Kernel tables too large for memory, aggregated where they lie: per-rank Parquet kernel tables of a
cluster job (``roofline profile --parquet`` under a launcher, one file per rank) summed into the
table of groups :func:`roofline.kernels.aggregate` gives, by an existing engine: DuckDB, embedded, by
default (:mod:`.duck`), or a Dask cluster the user names (:mod:`.cluster`). Docs: docs/engines.md.

Why a package of its own, between ``readers/`` and ``analysis/``: it reads files (like a reader)
and aggregates (like ``kernels.aggregate``), but never holds the launches, so it is neither; what
it returns is an ordinary grouped kernel table, which the analysis takes as it is (grouping a
table of groups by the same keys gives it back). The query is written once (:mod:`.plan` says
what each column means, :mod:`.sql` the text); the engines only run it.

The engines pool the files as the ranks of one job, as ``roofline merge`` does: ``source`` is each
file's name (one file: its own ``source``), runs within the files stay apart (``run`` is a key).
What is not available out of core, and so not computed: per-launch rows (``by="launch"``, ``--parquet``),
the raw metrics of every launch (guidance's metric-based rules: the advice works from the table alone),
selections by kernel name or NVTX range, and module paths cut to a depth.

The step breakdown of a cluster job (one Nsight Systems timeline per rank): :mod:`.breakdowns`
breaks each rank's timeline down alone (in this process, or one Dask task per file) and DuckDB
combines the ranks' long-form rows; the breakdown of one timeline stays the in-memory
:mod:`roofline.analysis.breakdown` (a rank's timeline fits in memory; the job's do not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofline._lazy import attach

#: Public name -> the module that defines it (loaded on first use: :mod:`.choice` is all that most
#: commands need, to learn that their files are not read out of core).
_NAMES = {
    **dict.fromkeys(("ENGINES", "Engine", "default_engine", "is_rank_set", "rank_of"), "roofline.engine.choice"),
    **dict.fromkeys(("Aggregated", "aggregate_files"), "roofline.engine.aggregate"),
}
#: Modules reachable as attributes (``roofline.engine.sql`` after ``import roofline``).
_SUBMODULES = ("aggregate", "breakdowns", "choice", "cluster", "duck", "inputs", "plan", "sql", "timelines")

__all__ = sorted(_NAMES)

__getattr__, __dir__ = attach(__name__, _NAMES, _SUBMODULES)

if TYPE_CHECKING:
    from roofline.engine.aggregate import Aggregated, aggregate_files
    from roofline.engine.choice import ENGINES, Engine, default_engine, is_rank_set, rank_of

"""The aggregation run by DuckDB, embedded (no server): the files are scanned in parallel, only the
columns the plan names are read, and the fine groups are hash-aggregated under a memory limit,
spilling to a temporary folder beyond it (:mod:`roofline.engine.sql` holds the queries).

DuckDB is imported inside :func:`connect`, so that ``import roofline`` does not load it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from roofline.engine.inputs import Inputs
from roofline.engine.choice import Engine
from roofline.engine.plan import Plan
from roofline.engine.sql import FINE, fine_sql, group_sql, literal, match_sql, phase_sql, scan_sql
from roofline.errors import InputError, ToolNotFoundError

#: What an engine computes: the group rows, the time per phase, and the match rate's rows (or None).
Results = tuple[pd.DataFrame, pd.DataFrame, "pd.DataFrame | None"]


def _half_the_memory() -> str:
    """Half this machine's physical memory, in DuckDB's words (``"11GB"``)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4GB"
    return f"{max(1, total // 2 // 10**9)}GB"


def duckdb_module() -> Any:
    """The ``duckdb`` module, or a :class:`RooflineError` saying how to install it."""
    try:
        import duckdb
    except ImportError:
        raise ToolNotFoundError("the DuckDB engine needs the duckdb package, which is not installed",
                            hint="pip install duckdb (a dependency of roofline: reinstall it), or --engine pandas") from None
    return duckdb


@contextmanager
def connect(engine: Engine) -> Iterator[Any]:
    """An in-memory DuckDB connection under ``engine``'s memory limit, spilling to its temporary folder
    (a fresh one, removed afterwards, when it names none)."""
    duckdb = duckdb_module()
    with tempfile.TemporaryDirectory(prefix="roofline-duckdb-") as spill:
        where = Path(engine.temp_directory) if engine.temp_directory is not None else Path(spill)
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = {literal(engine.memory_limit or _half_the_memory())}")
            con.execute(f"SET temp_directory = {literal(str(where))}")
            con.execute("SET preserve_insertion_order = false")  # no order is needed: groups are sorted after
            if engine.threads is not None:
                con.execute(f"SET threads = {int(engine.threads)}")
            yield con
        finally:
            con.close()


def aggregate(inputs: Inputs, plan: Plan, engine: Engine) -> Results:
    """The group rows (:func:`~roofline.engine.sql.group_sql`), the time per phase
    (:func:`~roofline.engine.sql.phase_sql`) and the match rate (:func:`~roofline.engine.sql.match_sql`)
    of ``inputs``, computed by DuckDB."""
    duckdb = duckdb_module()
    scan = scan_sql(plan, [str(f) for f in inputs.files], source_from_name=len(inputs.files) > 1,
                    union_by_name=not inputs.uniform)
    with connect(engine) as con:
        try:
            con.execute(f"CREATE TEMP TABLE {FINE} AS {fine_sql(plan, scan)}")
            return _results(con, plan)
        except duckdb.Error as exc:
            raise InputError(f"DuckDB could not aggregate the kernel tables: {exc}",
                             hint="check the files (roofline analyze FILE --engine pandas reads one in memory)") from None


def aggregate_fine(fine: pd.DataFrame, plan: Plan, engine: Engine) -> Results:
    """The group rows, time per phase and match rate from fine rows computed elsewhere (the Dask
    engine's), by DuckDB over the pandas frame (a few rows per kernel and file)."""
    with connect(engine) as con:
        con.register(FINE, fine)
        return _results(con, plan)


def _results(con: Any, plan: Plan) -> Results:
    """The groups, phases and match rows (None when the plan has no match) from the fine rows in ``con``."""
    matches = match_sql(plan)
    return (con.execute(group_sql(plan)).df(), con.execute(phase_sql(plan)).df(),
            con.execute(matches).df() if matches is not None else None)

"""The aggregation as SQL text (DuckDB's dialect): the fine groups over the files, the groups over
the fine rows, the time per phase (:mod:`roofline.engine.plan` says what each column means).

Pure text: no engine is imported here. :mod:`roofline.engine.duck` runs them all; the Dask engine
computes the fine groups itself and runs the others on its result. Joined timelines' tables also
give their match rate from the fine rows (:func:`match_sql`).
"""

from __future__ import annotations

from collections.abc import Sequence

from roofline.engine.plan import REPLAY_SUMS, Plan, count_name, sum_name

#: The relation the group and phase queries read: the fine groups.
FINE = "fine"


def quoted(name: str) -> str:
    """An SQL identifier (double-quoted, quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _clocked() -> str:
    return f"{quoted('time_s')} IS NOT NULL AND {quoted('sm_clock_hz')} IS NOT NULL"


def scan_sql(plan: Plan, files: Sequence[str], *, source_from_name: bool, union_by_name: bool) -> str:
    """The launches as the fine query reads them: the plan's columns of ``files``, ``source`` the
    file's name when ``source_from_name`` (several rank files, as ``roofline merge`` sets it), else
    the file's own; a listed column the files lack is null."""
    names = ", ".join(literal(f) for f in files)
    options = ", filename = true" + (", union_by_name = true" if union_by_name else "")
    columns = [quoted(c) for c in plan.read]
    columns += [f"NULL AS {quoted(c)}" for c in ("phase", "op", "module") if c not in plan.present]
    columns.append("parse_filename(filename) AS source" if source_from_name else quoted("source"))
    return f"SELECT {', '.join(columns)} FROM read_parquet([{names}]{options})"


def fine_sql(plan: Plan, launches: str) -> str:
    """The fine groups of the launches that the query ``launches`` gives (:func:`scan_sql`)."""
    parts = [quoted(k) for k in plan.fine_keys]
    parts.append("count(*) AS n")
    for c in plan.summed:
        parts += [f"sum({quoted(c)}) AS {quoted(sum_name(c))}", f"count({quoted(c)}) AS {quoted(count_name(c))}"]
    if "sm_clock_hz" in plan.present:
        t, clk = quoted("time_s"), quoted("sm_clock_hz")
        parts += [f"sum(CASE WHEN {_clocked()} THEN {t} * {clk} END) AS wt",
                  f"sum(CASE WHEN {_clocked()} THEN {t} END) AS tw",
                  f"count(CASE WHEN {_clocked()} THEN 1 END) AS nok"]
    for c in plan.flags:
        parts.append(f"bool_or({quoted(c)}) AS {quoted('any__' + c)}")
    for c in plan.common:
        parts += [f"min({quoted(c)}) AS {quoted('lo__' + c)}", f"max({quoted(c)}) AS {quoted('hi__' + c)}",
                  f"count({quoted(c)}) AS {quoted(count_name(c))}"]
    if plan.replay is not None:  # over the launches with both times
        both = f"{quoted('time_s')} IS NOT NULL AND {quoted(plan.replay)} IS NOT NULL"
        launches_, production, replay = (quoted("rp__" + c) for c in REPLAY_SUMS)
        parts += [f"count(CASE WHEN {both} THEN 1 END) AS {launches_}",
                  f"sum(CASE WHEN {both} THEN {quoted('time_s')} END) AS {production}",
                  f"sum(CASE WHEN {both} THEN {quoted(plan.replay)} END) AS {replay}"]
    keys = ", ".join(quoted(k) for k in plan.fine_keys)
    return f"SELECT {', '.join(parts)} FROM ({launches}) GROUP BY {keys}"


def group_sql(plan: Plan, fine: str = FINE) -> str:
    """The groups (the rows :func:`roofline.kernels.aggregate` gives, less labels and order) from the
    fine rows in the relation ``fine``."""
    parts = [quoted(k) for k in plan.keys]
    for c in plan.summed:
        total = f"CASE WHEN sum({quoted(count_name(c))}) = sum(n) THEN sum({quoted(sum_name(c))}) END"
        parts.append(f"CAST({total} AS BIGINT) AS launches" if c == "launches" else f"{total} AS {quoted(c)}")
    if "sm_clock_hz" in plan.present:
        parts.append("CASE WHEN sum(nok) > 0 THEN sum(wt) / sum(tw) END AS sm_clock_hz")
    for c in plan.flags:
        parts.append(f"coalesce(bool_or({quoted('any__' + c)}), false) AS {quoted(c)}")
    for c in plan.common:
        lo, hi = quoted("lo__" + c), quoted("hi__" + c)
        parts.append(f"CASE WHEN sum({quoted(count_name(c))}) = sum(n) AND min({lo}) = max({hi}) THEN min({lo}) END "
                     f"AS {quoted(c)}")
    for c in plan.listed:
        parts.append(f"string_agg(DISTINCT {quoted(c)}, ',' ORDER BY {quoted(c)}) AS {quoted(c)}")
    if plan.replay is not None:
        parts += [f"coalesce(sum({quoted('rp__' + c)}), 0) AS {quoted(c)}" for c in REPLAY_SUMS]
    keys = ", ".join(quoted(k) for k in plan.keys)
    return f"SELECT {', '.join(parts)} FROM {fine} GROUP BY {keys}"


def phase_sql(plan: Plan, fine: str = FINE) -> str:
    """Known GPU time per phase (``phase``, ``time_s``, ``known``) from the fine rows."""
    if "time_s" not in plan.summed:
        return "SELECT NULL AS phase, 0.0 AS time_s, 0 AS known WHERE false"
    return (f"SELECT phase, sum({quoted(sum_name('time_s'))}) AS time_s, sum({quoted(count_name('time_s'))}) AS known "
            f"FROM {fine} GROUP BY phase")


def match_sql(plan: Plan, fine: str = FINE) -> str | None:
    """How the launches found their counts (``kind``, ``launches``, ``time_s``: known seconds) from the fine
    rows, when the files are joined timelines' tables (:attr:`Plan.match`); None otherwise."""
    if plan.match is None:
        return None
    time = f"coalesce(sum({quoted(sum_name('time_s'))}), 0.0)" if "time_s" in plan.summed else "0.0"
    return f"SELECT {quoted(plan.match)} AS kind, sum(n) AS launches, {time} AS time_s FROM {fine} GROUP BY 1"

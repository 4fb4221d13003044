"""The aggregation on a Dask cluster (``--engine dask://HOST:PORT``): ``dask.dataframe.read_parquet``
of the files on the cluster's workers, the fine groups (:mod:`roofline.engine.plan`) by Dask's own
grouped aggregation (a tree reduction across partitions), then the few fine rows brought back and
summed into groups by :func:`roofline.engine.duck.aggregate_fine`.

Only Dask's and pandas' own operations are sent to the workers (column arithmetic, ``groupby().agg``
with sum, min and max): a worker needs dask and pandas, not roofline, and it must be able to read the
files at the paths given (a shared file system). Dask and distributed are imported inside
:func:`aggregate` (the ``cluster`` extra: ``pip install 'roofline[cluster]'``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from roofline.engine import duck
from roofline.engine.inputs import Inputs
from roofline.engine.choice import Engine
from roofline.engine.plan import REPLAY_SUMS, Plan, count_name, sum_name
from roofline.errors import RooflineError, ToolNotFoundError


def _dask() -> tuple[Any, Any]:
    try:
        import dask.dataframe as dd
        from distributed import Client
    except ImportError:
        raise ToolNotFoundError("the Dask engine needs dask and distributed, which are not installed",
                                hint="pip install 'roofline[cluster]' (dask[distributed]), or --engine duckdb") from None
    return dd, Client


def connect(engine: Engine) -> Any:
    """A client of the Dask scheduler at ``engine.address`` (not made the default one), or one clear
    error: Dask not installed, or the scheduler not reached within ``engine.timeout_s``."""
    _, Client = _dask()
    try:
        return Client(engine.address, timeout=engine.timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise RooflineError(f"cannot reach the Dask scheduler at {engine.address} within {engine.timeout_s:g} s ({exc})",
                            hint="start one (dask scheduler; dask worker ADDRESS) or check the address, "
                                 "or use --engine duckdb") from None


def read_rank(path: str, source: str | None, wanted: list[str]) -> pd.DataFrame:
    """One file's launches (the columns ``wanted``), ``source`` set to ``source`` unless None; run on
    a worker, one file per partition."""
    return read_rank_empty(pq.read_table(path, columns=wanted), source)


def read_rank_empty(data: pa.Table, source: str | None) -> pd.DataFrame:
    """``data`` as pandas, ``source`` set to ``source`` unless None."""
    frame = data.to_pandas()
    if source is not None:
        frame["source"] = pd.Series([source] * len(frame), dtype="string", index=frame.index)
    return frame


def _launches(dd: Any, inputs: Inputs, columns: list[str]) -> Any:
    """The launches of every file as one Dask DataFrame, one partition per file; several rank files:
    ``source`` each file's name, as ``roofline merge`` sets it (``read_parquet``'s ``include_path_column``
    is not honoured by dask 2026.8, and it reads every file's dataset information first: 0.4 s a file)."""
    multi = len(inputs.files) > 1
    names = [f.name if multi else None for f in inputs.files]
    schema = inputs.footers[0].schema
    meta = read_rank_empty(schema.empty_table().select(columns), names[0])
    return dd.from_map(read_rank, [str(f) for f in inputs.files], names, wanted=columns, meta=meta,
                       enforce_metadata=False)


def _fine(frame: Any, plan: Plan) -> Any:
    """The fine groups of a Dask DataFrame of launches, as a Dask DataFrame (nothing computed yet)."""
    extra: dict[str, Any] = {"n": 1}
    for c in ("phase", "op", "module"):
        if c not in plan.present:
            extra[c] = pd.NA
    spec: dict[str, tuple[str, str]] = {"n": ("n", "sum")}
    for c in plan.summed:
        extra[count_name(c)] = frame[c].notnull().astype("int64")
        spec[sum_name(c)] = (c, "sum")
        spec[count_name(c)] = (count_name(c), "sum")
    if "sm_clock_hz" in plan.present:
        ok = frame["time_s"].notnull() & frame["sm_clock_hz"].notnull()
        extra["wt"] = (frame["time_s"] * frame["sm_clock_hz"]).where(ok, 0.0)
        extra["tw"] = frame["time_s"].where(ok, 0.0)
        extra["nok"] = ok.astype("int64")
        spec.update(wt=("wt", "sum"), tw=("tw", "sum"), nok=("nok", "sum"))
    for c in plan.flags:
        extra["any__" + c] = frame[c].fillna(False).astype("int64")
        spec["any__" + c] = ("any__" + c, "max")
    for c in plan.common:
        extra[count_name(c)] = frame[c].notnull().astype("int64")
        spec["lo__" + c] = (c, "min")
        spec["hi__" + c] = (c, "max")
        spec[count_name(c)] = (count_name(c), "sum")
    if plan.replay is not None:  # over the launches with both times, as fine_sql sums them
        both = frame["time_s"].notnull() & frame[plan.replay].notnull()
        extra["rp__" + REPLAY_SUMS[0]] = both.astype("int64")
        extra["rp__" + REPLAY_SUMS[1]] = frame["time_s"].where(both, 0.0)
        extra["rp__" + REPLAY_SUMS[2]] = frame[plan.replay].where(both, 0.0)
        spec.update({"rp__" + c: ("rp__" + c, "sum") for c in REPLAY_SUMS})
    launches = frame.assign(**extra)
    keys = list(plan.fine_keys)
    text = {k: "string" for k in keys if k in plan.present or k in ("source", plan.match)}
    launches = launches.astype(text)  # categorical identities as text: grouped and compared as text
    return launches.groupby(keys, dropna=False, observed=True).agg(**spec).reset_index()


def aggregate(inputs: Inputs, plan: Plan, engine: Engine) -> duck.Results:
    """The group rows, time per phase and match rate of ``inputs``, the launches read and grouped on
    the Dask cluster at ``engine.address``."""
    dd, _ = _dask()
    multi = len(inputs.files) > 1
    columns = [*plan.read, *([] if multi else ["source"])]
    with connect(engine) as client:
        frame = _launches(dd, inputs, columns)
        fine = client.compute(_fine(frame, plan)).result()
    fine = fine.astype({c: bool for c in fine.columns if c.startswith("any__")})
    return duck.aggregate_fine(fine, plan, engine)

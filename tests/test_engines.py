"""Kernel tables aggregated out of core (issue 35, part 6): DuckDB and Dask give the rows the pandas
path gives (``roofline merge`` of the rank files, then ``roofline.kernels.aggregate``), on real
exports of tests/data written as per-rank Parquet kernel tables, for every grouping; the CLI end to
end; and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import needs
from roofline import kernels
from roofline.cli.app import main
from roofline.engine import Engine, aggregate_files, default_engine
from roofline.errors import InputError, RooflineError, ToolNotFoundError
from roofline.profiling.rank_tables import merge_tables
from roofline.readers import kernel_parquet, read_profile

DATA = Path(__file__).parent / "data"
#: Real exports, each with something to group: runs, phases and module paths (an H100's examples),
#: phases and operators with counts unknown throughout (an Nsight Systems timeline), full counters (H200).
SOURCES = {
    "h100_examples": DATA / "ncu" / "h100_80gb_hbm3_examples",
    "nsys_mfu": DATA / "nsys" / "nsysai_mfu_before",
    "h200_moe": DATA / "ncu" / "h200_setfull_sglang_moe_fa3",
}
TABLES = sorted((DATA / "tables").glob("*.parquet"))
RANKS = 8
BYS = ("name", "phase", "op", "module")


def write_ranks(source: Path, folder: Path, ranks: int = RANKS, *, unknown_dram_at: int | None = None) -> list[Path]:
    """The table of ``source`` as ``ranks`` per-rank Parquet kernel tables (launch i to rank i mod ranks),
    as ``roofline profile --parquet`` writes them under a launcher; ``unknown_dram_at``: that launch's
    DRAM bytes made unknown (null)."""
    data = kernel_parquet.to_arrow(read_profile(source))
    if unknown_dram_at is not None:
        i = data.schema.get_field_index("dram_bytes")
        mask = np.arange(data.num_rows) == unknown_dram_at
        column = pc.if_else(pa.array(mask), pa.scalar(None, pa.float64()), data.column(i))
        data = data.set_column(i, data.schema.field(i), column)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        path = folder / f"job.rank{rank}.parquet"
        kernel_parquet.write(data.take(np.arange(rank, data.num_rows, ranks)), path)
        paths.append(path)
    return paths


def assert_same_rows(got: pd.DataFrame, want: pd.DataFrame, by: str) -> None:
    """Every declared column equal, row by row (rows matched by their keys): floats to rtol 1e-12 with
    NaN where the other is NaN, every other column exactly, dtypes the same."""
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want) > 0
    keys = list(dict.fromkeys([*kernels.group_keys(by, runs=True), "kernel_name"]))
    got = got.sort_values(keys, na_position="last", kind="stable").reset_index(drop=True)
    want = want.sort_values(keys, na_position="last", kind="stable").reset_index(drop=True)
    for column in want.columns:
        g, w = got[column], want[column]
        assert str(g.dtype) == str(w.dtype), column
        if w.dtype == "float64":
            np.testing.assert_allclose(g.to_numpy(), w.to_numpy(), rtol=1e-12, atol=0, equal_nan=True, err_msg=column)
        else:
            assert g.astype(object).where(g.notna(), None).tolist() == w.astype(object).where(w.notna(), None).tolist(), column


@pytest.fixture(scope="module")
def rank_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("ranks")
    sets = {name: write_ranks(src, root / name) for name, src in SOURCES.items()}
    sets["h200_unknown"] = write_ranks(SOURCES["h200_moe"], root / "h200_unknown", unknown_dram_at=0)
    return sets


@pytest.mark.parametrize("by", BYS)
@pytest.mark.parametrize("name", [*SOURCES, "h200_unknown"])
def test_duckdb_aggregation_is_the_merge_then_aggregate(rank_sets: dict[str, list[Path]], name: str, by: str) -> None:
    files = rank_sets[name]
    want = kernels.aggregate(merge_tables(files).frame, by=by)
    got = aggregate_files(files, by=by, engine="duckdb").table.frame
    assert_same_rows(got, want, by)


def test_unknown_in_one_launch_is_unknown_for_its_group(rank_sets: dict[str, list[Path]]) -> None:
    files = rank_sets["h200_unknown"]
    first = pq.read_table(files[0], columns=["kernel_name", "run"]).slice(0, 1).to_pylist()[0]
    got = aggregate_files(files, by="name").table.frame
    row = (got["kernel_name"] == first["kernel_name"]) & (got["run"] == first["run"])
    assert row.sum() == 1
    assert np.isnan(got.loc[row, "dram_bytes"]).all()
    assert np.isfinite(got.loc[~row, "dram_bytes"]).all()  # every other kernel's DRAM bytes known
    # by hand: the known DRAM bytes of the other kernels, summed over every rank file
    launches = pa.concat_tables([pq.read_table(f, columns=["kernel_name", "run", "dram_bytes"]) for f in files]).to_pandas()
    others = launches[~((launches["kernel_name"] == first["kernel_name"]) & (launches["run"] == first["run"]))]
    assert got.loc[~row, "dram_bytes"].sum() == pytest.approx(others["dram_bytes"].sum(), rel=1e-12)
    assert int(got["launches"].sum()) == len(launches)


@pytest.mark.parametrize("by", BYS)
@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.name)
def test_duckdb_on_one_table_is_its_aggregate(table: Path, by: str) -> None:
    want = kernels.aggregate(read_profile(table).frame, by=by)
    assert_same_rows(aggregate_files([table], by=by).table.frame, want, by)


def test_phase_times_are_over_every_launch(rank_sets: dict[str, list[Path]]) -> None:
    files = rank_sets["nsys_mfu"]
    launches = pa.concat_tables([pq.read_table(f, columns=["phase", "time_s"]) for f in files]).to_pandas()
    want = launches.groupby("phase", dropna=False)["time_s"].sum()
    got = aggregate_files(files, by="name").phase_time
    assert set(got) == {None if pd.isna(p) else p for p in want.index}
    for phase, seconds in want.items():
        assert got[None if pd.isna(phase) else phase] == pytest.approx(seconds, rel=1e-12)


def test_dask_aggregation_is_the_merge_then_aggregate(rank_sets: dict[str, list[Path]]) -> None:
    distributed = needs.dask()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.split("://", 1)[1]
        for name, bys in (("h100_examples", BYS), ("h200_unknown", ("name",))):
            files = rank_sets[name][:4] if name == "h100_examples" else rank_sets[name]
            for by in bys:
                want = kernels.aggregate(merge_tables(files).frame, by=by)
                assert_same_rows(aggregate_files(files, by=by, engine=address).table.frame, want, by)
        want = kernels.aggregate(read_profile(TABLES[0]).frame, by="name")
        assert_same_rows(aggregate_files([TABLES[0]], by="name", engine=address).table.frame, want, "name")


def _kernels_json(path: Path) -> dict[tuple, dict]:
    doc = json.loads(path.read_text())
    return {(k.get("run"), k["name"]): k for k in doc["kernels"]}, doc


def test_cli_engine_duckdb_end_to_end(rank_sets: dict[str, list[Path]], tmp_path: Path) -> None:
    folder = rank_sets["h100_examples"][0].parent
    merged = tmp_path / "merged.parquet"
    assert main(["merge", *map(str, rank_sets["h100_examples"]), "-o", str(merged), "-q"]) == 0
    today, engine, default = tmp_path / "today.json", tmp_path / "engine.json", tmp_path / "default.json"
    assert main(["analyze", str(merged), "--json", str(today), "-q"]) == 0
    assert main(["analyze", str(folder), "--engine", "duckdb", "--json", str(engine), "-q"]) == 0
    assert main(["analyze", *map(str, rank_sets["h100_examples"]), "--json", str(default), "-q"]) == 0
    want, _ = _kernels_json(today)
    for out in (engine, default):
        got, doc = _kernels_json(out)
        assert set(got) == set(want)
        for key, row in want.items():
            assert got[key]["launches"] == row["launches"]
            assert got[key]["time_s"] == pytest.approx(row["time_s"], rel=1e-12)
            assert got[key]["flops"]["total"] == pytest.approx(row["flops"]["total"], rel=1e-12, nan_ok=True)
        assert any("out of core by DuckDB" in n for n in doc["notes"])
    assert json.loads(engine.read_text())["totals"]["time_s"] == pytest.approx(
        json.loads(today.read_text())["totals"]["time_s"], rel=1e-12)


def test_default_engine_rule(rank_sets: dict[str, list[Path]], tmp_path: Path) -> None:
    files = rank_sets["h100_examples"]
    assert default_engine(files).kind == "duckdb"
    assert default_engine(files[:1]).kind == "pandas"          # one file: today's path, byte for byte
    assert default_engine(TABLES).kind == "pandas" if len(TABLES) == 1 else True
    other = tmp_path / "before.parquet"
    other.write_bytes(files[0].read_bytes())
    assert default_engine([files[0], other]).kind == "pandas"  # not rank files: separate runs, as before


def test_refusals(rank_sets: dict[str, list[Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = rank_sets["h100_examples"]
    csv = next((DATA / "ncu" / "v100_cutlass_gemm").glob("*.csv"))
    with pytest.raises(InputError, match="not a Parquet kernel table"):
        aggregate_files([files[0], csv])
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"x": [1]}), foreign)
    with pytest.raises(InputError, match="not a roofline kernel table"):
        aggregate_files([foreign])
    with pytest.raises(InputError, match="unknown engine"):
        Engine.parse("spark")
    with pytest.raises(InputError, match="HOST:PORT"):
        Engine.parse("dask://nowhere")
    with pytest.raises(InputError, match="grouped by"):
        aggregate_files(files, by="launch")
    for extra in (["--by", "launch"], ["--filter", "gemm"], ["--parquet", str(tmp_path / "x.parquet")]):
        assert main(["analyze", *map(str, files), "--engine", "duckdb", "-q", *extra]) == 2
        err = capsys.readouterr().err
        assert "needs the launches in memory" in err and len(err.strip().splitlines()) <= 2
    assert main(["analyze", str(csv), "--engine", "duckdb", "-q"]) == 2
    assert "not a Parquet kernel table" in capsys.readouterr().err


def test_unreachable_dask_scheduler_is_one_clear_error(rank_sets: dict[str, list[Path]]) -> None:
    needs.dask()
    engine = Engine("dask", address="tcp://127.0.0.1:9", timeout_s=1.0)
    with pytest.raises(RooflineError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9 within 1 s"):
        aggregate_files(rank_sets["h100_examples"], engine=engine)


def test_missing_dask_names_the_extra(rank_sets: dict[str, list[Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ToolNotFoundError, match=r"roofline\[cluster\]"):
        aggregate_files(rank_sets["h100_examples"], engine="dask://127.0.0.1:8786")

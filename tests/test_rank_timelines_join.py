"""A job's timelines, one per rank, each joined with one counting profile: side by side in memory
(roofline.readers.read_profile), or out of core, one rank at a time, by DuckDB (roofline.engine.timelines).

The ranks are two real public timelines (tests/data/nsys: nsysai_mfu_before, nsys 2026.2, 4010 launches;
pipit_saxpy_mpi, nsys 2022.2, the saxpy of an MPI run; PROVENANCE.md beside each), copied under rank names.
The counting profile is built from the first one's own launches as in tests/test_nsys_join.py (each
launch's counts say which launch they belong to), so the first rank matches exactly and the second,
a different program, not at all. Launch counts and times are summed with SQL on the files.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api, kernels
from roofline.cli.app import main
from roofline.engine import Engine, aggregate_files
from roofline.errors import InputError
from roofline.readers import kernel_parquet
from roofline.readers.nsys.join import join_counts
from roofline.readers.nsys.timeline import read_timeline
import needs
from test_engines import assert_same_rows
from test_nsys_join import MFU, counting

SAXPY = Path(__file__).parent / "data" / "nsys" / "pipit_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


def kernel_sums(path: Path) -> tuple[int, float]:
    """Launches and kernel seconds of a timeline, by SQL on the file."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        n, ns = db.execute("SELECT COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    finally:
        db.close()
    return int(n), ns * 1e-9


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("job")
    ranks = [root / "train.rank0.sqlite", root / "train.rank1.sqlite"]
    shutil.copyfile(MFU, ranks[0])
    shutil.copyfile(SAXPY, ranks[1])
    timeline = read_timeline(MFU)
    counts = root / "counts.parquet"
    kernel_parquet.write(kernel_parquet.to_arrow(counting(timeline, np.arange(len(timeline)))), counts)
    return {"rank0": ranks[0], "rank1": ranks[1], "counts": counts}


def expected_note(*, exact: int, unmatched: int, exact_s: float, unmatched_s: float) -> str:
    total = exact_s + unmatched_s
    return (f"counts joined to {exact + unmatched} timeline launches of 2 timelines: {exact} launches exactly, "
            f"{exact_s / total:.1%} of the time; 0 launches by configuration (the counting run's mean), 0.0% of the "
            f"time; {unmatched} launches unmatched (counts unknown), {unmatched_s / total:.1%} of the time")


def test_each_rank_joins_the_counts_and_the_ranks_stand_side_by_side(job):
    n0, s0 = kernel_sums(job["rank0"])
    n1, s1 = kernel_sums(job["rank1"])
    table = api.read([job["rank0"], job["rank1"], job["counts"]])
    f = table.frame
    assert len(f) == n0 + n1 and n0 == 4010
    runs = f["run"].astype("string")
    assert set(runs) == {"train.rank0.sqlite", "train.rank1.sqlite"}  # as timelines alone are labelled
    rank0, rank1 = f[runs == "train.rank0.sqlite"], f[runs == "train.rank1.sqlite"]
    assert rank0["time_s"].sum() == pytest.approx(s0, rel=1e-12)
    assert rank1["time_s"].sum() == pytest.approx(s1, rel=1e-12)
    # rank 0 takes exactly the counts the join of that timeline alone gives; rank 1 has none
    alone = join_counts(read_timeline(MFU), api.read(job["counts"])).frame
    np.testing.assert_array_equal(rank0["dram_bytes"].to_numpy(), alone["dram_bytes"].to_numpy())
    assert rank0["dram_bytes"].sum() == 1000.0 * n0 * (n0 + 1) / 2  # every launch its own counts, 1000 x (k + 1)
    assert rank1["dram_bytes"].isna().all() and rank1["flops"].isna().all()
    # one match rate for the job, first among the notes, none per rank
    assert table.warnings[0] == expected_note(exact=n0, unmatched=n1, exact_s=s0, unmatched_s=s1)
    assert sum(w.startswith("counts joined to") for w in table.warnings) == 1
    assert table.metrics["match"].astype("string").value_counts().to_dict() == {"exact": n0, "unmatched": n1}


@pytest.mark.parametrize("by", ["name", "phase", "op"])
def test_out_of_core_the_ranks_are_the_in_memory_joins_pooled(job, by, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    done = aggregate_files([job["rank0"], job["rank1"], job["counts"]], by=by,
                           engine=Engine("duckdb", temp_directory=spill))
    counts = api.read(job["counts"])
    joined = []
    for r in (job["rank0"], job["rank1"]):
        frame = join_counts(read_timeline(r), counts).frame
        joined.append(frame.assign(source=pd.Categorical([r.name] * len(frame))))  # as roofline merge names them
    want = kernels.aggregate(kernels.concat(joined), by=by)
    assert_same_rows(done.table.frame, want, by)
    n0, s0 = kernel_sums(job["rank0"])
    n1, s1 = kernel_sums(job["rank1"])
    assert done.files == 2 and done.launches == n0 + n1
    assert done.table.warnings[0] == expected_note(exact=n0, unmatched=n1, exact_s=s0, unmatched_s=s1)
    assert done.table.sources == tuple(str(p) for p in (job["rank0"], job["rank1"], job["counts"]))
    assert not any(spill.iterdir())  # the ranks' tables are gone with their temporary folder


def test_the_command_reads_a_jobs_timelines_with_counts_out_of_core(job, tmp_path):
    out = tmp_path / "job.json"
    code = main(["analyze", str(job["rank0"]), str(job["rank1"]), str(job["counts"]), "--engine", "duckdb",
                 "-m", "h100-sxm", "--json", str(out), "-q"])
    assert code == 0
    doc = json.loads(out.read_text())
    n0, s0 = kernel_sums(job["rank0"])
    n1, s1 = kernel_sums(job["rank1"])
    assert sum(k["launches"] for k in doc["kernels"]) == n0 + n1
    assert sum(k["time_s"] for k in doc["kernels"]) == pytest.approx(s0 + s1, rel=1e-12)
    saxpy = [k for k in doc["kernels"] if k["name"].startswith("saxpy(")]
    assert len(saxpy) == 1 and saxpy[0]["flops"]["total"] is None  # unmatched: unknown, never zero
    flash = [k for k in doc["kernels"] if k["name"].startswith("void flash::flash_fwd_kernel")]
    assert flash and all(k["flops"]["total"] > 0 for k in flash)


def test_timelines_for_a_dask_cluster_and_two_of_one_name_are_refused(job, tmp_path):
    with pytest.raises(InputError, match="may not see"):
        aggregate_files([job["rank0"], job["rank1"], job["counts"]], engine="dask://127.0.0.1:1")
    other = tmp_path / "elsewhere"
    other.mkdir()
    twin = other / job["rank0"].name
    shutil.copyfile(job["rank0"], twin)
    with pytest.raises(InputError, match="two timelines of the same name"):
        aggregate_files([job["rank0"], twin, job["counts"]], engine="duckdb")


def _match(args: list[str], out: Path) -> dict:
    assert main(["analyze", *args, "--json", str(out), "-q"]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("ranks", [["rank0"], ["rank0", "rank1"]])
def test_the_json_match_block_out_of_core_is_the_in_memory_one(job, ranks, tmp_path):
    """The JSON's ``match`` block (launches and seconds matched exactly, by configuration, unmatched) is
    written out of core as in memory, from the per-launch match the rank tables carry; the counts and
    times by hand: rank 0 matches every launch, rank 1 (another program) none."""
    inputs = [str(job[r]) for r in ranks] + [str(job["counts"])]
    memory = _match(inputs, tmp_path / "memory.json")
    out_of_core = _match([*inputs, "--engine", "duckdb"], tmp_path / "duckdb.json")
    n0, s0 = kernel_sums(job["rank0"])
    n1, s1 = kernel_sums(job["rank1"]) if "rank1" in ranks else (0, 0.0)
    want = {"exact": n0, "configuration": 0, "unmatched": n1}
    for doc in (memory, out_of_core):
        assert doc["match"]["launches"] == want
        assert doc["match"]["time_s"]["exact"] == pytest.approx(s0, rel=1e-12)
        assert doc["match"]["time_s"]["unmatched"] == pytest.approx(s1, rel=1e-12)
        assert doc["match"]["time_s"]["configuration"] == 0.0
        rate = [n for n in doc["notes"] if n.startswith("counts joined to")]
        where = " of 2 timelines" if len(ranks) == 2 else ""  # one timeline: no "of 1 timelines"
        assert rate == [f"counts joined to {n0 + n1} timeline launches{where}: {n0} launches exactly, "
                        f"{s0 / (s0 + s1):.1%} of the time; 0 launches by configuration (the counting run's mean), "
                        f"0.0% of the time; {n1} launch{'es' if n1 != 1 else ''} unmatched (counts unknown), "
                        f"{s1 / (s0 + s1):.1%} of the time"]
    plain = _match([str(job["rank0"]), str(job["rank1"]), "--engine", "duckdb"], tmp_path / "plain.json")
    assert "match" not in plain  # timelines without counts: nothing was matched


def test_a_jobs_joined_rank_tables_give_the_match_rate_on_every_engine(job, tmp_path):
    """Each rank's joined table written once (--parquet), then the job read out of core: the engines sum
    the tables' per-launch match (a fine key), by DuckDB and on a Dask cluster alike; a rank set with a
    table that was not joined has no match rate."""
    folder = tmp_path / "tables"
    folder.mkdir()
    for rank in ("rank0", "rank1"):
        assert main(["analyze", str(job[rank]), str(job["counts"]), "--parquet",
                     str(folder / f"train.{rank}.parquet"), "-q"]) == 0
    n0, s0 = kernel_sums(job["rank0"])
    n1, s1 = kernel_sums(job["rank1"])
    done = aggregate_files([folder], by="name", engine="duckdb")
    assert done.match is not None and done.match.launches == {"exact": n0, "configuration": 0, "unmatched": n1}
    assert done.match.time_s["exact"] == pytest.approx(s0, rel=1e-12)
    assert done.match.time_s["unmatched"] == pytest.approx(s1, rel=1e-12)
    assert done.table.warnings[0].startswith(f"counts joined to {n0 + n1} timeline launches of 2 kernel tables: ")
    by_op = aggregate_files([folder], by="op", engine="duckdb")  # the groups sum over the match key
    assert by_op.match is not None and by_op.match.launches == done.match.launches
    # DuckDB sums in parallel, in no fixed order: the seconds agree to rounding, not bit for bit
    assert by_op.match.time_s == pytest.approx(done.match.time_s, rel=1e-12)
    doc = _match([str(folder), "--engine", "duckdb"], tmp_path / "tables.json")
    assert doc["match"]["launches"] == {"exact": n0, "configuration": 0, "unmatched": n1}
    distributed = needs.dask()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.split("://", 1)[1]
        on_dask = aggregate_files([folder], by="name", engine=address)
    assert on_dask.match is not None and on_dask.match.launches == done.match.launches
    assert on_dask.match.time_s == pytest.approx(done.match.time_s, rel=1e-12)
    assert_same_rows(on_dask.table.frame, done.table.frame, "name")
    alone = folder / "train.rank2.parquet"  # a timeline's table without counts: not joined
    assert main(["analyze", str(job["rank1"]), "--parquet", str(alone), "-q"]) == 0
    assert aggregate_files([folder], by="name", engine="duckdb").match is None


def test_the_json_replay_block_out_of_core_is_the_in_memory_one(job, tmp_path):
    """Production against Nsight Compute's replay (the JSON's ``replay`` block) out of core, by DuckDB from the
    timelines and on a Dask cluster from the rank tables, as in memory. By hand: rank 0's n0 launches each
    found their counts, whose replay time is 1 ms (tests/test_nsys_join.py's counting run), so production is
    rank 0's kernel seconds by SQL against n0 ms; rank 1's n1 launches are unmatched and left out."""
    inputs = [str(job["rank0"]), str(job["rank1"]), str(job["counts"]), "-m", "h100-sxm"]
    memory = _match(inputs, tmp_path / "memory.json")["replay"]
    duck = _match([*inputs, "--engine", "duckdb"], tmp_path / "duckdb.json")["replay"]
    n0, s0 = kernel_sums(job["rank0"])
    n1, _ = kernel_sums(job["rank1"])
    for block in (memory, duck):
        assert block["launches"] == n0 and block["left_out"] == n1
        assert block["time_s"] == pytest.approx(s0, rel=1e-12)
        assert block["replay_time_s"] == pytest.approx(n0 * 1e-3, rel=1e-12)
    # per kernel and per class (the bound of the same analysis): the same rows, to DuckDB's rounding
    assert [c["bound"] for c in duck["classes"]] == [c["bound"] for c in memory["classes"]]
    assert [c["launches"] for c in duck["classes"]] == [c["launches"] for c in memory["classes"]]
    assert [c["time_s"] for c in duck["classes"]] == pytest.approx([c["time_s"] for c in memory["classes"]], rel=1e-12)
    assert {k["name"]: k["launches"] for k in duck["kernels"]} == {k["name"]: k["launches"] for k in memory["kernels"]}
    folder = tmp_path / "tables"
    folder.mkdir()
    for rank in ("rank0", "rank1"):
        assert main(["analyze", str(job[rank]), str(job["counts"]), "--parquet",
                     str(folder / f"train.{rank}.parquet"), "-q"]) == 0
    distributed = needs.dask()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.split("://", 1)[1]
        on_dask = _match([str(folder), "--engine", address, "-m", "h100-sxm"], tmp_path / "dask.json")["replay"]
    assert (on_dask["launches"], on_dask["left_out"]) == (n0, n1)
    assert on_dask["time_s"] == pytest.approx(s0, rel=1e-12)
    assert on_dask["replay_time_s"] == pytest.approx(n0 * 1e-3, rel=1e-12)


def test_out_of_core_by_phase_has_no_replay_block_and_says_why(job, tmp_path, capsys):
    out = tmp_path / "phase.json"
    assert main(["analyze", str(job["rank0"]), str(job["counts"]), "--engine", "duckdb", "--by", "phase",
                 "--json", str(out)]) == 0
    assert "replay" not in json.loads(out.read_text())
    assert "production against replay time is summed per kernel out of core" in capsys.readouterr().err

"""Where a job's time went across its ranks (issue 35, part 6): one Nsight Systems timeline per rank,
each broken down alone and combined across ranks by DuckDB or on a Dask cluster.

The ranks are real: the 2-process export tests/data/nsys/nsysai_mfu_before (process 144 on GPU 0,
process 145 on GPU 1) split into one file per process by SQL ``DELETE`` on copies. Each rank's rows
must be ``api.breakdown`` of that file alone; the whole-run wall time is checked against SQL on the
split file; the statistics across ranks are computed here by hand from the per-file breakdowns."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest

import needs
from roofline import api
from roofline.analysis.breakdown import Breakdown
from roofline.analysis.rank_breakdown import RankBreakdown
from roofline.cli.app import main
from roofline.errors import InputError

DATA = Path(__file__).parent / "data"
MFU = DATA / "nsys" / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"
CLOVERLEAF = DATA / "nsys" / "pipit_cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite"
CSV = DATA / "ncu" / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
PIDS = (144, 145)


def split_by_process(source: Path, folder: Path) -> list[Path]:
    """One copy of ``source`` per process of :data:`PIDS`, every row of another process deleted from each
    table that names its process (``globalPid``, or ``globalTid``: the pid is bits 24-47 of both)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for rank, pid in enumerate(PIDS):
        path = folder / f"job.{rank}.sqlite"
        shutil.copyfile(source, path)
        db = sqlite3.connect(path)
        try:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                column = next((c for c in ("globalPid", "globalTid") if c in columns), None)
                if column is not None:
                    db.execute(f"DELETE FROM {table} WHERE (({column} >> 24) & 16777215) != ?", (pid,))
            db.commit()
        finally:
            db.close()
        out.append(path)
    return out


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return split_by_process(MFU, tmp_path_factory.mktemp("ranks"))


@pytest.fixture(scope="module")
def alone(ranks: list[Path]) -> dict[str, dict[str, Breakdown]]:
    """Each rank file's own breakdown, per window kind."""
    return {w: {f.name: api.breakdown(api.read([f]), window=w) for f in ranks} for w in ("run", "step")}


def run_wall_ns(path: Path, device: int) -> int:
    """The device's whole-run window by SQL: first start to last end of its kernels, copies and memsets."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (first, last), = db.execute(
            " UNION ALL ".join(f'SELECT start, "end" FROM {t} WHERE deviceId = {device}' for t in (
                "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"))
            .join(("SELECT MIN(start), MAX(\"end\") FROM (", ")"))).fetchall()
    finally:
        db.close()
    return last - first


def test_each_rank_file_holds_one_process_and_gpu(ranks: list[Path]) -> None:
    for rank, path in enumerate(ranks):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        devices = db.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
        db.close()
        assert devices == [(rank,)]
    # the split keeps each GPU's whole-run window: 299,848,812 and 298,661,551 ns on the whole export
    # (tests/test_nsys_breakdown.py), by SQL here on the split files
    assert [run_wall_ns(p, d) for d, p in enumerate(ranks)] == [299_848_812, 298_661_551]


def _rank_windows(split: RankBreakdown, rank: str) -> dict[tuple[int, int], dict[str, object]]:
    """One rank's windows from the long-form rows, keyed by (device, start_ns)."""
    out: dict[tuple[int, int], dict[str, object]] = {}
    for r in split.rows[split.rows["rank"] == rank].itertuples(index=False):
        w = out.setdefault((int(r.device), int(r.start_ns)), {"name": r.name, "kernel": {}, "communication": {}, "idle": {}})
        if r.category in ("kernel", "communication", "idle"):
            w[r.category][r.part] = r.seconds  # type: ignore[index]
        else:
            w[r.category] = r.seconds
    return out


@pytest.mark.parametrize("window", ["run", "step"])
def test_each_ranks_rows_are_its_file_broken_down_alone(ranks: list[Path], alone: dict, window: str) -> None:
    split = api.breakdown(ranks, window=window)
    assert isinstance(split, RankBreakdown) and split.ranks == tuple(f.name for f in ranks) and split.engine == "DuckDB"
    for f in ranks:
        got, want = _rank_windows(split, f.name), alone[window][f.name].windows
        assert len(got) == len(want) > 0
        for w in want:
            row = got[(w.device, w.start_ns)]
            assert row["name"] == w.name and row["wall"] == w.wall_s
            assert row["kernel"] == dict(w.kernel_s) and row["communication"] == dict(w.communication_s)
            assert row["idle"] == dict(w.idle_s)
            assert row["overlap"] == w.overlap_s and row["hidden communication"] == w.hidden_communication_s


def expected(alone: dict[str, Breakdown]) -> dict[str, dict[str, object]]:
    """Per window key, by hand: every GPU's window of that key (run, or the step's number) from the
    per-file breakdowns, and the statistics over them."""
    members: dict[str, list[tuple[str, object]]] = {}
    for rank, split in alone.items():
        for w in split.windows:
            key = w.name.rsplit(" #", 1)[1] if split.window == "step" else w.name
            members.setdefault(key, []).append((rank, w))
    out = {}
    for key, ws in members.items():
        walls = [w.wall_s for _, w in ws]
        top = max(range(len(ws)), key=lambda i: walls[i])  # the first of equals: ranks in order
        idle: dict[str, float] = {}
        for _, w in ws:
            for cause, s in w.idle_s.items():
                idle[cause] = idle.get(cause, 0.0) + s
        out[key] = {
            "members": len(ws),
            **{q: (statistics.fmean(v), min(v), max(v)) for q, v in (
                ("wall", walls), ("kernel", [w.kernel_total_s for _, w in ws]),
                ("communication", [w.communication_total_s for _, w in ws]), ("idle", [w.idle_total_s for _, w in ws]))},
            "median": statistics.median(walls), "straggler": (ws[top][0], ws[top][1].device), "idle_s": idle,
        }
    return out


@pytest.mark.parametrize("window", ["run", "step"])
def test_statistics_across_ranks_by_hand(ranks: list[Path], alone: dict, window: str) -> None:
    split = api.breakdown(ranks, window=window)
    want = expected(alone[window])
    assert [w.key for w in split.windows] == sorted(want, key=lambda k: int(k) if k.isdigit() else 0)
    for w in split.windows:
        e = want[w.key]
        assert w.members == e["members"]
        for q in ("wall", "kernel", "communication", "idle"):
            s = getattr(w, q)
            assert (s.mean_s, s.min_s, s.max_s) == pytest.approx(e[q], rel=1e-12, abs=1e-15), (w.key, q)
        assert w.median_wall_s == pytest.approx(e["median"], rel=1e-12)
        assert (w.straggler_rank, w.straggler_device) == e["straggler"]
        assert w.straggler_excess_s == pytest.approx(e["wall"][2] - e["median"], rel=1e-9, abs=1e-15)
        assert w.parts["idle"] == pytest.approx(e["idle_s"], rel=1e-12)


def test_the_run_straggler_of_the_split_export(ranks: list[Path]) -> None:
    """By hand from the SQL figures: walls 299,848,812 and 298,661,551 ns; GPU 0 (job.0) is the
    straggler, 593,630.5 ns above the median (their mean, two members)."""
    (w,) = api.breakdown(ranks, window="run").windows
    assert (w.straggler_rank, w.straggler_device) == ("job.0.sqlite", 0)
    assert w.wall.max_s == pytest.approx(0.299848812, rel=1e-12)
    assert w.straggler_excess_s == pytest.approx(593_630.5e-9, rel=1e-9)


def test_a_folder_of_rank_timelines(ranks: list[Path]) -> None:
    by_files = api.breakdown(ranks, window="step")
    by_folder = api.rank_breakdown(ranks[0].parent, window="step")
    assert by_folder.windows == by_files.windows


def test_dask_runs_one_task_per_file_and_agrees_with_duckdb(ranks: list[Path]) -> None:
    distributed = needs.dask()
    want = api.breakdown(ranks, window="step")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.split("://", 1)[1]
        got = api.breakdown(ranks, window="step", engine=address)
    assert got.engine.startswith("Dask at tcp://")
    assert got.windows == want.windows
    assert got.rows.sort_values(["rank", "start_ns", "category", "part"]).reset_index(drop=True).equals(
        want.rows.sort_values(["rank", "start_ns", "category", "part"]).reset_index(drop=True))


def test_cli_end_to_end(ranks: list[Path], alone: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ranks.json"
    assert main(["analyze", *map(str, ranks), "--breakdown", "step", "--top", "3", "--json", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "across 2 ranks: each step" in printed and "vs median" in printed and "combined by DuckDB" in printed
    doc = json.loads(out.read_text())
    assert doc["schema"] == "roofline.breakdown/1"
    block = doc["breakdown_ranks"]
    want = expected(alone["step"])
    assert len(block["windows"]) == len(want)
    for w in block["windows"]:
        e = want[w["key"]]
        assert (w["wall"]["mean_s"], w["wall"]["min_s"], w["wall"]["max_s"]) == pytest.approx(e["wall"], rel=1e-12)
        assert (w["straggler"]["rank"], w["straggler"]["device"]) == e["straggler"]
        assert w["idle_s"] == pytest.approx(e["idle_s"], rel=1e-12)
    for entry, f in zip(block["ranks"], ranks):
        assert entry["rank"] == f.name
        assert [w["wall_s"] for w in entry["windows"]] == [w.wall_s for w in alone["step"][f.name].windows]


def test_without_breakdown_several_timelines_are_stacked_as_before(ranks: list[Path]) -> None:
    table = api.read(ranks)
    assert table.activity is None and table.frame["run"].nunique() == 2  # today's stacked table
    with pytest.raises(InputError, match="needs a timeline"):
        api.breakdown(table)


@pytest.mark.parametrize("files, args, message", [
    (lambda r: [*r, CSV], [], "not a timeline"),
    (lambda r: r, ["--engine", "spark"], "unknown engine 'spark'"),
    (lambda r: r, ["--engine", "pandas"], "combined by an engine"),
    (lambda r: r, ["--csv", "x.csv"], "--csv needs one table of kernels"),
    (lambda r: r, ["-m", "h100-sxm"], "--machine needs one table of kernels"),  # never silently ignored
    (lambda r: r, ["--by", "phase", "--work", "instructions"], "--by, --work need one table of kernels"),
    (lambda r: [*r, CLOVERLEAF], [], "perlmutter-cloverleaf-cuda.sqlite: .*no repeating outermost NVTX range"),
])
def test_refusals_are_one_clear_message(ranks: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        files, args, message) -> None:
    argv = ["analyze", *map(str, files(ranks)), "--breakdown", "step", "-q",
            *[str(tmp_path / a) if a.endswith(".csv") else a for a in args]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert re.search(message, err), err


def test_unreachable_dask_scheduler_is_one_clear_error(ranks: list[Path]) -> None:
    needs.dask()
    from roofline.engine import Engine
    from roofline.errors import RooflineError

    engine = Engine("dask", address="tcp://127.0.0.1:9", timeout_s=1.0)
    with pytest.raises(RooflineError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9 within 1 s"):
        api.rank_breakdown(ranks, window="run", engine=engine)

"""Production time against Nsight Compute's replay time (roofline.analysis.replay), on a real timeline.

The timeline is the real nsys 2026.2 export of tests/data/nsys/nsysai_mfu_before (4010 launches, 27 kernels;
PROVENANCE.md there); the counting profile is built from its own launches (tests/test_nsys_join.py's
``counting``: each launch's replay time 1 ms). Production seconds per kernel are summed by SQL on the file.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3

import numpy as np
import pytest

from roofline import api
from roofline.analysis.replay import replay_times
from roofline.cli.app import main
from roofline.readers import kernel_parquet
from roofline.readers.nsys.join import join_counts
from roofline.readers.nsys.timeline import read_timeline
from test_nsys_join import MFU, counting


def production_by_kernel() -> dict[str, tuple[int, float]]:
    """Launches and production seconds per kernel name, by SQL on the timeline."""
    db = sqlite3.connect(f"file:{MFU}?mode=ro", uri=True)
    try:
        rows = db.execute('SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k '
                          "JOIN StringIds s ON k.demangledName = s.id GROUP BY 1").fetchall()
    finally:
        db.close()
    return {name: (int(n), ns * 1e-9) for name, n, ns in rows}


@pytest.fixture(scope="module")
def timeline():  # type: ignore[no-untyped-def]
    return read_timeline(MFU)


def test_every_launch_matched_per_kernel_and_per_class(timeline) -> None:  # type: ignore[no-untyped-def]
    joined = join_counts(timeline, counting(timeline, np.arange(len(timeline))))
    analysis = api.analyze(joined, machine="h100-sxm")
    replay = replay_times(joined, analysis)
    assert replay is not None and replay.left_out == 0
    want = production_by_kernel()
    assert replay.launches == 4010 == sum(n for n, _ in want.values())
    assert round(replay.time_s * 1e9) == 535_200_650  # SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL
    assert replay.replay_time_s == pytest.approx(4010 * 1e-3, rel=1e-12)
    assert replay.ratio == pytest.approx(0.535_200_650 / 4.010, rel=1e-12)
    got = {r.kernel_name: r for r in replay.kernels.itertuples(index=False)}
    assert set(got) == set(want)
    for name, (n, seconds) in want.items():
        assert got[name].launches == n
        assert got[name].time_s == pytest.approx(seconds, rel=1e-12)
        assert got[name].replay_time_s == pytest.approx(n * 1e-3, rel=1e-12)
        assert got[name].ratio == pytest.approx(seconds / (n * 1e-3), rel=1e-12)
    flash = next(name for name in want if name.startswith("void flash::flash_fwd_kernel"))
    assert got[flash].ratio == pytest.approx(0.272_317_378 / 0.068, rel=1e-12)  # 4.00x: slower in production
    assert list(replay.kernels["time_s"]) == sorted(replay.kernels["time_s"], reverse=True)
    # the classes are the analysis's bounds, and they add up to the whole
    bound = dict(zip(analysis.frame["kernel_name"].astype(str), analysis.frame["bound"].astype("string").fillna("unknown")))
    for r in replay.classes.itertuples(index=False):
        members = [name for name in want if bound[name] == r.bound]
        assert r.launches == sum(want[m][0] for m in members)
        assert r.time_s == pytest.approx(sum(want[m][1] for m in members), rel=1e-12)
    # every launch's counts are 3(k+1) FLOPs for 1000(k+1) DRAM bytes: 0.003 FLOP/B, far left of any ridge
    assert list(replay.classes["bound"]) == ["dram"] and replay.classes["launches"].sum() == 4010


def test_unmatched_launches_are_left_out_never_zero(timeline) -> None:  # type: ignore[no-untyped-def]
    """A counting run of the first 0.1 s less FlashAttention's launches: the unmatched launches have no
    replay time and are left out of both sums; FlashAttention has no row."""
    start = timeline.metrics["start_ns"].to_numpy()
    names = timeline.frame["kernel_name"].astype(str).to_numpy()
    flash = np.array(["flash_fwd" in n for n in names])
    sample = np.flatnonzero((start < start.min() + 100_000_000) & ~flash)
    joined = join_counts(timeline, counting(timeline, sample))
    replay = replay_times(joined)
    assert replay is not None
    kind = joined.metrics["match"].astype(str).to_numpy()
    time = joined.frame["time_s"].to_numpy(dtype=float)
    assert replay.left_out == int((kind == "unmatched").sum()) >= 68
    assert replay.launches == int((kind != "unmatched").sum())
    assert replay.time_s == pytest.approx(float(time[kind != "unmatched"].sum()), rel=1e-12)
    assert not any(str(n).startswith("void flash::") for n in replay.kernels["kernel_name"])
    assert (replay.kernels["replay_time_s"] > 0).all()
    assert replay.classes.empty  # no analysis given: no classes


def test_tables_that_are_not_joined_have_none(timeline) -> None:  # type: ignore[no-untyped-def]
    assert replay_times(timeline) is None
    assert replay_times(api.read(api.example_files()[0], fp16="paper")) is None


def test_the_command_prints_it_and_writes_it_in_the_json(timeline, tmp_path) -> None:  # type: ignore[no-untyped-def]
    counts = tmp_path / "counts.parquet"
    kernel_parquet.write(kernel_parquet.to_arrow(counting(timeline, np.arange(len(timeline)))), counts)
    out = tmp_path / "a.json"
    stdout = tmp_path / "out.txt"
    with stdout.open("w") as fh:
        with contextlib.redirect_stdout(fh):
            assert main(["analyze", str(MFU), str(counts), "-m", "h100-sxm", "--json", str(out), "-q"]) == 0
    doc = json.loads(out.read_text())
    replay = doc["replay"]
    assert replay["launches"] == 4010 and replay["left_out"] == 0
    assert replay["replay_time_s"] == pytest.approx(4.010, rel=1e-12)
    assert replay["ratio"] == pytest.approx(0.535_200_650 / 4.010, rel=1e-12)
    want = production_by_kernel()
    assert {k["name"]: k["launches"] for k in replay["kernels"]} == {name: n for name, (n, _) in want.items()}
    assert sum(c["launches"] for c in replay["classes"]) == 4010
    assert "Production time against Nsight Compute's replay" in stdout.read_text()
    alone = tmp_path / "b.json"
    assert main(["analyze", str(MFU), "--json", str(alone), "-q"]) == 0
    assert "replay" not in json.loads(alone.read_text())

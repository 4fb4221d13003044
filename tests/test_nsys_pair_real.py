"""A real public pair: an Nsight Systems timeline and an Nsight Compute ``--set full`` profile of the same
program, joined (tests/data/nsys/hac_cuda_t4_pair, PROVENANCE.md).

Ten images are each convolved (``convoluteGPU``) and pooled (``poolGPU``) on a Tesla T4; every image has its
own size, so each of the 20 launches has its own grid, and both files hold them in the same order. The
truths come from SQL on the timeline and from the profile's cells, and one from the program itself:
``convoluteGPU`` executes 27 FFMA per output pixel, and the output's size is the device-to-host copy that
follows the launch in the timeline. A launch paired with another image's counts breaks it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from ncu_routes import same_table_both_ways

from roofline import api
from roofline.cli.app import main
from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers import read_profile
from roofline.readers.nsys.join import join_counts
from roofline.readers.nsys.timeline import read_timeline

pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")

DATA = Path(__file__).parent / "data" / "nsys" / "hac_cuda_t4_pair"
TIMELINE = DATA / "report1.sqlite"
PROFILE = DATA / "opdracht_cuda.ncu-rep"
CONV = "convoluteGPU(unsigned char*, unsigned char*, int, int, float*)"
POOL = "poolGPU(unsigned char*, unsigned char*, unsigned char*, unsigned char*, int, int, int)"
#: The profile's ``gpu__time_duration.sum`` per launch, in launch order (ns; ``ncu --import ... --page raw
#: --csv --print-units base``).
REPLAY_NS = [306_784, 133_248, 140_640, 91_104, 57_312, 36_608, 171_104, 105_792, 58_848, 39_616,
             157_024, 101_728, 166_176, 102_528, 183_072, 92_832, 100_800, 71_168, 97_312, 68_512]
#: The tables of nsys's export that report1.sqlite leaves out (PROVENANCE.md).
DROPPED = {"SAMPLING_CALLCHAINS", "COMPOSITE_EVENTS", "OSRT_CALLCHAINS", "SCHED_EVENTS", "OSRT_API",
           "TARGET_INFO_SYSTEM_ENV"}
needs_nsys = pytest.mark.skipif(shutil.which("nsys") is None, reason="needs Nsight Systems' nsys (bash .ci/install-nsys)")


def sql(query: str, path: Path = TIMELINE) -> list[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def kernels_by_sql() -> list[tuple]:
    """(start, name, grid, duration in ns) of each launch, in start order."""
    return sql('SELECT k.start, s.value, k.gridX, k.gridY, k.gridZ, k."end" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k '
               "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start")


def output_pixels() -> list[int]:
    """For each convoluteGPU launch, the pixels of the convolution it wrote: the bytes / 4 of the first
    device-to-host copy (copyKind 2) after it."""
    return [sql(f"SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND start > {start} "
                "ORDER BY start LIMIT 1")[0][0] // 4 for start, name, *_ in kernels_by_sql() if name == CONV]


def test_the_timeline_against_sql():
    """nsys 2020.4's capture, exported by 2023.4: 20 launches, each with its name, grid and time."""
    rows = kernels_by_sql()
    t = read_timeline(TIMELINE)
    f = t.frame
    assert len(f) == len(rows) == 20
    assert f["kernel_name"].astype(str).tolist() == [r[1] for r in rows] == [CONV, POOL] * 10
    assert f["grid"].astype(str).tolist() == [f"({x}, {y}, {z})" for _, _, x, y, z, _ in rows]
    assert set(f["block"].astype(str)) == {"(32, 32, 1)"}
    assert (np.rint(f["time_s"].to_numpy() * 1e9).astype(np.int64) == [r[5] for r in rows]).all()
    assert sum(r[5] for r in rows) == 2_330_168
    assert output_pixels()[0] == 895_878  # (w - 2) x (h - 2) of the first image


def test_the_profile_by_hand():
    """The --set full report (ncu 2020.3.1): time, DRAM and L2 bytes from the cells; the convolution's
    FLOPs from the program: 27 FFMA per output pixel, 2 FLOPs each, and no other floating-point instruction."""
    f = widened(read_profile(PROFILE).frame)
    assert f["kernel_name"].astype(str).tolist() == [CONV, POOL] * 10
    np.testing.assert_allclose(f["time_s"], np.array(REPLAY_NS) * 1e-9, rtol=1e-12)
    assert f.loc[0, "dram_bytes"] == 7_524_864 + 2_077_664
    assert f.loc[0, "l2_bytes"] == 339_044 * 32
    conv = f[f["kernel_name"] == CONV]
    np.testing.assert_allclose(conv["fp32_flops"], 2 * 27 * np.array(output_pixels()), rtol=1e-9)
    assert (conv["flops"] == conv["fp32_flops"]).all() and (f["fp64_flops"] == 0).all()


def test_both_routes_read_the_profile_alike():
    """NVIDIA's ncu_report module and the real ``ncu --import --csv`` give one table for a 2020.3 report."""
    by_module, by_cli = same_table_both_ways(PROFILE)
    assert set(by_cli["process_id"]) == {14013}  # the session page's process id


def test_the_join_gives_each_launch_its_own_image_s_counts():
    """Each timeline launch takes the counts of the same launch in the profile and keeps its own time."""
    timeline, profile = read_timeline(TIMELINE), read_profile(PROFILE)
    joined = join_counts(timeline, profile)
    f, p = joined.frame, widened(profile.frame)
    assert joined.metrics["match"].astype(str).tolist() == ["exact"] * 20
    np.testing.assert_array_equal(f["time_s"].to_numpy(), timeline.frame["time_s"].to_numpy())
    np.testing.assert_allclose(joined.metrics["replay_time_s"], np.array(REPLAY_NS) * 1e-9, rtol=1e-12)
    for column in ("dram_bytes", "l2_bytes", "fp32_flops"):
        np.testing.assert_array_equal(f[column].to_numpy(float), p[column].to_numpy(float))
    conv = f[f["kernel_name"].astype(str) == CONV]
    np.testing.assert_allclose(conv["fp32_flops"], 2 * 27 * np.array(output_pixels()), rtol=1e-9)
    assert f.loc[0, "dram_bytes"] == 7_524_864 + 2_077_664


def test_the_counting_run_s_clock_is_not_the_program_s():
    """ncu ran the profile at its default clock control, the SM locked to the T4's base clock
    (``sm__cycles_elapsed.avg.per_second`` 584,091,738.81 Hz on the first launch), the program under
    nsys at whatever the GPU boosted to (up to 1.59 GHz). The joined launches keep that clock as
    ``replay_sm_clock_hz``, not as their own, so the ceilings stay the T4's at 1.59 GHz: 40 SMs x 64 FP32
    lanes x 2 x 1.59 GHz = 8.1408 TFLOP/s, not the 2.99 TFLOP/s the profile alone is scaled to."""
    profile = read_profile(PROFILE)
    joined = join_counts(read_timeline(TIMELINE), profile)
    assert joined.frame["sm_clock_hz"].isna().all()
    assert joined.metrics["replay_sm_clock_hz"].iloc[0] == pytest.approx(584_091_738.81, rel=1e-10)
    np.testing.assert_array_equal(joined.metrics["replay_sm_clock_hz"], widened(profile.frame)["sm_clock_hz"])
    production, replay = api.analyze(joined), api.analyze(profile)
    assert production.machine.sm_clock_hz == 1.59e9
    assert production.machine.compute["fp32"] == pytest.approx(40 * 64 * 2 * 1.59e9, rel=1e-12)
    assert replay.machine.compute["fp32"] == pytest.approx(40 * 64 * 2 * replay.machine.sm_clock_hz, rel=1e-12)
    assert 0.58e9 < replay.machine.sm_clock_hz < 0.59e9
    assert any("are the counting run's, not the program's" in n for n in production.notes)
    assert any(n.startswith("kernel clocks unknown") for n in production.notes)


def test_analyze_the_pair(tmp_path):
    """``roofline analyze TIMELINE PROFILE``: the match rate, production against replay per kernel, and
    where the run's time went, each against SQL and the profile's cells."""
    out = tmp_path / "pair.json"
    assert main(["analyze", str(TIMELINE), str(PROFILE), "--json", str(out), "-q"]) == 0
    d = json.loads(out.read_text())
    assert d["match"]["launches"] == {"exact": 20, "configuration": 0, "unmatched": 0}
    assert d["match"]["time_s"]["exact"] == pytest.approx(2_330_168e-9, rel=1e-12)
    kernels = {k["name"]: k for k in d["replay"]["kernels"]}
    production = {name: sum(r[5] for r in kernels_by_sql() if r[1] == name) for name in (CONV, POOL)}
    assert production == {CONV: 1_465_287, POOL: 864_881}
    for name, replay in ((CONV, sum(REPLAY_NS[0::2])), (POOL, sum(REPLAY_NS[1::2]))):
        assert kernels[name]["launches"] == 10
        assert kernels[name]["time_s"] == pytest.approx(production[name] * 1e-9, rel=1e-12)
        assert kernels[name]["replay_time_s"] == pytest.approx(replay * 1e-9, rel=1e-12)
    assert sum(REPLAY_NS[0::2]) == 1_439_072 and sum(REPLAY_NS[1::2]) == 843_136
    (window,) = d["breakdown"]["windows"]
    copies = dict(sql('SELECT copyKind, sum("end" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY copyKind'))
    assert copies == {1: 2_145_499, 2: 3_464_769}  # host to device, device to host: synchronous, never overlapped
    assert window["communication_s"] == pytest.approx({"memcpy HtoD": 2_145_499e-9, "memcpy DtoH": 3_464_769e-9},
                                                      rel=1e-12)
    assert window["kernel_s"] == pytest.approx({"dram": 2_330_168e-9}, rel=1e-12)
    first, last = sql('SELECT min(s), max(e) FROM (SELECT start s, "end" e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL '
                      'SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY)')[0]
    assert (window["start_ns"], window["end_ns"]) == (first, last)
    busy = 2_330_168 + 2_145_499 + 3_464_769
    assert sum(window["idle_s"].values()) == pytest.approx((last - first - busy) * 1e-9, rel=1e-9)


@needs_nsys
def test_the_derived_export_is_the_real_export(tmp_path):
    """report1.sqlite is nsys's own export of report1.qdrep less six tables (PROVENANCE.md): the real nsys
    exports the report again, every table kept is the same row for row (but the export's own metadata),
    and the report reads as the SQLite does."""
    report = tmp_path / "report1.qdrep"
    report.write_bytes((DATA / "report1.qdrep").read_bytes())
    export = tmp_path / "full.sqlite"
    nsys = shutil.which("nsys")
    assert nsys is not None
    import subprocess

    subprocess.run([nsys, "export", "--type", "sqlite", "-o", str(export), str(report)], check=True,
                   capture_output=True, timeout=300)
    tables = "SELECT name FROM sqlite_master WHERE type = 'table'"
    ours, theirs = {r[0] for r in sql(tables)}, {r[0] for r in sql(tables, export)}
    assert theirs - ours == DROPPED and ours <= theirs
    for table in sorted(ours - {"META_DATA_EXPORT"}):
        query = f'SELECT * FROM "{table}" ORDER BY 1, 2'
        assert sql(query) == sql(query, export), table
    from_report = api.read([report])
    assert from_report.frame["kernel_name"].astype(str).tolist() == [CONV, POOL] * 10
    np.testing.assert_array_equal(from_report.frame["time_s"], read_timeline(TIMELINE).frame["time_s"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.sqlite", "report1.qdrep"]  # nothing beside it

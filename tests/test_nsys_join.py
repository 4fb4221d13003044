"""A timeline's launches joined with the counts of a profile of the same program (roofline.readers.nsys.join).

The timeline is the real public export tests/data/nsys/nsysai_mfu_before (nsys 2026.2, two H100s, 4010
launches; PROVENANCE.md there). Its counting profiles are kernel tables built from the timeline's own
launches (their names, grids, blocks, devices, NVTX ranges), each launch given counts that say which launch
they belong to (``dram_bytes`` = 1000 x (its place in start order + 1)), so that every
pairing can be checked; what a launch should receive is worked out in the tests by the written rule, with
pandas, and totals with SQL on the file. A real public pair, a timeline and an Nsight Compute profile of
the same program, is joined in tests/test_nsys_pair_real.py.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import InputError
from roofline.kernels import KernelTable, validate
from roofline.kernels.schema import empty_frame
from roofline.readers import kernel_parquet
from roofline.readers.nsys.join import join_counts
from roofline.readers.nsys.timeline import read_timeline

DATA = Path(__file__).parent / "data" / "nsys"
MFU = DATA / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"
MOCK = DATA / "nsysai_mock" / "mock.sqlite"
KEYS = ["kernel_name", "grid", "block", "device"]


@pytest.fixture(scope="module")
def timeline() -> KernelTable:
    return read_timeline(MFU)


def sql(query: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{MFU}?mode=ro", uri=True)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def plain(table: KernelTable) -> pd.DataFrame:
    """The timeline's identity columns as text, one row per launch in start order."""
    f = table.frame
    return pd.DataFrame({k: f[k].astype("string") for k in ("kernel_name", "grid", "block", "phase", "op")}
                        | {"device": f["device"].astype("Int64"), "time_s": f["time_s"].to_numpy()})


def counting(timeline: KernelTable, rows: np.ndarray, *, names: list[str] | None = None, seed: int = 7) -> KernelTable:
    """A counting profile of the timeline's launches ``rows`` (in start order, their launch ids 0, 1, ...),
    its rows shuffled (order is the launch id's, not the row's), replay times of 1 ms."""
    f = plain(timeline).iloc[rows]
    n = len(rows)
    frame = empty_frame(n)
    for k in ("grid", "block", "phase", "op"):
        frame[k] = f[k].to_numpy()
    frame["kernel_name"] = names if names is not None else f["kernel_name"].to_numpy()
    frame["device"] = f["device"].to_numpy()
    frame["launch_id"] = pd.array(np.arange(n), dtype="Int64")
    frame["time_s"] = 1e-3
    frame["dram_bytes"] = 1000.0 * (rows + 1)
    frame["fp32_flops"] = frame["flops"] = 3.0 * (rows + 1)
    frame["flops_partial"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    frame["compute_capability"] = "9.0"
    frame = frame.iloc[np.random.default_rng(seed).permutation(n)].reset_index(drop=True)
    return KernelTable(validate(frame, where="built"), sources=("counts",))


def test_a_whole_run_pairs_every_launch_with_its_own_counts(timeline):
    n = len(timeline)
    assert n == sql("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0] == 4010
    joined = join_counts(timeline, counting(timeline, np.arange(n)))
    # each launch got the counts of the same launch: its place in start order, read back
    assert (joined.frame["dram_bytes"].to_numpy() == 1000.0 * (np.arange(n) + 1)).all()
    assert (joined.frame["flops"].to_numpy() == 3.0 * (np.arange(n) + 1)).all()
    # time is the timeline's (535,200,650 ns: SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL)
    assert round(float(joined.frame["time_s"].sum()) * 1e9) == sql(
        'SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL')[0][0] == 535_200_650
    assert (joined.metrics["replay_time_s"] == 1e-3).all() and (joined.metrics["match"] == "exact").all()
    assert joined.warnings[0].startswith("counts joined to 4010 timeline launches: 4010 launches exactly, 100.0%")
    assert not any("no counters" in w for w in joined.warnings)
    assert (joined.metrics["start_ns"].to_numpy() == timeline.metrics["start_ns"].to_numpy()).all()


def test_pairing_follows_launch_order_not_row_order(timeline):
    """The same counts, shuffled with another seed, and one configuration's launch ids reversed: that
    configuration's launches then pair last-first (what launch order says), the others as before."""
    n = len(timeline)
    counts = counting(timeline, np.arange(n), seed=11)
    f = counts.frame.copy()
    name = "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"
    mine = np.flatnonzero((f["kernel_name"] == name).to_numpy())
    ids = f["launch_id"].to_numpy(dtype=np.int64)
    by_id = mine[np.argsort(ids[mine])]
    ids[by_id] = ids[by_id][::-1]  # the same ids, this kernel's launches in reverse order
    f["launch_id"] = pd.array(ids, dtype="Int64")
    joined = join_counts(timeline, KernelTable(f, sources=("counts",)))
    got = joined.frame["dram_bytes"].to_numpy()
    t = plain(timeline)
    expected = 1000.0 * (np.arange(n) + 1)
    # within each (kernel, grid, block, device, phase, op) of this kernel, the order reverses
    for _, rows in t[t["kernel_name"] == name].groupby(KEYS + ["phase", "op"], dropna=False).groups.items():
        rows = np.sort(np.asarray(rows))
        expected[rows] = expected[rows][::-1] if len(rows) > 1 else expected[rows]
    # SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE s.value = ...
    assert len(mine) == sql("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
                            f"k.demangledName WHERE s.value = '{name}'")[0][0] == 235
    assert (got == expected).all() and not (got == 1000.0 * (np.arange(n) + 1)).all()


def test_a_sample_gives_each_configuration_its_mean(timeline):
    """The counting run profiled only the launches of the window's first 0.1 s, less FlashAttention's (a
    sample, as --nvtx-include or --kernel-name-base would make): launches whose
    configuration and NVTX ranges occur as often in the sample as in the timeline pair exactly; the others
    take the mean per launch of the sample's launches of their configuration and operator, else of their
    configuration; configurations the sample lacks stay unknown."""
    t = plain(timeline)
    start = timeline.metrics["start_ns"].to_numpy()
    sample = np.flatnonzero((start < start.min() + 100_000_000) & ~t["kernel_name"].str.contains("flash_fwd").to_numpy())
    joined = join_counts(timeline, counting(timeline, sample))
    got = joined.frame["dram_bytes"].to_numpy()
    s = t.iloc[sample].assign(bytes=1000.0 * (sample + 1))
    expected = np.full(len(t), np.nan)
    kind = np.full(len(t), "unmatched", dtype=object)
    exact_keys = KEYS + ["phase", "op"]
    in_t = t.groupby(exact_keys, dropna=False).size()
    in_s = s.groupby(exact_keys, dropna=False).size()
    same = in_t.index.intersection(in_s.index)
    same = same[(in_t[same] == in_s[same]).to_numpy()]
    paired = t.set_index(exact_keys).index.isin(same)
    for keys in (KEYS + ["op"], KEYS):
        means = s.groupby(keys, dropna=False)["bytes"].mean()
        open_rows = np.flatnonzero(~paired & (kind == "unmatched"))
        at = t.iloc[open_rows].set_index(keys).index
        held = at.isin(means.index)
        expected[open_rows[held]] = means.reindex(at[held]).to_numpy()
        kind[open_rows[held]] = "configuration"
    kind[paired] = "exact"
    sample_of = {int(r): 1000.0 * (r + 1) for r in sample}
    expected[paired] = [sample_of[int(r)] for r in np.flatnonzero(paired)]  # the sample's own launches
    assert set(np.flatnonzero(paired)) <= set(sample.tolist())
    assert np.allclose(got, expected, equal_nan=True, rtol=1e-12)
    assert (joined.metrics["match"].astype(str).to_numpy() == kind).all()
    counts = {k: int((kind == k).sum()) for k in ("exact", "configuration", "unmatched")}
    assert counts["exact"] > 0 and counts["configuration"] > 0 and counts["unmatched"] > 0
    share = {k: float(t["time_s"][kind == k].sum() / t["time_s"].sum()) for k in counts}
    assert joined.warnings[0] == (
        f"counts joined to 4010 timeline launches: {counts['exact']} launches exactly, {share['exact']:.1%} of the "
        f"time; {counts['configuration']} launches by configuration (the counting run's mean), "
        f"{share['configuration']:.1%} of the time; {counts['unmatched']} launches unmatched (counts unknown), "
        f"{share['unmatched']:.1%} of the time")


def test_a_kernel_the_profile_lacks_keeps_its_time_and_unknown_counts(timeline):
    t = plain(timeline)
    short = sql("SELECT k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                "WHERE s.value = 'flash_fwd_kernel'")
    flash = t["kernel_name"].str.contains("flash_fwd_kernel").to_numpy()
    assert flash.sum() == len(short) == 68
    joined = join_counts(timeline, counting(timeline, np.flatnonzero(~flash)))
    f = joined.frame
    assert f["dram_bytes"][flash].isna().all() and f["flops"][flash].isna().all()  # never invented
    assert (f["dram_bytes"][~flash].to_numpy() == 1000.0 * (np.flatnonzero(~flash) + 1)).all()
    # SELECT sum("end" - start) ... WHERE shortName is flash_fwd_kernel, over the whole sum
    flash_ns = sql('SELECT sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s '
                   "ON s.id = k.shortName WHERE s.value = 'flash_fwd_kernel'")[0][0]
    assert round(float(f["time_s"][flash].sum()) * 1e9) == flash_ns
    assert f"68 launches unmatched (counts unknown), {flash_ns / 535_200_650:.1%} of the time" in joined.warnings[0]


def _as_ncu_prints(name: str) -> str:
    """ncu 2026.2's CSV form of an nsys 2026.2 name: no casts on literals (tests/data/ncu/h200_sections_rep_and_details_export
    shows it: ``RMSNormKernel<(unsigned int)8, ...`` in the report, ``<8, ...`` in the export)."""
    return re.sub(r"\((?:unsigned )?(?:int|long|char|short|bool)\)(?=-?\d)", "", name)


def test_kernel_names_in_the_other_tool_s_forms(timeline):
    t = plain(timeline)
    names = [_as_ncu_prints(str(x)) for x in t["kernel_name"]]
    assert sum(a != b for a, b in zip(names, t["kernel_name"])) > 1000  # the forms differ on most launches
    joined = join_counts(timeline, counting(timeline, np.arange(len(t)), names=names))
    assert (joined.metrics["match"] == "exact").all()
    assert (joined.frame["dram_bytes"].to_numpy() == 1000.0 * (np.arange(len(t)) + 1)).all()
    assert (joined.frame["kernel_name"].astype("string") == t["kernel_name"]).all()  # the timeline's names kept
    # --print-kernel-base function: the function's name alone, as nsys's shortName has it (in start order)
    bare = [r[0] for r in sql("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                              "ORDER BY k.start, k.rowid")]
    assert len(set(bare)) < len(set(names))  # template variants share a function name
    joined = join_counts(timeline, counting(timeline, np.arange(len(t)), names=bare))
    assert (joined.metrics["match"] != "unmatched").all()
    assert any("by function only" in w for w in joined.warnings)


def test_refused_without_counts(timeline):
    empty = KernelTable(validate(empty_frame(1).assign(kernel_name="x", time_s=1e-6), where="x"), sources=("x",))
    with pytest.raises(InputError, match="no FLOP, byte or instruction counts"):
        join_counts(timeline, empty)
    # several timelines with one counting profile are the ranks of a job: tests/test_rank_timelines_join.py


def test_every_view_works_on_the_joined_table(timeline, tmp_path, capsys):
    """roofline analyze TIMELINE COUNTS writes every output; the joined launches saved as Parquet read back
    the same; compare and project take the pair (a folder holding both) like any profile."""
    counts = tmp_path / "counts.parquet"
    kernel_parquet.write(kernel_parquet.to_arrow(counting(timeline, np.arange(len(timeline)))), counts)
    out = tmp_path / "out"
    rc = main(["analyze", str(MFU), str(counts), "-m", "h100-sxm", "--json", str(out) + ".json", "--html",
               str(out) + ".html", "--png", str(out) + ".png", "--csv", str(out) + ".csv", "--parquet",
               str(out) + ".parquet", "-q"])
    assert rc == 0, capsys.readouterr().err
    import json

    d = json.loads(Path(str(out) + ".json").read_text())
    assert d["totals"]["time_s"] == pytest.approx(535_200_650e-9, rel=1e-12)
    assert d["totals"]["flops"] == pytest.approx(3.0 * 4010 * 4011 / 2, rel=1e-12)
    back = api.read(str(out) + ".parquet")
    assert len(back) == 4010 and float(back.frame["dram_bytes"].sum()) == 1000.0 * 4010 * 4011 / 2
    pair = tmp_path / "pair"
    pair.mkdir()
    (pair / "run.sqlite").write_bytes(MFU.read_bytes())
    (pair / "counts.parquet").write_bytes(counts.read_bytes())
    assert main(["compare", str(pair), str(out) + ".parquet", "-m", "h100-sxm", "-q"]) == 0
    assert main(["project", str(pair), "--to", "h200-sxm", "--from", "h100-sxm", "-q"]) == 0


def test_the_sample_window_of_a_real_timeline():
    """pipit's saxpy under MPI (nsys 2022.2): five push/pop ranges 'saxpy', each around one kernel launch,
    between MPI_Send/MPI_Recv ranges that launch none. SQL: SELECT start, "end", text FROM NVTX_EVENTS WHERE
    eventType = 59 ORDER BY start (the second 'saxpy': 1196019772..1196067224); the launching calls'
    starts (runtime rows, classes 0/1, joined by correlationId): 924890173, 1196025543, 1449145084, ..."""
    from roofline.readers.nsys.window import parse_sample, sample_window

    saxpy = DATA / "pipit_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    w = sample_window(saxpy)
    assert (w.name, w.occurrence, w.occurrences, w.start_ns, w.end_ns, w.skip, w.count) == \
        ("saxpy", 2, 5, 1196019772, 1196067224, 1, 1)
    assert w.pid == 302119224788637 >> 24 & 0xFFFFFF
    w = sample_window(saxpy, *parse_sample("saxpy:5"))
    assert (w.start_ns, w.skip, w.count) == (1947745106, 4, 1)
    w = sample_window(saxpy, *parse_sample("MPI_Send"))  # named: taken even though it launches nothing (2nd of 10)
    assert (w.occurrence, w.occurrences, w.start_ns, w.skip, w.count) == (2, 10, 851454373, 0, 0)
    assert parse_sample("ProfilerStep#3") == ("ProfilerStep#3", None) and parse_sample("a::b:3") == ("a::b", 3)
    with pytest.raises(InputError, match=r"occurs 5 time\(s\), not 6"):
        sample_window(saxpy, "saxpy", 6)
    assert sample_window(MOCK) is None  # no NVTX at all: every launch is counted


@pytest.mark.parametrize("profile", [
    "h200_setfull_sglang_moe_fa3/long_prefill.raw.csv.gz",  # --set full, 2,221 metric columns
    "h100_80gb_hbm3_examples/example_deepcam.ncu.csv.gz",  # roofline profile's own set
    "gh200_setfull_rep_rms_norm_looping", "rtx4090_setfull_rep_and_export", "t4_setfull_rep",
])
def test_the_metrics_a_joined_launch_keeps_give_the_same_ceilings(profile):
    """A joined launch keeps the counting profile's metrics the ceilings and the guidance read, not the
    thousands of a --set full export: on real exports of four architectures the profile's peaks, GPU
    name and highest clock read from the kept columns equal those read from all."""
    from roofline.readers.ncu.peaks import device_names, machine_from_profile, max_clock_hz
    from roofline.readers.nsys.join import _read_metrics

    table = api.read(Path(__file__).parent / "data" / "ncu" / profile)
    metrics = table.metrics
    kept = _read_metrics(metrics)
    assert len(kept) < 100 < metrics.shape[1]
    cc = table.frame["compute_capability"].dropna().unique()
    whole = machine_from_profile(metrics, compute_capability=str(cc[0]))
    assert whole is not None and whole.memory and whole.compute
    assert machine_from_profile(metrics[kept], compute_capability=str(cc[0])) == whole
    assert device_names(metrics[kept]) == device_names(metrics) != []
    assert max_clock_hz(metrics[kept]) == max_clock_hz(metrics)


def test_configurations_only_the_timeline_has_stay_unknown(tmp_path):
    """Kernel B ran with grids the counting run never saw: those launches are unmatched (however many such
    configurations there are), the others pair exactly."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from nsys_build import Launch, write_timeline

    grids = [("A", 1), ("B", 1), ("B", 8), ("B", 9), ("B", 7)]
    launches = [Launch(f"void {k}(float *)", (g, 1, 1), (128, 1, 1), 1_000 * i, 1_000 * i + 100, 1_000 * i + 600)
                for i, (k, g) in enumerate(grids)]
    timeline = read_timeline(write_timeline(tmp_path / "t.sqlite", launches))
    counts = counting(timeline, np.arange(2))  # A and B at grid (1, 1, 1) only
    joined = join_counts(timeline, counts)
    assert joined.metrics["match"].astype(str).tolist() == ["exact", "exact", "unmatched", "unmatched", "unmatched"]
    assert joined.frame["dram_bytes"].tolist()[:2] == [1000.0, 2000.0] and joined.frame["dram_bytes"][2:].isna().all()


def test_the_breakdown_of_a_joined_timeline_splits_kernel_time_by_bound(timeline):
    """With counts joined, the breakdown of the same timeline knows each kernel's bound: the kernel time
    of every device is split by bound, none of it unknown, and it sums to what it was without counts."""
    joined = join_counts(timeline, counting(timeline, np.arange(len(timeline))))
    assert joined.activity is timeline.activity
    alone = api.breakdown(timeline)
    known = api.breakdown(joined, api.analyze(joined, machine="h100-sxm"))
    assert not alone.bounds_known and known.bounds_known
    for before, after in zip(alone.windows, known.windows):
        assert set(before.kernel_s) == {"bound unknown (no counters)"}
        assert "bound unknown (no counters)" not in after.kernel_s and len(after.kernel_s) >= 1
        assert sum(after.kernel_s.values()) == pytest.approx(sum(before.kernel_s.values()), rel=1e-12)


def test_the_json_says_the_match_rate_as_numbers(timeline, tmp_path):
    """The JSON of a joined timeline carries the match rate as numbers: the sample of the first 0.1 s less
    FlashAttention's, as above; counts and times worked out from the per-launch match and the timeline."""
    import json

    start = timeline.metrics["start_ns"].to_numpy()
    t = plain(timeline)
    sample = np.flatnonzero((start < start.min() + 100_000_000) & ~t["kernel_name"].str.contains("flash_fwd").to_numpy())
    counts = tmp_path / "counts.parquet"
    kernel_parquet.write(kernel_parquet.to_arrow(counting(timeline, sample)), counts)
    out = tmp_path / "a.json"
    assert main(["analyze", str(MFU), str(counts), "--json", str(out), "-q"]) == 0
    d = json.loads(out.read_text())
    joined = join_counts(timeline, counting(timeline, sample))
    kind = joined.metrics["match"].astype(str).to_numpy()
    want = {k: int((kind == k).sum()) for k in ("exact", "configuration", "unmatched")}
    assert d["match"]["launches"] == want and sum(want.values()) == 4010 and want["unmatched"] >= 68
    assert sum(d["match"]["time_s"].values()) == pytest.approx(535_200_650e-9, rel=1e-12)
    assert d["match"]["time_s"]["unmatched"] == pytest.approx(float(t["time_s"][kind == "unmatched"].sum()), rel=1e-12)
    assert d["notes"][0].startswith(f"counts joined to 4010 timeline launches: {want['exact']} launches exactly")
    plain_json = tmp_path / "b.json"
    assert main(["analyze", str(MFU), "--json", str(plain_json), "-q"]) == 0
    assert "match" not in json.loads(plain_json.read_text())  # a timeline alone has no match

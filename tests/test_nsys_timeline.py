"""Nsight Systems timelines read as kernel tables, on five public exports from five nsys versions
(tests/data/nsys/*/PROVENANCE.md). Every expected number was computed by hand with SQL on the files
(sqlite3; the queries are beside each number), not by the reader."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import InputError, ToolNotFoundError
from roofline.readers.nsys.export import Export

DATA = Path(__file__).parent / "data" / "nsys"
SAXPY = DATA / "pipit_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"  # nsys 2022.2
CLOVERLEAF = DATA / "pipit_cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite"  # nsys 2024.5
SMOKE = DATA / "flameox_smoke" / "nsight-2025.5.2.sqlite"  # nsys 2025.5
MOCK = DATA / "nsysai_mock" / "mock.sqlite"  # nsys 2026.1
MFU = DATA / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"  # nsys 2026.2 (a 0.3 s window)


def sql(path: Path, query: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def ns(table) -> int:
    """The table's total kernel time in whole ns (time_s is end - start in ns, times 1e-9)."""
    return int(round(float(np.sum(table.frame["time_s"].to_numpy())) * 1e9))


@pytest.mark.parametrize("path, version, launches, total_ns", [
    # SELECT value FROM META_DATA_EXPORT|EXPORT_META_DATA WHERE name = 'EXPORT_PRODUCT_VERSION';
    # SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL
    (SAXPY, "2022.2.1.31", 5, 88_573_480),
    (CLOVERLEAF, "2024.5.1.113", 1312, 294_404_540),
    (SMOKE, "2025.5.2.266", 3, 3_840),
    (MOCK, "2026.1.1.204", 2, 4_129),
    (MFU, "2026.2.1.210", 4010, 535_200_650),
])
def test_every_launch_and_its_time_across_nsys_versions(path, version, launches, total_ns):
    with Export(path) as export:
        assert export.version() == version
    table = api.read([path])
    frame = table.frame
    assert len(frame) == launches and ns(table) == total_ns
    assert frame["launch_id"].tolist() == list(range(launches))  # in start order
    starts = table.metrics["start_ns"].to_numpy()
    assert (np.diff(starts) >= 0).all()
    assert (table.metrics["end_ns"].to_numpy() - starts == np.round(frame["time_s"].to_numpy() * 1e9)).all()
    # A timeline has no counters: FLOPs unknown (never 0), the byte columns left out, and the user told so.
    assert frame["flops"].isna().all() and "dram_bytes" not in frame.columns
    assert any("no counters" in w for w in table.warnings)
    assert table.metric_hints["flops"] and table.metric_hints["dram_bytes"]


def test_cloverleaf_kernels_by_name_grid_block_device_and_stream():
    table = api.read([CLOVERLEAF])
    frame = table.frame
    # SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL -> (0, 7)
    assert set(frame["device"]) == {0} and set(frame["stream"]) == {7}
    assert frame["process_id"].nunique() == 1
    # SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
    #   ON s.id = k.demangledName GROUP BY s.value ORDER BY 3 DESC LIMIT 2
    names = frame["kernel_name"].astype(str)
    by_name = frame.assign(name=names).groupby("name")["time_s"].agg(["size", "sum"]).sort_values("sum", ascending=False)
    first, second = by_name.index[:2]
    assert first.startswith("void clover::par_ranged2d_kernel<PdV_kernel(bool,") and "(instance 2)" in first
    assert second.startswith("void clover::par_reduce_kernel<calc_dt_kernel(global_variables &,")
    assert by_name.iloc[0]["size"] == 10 and round(by_name.iloc[0]["sum"] * 1e9) == 19_404_589
    assert by_name.iloc[1]["size"] == 10 and round(by_name.iloc[1]["sum"] * 1e9) == 18_650_735
    # SELECT gridX, gridY, gridZ, blockX, blockY, blockZ, count(*) ... GROUP BY 1..6 ORDER BY 7 DESC
    pairs = frame.assign(g=frame["grid"].astype(str), b=frame["block"].astype(str)).groupby(["g", "b"]).size()
    assert pairs[("(16, 1, 1)", "(256, 1, 1)")] == 484 and pairs[("(115200, 1, 1)", "(256, 1, 1)")] == 94
    assert frame["phase"].isna().all()  # no NVTX_EVENTS table: unknown, not invented


def test_saxpy_launches_once_each_in_their_nvtx_range_despite_repeated_call_rows():
    """nsys 2022.2 repeats a launch's correlation id in call-stack rows (eventClass 67): a join on the id
    alone doubles the 5 launches. Each launch was called inside the default-domain range "saxpy" (the
    MPI ranges are in nsys's "MPI" domain):
    SELECT k.correlationId, group_concat(n.text-or-StringIds.value || '@' || n.domainId) FROM KERNEL k
      JOIN RUNTIME r ON r.correlationId = k.correlationId AND r.eventClass IN (0, 1)
      JOIN NVTX_EVENTS n ON n.eventType = 59 AND n.globalTid = r.globalTid AND n.start <= r.start < n.end
    -> five rows, each 'saxpy@0'."""
    assert sql(SAXPY, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                      "ON r.correlationId = k.correlationId") == [(10,)]
    frame = api.read([SAXPY]).frame
    assert len(frame) == 5 and frame["phase"].astype(str).tolist() == ["saxpy"] * 5


def test_two_processes_correlation_ids_apart_and_pytorch_operators_from_the_timeline():
    table = api.read([MFU])
    frame = table.frame
    # SELECT (globalPid >> 24) & 0xFFFFFF, deviceId, count(*), sum("end" - start) ... GROUP BY 1, 2
    per = frame.groupby(["process_id", "device"])["time_s"].agg(["size", "sum"])
    assert per.loc[(144, 0), "size"] == 1993 and round(per.loc[(144, 0), "sum"] * 1e9) == 270_875_926
    assert per.loc[(145, 1), "size"] == 2017 and round(per.loc[(145, 1), "sum"] * 1e9) == 264_324_724
    # Kernels whose launching call (same correlation id, same process, eventClass 0/1) is not in the
    # window: 24 (the window was cut after they were called). Said, and no range is made up for them.
    assert any("24 of 4010 kernels have no launching call" in w for w in table.warnings)
    # Per kernel, the innermost default-domain push/pop range open on the launching thread at the
    # call's start, its name up to the first comma (emit_nvtx's ", seq = N, op_id = N"), summed:
    # aten::addmm 335 launches 57,595,448 ns; aten::mul 501 / 42,979,045; aten::copy_ 1816 / 64,364,656;
    # aten::add 505 / 23,916,556.
    ops = frame.assign(o=frame["op"].astype(object)).groupby("o")["time_s"].agg(["size", "sum"])
    for op, count, total in [("aten::addmm", 335, 57_595_448), ("aten::mul", 501, 42_979_045),
                             ("aten::copy_", 1816, 64_364_656), ("aten::add", 505, 23_916_556)]:
        assert ops.loc[op, "size"] == count and round(ops.loc[op, "sum"] * 1e9) == total, op
    assert frame["op"].isna().sum() == 24
    # The program's own record_function ranges are phases, named without emit_nvtx's per-call suffix.
    phases = set(frame["phase"].dropna().astype(str))
    assert "AllToAll4D" in phases and "FSDP::pre_forward (blocks.10._checkpoint_wrapped_module)" in phases
    assert not any("op_id" in p or "seq =" in p for p in phases)
    # The NCCL ranges are in another domain (id 1, its name not in the window): never operators.
    assert not any(str(o).startswith("nccl") for o in ops.index)


def test_columns_longer_than_sqlites_longest_text_are_read_row_by_row():
    """Columns are read as one text each (group_concat), which SQLite refuses past its longest text
    (SQLITE_MAX_LENGTH, 1e9 bytes by default: some 50 million ids). Then they are read row by row, to
    the same values: here with the limit lowered to 10 kB, below the 4010 kernels' start times."""
    import pandas as pd

    with Export(MFU) as export:
        kernels, ranges = export.kernels(), export.nvtx()
        export.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 10_000)
        with pytest.raises(sqlite3.DataError, match="too big"):
            export.db.execute("SELECT group_concat(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
        by_row, ranges_by_row = export.kernels(), export.nvtx()
    pd.testing.assert_frame_equal(kernels, by_row, check_exact=True)
    assert len(ranges) == 19_118 and ranges.text == ranges_by_row.text and ranges.domains == ranges_by_row.domains
    for column in ("kind", "start", "end", "tid", "pid", "domain_id"):
        assert np.array_equal(getattr(ranges, column), getattr(ranges_by_row, column)), column


def test_analyze_a_timeline_by_operator_from_the_command_line(capsys):
    assert main(["analyze", str(MFU), "--by", "op"]) == 0
    out = capsys.readouterr().out
    assert "4010 launches" in out and "aten::addmm" in out and "FLOPs unknown" in out


def test_json_totals_say_flops_unknown_not_zero(tmp_path):
    """A timeline's FLOPs are unknown: the JSON totals hold null, as they now do for any profile
    without FLOP counters (they held 0.0 before: known FLOPs summed over no kernel)."""
    import json

    out = tmp_path / "saxpy.json"
    assert main(["analyze", str(SAXPY), "--json", str(out), "-q"]) == 0
    totals = json.loads(out.read_text())["totals"]
    assert totals["flops"] is None and totals["work_total"] is None
    assert round(totals["time_s"] * 1e9) == 88_573_480 and totals["unknown_flop_time_s"] == totals["time_s"]


def test_a_folder_of_timelines_reads_its_sqlite_files():
    table = api.read([CLOVERLEAF.parent])
    assert len(table.frame) == 1312 and table.sources == (str(CLOVERLEAF),)


def test_a_sqlite_file_that_is_not_a_timeline_is_refused_with_the_reason(tmp_path, capsys):
    other = tmp_path / "notes.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE notes (x TEXT)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="a SQLite database, not an Nsight Systems export"):
        api.read([other])
    empty = tmp_path / "nokernels.sqlite"
    db = sqlite3.connect(empty)
    db.execute("CREATE TABLE StringIds (id INTEGER, value TEXT)")
    db.commit()
    db.close()
    assert main(["analyze", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "an Nsight Systems export with no CUDA kernels" in err and "nsys profile -t cuda" in err
    assert "Traceback" not in err
    assert other.read_bytes()[:16] == b"SQLite format 3\x00"  # inputs untouched


def test_a_report_needs_nsys_on_path(tmp_path, monkeypatch):
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"\x00" * 64)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolNotFoundError, match="needs nsys on PATH"):
        api.read([report])


@pytest.mark.skipif(shutil.which("nsys") is None, reason="needs Nsight Systems' nsys (bash .ci/install-nsys)")
def test_a_report_is_exported_by_the_real_nsys_into_a_temporary_folder(tmp_path):
    """Our own report of a CPU-only program (tests/data/nsys/own_cpu_only, made with nsys 2023.4.4):
    the real nsys exports it, and the reader says what it lacks; nothing is written beside it."""
    source = DATA / "own_cpu_only" / "cpu_only.nsys-rep"
    report = tmp_path / source.name
    report.write_bytes(source.read_bytes())
    with pytest.raises(InputError, match="no CUDA kernels"):
        api.read([report])
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


needs_nsys = pytest.mark.skipif(shutil.which("nsys") is None, reason="needs Nsight Systems' nsys (bash .ci/install-nsys)")
EASY = DATA / "easycuda_add_report"
MNIST = DATA / "pai_mnist_nvtx_report" / "baseline_nvtx.nsys-rep"


@needs_nsys
def test_a_public_report_reads_as_its_author_s_export(tmp_path):
    """EasyCUDA's report and the SQLite export its author made with nsys 2023.4.4 (PROVENANCE.md): the real
    nsys exports the report again and the two tables agree. SQL: SELECT count(*), sum("end" - start),
    gridX, blockX FROM CUPTI_ACTIVITY_KIND_KERNEL -> 1, 2337721, 1, 256."""
    report = tmp_path / "nsys_easy.nsys-rep"
    report.write_bytes((EASY / "nsys_easy.nsys-rep").read_bytes())
    ours, theirs = api.read([report]), api.read([EASY / "nsys_easy.sqlite"])
    assert ns(ours) == ns(theirs) == 2_337_721 and len(ours) == 1
    for column in ("kernel_name", "grid", "block", "device", "stream"):
        assert ours.frame[column].astype(str).tolist() == theirs.frame[column].astype(str).tolist()
    assert ours.frame["kernel_name"].astype(str).tolist() == ["add(int, float *, float *)"]
    assert ours.frame["grid"].astype(str).tolist() == ["(1, 1, 1)"] and ours.frame["block"].astype(str).tolist() == ["(256, 1, 1)"]


@needs_nsys
def test_a_public_pytorch_training_report_by_phase(tmp_path):
    """The AI profiling bootcamp's MNIST training under emit_nvtx (A100, PROVENANCE.md), exported by the real
    nsys. Every figure by SQL on that export: launches joined to their runtime call (classes 0/1, same
    process), counted where the call lies in a push/pop range of the same thread (start <= call < end):
    'Forward pass' less those in 'Optimizer.*' ranges (zero_grad runs inside the forward range: optimizer),
    'Optimizer.*', 'Test forward pass', and the calls on the autograd thread (no program range there:
    backward)."""
    report = tmp_path / MNIST.name
    report.write_bytes(MNIST.read_bytes())
    table = api.read([report])
    assert len(table) == 9345 and ns(table) == 379_929_359
    f = table.frame
    phase = f["phase"].astype("string")
    by_phase = {p: (int((phase == p).sum()), round(float(f["time_s"][phase == p].sum()) * 1e9))
                for p in ("Forward pass", "optimizer", "backward", "Test forward pass")}
    assert by_phase == {"Forward pass": (1062, 104_587_860), "optimizer": (5664, 27_456_286),
                        "backward": (2360, 230_270_170), "Test forward pass": (150, 16_801_764)}
    assert sorted(p.name for p in tmp_path.iterdir()) == [MNIST.name]  # exported into a temporary folder


@needs_nsys
def test_the_sample_window_of_a_public_training_report(tmp_path):
    """The default sample of roofline profile --timeline on that run: 'Batch N' ranges (59, numbered: a step),
    inside 'Epoch N' (2: fewer than three), the second batch. SQL: the 'Batch %' ranges by start (Batch 1:
    2994468290..3002970802); launching calls before it 155, inside it 155."""
    import subprocess

    from roofline.readers.nsys.window import sample_window

    export = tmp_path / "mnist.sqlite"
    subprocess.run(["nsys", "export", "--type", "sqlite", "--output", str(export), str(MNIST)], check=True,
                   capture_output=True)
    w = sample_window(export)
    assert (w.name, w.occurrence, w.occurrences, w.start_ns, w.end_ns, w.skip, w.count) == \
        ("Batch", 2, 59, 2994468290, 3002970802, 155, 155)
    w = sample_window(export, "Batch 2")  # a name as the program wrote it: its one occurrence
    assert (w.name, w.occurrence, w.occurrences, w.start_ns) == ("Batch 2", 1, 1, 3146827260)
    # the breakdown's steps are the same rule's: 59 batches, the second from 2994468290 (its first call's work on)
    steps = api.breakdown(api.read([export]), window="step").windows
    assert len(steps) == 59 and [w.name for w in steps[:2]] == ["Batch #1", "Batch #2"]


def nested(rng: np.random.Generator, lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
    """Random properly nested ranges inside [lo, hi): siblings, children, shared starts and ends."""
    out: list[tuple[int, int]] = []
    t = lo
    while depth and t < hi - 2 and rng.random() < 0.8:
        s = int(rng.integers(t, hi - 1))
        e = int(rng.integers(s + 1, hi + 1))
        out.append((s, e))
        out += nested(rng, s, e, depth - 1)
        t = e if rng.random() < 0.7 else s + 1 if e > s + 1 else e  # touching or overlapping next sibling
        if out[-1][1] > e:
            break
    return [(s, e) for s, e in out if all(not (s < s2 < e < e2 or s2 < s < e2 < e) for s2, e2 in out)]


@pytest.mark.parametrize("seed", range(30))
def test_push_pop_stacks_agree_with_the_ranges_open_at_each_launch(seed):
    """The stack of each launch (innermost range found by search and parent links) against a brute-force
    scan of the ranges open at its call on its thread (start <= t < end), outermost first."""
    import pandas as pd

    from roofline.readers.nsys.ranges import push_pop

    rng = np.random.default_rng(seed)
    rows = []
    big = 2**60  # nsys's globalTid carries hardware and VM ids in its high bits: ids float64 cannot tell apart
    for thread in (big + 7, big + 3):
        for s, e in nested(rng, 0, 200, 4):
            rows.append({"kind": 59, "start": s, "end": e, "tid": thread, "pid": 1, "domain": None,
                         "text": f"t{thread} [{s},{e})"})
    ranges = pd.DataFrame(rows, columns=["kind", "start", "end", "tid", "pid", "domain", "text"])
    n = 60
    tid = pd.Series(pd.array([big + int(t) for t in rng.choice([7, 3, 5], n)], dtype="Int64"))
    at = pd.Series(pd.array(rng.integers(-5, 205, n).tolist(), dtype="Int64"))
    tid[0], at[1] = pd.NA, pd.NA
    codes, stacks = push_pop(ranges, tid, at)
    for i in range(n):
        if pd.isna(tid[i]) or pd.isna(at[i]):
            assert codes[i] == -1
            continue
        t = int(at[i])
        want = sorted(((r["start"], -r["end"], r["text"]) for r in rows
                       if r["tid"] == tid[i] and r["start"] <= t < r["end"]))
        got = [text for _, text in stacks[codes[i]]] if codes[i] >= 0 else []
        assert got == [text for *_, text in want], (i, t, int(tid[i]))


def test_the_benchmarks_timeline_is_read_as_it_was_made(tmp_path, monkeypatch):
    """benchmarks/bench_nsys.py's generated timeline (the real 2026.2 export's tables, filled): what it
    puts in (two processes alternating, a step range per 1000 launches of a process, an operator range
    around each call) is what the reader finds."""
    import importlib

    bench = Path(__file__).parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(bench))
    module = importlib.import_module("bench_nsys")
    path = tmp_path / "t.sqlite"
    module.generate(path, 4000)
    frame = api.read([path]).frame
    assert len(frame) == 4000
    assert frame["process_id"].value_counts().to_dict() == {144: 2000, 145: 2000}
    assert frame["phase"].astype(str).value_counts().to_dict() == {"step 0": 2000, "step 1": 2000}
    assert set(frame["op"].astype(str)) == set(module.OPS) and frame["op"].notna().all()
    # every call is 2 us after the previous one, its kernel 5 us after its call
    assert (np.diff(api.read([path]).metrics["start_ns"].to_numpy()) == 2_000).all()


def test_step_names_at_once_equal_one_by_one():
    """kernels.steps.step_names (the suffix cut off every text at once, each distinct rest named once)
    names every NVTX range text of three real exports, and odd names, as step_name does one by one."""
    import pandas as pd

    from roofline.kernels.steps import step_name, step_names

    texts = [r[0] or "" for f in (MFU, SAXPY) for r in sql(f, "SELECT COALESCE(text, (SELECT value FROM StringIds "
                                                             "WHERE id = textId)) FROM NVTX_EVENTS WHERE eventType IN (59, 60)")]
    texts += ["FSDP::pre_forward (blocks.3), op_id = 990878", "ProfilerStep#3", "Batch 12", "step_7", ", seq = 3",
              "train_step, seq = 4", "aten::mm, seq = 1, op_id = 2, sizes = [[1, 2]]", "AddmmBackward0, seq = 12",
              "roofline.module:A.b", "Epoch 2", ""]
    assert len(texts) > 19_000
    assert step_names(pd.Series(texts)).tolist() == [step_name(t) for t in texts]
    assert [step_name(t) for t in ("ProfilerStep#3", "Batch 12", "step_7", "train_step, seq = 4", "aten::mm, seq = 1")] \
        == ["ProfilerStep", "Batch", "step", "train_step", None]

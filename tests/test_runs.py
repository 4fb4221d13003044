"""Several program runs read together: kept apart as runs (the ``run`` column), side by side.

The inputs are small raw-page ncu CSVs written here, in the layout of the real exports
under tests/data/ncu (header, units row, one row per launch), so every expected number
is worked out by hand from the rows below.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from roofline.analysis import analyze
from roofline.errors import InputError
from roofline.guidance.advise import advise
from roofline.kernels import aggregate
from roofline.readers import kernel_json, read_profile
from roofline.readers.ncu.combine import run_labels, split_runs
from roofline.readers.ncu.csv_export import read_ncu_csv
from roofline.views.json_out import analysis_to_dict
from roofline.views.terminal import kernel_table_renderable

HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC"]
UNITS = {"gpu__time_duration.sum": "nsecond", "dram__bytes.sum": "byte",
         "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": "inst",
         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": "inst",
         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst"}


def raw_csv(path: Path, pid: int, launches: list[tuple[int, str, dict[str, float]]], process: str = "python3") -> Path:
    """A raw-page export: ``launches`` are (ID, kernel name, {metric: value in the unit of UNITS})."""
    metrics = list(dict.fromkeys(m for _, _, values in launches for m in values))
    lines = [",".join(f'"{h}"' for h in HEADER + metrics),
             ",".join(['""'] * len(HEADER) + [f'"{UNITS[m]}"' for m in metrics])]
    for launch_id, name, values in launches:
        ident = [launch_id, pid, process, "127.0.0.1", name, 1, 7, "(256, 1, 1)", "(80, 1, 1)", 0, "8.0"]
        lines.append(",".join(f'"{v}"' for v in ident + [values[m] for m in metrics]))
    path.write_text("\n".join(lines) + "\n")
    return path


def timed(ns: float, dram: float, ffma: float = 0.0) -> dict[str, float]:
    return {"gpu__time_duration.sum": ns, "dram__bytes.sum": dram,
            "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 0,
            "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 0,
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": ffma}


@pytest.fixture
def two_programs(tmp_path: Path) -> list[Path]:
    """Two programs, each numbering its launches 0, 1, 2; ``relu`` runs in both."""
    a = raw_csv(tmp_path / "a.csv", 100, [(0, "gemm", timed(1000, 4000, 1000)), (1, "relu", timed(500, 2000)),
                                          (2, "gemm", timed(1000, 4000, 1000))])
    b = raw_csv(tmp_path / "b.ncu.csv", 200, [(0, "relu", timed(300, 1000)), (1, "relu", timed(300, 1000)),
                                              (2, "softmax", timed(200, 800))])
    return [a, b]


def test_two_programs_are_two_runs_side_by_side(two_programs):
    t = read_profile(two_programs)
    f = t.frame
    assert f["run"].tolist() == ["a", "a", "a", "b", "b", "b"]  # file names less .csv and .ncu.csv
    assert f["launch_id"].tolist() == [0, 1, 2, 0, 1, 2]
    assert f["process_id"].tolist() == [100, 100, 100, 200, 200, 200]
    assert f["time_s"].tolist() == pytest.approx([1e-6, 5e-7, 1e-6, 3e-7, 3e-7, 2e-7])
    assert f["dram_bytes"].tolist() == [4000, 2000, 4000, 1000, 1000, 800]
    assert f["source"].tolist() == ["a.csv"] * 3 + ["b.ncu.csv"] * 3
    assert t.sources == tuple(str(p) for p in two_programs)


def test_a_kernel_in_two_runs_gives_two_rows_by_name_and_by_phase(two_programs):
    f = read_profile(two_programs).frame
    by_name = aggregate(f, "name")
    rows = [(r.run, r.kernel_name, r.launches, r.time_s, r.dram_bytes) for r in by_name.itertuples()]
    # sorted by time: a/gemm 2 x 1000 ns, b/relu 2 x 300 ns, a/relu 500 ns, b/softmax 200 ns
    assert [r[:3] for r in rows] == [("a", "gemm", 2), ("b", "relu", 2), ("a", "relu", 1), ("b", "softmax", 1)]
    assert [r[3] for r in rows] == pytest.approx([2e-6, 6e-7, 5e-7, 2e-7])
    assert [r[4] for r in rows] == [8000, 2000, 2000, 800]
    assert by_name["fp32_flops"].tolist()[0] == 4000  # 2 launches x 2 x 1000 FFMA
    assert len(aggregate(f, "phase")) == 4  # no phases: one group per run and name


def test_one_run_keeps_run_unknown_and_groups_by_name(two_programs):
    t = read_profile(two_programs[0])
    assert t.frame["run"].isna().all()
    assert aggregate(t.frame, "name")["kernel_name"].tolist() == ["gemm", "relu"]


def test_json_rows_carry_run_launch_id_and_process_id(two_programs):
    t = read_profile(two_programs)
    doc = json.loads(json.dumps(analysis_to_dict(analyze(t, by="launch")), allow_nan=False))
    keys = sorted((k["run"], k["launch_id"], k["process_id"], k["name"]) for k in doc["kernels"])
    assert keys == [("a", 0, 100, "gemm"), ("a", 1, 100, "relu"), ("a", 2, 100, "gemm"),
                    ("b", 0, 200, "relu"), ("b", 1, 200, "relu"), ("b", 2, 200, "softmax")]
    by_name = analysis_to_dict(analyze(t, by="name"))["kernels"]
    assert [(k["run"], k["name"], k["launch_id"]) for k in by_name] == [
        ("a", "gemm", None), ("b", "relu", None), ("a", "relu", None), ("b", "softmax", None)]
    one = analysis_to_dict(analyze(read_profile(two_programs[1]), by="launch"))["kernels"]
    assert [(k["run"], k["launch_id"], k["process_id"]) for k in one] == [(None, 0, 200), (None, 1, 200), (None, 2, 200)]


def test_terminal_and_advice_name_the_run(two_programs):
    a = analyze(read_profile(two_programs), by="name")
    console = Console(width=200, record=True)
    console.print(kernel_table_renderable(a))
    text = console.export_text()
    header = next(line for line in text.splitlines() if "kernel" in line and "#" in line)
    assert [c.strip() for c in header.split("┃")][1:4] == ["#", "run", "kernel"]
    rows = [[c.strip() for c in line.split("│")] for line in text.splitlines() if "│" in line]
    assert [[r[2], r[3].rstrip("*")] for r in rows] == [["a", "gemm"], ["b", "relu"], ["a", "relu"], ["b", "softmax"]]
    assert sorted(advise(a)["label"]) == ["a: gemm", "a: relu", "b: relu", "b: softmax"]
    one = Console(width=200, record=True)
    one.print(kernel_table_renderable(analyze(read_profile(two_programs[0]))))
    assert " run " not in one.export_text()  # one run: no run column


def test_guidance_metrics_are_kept_per_run_by_launch(tmp_path):
    from roofline.guidance.metrics import L2_HIT_RATE, aggregate_metrics, metrics_per_row

    UNITS[L2_HIT_RATE] = "%"
    a = raw_csv(tmp_path / "a.csv", 100, [(i, "k", {**timed(1000 - i, 10), L2_HIT_RATE: 10 + i}) for i in range(3)])
    b = raw_csv(tmp_path / "b.csv", 200, [(i, "k", {**timed(500 - i, 10), L2_HIT_RATE: 50 + i}) for i in range(3)])
    t = read_profile([a, b])
    per_launch = aggregate_metrics(t.frame, t.metrics, "launch")
    assert len(per_launch) == 6  # launch 0 of a and launch 0 of b are two rows, not one
    assert sorted(per_launch[L2_HIT_RATE]) == [10, 11, 12, 50, 51, 52]
    by_launch = analyze(t, by="launch")  # longest first: a's 0, 1, 2, then b's
    assert metrics_per_row(by_launch.frame, "launch", t)[L2_HIT_RATE].tolist() == [10, 11, 12, 50, 51, 52]
    by_name = analyze(t, by="name")  # kernel k in each run: time-weighted mean hit rate per run
    expected_a = (10 * 1000 + 11 * 999 + 12 * 998) / (1000 + 999 + 998)
    expected_b = (50 * 500 + 51 * 499 + 52 * 498) / (500 + 499 + 498)
    assert metrics_per_row(by_name.frame, "name", t)[L2_HIT_RATE].tolist() == pytest.approx([expected_a, expected_b])


def test_one_program_split_by_metric_is_one_run_beside_another_program(tmp_path):
    # a_time and a_dram: one program profiled twice (two processes), one metric set each.
    time_only = {0: {"gpu__time_duration.sum": 1000}, 1: {"gpu__time_duration.sum": 500}}
    dram_only = {0: {"dram__bytes.sum": 4000}, 1: {"dram__bytes.sum": 2000}}
    t_file = raw_csv(tmp_path / "a_time.csv", 100, [(i, n, time_only[i]) for i, n in ((0, "gemm"), (1, "relu"))])
    d_file = raw_csv(tmp_path / "a_dram.csv", 101, [(i, n, dram_only[i]) for i, n in ((0, "gemm"), (1, "relu"))])
    alone = read_profile([t_file, d_file])
    assert len(alone.frame) == 2 and alone.frame["run"].isna().all()
    assert alone.frame["dram_bytes"].tolist() == [4000, 2000]
    assert alone.frame["time_s"].tolist() == pytest.approx([1e-6, 5e-7])
    other = raw_csv(tmp_path / "zz.csv", 300, [(0, "softmax", timed(200, 800))])
    t = read_profile([t_file, other, d_file])
    assert t.frame["run"].tolist() == ["a", "a", "zz"]  # the common start of a_time and a_dram
    assert t.frame["dram_bytes"].tolist() == [4000, 2000, 800]


def test_two_runs_of_one_program_are_told_apart_by_what_they_measured(tmp_path):
    launches = [(0, "gemm"), (1, "relu")]
    first = raw_csv(tmp_path / "before.csv", 100, [(i, n, timed(1000 + i, 4000)) for i, n in launches])
    second = raw_csv(tmp_path / "after.csv", 101, [(i, n, timed(900 + i, 3000)) for i, n in launches])
    t = read_profile([first, second])
    assert t.frame["run"].tolist() == ["before", "before", "after", "after"]
    assert t.frame["dram_bytes"].tolist() == [4000, 4000, 3000, 3000]
    # Only the times differ, and neither run was instrumented: still two measurements, two runs.
    plain = [(i, n, {"gpu__time_duration.sum": 1000 + i, "dram__bytes.sum": 4000}) for i, n in launches]
    faster = [(i, n, {"gpu__time_duration.sum": 700 + i, "dram__bytes.sum": 4000}) for i, n in launches]
    third = read_profile([raw_csv(tmp_path / "x.csv", 100, plain), raw_csv(tmp_path / "y.csv", 102, faster)])
    assert third.frame["run"].tolist() == ["x", "x", "y", "y"]
    assert third.frame["time_s"].tolist() == pytest.approx([1.0e-6, 1.001e-6, 7e-7, 7.01e-7])


def test_same_process_with_other_kernel_names_is_an_error(tmp_path):
    a = raw_csv(tmp_path / "a.csv", 100, [(0, "gemm", timed(1000, 4000)), (1, "relu", timed(500, 2000))])
    b = raw_csv(tmp_path / "b.csv", 100, [(0, "gemm", {"dram__bytes.sum": 4000}), (1, "softmax", {"dram__bytes.sum": 2000})])
    with pytest.raises(InputError) as err:
        read_profile([a, b])
    text = err.value.render()
    assert "do not describe the same launches: launch 1 is 'relu' in a.csv but 'softmax' here (1 launch differs)" in text
    assert str(b) in text
    # Another process with the same IDs and other kernels: another program, two runs.
    c = raw_csv(tmp_path / "c.csv", 101, [(0, "gemm", {"dram__bytes.sum": 4000}), (1, "softmax", {"dram__bytes.sum": 2000})])
    assert read_profile([a, c]).frame["run"].tolist() == ["a", "a", "c", "c"]


def test_process_names_that_differ_make_two_runs(tmp_path):
    a = read_ncu_csv(raw_csv(tmp_path / "a_time.csv", 100, [(0, "gemm", {"gpu__time_duration.sum": 1000})]))
    b = read_ncu_csv(raw_csv(tmp_path / "a_dram.csv", 101, [(0, "gemm", {"dram__bytes.sum": 4000})]))

    def named(p, name):  # a reader that knows the process name puts it in ids["process_name"]
        return replace(p, ids=p.ids.assign(process_name=pd.array([name] * len(p), dtype="string")))

    assert [len(r) for r in split_runs([a, b])] == [2]
    assert [len(r) for r in split_runs([named(a, "python3"), named(b, "python3")])] == [2]
    assert [len(r) for r in split_runs([named(a, "python3"), named(b, "cutlass_gemm")])] == [1, 1]
    same_pid = replace(b, ids=b.ids.assign(process_id=pd.array([100], dtype="Int64"),
                                           kernel_name=pd.array(["other"], dtype="string")))
    assert [len(r) for r in split_runs([named(a, "python3"), named(same_pid, "cutlass_gemm")])] == [1, 1]
    with pytest.raises(InputError, match="do not describe the same launches"):
        split_runs([named(a, "python3"), named(same_pid, "python3")])


def test_launch_ids_repeating_within_a_file_are_refused_among_several(tmp_path):
    rep = raw_csv(tmp_path / "rep.csv", 100, [(0, "gemm", timed(1000, 4000)), (0, "relu", timed(500, 2000))])
    other = raw_csv(tmp_path / "other.csv", 200, [(0, "gemm", timed(1000, 4000))])
    assert len(read_profile(rep).frame) == 2  # alone it is read as it is
    with pytest.raises(InputError, match="launch IDs repeat within a file"):
        read_profile([other, rep])


def test_run_labels():
    assert run_labels([["/x/b.ncu.csv"], ["/y/c.ncu-rep"], ["/z/d.kernels.json"], ["/w/e.csv"], ["/v/f.NCU-REPZ"],
                       ["/u/out.dram__bytes.sum"]]) == ["b", "c", "d", "e", "f", "out.dram__bytes.sum"]
    assert run_labels([["/x/b.ncu.csv"], ["/y/b.csv"]]) == ["x/b", "y/b"]
    assert run_labels([["/x/b200.parquet"], ["/x/h100.kernels.json"]]) == ["b200", "h100"]
    assert run_labels([["/x/b.csv"], ["/x/b.ncu.csv"], ["/x/c.csv"]]) == ["b", "b#2", "c"]
    deepcam = [f"/d/out.{m}" for m in ("dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum")]
    assert run_labels([deepcam, ["/d/gemm.csv"]]) == ["out", "gemm"]
    assert run_labels([["/d/p.csv", "/d/q.csv"]]) == ["p"]  # nothing in common: the first file's


def test_kernel_table_files_are_runs_too_and_older_files_read(tmp_path, two_programs):
    one = read_profile(two_programs[1])
    path = tmp_path / "train.kernels.json"
    path.write_text(kernel_json.to_json(one))
    t = read_profile([two_programs[0], path])
    assert t.frame["run"].tolist() == ["a"] * 3 + ["train"] * 3
    # a file written before the run column existed
    doc = json.loads(path.read_text())
    i = doc["columns"].index("run")
    doc["columns"].pop(i)
    for row in doc["rows"]:
        row.pop(i)
    path.write_text(json.dumps(doc))
    old = kernel_json.read(path)
    assert old.frame["run"].isna().all() and old.frame["dram_bytes"].tolist() == [1000, 1000, 800]
    # a file that already names its runs keeps them
    path.write_text(kernel_json.to_json(read_profile(two_programs)))
    both = read_profile([path, two_programs[0]])
    assert both.frame["run"].tolist() == ["a"] * 3 + ["train/a"] * 3 + ["train/b"] * 3
    assert len(aggregate(both.frame, "name")) == 2 + 2 + 2
    assert kernel_json.read(path).frame["run"].tolist() == ["a"] * 3 + ["b"] * 3  # alone, as written


def test_html_report_and_explain_name_the_run(two_programs):
    from roofline.guidance.explain import explain_text
    from roofline.views.report.html import report_html

    t = read_profile(two_programs)
    a = analyze(t, by="name")
    html = report_html(a, None, figures=[])
    for label in ("a: gemm", "a: relu", "b: relu", "b: softmax"):
        assert label in html
    text = explain_text(a, t, "relu", width=120)
    runs = [line.split()[2] for line in text.splitlines() if line.split()[1:2] == ["run"]]
    assert runs == ["b", "a"]  # relu in both runs, longest first


def test_cli_analyze_two_programs(two_programs, tmp_path, capsys):
    from roofline.cli.app import main

    out = tmp_path / "r.json"
    assert main(["analyze", *map(str, two_programs), "--by", "launch", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert len(doc["kernels"]) == 6
    assert {(k["run"], k["launch_id"]) for k in doc["kernels"]} == {(r, i) for r in "ab" for i in range(3)}


def test_the_csv_reader_carries_the_process_name(tmp_path):
    """Same PID (another machine, say) and launch IDs, other program name: two runs, from the files alone."""
    a = raw_csv(tmp_path / "a.csv", 100, [(0, "gemm", {"gpu__time_duration.sum": 1000})], process="python3")
    b = raw_csv(tmp_path / "b.csv", 100, [(0, "gemm", {"dram__bytes.sum": 4000})], process="cutlass_profiler")
    assert read_ncu_csv(a).ids["process_name"].tolist() == ["python3"]
    assert [len(r) for r in split_runs([read_ncu_csv(a), read_ncu_csv(b)])] == [1, 1]
    assert read_profile([a, b]).frame["run"].tolist() == ["a", "b"]
    c = raw_csv(tmp_path / "c.csv", 100, [(0, "gemm", {"dram__bytes.sum": 4000})], process="python3")
    merged = read_profile([a, c]).frame  # same program, other metrics: one launch
    assert len(merged) == 1 and merged.loc[0, "dram_bytes"] == 4000 and merged.loc[0, "time_s"] == pytest.approx(1e-6)

"""CLI conventions (issue 10, points 2 and 3): files are safe, '-' and pipes, stderr for messages,
--quiet, encodings, --version, validated numbers, folders, --filter/--nvtx/--sort, --explain REGEX.

Ground truth: the real V100 CUTLASS GEMM details page (tests/data/ncu/v100_cutlass_gemm), 11 launches
of 4 kernels: 6 SIMT GEMMs of 17,182,415,257,600 FLOPs each, 1 tensor-op GEMM of 17,180,288,614,400,
4 InitializeMatrix launches without FLOPs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from roofline.cli.app import main

DATA = Path(__file__).parent / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
EXAMPLE = Path(__file__).parents[1] / "src" / "roofline" / "data" / "examples" / "deepcam_v100"
SIMT_FLOPS = 17182415257600
TENSOR_FLOPS = 17180288614400
TOTAL_FLOPS = 6 * SIMT_FLOPS + TENSOR_FLOPS


def _json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "a.json"
    assert main(["analyze", *args, "--json", str(out), "--force", "-q"]) == 0
    return json.loads(out.read_text())


def _total_flops(doc: dict) -> float:
    return sum(k["flops"]["total"] or 0 for k in doc["kernels"])


def _run(*args: str, stdin: bytes | None = None, shell: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    cmd = args[0] if shell else [sys.executable, "-m", "roofline", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=120, shell=shell,
                          executable="/bin/bash" if shell else None)


# -- 1. files are safe ---------------------------------------------------------------------------
@pytest.mark.parametrize("option", ["--csv", "--json", "--html"])
def test_output_that_is_the_input_is_refused_even_with_force(tmp_path, capsys, option):
    profile = tmp_path / "in.csv"
    profile.write_bytes(V100_GEMM.read_bytes())
    before = profile.read_bytes()
    assert main(["analyze", str(profile), option, str(profile), "--force"]) == 2
    err = capsys.readouterr().err
    assert "one of the inputs" in err and "Traceback" not in err
    assert profile.read_bytes() == before


def test_output_through_a_symlink_or_a_folder_input_is_refused(tmp_path, capsys):
    profile = tmp_path / "in.csv"
    profile.write_bytes(V100_GEMM.read_bytes())
    link = tmp_path / "link.csv"
    link.symlink_to(profile)
    before = profile.read_bytes()
    assert main(["analyze", str(profile), "--csv", str(link), "--force"]) == 2
    assert main(["analyze", str(tmp_path), "--json", str(profile), "--force"]) == 2  # inside a folder given
    assert profile.read_bytes() == before
    assert capsys.readouterr().err.count("one of the inputs") == 2


def test_compare_and_merge_refuse_to_write_over_an_input(tmp_path, capsys):
    profile = tmp_path / "in.csv"
    profile.write_bytes(V100_GEMM.read_bytes())
    before = profile.read_bytes()
    assert main(["compare", str(V100_GEMM), str(profile), "--json", str(profile), "--force"]) == 2
    assert main(["merge", str(profile), "-o", str(profile), "--force"]) == 2
    assert profile.read_bytes() == before
    machine = tmp_path / "m.json"
    machine.write_bytes((EXAMPLE / "v100_sxm2_demo_machine.json").read_bytes())
    assert main(["analyze", str(V100_GEMM), "-m", str(machine), "--json", str(machine), "--force"]) == 2
    assert machine.read_bytes() == (EXAMPLE / "v100_sxm2_demo_machine.json").read_bytes()


# -- 2. standard input and output, pipes ----------------------------------------------------------
def test_stdin_and_json_to_stdout_is_parseable_and_the_same_as_the_file(tmp_path):
    from_file = _json(tmp_path, str(V100_GEMM))
    done = _run("analyze", "-", "--json", "-", stdin=V100_GEMM.read_bytes())
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)  # nothing but the JSON on stdout
    assert doc["kernels"] == from_file["kernels"] and _total_flops(doc) == TOTAL_FLOPS
    assert b"Kernels by time" in done.stderr  # the tables moved to stderr


def test_csv_to_stdout(tmp_path):
    done = _run("analyze", "-", "--csv", "-", "-q", stdin=V100_GEMM.read_bytes())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("kernel_name") or "kernel_name" in lines[0].split(",")
    assert len(lines) == 1 + 4  # header + 4 kernels


def test_dev_stdin_and_process_substitution():
    done = _run("analyze", "/dev/stdin", "--json", "-", stdin=V100_GEMM.read_bytes())
    assert done.returncode == 0, done.stderr
    assert _total_flops(json.loads(done.stdout)) == TOTAL_FLOPS
    cmd = (f"{sys.executable} -m roofline analyze <(cat '{V100_GEMM}') --json - -q")
    done = _run(cmd, shell=True)
    assert done.returncode == 0, done.stderr
    assert _total_flops(json.loads(done.stdout)) == TOTAL_FLOPS


def test_fifo_is_read_once_without_stat_or_seek(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    data = V100_GEMM.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        doc = _json(tmp_path, str(fifo))
    finally:
        writer.join(timeout=30)
    assert _total_flops(doc) == TOTAL_FLOPS and len(doc["kernels"]) == 4


def test_binary_on_stdin_asks_for_a_file_name():
    done = _run("analyze", "-", stdin=b"\x00\x01NVIDIA report" * 100)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "file name" in err and ".ncu-rep" in err and "Traceback" not in err
    done = _run("analyze", "-", stdin=b"")
    assert done.returncode == 2 and b"empty" in done.stderr


# -- 3. messages on stderr, once; --quiet -----------------------------------------------------------
def test_notes_go_to_stderr_once_and_quiet_silences_them(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["analyze", str(V100_GEMM), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "Kernels by time" in captured.out and "note:" not in captured.out and "wrote" not in captured.out
    assert "note: no machine given" in captured.err and f"wrote {out}" in captured.err
    assert main(["analyze", str(V100_GEMM), "--json", str(out), "--force", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "Kernels by time" in captured.out


def test_compare_says_each_note_once(capsys):
    assert main(["compare", str(EXAMPLE), str(EXAMPLE)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and len(err) == len(set(err))
    assert sum("fp64_flops unknown" in line for line in err) == 1
    assert any(line.startswith("note: (before and after)") for line in err)


# -- 4. encodings --------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom"])
def test_encodings_give_the_same_numbers(tmp_path, encoding):
    text = V100_GEMM.read_text(encoding="utf-8")
    if encoding == "utf-16-le-bom":
        data = b"\xff\xfe" + text.encode("utf-16-le")
    elif encoding == "utf-16-be-bom":
        data = b"\xfe\xff" + text.encode("utf-16-be")
    else:
        data = text.encode(encoding)
    p = tmp_path / "enc.csv"
    p.write_bytes(data)
    reference = _json(tmp_path, str(V100_GEMM))
    doc = _json(tmp_path, str(p))
    assert doc["kernels"] == reference["kernels"]
    done = _run("analyze", "-", "--json", "-", "-q", stdin=data)  # the same through a pipe
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kernels"] == reference["kernels"]


def test_latin1_kernel_names(tmp_path):
    text = V100_GEMM.read_text(encoding="utf-8").replace("InitializeMatrix_kernel", "Initialisé_kernel")
    p = tmp_path / "latin1.csv"
    p.write_bytes(text.encode("latin-1"))
    doc = _json(tmp_path, str(p))
    names = [k["name"] for k in doc["kernels"]]
    assert any("Initialisé_kernel" in n for n in names)
    assert _total_flops(doc) == TOTAL_FLOPS


# -- 5./6. version, numbers ----------------------------------------------------------------------
def test_version(capsys):
    from roofline import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == __version__
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == __version__


@pytest.mark.parametrize("args", [
    ["analyze", str(V100_GEMM), "--top", "-3"],
    ["analyze", str(V100_GEMM), "--top", "0"],
    ["compare", str(V100_GEMM), str(V100_GEMM), "--fail-if-slower", "nan"],
    ["compare", str(V100_GEMM), str(V100_GEMM), "--fail-if-slower", "-5"],
    ["compare", str(V100_GEMM), str(V100_GEMM), "--fail-if-slower", "inf"],
    ["compare", str(V100_GEMM), str(V100_GEMM), "--top", "0"],
    ["profile", "--top", "-1", "--", "true"],
    ["profile", "--launch-count", "0", "--", "true"],
    ["profile", "--launch-skip", "-2", "--", "true"],
    ["analyze", str(V100_GEMM), "--sort", "size"],
])
def test_bad_numbers_are_one_line_usage_errors(capsys, args):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("roofline: error:") and "Traceback" not in err


# -- 7. output folders ---------------------------------------------------------------------------
def test_demo_and_file_options_create_missing_folders(tmp_path, capsys):
    out = tmp_path / "new" / "deeper"
    assert main(["demo", "-o", str(out), "-q"]) == 0
    assert (out / "roofline-demo.png").read_bytes()[:4] == b"\x89PNG"
    nested = tmp_path / "a" / "b" / "c.json"
    assert main(["analyze", str(V100_GEMM), "--json", str(nested), "-q"]) == 0
    assert _total_flops(json.loads(nested.read_text())) == TOTAL_FLOPS
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["analyze", str(V100_GEMM), "--json", str(blocker / "c.json")]) == 2
    assert "is a file" in capsys.readouterr().err


# -- 8. folders ----------------------------------------------------------------------------------
def test_analyze_folder_skips_unreadable_files_with_one_note(tmp_path, capsys):
    (tmp_path / "gemm.csv").write_bytes(V100_GEMM.read_bytes())
    (tmp_path / "notes.csv").write_text("hello\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "README.md").write_text("not a profile pattern: not even looked at")
    out = tmp_path / "out" / "a.json"
    assert main(["analyze", str(tmp_path), "--json", str(out)]) == 0
    assert _total_flops(json.loads(out.read_text())) == TOTAL_FLOPS
    skipped = [line for line in capsys.readouterr().err.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and "2 files" in skipped[0]
    assert "notes.csv" in skipped[0] and "empty.csv" in skipped[0] and "README" not in skipped[0]


def test_empty_or_unreadable_folder_is_a_clear_error(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["analyze", str(empty)]) == 2
    assert "holds no profiles" in capsys.readouterr().err
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.csv").write_text("hello\n")
    assert main(["analyze", str(junk)]) == 2
    assert "none of the files" in capsys.readouterr().err


# -- 9./10. filter, nvtx, sort, explain ------------------------------------------------------------
def test_filter_selects_by_regex_and_says_when_nothing_matches(tmp_path, capsys):
    doc = _json(tmp_path, str(V100_GEMM), "--filter", r"tensorop_s\d+gemm")
    assert [k["flops"]["total"] for k in doc["kernels"]] == [TENSOR_FLOPS]
    doc = _json(tmp_path, str(V100_GEMM), "--filter", "Initialize")
    assert len(doc["kernels"]) == 2 and _total_flops(doc) == 0
    capsys.readouterr()
    assert main(["analyze", str(V100_GEMM), "--filter", "nothing_like_this"]) == 2
    err = capsys.readouterr().err
    assert "no kernel name matches" in err and "InitializeMatrix_kernel" in err
    assert main(["analyze", str(V100_GEMM), "--filter", "gemm("]) == 2
    assert "invalid regular expression" in capsys.readouterr().err


def test_sort_orders_the_table(capsys):
    assert main(["analyze", str(V100_GEMM), "--sort", "ai", "-q"]) == 0
    out = capsys.readouterr().out
    assert "Kernels by ai" in out
    # DRAM intensity: tensor-op GEMM (682) above the SIMT GEMM (84.4)
    assert out.index("s884gemm") < out.index("Kernel<Gemm>")
    from roofline import api
    from roofline.analysis.select import sort_rows

    a = api.analyze(V100_GEMM)
    for key, col in (("flops", "flops"), ("savable", "savable_time_s"), ("time", "time_s"), ("ai", "ai_dram")):
        values = sort_rows(a.frame, key, a.levels)[col].dropna().to_numpy()
        assert (values[:-1] >= values[1:]).all(), key
    assert sort_rows(a.frame, "ai", a.levels)["ai_dram"].iloc[0] == a.frame["ai_dram"].max()


def test_nvtx_selects_a_phase_by_name_then_regex(tmp_path, capsys):
    from roofline.readers import kernel_json, read_profile

    table = read_profile(V100_GEMM)
    frame = table.frame.copy()
    frame["phase"] = ["init"] * 4 + ["gemm/simt"] * 6 + ["gemm/tensor"]
    path = tmp_path / "phased.kernels.json"
    path.write_text(kernel_json.to_json(type(table)(frame=frame, metrics=table.metrics, sources=table.sources)))
    doc = _json(tmp_path, str(path), "--nvtx", "gemm/tensor")
    assert _total_flops(doc) == TENSOR_FLOPS
    doc = _json(tmp_path, str(path), "--nvtx", "^gemm")
    assert _total_flops(doc) == TOTAL_FLOPS
    capsys.readouterr()
    assert main(["analyze", str(path), "--nvtx", "backward"]) == 2
    err = capsys.readouterr().err
    assert "no NVTX range is named 'backward' or matches it" in err and "gemm/simt" in err
    from roofline import api

    assert api.analyze(table, kernels="tensorop").totals["flops"] == TENSOR_FLOPS


def test_explain_regex_prints_only_the_diagnoses(capsys):
    assert main(["analyze", str(V100_GEMM), "--explain", "gemm", "-q"]) == 0
    out = capsys.readouterr().out
    assert "2 kernels match 'gemm'" in out
    assert "total time 3.02 s" not in out and "Kernels by time" not in out and "What to work on" not in out
    assert out.count("limited by") == 2
    assert main(["analyze", str(V100_GEMM), "--explain", "zzz"]) == 2


# -- 11. wording -----------------------------------------------------------------------------------
def test_wording_plural_flops_unknown_and_prefixes(tmp_path, capsys):
    assert main(["analyze", str(V100_GEMM), "--filter", "tensorop", "-q"]) == 0
    out = capsys.readouterr().out
    assert "in 1 launch of 1 kernel;" in out
    assert "94.72 TFLOP/s" in out and "e+" not in out
    assert main(["analyze", str(V100_GEMM), "-q"]) == 0
    out = capsys.readouterr().out
    assert "in 11 launches of 4 kernels;" in out and "2 kernels without FLOPs" in out
    assert "36.51 TFLOP/s" in out and "e+0" not in out


def test_by_launch_summary_counts_kernels_not_rows(capsys):
    assert main(["analyze", str(V100_GEMM), "--by", "launch", "-q"]) == 0
    assert "in 11 launches of 4 kernels;" in capsys.readouterr().out


def test_a_reader_that_stops_reading_ends_the_printing_not_the_command(tmp_path):
    """``roofline analyze X --json f.json | true``: the table meets a closed pipe; the file asked for
    is still written and the command succeeds (rich's console exited with 1 before writing it)."""
    out = tmp_path / "f.json"
    r = _run(f"'{sys.executable}' -m roofline analyze '{V100_GEMM}' --json '{out}' | true; exit ${{PIPESTATUS[0]}}",
             shell=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["totals"]["launches"] == 11
    assert b"Traceback" not in r.stderr and b"error" not in r.stderr


def test_flops_unknown_summary_and_no_chart(tmp_path, capsys):
    lines = V100_GEMM.read_text().splitlines(keepends=True)
    keep = [ln for ln in lines if "sm__sass_thread_inst" not in ln and "inst_executed_pipe_tensor" not in ln]
    p = tmp_path / "noflops.csv"
    p.write_text("".join(keep))
    png = tmp_path / "chart.png"
    assert main(["analyze", str(p), "--png", str(png), "--json", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert "nothing to draw" in err and "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in err
    assert not png.exists() and not (tmp_path / "a.json").exists()  # nothing written at all
    assert main(["analyze", str(p), "-q"]) == 0
    out = capsys.readouterr().out
    assert "FLOPs unknown" in out and "0 FLOP counted" not in out


def test_svg_text_stays_text(tmp_path):
    svg = tmp_path / "c.svg"
    assert main(["analyze", str(V100_GEMM), "-m", "v100-pcie", "--png", str(svg), "-q"]) == 0
    text = svg.read_text()
    assert "<text" in text


def test_compare_reads_one_side_from_stdin_and_writes_json_to_stdout(tmp_path):
    done = _run("compare", "-", str(V100_GEMM), "--json", "-", "-q", stdin=V100_GEMM.read_bytes())
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["totals"]["time_change_s"] == 0 and doc["totals"]["matched"] == 4
    assert b"Changes" in done.stderr  # the table went to stderr
    done = _run("compare", "-", "-", stdin=V100_GEMM.read_bytes())
    assert done.returncode == 2 and b"not both" in done.stderr


def test_messages_route_logging_and_python_warnings_once_and_quiet_drops_them():
    import io
    import logging
    import warnings

    from roofline.cli.console import Messages

    stream = io.StringIO()
    messages = Messages(stream=stream)
    with messages.capture():
        for _ in range(3):
            logging.getLogger("roofline.readers.test").warning("counter %s missing", "x")
            warnings.warn("a RuntimeWarning from numpy", RuntimeWarning, stacklevel=1)
        messages.note("same note")
        messages.note("same note")
    assert stream.getvalue().splitlines() == ["warning: counter x missing", "warning: a RuntimeWarning from numpy",
                                              "note: same note"]
    quiet = Messages(quiet=True, stream=io.StringIO())
    with quiet.capture():
        logging.getLogger("roofline").warning("hidden")
        quiet.wrote("x.json")
    assert quiet.stream.getvalue() == ""


def test_launch_id_mismatch_names_plain_integers(tmp_path):
    """Error messages print launch IDs as 3, never np.int64(3)."""
    from roofline.errors import InputError
    from roofline.readers.dispatch import read_one
    from roofline.readers.ncu.combine import merge_profiles

    cut = tmp_path / "out.dram__bytes.sum"
    lines = (EXAMPLE / "out.dram__bytes.sum").read_text().splitlines(keepends=True)
    cut.write_text("".join(line for line in lines if not line.startswith('"3",')))
    with pytest.raises(InputError) as err:
        merge_profiles([read_one(EXAMPLE / "out.sm__cycles_elapsed.avg"), read_one(cut)])
    assert "(only there: 3; only here: none)" in err.value.message and "np." not in err.value.render()


def test_stdout_takes_one_output_and_never_a_chart(capsys):
    assert main(["analyze", str(V100_GEMM), "--json", "-", "--csv", "-"]) == 2
    assert "only one output" in capsys.readouterr().err
    assert main(["analyze", str(V100_GEMM), "--png", "-"]) == 2
    assert "chart cannot go to standard output" in capsys.readouterr().err


def test_a_missing_dependency_is_named_with_its_pip_package(tmp_path):
    """An install without plotly (PYTHONPATH=src on a machine that lacks it): one line naming the module and
    the package to install, exit 1, no traceback, no report."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoPlotly:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'plotly' or name.startswith('plotly.'):\n"
        "            raise ModuleNotFoundError(f\"No module named '{name}'\", name=name)\n"
        "sys.meta_path.insert(0, _NoPlotly())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(Path(__file__).parents[1] / "src")])}
    env.pop("ROOFLINE_DEBUG", None)
    out = subprocess.run([sys.executable, "-m", "roofline", "analyze", str(V100_GEMM), "--html", str(tmp_path / "r.html"),
                          "-q"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "roofline: error: the Python module 'plotly' is not installed, and this command needs it: pip install plotly "
        "(pip install roofline installs every required one; optional ones are in its extras)"]
    assert not (tmp_path / "r.html").exists()

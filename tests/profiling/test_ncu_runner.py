"""The ncu runner against a fake `ncu` (tests/profiling/fake_ncu.py) that prints and writes what ncu does."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

import needs

from roofline.errors import InputError, ToolNotFoundError
from roofline.profiling import session
from roofline.profiling.ncu_output import PERMISSION_HELP, NcuProgress
from roofline.profiling.ncu_runner import find_ncu, find_program, ncu_command, run_ncu
from roofline.profiling.settings import ProfileSettings

HERE = Path(__file__).resolve().parent
RECORDED = HERE.parent / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"  # = conftest.RECORDED
RECORDED_KERNELS = 16  # launches in the recorded raw page




def _settings(tmp_path: Path, *command: str, **kw) -> ProfileSettings:  # type: ignore[no-untyped-def]
    return ProfileSettings(command=command or (sys.executable, "-c", "print('hello from the program')"),
                           output=tmp_path / "run", **{"arch": "9.0", **kw})


# -- the argument list -------------------------------------------------------------

def test_command_is_one_ncu_run_with_nvtx_all_processes_and_no_clock_control(tmp_path: Path) -> None:
    s = _settings(tmp_path, "python", "train.py", "--lr", "0.1; rm -rf /", kernel_name="regex:gemm",
                  launch_skip=5, launch_count=20, nvtx_include=("forward/", "backward/"))
    cmd = ncu_command(s, ["a.sum", "b.sum"], tmp_path / "run.ncu-rep", ncu="/opt/ncu")
    assert cmd[0] == "/opt/ncu"
    assert cmd[cmd.index("--metrics") + 1] == "a.sum,b.sum"
    assert "--nvtx" in cmd
    assert cmd[cmd.index("--target-processes") + 1] == "all"
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--export") + 1] == str(tmp_path / "run.ncu-rep")
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:gemm"
    assert cmd[cmd.index("--launch-skip") + 1] == "5" and cmd[cmd.index("--launch-count") + 1] == "20"
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--nvtx-include"] == ["forward/", "backward/"]
    # the program comes last, after --, each argument its own list item (no shell)
    assert cmd[cmd.index("--") + 1:] == ["python", "train.py", "--lr", "0.1; rm -rf /"]
    other = ncu_command(_settings(tmp_path, "x", clock_control="base"), ["m"], tmp_path / "r.ncu-rep")
    assert other[other.index("--clock-control") + 1] == "base"
    assert "--kernel-name" not in other and "--nvtx-include" not in other


def test_settings_refuse_bad_values(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        ProfileSettings(command=())
    with pytest.raises(InputError):
        _settings(tmp_path, "x", clock_control="fast")
    with pytest.raises(InputError):
        _settings(tmp_path, "x", launch_count=-1)


def test_missing_ncu_and_program_are_typed_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolNotFoundError) as err:
        find_ncu("ncu")
    assert "--no-counters" in err.value.render() and "Nsight Compute" in err.value.render()
    with pytest.raises(InputError, match="not found on PATH"):
        find_program(["no-such-program-xyz"])
    with pytest.raises(InputError, match="does not exist"):
        find_program([str(tmp_path / "missing.py")])


# -- what ncu prints --------------------------------------------------------------------

def test_progress_lines_are_counted_and_program_lines_passed_over() -> None:
    p = NcuProgress()
    assert p.feed("==PROF== Connected to process 4242 (/usr/bin/python3)\n")
    assert not p.feed("epoch 1 loss 0.3\n")
    assert p.feed('==PROF== Profiling "void at::native::vectorized_elementwise_kernel<4, at::native::'
                  'CUDAFunctor_add<float>>(int, T2, T3)" - 0: 0%....50%....100% - 9 passes\n')
    assert p.feed('==PROF== Profiling "ampere_sgemm_128x64_nn" - 1: 0%....50%....100% - 46 passes\n')
    assert p.kernels == 2 and p.passes == 46 and p.last_kernel == "ampere_sgemm_128x64_nn"
    assert p.processes == 1 and not p.permission_error
    p.feed("==ERROR== The application returned an error code (7).")
    p.feed("==PROF== Report: /tmp/x.ncu-rep")
    assert p.app_error_code == 7 and p.report == "/tmp/x.ncu-rep"


def test_permission_error_is_found_in_the_text() -> None:
    p = NcuProgress()
    p.feed("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    assert p.permission_error
    for needed in ("CAP_SYS_ADMIN", "NVreg_RestrictProfilingToAdminUsers=0", "--cap-add SYS_ADMIN", "--no-counters",
                   "https://developer.nvidia.com/ERR_NVGPUCTRPERM"):
        assert needed in PERMISSION_HELP


# -- running the fake ncu -------------------------------------------------------------------

def test_run_streams_progress_and_writes_the_report(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_NCU_KERNELS", "5")
    s = _settings(tmp_path)
    report = s.path(".ncu-rep")
    counts: list[int] = []
    lines: list[tuple[str, bool]] = []
    run = run_ncu(ncu_command(s, ["gpu__time_duration.sum"], report), report,
                  on_line=lambda line, is_ncu: lines.append((line, is_ncu)),
                  on_progress=lambda p: counts.append(p.kernels))
    assert run.returncode == 0 and not run.interrupted and not run.program_failed
    assert run.report == report and report.read_bytes() == RECORDED.read_bytes()
    assert run.progress.kernels == 5 and counts[-1] == 5 and counts == sorted(counts)
    assert ("hello from the program\n", False) in lines
    argv = json.loads(fake_ncu.read_text())
    assert argv[argv.index("--") + 1:] == list(s.command)


def test_interrupt_is_forwarded_and_the_partial_report_kept(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_NCU_MODE", "interrupt")
    monkeypatch.setenv("FAKE_NCU_KERNELS", "2")
    s = _settings(tmp_path)
    report = s.path(".ncu-rep")

    def ctrl_c(line: str, is_ncu: bool) -> None:
        if line.startswith("==PROF== waiting"):
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C now

    run = run_ncu(ncu_command(s, ["m"], report), report, on_line=ctrl_c)
    assert run.interrupted and run.returncode == 130
    assert run.progress.kernels == 2
    assert run.report == report and report.exists()  # the fake writes it only after SIGINT arrived


@pytest.mark.parametrize("mode", ["perm0", "perm1"])
def test_permission_error_falls_back_to_counter_free_whatever_ncu_exits_with(
        tmp_path: Path, fake_ncu: Path, monkeypatch, mode: str) -> None:
    needs.torch()
    monkeypatch.setenv("FAKE_NCU_MODE", mode)
    script = tmp_path / "prog.py"
    script.write_text("import torch\na = torch.ones(256)\nb = a * 2 + a\nprint('done')\n")
    outcome = session.profile(_settings(tmp_path, sys.executable, str(script)))
    assert outcome.mode == "counter-free" and outcome.exit_code == session.EXIT_OK
    assert outcome.notes[0] == PERMISSION_HELP
    assert outcome.table is not None and outcome.table.frame["estimated"].all()
    assert {"aten::mul", "aten::add"} <= set(outcome.table.frame["kernel_name"])
    assert (tmp_path / "run.kernels.json").exists() and not (tmp_path / "run.ncu-rep").exists()


def test_permission_error_without_fallback_exits_4(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_NCU_MODE", "perm0")
    outcome = session.profile(_settings(tmp_path, fallback=False))
    assert outcome.exit_code == session.EXIT_NO_COUNTERS == 4
    assert outcome.table is None and outcome.status == "permission-denied"
    assert PERMISSION_HELP in outcome.notes


def test_existing_outputs_are_refused_before_running(tmp_path: Path, fake_ncu: Path) -> None:
    from roofline.errors import OutputExistsError

    (tmp_path / "run.ncu-rep").write_text("precious")
    with pytest.raises(OutputExistsError):
        session.profile(_settings(tmp_path))
    assert not fake_ncu.exists()  # ncu never started
    assert (tmp_path / "run.ncu-rep").read_text() == "precious"


# -- the whole session (needs the ncu CSV reader) ----------------------------------------------

def test_session_reads_the_report_into_a_kernel_table(tmp_path: Path, fake_ncu: Path) -> None:
    outcome = session.profile(_settings(tmp_path))
    assert outcome.exit_code == 0 and outcome.status == "ok" and outcome.mode == "ncu"
    assert len(outcome.table) == RECORDED_KERNELS
    assert not outcome.table.frame["estimated"].any()
    names = {p.name for p in outcome.files}
    assert names == {"run.ncu-rep", "run.ncu.csv", "run.kernels.json"}
    from roofline.readers import kernel_json as table_file

    again = table_file.read(tmp_path / "run.kernels.json")
    assert len(again) == RECORDED_KERNELS
    assert again.frame["time_s"].tolist() == pytest.approx(outcome.table.frame["time_s"].tolist())


def test_program_failure_keeps_the_profile_and_exits_3(tmp_path: Path, fake_ncu: Path) -> None:
    outcome = session.profile(_settings(tmp_path, sys.executable, "-c", "import sys; sys.exit(9)"))
    assert outcome.exit_code == session.EXIT_PROGRAM_FAILED == 3
    assert outcome.status == "program-failed" and outcome.table is not None
    assert any("exit status 9" in n for n in outcome.notes)


# -- architecture detection ------------------------------------------------------------------------

def _fake_smi(tmp_path: Path, text: str, rc: int = 0) -> Path:
    bindir = tmp_path / "smi"
    bindir.mkdir()
    exe = bindir / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\nprintf '{text}'\nexit {rc}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bindir


def test_compute_capability_from_nvidia_smi_honours_visible_devices(tmp_path: Path, monkeypatch) -> None:
    from roofline.profiling.ncu_runner import detect_compute_capability

    monkeypatch.setenv("PATH", str(_fake_smi(tmp_path, "9.0\\n8.0\\n")))
    assert detect_compute_capability({}) == "9.0"
    assert detect_compute_capability({"CUDA_VISIBLE_DEVICES": "1"}) == "8.0"


def test_no_gpu_is_a_typed_error_naming_arch_and_no_counters(tmp_path: Path, monkeypatch) -> None:
    from roofline.profiling.ncu_runner import detect_compute_capability

    monkeypatch.setenv("PATH", str(_fake_smi(tmp_path, "No devices were found\\n", rc=6)))
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML bindings either
    with pytest.raises(ToolNotFoundError) as err:
        detect_compute_capability({})
    assert "--arch" in err.value.render() and "--no-counters" in err.value.render()


def test_a_metric_the_chip_lacks_is_dropped_and_the_program_profiled_again(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from roofline.profiling import metricsets

    lacking = "sm__ops_path_tensor_src_fp8.sum"
    assert lacking in metricsets.metric_set("9.0")  # as if this Hopper's ncu release did not know it
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", lacking)

    outcome = session.profile(_settings(tmp_path))
    assert outcome.exit_code == 0 and outcome.status == "ok"
    assert len(outcome.table) == RECORDED_KERNELS
    assert any(lacking in n and "profiled again" in n for n in outcome.notes)
    second_run = json.loads((tmp_path / "argv.json").read_text())  # the fake logs the last argv
    assert lacking not in second_run[second_run.index("--metrics") + 1].split(",")


def test_an_unknown_metric_the_user_asked_for_is_not_dropped(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", "sm__made_up.sum")
    with pytest.raises(InputError, match="Failed to find metric sm__made_up.sum"):
        session.profile(_settings(tmp_path, metrics=("sm__made_up.sum", "gpu__time_duration.sum")))


def test_refusal_written_as_a_regex_names_the_requested_metric() -> None:
    # ncu 2023+ may name the regex it tried instead of the metric: the requested sm__foo.sum is refused.
    p = NcuProgress()
    assert p.feed("==ERROR== Failed to find metric regex:^sm__foo\\.(sum|avg|max|min)$")
    assert p.unknown_metrics == ["sm__foo.sum", "sm__foo.avg", "sm__foo.max", "sm__foo.min"]
    assert p.refused(["gpu__time_duration.sum", "sm__foo.sum", "sm__foo.sum.peak_sustained", "sm__foo"]) == [
        "sm__foo.sum", "sm__foo"]
    p.feed("==ERROR== Failed to find metric dram__bytes.sum")
    assert p.refused(["dram__bytes.sum", "sm__foo.avg", "lts__t_bytes.sum"]) == ["dram__bytes.sum", "sm__foo.avg"]
    assert len(p.errors) == 2


def _runs(log: Path) -> list[list[str]]:
    lines = Path(str(log) + ".runs").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _requested(argv: list[str]) -> list[str]:
    return argv[argv.index("--metrics") + 1].split(",")


@pytest.mark.parametrize("form", ["name", "regex"])
def test_every_refused_metric_of_our_set_is_dropped_one_run_at_a_time(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    from roofline.profiling import metricsets

    lacking = ["sm__ops_path_tensor_src_fp64.sum", "sm__ops_path_tensor_src_fp8.sum", "dram__bytes_read.sum"]
    assert set(lacking) <= set(metricsets.metric_set("9.0"))
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", ",".join(lacking))
    monkeypatch.setenv("FAKE_NCU_UNKNOWN_FORM", form)
    outcome = session.profile(_settings(tmp_path))
    assert outcome.exit_code == 0 and len(outcome.table) == RECORDED_KERNELS
    runs = _runs(fake_ncu)
    assert len(runs) == 4  # refused, refused, refused, profiled
    first = _requested(runs[0])
    for i, argv in enumerate(runs):
        assert _requested(argv) == [m for m in first if m not in lacking[:i]]
    (note,) = [n for n in outcome.notes if "profiled again" in n]
    assert note.startswith("ncu does not know " + ", ".join(lacking) + " on this GPU") and "without them" in note


def test_refusals_stop_after_five_ncu_runs_with_one_error(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from roofline.profiling import metricsets

    lacking = [m for m in metricsets.metric_set("9.0") if m.startswith("sm__ops_path_tensor_src_")][:6]
    assert len(lacking) == 6
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", ",".join(lacking))
    with pytest.raises(InputError) as err:
        session.profile(_settings(tmp_path))
    assert len(_runs(fake_ncu)) == session.MAX_NCU_RUNS == 5
    text = err.value.render()
    assert f"still refuses metrics of the roofline set after 5 runs: {lacking[4]}" in text
    assert "already left out: " + ", ".join(lacking[:4]) in text


def test_a_users_metric_refused_as_a_regex_is_one_error_and_one_run(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", "sm__made_up.sum")
    monkeypatch.setenv("FAKE_NCU_UNKNOWN_FORM", "regex")
    with pytest.raises(InputError, match=r"ncu refused the metric list: Failed to find metric regex:\^sm__made_up"):
        session.profile(_settings(tmp_path, metrics=("sm__made_up.sum", "gpu__time_duration.sum")))
    assert len(_runs(fake_ncu)) == 1


# -- the GPU's metric catalog -------------------------------------------------------

def test_the_catalog_leaves_out_what_this_gpu_lacks_before_one_run(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a chip the table cannot check (Blackwell), names the GPU's catalog lacks are left out before
    profiling: one ncu run, not one run per refused name."""
    from roofline.profiling import metricsets

    ours = metricsets.metric_set("10.0")
    lacking = ["sm__ops_path_tensor_src_fp64.sum", "sm__ops_path_tensor_src_fp16.sum",
               "sm__sass_thread_inst_executed_op_ffma2_pred_on.sum", "dram__bytes_read.sum"]
    assert set(lacking) <= set(ours)
    catalog = tmp_path / "catalog.txt"
    catalog.write_text("\n".join(m for m in ours if m not in lacking and not m.startswith(("launch__", "device__"))))
    monkeypatch.setenv("FAKE_NCU_CATALOG", str(catalog))
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", ",".join(lacking))  # were one asked for, ncu would refuse it
    outcome = session.profile(_settings(tmp_path, arch="10.0"))
    assert outcome.exit_code == 0 and len(outcome.table) == RECORDED_KERNELS
    (run,) = _runs(fake_ncu)
    assert _requested(run) == [m for m in ours if m not in lacking]
    assert any(m.startswith("launch__") for m in _requested(run))  # attributes the catalog does not list: kept
    query = json.loads(Path(str(fake_ncu) + ".query").read_text())
    assert "--chips" not in query  # the GPUs on this machine
    assert "sm__ops_path_tensor_src_fp16" in query[query.index("--metrics") + 1].split(",")
    (note,) = [n for n in outcome.notes if "does not list" in n]
    assert note.startswith("left out 4 metrics of the roofline set") and note.endswith(
        ", ".join(m for m in ours if m in lacking) + "; the analysis says what stays unknown")
    assert not [n for n in outcome.notes if "profiled again" in n]


def test_without_a_catalog_refused_names_are_still_dropped_run_by_run(
        tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No catalog (the fake prints what the real ncu prints without a driver): the refusal loop."""
    from roofline.profiling.ncu_runner import listed_metrics

    assert listed_metrics("ncu", ["dram__bytes.sum"]) is None
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", "sm__ops_path_tensor_src_fp8.sum")
    outcome = session.profile(_settings(tmp_path))
    assert outcome.exit_code == 0 and len(_runs(fake_ncu)) == 2
    assert not [n for n in outcome.notes if "does not list" in n]


def test_a_users_metrics_are_passed_as_given(tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = tmp_path / "catalog.txt"
    catalog.write_text("gpu__time_duration.sum\n")
    monkeypatch.setenv("FAKE_NCU_CATALOG", str(catalog))
    session.profile(_settings(tmp_path, metrics=("gpu__time_duration.sum", "dram__bytes.sum")))
    assert _requested(_runs(fake_ncu)[0]) == ["gpu__time_duration.sum", "dram__bytes.sum"]
    assert not Path(str(fake_ncu) + ".query").exists()

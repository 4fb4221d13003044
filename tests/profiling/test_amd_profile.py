"""`roofline profile` on an AMD GPU, end to end through the CLI, with a fake rocprofv3 that writes a real
MI300X run's values in rocprofv3's layout (tests/profiling/fake_rocprofv3.py, tests/rocprof_forms.py).
It has not run on AMD hardware: these tests are what stands for it."""

from __future__ import annotations

import csv
import gzip
import json
import math
import sys
from pathlib import Path

from roofline.cli.app import main
from roofline.counting.amd import required_counters
from roofline.profiling import rocprof_runner
from roofline.profiling.settings import ProfileSettings
from roofline.readers import kernel_json

RECORDED = Path(__file__).resolve().parents[1] / "data" / "amd" / "rocprofcompute_vcopy_mi300x_gfx942_rocpd" / "pmc_perf.csv.gz"


def _runs(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _pmc(argv: list[str]) -> list[str]:
    options = argv[:argv.index("--")]
    out = []
    for a in options[options.index("--pmc") + 1:]:
        if a.startswith("-"):
            break
        out.append(a)
    return out


def _recorded(dispatch: int) -> dict[str, float]:
    with gzip.open(RECORDED, "rt", newline="") as fh:
        return {r["Counter_Name"]: float(r["Counter_Value"]) for r in csv.DictReader(fh) if r["Dispatch_ID"] == str(dispatch)}


def test_profile_runs_a_trace_then_one_rocprofv3_per_pass(tmp_path: Path, fake_rocprofv3: Path, capsys) -> None:
    out = tmp_path / "r.json"
    code = main(["profile", "--arch", "gfx942", "-o", str(tmp_path / "run"), "--json", str(out),
                 "--", sys.executable, "-c", "print('program output')"])
    assert code == 0
    captured = capsys.readouterr()
    assert captured.out.count("program output") == 1 + len(required_counters("gfx942"))
    runs = _runs(fake_rocprofv3)
    assert "--kernel-trace" in runs[0] and "--pmc" not in runs[0]
    assert [_pmc(r) for r in runs[1:]] == [list(p) for p in required_counters("gfx942")]
    assert all(r[r.index("--output-format") + 1] == "csv" for r in runs)
    table = kernel_json.read(tmp_path / "run.kernels.json").frame.sort_values("launch_id").reset_index(drop=True)
    assert (tmp_path / "run.rocprofv3" / "trace" / "run_kernel_trace.csv").exists()
    report = json.loads(out.read_text())
    assert sum(k["launches"] for k in report["kernels"]) == 3
    assert len(table) == 3
    v = _recorded(1)
    hbm = (128 * v["TCC_BUBBLE_sum"] + 32 * v["TCC_EA0_RDREQ_32B_sum"]
           + 64 * (v["TCC_EA0_RDREQ_sum"] - v["TCC_BUBBLE_sum"] - v["TCC_EA0_RDREQ_32B_sum"])
           + 64 * v["TCC_EA0_WRREQ_64B_sum"] + 32 * (v["TCC_EA0_WRREQ_sum"] - v["TCC_EA0_WRREQ_64B_sum"]))
    assert table["dram_bytes"][0] == hbm and table["compute_capability"][0] == "gfx942"


def test_counters_the_gpu_does_not_list_are_left_out_and_unknown(tmp_path: Path, fake_rocprofv3: Path, monkeypatch,
                                                                    capsys) -> None:
    monkeypatch.setenv("FAKE_ROCPROF_MISSING", "TCC_BUBBLE_sum")
    code = main(["profile", "-o", str(tmp_path / "run"), "--arch", "gfx942", "--", sys.executable, "-c", "pass"])
    assert code == 0
    asked = [c for r in _runs(fake_rocprofv3)[1:] for c in _pmc(r)]
    assert "TCC_BUBBLE_sum" not in asked and "TCC_EA0_RDREQ_sum" in asked
    assert "left out 1 counters this GPU's rocprofv3 does not list: TCC_BUBBLE_sum" in capsys.readouterr().err
    frame = kernel_json.read(tmp_path / "run.kernels.json").frame
    assert len(frame) == 3 and ("dram_bytes" not in frame or frame["dram_bytes"].isna().all())  # unknown, never 0
    assert frame["l2_bytes"].notna().all()


def test_an_amd_gpu_is_found_without_arch(tmp_path: Path, fake_rocprofv3: Path) -> None:
    (Path(str(fake_rocprofv3.parent / "amdbin")) / "amd-smi").write_text("#!/bin/sh\nexit 0\n")
    (fake_rocprofv3.parent / "amdbin" / "amd-smi").chmod(0o755)
    code = main(["profile", "-o", str(tmp_path / "run"), "--", sys.executable, "-c", "pass"])
    assert code == 0
    assert len(_runs(fake_rocprofv3)) == 1 + len(required_counters("gfx942"))  # gfx942 from rocprofv3 --list-avail


def test_kfd_nodes_name_the_gfx_target(tmp_path: Path, monkeypatch) -> None:
    for node, version in (("0", "0"), ("1", "90402"), ("2", "90010")):
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(f"cpu_cores_count 0\ngfx_target_version {version}\nsimd_count 1216\n")
    assert rocprof_runner.kfd_gfx_targets(tmp_path) == ["gfx942", "gfx90a"]
    monkeypatch.setattr(rocprof_runner, "KFD_NODES", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert rocprof_runner.amd_gpu_present()
    assert rocprof_runner.wants_amd(ProfileSettings(command=("x",)))


def test_an_nvidia_machine_is_left_as_it_was(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    monkeypatch.setattr(rocprof_runner, "KFD_NODES", tmp_path / "none")
    assert not rocprof_runner.wants_amd(ProfileSettings(command=("x",)))  # ncu on PATH
    assert not rocprof_runner.wants_amd(ProfileSettings(command=("x",), arch="9.0"))
    assert rocprof_runner.wants_amd(ProfileSettings(command=("x",), arch="gfx90a"))


def test_a_refused_duration_is_unknown_with_one_note(tmp_path: Path, fake_rocprofv3: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("FAKE_ROCPROF_ZERO_TIME", "1")
    assert main(["profile", "--arch", "gfx942", "-o", str(tmp_path / "run"), "--", sys.executable, "-c", "pass"]) == 0
    frame = kernel_json.read(tmp_path / "run.kernels.json").frame.sort_values("launch_id").reset_index(drop=True)
    assert math.isnan(frame["time_s"][0]) and (frame["time_s"][1:] > 0).all()
    assert capsys.readouterr().err.count("not after their start") == 1


def test_the_program_failing_exits_3_and_analyzes_the_trace(tmp_path: Path, fake_rocprofv3: Path, capsys) -> None:
    code = main(["profile", "--arch", "gfx942", "-o", str(tmp_path / "run"), "--", sys.executable, "-c",
                 "raise SystemExit(4)"])
    assert code == 3
    assert len(_runs(fake_rocprofv3)) == 1  # stopped after the traced run
    assert "failed in trace (exit status 4)" in capsys.readouterr().err


def test_what_rocprofv3_cannot_do_yet_is_refused_before_running(tmp_path: Path, fake_rocprofv3: Path, capsys) -> None:
    code = main(["profile", "--arch", "gfx942", "--launch-skip", "2", "-o", str(tmp_path / "run"), "--",
                 sys.executable, "-c", "pass"])
    assert code == 2 and not fake_rocprofv3.exists()
    assert "--launch-skip: not available with rocprofv3" in capsys.readouterr().err


def test_no_rocprofv3_is_exit_2_with_the_way_out(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code = main(["profile", "--arch", "gfx942", "-o", str(tmp_path / "run"), "--", sys.executable, "-c", "pass"])
    assert code == 2
    err = capsys.readouterr().err
    assert "rocprofv3" in err and "ROCm" in err and "Traceback" not in err

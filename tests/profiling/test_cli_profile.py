"""`roofline profile` end to end: fake ncu, counter-free on CPU, exit statuses, per-rank names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import needs

from roofline.cli.app import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORDED = HERE.parent / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"  # = conftest.RECORDED




def _launches(report: Path) -> int:
    return sum(k["launches"] for k in json.loads(report.read_text())["kernels"])


def test_profile_with_ncu_writes_report_table_and_json(tmp_path: Path, fake_ncu: Path, capsys) -> None:
    out = tmp_path / "r.json"
    code = main(["profile", "--arch", "9.0", "-o", str(tmp_path / "run"), "--json", str(out),
                 "--", sys.executable, "-c", "print('program output')"])
    assert code == 0
    captured = capsys.readouterr()
    assert "program output" in captured.out and f"wrote {out}" in captured.err  # results on stdout, messages on stderr
    for suffix in (".ncu-rep", ".ncu.csv", ".kernels.json"):
        assert (tmp_path / f"run{suffix}").exists()
    assert _launches(out) == 16
    assert not any(k["estimated"] for k in json.loads(out.read_text())["kernels"])
    argv = json.loads(fake_ncu.read_text())
    assert "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum" in argv[argv.index("--metrics") + 1]


def test_program_failure_exits_3_and_still_analyzes(tmp_path: Path, fake_ncu: Path) -> None:
    out = tmp_path / "r.json"
    code = main(["profile", "--arch", "8.0", "-o", str(tmp_path / "run"), "--json", str(out),
                 "--", sys.executable, "-c", "raise SystemExit(4)"])
    assert code == 3
    assert _launches(out) == 16


def test_permission_error_without_fallback_exits_4(tmp_path: Path, fake_ncu: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("FAKE_NCU_MODE", "perm1")
    code = main(["profile", "--arch", "9.0", "--no-fallback", "-o", str(tmp_path / "run"),
                 "--", sys.executable, "-c", "pass"])
    assert code == 4
    assert "NVreg_RestrictProfilingToAdminUsers=0" in capsys.readouterr().err


def test_no_ncu_is_exit_2_with_the_way_out(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code = main(["profile", "-o", str(tmp_path / "run"), "--", "python", "x.py"])
    assert code == 2
    err = capsys.readouterr().err
    assert "Nsight Compute" in err and "--no-counters" in err and "Traceback" not in err


def test_counter_free_cli_marks_every_point_estimated_and_has_phases(tmp_path: Path) -> None:
    needs.torch()
    out = tmp_path / "cam.json"
    code = main(["profile", "--no-counters", "--by", "phase", "-o", str(tmp_path / "cam"), "--json", str(out),
                 "--", sys.executable, str(ROOT / "examples" / "deepcam_mini.py"), "--steps", "1", "--size", "16"])
    assert code == 0
    kernels = json.loads(out.read_text())["kernels"]
    assert kernels and all(k["estimated"] for k in kernels)
    assert {"forward", "backward", "optimizer"} <= {k["phase"] for k in kernels}


def test_outputs_are_named_per_rank(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    monkeypatch.setenv("SLURM_PROCID", "2")
    monkeypatch.setenv("SLURM_NTASKS", "4")
    code = main(["profile", "--arch", "9.0", "-o", str(tmp_path / "run"), "--json", str(tmp_path / "r.json"),
                 "--", sys.executable, "-c", "pass"])
    assert code == 0
    assert (tmp_path / "run.rank2.ncu-rep").exists() and (tmp_path / "run.rank2.kernels.json").exists()
    assert (tmp_path / "r.rank2.json").exists()


def test_program_not_found_is_exit_2_before_ncu_runs(tmp_path: Path, fake_ncu: Path, capsys) -> None:
    code = main(["profile", "--arch", "9.0", "-o", str(tmp_path / "run"), "--", "no-such-program-xyz", "--flag"])
    assert code == 2
    assert "no-such-program-xyz" in capsys.readouterr().err
    assert not fake_ncu.exists()

"""The fake `ncu` shared by the profiling tests."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
#: A recorded ncu raw page (B200) that the fake `ncu` hands back as its report.
RECORDED = HERE.parent / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"


@pytest.fixture
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable `ncu` (tests/profiling/fake_ncu.py) first on PATH; returns the file its argv is logged to."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "ncu"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_ncu.py'} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "argv.json"
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(log))
    monkeypatch.setenv("FAKE_NCU_RECORDED", str(RECORDED))
    return log


@pytest.fixture
def fake_rocprofv3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable `rocprofv3` (tests/profiling/fake_rocprofv3.py) alone on PATH (no ncu, no
    nvidia-smi: an AMD machine); returns the file its runs' argv are logged to, one JSON line each."""
    bindir = tmp_path / "amdbin"
    bindir.mkdir()
    exe = bindir / "rocprofv3"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_rocprofv3.py'} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bindir))
    log = tmp_path / "rocprof_argv.jsonl"
    monkeypatch.setenv("FAKE_ROCPROF_ARGV_LOG", str(log))
    return log

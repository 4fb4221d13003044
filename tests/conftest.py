"""Shared test fixtures and the GPU marker."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
DATA = TESTS / "data"


def _has_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        import subprocess

        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(item.get_closest_marker("gpu") for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none found: nvidia-smi -L failed)")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session", autouse=True)
def cpu_machine_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The folder of this test session's cached CPU machines (ROOFLINE_CACHE_DIR), never the user's
    ~/.cache: a CPU program profiled with no --machine measures this CPU once per session (the first
    test to do so; tests/profiling/test_ceilings_cpu.py puts its own measurement here) and reuses it."""
    import os

    folder = tmp_path_factory.mktemp("roofline-cache")
    before = os.environ.get("ROOFLINE_CACHE_DIR")
    os.environ["ROOFLINE_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("ROOFLINE_CACHE_DIR", None)
    else:
        os.environ["ROOFLINE_CACHE_DIR"] = before


# -- CI must not pass by skipping ---------------------------------------------------------------
# On CI (CI=true) or with ROOFLINE_STRICT_SKIPS=1, a test skipped for a missing dependency
# (Chromium, Playwright, torch, numba, NVRTC, Nsight Compute's ncu, ncu-report) fails the run: .ci/run
# installs them all. Only what CI cannot have is allowed to skip: a GPU, a non-x86 processor.
ALLOWED_SKIP_REASONS = ("needs an NVIDIA GPU", "reads x86 assembly")
_disallowed_skips: list[str] = []


def _strict() -> bool:
    import os

    return os.environ.get("CI", "").lower() == "true" or os.environ.get("ROOFLINE_STRICT_SKIPS") == "1"


def _check_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and _strict():
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if not any(allowed in reason for allowed in ALLOWED_SKIP_REASONS):
            _disallowed_skips.append(f"{report.nodeid}: {reason}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _check_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A whole module skipped (``importorskip`` at its top, ``allow_module_level``) counts too."""
    _check_skip(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _disallowed_skips and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _disallowed_skips:
        terminalreporter.section("skips not allowed on CI")
        for line in _disallowed_skips:
            terminalreporter.write_line(line)

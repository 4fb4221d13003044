"""The type hints hold: mypy checks the whole package (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error() -> None:
    pytest.importorskip("mypy", reason="mypy is part of the test extra: pip install '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", str(ROOT / "src" / "roofline")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr

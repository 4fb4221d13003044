"""The README's test command on a fresh machine (issue 32): a test that needs the real ncu or PyTorch
skips there, saying what it needs and how to install it; on CI (``CI=true``) the same skip fails the
run, a whole module skipped at import included. Runs this suite's own conftest.py and needs.py on
small test files in a fresh pytest, with a PATH that holds no ncu."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import needs

TESTS = Path(__file__).parent

NEEDS_NCU = """
import needs

def test_reads_a_report_through_ncu():
    assert needs.ncu()
"""
NEEDS_A_MODULE = """
import pytest

pytest.importorskip("roofline_no_such_module", reason="needs roofline_no_such_module (install: nothing)")

def test_never_runs():
    raise AssertionError
"""
NEEDS_A_GPU = """
import pytest

@pytest.mark.skip(reason="needs an NVIDIA GPU (none found)")
def test_on_a_gpu():
    raise AssertionError

def test_runs():
    assert True
"""


def _pytest(folder: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    for name in ("conftest.py", "needs.py"):
        shutil.copy(TESTS / name, folder / name)
    (folder / "bin").mkdir(exist_ok=True)  # PATH: no ncu
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ROOFLINE_STRICT_SKIPS")}
    env.update(PATH=str(folder / "bin"), **({"CI": "true"} if ci else {}))
    return subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_without_ncu_its_tests_skip_with_the_install_command_and_ci_fails(tmp_path):
    (tmp_path / "test_ncu.py").write_text(NEEDS_NCU)
    (tmp_path / "test_gpu.py").write_text(NEEDS_A_GPU)
    done = _pytest(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout
    assert needs.NCU in done.stdout and "bash .ci/install-ncu" in needs.NCU
    done = _pytest(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout
    section = done.stdout.split("skips not allowed on CI", 1)[1]
    assert f"test_reads_a_report_through_ncu: Skipped: {needs.NCU}" in section
    assert "test_on_a_gpu" not in section  # a GPU is what CI cannot have


def test_a_module_skipped_at_import_fails_ci_too(tmp_path):
    """``torch = needs.torch()`` at a module's top skips the module while it is collected: CI counted
    only the skips of tests that ran, so such a module passed CI by skipping."""
    (tmp_path / "test_module.py").write_text(NEEDS_A_MODULE)
    (tmp_path / "test_gpu.py").write_text(NEEDS_A_GPU)
    assert _pytest(tmp_path, ci=False).returncode == 0
    done = _pytest(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout
    assert "test_module.py: Skipped: needs roofline_no_such_module" in done.stdout.split("skips not allowed on CI")[1]


def test_the_reasons_name_the_install_command():
    assert "pip install torch" in needs.TORCH and "bash .ci/install-ncu" in needs.NCU

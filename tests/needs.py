"""What some tests need beyond ``pip install '.[test]'``, and the skip that names it and how to install it.

On a fresh machine (the README's test command, no CI variable) these tests skip with that reason; on
CI (``CI=true`` or ``ROOFLINE_STRICT_SKIPS=1``) any such skip fails the run (tests/conftest.py), since
.ci/run installs them all. The browser test names Chromium and Playwright the same way
(tests/test_report_browser.py).
"""

from __future__ import annotations

import shutil
from types import ModuleType

import pytest

#: The skip reason of a test that runs NVIDIA Nsight Compute's ``ncu`` (no GPU needed).
NCU = "needs Nsight Compute's ncu (no GPU needed; install: bash .ci/install-ncu)"
#: The skip reason of a test that runs PyTorch (the CPU build is enough).
TORCH = ("needs PyTorch (install: pip install torch --index-url https://download.pytorch.org/whl/cpu; "
         ".ci/run installs torch)")

#: Mark for a test that runs ``ncu``: skipped, with :data:`NCU`, when it is not on PATH.
needs_ncu = pytest.mark.skipif(shutil.which("ncu") is None, reason=NCU)


def ncu() -> str:
    """The path of ``ncu`` on PATH; skips the test (:data:`NCU`) when there is none."""
    path = shutil.which("ncu")
    if path is None:
        pytest.skip(NCU)
    return path


def torch() -> ModuleType:
    """The ``torch`` module; skips the test or module (:data:`TORCH`) when it is not installed."""
    return pytest.importorskip("torch", reason=TORCH)


#: The skip reason of a test that runs a Dask cluster (the ``cluster`` extra; ``.[test]`` installs it).
DASK = "needs dask and distributed (install: pip install 'roofline[cluster]'; pip install '.[test]' installs them)"


def dask() -> ModuleType:
    """The ``distributed`` module; skips the test (:data:`DASK`) when dask or distributed is not installed."""
    pytest.importorskip("dask.dataframe", reason=DASK)
    return pytest.importorskip("distributed", reason=DASK)

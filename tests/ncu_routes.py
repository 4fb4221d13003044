"""Reading one .ncu-rep both ways (NVIDIA's ncu_report module, the real ``ncu --import --csv``) and
requiring the same kernel table: shared by the tests of real reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import needs

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers.ncu import rep as ncu_rep
from roofline.readers.ncu.count import build_table

IDENTITY = ["launch_id", "kernel_name", "device", "compute_capability", "grid", "block", "stream", "launches",
            "tensor_precision", "flops_partial", "estimated", "run", "source"]
NUMBERS = ["time_s", "sm_clock_hz", "fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "flops",
           "l1_bytes", "l2_bytes", "dram_bytes"]


def same_table_both_ways(report: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both routes' kernel tables, after asserting they agree: identity exactly, numbers to 1e-6 (the
    CSV prints rounded values). Returns (by module, by ncu) for the callers' process-id checks: the
    module API exposes no process id, the CLI route does."""
    module = pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    ncu = needs.ncu()
    by_module = widened(build_table(ncu_rep.read_with_module(report, module)).frame)
    by_cli = widened(build_table(ncu_rep.read_with_cli(report, ncu)).frame)
    assert list(by_module.columns) == list(by_cli.columns)
    pd.testing.assert_frame_equal(by_module[IDENTITY], by_cli[IDENTITY])
    np.testing.assert_allclose(by_module[NUMBERS].to_numpy(float), by_cli[NUMBERS].to_numpy(float), rtol=1e-6)
    assert by_module["process_id"].isna().all()
    return by_module, by_cli

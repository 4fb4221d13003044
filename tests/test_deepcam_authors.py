"""Reproduce the Hierarchical Roofline authors' DeepCAM per-kernel table from their raw ncu files.

Truth: tests/data/ncu/v100_deepcam_lamb/processed_by_authors_fp32-O1-LAMB-opt.csv, the
authors' own table (Yang et al., arXiv 2009.05257), made from the 12 one-metric ncu runs
beside it. Their conventions: CC FLOPs = fp64 + fp32 + fp16 with hadd + hmul + 2 hfma
(fp16="paper"; no FP64 counters were collected), TC FLOPs = 512 x tensor instructions,
Time = sum(cycles) / mean(clock), GFLOP/s divides by 2**30.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.kernels import aggregate
from roofline.readers import read_profile

CASE = Path(__file__).parent / "data" / "ncu" / "v100_deepcam_lamb"


@pytest.fixture(scope="module")
def table():
    return read_profile(sorted(CASE.glob("out.*")), fp16="paper")


@pytest.fixture(scope="module")
def authors() -> pd.DataFrame:
    return pd.read_csv(CASE / "processed_by_authors_fp32-O1-LAMB-opt.csv").set_index("Kernel Name")


@pytest.fixture(scope="module")
def ours(table) -> pd.DataFrame:
    return aggregate(table.frame, by="name").set_index("kernel_name")


def test_one_row_per_launch_and_every_kernel_matched(table, ours, authors):
    assert len(table.frame) == 35
    assert table.frame["launch_id"].tolist() == list(range(35))
    assert set(ours.index) == set(authors.index)
    for name in authors.index:
        assert ours.loc[name, "launches"] == authors.loc[name, "Count"]


def test_flops_match_the_authors(ours, authors):
    for name, row in authors.iterrows():
        ours_cc = ours.loc[name, "fp32_flops"] + ours.loc[name, "fp16_flops"]
        assert ours_cc == pytest.approx(row["CC FLOPs"], rel=1e-6, abs=0)
        assert ours.loc[name, "tensor_flops"] == pytest.approx(row["TC FLOPs"], rel=1e-6, abs=0)
        # fp64 was not collected: unknown, not zero, and the total says it is partial
        assert np.isnan(ours.loc[name, "fp64_flops"])
        assert bool(ours.loc[name, "flops_partial"])
        assert ours.loc[name, "flops"] == pytest.approx(row["all FLOPs"], rel=1e-6, abs=0)


def test_arithmetic_intensities_match(ours, authors):
    for name, row in authors.iterrows():
        flops = ours.loc[name, "flops"]
        for ours_col, theirs in (("dram_bytes", "AI HBM"), ("l2_bytes", "AI L2"), ("l1_bytes", "AI L1")):
            assert flops / ours.loc[name, ours_col] == pytest.approx(row[theirs], rel=1e-6, abs=1e-12)


def test_time_per_launch_sum_within_0_1_percent(ours, authors):
    for name, row in authors.iterrows():
        assert ours.loc[name, "time_s"] == pytest.approx(row["Time"], rel=1e-3)


def test_time_by_the_authors_formula_exactly(table, authors):
    m = table.metrics.assign(name=table.frame["kernel_name"].to_numpy())
    g = m.groupby("name")
    theirs_formula = g["sm__cycles_elapsed.avg"].sum() / (g["sm__cycles_elapsed.avg.per_second"].sum() / g.size())
    for name, row in authors.iterrows():
        assert theirs_formula[name] == pytest.approx(row["Time"], rel=1e-9)


def test_gflops_with_their_binary_divisor(ours, authors):
    for name, row in authors.iterrows():
        rate = ours.loc[name, "flops"] / row["Time"] / 2**30
        assert rate == pytest.approx(row["GFLOP/s"], rel=1e-6, abs=1e-9)


def test_warnings_name_the_missing_fp64_metrics(table):
    text = "\n".join(table.warnings)
    assert "fp64_flops unknown" in text
    assert "ncu --metrics sm__sass_thread_inst_executed_op_dadd_pred_on.sum" in text
    assert table.fp16_convention == "paper"

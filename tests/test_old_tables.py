"""Kernel-table files written before the lean kernel table (issue 34) read as they did: every declared
column, the same values, dtypes and metrics as the table read from the profile they were made from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from roofline import kernels
from roofline.readers import read_profile

DATA = Path(__file__).parent / "data"
SOURCE = DATA / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
OLD = DATA / "tables"  # written by the code at fd1730c (tests/data/tables/PROVENANCE.md)


@pytest.mark.parametrize("name", ["b200_sdpa_flash_before_lean.parquet", "b200_sdpa_flash_before_lean.kernels.json"])
def test_a_file_written_before_the_lean_table_reads_as_the_profile(name: str) -> None:
    old = read_profile(OLD / name)
    now = read_profile(SOURCE)
    assert list(old.frame.columns) == list(now.frame.columns)  # lean alike: the same columns left out
    pd.testing.assert_frame_equal(kernels.widened(old.frame).drop(columns="source"),
                                  kernels.widened(now.frame).drop(columns="source"), check_exact=name.endswith(".parquet"))
    assert set(kernels.decoded(old.frame["source"]).dropna()) == {SOURCE.name}
    assert list(old.metrics.columns) == list(now.metrics.columns)


def test_the_profile_read_now_is_lean_and_means_the_same() -> None:
    """The launch table leaves out the count columns it has no counter for and keeps its text encoded."""
    now = read_profile(SOURCE).frame
    absent = [c for c in kernels.COLUMN_NAMES if c not in now.columns]
    assert absent and set(absent) <= set(kernels.ABSENT_ALLOWED)
    assert kernels.is_encoded(now["kernel_name"])
    whole = kernels.widened(now)
    assert list(whole.columns) == list(kernels.COLUMN_NAMES)
    assert all(whole[c].isna().all() for c in absent)
    assert (whole["kernel_name"].astype(object) == now["kernel_name"].astype(object)).all()
    assert kernels.column_or_nan(now, absent[0]).shape == (len(now),)

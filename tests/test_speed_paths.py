"""The fast paths behind the analysis give what the plain ones give.

Issue 14 made everything after the read cheap (1e6 launches, and the 35 launches of the paper's
DeepCAM set): frames built at once (``kernels.frame_of``), the formula table's reads cached per
reader, descriptive columns that hold one value for a whole profile not grouped, and guidance
that diagnoses only the rows it shows. Each shortcut is checked here against the plain result,
on real exports from tests/data (provenance in each folder) and on values worked out by hand.
No timing here: the speed is measured by benchmarks/.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api, kernels
from roofline.analysis.roofline import _phase_times
from roofline.counting.forms import Counter, Reader
from roofline.guidance import advise, diagnose
from roofline.guidance import metrics as m
from roofline.kernels import aggregate, frame_of, from_records, known_sum, total_ops
from roofline.readers.ncu.count import build_table
from roofline.readers.dispatch import read_one

NCU = Path(__file__).parent / "data" / "ncu"
B200 = NCU / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
A100 = NCU / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"
RTX_DETAILS = NCU / "rtx5090_details_rules_cutlass_gemm" / "ncu.details.csv"
V100 = NCU / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"


def _with_metrics(path: Path) -> kernels.KernelTable:
    """The export read, with load sectors and requests EDITED in (varying by launch), so that the
    coalescing rules read per-row metrics and name a limiter that depends on them."""
    table = api.read(path)
    met = table.metrics.copy()
    n = len(met)
    met[m.GLOBAL_LD_REQUESTS] = np.arange(1, n + 1) * 100.0
    met[m.GLOBAL_LD_SECTORS] = met[m.GLOBAL_LD_REQUESTS] * np.where(np.arange(n) % 3 == 1, 64.0, 4.0)
    return kernels.KernelTable(frame=table.frame, metrics=met, sources=table.sources)


@pytest.mark.parametrize("path", [B200, A100, RTX_DETAILS, V100], ids=lambda p: p.parent.name)
@pytest.mark.parametrize("by", ["name", "launch", "phase"])
def test_advice_on_the_top_rows_is_the_head_of_the_whole_advice(path, by):
    table = _with_metrics(path)
    analysis = api.analyze(table, "h100-sxm", by=by)
    whole = advise(analysis, table)
    for top in (1, 3):
        pd.testing.assert_frame_equal(advise(analysis, table, top=top), whole.head(top), check_exact=True)
    assert whole["limiter"].notna().any()  # the rules ran on metrics, not on nothing


def test_advice_by_launch_reads_each_launch_s_own_metrics():
    """By launch the rows are keyed by integer launch ids: the top row's metrics are its launch's."""
    table = _with_metrics(B200)
    analysis = api.analyze(table, "b200", by="launch")
    top = advise(analysis, table, top=2)
    diag = diagnose(analysis, table, rows=list(top["row"]))
    for k in diag.kernels:
        launch = analysis.frame.loc[k.index, "launch_id"]
        sel = (table.frame["launch_id"] == launch).to_numpy(dtype=bool)
        assert diag.metrics.loc[k.index, m.GLOBAL_LD_SECTORS] == table.metrics[m.GLOBAL_LD_SECTORS].to_numpy()[sel][0]


@pytest.mark.parametrize("by", ["name", "launch", "phase"])
def test_diagnosis_of_some_rows_equals_theirs_in_the_diagnosis_of_all(by):
    table = _with_metrics(B200)
    analysis = api.analyze(table, "b200", by=by)
    every = {k.index: k for k in diagnose(analysis, table).kernels}
    rows = list(analysis.frame.index[::2])
    some = diagnose(analysis, table, rows=rows)
    assert [k.index for k in some.kernels] == rows
    for k in some.kernels:  # as text: a finding's values may hold NaN, which is not equal to itself
        assert repr(k) == repr(every[k.index])


def test_row_metrics_of_a_subset_match_those_of_all_rows():
    table = _with_metrics(B200)
    analysis = api.analyze(table, "b200", by="name")
    whole = m.metrics_per_row(analysis.frame, "name", table)
    part = m.metrics_per_row(analysis.frame.iloc[1:3], "name", table, only_rows=True)
    pd.testing.assert_frame_equal(part, whole.iloc[1:3], check_exact=True)


def test_known_sum_by_hand():
    nan = np.nan
    parts = [np.array([1.0, nan, nan, 2.0]), np.array([10.0, 5.0, nan, nan]), np.array([100.0, nan, nan, 0.0])]
    total, partial = known_sum(parts)
    np.testing.assert_array_equal(total, [111.0, 5.0, nan, 2.0])
    assert partial.tolist() == [False, True, False, True]
    ops, ops_partial = total_ops(total, np.array([False, True, False, False]), [np.array([1.0, 1.0, 1.0, nan])])
    np.testing.assert_array_equal(ops, [112.0, 6.0, 1.0, 2.0])
    assert ops_partial.tolist() == [False, True, True, True]  # flops partial, flops unknown, an op unknown


def _mixed_columns(n: int) -> dict[str, object]:
    return {
        "a": np.arange(n, dtype=float),
        "s": kernels.strings(["x", None, "y"] * (n // 3) + ["z"] * (n % 3)),
        "i": pd.array(np.arange(n), dtype="Int64"),
        "b": np.linspace(0, 1, n),
        "f": kernels.flags(np.arange(n) % 2 == 0),
    }


@pytest.mark.parametrize("stack_limit", [kernels.STACK_LIMIT, 0])
@pytest.mark.parametrize("blocks", [True, False], ids=["blocks", "pandas-2-constructor"])
def test_frame_of_is_the_frame_the_constructor_makes(monkeypatch, stack_limit, blocks):
    monkeypatch.setattr(kernels.arrays, "STACK_LIMIT", stack_limit)  # 0: one block per float column
    if not blocks:  # as on pandas 2, which has no pandas.api.internals
        monkeypatch.setattr(kernels.arrays, "_from_blocks", None)
    columns = _mixed_columns(7)
    pd.testing.assert_frame_equal(frame_of(columns), pd.DataFrame(columns), check_exact=True)


def test_kernel_table_owns_its_columns():
    """The table's arrays are not the raw profile's: writing one leaves the other as read."""
    profile = read_one(B200)
    table = build_table(profile, sources=[str(B200)])
    first_id = profile.ids["launch_id"].iloc[0]
    table.frame.loc[0, "launch_id"] = 999
    table.frame.loc[0, "time_s"] = -1.0
    assert profile.ids["launch_id"].iloc[0] == first_id
    assert build_table(profile, sources=[str(B200)]).frame.loc[0, "launch_id"] == first_id


def test_validate_copies_what_it_is_given():
    frame = from_records([{"kernel_name": "k", "time_s": 1.0, "launch_id": 3}])
    checked = kernels.validate(frame)
    checked.loc[0, "time_s"] = 2.0
    checked.loc[0, "launch_id"] = 4
    assert frame.loc[0, "time_s"] == 1.0 and frame.loc[0, "launch_id"] == 3


def test_reader_reads_rates_again_once_the_time_is_known():
    """A count read through its rate per second before the launch time is set is NaN; read again after."""
    reader = Reader(pd.DataFrame({"x__y.sum.per_second": [2.0, 3.0]}))
    counter = Counter(("x__y.sum",))
    assert np.isnan(reader.read(counter)).all()
    reader.time = np.array([10.0, 0.5])
    np.testing.assert_array_equal(reader.read(counter), [20.0, 1.5])


@pytest.mark.parametrize("phase", [None, "forward"])
def test_phase_times_of_one_phase(phase):
    """Launches all outside any range (the shortcut) sum as launches all in one range do."""
    times = [1e-3, 2.5e-4, np.nan, 7e-6]
    frame = from_records([{"kernel_name": "k", "time_s": t, "phase": phase} for t in times])
    assert _phase_times(frame) == {phase or "unknown": 1e-3 + 2.5e-4 + 7e-6}


def test_descriptive_columns_one_value_missing_or_mixed():
    """A column with one value for every launch, none, or several: the group keeps its value, <NA>,
    or <NA> where its launches differ; phases are listed, sorted."""
    frame = from_records([
        {"kernel_name": "a", "time_s": 3.0, "grid": "(1, 1, 1)", "device": 0, "phase": "fwd", "block": "(32, 1, 1)"},
        {"kernel_name": "b", "time_s": 2.0, "grid": "(1, 1, 1)", "device": 1, "phase": "bwd", "block": "(32, 1, 1)"},
        {"kernel_name": "a", "time_s": 1.0, "grid": "(1, 1, 1)", "device": 0, "phase": "bwd", "block": "(64, 1, 1)"},
    ])
    out = aggregate(frame, "name")
    assert out["kernel_name"].tolist() == ["a", "b"]
    assert out["grid"].tolist() == ["(1, 1, 1)"] * 2  # one value throughout
    assert out["tensor_precision"].isna().all()  # missing throughout
    assert out["device"].tolist() == [0, 1]  # mixed across groups, one within each
    assert out["block"].isna().tolist() == [True, False]  # mixed within a
    assert out["phase"].tolist() == ["bwd,fwd", "bwd"]
    assert out["source"].isna().all()


def test_a_table_groups_its_launches_once_and_again_when_a_key_changes():
    table = api.read(B200)
    gid, first = table.group_ids(["kernel_name"])
    again = table.group_ids(["kernel_name"])
    assert again[0] is gid and again[1] is first  # kept: the analysis and its guidance share them
    fresh = kernels.group_ids(table.frame, ["kernel_name"])
    np.testing.assert_array_equal(gid, fresh[0])
    np.testing.assert_array_equal(first, fresh[1])
    table.frame["kernel_name"] = table.frame["kernel_name"].str.slice(0, 3)  # names change: group anew
    regrouped = table.group_ids(["kernel_name"])
    assert regrouped[0] is not gid
    assert regrouped[0].max() + 1 == table.frame["kernel_name"].nunique()


def test_a_table_drops_its_kept_groups_when_copied_or_pickled():
    import dataclasses
    import pickle

    table = api.read(B200)
    table.group_ids(["kernel_name"])
    assert not dataclasses.replace(table, warnings=())._groups
    assert not pickle.loads(pickle.dumps(table))._groups


@pytest.mark.parametrize("path", [B200, A100, RTX_DETAILS, V100], ids=lambda p: p.parent.name)
def test_counting_keeps_or_rereads_the_same(monkeypatch, path):
    """Large profiles are read again rather than kept (memory): the counts are the same either way."""
    from roofline import counting
    from roofline.counting import forms

    profile = read_one(path)
    kept = counting.count(profile.metrics, profile.ids["compute_capability"])
    monkeypatch.setattr(forms, "KEEP_LAUNCHES", 0)
    reread = counting.count(profile.metrics, profile.ids["compute_capability"])
    assert kept.warnings == reread.warnings and kept.missing_hints == reread.missing_hints
    assert list(kept.columns) == list(reread.columns)
    for name, values in kept.columns.items():
        np.testing.assert_array_equal(values, reread.columns[name], err_msg=name)


@pytest.mark.parametrize("encoding", ["categorical", "arrow-dictionary"])
def test_kernel_names_given_as_codes_make_the_same_table_and_groups(encoding):
    """A reader may hand identities dictionary-encoded: the table holds the same strings, and its
    grouping by name comes from the codes (no hashing of the names), equal to hashing them."""
    import dataclasses

    import pyarrow as pa

    read = read_one(B200)
    names = read.ids["kernel_name"].astype(object)
    names.iloc[3] = None  # EDITED: one launch without a name (its own group)
    profile = dataclasses.replace(read, ids=read.ids.assign(kernel_name=pd.array(names.tolist(), dtype="string")))
    if encoding == "categorical":
        coded = pd.Series(pd.Categorical(names), index=profile.ids.index)
    else:
        coded = pd.Series(pd.array(pa.array(names.tolist()).dictionary_encode(), dtype=pd.ArrowDtype(
            pa.dictionary(pa.int32(), pa.string()))), index=profile.ids.index)
    coded_profile = dataclasses.replace(profile, ids=profile.ids.assign(kernel_name=coded))
    plain = build_table(profile, sources=[str(B200)])
    from_codes = build_table(coded_profile, sources=[str(B200)])
    pd.testing.assert_frame_equal(from_codes.frame, plain.frame, check_exact=True)
    assert from_codes._groups  # kept from the codes
    kept = from_codes.group_ids(["kernel_name"])
    fresh = kernels.group_ids(plain.frame, ["kernel_name"])
    np.testing.assert_array_equal(kept[0], fresh[0])
    np.testing.assert_array_equal(kept[1], fresh[1])
    pd.testing.assert_frame_equal(api.analyze(from_codes, "b200").frame, api.analyze(plain, "b200").frame,
                                  check_exact=True)

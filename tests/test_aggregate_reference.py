"""The fast ``aggregate`` (group ids, factorized values) equals a plain per-group reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.kernels import SUMMED, aggregate, from_records


def _reference(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Obvious, slow: one Python pass per group."""
    rows = []
    work = frame.copy()
    for k in keys:
        work[k] = work[k].astype("string").fillna("(none)")
    for key, grp in work.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        for col in SUMMED:
            v = grp[col].astype("float64")
            row[col] = np.nan if v.isna().any() else v.sum()
        t, c = grp["time_s"].to_numpy(float), grp["sm_clock_hz"].to_numpy(float)
        ok = ~(np.isnan(t) | np.isnan(c))
        row["sm_clock_hz"] = (t[ok] * c[ok]).sum() / t[ok].sum() if ok.any() and t[ok].sum() else np.nan
        for col in ("process_id", "device", "compute_capability", "grid", "block", "stream", "tensor_precision"):
            vals = grp[col].astype(object).where(grp[col].notna(), None).tolist()
            row[col] = vals[0] if len(set(vals)) == 1 else None
        row["source"] = ",".join(sorted(set(grp["source"].dropna()))) or None
        if keys == ["kernel_name"]:
            row["phase"] = ",".join(sorted(set(grp["phase"].dropna()))) or None
        rows.append(row)
    return pd.DataFrame(rows)


launch = st.fixed_dictionaries({
    "kernel_name": st.sampled_from(["a", "b", "c"]),
    "phase": st.sampled_from(["forward", "backward", None]),
    "device": st.sampled_from([0, 1, None]),
    "grid": st.sampled_from(["(1, 1, 1)", "(2, 1, 1)", None]),
    "tensor_precision": st.sampled_from(["fp16", None]),
    "source": st.sampled_from(["x.csv", "y.csv"]),
    "time_s": st.one_of(st.none(), st.floats(1e-6, 1.0)),
    "sm_clock_hz": st.sampled_from([1.2e9, 1.4e9, None]),
    "fp32_flops": st.one_of(st.none(), st.floats(0, 1e9)),
    "dram_bytes": st.floats(0, 1e9),
})


@settings(max_examples=30, deadline=None)
@given(st.lists(launch, min_size=1, max_size=25), st.sampled_from(["name", "phase"]))
def test_aggregate_matches_reference(records, by):
    recs = [{k: (np.nan if v is None and k in ("time_s", "sm_clock_hz", "fp32_flops") else v) for k, v in r.items()}
            for r in records]
    for r in recs:
        for k in ("phase", "device", "grid", "tensor_precision"):
            if r[k] is None:
                r[k] = pd.NA
    frame = from_records(recs)
    keys = ["kernel_name"] if by == "name" else ["phase", "kernel_name"]
    ours = aggregate(frame, by=by)
    ref = _reference(frame, keys)
    if by == "phase":
        ref["phase"] = ref["phase"].replace("(none)", None)
    merge_keys = [k for k in keys]
    ours_k = ours.assign(**{k: ours[k].astype(object).where(ours[k].notna(), "<NA>") for k in merge_keys})
    ref_k = ref.assign(**{k: ref[k].astype(object).where(ref[k].notna(), "<NA>") for k in merge_keys})
    m = ours_k.merge(ref_k, on=merge_keys, suffixes=("", "_ref"), how="outer", indicator=True)
    assert (m["_merge"] == "both").all()
    for col in [*SUMMED, "sm_clock_hz"]:
        np.testing.assert_allclose(m[col].astype(float), m[f"{col}_ref"].astype(float), rtol=1e-12, equal_nan=True)
    got_dev = [np.nan if pd.isna(v) else float(v) for v in m["device"]]
    want_dev = [np.nan if v is None or pd.isna(v) else float(v) for v in m["device_ref"]]
    np.testing.assert_array_equal(got_dev, want_dev)
    for col in ("grid", "tensor_precision", "source", *(["phase"] if by == "name" else [])):
        got = [None if pd.isna(v) else v for v in m[col]]
        want = [None if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA else v for v in m[f"{col}_ref"]]
        assert [str(v) if v is not None else None for v in got] == [str(v) if v is not None else None for v in want], col


def test_aggregate_keeps_first_appearance_keys():
    frame = from_records([{"kernel_name": "b", "time_s": 1.0}, {"kernel_name": "a", "time_s": 2.0},
                          {"kernel_name": "b", "time_s": 3.0}])
    out = aggregate(frame, by="name")
    assert out["kernel_name"].tolist() == ["b", "a"]
    assert out["time_s"].tolist() == pytest.approx([4.0, 2.0])
    assert out["launches"].tolist() == [2, 1]

"""Kernel-name demangling and NVTX phases."""

from __future__ import annotations

import pandas as pd
import pytest

from roofline.readers import names
from roofline.readers import read_profile


def test_demangles_only_mangled_names():
    s = pd.Series(["_Z6kernelPfi", "void k2()", None, "_Z6kernelPfi"], dtype="string")
    out, warnings = names.demangle_names(s)
    assert out.tolist()[:2] == ["kernel(float*, int)", "void k2()"]
    assert out.isna().tolist() == [False, False, True, False]
    assert out.iloc[3] == "kernel(float*, int)"
    assert warnings == []


def test_no_demangler_keeps_names_and_warns(monkeypatch):
    monkeypatch.setattr(names, "_demangler", lambda: None)
    out, warnings = names.demangle_names(pd.Series(["_Z1fv"], dtype="string"))
    assert out.tolist() == ["_Z1fv"]
    assert len(warnings) == 1 and "cxxfilt" in warnings[0]


@pytest.mark.parametrize("stack,phase", [
    ("train_step/forward", "forward"), ("default:step/backward", "backward"), ("optimizer", "optimizer"),
    ("aten::mm", "aten::mm"), ("", None), (None, None),
])
def test_innermost_range(stack, phase):
    assert names.innermost_range(stack) == phase


def test_csv_nvtx_column_fills_phase(tmp_path):
    p = tmp_path / "nvtx.csv"
    p.write_text(
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","NVTX Range","gpu__time_duration.sum"\n'
        '"","","","","","","","","","","","","nsecond"\n'
        '"0","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","train_step/forward","1000"\n'
        '"1","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","","1000"\n'
    )
    t = read_profile(p)
    assert t.frame["phase"].iloc[0] == "forward"
    assert pd.isna(t.frame["phase"].iloc[1])
    assert "NVTX Range" not in t.metrics.columns


def test_phase_is_unknown_without_nvtx():
    from pathlib import Path

    csv = Path(__file__).parent / "data" / "ncu" / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"
    assert read_profile(csv).frame["phase"].isna().all()

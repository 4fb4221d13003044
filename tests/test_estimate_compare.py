"""Measured vs estimated per operator and per module (roofline.analysis.estimate), on tables built by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from roofline.analysis.estimate import measured_vs_estimated
from roofline.kernels import KernelTable, from_records

CONV_STACK = "aten::conv2d/aten::convolution/aten::_convolution"


def measured() -> KernelTable:
    """Five launches: two kernels of a forward conv (the innermost ops lie under aten::convolution),
    its backward (op and stack: the forward op's), a linear with DRAM bytes unknown, a memset outside."""
    rows = [
        dict(kernel_name="cudnn_conv", op="aten::cudnn_convolution", module="Net.conv", phase="forward",
             time_s=2e-3, fp32_flops=1000.0, dram_bytes=400.0),
        dict(kernel_name="add_bias", op="aten::add_", module="Net.conv", phase="forward",
             time_s=1e-3, fp32_flops=100.0, dram_bytes=200.0),
        dict(kernel_name="wgrad", op="aten::convolution", module="Net.conv", phase="backward",
             time_s=3e-3, fp32_flops=2000.0, dram_bytes=800.0),
        dict(kernel_name="gemm", op="aten::addmm", module="Net.fc", phase="forward",
             time_s=1e-3, fp32_flops=500.0),
        dict(kernel_name="memset", phase="optimizer", time_s=0.5e-3, fp32_flops=0.0, dram_bytes=100.0),
    ]
    stacks = [f"{CONV_STACK}/aten::cudnn_convolution", f"{CONV_STACK}/aten::add_", "aten::conv2d/aten::convolution",
              "aten::linear/aten::addmm", None]
    frame = from_records(rows)
    return KernelTable(frame=frame, metrics=pd.DataFrame({"op_stack": pd.array(stacks, dtype="string")},
                                                         index=frame.index))


def estimated() -> KernelTable:
    """The estimate of the same step: dispatched ops, no times (recorded beside an ncu run)."""
    rows = [
        dict(kernel_name="aten::convolution", op="aten::convolution", module="Net.conv", phase="forward",
             fp32_flops=1000.0, dram_bytes=500.0),
        dict(kernel_name="aten::convolution_backward", op="aten::convolution", module="Net.conv", phase="backward",
             fp32_flops=2000.0, dram_bytes=1000.0),
        dict(kernel_name="aten::addmm", op="aten::addmm", module="Net.fc", phase="forward",
             fp32_flops=400.0, dram_bytes=300.0),
        dict(kernel_name="aten::t", op="aten::t", module="Net.fc", phase="forward", fp32_flops=0.0, dram_bytes=0.0),
        dict(kernel_name="aten::relu", op="aten::relu", module="Net.relu", phase="forward",
             fp32_flops=50.0, dram_bytes=80.0),
    ]
    frame = from_records(rows)
    frame["estimated"] = pd.array([True] * len(frame), dtype="boolean")
    return KernelTable(frame=frame)


def _row(frame: pd.DataFrame, label: str) -> dict:
    rows = frame[frame["label"] == label]
    assert len(rows) == 1, (label, list(frame["label"]))
    return rows.iloc[0].to_dict()


def test_by_op_matches_the_outermost_stack_entry_the_estimate_has():
    out = measured_vs_estimated(measured(), estimated(), by="op")
    assert sorted(out["label"]) == sorted([
        "aten::convolution [forward]", "aten::convolution [backward]", "aten::addmm [forward]",
        "(no operator) [optimizer]", "aten::t [forward]", "aten::relu [forward]"])
    conv = _row(out, "aten::convolution [forward]")
    # cudnn_conv and add_bias both under aten::convolution (aten::conv2d, outermost, is not in the estimate)
    assert conv["measured_launches"] == 2 and conv["estimated_launches"] == 1
    assert conv["measured_time_s"] == pytest.approx(3e-3)       # 2 ms + 1 ms
    assert conv["measured_flops"] == 1100.0                      # 1000 + 100
    assert conv["flops_ratio"] == pytest.approx(1000 / 1100)     # 0.909: the estimate misses the bias add
    assert conv["dram_bytes_ratio"] == pytest.approx(500 / 600)  # 400 + 200 measured
    assert math.isnan(conv["estimated_time_s"]) and math.isnan(conv["time_ratio"])  # no estimated time: NaN, not 0
    back = _row(out, "aten::convolution [backward]")
    assert back["flops_ratio"] == pytest.approx(1.0) and back["dram_bytes_ratio"] == pytest.approx(1000 / 800)
    fc = _row(out, "aten::addmm [forward]")
    assert fc["flops_ratio"] == pytest.approx(0.8)               # 400 / 500
    assert math.isnan(fc["measured_dram_bytes"]) and math.isnan(fc["dram_bytes_ratio"])  # not counted
    assert fc["op"] == "aten::addmm" and fc["phase"] == "forward"


def test_by_op_unmatched_sides_have_their_own_rows_with_nan():
    out = measured_vs_estimated(measured(), estimated(), by="op")
    memset = _row(out, "(no operator) [optimizer]")
    assert pd.isna(memset["op"]) and memset["measured_dram_bytes"] == 100.0
    assert math.isnan(memset["estimated_flops"]) and math.isnan(memset["estimated_launches"])
    assert math.isnan(memset["flops_ratio"])                     # measured 0 FLOPs: no ratio
    relu = _row(out, "aten::relu [forward]")
    assert relu["estimated_flops"] == 50.0 and math.isnan(relu["measured_flops"])
    assert math.isnan(relu["measured_launches"]) and math.isnan(relu["flops_ratio"])
    # longest measured first; estimate-only rows (no measured time) last
    # (conv forward 2 + 1 ms and backward 3 ms, then addmm 1 ms, memset 0.5 ms)
    assert set(out["label"][:2]) == {"aten::convolution [forward]", "aten::convolution [backward]"}
    assert list(out["label"][2:4]) == ["aten::addmm [forward]", "(no operator) [optimizer]"]
    assert out["measured_time_s"].iloc[-2:].isna().all()


def test_without_op_stack_the_innermost_op_is_kept():
    m = measured()
    out = measured_vs_estimated(KernelTable(frame=m.frame), estimated(), by="op")
    cudnn = _row(out, "aten::cudnn_convolution [forward]")
    assert cudnn["measured_flops"] == 1000.0 and math.isnan(cudnn["estimated_flops"])
    conv = _row(out, "aten::convolution [forward]")
    assert math.isnan(conv["measured_flops"]) and conv["estimated_flops"] == 1000.0
    # the backward launch's op is already the forward op the estimate names
    assert _row(out, "aten::convolution [backward]")["flops_ratio"] == pytest.approx(1.0)


def test_a_stack_entry_matches_only_within_its_module_and_phase():
    m = measured()
    frame = m.frame.copy()
    frame.loc[0, "module"] = "Net.other"  # the estimate has no aten::convolution in Net.other
    out = measured_vs_estimated(KernelTable(frame=frame, metrics=m.metrics), estimated(), by="op")
    assert _row(out, "aten::cudnn_convolution [forward]")["measured_flops"] == 1000.0
    assert _row(out, "aten::convolution [forward]")["measured_flops"] == 100.0  # add_bias alone


def test_by_module_sums_phases_and_cuts_paths():
    out = measured_vs_estimated(measured(), estimated(), by="module")
    conv = _row(out, "Net.conv")
    # measured 1000 + 100 + 2000 FLOPs, 400 + 200 + 800 B; estimated 1000 + 2000, 500 + 1000
    assert conv["measured_flops"] == 3100.0 and conv["estimated_flops"] == 3000.0
    assert conv["flops_ratio"] == pytest.approx(3000 / 3100)
    assert conv["dram_bytes_ratio"] == pytest.approx(1500 / 1400)
    assert conv["measured_launches"] == 3 and conv["estimated_launches"] == 2
    assert math.isnan(_row(out, "Net.relu")["measured_time_s"])
    assert _row(out, "(outside modules)")["measured_time_s"] == pytest.approx(0.5e-3)

    top = measured_vs_estimated(measured(), estimated(), by="module", depth=1)
    assert sorted(top["label"]) == ["(outside modules)", "Net"]
    net = _row(top, "Net")
    assert net["measured_flops"] == 3600.0 and net["estimated_flops"] == 3450.0  # + 500; + 400 + 0 + 50
    assert math.isnan(net["measured_dram_bytes"])  # the linear's DRAM bytes unknown: the sum is unknown
    assert net["estimated_dram_bytes"] == 1880.0   # 500 + 1000 + 300 + 0 + 80


def test_bad_arguments():
    with pytest.raises(ValueError):
        measured_vs_estimated(measured(), estimated(), by="name")
    with pytest.raises(ValueError):
        measured_vs_estimated(measured(), estimated(), by="op", depth=2)


def test_terminal_and_json_views_of_the_comparison():
    from rich.console import Console

    from roofline.views.json_out import comparison_to_dict
    from roofline.views.terminal import comparison_renderable

    out = measured_vs_estimated(measured(), estimated(), by="op")
    console = Console(width=250, record=True)
    console.print(comparison_renderable(out, by="op"))
    text = console.export_text()
    line = next(t for t in text.splitlines() if "0.909" in t)  # 1000 / 1100 FLOPs
    assert "aten::convolution" in line and "forward" in line and "1.1 kFLOP" in line and "0.833" in line
    assert "operator" in text and "(no operator)" in text
    block = json.loads(json.dumps(comparison_to_dict(out, by="op"), allow_nan=False))
    assert block["by"] == "op" and block["depth"] is None
    conv = next(r for r in block["rows"] if r["label"] == "aten::convolution [forward]")
    assert conv["op"] == "aten::convolution" and conv["phase"] == "forward"
    assert conv["flops"] == {"measured": 1100.0, "estimated": 1000.0, "ratio": pytest.approx(1000 / 1100)}
    assert conv["time_s"]["estimated"] is None and conv["launches"] == {"measured": 2, "estimated": 1}
    relu = next(r for r in block["rows"] if r["label"] == "aten::relu [forward]")
    assert relu["launches"]["measured"] is None and relu["flops"]["ratio"] is None
    assert np.isnan(out["time_ratio"]).all()  # no estimated times in this estimate

"""Comparison of two analyses: matching, totals, the CI gate, charts and JSON.

The analyses are the DeepCAM authors' kernels (tests/report_data.py) and a copy
MODIFIED here (one kernel made slower, one removed, one added), so the changes are
known exactly.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from report_data import V100, deepcam_analysis
from roofline.comparison import compare, comparison_to_dict
from roofline.errors import InputError
from roofline.machine.model import Machine
from roofline.views.chart.compare import comparison_figure, comparison_plotly

A100 = Machine(name="A100 (datasheet)", source="theoretical", memory={"l1": 19.5e12, "l2": 5.1e12, "dram": 1.555e12},
               compute={"fp32": 19.5e12})


def _after(before):
    f = before.frame.copy()
    lamb1 = f["kernel_name"].str.contains("LAMBStage1").to_numpy()
    f.loc[lamb1, "time_s"] *= 1.5  # slower
    f.loc[lamb1, "flop_rate"] /= 1.5
    f = f[~f["kernel_name"].str.startswith("cleanup")]  # vanished
    new = f.iloc[[0]].copy()
    new["kernel_name"] = "void fused_lamb<float>(float*)"
    new["time_s"] = 1e-4
    f = pd.concat([f, new], ignore_index=True)
    return replace(before, frame=f)


def test_matches_by_name_with_new_and_vanished():
    b = deepcam_analysis(extra_hostile=False)
    a = _after(b)
    c = compare(b, a)
    status = dict(zip(c.frame["kernel_name"], c.frame["status"]))
    assert status["void fused_lamb<float>(float*)"] == "new"
    assert status[next(n for n in status if n.startswith("cleanup"))] == "vanished"
    assert sum(s == "matched" for s in status.values()) == len(b.frame) - 1
    lamb = c.frame[c.frame["kernel_name"].str.contains("LAMBStage1")].iloc[0]
    assert lamb["time_change_pct"] == pytest.approx(50.0)
    assert lamb["flop_rate_after"] == pytest.approx(lamb["flop_rate_before"] / 1.5)
    assert lamb["ai_dram_before"] == lamb["ai_dram_after"]


def test_totals_and_fail_if_slower():
    b = deepcam_analysis(extra_hostile=False)
    c = compare(b, _after(b))
    t = c.totals
    tb = b.frame["time_s"].sum()
    lamb = b.frame.loc[b.frame["kernel_name"].str.contains("LAMBStage1"), "time_s"].sum()
    cleanup = b.frame.loc[b.frame["kernel_name"].str.startswith("cleanup"), "time_s"].sum()
    ta = tb + 0.5 * lamb - cleanup + 1e-4
    assert t["time_s_before"] == pytest.approx(tb) and t["time_s_after"] == pytest.approx(ta)
    assert t["time_change_pct"] == pytest.approx(100 * (ta - tb) / tb)
    assert (t["matched"], t["new"], t["vanished"]) == (len(b.frame) - 1, 1, 1)
    pct = t["time_change_pct"]  # about +24%
    assert c.slower_than(pct - 0.01) and not c.slower_than(pct + 0.01)
    same = compare(b, b)
    assert same.totals["time_change_pct"] == 0.0 and not same.slower_than(0.0)


def test_match_by_phase():
    rows = pd.DataFrame({"kernel_name": ["k", "k", "j"], "phase": ["fwd", "bwd", "fwd"], "time_s": [1.0, 2.0, 3.0]})
    b = replace(deepcam_analysis(), frame=rows, by="phase")
    a = replace(b, frame=rows.assign(time_s=[1.0, 4.0, 3.0]))
    c = compare(b, a)
    assert c.keys == ("phase", "kernel_name")
    k_bwd = c.frame[(c.frame["kernel_name"] == "k") & (c.frame["phase"] == "bwd")].iloc[0]
    assert k_bwd["time_change_pct"] == pytest.approx(100.0)
    with pytest.raises(InputError):
        compare(replace(b, by="launch"), a)


def test_two_gpus_keep_their_own_ceilings_and_json():
    b = deepcam_analysis(extra_hostile=False)
    a = replace(_after(b), machine=A100)
    c = compare(b, a)
    assert not c.same_machine
    d = comparison_to_dict(c)
    assert d["machine_before"]["name"] == V100.name and d["machine_after"]["name"] == "A100 (datasheet)"
    text = json.dumps(d, allow_nan=False)  # NaN became null
    assert '"status": "new"' in text
    new = next(k for k in d["kernels"] if k["status"] == "new")
    assert new["time_s_before"] is None and new["time_s_after"] == pytest.approx(1e-4)


def test_static_chart_draws_both_ceilings_and_arrows():
    b = deepcam_analysis(extra_hostile=False)
    c = compare(b, replace(_after(b), machine=A100))
    fig = comparison_figure(c, top=10)
    ax = fig.axes[0]
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    matched = c.frame.head(10)
    expected = sum(int((np.isfinite(matched[f"ai_{lv}_before"]) & np.isfinite(matched[f"ai_{lv}_after"])
                        & (matched["flop_rate_before"] > 0) & (matched["flop_rate_after"] > 0)).sum())
                   for lv in c.levels)
    assert len(arrows) == expected and expected > 0
    solid = [ln for ln in ax.lines if ln.get_linestyle() == "-"]
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(solid) == 3 + 2 and len(dashed) == 3 + 1  # V100: 3 levels + 2 peaks; A100: 3 levels + 1 peak
    labels = [t.get_text() for t in ax.texts]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("before: V100") for t in legend) and any(t.startswith("after: A100") for t in legend)
    assert "DRAM 829 GB/s" in labels and "DRAM 1.55 TB/s" in labels


def test_interactive_chart_arrows_and_escaped_names():
    b = deepcam_analysis()
    c = compare(b, b)
    fig = comparison_plotly(c, top=20)
    kernels = [t for t in fig.data if t.mode == "lines+markers"]
    assert kernels and all(list(t.marker.symbol) == ["circle-open", "arrow"] for t in kernels)
    hover = " ".join(h for t in fig.data if t.hovertext is not None for h in t.hovertext)
    assert "<img" not in hover and "&lt;img src=x onerror=alert(1)&gt;" in hover
    ceilings = [t for t in fig.data if t.mode == "lines"]
    assert len(ceilings) == 3 + 2  # same machine: drawn once


# -- the Python API takes profiles as analyze does (issue 32) ------------------------------------------
PAIR = Path(__file__).parent / "data" / "ncu" / "pairs" / "v100_a100_cutlass_gemm"  # PROVENANCE.md there
V100_SIDE, A100_SIDE = PAIR / "v100pcie_output.csv", PAIR / "a100pcie_output_A100.csv"
#: The V100 side's FLOPs: 6 CUTLASS SIMT GEMMs of 17,182,415,257,600 and one tensor-op GEMM of 17,180,288,614,400.
V100_FLOPS = 6 * 17182415257600 + 17180288614400


def test_compare_takes_paths_and_kernel_tables_as_analyze_does():
    """``roofline.compare(path, path)`` raised AttributeError ('str' object has no attribute 'frame')."""
    import roofline

    by_path = roofline.compare(str(V100_SIDE), A100_SIDE, machine_before="v100-pcie", machine_after="a100-pcie")
    by_analysis = compare(roofline.analyze(V100_SIDE, "v100-pcie"), roofline.analyze(A100_SIDE, "a100-pcie"))
    by_table = roofline.compare(roofline.read(V100_SIDE), roofline.read([A100_SIDE]), machine_before="v100-pcie",
                                machine_after="a100-pcie")
    for comp in (by_path, by_table):
        pd.testing.assert_frame_equal(comp.frame, by_analysis.frame)
    assert np.nansum(by_path.frame["flops_before"]) == V100_FLOPS
    # 2 kernels in both runs (the A100's GEMMs are other kernels: cuBLAS picks per GPU), 2 only on each side
    assert (by_path.totals["matched"], by_path.totals["new"], by_path.totals["vanished"]) == (2, 2, 2)
    assert by_path.before.machine.name == roofline.load_machine("v100-pcie").name

    gemms = roofline.compare(V100_SIDE, V100_SIDE, kernels="gemm")  # the selection applies to both sides
    assert set(gemms.frame["status"]) == {"matched"} and np.nansum(gemms.frame["flops_after"]) == V100_FLOPS
    with pytest.raises(InputError, match="already an analysis"):  # its machine is its own: not silently ignored
        roofline.compare(by_analysis.before, V100_SIDE, machine="v100-pcie")


def test_plot_takes_paths_and_kernel_tables_as_analyze_does():
    """``roofline.plot(path)`` raised AttributeError ('str' object has no attribute 'levels')."""
    import roofline

    from roofline.writing.analysis_files import figure_bytes

    expected = figure_bytes(roofline.plot(roofline.analyze(V100_SIDE)), ".png")  # PNG: no date or random ids
    for data in (str(V100_SIDE), roofline.read(V100_SIDE)):
        assert figure_bytes(roofline.plot(data), ".png") == expected  # the same chart, of the same kernels

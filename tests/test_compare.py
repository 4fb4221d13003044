"""Comparison of two analyses: matching, totals, the CI gate, charts and JSON.

The analyses are the DeepCAM authors' kernels (tests/report_data.py) and a copy
MODIFIED here (one kernel made slower, one removed, one added), so the changes are
known exactly.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from report_data import V100, deepcam_analysis
from roofline.comparison import compare, comparison_to_dict
from roofline.errors import InputError
from roofline.machine.model import Machine
from roofline.views.compare_chart import comparison_figure, comparison_plotly

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

"""Kernels that get slower on the target are shown in every view of a projection, and counted.

Real data: the DeepCAM training step recorded on an H100 80GB HBM3 (tests/data/ncu/h100_80gb_hbm3_examples,
PROVENANCE.md there: `roofline profile` of benchmarks' DeepCAM, ncu 2025.3.1, raw page), projected from the
H100 SXM spec onto the L40S spec. The L40S has a quarter of the DRAM bandwidth (864 GB/s against
3349.76 GB/s) but more FP32 (91.6 TFLOP/s) and shared-memory bandwidth (45.8 TB/s) than the H100 at the
kernels' 2.03 GHz (68.6 TFLOP/s, 34.3 TB/s); its spec has no L1 or L2 ceiling, so both rooflines use
shared memory and DRAM, and its L2 (96 MiB) is larger than the H100's (50 MiB), which only lowers the
low ends. So the kernels that stream DRAM get slower there and the convolutions bound by shared memory
get faster: a program where most kernels lose and a few gain, which a ranking by gain under a
``--top`` cut showed as gainers only.

The ground truth is worked out here from the projection's own rule, not read from its result: a
kernel's roofline time on a machine is ``max(sum_p FLOPs_p / peak_p, max_l bytes_l / BW_l)`` (its FLOPs
per precision and bytes per level summed over its launches, from the profile), and its projection is
today's time x roofline there / roofline here, so it gets slower exactly when its roofline there is
longer than here. The ceilings are the two machines as applied (``proj.source``, ``proj.target``, the
``source``/``target`` of the JSON). By name: 4 kernels gain, 42 get slower, 88.7 % of the 895 µs:
every DRAM-bound one at 864 / 3349.76 = 0.258x (DRAM is not SM-clocked, so this ratio holds whatever
the clock), and the shared-bound ones that become DRAM-bound there.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.units import format_time
from roofline.kernels.labels import short_names
from roofline.views.projection import (
    phase_table,
    projection_figure,
    projection_html,
    projection_plotly,
    projection_table,
    projection_title,
    projection_to_dict,
)

DEEPCAM = Path(__file__).parent / "data" / "ncu" / "h100_80gb_hbm3_examples" / "example_deepcam.ncu.csv.gz"
DRAM_RATIO = 864e9 / 3349.76e9   # L40S over H100 SXM DRAM bandwidth (specs): 0.2579
FLOP_KEYS = (("fp64_flops", "fp64"), ("fp32_flops", "fp32"), ("fp16_flops", "fp16"))
TOP = 3                          # fewer than the 4 kernels that gain


def cells(t) -> list[list[str]]:
    return [[str(c) for c in col._cells] for col in t.columns]


def rows(t) -> list[list[str]]:
    return [list(r) for r in zip(*cells(t))]


def _roof(k: pd.DataFrame, machine, levels) -> np.ndarray:
    """The roofline time of each kernel on ``machine``, from its counts (the rule in the docstring)."""
    compute = np.zeros(len(k))
    for col, key in FLOP_KEYS:
        used = k[col].to_numpy(dtype=float) > 0
        compute += np.where(used, k[col].to_numpy(dtype=float) / machine.compute.get(key, np.nan), 0.0)
    tensor = k["tensor_flops"].to_numpy(dtype=float)
    keys = ["tensor_" + str(p).lower() if f > 0 else None for p, f in zip(k["tensor_precision"], tensor)]
    compute += np.array([f / machine.compute[key] if key else 0.0 for f, key in zip(tensor, keys)])
    memory = np.column_stack([k[f"{lv}_bytes"].to_numpy(dtype=float) / machine.memory[lv] for lv in levels])
    return np.maximum(compute, np.nanmax(memory, axis=1))


@pytest.fixture(scope="module")
def case():
    proj = api.project(DEEPCAM, "l40s", by="name")
    launches = api.read(DEEPCAM).frame
    cols = ["time_s", "tensor_flops", *(c for c, _ in FLOP_KEYS), *(f"{lv}_bytes" for lv in proj.levels)]
    k = launches.groupby("kernel_name", sort=False)[cols].sum(min_count=1)
    k["tensor_precision"] = launches.groupby("kernel_name", sort=False)["tensor_precision"].first()
    assert not k[cols].isna().any().any()           # every count known: no unknown-flops widening
    assert proj.levels == ("shared", "dram")         # the levels both specs have
    here, there = _roof(k, proj.source, proj.levels), _roof(k, proj.target, proj.levels)
    k["projected_s"] = k["time_s"] * there / here
    k["loss_s"] = k["projected_s"] - k["time_s"]
    k["dram_bound"] = k["dram_bytes"] / proj.source.memory["dram"] >= here
    return proj, k


def test_slower_kernels_and_totals_by_hand(case):
    proj, k = case
    slow = k[k["loss_s"] > 0]
    assert len(k) == 46 and len(slow) == 42
    total = k["time_s"].sum()
    assert total == pytest.approx(894.816e-6, rel=1e-6)
    share = slow["time_s"].sum() / total
    assert share == pytest.approx(0.887, abs=5e-4)
    # every DRAM-bound kernel gets slower, by the ratio of the DRAM bandwidths
    dram = k[k["dram_bound"]]
    assert len(dram) >= 30 and (dram["projected_s"] / dram["time_s"]).to_numpy() == pytest.approx(1 / DRAM_RATIO)
    tot = proj.totals
    assert tot["slower"] == 42 and tot["kernels"] == 46
    assert tot["slower_time_s"] == pytest.approx(slow["time_s"].sum(), rel=1e-9)
    assert tot["slower_share"] == pytest.approx(share, rel=1e-9)
    assert tot["slower_added_s"] == pytest.approx(slow["loss_s"].sum(), rel=1e-9)
    got = proj.slower()
    assert set(got["kernel_name"]) == set(slow.index)
    assert list(got["kernel_name"]) == list(slow.sort_values("loss_s", ascending=False).index)  # most lost first
    assert got.loc[got["kernel_name"].isin(dram.index), "speedup"].to_numpy() == pytest.approx(DRAM_RATIO)


def test_table_shows_the_slowdowns_under_a_top_cut(case):
    proj, k = case
    t = projection_table(proj, top=TOP)
    body = rows(t)
    labels = [r[0] for r in body]
    gainers = k[k["loss_s"] < 0].sort_values("loss_s")
    losers = k[k["loss_s"] > 0].sort_values("loss_s", ascending=False)
    assert len(gainers) == 4 > TOP
    # the gainers' section: its row, the top 3 by gain, the one left out
    assert labels[0] == "get faster there (4)"
    assert labels[TOP + 1] == "… 1 more gets faster there"
    # then the slowdowns' section, though every gainer gains more than any of them: its row with the sums
    i = labels.index("get slower there (42)")
    assert i == TOP + 2
    here, there = losers["time_s"].sum(), losers["projected_s"].sum()
    assert body[i][1:6] == [format_time(here), "", format_time(there), "", f"{here / there:.3g}x"]
    # the 3 that lose the most time, by hand, each at its projection (a short name: the function's)
    for row, (name, r) in zip(body[i + 1:i + 1 + TOP], losers.head(TOP).iterrows()):
        assert row[0].split("<")[0] in name
        assert row[1] == format_time(r["time_s"]) and row[3] == format_time(r["projected_s"])
        assert row[5] == f"{r['time_s'] / r['projected_s']:.3g}x"
    rest = losers.iloc[TOP:]
    assert body[i + 1 + TOP][:4] == ["… 39 more get slower there", format_time(rest["time_s"].sum()), "",
                                     format_time(rest["projected_s"].sum())]
    # the footer: how many kernels, how much of today's time, how much they add there
    footer = [col.footer for col in t.columns]
    added = losers["loss_s"].sum()
    assert footer[8] == f"42 kernels, 88.7% of the time, get slower there: +{format_time(added)}"
    assert footer[1] == "895 µs"
    assert t.caption == "46 of 46 kernels, 100% of the time projected; top 3 by gain shown"
    # by today's time too, the slowdowns keep their section: the longest of them first
    by_time = rows(projection_table(proj, top=TOP, sort="time"))
    j = [r[0] for r in by_time].index("get slower there (42)")
    assert by_time[j + 1][1] == format_time(losers["time_s"].max())


def test_html_json_and_chart_carry_the_slowdowns(case):
    proj, k = case
    losers = k[k["loss_s"] > 0].sort_values("loss_s", ascending=False)
    page = projection_html(proj, top=TOP)
    text = f"42 kernels, 88.7% of the time, get slower there: +{format_time(losers['loss_s'].sum())}"
    assert f"<div class='v'>{html.escape(text)}</div>" in page                        # a summary card
    slower = page.split("<section id='slower'>")[1].split("</section>")[0]
    assert slower.count("<tr>") == 1 + TOP                                             # header + the top 3
    for name in losers.index[:TOP]:
        assert f"title='{html.escape(name, quote=True)}'" in slower
    assert "39 more kernels get slower there, not shown" in slower
    faster = page.split("<section id='faster'>")[1].split("</section>")[0]
    assert faster.count("<tr>") == 1 + TOP and "1 more kernel gets faster there, not shown" in faster

    d = json.loads(json.dumps(projection_to_dict(proj), allow_nan=False))
    assert d["totals"]["slower"] == 42
    assert d["totals"]["slower_time_s"] == pytest.approx(losers["time_s"].sum(), rel=1e-9)
    assert d["totals"]["slower_share"] == pytest.approx(losers["time_s"].sum() / k["time_s"].sum(), rel=1e-9)
    assert d["totals"]["slower_added_s"] == pytest.approx(losers["loss_s"].sum(), rel=1e-9)
    assert sum(1 for kern in d["kernels"] if kern["gain_s"] is not None and kern["gain_s"] < 0) == 42

    # the chart: the title says it; the kernels drawn are those whose time changes most, here the 3 that
    # lose most (each loses more than any kernel gains), each keyed with its times and change
    assert projection_title(proj).endswith(f"; {text}")
    fig = projection_figure(proj, top=TOP)
    assert fig.axes[0].get_title() == projection_title(proj, sep="\n")
    key = next(t.get_text() for t in fig.texts if t.get_gid() == "kernel-label-key")
    for name in short_names(list(losers.index[:TOP])):
        assert f"  {name}  " in key
    assert key.count("(+287.7%)") == TOP                                               # 1 / 0.2579 - 1
    # the interactive chart: the same kernels, those with FLOPs (the fill kernel, which loses most, does none:
    # no place on a log-log chart)
    hover = " ".join(h for t in projection_plotly(proj, top=TOP).data if t.hovertext is not None for h in t.hovertext)
    flops = losers[[c for c, _ in FLOP_KEYS] + ["tensor_flops"]].sum(axis=1).head(TOP)
    assert flops.iloc[0] == 0 and (flops.iloc[1:] > 0).all()
    for name, f in zip(short_names(list(losers.index[:TOP])), flops):
        assert (f"<b>{html.escape(name)}</b>" in hover) == (f > 0)


def test_phase_table_counts_the_slowdowns_per_phase():
    proj = api.project(DEEPCAM, "l40s", by="phase")
    per = proj.phase_totals()
    assert per["slower"].sum() == proj.totals["slower"]
    assert per["slower_time_s"].sum() == pytest.approx(proj.totals["slower_time_s"], rel=1e-9)
    body = {r[0]: r for r in rows(phase_table(proj))}
    # the optimizer phase: every kernel a DRAM-bound elementwise/LAMB kernel, all slower
    opt = per.set_index("phase").loc["optimizer"]
    assert opt["slower"] == opt["kernels"] and opt["slower_share"] == pytest.approx(1.0)
    assert body["optimizer"][7] == f"{int(opt['slower'])} kernels, 100%: +{format_time(opt['slower_added_s'])}"
    assert opt["speedup"] == pytest.approx(DRAM_RATIO)


def test_cli_prints_the_slowdowns_and_writes_them(capsys):
    assert main(["project", str(DEEPCAM), "--to", "l40s", "--by", "name", "--top", str(TOP), "--json", "-",
                 "-q"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["totals"]["slower"] == 42 and d["totals"]["slower_share"] == pytest.approx(0.887, abs=5e-4)
    printed = cap.err
    assert "get slower there (42)" in printed and "… 39 more get slower there" in printed
    assert "bn_bw_1C11_singleread" in printed          # the second-largest loss, shown under --top 3
    assert "42 kernels, 88.7% of the time, get" in printed
    assert math.isclose(d["totals"]["slower_added_s"] + d["totals"]["time_s"] - d["totals"]["projected_time_s"],
                        sum(kern["gain_s"] for kern in d["kernels"] if kern["gain_s"] > 0), rel_tol=1e-9)

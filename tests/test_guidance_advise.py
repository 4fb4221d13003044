"""Aggregation of metrics over launches, the ranking of what to work on, and --explain matching."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from guidance_data import FrameAnalysis, analysis_of, b200_table
from roofline.errors import InputError
from roofline.guidance import advice_table, advise, diagnose, explain_text, find_kernel, limiter_shares
from roofline.guidance import metrics as m
from roofline.kernels import KernelTable


def _b200_with_sectors() -> KernelTable:
    """B200 launches (real names, times, waves) with load sectors/requests EDITED in, varying per launch."""
    t = b200_table()
    met = t.metrics.copy()
    n = len(met)
    met[m.GLOBAL_LD_REQUESTS] = np.arange(1, n + 1) * 100.0
    met[m.GLOBAL_LD_SECTORS] = met[m.GLOBAL_LD_REQUESTS] * np.where(np.arange(n) % 4 == 1, 32.0, 4.0)
    met[m.SM_THROUGHPUT] = np.linspace(10.0, 40.0, n)
    return KernelTable(frame=t.frame, metrics=met, sources=t.sources)


def test_aggregate_time_weighted_means_and_summed_counts():
    t = _b200_with_sectors()
    agg = m.aggregate_metrics(t.frame, t.metrics, "name")
    names = t.frame["kernel_name"]
    for name in agg.index:
        sel = (names == name).to_numpy()
        time = t.frame["time_s"].to_numpy()[sel]
        sm = t.metrics[m.SM_THROUGHPUT].to_numpy()[sel]
        assert agg.loc[name, m.SM_THROUGHPUT] == pytest.approx((sm * time).sum() / time.sum())
        sectors = t.metrics[m.GLOBAL_LD_SECTORS].to_numpy()[sel]
        requests = t.metrics[m.GLOBAL_LD_REQUESTS].to_numpy()[sel]
        assert agg.loc[name, m.GLOBAL_LD_SECTORS] == sectors.sum()
        # sectors per request after summing is sum/sum, not the mean of the per-launch ratios
        ratio = agg.loc[name, m.GLOBAL_LD_SECTORS] / agg.loc[name, m.GLOBAL_LD_REQUESTS]
        assert ratio == pytest.approx(sectors.sum() / requests.sum())
    split = next(n for n in agg.index if "splitkv_kernel" in n)
    assert agg.loc[split, m.WAVES_PER_SM] == pytest.approx(0.86)


def test_a_missing_count_in_one_launch_makes_the_sum_unknown():
    t = _b200_with_sectors()
    t.metrics.loc[t.metrics.index[0], m.GLOBAL_LD_SECTORS] = np.nan
    agg = m.aggregate_metrics(t.frame, t.metrics, "name")
    first = t.frame["kernel_name"].iloc[0]
    assert np.isnan(agg.loc[first, m.GLOBAL_LD_SECTORS])
    other = next(n for n in agg.index if n != first)
    assert np.isfinite(agg.loc[other, m.GLOBAL_LD_SECTORS])


def test_metrics_per_row_by_launch_follow_launch_id():
    t = _b200_with_sectors()
    frame = t.frame.iloc[::-1].reset_index(drop=True)  # the analysis sorts rows: align by launch_id
    rows = m.metrics_per_row(frame, "launch", t)
    for i in frame.index:
        lid = int(frame.loc[i, "launch_id"])
        expect = t.metrics.loc[t.frame["launch_id"] == lid, m.SM_THROUGHPUT].iloc[0]
        assert rows.loc[i, m.SM_THROUGHPUT] == pytest.approx(expect, rel=1e-12)


def test_diagnose_by_name_flags_the_kernel_with_uncoalesced_launches():
    t = _b200_with_sectors()
    f = t.frame.groupby("kernel_name", sort=False).agg(time_s=("time_s", "sum"), launches=("launches", "sum"))
    a = analysis_of(f.reset_index().to_dict("records"))
    d = diagnose(a, t)
    split = next(k for k in d if "splitkv_kernel" in k.kernel_name)
    combine = next(k for k in d if "combine" in k.kernel_name)
    # split-KV launches 1,3,..: every other of its launches has 32 sectors per request (16.4 in all:
    # more than 16-byte words explain, so uncoalesced whatever the access size)
    assert split.finding("global-load-coalescing").status == "fired"
    assert split.limiter == "uncoalesced"
    assert combine.finding("global-load-coalescing").status == "ok"
    # SOL needs memory throughput as well: still missing
    assert combine.finding("speed-of-light").missing == (m.MEMORY_THROUGHPUT,)


def _ranked_analysis() -> FrameAnalysis:
    rows = [
        dict(kernel_name="void gemm<float, 128>(float const*, float*)", time_s=4e-3, launches=2,
             savable_time_s=0.4e-3, pct_of_roofline=0.9, roofline_time_s=3.6e-3, bound="fp32",
             region="compute-bound", time_share=0.4, flops=1e10, fp32_flops=1e10, tensor_flops=0.0,
             fp64_flops=0.0, compute_use=0.9),
        dict(kernel_name="void copy_kernel<float&>(float*)", time_s=3e-3, launches=1000, savable_time_s=2.5e-3,
             pct_of_roofline=0.17, roofline_time_s=0.5e-3, bound="dram", region="poor", time_share=0.3),
        dict(kernel_name="void reduce<double>(double*)", time_s=3e-3, launches=3, savable_time_s=np.nan,
             time_share=0.3),
    ]
    return analysis_of(rows)


def test_advise_ranks_by_savable_time():
    adv = advise(_ranked_analysis())
    assert list(adv["rank"]) == [1, 2, 3]
    assert list(adv["kernel_name"]) == ["void copy_kernel<float&>(float*)", "void gemm<float, 128>(float const*, float*)",
                                        "void reduce<double>(double*)"]
    copy, gemm, reduce_ = adv.iloc[0], adv.iloc[1], adv.iloc[2]
    assert copy["limiter"] == "short-kernel"  # 1000 launches of 3 us
    assert "fuse small kernels" in copy["advice"]
    assert gemm["limiter"] == "tensor-cores"  # compute-bound FP32 without tensor cores
    assert "tensor cores" in gemm["advice"]
    assert pd.isna(reduce_["limiter"]) and reduce_["advice"].startswith("Not enough data")
    shares = limiter_shares(adv)
    assert shares["launch overhead"] == pytest.approx(0.3) and shares.sum() == pytest.approx(1.0)


def test_advice_table_renders_names_literally():
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(advice_table(advise(_ranked_analysis())))
    text = console.export_text()
    assert "copy_kernel" in text and "2.5 ms" in text and "launch overhead" in text
    assert list(advise(_ranked_analysis())["label"]) == ["copy_kernel", "gemm", "reduce"]


def test_find_kernel_exact_then_unique_substring():
    a = FrameAnalysis(frame=pd.DataFrame({"kernel_name": ["gemm", "gemm_big", "copy<float>"],
                                          "time_s": [1.0, 2.0, 3.0]}))
    assert find_kernel(a.frame, "gemm") == [0]  # exact beats substring
    assert find_kernel(a.frame, "BIG") == [1]
    assert find_kernel(a.frame, "copy<") == [2]
    with pytest.raises(InputError) as exc:
        find_kernel(a.frame, "gem")
    assert "matches 2 kernels" in exc.value.message and "gemm_big" in exc.value.hint
    with pytest.raises(InputError) as exc:
        find_kernel(a.frame, "nothing")
    assert exc.value.hint.index("copy<float>") < exc.value.hint.index("gemm")  # longest first


def test_find_kernel_by_phase_returns_every_row_of_the_name():
    frame = pd.DataFrame({"kernel_name": ["k", "k", "j"], "phase": ["fwd", "bwd", "fwd"], "time_s": [1.0, 1.0, 1.0]})
    assert find_kernel(frame, "k") == [0, 1]


def test_explain_text_shows_every_rule_and_the_advice():
    text = explain_text(_ranked_analysis(), None, "copy_kernel", width=160)
    assert "void copy_kernel<float&>(float*)" in text
    assert "Speed of Light" in text and "missing" in text and m.SM_THROUGHPUT in text
    assert "fuse small kernels" in text and "17%" in text


def test_explain_with_b200_metrics():
    t = b200_table()
    f = t.frame.groupby("kernel_name", sort=False).agg(time_s=("time_s", "sum"), launches=("launches", "sum"))
    a = analysis_of(f.reset_index().to_dict("records"))
    text = explain_text(a, t, "combine", width=200)
    assert "flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128" in text
    assert "95.4 µs" in text  # 8 launches, 95.472 us in all (real)

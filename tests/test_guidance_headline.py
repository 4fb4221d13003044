"""A kernel's headline diagnosis is the claim its own rows support most (roofline.guidance.headline),
and claims the rows contradict are set aside, on real public profiles.

- H200 ``--set full`` (tests/data/ncu/h200_setfull_sglang_moe_fa3, PROVENANCE.md): the FlashAttention-3
  decode kernel was ranked first as "uncoalesced access" on 160 excess sectors (0.8% of its global
  sectors) while Speed of Light says latency (compute 2.4%, memory 1.3% of peak, a full wave);
  fused_moe_kernel's "uncoalesced" claims (a 32-bit-word guess of 55.8 MB excess) beside Nsight Compute's
  source counters measuring 0 excess sectors.
- The H100 DeepCAM recording (tests/data/ncu/h100_80gb_hbm3_examples): every top kernel says "grid too
  small"; checked against its own rows: under one wave of blocks, both units under 60%.
- The same H200 study's prefill, where measured waste does outweigh a small grid, and the H100 saxpy,
  where 0.4% excess store sectors do not outweigh 91% of DRAM throughput.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import roofline
from roofline.guidance import advise, diagnose, explain_text
from roofline.guidance import metrics as m
from roofline.guidance.headline import BUSY_FROM, MATERIAL, weigh
from roofline.guidance.rules import LIMITER_PRIORITY, rule_by_id

DATA = Path(__file__).parent / "data" / "ncu"
H200 = DATA / "h200_setfull_sglang_moe_fa3"
H100 = DATA / "h100_80gb_hbm3_examples"


@pytest.fixture(scope="module")
def decode():
    table = roofline.read(H200 / "short_decode.raw.csv.gz")
    a = roofline.analyze(table)
    return table, a, advise(a, table)


def _diagnosis(table, a, name: str):
    rows = [i for i in a.frame.index if name in str(a.frame.loc[i, "kernel_name"])]
    assert len(rows) == 1, name
    return diagnose(a, table, rows=rows).kernels[0], a.frame.loc[rows[0]]


def test_a_latency_bound_attention_kernel_with_coalesced_loads_is_not_headlined_uncoalesced(decode):
    table, a, adv = decode
    top = adv.iloc[0]
    assert "FlashAttnFwdSm90" in top["kernel_name"]  # the most savable time of the profile
    assert top["limiter"] == "latency" and top["limiter_label"] == "latency"
    assert top["reason"] == "SOL: compute 2%, memory 1%"
    k, row = _diagnosis(table, a, "FlashAttnFwdSm90")
    claims = {c.limiter: c for c in k.headline.claims}
    # latency: neither unit busy (sm__throughput 2.39%, gpu__compute_memory_throughput 1.27%), one full
    # wave (launch__waves_per_multiprocessor 1.0): the whole savable time is waiting
    assert claims["latency"].support_s == pytest.approx(row["savable_time_s"])
    # uncoalesced: 160 excess of 20,016 sectors (derived__memory_l2_theoretical_sectors_global_excessive,
    # memory_l2_theoretical_sectors_global) x 12.896 us = 0.103 us
    assert claims["uncoalesced"].support_s == pytest.approx(160 / 20_016 * 12.896e-6, rel=1e-9)
    assert claims["uncoalesced"].support_s < 0.01 * claims["latency"].support_s


def test_claims_the_rows_contradict_are_set_aside(decode):
    """fused_moe_kernel: the grid fills a third of the GPU (0.29 and 0.39 waves per SM), Speed of Light
    has memory at 59%: 'grid too small' stands; 'uncoalesced' (global loads: 14.6 sectors per request
    against 4 for 32-bit words, and 10.8 of 32 bytes used by its LDG) is set aside, the source counters
    measuring 0 excess sectors of 1,600,512 + 805,888; 'memory bandwidth' (DRAM-bound, L2 hit rate 2%) is
    set aside, neither unit being busy."""
    table, a, _ = decode
    k, row = _diagnosis(table, a, "fused_moe_kernel")
    assert k.limiter == "small-grid"
    by_rule = {c.finding.rule: c for c in k.headline.claims}
    waves = k.finding("speed-of-light").values["waves_per_sm"]
    assert 0.29 < waves < 0.39
    assert by_rule["speed-of-light"].support_s == pytest.approx(min(row["savable_time_s"], row["time_s"] * (1 - waves)))
    for rule in ("global-load-coalescing", "sector-use"):
        assert by_rule[rule].support_s == 0 and by_rule[rule].set_aside.startswith("uncoalesced-global measured no")
    assert by_rule["hit-rates"].set_aside.startswith("Speed of Light measured neither unit busy")
    text = explain_text(a, table, "fused_moe_kernel", width=400)
    assert "weighed" in text and "uncoalesced access (global-load-coalescing" in text and "set aside" in text


def test_deepcam_top_kernels_grid_too_small_is_supported_by_their_rows():
    """The H100 DeepCAM recording: each of the five kernels with the most savable time ran under one wave
    of blocks per SM with both units under 60%, and the idle SMs' share of its time covers at least 3/4
    of its savable time (wgrad2d_grouped_direct_kernel: 0.28 waves, 76%; the others 97-100%)."""
    table = roofline.read(H100 / "example_deepcam.ncu.csv.gz")
    a = roofline.analyze(table)
    adv = advise(a, table, top=5)
    d = diagnose(a, table, rows=list(adv["row"]))
    for _, r in adv.iterrows():
        k = d.for_index(r["row"])
        rows = d.metrics.loc[r["row"]]
        assert k.limiter == "small-grid", r["label"]
        assert rows[m.WAVES_PER_SM] < 1 and rows[m.SM_THROUGHPUT] < 60 and rows[m.MEMORY_THROUGHPUT] < 60
        expected = min(r["savable_time_s"], r["time_s"] * (1 - rows[m.WAVES_PER_SM]))
        assert k.headline.support_s == pytest.approx(expected)
        assert k.headline.support_s >= 0.75 * r["savable_time_s"], r["label"]
        assert not any(c.support_s > k.headline.support_s for c in k.headline.claims)  # (launch overhead: unmeasured)


def test_measured_waste_outweighs_a_nearly_full_grid():
    """count_and_sort_expert_tokens_kernel in the prefill export: 0.95 waves per SM and both units idle,
    but the source counters measure 74% of its global sectors as excess: its stores use 4.1 of 32 bytes."""
    table = roofline.read(H200 / "long_prefill.raw.csv.gz")
    a = roofline.analyze(table)
    k, row = _diagnosis(table, a, "count_and_sort_expert_tokens_kernel")
    assert k.limiter == "uncoalesced"
    source = k.finding("uncoalesced-global")
    assert source.values["excess_share"] == pytest.approx(0.74, abs=0.005)
    small = next(c for c in k.headline.claims if c.limiter == "small-grid")
    assert k.headline.support_s == pytest.approx(row["time_s"] * source.values["excess_share"])
    assert small.support_s < 0.1 * k.headline.support_s


def test_a_trace_of_waste_does_not_headline_a_bandwidth_bound_kernel():
    """The H100 saxpy (2^28 floats): 91% of DRAM throughput by Speed of Light; its stores' 16.1 sectors per
    request against 16 are 0.4% excess: "memory bandwidth", not "uncoalesced access" (the old priority)."""
    table = roofline.read(H100 / "target_saxpy.ncu.csv")
    a = roofline.analyze(table)
    k = diagnose(a, table).kernels[0]
    assert k.limiter == "memory"
    waste = next(c for c in k.headline.claims if c.limiter == "uncoalesced")
    assert waste.support_s < MATERIAL * a.frame.iloc[0]["time_s"] < k.headline.support_s


def test_the_ranking_is_a_rule_not_a_case():
    """Without the row's numbers every support is unknown and the priority decides, as before; with them
    a busy-unit claim needs its unit busy, and a generic one yields to a material claim that refines it."""
    roofline_rule, sol, coalescing = rule_by_id("roofline"), rule_by_id("speed-of-light"), rule_by_id("global-load-coalescing")
    latency = sol.finding("fired", "", limiter="latency", values={"compute_pct": 2.0, "memory_pct": 1.0})
    waste = coalescing.finding("fired", "", limiter="uncoalesced", values={"excess_share": 0.3})
    assert weigh([latency, waste], None, LIMITER_PRIORITY).limiter == "uncoalesced"  # priority alone
    row = {"time_s": 10e-6, "savable_time_s": 9e-6}
    assert weigh([latency, waste], row, LIMITER_PRIORITY).limiter == "latency"  # 9 us against 3 us
    assert weigh([latency, waste], {**row, "savable_time_s": 2e-6}, LIMITER_PRIORITY).limiter == "uncoalesced"
    # memory at 55% of its ceiling is not busy (under 60%): set aside, whatever its priority
    memory = rule_by_id("bandwidth").finding("fired", "", limiter="memory", values={"bw_use_dram": 0.55})
    head = weigh([memory, waste], row, LIMITER_PRIORITY)
    assert head.limiter == "uncoalesced" and BUSY_FROM == 0.6
    assert next(c for c in head.claims if c.limiter == "memory").set_aside.startswith("the unit it names is used 55%")
    # memory at 90%: 9 us, but 30% waste of its traffic (3 us, material) is why: coalescing first
    memory = rule_by_id("bandwidth").finding("fired", "", limiter="memory", values={"bw_use_dram": 0.9})
    assert weigh([memory, waste], row, LIMITER_PRIORITY).limiter == "uncoalesced"
    small_waste = coalescing.finding("fired", "", limiter="uncoalesced", values={"excess_share": 0.05})
    assert weigh([memory, small_waste], row, LIMITER_PRIORITY).limiter == "memory"
    # the roofline's own claim counts only where no richer rule names a limiter
    poor = roofline_rule.finding("fired", "", limiter="poor-use")
    assert weigh([poor, small_waste], row, LIMITER_PRIORITY).limiter == "uncoalesced"
    assert weigh([poor], row, LIMITER_PRIORITY).limiter == "poor-use"

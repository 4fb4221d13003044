"""Each guidance rule on both sides of each threshold, driven by real ncu rows.

The metric rows come from the B200 raw-page fixture (tests/data/ncu/b200_sdpa_flash). That
profile lacks Speed-of-Light and memory-table metrics, so the boundary cases EDIT
copies of its real rows (real waves per SM, times and names; the percentages and
sector counts set to values on either side of each threshold). Rules over the roofline
columns run on analysis rows built here (the values are stated in each test).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from guidance_data import b200_by_name, b200_table
from roofline.guidance import diagnose
from roofline.guidance import metrics as m
from roofline.guidance.diagnose import missing_message, run_rules
from roofline.guidance.rules import RULES, rule_by_id

LEVELS = ["l1", "l2", "dram"]


def _b200_row(launch: int) -> dict:
    """Real metrics of one B200 launch (0: combine kernel, 0.04 waves; 1: split-KV kernel, 0.86 waves)."""
    t = b200_table()
    row = t.metrics.iloc[launch].to_dict()
    row.update(t.frame.iloc[launch].to_dict())
    return row


def _run(rule_id: str, values: dict):
    return run_rules(values, LEVELS, [rule_by_id(rule_id)])[0]


# -- Speed of Light -----------------------------------------------------------------------
def test_b200_fixture_has_real_waves_and_no_sol_percentages():
    row = _b200_row(1)
    assert row[m.WAVES_PER_SM] == pytest.approx(0.86)
    assert m.SM_THROUGHPUT not in row and m.MEMORY_THROUGHPUT not in row


def test_sol_missing_names_the_metrics_and_section():
    f = _run("speed-of-light", _b200_row(1))
    assert f.status == "missing"
    assert set(f.missing) == {m.SM_THROUGHPUT, m.MEMORY_THROUGHPUT}
    assert "--section SpeedOfLight" in f.message


@pytest.mark.parametrize("launch,waves", [(0, 0.04), (1, 0.86)])
def test_sol_both_under_60_with_less_than_a_wave_is_small_grid(launch, waves):
    row = _b200_row(launch) | {m.SM_THROUGHPUT: 59.9, m.MEMORY_THROUGHPUT: 59.9}  # edited: SOL values added
    f = _run("speed-of-light", row)
    assert (f.status, f.limiter, f.severity) == ("fired", "small-grid", "high")
    assert f.values["waves_per_sm"] == pytest.approx(waves)


def test_sol_latency_when_a_full_wave_or_more():
    row = _b200_row(1) | {m.SM_THROUGHPUT: 59.9, m.MEMORY_THROUGHPUT: 10.0, m.WAVES_PER_SM: 1.0}  # edited
    assert _run("speed-of-light", row).limiter == "latency"
    row[m.WAVES_PER_SM] = 0.999
    assert _run("speed-of-light", row).limiter == "small-grid"


def test_sol_latency_without_waves_says_grid_unchecked():
    row = _b200_row(1) | {m.SM_THROUGHPUT: 30.0, m.MEMORY_THROUGHPUT: 20.0}
    del row[m.WAVES_PER_SM]
    f = _run("speed-of-light", row)
    assert f.limiter == "latency" and m.WAVES_PER_SM in f.message


def test_sol_60_is_not_latency():
    row = _b200_row(1) | {m.SM_THROUGHPUT: 60.0, m.MEMORY_THROUGHPUT: 50.0}  # edited; |60-50| = 10 -> heavier
    f = _run("speed-of-light", row)
    assert (f.status, f.limiter) == ("fired", "compute")
    row |= {m.SM_THROUGHPUT: 50.0, m.MEMORY_THROUGHPUT: 60.0}
    assert _run("speed-of-light", row).limiter == "memory"


def test_sol_balanced_under_10_points_apart():
    row = _b200_row(1) | {m.SM_THROUGHPUT: 70.0, m.MEMORY_THROUGHPUT: 60.01}  # edited; 9.99 points apart
    f = _run("speed-of-light", row)
    assert (f.status, f.limiter) == ("ok", None)
    assert "balanced" in f.message


@pytest.mark.parametrize("sm,mem,unit", [(80.0, 10.0, "compute"), (10.0, 80.0, "memory"), (85.0, 82.0, "compute")])
def test_sol_80_is_throughput_bound(sm, mem, unit):
    row = _b200_row(1) | {m.SM_THROUGHPUT: sm, m.MEMORY_THROUGHPUT: mem}  # edited
    f = _run("speed-of-light", row)
    assert (f.status, f.limiter, f.severity) == ("fired", unit, "medium")
    assert "Throughput-bound" in f.message


def test_sol_just_under_80_is_not_throughput_bound():
    row = _b200_row(1) | {m.SM_THROUGHPUT: 79.99, m.MEMORY_THROUGHPUT: 10.0}
    f = _run("speed-of-light", row)
    assert "Throughput-bound" not in f.message and f.limiter == "compute" and f.severity == "info"


# -- coalescing ---------------------------------------------------------------------------------
def _with_loads(sectors: float, requests: float, **extra) -> dict:
    return _b200_row(1) | {m.GLOBAL_LD_SECTORS: sectors, m.GLOBAL_LD_REQUESTS: requests} | extra  # edited


def test_coalesced_loads_at_four_sectors_per_request():
    f = _run("global-load-coalescing", _with_loads(4000.0, 1000.0))
    assert f.status == "ok"
    assert f.values["excess_sectors"] == 0.0 and f.values["sectors_per_request"] == 4.0


#: The access-size counts of a kernel whose memory instructions are all 32-bit (1000 of them).
WORDS_32 = {name: (1000.0 if size == 4 else 0.0) for size, name in m.ACCESS_SIZE_INSTRUCTIONS.items()}


def test_uncoalesced_loads_just_above_ideal_and_excess_traffic():
    f = _run("global-load-coalescing", _with_loads(4001.0, 1000.0, **WORDS_32))
    assert (f.status, f.limiter, f.severity) == ("fired", "uncoalesced", "medium")
    assert f.values["excess_sectors"] == pytest.approx(1.0)
    assert f.values["excess_bytes"] == pytest.approx(32.0)


def test_strided_loads_32_sectors_per_request_are_severe():
    # every thread in its own sector (stride >= 32 B): 32 sectors per request, 28 of them excess
    f = _run("global-load-coalescing", _with_loads(32000.0, 1000.0))
    assert (f.limiter, f.severity) == ("uncoalesced", "high")  # beyond what any word width explains
    assert f.values["excess_sectors"] == pytest.approx(28000.0)
    assert f.values["excess_share"] == pytest.approx(28 / 32)
    assert _run("global-load-coalescing", _with_loads(8000.0, 1000.0, **WORDS_32)).severity == "medium"  # 2x: not severe
    assert _run("global-load-coalescing", _with_loads(8001.0, 1000.0, **WORDS_32)).severity == "high"


@pytest.mark.parametrize("sectors", [4001.0, 8000.0, 16000.0])
def test_without_the_access_size_up_to_16_sectors_is_waste_or_width(sectors):
    """Float4 loads at unit stride take 16 sectors per request, as 32-bit loads at stride 4 do: with
    neither the access sizes nor the bytes used per sector, the rule says both, and limits nothing
    (the RTX 5070 gemm_vectorized export: 16.0 sectors per request of float4, once called 805 MB of waste)."""
    f = _run("global-load-coalescing", _with_loads(sectors, 1000.0))
    assert (f.status, f.severity, f.limiter) == ("fired", "info", None)
    assert "uncoalesced if they are 32-bit words" in f.message and m.ACCESS_SIZE_INSTRUCTIONS[16] in f.message


def test_without_the_access_size_more_than_16_sectors_is_uncoalesced():
    assert _run("global-load-coalescing", _with_loads(16100.0, 1000.0)).limiter == "uncoalesced"


def test_ideal_from_access_sizes_when_collected():
    sizes = {name: 0.0 for name in m.ACCESS_SIZE_INSTRUCTIONS.values()}
    sizes[m.ACCESS_SIZE_INSTRUCTIONS[16]] = 500.0  # 128-bit loads: 32 x 16 B = 16 sectors per request
    assert _run("global-load-coalescing", _with_loads(16000.0, 1000.0, **sizes)).status == "ok"
    assert _run("global-load-coalescing", _with_loads(16001.0, 1000.0, **sizes)).status == "fired"


def test_wide_words_with_every_fetched_byte_used_are_coalesced():
    # H100 silu (launch 0): float4 loads, 16 sectors per request, 32.0 of 32 bytes used per sector (.ratio
    # form); the access size not collected. Fully used sectors are wide words, not waste: ok.
    f = _run("global-load-coalescing", _with_loads(8_388_608.0, 524_288.0, **{m.GLOBAL_LD_BYTES_PER_SECTOR: 32.0}))
    assert f.status == "ok" and "float4" in f.message
    # 30.4 of 32 bytes (95%) is the boundary; its strided stores use 8: 16 sectors where 4 would do
    assert _run("global-load-coalescing", _with_loads(16000.0, 1000.0, **{m.GLOBAL_LD_BYTES_PER_SECTOR: 30.4})).status == "ok"
    assert _run("global-load-coalescing", _with_loads(16000.0, 1000.0, **{m.GLOBAL_LD_BYTES_PER_SECTOR: 30.3})).status == "fired"
    row = _b200_row(0) | {m.GLOBAL_ST_SECTORS: 33_551_588.0, m.GLOBAL_ST_REQUESTS: 2_097_152.0,
                          m.GLOBAL_ST_BYTES_PER_SECTOR: 8.0}
    f = _run("global-store-coalescing", row)
    assert (f.status, f.severity) == ("fired", "high")  # 16.0 > 2 x 4
    assert f.values["excess_sectors"] == pytest.approx(33_551_588 - 4 * 2_097_152)


def test_store_coalescing_reads_store_metrics():
    row = _b200_row(0) | {m.GLOBAL_ST_SECTORS: 4000.0, m.GLOBAL_ST_REQUESTS: 500.0}  # 8 per request
    f = _run("global-store-coalescing", row)
    assert f.status == "fired" and f.values["excess_sectors"] == pytest.approx(2000.0)
    assert _run("global-store-coalescing", _b200_row(0)).status == "missing"


def test_uncoalesced_source_counters_as_ncu():
    base = _b200_row(1)
    ok = _run("uncoalesced-global", base | {m.L2_THEORETICAL_SECTORS_GLOBAL: 1000.0,
                                           m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL: 1000.0})
    assert ok.status == "ok"
    f = _run("uncoalesced-global", base | {m.L2_THEORETICAL_SECTORS_GLOBAL: 1001.0,
                                          m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL: 1000.0})
    assert f.status == "fired" and f.values["excess_sectors"] == 1.0 and f.severity == "medium"
    f = _run("uncoalesced-global", base | {m.L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE: 600.0,
                                          m.L2_THEORETICAL_SECTORS_GLOBAL: 1000.0})
    assert f.severity == "high" and f.values["excess_share"] == pytest.approx(0.6)


def test_source_counters_are_asked_for_by_section_never_by_metrics():
    """Source Counters are computed by ncu from the SASS it instruments (the section file defines
    derived__memory_l2_theoretical_sectors_global_excessive): ``--metrics`` cannot collect them, and
    memory_l2_theoretical_sectors_global is an ncu metric, not an analysis column."""
    f = _run("uncoalesced-global", _b200_row(1))
    assert f.status == "missing"
    assert "collect ncu --section SourceCounters (for derived__memory_l2_theoretical_sectors_global_excessive)" in f.message
    assert "--metrics" not in f.message
    both = missing_message((m.L2_THEORETICAL_SECTORS_GLOBAL, m.GLOBAL_LD_SECTORS))
    assert both == (f"Not evaluated: collect ncu --metrics {m.GLOBAL_LD_SECTORS} (or --section MemoryWorkloadAnalysis_Tables)"
                    f" and ncu --section SourceCounters (for {m.L2_THEORETICAL_SECTORS_GLOBAL}).")
    alone = missing_message((m.L2_THEORETICAL_SECTORS_GLOBAL, m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL))
    assert "in the analysis" not in alone and alone.startswith("Not evaluated: collect ncu --section SourceCounters")

@pytest.mark.parametrize("pct,status", [(50.0, "ok"), (49.9, "fired"), (100.0, "ok"), (12.5, "fired")])
def test_bytes_per_sector(pct, status):
    f = _run("sector-use", _b200_row(1) | {m.GLOBAL_LD_BYTES_PER_SECTOR_PCT: pct})
    assert f.status == status
    assert f.values["loads_bytes_per_sector"] == pytest.approx(pct / 100 * 32)


def test_bytes_per_sector_in_the_ratio_form_of_set_full_reports():
    # H100 silu: loads 32.0 bytes of 32 used, stores 8.0 (.ratio, in bytes): the stores fire
    f = _run("sector-use", {m.GLOBAL_LD_BYTES_PER_SECTOR: 32.0, m.GLOBAL_ST_BYTES_PER_SECTOR: 8.0})
    assert (f.status, f.limiter) == ("fired", "uncoalesced")
    assert f.values == {"loads_bytes_per_sector": 32.0, "stores_bytes_per_sector": 8.0}
    # GTX 1660 Super naive GEMM loads: 26.4 of 32 (a broadcast uses 4 of its sector, a coalesced load 32)
    assert _run("sector-use", {m.GLOBAL_LD_BYTES_PER_SECTOR: 26.404371584699454}).status == "ok"


@pytest.mark.parametrize("l2,bound,status", [(49.9, "dram", "fired"), (50.0, "dram", "ok"), (10.0, "l2", "ok")])
def test_l2_hit_rate_on_dram_bound_kernels(l2, bound, status):
    f = _run("hit-rates", _b200_row(1) | {m.L2_HIT_RATE: l2, m.L1_HIT_RATE: 0.0, "bound": bound})
    assert f.status == status
    assert f.values["l1_hit_pct"] == 0.0


# -- rules over the analysis columns ------------------------------------------------------------
def _bw_row(use_dram: float) -> dict:
    # V100 DRAM ceiling 828.758 GB/s (ERT, Cori GPU): bandwidth = use x ceiling
    return {"bw_dram": use_dram * 828.758e9, "bw_use_dram": use_dram, "bw_l2": 1e12, "bw_use_l2": 0.3,
            "bw_use": max(use_dram, 0.3)}


def test_bandwidth_at_80_percent_of_ceiling():
    f = _run("bandwidth", _bw_row(0.8))
    assert (f.status, f.limiter) == ("fired", "memory") and "DRAM" in f.message
    assert _run("bandwidth", _bw_row(0.799)).status == "ok"
    assert "663 GB/s" in _run("bandwidth", _bw_row(0.8)).message


def _roof(pct: float) -> dict:
    t = 1e-3
    return {"time_s": t, "roofline_time_s": pct * t, "pct_of_roofline": pct, "savable_time_s": t - pct * t,
            "bound": "dram", "region": "memory-bound"}


@pytest.mark.parametrize("pct,severity", [(0.8, "info"), (0.79, "medium"), (0.5, "medium"), (0.49, "high")])
def test_roofline_distance(pct, severity):
    f = _run("roofline", _roof(pct))
    assert f.severity == severity and f.limiter == "memory"
    assert f.values["savable_time_s"] == pytest.approx(1e-3 * (1 - pct))


def test_roofline_poor_region_names_poor_use():
    f = _run("roofline", _roof(0.2) | {"bound": "fp32", "region": "poor"})
    assert f.limiter == "poor-use"


@pytest.mark.parametrize("share,status", [(0.5, "fired"), (0.49, "ok")])
def test_fp64_share_in_compute_bound_kernels(share, status):
    row = {"fp64_flops": share * 1e9, "flops": 1e9, "region": "compute-bound"}
    assert _run("fp64", row).status == status
    assert _run("fp64", row | {"region": "memory-bound"}).status == "ok"


@pytest.mark.parametrize("tensor,use,status", [(0.0, 0.5, "fired"), (0.0, 0.49, "ok"), (0.1e9, 0.9, "ok"),
                                               (0.099e9, 0.9, "fired")])
def test_tensor_cores(tensor, use, status):
    row = {"tensor_flops": tensor, "fp32_flops": 1e9 - tensor, "fp16_flops": 0.0, "flops": 1e9, "compute_use": use}
    assert _run("tensor-cores", row).status == status


def test_short_launches_from_the_deepcam_authors_table():
    authors = pd.read_csv(__import__("guidance_data").DEEPCAM_AUTHORS)
    cleanup = authors[authors["Kernel Name"].str.startswith("cleanup")].iloc[0]
    # real: 3 launches in 15.4 us, about 5.1 us each
    f = _run("short-kernel", {"time_s": cleanup["Time"], "launches": cleanup["Count"]})
    assert f.status == "fired" and f.values["time_per_launch_s"] == pytest.approx(5.146e-6, rel=1e-3)
    l2norm = authors[authors["Kernel Name"].str.contains("L2NormFunctor")].iloc[0]
    assert _run("short-kernel", {"time_s": l2norm["Time"], "launches": l2norm["Count"]}).status == "ok"  # 77 us


def test_short_launch_threshold_on_b200_combine_kernel():
    row = _b200_row(0)  # real: 11.9 us per launch
    assert _run("short-kernel", row).status == "ok"
    assert _run("short-kernel", row | {"time_s": 9.99e-6}).status == "fired"


def test_locality_reading_names_the_intensities():
    f = _run("locality", {"locality": "l2-reuse", "ai_l1": 0.5, "ai_l2": 0.51, "ai_dram": 4.0})
    assert "reuse in L2" in f.message and f.values["ai_dram"] == 4.0


# -- every rule degrades gracefully ------------------------------------------------------------
def test_every_rule_without_its_inputs_says_missing():
    for rule in RULES:
        f = run_rules({}, LEVELS, [rule])[0]
        assert f.status == "missing", rule.id
        assert f.missing, rule.id


def test_rules_declare_sources_and_named_thresholds():
    for rule in RULES:
        assert rule.source
        for name, th in rule.thresholds.items():
            assert math.isfinite(th.value) and th.meaning, (rule.id, name)


def test_diagnose_b200_runs_what_it_can_and_warns_about_the_rest():
    t = b200_table()
    d = diagnose(b200_by_name(t), t)
    assert len(d) == 2
    text = "\n".join(d.warnings)
    assert "speed-of-light" in text and m.SM_THROUGHPUT in text and "global-load-coalescing" in text
    combine = next(k for k in d if "combine" in k.kernel_name)
    # 8 launches of about 11.9 us: not short; waves are known but SOL is not: no SOL finding
    assert combine.finding("short-kernel").status == "ok"
    assert combine.finding("speed-of-light").status == "missing"
    assert combine.limiter is None
    assert np.isclose(d.metrics.loc[combine.index, m.WAVES_PER_SM], 0.04)


def test_uncoalesced_short_of_severe_does_not_limit_a_compute_bound_kernel():
    """AshunFeiyu/Cuda_Gemm_Practice gemm_v9.ncu-rep (RTX 3080): cuBLAS's ampere_sgemm_128x64_nn at 50%
    of its FP32 roofline, compute-bound, its loads and stores coalesced (4.9 and 4.7 sectors per
    request), and ncu's source counters 25% excess sectors (medium): it is not limited by coalescing."""
    from roofline.guidance.diagnose import pick_limiter

    roofline = rule_by_id("roofline").finding("fired", "50% of its FP32 roofline", severity="high", limiter="compute")
    source = rule_by_id("uncoalesced-global").finding("fired", "606,882 excess sectors", severity="medium",
                                                      limiter="uncoalesced")
    assert pick_limiter([roofline, source]) == "compute"
    severe = rule_by_id("uncoalesced-global").finding("fired", "85% excess", severity="high", limiter="uncoalesced")
    assert pick_limiter([roofline, severe]) == "uncoalesced"
    memory = rule_by_id("roofline").finding("fired", "at 30% of DRAM", severity="high", limiter="memory")
    assert pick_limiter([memory, source]) == "uncoalesced"  # bound by memory: coalescing first


#: AshunFeiyu/Cuda_Gemm_Practice gemm_v9.ncu-rep (RTX 3080, --set full), its own GEMM kernel: L1 sectors
#: of local loads and stores, and of global ones (the raw page's cells).
SPILLING = {m.LOCAL_LD_SECTORS: 121_395_258.0, m.LOCAL_ST_SECTORS: 73_196_960.0,
            m.GLOBAL_LD_SECTORS: 976_774.0, m.GLOBAL_ST_SECTORS: 4_096_064.0}


def test_local_memory_that_moves_most_sectors_is_named():
    """97.5% of the kernel's L1 sectors are local memory: register spills limit it, not coalescing
    (its 14 sectors per 'global' instruction were local ones)."""
    f = _run("local-memory", dict(SPILLING))
    assert (f.status, f.severity, f.limiter) == ("fired", "high", "local-memory")
    assert f.values["local_share"] == pytest.approx(194_592_218 / 199_665_056, rel=1e-12)
    from roofline.guidance.diagnose import pick_limiter

    uncoalesced = rule_by_id("global-load-coalescing").finding("fired", "14 sectors", severity="high",
                                                               limiter="uncoalesced")
    assert pick_limiter([uncoalesced, f]) == "local-memory"
    saxpy = {m.LOCAL_LD_SECTORS: 0.0, m.LOCAL_ST_SECTORS: 0.0, m.GLOBAL_LD_SECTORS: 4_194_304.0,
             m.GLOBAL_ST_SECTORS: 2_097_152.0}
    assert _run("local-memory", saxpy).status == "ok"

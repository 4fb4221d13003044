"""Guidance on profiles read by the real reader and analysed by the real analysis.

B200 flash attention (tests/data/ncu/b200_sdpa_flash): real waves per SM, no SOL or
FLOP metrics. DeepCAM V100 (bundled example): counts only. And `roofline analyze
--explain` end to end.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from guidance_data import B200, b200_table
from roofline import api
from roofline.analysis import analyze
from roofline.cli.app import main
from roofline.guidance import advise, diagnose, explain_text
from roofline.guidance import metrics as m
from roofline.machine.model import Machine
from roofline.readers import read_profile

EXAMPLE = Path(__file__).parents[1] / "src" / "roofline" / "data" / "examples" / "deepcam_v100"


def test_reader_metrics_agree_with_pandas_for_the_rules():
    table = read_profile([B200])
    ours = b200_table()
    for name in (m.WAVES_PER_SM,):
        assert np.allclose(table.metrics[name].astype(float).to_numpy(), ours.metrics[name].to_numpy())
    assert np.allclose(table.frame["time_s"].to_numpy(float), ours.frame["time_s"].to_numpy(float))


def test_b200_by_name_and_by_launch():
    table = read_profile([B200])
    for by in ("name", "launch"):
        a = analyze(table, None, by=by)
        d = diagnose(a, table)
        waves = d.metrics[m.WAVES_PER_SM].to_numpy(float)
        names = a.frame["kernel_name"].astype(str)
        assert np.allclose(waves[names.str.contains("combine").to_numpy()], 0.04)
        assert np.allclose(waves[names.str.contains("splitkv_kernel").to_numpy()], 0.86)
        assert any("speed-of-light" in w for w in d.warnings)
        # without FLOPs or a machine no roofline rule can run, and nothing is made up
        assert all(k.finding("roofline").status == "missing" for k in d)


def test_b200_metrics_frame_alone_is_reported_not_silently_dropped():
    table = read_profile([B200])
    a = analyze(table, None, by="name")
    d = diagnose(a, table.metrics)
    assert any("without their kernel table" in w for w in d.warnings)
    assert d.metrics.shape[1] == 0


def test_deepcam_real_analysis_ranking():
    profiles, machine_file = api.example_files()
    table = api.read(profiles, fp16="paper")
    a = analyze(table, Machine.load(machine_file), by="name")
    adv = advise(a, table)
    assert list(adv["savable_time_s"]) == sorted(adv["savable_time_s"], reverse=True)
    top = adv.iloc[0]
    assert "LAMBStage1Functor" in top["kernel_name"] and top["limiter"] == "memory" and top["bound"] == "dram"
    assert top["savable_time_s"] == pytest.approx(top["time_s"] * (1 - top["pct_of_roofline"]))
    text = explain_text(a, table, "L2Norm", width=160)
    assert "L2NormFunctor" in text and "Effective bandwidth" in text


def test_analyze_explain_cli(capsys):
    files = [str(p) for p in sorted(EXAMPLE.glob("out.*"))]
    assert main(["analyze", *files, "--explain", "cleanup"]) == 0
    out = capsys.readouterr().out
    assert "cleanup(float*, float*, float*, float*, bool, int)" in out and "Short launches" in out
    assert main(["analyze", *files, "--explain", "multi_tensor"]) == 0  # a pattern: every kernel it matches
    out = capsys.readouterr().out
    assert "3 kernels match 'multi_tensor'" in out and "L2NormFunctor" in out and out.count("limited by") == 3
    assert "Kernels by time" not in out  # only the diagnoses


def test_analyze_html_writes_the_full_report(tmp_path):
    files = [str(p) for p in sorted(EXAMPLE.glob("out.*"))]
    out = tmp_path / "r.html"
    assert main(["analyze", *files, "--html", str(out)]) == 0
    page = out.read_text()
    for section in ("summary", "advice", "chart", "table", "diagnoses"):
        assert f"<section id='{section}'>" in page
    assert "multi_tensor_apply_kernel&lt;LAMBStage1Functor&gt;" in page  # the label, escaped
    assert main(["analyze", *files, "--html", str(out)]) == 2  # exists: refused without --force


# -- the instruction-roofline rules on real `--set full` exports --------------------------------------
NCU = Path(__file__).parent / "data" / "ncu"


def _setfull(case: str):
    table = read_profile([next((NCU / case).glob("*.ncu-rep"))])
    return table


def test_h100_silu_strided_stores_are_uncoalesced_and_float4_loads_are_not():
    # silu_kernel_vector loads a float4 per thread (16 sectors per warp instruction, all 32 bytes of each
    # used) and stores its four results as four scalars 16 bytes apart (16 sectors each where 4 would do).
    # Nsight Compute's Source Counters, per launch: 41,943,040 sectors requested, ideal 16,777,216
    # (8,388,608 load + 2,097,152 stores x 4): 2.5x, 25,165,824 excess = 60%; x 3 launches = 75,497,472.
    # So 'strided' on the 4-byte walls is real waste here, in the stores only.
    table = _setfull("h100pcie_setfull_rep_silu_vector")
    a = analyze(table, api.load_machine("h100-pcie"))
    k = diagnose(a, table).kernels[0]
    f = k.finding("global-access-pattern")
    assert (f.status, f.severity, f.limiter) == ("fired", "medium", "uncoalesced")
    assert f.values["sectors_over_ideal"] == pytest.approx(2.5)
    assert f.values["excess_sectors"] == 3 * 25_165_824 and f.values["excess_share"] == pytest.approx(0.6)
    assert k.finding("global-load-coalescing").status == "ok"  # float4 loads: 32 of 32 bytes used per sector
    store = k.finding("global-store-coalescing")
    assert store.status == "fired" and store.values["used_bytes_per_sector"] == 8.0  # 4 B of every 16 B apart
    assert k.finding("global-broadcast").status == "ok" and k.finding("shared-bank-conflicts").status == "ok"
    assert k.limiter == "uncoalesced"


def test_h100_silu_issue_use_agrees_with_ncu():
    # 3 x 53,477,446 warp instructions in 853,600 ns = 187.95 warp GIPS; the H100 PCIe spec's
    # 114 SMs x 4 x clock, at the kernels' 1.09998 GHz: 501.6 warp GIPS -> 37.47%, which ncu measured
    # as sm__inst_executed.avg.pct_of_peak_sustained_elapsed 37.446, 37.683, 37.284 (time-weighted 37.47)
    table = _setfull("h100pcie_setfull_rep_silu_vector")
    a = analyze(table, api.load_machine("h100-pcie"))
    f = diagnose(a, table).kernels[0].finding("instruction-issue")
    t = table.frame["time_s"].to_numpy(float)
    ncu = (table.metrics[m.INST_EXECUTED_PCT].to_numpy(float) * t).sum() / t.sum() / 100
    assert f.status == "ok" and f.values["issue_use"] == pytest.approx(ncu, rel=2e-3)
    assert f.values["inst_rate"] == pytest.approx(3 * 53_477_446 / t.sum())


def test_gtx1660s_naive_gemm_broadcast_mix_is_neither_broadcast_nor_uncoalesced():
    # 2.50 sectors per global LD/ST: half the loads broadcast (1 sector), half coalesced (4). Above the
    # stride-0 boundary of 2, and ncu's ideal equals what moved (168,034,304 per launch): no finding.
    # No machine: the issue rule reads ncu's own 23.9% of the issue peak.
    table = _setfull("gtx1660s_gemm_rep")
    k = diagnose(analyze(table, None), table).kernels[0]
    b = k.finding("global-broadcast")
    assert b.status == "ok" and b.values["sectors_per_instruction"] == pytest.approx(168_034_304 / 67_174_400)
    g = k.finding("global-access-pattern")
    assert g.status == "ok" and g.values["sectors_over_ideal"] == 1.0 and g.values["excess_sectors"] == 0
    issue = k.finding("instruction-issue")
    assert issue.status == "ok" and issue.values["issue_use"] == pytest.approx(0.239, abs=1e-3)


def test_t4_matrix_addition_is_clean_on_every_pattern_rule():
    table = _setfull("t4_setfull_rep")
    k = diagnose(analyze(table, None), table).kernels[0]
    for rule in ("global-broadcast", "global-access-pattern", "shared-bank-conflicts", "instruction-issue"):
        assert k.finding(rule).status == "ok", rule
    # 375,000 sectors requested = ideal; 3.95 sectors per instruction (373,408 / 94,500)
    assert k.finding("global-access-pattern").values["sectors_per_instruction"] == pytest.approx(373_408 / 94_500)


def test_explain_shows_the_walls_and_the_pattern_finding(capsys):
    path = str(next((NCU / "h100pcie_setfull_rep_silu_vector").glob("*.ncu-rep")))
    assert main(["analyze", path, "--machine", "h100-pcie", "--work", "instructions", "--explain", "silu"]) == 0
    out = capsys.readouterr().out
    assert "16 sectors per instruction (strided)" in out
    assert "Uncoalesced global accesses (instruction roofline)" in out and "2.5x" in out
    assert "188 Ginst/s" in out and "warp GIPS   " not in out  # the rate in the analysis's work, once (no head row)
    assert main(["analyze", path, "--machine", "h100-pcie", "--explain", "silu"]) == 0
    out = capsys.readouterr().out
    # FLOP work: 3 x 53,477,446 warp instructions in 853.6 us = 187.9 warp GIPS beside the FLOP/s
    assert "warp GIPS            187.9" in out and "TFLOP/s" in out


def test_gtx1660s_dot_products_sector_use_reads_only_the_accesses_there_are():
    # dot_prod_naive stores nothing (it reduces with atomics: 32,768 RED instructions), and ncu writes
    # 0.0 bytes used per store sector for it; dot_prod stores one float per block (4,096 stores of
    # 4 B, 4 of 32 bytes used) against 2,097,152 + 4,096 sectors in all: 0.2 % of the global sectors.
    # Neither is a sector-use problem.
    table = _setfull("gtx1660s_dot_product_shared_rep")
    a = analyze(table)
    d = diagnose(a, table)
    for k in d.kernels:
        f = k.finding("sector-use")
        assert f.status == "ok", (k.kernel_name, f.text)
    naive = next(k for k in d.kernels if "naive" in k.kernel_name)
    assert "stores_bytes_per_sector" not in naive.finding("sector-use").values
    assert naive.finding("sector-use").values["loads_bytes_per_sector"] == 32.0

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

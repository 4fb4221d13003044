"""`roofline project` end to end on real profiles: the V100 PCIe FP16 GEMM program of the V100 -> A100
pair (tests/data/ncu/pairs/v100_a100_cutlass_gemm) and a GH200 .ncu-rep that names its GPU.

The cuBLAS GEMM's numbers are worked out in tests/test_projection_pair.py; here the command's
outputs must carry the same numbers as the Python API, and bad input must get one message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofline import api
from roofline.cli.app import main

DATA = Path(__file__).parent / "data" / "ncu"
V100 = DATA / "pairs" / "v100_a100_cutlass_gemm" / "v100pcie_output.csv"
GH200 = DATA / "gh200_setfull_rep_rms_norm_looping" / "rms_norm_triton_looping.ncu-rep"


def test_outputs_match_the_api(tmp_path, capsys):
    out = tmp_path / "p"
    args = [str(V100), "--from", "v100-pcie", "--to", "a100-pcie", "--target-clock", "765e6", "-q"]
    rc = main(["project", *args, "--json", str(out / "p.json"), "--html", str(out / "p.html"),
               "--png", str(out / "p.png")])
    assert rc == 0
    printed = capsys.readouterr().out
    proj = api.project(V100, "a100-pcie", source="v100-pcie", target_clock_hz=765e6)
    d = json.loads((out / "p.json").read_text())
    assert d["schema"] == "roofline.projection/1"
    assert d["totals"]["projected_time_s"] == pytest.approx(proj.totals["projected_time_s"], rel=1e-12)
    gemm = next(k for k in d["kernels"] if "s884gemm" in k["kernel_name"])
    assert gemm["projected_time_s"] == pytest.approx(0.10832, rel=2e-3)  # tests/test_projection_pair.py
    assert gemm["bound"] == "tensor_fp16" and gemm["bound_target"] == "tensor_fp16"
    assert "Tesla V100 PCIe → A100 40GB PCIe" in printed and "108 ms" in printed
    assert (out / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "p.html").read_text()
    assert "<script src=" not in page and "s884gemm" in page
    # an existing output is refused without --force, and kept
    before = (out / "p.json").read_bytes()
    assert main(["project", *args, "--json", str(out / "p.json")]) == 2
    assert "--force" in capsys.readouterr().err and (out / "p.json").read_bytes() == before


def test_json_to_stdout_and_tables_to_stderr(capsys):
    assert main(["project", str(V100), "--from", "v100-pcie", "--to", "h100-sxm", "--json", "-", "-q"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["target"]["name"] == "H100 SXM5 80GB"
    assert "program" in cap.err


def test_source_from_the_gpu_the_profile_names(capsys):
    """A GH200 --set full report onto a spec: the source ceilings come from the GH200 spec (like with like);
    with --from profile, from its peak metrics. One L2-bound kernel: the projection scales with the L2 ceiling."""
    assert main(["project", str(GH200), "--to", "h100-pcie", "--json", "-", "-q"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source"]["name"] == "GH200 Grace Hopper (96 GB HBM3)" and d["source"]["source"] == "theoretical"
    assert any("like with like" in n for n in d["notes"])
    (k,) = d["kernels"]
    assert k["bound"] == "l2" and k["bound_target"] == "l2"
    # both L2 ceilings 5120 B/clk: the GH200 at the kernel's 1.4719 GHz (its gpc__cycles_elapsed.avg.per_second,
    # 1,471,875,000; the SM rate reads 1.4769), the H100 PCIe at 1.755 GHz
    assert k["speedup"] == pytest.approx(1.755e9 / 1.471875e9, rel=1e-5)
    assert k["notes"][0]["code"] == "unknown-flops"
    assert k["low_time_s"] <= k["projected_time_s"] <= k["high_time_s"]
    assert main(["project", str(GH200), "--to", "h100-pcie", "--from", "profile", "--json", "-", "-q"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source"]["name"] == "NVIDIA GH200 480GB" and not any("like with like" in n for n in d["notes"])


@pytest.mark.parametrize("args, message", [
    ([str(V100), "--to", "h100-sxm"], "--from"),                      # names no GPU, has no peak metrics
    ([str(V100), "--from", "v100-pcie", "--to", "h1000"], "unknown GPU spec 'h1000'"),
    ([str(V100), "--from", "v100-pcie", "--to", "nope.json"], "no such machine file"),
    (["missing.csv", "--from", "v100-pcie", "--to", "h100-sxm"], "missing.csv"),
    ([str(V100), "--from", "v100-pcie"], "--to"),
    ([str(V100), "--from", "v100-pcie", "--to", "h100-sxm", "--target-clock", "10"], "--target-clock"),
])
def test_bad_input_one_message(args, message, capsys):
    rc = main(["project", *args])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert message in err and "Traceback" not in err

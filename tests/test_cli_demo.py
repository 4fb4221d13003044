"""`roofline demo`, the README's first command: the bundled DeepCAM V100 example end to end."""

from __future__ import annotations

import json

from roofline.cli.app import main


def test_demo_writes_chart_report_and_json_and_never_overwrites(tmp_path, capsys):
    assert main(["demo", "--outdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "multi_tensor_apply" in out and "What to work on" in out
    png, html, js = (tmp_path / f"roofline-demo.{ext}" for ext in ("png", "html", "json"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<script src=\"http" not in html.read_text()  # offline
    doc = json.loads(js.read_text())
    assert doc["schema"] == "roofline.analysis/1" and len(doc["kernels"]) == 5
    top = doc["kernels"][0]
    assert "LAMBStage1Functor" in top["name"] and top["launches"] == 9 and top["bound"] == "dram"
    # the authors' table: 791,465,384 FLOPs and AI(HBM) 0.50068 for this kernel (FP32 only: no FP64 counters)
    assert top["flops"]["total"] == 791465384 and abs(top["ai"]["dram"] - 0.50068489857673) < 1e-9
    assert top["flops"]["fp64"] is None  # not collected: unknown, not zero

    before = js.read_text()
    assert main(["demo", "--outdir", str(tmp_path)]) == 2  # outputs exist: refused, nothing touched
    assert "--force" in capsys.readouterr().err
    assert js.read_text() == before
    assert main(["demo", "--outdir", str(tmp_path), "--force"]) == 0

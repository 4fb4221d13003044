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
    inodes = {p: p.stat().st_ino for p in (png, html, js)}
    assert main(["demo", "--outdir", str(tmp_path)]) == 0  # a rerun replaces its own outputs
    assert all(p.stat().st_ino != inode for p, inode in inodes.items())  # written anew, not left alone
    assert js.read_text() == before

    edited = before.replace('"roofline.analysis/1"', '"mine"')
    js.write_text(edited)  # changed since demo wrote it: the user's now
    assert main(["demo", "--outdir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "roofline-demo.json" in err and "--force" in err
    assert js.read_text() == edited  # nothing touched
    assert main(["demo", "--outdir", str(tmp_path), "--force"]) == 0
    assert js.read_text() == before


def test_demo_never_replaces_a_file_it_did_not_write(tmp_path, capsys):
    """A file named as a demo output that no demo run recorded (a fresh folder, or a record that
    lists other content) is the user's: refused with its name, left as it was."""
    mine = tmp_path / "roofline-demo.png"
    mine.write_bytes(b"my own chart")
    assert main(["demo", "--outdir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "roofline-demo.png" in err and "no record" in err and "Traceback" not in err
    assert mine.read_bytes() == b"my own chart"
    assert not (tmp_path / "roofline-demo.json").exists()  # refused before writing anything

    record = tmp_path / ".roofline-demo.sha256"
    record.write_text(f"{'0' * 64}  roofline-demo.png\n")  # a record, but of other content
    assert main(["demo", "--outdir", str(tmp_path)]) == 2
    assert mine.read_bytes() == b"my own chart"
    record.write_text("my notes\n")  # not a record at all: the user's file too
    mine.unlink()
    assert main(["demo", "--outdir", str(tmp_path)]) == 2
    assert ".roofline-demo.sha256" in capsys.readouterr().err and record.read_text() == "my notes\n"

"""`roofline compare` on two real profiles: the bundled DeepCAM V100 ncu files (the
paper authors' one-metric-per-file run) against a copy EDITED here, in which the
LAMB stage-1 kernel's cycles (out.sm__cycles_elapsed.avg) are multiplied by 1.5, so
that kernel takes exactly 1.5x as long and nothing else changes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from roofline.cli.app import main

EXAMPLE = Path(__file__).parents[1] / "src" / "roofline" / "data" / "examples" / "deepcam_v100"


def _copy(dest: Path) -> Path:
    dest.mkdir()
    for p in sorted(EXAMPLE.glob("out.*")):
        shutil.copy(p, dest / p.name)
    return dest


def _slow_down(folder: Path, kernel_part: str, factor: float) -> None:
    path = folder / "out.sm__cycles_elapsed.avg"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in csv.reader(lines[start:]):
        if kernel_part in row[4]:
            row[-1] = repr(float(row[-1].replace(",", "")) * factor)
        writer.writerow(row)
    path.write_text("".join(lines[:start]) + out.getvalue(), encoding="utf-8")


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp")
    before = _copy(root / "before")
    after = _copy(root / "after")
    _slow_down(after, "LAMBStage1Functor", 1.5)
    return before, after, root


def test_compare_json_matches_the_edit(profiles, capsys):
    before, after, root = profiles
    out = root / "c.json"
    assert main(["compare", str(before), str(after), "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    lamb = next(k for k in d["kernels"] if "LAMBStage1Functor" in k["kernel_name"])
    assert lamb["time_change_pct"] == pytest.approx(50.0, rel=1e-9)
    others = [k for k in d["kernels"] if k is not lamb]
    assert len(others) == 4 and all(abs(k["time_change_pct"]) < 1e-9 for k in others)
    t = d["totals"]
    share = lamb["time_s_before"] / t["time_s_before"]
    assert t["time_change_pct"] == pytest.approx(50.0 * share, rel=1e-9)
    assert (t["matched"], t["new"], t["vanished"]) == (5, 0, 0)
    printed = capsys.readouterr().out
    assert "+50.0%" in printed and "multi_tensor_apply_kernel<LAMBStage1Functor>" in printed


def test_fail_if_slower_exit_codes(profiles):
    before, after, root = profiles
    d = json.loads((root / "c.json").read_text()) if (root / "c.json").exists() else None
    if d is None:
        assert main(["compare", str(before), str(after), "--json", str(root / "c.json")]) == 0
        d = json.loads((root / "c.json").read_text())
    pct = d["totals"]["time_change_pct"]  # about +26.7%
    assert main(["compare", str(before), str(after), "--fail-if-slower", f"{pct - 0.1:.3f}"]) == 1
    assert main(["compare", str(before), str(after), "--fail-if-slower", f"{pct + 0.1:.3f}"]) == 0
    assert main(["compare", str(after), str(before), "--fail-if-slower", "0"]) == 0  # faster: passes
    assert main(["compare", str(before), str(before), "--fail-if-slower", "0"]) == 0


def test_charts_and_refusal_to_overwrite(profiles, capsys):
    before, after, root = profiles
    png, html = root / "c.png", root / "c.html"
    assert main(["compare", str(before), str(after), "--png", str(png), "--html", str(html)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from plotly.offline import get_plotlyjs

    page = html.read_text()
    assert get_plotlyjs() in page  # inlined: works offline
    ours = page.replace(get_plotlyjs(), "")
    assert "<script src" not in ours and "cdn.plot.ly" not in ours and '"arrow"' in ours
    assert main(["compare", str(before), str(after), "--png", str(png)]) == 2
    assert "exists" in capsys.readouterr().err


def test_bad_inputs_exit_2(profiles, tmp_path, capsys):
    before, _, _ = profiles
    assert main(["compare", str(before), str(tmp_path / "nope")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", str(before), str(empty)]) == 2
    assert "holds no profiles" in capsys.readouterr().err

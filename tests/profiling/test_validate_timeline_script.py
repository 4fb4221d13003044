"""benchmarks/validate_timeline_gpu.py --dry-run: issue 35's GPU run prepared, its plumbing checked here.

In the dry run the stand-in nsys hands back three iterations of the dry-run DeepCAM kernels
(benchmarks/profile_dry_run.py's DEEPCAM_LAUNCHES). They sit inside forward, backward and optimizer push/pop
ranges, and kernel j of each iteration runs 40 us x (j + 1): 840 us an iteration, 2.52 ms in all. The stand-in
ncu hands back one iteration's ideal raw page, whose times are DEEPCAM_LAUNCHES' 40 + 10 + 40 + 40 + 20 + 5 =
155 us. Every figure below follows from those numbers. The program (examples/deepcam_mini.py) runs for real,
on the CPU.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "validate_timeline_gpu.py"


def test_the_dry_run_gives_the_figures_the_gpu_run_will(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the dry run runs examples/deepcam_mini.py (pip install torch)")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(SCRIPT), str(out), "--dry-run", "--parts", "tools,deepcam"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dry_run"] is True
    r = summary["deepcam"]
    assert r["profile"]["rc"] == 0 and r["bare"]["rc"] == 0
    assert set(r["overheads"]) == {"bare_s", "nsys_s", "nsys_x", "ncu_sample_s", "ncu_sample_x"}
    # backward (3 launches an occurrence) is the step by the rule; 3 more fall between: a phase, so an iteration
    assert r["sample"].startswith("the iteration from occurrence 2 of 3 of the NVTX range 'backward'")
    assert r["sample"].endswith("6 kernel launches after the first 8 (process 4242)")
    # a sample was counted: every launch takes its configuration's mean
    assert r["match"]["launches"] == {"exact": 0, "configuration": 18, "unmatched": 0}
    assert r["replay"]["launches"] == 18
    assert r["replay"]["time_s"] == pytest.approx(3 * 840e-6, rel=1e-12)
    assert r["replay"]["replay_time_s"] == pytest.approx(3 * 155e-6, rel=1e-12)
    assert [w["name"] for w in r["steps"]["windows"]] == ["backward #1", "backward #2", "backward #3"]
    # the fixtures: the SQLite the profile wrote, gzip'd, is the stand-in's timeline, whole
    with gzip.open(out / "fixtures" / "deepcam" / "deepcam.sqlite.gz") as fh:
        (tmp_path / "t.sqlite").write_bytes(fh.read())
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        assert db.execute('SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone() == (18, 2_520_000)
    assert "-m roofline profile --timeline" in (out / "fixtures" / "deepcam" / "COMMAND.txt").read_text()
    md = (out / "summary.md").read_text()
    assert "DRY RUN" in md and "production 2.520 ms against replay 0.465 ms over 18 launches: 5.42x" in md

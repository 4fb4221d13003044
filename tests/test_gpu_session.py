"""benchmarks/gpu_session.py: the GPU session's calls fit the device tool's limits, a step past its time
is killed with its children, what comes back is at most 8 files of allowed names, and unpacking files a
run where issue 15 wants it without ever filing a dry run as a measurement."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import sys
import tarfile
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "gpu_session.py"
#: nvidia-smi --query-gpu=...,--format=csv as an H100 SXM prints it (values as KINDS.md reports them).
H100_SMI = ("name, driver_version, compute_cap, clocks.current.sm [MHz], clocks.max.sm [MHz], clocks.current.memory "
            "[MHz], clocks.max.memory [MHz], memory.total [MiB], power.limit [W], temperature.gpu\n"
            "NVIDIA H100 80GB HBM3, 580.159.04, 9.0, 345 MHz, 1980 MHz, 2619 MHz, 2619 MHz, 81559 MiB, 700.00 W, 31")


@pytest.fixture(scope="module")
def gs():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpu_session", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_session"] = mod  # dataclasses look the module up by name
    spec.loader.exec_module(mod)
    return mod


def test_the_planned_calls_fit_a_call_and_the_session(gs) -> None:  # type: ignore[no-untyped-def]
    total = 0
    for call, steps in gs.CALLS.items():
        budget = sum(s.timeout_s for s in steps)
        assert budget + gs.CALL_MARGIN_S <= 600, call  # the device tool's 10 minutes per command
        assert 2 + len(steps) <= 8, call  # CALL.json, CALL.log and one archive per step
        if call in gs.PLANNED:
            total += budget + gs.CALL_MARGIN_S + gs.START_S  # each call may need a fresh machine
    assert total <= 15 * 60  # the session's device time (the device tool's README)
    text = gs.plan_text()
    assert "command: python3 benchmarks/gpu_session.py run session $OUT" in text
    assert f"{total} s of the session's 900 s" in text


def test_a_step_past_its_time_is_killed_with_its_children(gs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pidfile = tmp_path / "child.pid"
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\nprint('started', flush=True)\ntime.sleep(60)\n")
    t0 = time.perf_counter()
    # 6 s: time enough, on a loaded 2-core CI machine, for the step to start its child before the kill.
    rc, seconds, out = gs.run_step([sys.executable, "-c", code], 6.0, dict(os.environ))
    assert rc == 124 and seconds < 30 and time.perf_counter() - t0 < 30
    assert "started" in out and "TIMEOUT: killed after 6 s" in out
    child = int(pidfile.read_text())
    for _ in range(50):  # the grandchild (ncu's profiled program, say) is gone too
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"process {child} outlived its step")


def test_pack_leaves_out_the_largest_files_until_the_archive_comes_back(gs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "step"
    (folder / "sub").mkdir(parents=True)
    (folder / "summary.md").write_text("ok\n")
    (folder / "sub" / "report.ncu-rep").write_bytes(os.urandom(300_000))  # random bytes do not compress
    (folder / "big.csv").write_bytes(os.urandom(700_000))
    archive = tmp_path / "a.tar.gz"
    assert gs.pack(folder, archive, max_bytes=500_000) == ["big.csv"]
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["sub/report.ncu-rep", "summary.md"]
    assert gs.pack(folder, archive, max_bytes=200_000) == ["big.csv", "sub/report.ncu-rep"]
    assert gs.pack(folder, archive) == []


def _steps(gs):  # type: ignore[no-untyped-def]
    """Two steps of a 'machine' call: one writes a machine file and an example profile, one needs a GPU."""
    write = ("import json, pathlib, sys\nd = pathlib.Path(sys.argv[1])\n"
             "(d / 'machine.json').write_text(json.dumps({'schema': 'roofline.machine/1', 'name': sys.argv[2], "
             "'source': sys.argv[3], 'memory': {'dram': 3.0e12}, 'compute': {'fp32': 6.0e13}}))\n"
             "(d / 'example_saxpy.ncu.csv').write_text('\"ID\",\"Kernel Name\"\\n\"0\",\"saxpy\"\\n')\n"
             "(d / 'example_deepcam.ncu.csv').write_text('\"ID\",\"Kernel Name\"\\n' + '\"0\",\"conv\"\\n' * 40)\n"
             "(d / 'example_deepcam.ncu-rep').write_bytes(bytes(range(256)))\n"
             "(d / 'example_saxpy.kernels.json').write_text('{}')\n"
             "print('dry' if '--dry-run' in sys.argv else 'real')\n")
    return (gs.Step("machine", ("-c", write, "{dir}", "NVIDIA H100 80GB HBM3", "measured"), 60),
            gs.Step("gpu-tests", ("-c", "print('gpu')"), 60, dry_args=None))


def test_a_dry_run_comes_back_as_few_files_and_is_never_filed_as_measured(gs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "OUT"
    record = gs.run_call("machine", out, dry_run=True, steps=_steps(gs), wheels=tmp_path / "no-wheels")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["machine-gpu-tests.tar.gz", "machine-machine.tar.gz", "machine.json", "machine.log"]
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", n) for n in names)
    steps = {s["step"]: s for s in record["steps"]}
    assert steps["machine"]["rc"] == 0 and steps["machine"]["command"].endswith(" --dry-run")
    assert steps["gpu-tests"]["rc"] is None and steps["gpu-tests"]["verdict"] == "NOT RUN (dry run: needs a GPU)"
    assert json.loads((out / "machine.json").read_text())["environment"]["dry_run"] is True
    assert "dry\n" in (out / "machine.log").read_text()
    with pytest.raises(gs.UnpackError, match="holds a dry run"):
        gs.unpack(out, results=tmp_path / "results", fixtures=tmp_path / "fixtures")
    written = gs.unpack(out, results=tmp_path / "results", fixtures=tmp_path / "fixtures", dry_run=True)
    root = tmp_path / "results" / f"dry-run-{record['environment']['date_utc'][:10]}"
    assert root / "machine" / "machine.json" in written
    assert "DRY RUN: no GPU, fakes; nothing here was measured" in (root / "README-machine.md").read_text()
    assert not (tmp_path / "results" / "h100").exists() and not (tmp_path / "fixtures").exists()


def _as_if_measured(gs, out: Path, source: str = "measured", call: str = "machine") -> None:  # type: ignore[no-untyped-def]
    """A real-looking run: the record says an H100 answered nvidia-smi (the steps ran here, with no GPU)."""
    steps = _steps(gs)
    step = "machine" if call == "machine" else "profile"
    gs.run_call(call, out, steps=(gs.Step(step, (*steps[0].argv[:-1], source), 60),), wheels=out.parent / "no-wheels")
    record = json.loads((out / f"{call}.json").read_text())
    record["environment"].update(dry_run=False, nvidia_smi=H100_SMI, date_utc="2026-12-01T10:00:00Z")
    (out / f"{call}.json").write_text(json.dumps(record))


def test_unpack_files_results_machine_and_fixtures_and_never_overwrites(gs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "OUT"
    _as_if_measured(gs, out)
    results, fixtures = tmp_path / "results", tmp_path / "fixtures"
    gs.unpack(out, results=results, fixtures=fixtures)
    root = results / "h100-80gb-hbm3-2026-12-01"
    assert (root / "machine" / "machine.json").read_bytes() == (results / "h100" / "machine.json").read_bytes()
    readme = (root / "README-machine.md").read_text()
    assert "NVIDIA H100 80GB HBM3, 580.159.04, 9.0, 345 MHz, 1980 MHz" in readme and "DRY RUN" not in readme
    assert "| machine | `" in readme and " | 0 (ran) | " in readme
    # Example profiles are fixtures only from the profile call's folder.
    assert not fixtures.exists()
    with pytest.raises(gs.UnpackError, match="exists; pass --force"):
        gs.unpack(out, results=results, fixtures=fixtures)
    gs.unpack(out, results=results, fixtures=fixtures, force=True)
    _as_if_measured(gs, tmp_path / "OUT2", call="profile")
    gs.unpack(tmp_path / "OUT2", results=results, fixtures=fixtures, fixture_max_bytes=100)
    case = fixtures / "h100_80gb_hbm3_examples"
    # saxpy's CSV (35 B) as it is; deepcam's (19 + 40 x 11 = 459 B) gzip'd to under 100 B; the 256 B report and the
    # tool's own JSON stay out
    assert sorted(p.name for p in case.iterdir()) == ["PROVENANCE.md", "example_deepcam.ncu.csv.gz",
                                                      "example_saxpy.ncu.csv"]
    assert (case / "example_saxpy.ncu.csv").read_bytes() == (root / "profile" / "example_saxpy.ncu.csv").read_bytes()
    deepcam = (root / "profile" / "example_deepcam.ncu.csv").read_bytes()
    assert len(deepcam) == 459 and gzip.decompress((case / "example_deepcam.ncu.csv.gz").read_bytes()) == deepcam
    provenance = (case / "PROVENANCE.md").read_text()
    assert "# Recorded on NVIDIA H100 80GB HBM3" in provenance and "580.159.04" in provenance
    assert "Left out, over 100 B even compressed: example_deepcam.ncu-rep (256 B)" in provenance
    assert (root / "README-profile.md").exists() and (root / "README-machine.md").exists()


def test_a_machine_file_that_is_not_a_measured_h100_is_not_filed(gs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "OUT"
    _as_if_measured(gs, out, source="theoretical")
    with pytest.raises(gs.UnpackError, match="not a measured H100 or H200 machine file .*source 'theoretical'"):
        gs.unpack(out, results=tmp_path / "results", fixtures=tmp_path / "fixtures")
    assert not (tmp_path / "results" / "h100").exists()


@pytest.mark.parametrize(("name", "short", "slug"), [
    ("NVIDIA H100 80GB HBM3", "h100", "h100-80gb-hbm3"), ("NVIDIA H200", "h200", "h200"),
    ("NVIDIA GH200 480GB", "gh200", "gh200-480gb"), ("NVIDIA GeForce RTX 5090", "geforce-rtx-5090", "geforce-rtx-5090"),
])
def test_gpu_folder_names(gs, name: str, short: str, slug: str) -> None:  # type: ignore[no-untyped-def]
    assert gs.short_gpu(name) == short and gs.slug(name) == slug


def test_ncu_is_found_off_path_the_newest_first(gs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(gs.glob, "glob", lambda pattern: ["/opt/nvidia/nsight-compute/2025.3.1/ncu",
                                                          "/opt/nvidia/nsight-compute/2024.10.0/ncu"])
    assert gs.find_ncu() == "/opt/nvidia/nsight-compute/2025.3.1/ncu"
    monkeypatch.setenv("NCU", "/x/ncu")
    assert gs.find_ncu() == "/x/ncu"

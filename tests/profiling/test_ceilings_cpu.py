"""A PyTorch program profiled on the CPU with no --machine is held to this CPU's measured ceilings (issue 32).

The first run of a new user (an empty cache folder) measures the CPU for real (`roofline machine
--cpu --quick`, about 10 s on the CI's 2 cores), caches it, and draws the roofline; later runs and
`roofline analyze` of the kernel table reuse it and say where it came from. A table recorded on
another host, or by an earlier roofline that did not record the host, gets no CPU ceilings and
says why. Before this, such a profile printed "bound: unknown 100%" and no roofline.
(This file's name sorts before the other CPU profiling tests: its measurement seeds the session's
cache, so the suite measures the CPU once.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from roofline.cli.app import main
from roofline.bench.cpu.cache import cache_file
from roofline.machine.cpu_host import cpu_identity, cpu_key
from roofline.machine.model import Machine

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory, cpu_machine_cache: Path) -> dict[str, Any]:
    """`roofline profile --torch` of deepcam_mini in a process of its own, with an empty cache folder."""
    work = tmp_path_factory.mktemp("new-user")
    cache = work / "cache"
    env = {**os.environ, "ROOFLINE_CACHE_DIR": str(cache), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "roofline", "profile", "--torch", "-o", str(work / "cam"), "--json",
         str(work / "cam.json"), "--png", str(work / "cam.png"), "--",
         sys.executable, str(ROOT / "examples" / "deepcam_mini.py"), "--steps", "1", "--size", "16"],
        capture_output=True, text=True, env=env, timeout=300)
    machine_file = cache_file(cpu_key(), cache)
    seeded = cache_file(cpu_key(), cpu_machine_cache)
    if machine_file.exists() and not seeded.exists():  # the rest of the session reuses this measurement
        seeded.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(machine_file, seeded)
    return {"done": done, "work": work, "cache": cache, "machine_file": machine_file}


def test_first_run_measures_the_cpu_caches_it_and_draws_a_roofline(first_run: dict[str, Any]) -> None:
    done, work, path = first_run["done"], first_run["work"], first_run["machine_file"]
    assert done.returncode == 0, done.stderr
    assert "no measured ceilings cached for this CPU: measuring them now, once" in done.stderr
    assert f"ceilings: this CPU measured now (`roofline machine --cpu --quick`, " in done.stderr
    assert f"cached at {path} for later runs" in done.stderr
    cached = Machine.load(path)
    assert cached.source == "measured" and cached.metadata["cpu_key"] == cpu_key()
    assert "machine: none" not in done.stdout and f"machine: {cached.name} (measured)" in done.stdout
    report = json.loads((work / "cam.json").read_text())
    assert report["machine"]["compute"] == pytest.approx(dict(cached.compute))
    assert report["machine"]["memory"]["dram"] == pytest.approx(cached.memory["dram"])
    assert any(n.startswith("ceilings: this CPU measured now") for n in report["notes"])
    # Every kernel with FLOPs, bytes and a time is placed: no time of unknown bound (was 100 %).
    assert "unknown" not in report["totals"]["share_by_bound"], report["totals"]["share_by_bound"]
    assert sum(report["totals"]["share_by_bound"].values()) == pytest.approx(1.0)
    # The roofline is this CPU's: FP32 work at its DRAM intensity attains min(FP32 peak, AI x DRAM).
    conv = next(k for k in report["kernels"] if k["name"] == "aten::convolution")
    attainable = min(cached.compute["fp32"], conv["flops"]["total"] / conv["bytes"]["dram"] * cached.memory["dram"])
    assert conv["attainable"] == pytest.approx(attainable)
    assert conv["pct_of_roofline"] == pytest.approx(conv["flops"]["total"] / conv["time_s"] / attainable)
    assert (work / "cam.png").stat().st_size > 10_000


def test_the_kernel_table_records_the_host_and_cpu_it_ran_on(first_run: dict[str, Any]) -> None:
    from roofline.readers import read_profile

    table = read_profile([first_run["work"] / "cam.kernels.json"])
    assert len(table.metrics) > 100 and (table.metrics["device_type"] == "cpu").all()
    for column, value in cpu_identity().items():
        assert (table.metrics[column] == value).all(), column


def test_analyze_reuses_the_cached_machine_and_says_where_it_came_from(first_run: dict[str, Any], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import roofline.bench.cpu.measure as cpu_bench

    def no_measuring(**kwargs: Any) -> None:
        raise AssertionError("measured again")

    monkeypatch.setattr(cpu_bench, "measure_cpu", no_measuring)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(first_run["cache"]))
    out = tmp_path / "again.json"
    assert main(["analyze", str(first_run["work"] / "cam.kernels.json"), "--json", str(out)]) == 0
    path = first_run["machine_file"]
    date = Machine.load(path).metadata["date"]
    err = capsys.readouterr().err
    assert f"note: ceilings: measured CPU machine cached at {path}, measured on {date[:10]} {date[11:16]} UTC" in err
    assert f"`roofline machine --cpu -o {path} --force` to measure it again" in err
    report = json.loads(out.read_text())
    assert report["machine"]["compute"] == pytest.approx(dict(Machine.load(path).compute))
    assert "unknown" not in report["totals"]["share_by_bound"]


def _rewritten(src: Path, dst: Path, change) -> Path:  # type: ignore[no-untyped-def]
    doc = json.loads(src.read_text())
    change(doc["metrics"])
    dst.write_text(json.dumps(doc))
    return dst


def test_a_cpu_table_from_another_host_or_of_unknown_host_gets_no_cpu_ceilings(first_run: dict[str, Any],
                                                                                tmp_path: Path, capsys) -> None:
    src = first_run["work"] / "cam.kernels.json"

    def elsewhere(metrics: dict[str, Any]) -> None:
        i = metrics["columns"].index("host")
        for row in metrics["rows"]:
            row[i] = "elsewhere"

    def older(metrics: dict[str, Any]) -> None:  # written before the host was recorded
        keep = [i for i, c in enumerate(metrics["columns"]) if c not in ("host", "cpu", "cpuid")]
        metrics["columns"] = [metrics["columns"][i] for i in keep]
        metrics["rows"] = [[row[i] for i in keep] for row in metrics["rows"]]

    here = cpu_identity()
    for change, said in ((elsewhere, f"no CPU ceilings: the table ran on elsewhere ({here['cpu']}, {here['cpuid']}), "
                                     f"not on this host's CPU ({here['host']}, "),
                         (older, "no CPU ceilings: the table does not say which host's CPU it ran on")):
        table = _rewritten(src, tmp_path / f"{change.__name__}.kernels.json", change)
        out = tmp_path / f"{change.__name__}.json"
        assert main(["analyze", str(table), "--json", str(out)]) == 0
        err = capsys.readouterr().err
        assert said in err and "pass --machine" in err
        report = json.loads(out.read_text())
        assert report["machine"] is None and set(report["totals"]["share_by_bound"]) <= {"unknown"}


def test_nothing_is_measured_when_measuring_is_not_allowed(first_run: dict[str, Any], tmp_path: Path) -> None:
    """As under a launcher (torchrun, srun), whose ranks would all measure the same cores at once."""
    from roofline import api

    table = api.read(first_run["work"] / "cam.kernels.json")
    machine, said = api.cpu_machine_for(table, cache_dir=tmp_path, measure=False)
    assert machine is None and not (tmp_path / "machines").exists()
    assert said.startswith("no CPU ceilings: none measured for this CPU yet, and not measured now; ")
    assert f"`roofline machine --cpu -o {cache_file(cpu_key(), tmp_path)}`" in said


def test_gpu_profiles_are_not_cpu_work() -> None:
    from roofline import api

    table = api.read(DATA / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv")
    assert api.cpu_machine_for(table, measure=False) == (None, "")

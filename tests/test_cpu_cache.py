"""This CPU's measured machine, cached per host and CPU (roofline.bench.cpu.cache): hit, miss, a
changed CPU measured again, files that cannot be used replaced, and the sentence saying where the
ceilings came from. The measurement itself is replaced here by the machine a real quick run on the
CI's 2-core EPYC VM measured (benchmarks/results/cpu_vm_default.json); the real measurement is
exercised end to end by tests/profiling/test_ceilings_cpu.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import roofline.bench.cpu.measure as cpu_bench
from roofline.bench.cpu import cache as cpu_cache
from roofline.bench.cpu.cache import cache_file, cache_root, cached_cpu_machine
from roofline.machine.cpu_host import cpu_identity, cpu_key
from roofline.bench.evidence import Measurement
from roofline.machine.model import Machine

RECORDED = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "cpu_vm_default.json"


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``measure_cpu`` returning the recorded EPYC measurement; the modes it was asked for."""
    calls: list[str] = []
    recorded = json.loads(RECORDED.read_text())

    def measure_cpu(*, mode: str = "default", progress=None) -> Measurement:  # type: ignore[no-untyped-def]
        calls.append(mode)
        machine = Machine.from_dict(recorded["machine"])
        return Measurement(machine=machine, elapsed_s=recorded["elapsed_s"])

    monkeypatch.setattr(cpu_bench, "measure_cpu", measure_cpu)
    import roofline.bench.reliability as reliability

    monkeypatch.setattr(reliability, "load_per_core", lambda: 0.0)  # an idle machine (this one may be busy)
    return calls


def test_cache_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROOFLINE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "roofline"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "roofline"
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
    assert cache_root(tmp_path / "given") == tmp_path / "given"


def test_the_key_names_this_host_and_cpu() -> None:
    key = cpu_key()
    assert {k: key[k] for k in ("host", "cpu", "cpuid")} == cpu_identity()
    assert set(key) == {"host", "cpu", "cpuid", "cpus", "cores", "caches", "vector", "benchmark"}
    assert all(isinstance(v, str) for v in key.values())
    assert int(key["cpus"]) >= 1


def test_a_miss_measures_once_and_later_runs_reuse_the_file(tmp_path: Path, measured: list[str]) -> None:
    machine, said = cached_cpu_machine(cache_dir=tmp_path)
    path = cache_file(cpu_key(), tmp_path)
    assert measured == ["quick"] and path.exists() and path.parent == tmp_path / "machines"
    assert machine.compute["fp64"] == pytest.approx(114.771445157e9)  # the recorded run's FP64 ceiling
    assert said.startswith("ceilings: this CPU measured now (`roofline machine --cpu --quick`, ")
    assert f"cached at {path} for later runs" in said
    assert f"`roofline machine --cpu -o {path} --force` to measure it again" in said
    saved = Machine.load(path)
    assert saved.metadata["cpu_key"] == cpu_key() and saved.source == "measured"

    again, said = cached_cpu_machine(cache_dir=tmp_path)
    assert measured == ["quick"]  # not measured again
    assert again.compute == machine.compute and again.memory == machine.memory
    date = machine.metadata["date"]  # 2026-11-26T22:49:29+00:00 in the recorded run
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", date)
    assert said == (f"ceilings: measured CPU machine cached at {path}, measured on {date[:10]} {date[11:16]} UTC; "
                    f"`roofline machine --cpu -o {path} --force` to measure it again")


def test_without_measuring_a_miss_is_none(tmp_path: Path, measured: list[str]) -> None:
    assert cached_cpu_machine(cache_dir=tmp_path, measure=False) is None
    assert measured == [] and not (tmp_path / "machines").exists()
    cached_cpu_machine(cache_dir=tmp_path)
    found = cached_cpu_machine(cache_dir=tmp_path, measure=False)
    assert found is not None and measured == ["quick"]


def test_a_changed_cpu_is_measured_again_and_the_change_said(tmp_path: Path, measured: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = cache_file(cpu_key(), tmp_path)
    cached_cpu_machine(cache_dir=tmp_path)
    key = cpu_key()
    resized = {**key, "cpus": str(int(key["cpus"]) + 2), "caches": "l1 49152 B x4"}  # the VM got more CPUs
    monkeypatch.setattr(cpu_cache, "cpu_key", lambda: dict(resized))
    machine, said = cached_cpu_machine(cache_dir=tmp_path)
    second = cache_file(resized, tmp_path)
    assert measured == ["quick", "quick"] and second != first and first.exists() and second.exists()
    assert Machine.load(second).metadata["cpu_key"] == resized
    assert f"cpus {key['cpus']} -> {resized['cpus']}" in said and "the CPU changed since the machine measured on" in said
    assert f"caches {key['caches']} -> l1 49152 B x4" in said
    # Back on the first CPU: its machine is found again, not measured a third time.
    monkeypatch.setattr(cpu_cache, "cpu_key", lambda: dict(key))
    _, said = cached_cpu_machine(cache_dir=tmp_path)
    assert measured == ["quick", "quick"] and f"cached at {first}," in said


def test_an_unusable_cached_file_is_measured_again_and_replaced(tmp_path: Path, measured: list[str]) -> None:
    path = cache_file(cpu_key(), tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    _, said = cached_cpu_machine(cache_dir=tmp_path)
    assert measured == ["quick"] and "the cached file was unreadable (not JSON" in said
    assert Machine.load(path).metadata["cpu_key"] == cpu_key()
    # A machine file of another CPU put in its place (no key, or another key): measured again too.
    other = json.loads(path.read_text())
    other["metadata"]["cpu_key"] = {**cpu_key(), "cpu": "Some Other CPU"}
    path.write_text(json.dumps(other))
    _, said = cached_cpu_machine(cache_dir=tmp_path)
    assert measured == ["quick", "quick"] and "the cached file was not measured on this CPU" in said


def test_a_busy_measurement_says_so_where_it_is_used(tmp_path: Path, measured: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import roofline.bench.reliability as reliability

    monkeypatch.setattr(reliability, "load_per_core", lambda: 1.3)  # the load the recorded run saw
    _, said = cached_cpu_machine(cache_dir=tmp_path)
    assert "the load average was 1.30 per core before measuring" in said
    _, said = cached_cpu_machine(cache_dir=tmp_path)  # and every time it is reused
    assert "the load average was 1.30 per core before measuring" in said
    assert Machine.load(cache_file(cpu_key(), tmp_path)).metadata["load_per_core_before"] == 1.3

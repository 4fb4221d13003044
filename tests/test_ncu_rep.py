"""`.ncu-rep` reading: through a fake ``ncu`` on PATH (subprocess path) and a stand-in ncu_report module.

The real ncu_report package installs here, but no real report file is available, so its path is
tested with an object that implements the documented API (load_report, IRange, IAction, IMetric,
INvtxState); the CSV it would stand for is the recorded B200 export.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from roofline.errors import InputError, ToolNotFoundError
from roofline.readers import read_profile
from roofline.readers.ncu import rep as ncu_rep

DATA = Path(__file__).parent / "data" / "ncu"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"


def _fake_ncu(tmp_path: Path, csv: Path, exit_code: int = 0) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ncu"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{tmp_path}/args.txt"\n'
        f'cat "{csv}"\n'
        f"exit {exit_code}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture
def no_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import fails as if not installed


def test_cli_path_reads_the_export(tmp_path, monkeypatch, no_module):
    report = tmp_path / "run 1.ncu-rep"
    report.write_bytes(b"\x00binary report")
    monkeypatch.setenv("PATH", str(_fake_ncu(tmp_path, B200)) + os.pathsep + os.environ["PATH"])
    t = read_profile(report)
    assert (tmp_path / "args.txt").read_text().splitlines() == ["--import", str(report), "--csv", "--page", "raw"]
    assert len(t.frame) == 16
    assert t.frame["time_s"].iloc[0] == pytest.approx(11904e-9)
    assert t.sources == (str(report),)


def test_cli_failure_is_an_input_error(tmp_path, monkeypatch, no_module):
    report = tmp_path / "bad.ncu-rep"
    report.write_bytes(b"\x00")
    monkeypatch.setenv("PATH", str(_fake_ncu(tmp_path, tmp_path / "missing.csv", exit_code=1)) + os.pathsep + os.environ["PATH"])
    with pytest.raises(InputError) as err:
        read_profile(report)
    assert str(report) in str(err.value)


def test_neither_module_nor_ncu(tmp_path, monkeypatch, no_module):
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"\x00")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ToolNotFoundError) as err:
        read_profile(report)
    assert "pip install 'roofline[ncu]'" in err.value.render()
    assert str(report) in str(err.value)


# --- a stand-in for ncu_report, following NVIDIA's documented API -------------------------------

class _Metric:
    def __init__(self, value, unit):
        self._value, self._unit = value, unit

    def value(self):
        return self._value

    def unit(self):
        return self._unit


class _Domain:
    def __init__(self, ranges, start_end=()):
        self._ranges, self._start_end = ranges, start_end

    def push_pop_ranges(self):
        return tuple(self._ranges)

    def start_end_ranges(self):
        return tuple(self._start_end)


class _Nvtx:
    def __init__(self, ranges):
        self._ranges = ranges

    def domains(self):
        return (0,)

    def domain_by_id(self, i):
        if self._ranges and self._ranges[0] == "start/end":
            return _Domain([], self._ranges[1:])
        return _Domain(self._ranges)


class _Action:
    def __init__(self, name, metrics, nvtx):
        self._name, self._metrics, self._nvtx = name, metrics, nvtx

    def name(self, base=None):
        return self._name

    def metric_names(self):
        return tuple(self._metrics)

    def metric_by_name(self, n):
        return self._metrics[n]

    def nvtx_state(self):
        return _Nvtx(self._nvtx) if self._nvtx is not None else None


def _module(actions):
    rng = SimpleNamespace(num_actions=lambda: len(actions), action_by_idx=lambda i: actions[i])
    report = SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng)
    return SimpleNamespace(load_report=lambda p: report, IAction=SimpleNamespace(NameBase_DEMANGLED=1))


def _launch(time_ns, ffma, dims, unused):
    m = {
        "gpu__time_duration.sum": _Metric(time_ns, "nsecond"),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": _Metric(ffma, "inst"),
        "dram__bytes.sum": _Metric(2.5, "Mbyte"),
        "device__attribute_compute_capability_major": _Metric(9, ""),
        "device__attribute_compute_capability_minor": _Metric(0, ""),
        "launch__device_id": _Metric(1, ""),
        "launch__stream_id": _Metric(13, ""),
        "launch__func_cache_config": _Metric("CachePreferNone", ""),
    }
    for axis, v in zip("xyz", dims):
        m[f"launch__grid_dim_{axis}"] = _Metric(v, "")
        m[f"launch__block_dim_{axis}"] = _Metric(128 if axis == "x" else 1, "")
    return m


def test_module_path_maps_metrics_ids_and_nvtx(tmp_path):
    actions = [
        _Action("_Z4gemmPfS_S_", _launch(1500.0, 1000, (4, 2, 1), None), ["train_step", "forward"]),
        _Action("void relu(float*)", _launch(250.0, 0, (8, 1, 1), None), ["start/end", "backward"]),
        _Action("void init()", _launch(10.0, 0, (1, 1, 1), None), None),
    ]
    profile = ncu_rep.read_with_module(tmp_path / "x.ncu-rep", _module(actions))
    assert profile.ids["kernel_name"].tolist() == ["gemm(float*, float*, float*)", "void relu(float*)", "void init()"]
    assert profile.ids["phase"].tolist()[:2] == ["forward", "backward"]
    assert profile.ids["phase"].isna().iloc[2]
    assert profile.ids["compute_capability"].tolist() == ["9.0"] * 3
    assert profile.ids["grid"].tolist()[0] == "(4, 2, 1)" and profile.ids["block"].tolist()[0] == "(128, 1, 1)"
    assert profile.ids["device"].tolist() == [1, 1, 1] and profile.ids["stream"].tolist() == [13, 13, 13]
    assert profile.metrics["gpu__time_duration.sum"].tolist() == pytest.approx([1.5e-6, 250e-9, 10e-9])
    assert profile.metrics["dram__bytes.sum"].tolist() == pytest.approx([2.5e6] * 3)
    assert profile.metrics["launch__func_cache_config"].tolist() == ["CachePreferNone"] * 3


def test_module_load_failure_names_the_file(tmp_path):
    def boom(p):
        raise RuntimeError("unsupported report version")

    with pytest.raises(InputError) as err:
        ncu_rep.read_with_module(tmp_path / "y.ncu-rep", SimpleNamespace(load_report=boom))
    assert "unsupported report version" in str(err.value) and "y.ncu-rep" in str(err.value)

"""`roofline machine` through roofline.cli.app.main: specs, no-GPU paths, and measuring on fakes."""

from __future__ import annotations

import json
import re
import sys
import types

import pandas as pd
import pytest

from roofline.cli.app import main
from roofline.machine import Machine
from roofline.machine.specs import list_specs
from roofline.bench.evidence import Measurement


def test_list_specs_names_them_all(capsys):
    assert main(["machine", "--list-specs"]) == 0
    out = capsys.readouterr().out
    for name in list_specs():
        assert name in out
    assert "66.9 TFLOP/s" in out  # h100-sxm FP32


def test_spec_prints_and_writes_theoretical_ceilings(tmp_path, capsys):
    path = tmp_path / "h100.json"
    assert main(["machine", "--spec", "h100-sxm", "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert "989 TFLOP/s" in out and "3.35 TB/s" in out and "1.83 GHz" in out
    m = Machine.load(path)
    assert m.source == "theoretical"
    assert m.compute["fp32"] == pytest.approx(66.9e12, rel=1e-3)
    assert m.memory["dram"] == pytest.approx(3.35e12, rel=1e-3)
    # Never overwrite without --force.
    before = path.read_text()
    assert main(["machine", "--spec", "a100-80gb-sxm", "-o", str(path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert path.read_text() == before
    assert main(["machine", "--spec", "a100-80gb-sxm", "-o", str(path), "--force"]) == 0
    assert Machine.load(path).compute["tensor_fp16"] == pytest.approx(312e12, rel=1e-3)


def test_spec_prints_shared_integer_and_warp_instruction_ceilings(capsys):
    assert main(["machine", "--spec", "h100-sxm"]) == 0
    rows = {line.split("│")[1].strip(): line for line in capsys.readouterr().out.splitlines() if line.startswith("│")}
    # 128 B/clk/SM x 132 x 1.98 GHz = 33.45 TB/s; 64 x 132 x 1.98 GHz = 16.7 TOP/s; 16 x ... = 4.18 TOP/s;
    # 4 x 132 x 1.98 GHz = 1.05 T warp inst/s.
    assert "33.5 TB/s" in rows["shared"] and "16.7 TOP/s" in rows["int32"]
    assert "4.18 TOP/s" in rows["conversion"] and "4.18 TOP/s" in rows["sfu"]
    assert "1.05 Tinst/s" in rows["warp_inst"] and "1.98 GHz" in rows["warp_inst"]


def test_spec_says_once_why_blackwell_has_no_integer_rates(capsys):
    assert main(["machine", "--spec", "b200"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if line.startswith("note: ")]
    assert [n for n in notes if "stop at compute capability 9.0" in n] == [
        next(n for n in notes if n.startswith("note: int32, conversion, sfu: no sourced INT32"))]
    assert "int32" not in captured.out and "│ shared" in captured.out


def test_spec_at_another_clock(tmp_path):
    path = tmp_path / "m.json"
    assert main(["machine", "--spec", "h100-sxm", "--clock-mhz", "1755", "-o", str(path)]) == 0
    m = Machine.load(path)
    assert m.sm_clock_hz == 1.755e9
    assert m.compute["fp32"] == pytest.approx(132 * 256 * 1.755e9)


def test_bad_spec_and_bad_combinations_exit_2(capsys):
    assert main(["machine", "--spec", "gtx-480"]) == 2
    err = capsys.readouterr().err
    assert "unknown GPU spec 'gtx-480'" in err and "Traceback" not in err
    assert main(["machine", "--spec", "h100-sxm", "--gpu", "0"]) == 2
    assert main(["machine", "--quick", "--thorough", "--cpu"]) == 2


@pytest.fixture
def no_gpu(monkeypatch):
    from roofline.machine import gpu_device as gpu_info

    monkeypatch.setattr(gpu_info, "gpu_count", lambda: 0)
    monkeypatch.setattr(gpu_info, "undetected_gpu_reason", lambda: None)


def test_gpu_asked_for_without_a_gpu_says_so_in_one_line(no_gpu, capsys):
    assert main(["machine", "--gpu", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no NVIDIA GPU found" in err


def fake_cpu_measurement(metadata: dict | None = None) -> Measurement:
    machine = Machine(name="Fake Xeon", source="measured", memory={"l1": 2e12, "l2": 8e11, "dram": 1e11},
                      compute={"fp64": 1e12, "fp32": 2e12}, sm_clock_hz=3e9, spread={"dram": 0.01},
                      metadata=metadata or {})
    sweep = pd.DataFrame({"size_bytes": [2**k for k in range(12, 32)],
                          "bandwidth": [2e12] * 5 + [8e11] * 8 + [1e11] * 7, "spread": [0.01] * 20})
    return Measurement(machine=machine, sweeps={"read": sweep}, checks={"dram_vs_stream_triad": 1.02},
                       cache_sizes={"l1": 48 * 1024 * 8, "l2": 2 * 2**20 * 8}, notes=("a CPU note",),
                       elapsed_s=12.0)


@pytest.fixture
def fake_cpu_bench(monkeypatch):
    calls = []
    mod = types.ModuleType("roofline.bench.cpu.measure")
    mod.metadata = {}  # what the next fake measurement records (repeat ratios, CPU share)

    def measure_cpu(*, mode="default", progress=None):
        calls.append(mode)
        if progress:
            progress("cpu", 1.0)
        return fake_cpu_measurement(mod.metadata)

    mod.measure_cpu = measure_cpu
    monkeypatch.setitem(sys.modules, "roofline.bench.cpu.measure", mod)
    return calls


def test_plain_machine_without_gpu_measures_the_cpu_and_prints_its_checks(no_gpu, fake_cpu_bench, tmp_path, capsys):
    path = tmp_path / "cpu.json"
    assert main(["machine", "--quick", "-o", str(path)]) == 0
    assert fake_cpu_bench == ["quick"]
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    assert "Fake Xeon" in out and "dram_vs_stream_triad = 1.02" in out
    assert "note: a CPU note" in err and "a CPU note" not in out  # notes on stderr, results on stdout
    assert f"wrote {path}" in err
    assert "100 GB/s" in out and "±1.0%" in out
    assert Machine.load(path).memory["dram"] == 1e11


def test_cpu_flag_forces_the_cpu_even_with_a_gpu(monkeypatch, fake_cpu_bench, capsys):
    from roofline.machine import gpu_device as gpu_info

    monkeypatch.setattr(gpu_info, "gpu_count", lambda: 1)
    assert main(["machine", "--cpu", "--thorough"]) == 0
    assert fake_cpu_bench == ["thorough"]
    assert main(["machine", "--cpu", "--gpu", "0"]) == 2


def test_outputs_are_checked_before_measuring(no_gpu, fake_cpu_bench, tmp_path):
    existing = tmp_path / "m.json"
    existing.write_text("{}")
    assert main(["machine", "-o", str(existing)]) == 2
    assert fake_cpu_bench == []  # refused before any measuring


def _on_fake_gpu(measure_gpu, progress):  # type: ignore[no-untyped-def]
    """``measure_gpu`` on a fresh fake GPU, its warm-up timed by the fake's own clock: the same seeded
    noise on every run, however fast or loaded this machine is."""
    from fake_gpu import FakeGpu, simulated_clock

    gpu = FakeGpu()
    with simulated_clock(gpu):
        return measure_gpu(mode="quick", backend=gpu, progress=progress)


def test_gpu_measurement_table_with_theoretical_ratio(monkeypatch, tmp_path, capsys):
    from roofline.bench.gpu import measure as gpu_bench
    from roofline.machine import gpu_device as gpu_info
    real = gpu_bench.measure_gpu
    monkeypatch.setattr(gpu_info, "gpu_count", lambda: 1)
    monkeypatch.setattr(gpu_bench, "measure_gpu",
                        lambda *, device, mode, progress: _on_fake_gpu(real, progress))
    out_json, png = tmp_path / "gpu.json", tmp_path / "sweep.png"
    assert main(["machine", "--gpu", "0", "-o", str(out_json), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "measured / theoretical" in out and "dram_vs_copy" in out
    # DRAM: 3.0 TB/s measured (1 % noise) against 3.35 TB/s theoretical (H100 SXM): 89.6 %.
    dram_line = next(line for line in out.splitlines() if line.startswith("│ dram "))
    ratio = float(re.findall(r"(\d+\.\d)%", dram_line)[-1])  # the last column
    assert 87.0 < ratio < 92.0
    # Shared memory: 97 % of 128 B/clk/SM at the observed 1.755 GHz, against the spec at 1.98 GHz: 86.0 %.
    # INT32: 1.8 x 64 OP/clk/SM at 1.755 GHz against 64 at 1.98 GHz: 159.5 %.
    for key, low, high in (("shared", 84.0, 88.0), ("int32", 155.0, 164.0)):
        line = next(line for line in out.splitlines() if line.startswith(f"│ {key} "))
        assert low < float(re.findall(r"(\d+\.\d)%", line)[-1]) < high, line
    assert float(re.search(r"shared_vs_theoretical_at_observed_clock = ([\d.]+)", out).group(1)) == pytest.approx(0.97, abs=0.03)
    m = Machine.load(out_json)
    assert m.source == "measured" and m.memory["dram"] == pytest.approx(3.0e12, rel=0.03)
    assert m.memory["shared"] == pytest.approx(0.97 * 128 * 132 * 1.755e9, rel=0.03)
    assert m.compute["int32"] == pytest.approx(1.8 * 64 * 132 * 1.755e9, rel=0.03)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_ert_export(tmp_path, capsys):
    path = tmp_path / "roofline.json"
    assert main(["machine", "--spec", "v100-sxm2", "--ert-json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert "empirical" in doc
    # FLOP/s ceilings only: ERT readers take a name without a precision ('INT32 GFLOPs') for FP64.
    names = [name for name, _ in doc["empirical"]["gflops"]["data"]]
    assert names[:2] == ["FP64 GFLOPs", "FP32 GFLOPs"] and not any("INT32" in n or "WARP" in n for n in names)
    from roofline.readers import read_machine

    back = read_machine(path)
    assert back.compute["fp64"] == pytest.approx(80 * 64 * 1.53e9)  # 7.83 TFLOP/s, not the 490 GIPS warp_inst
    assert back.memory["shared"] == pytest.approx(80 * 128 * 1.53e9)


def test_a_gpu_that_cuda_cannot_use_is_not_silently_replaced_by_the_cpu(monkeypatch, fake_cpu_bench, capsys):
    from roofline.machine import gpu_device as gpu_info

    monkeypatch.setattr(gpu_info, "gpu_count", lambda: 0)
    monkeypatch.setattr(gpu_info, "undetected_gpu_reason",
                        lambda: "NVML sees 1 NVIDIA GPU(s) but CUDA through CuPy cannot use them (ImportError: x)")
    assert main(["machine"]) == 2
    assert "pass --cpu" in capsys.readouterr().err and fake_cpu_bench == []
    assert main(["machine", "--cpu"]) == 0 and fake_cpu_bench == ["default"]


def test_spec_files_and_names_feed_analyze(tmp_path):
    from roofline import api

    path = tmp_path / "v100.json"
    assert main(["machine", "--spec", "v100-sxm2", "-o", str(path)]) == 0
    from_file = api.load_machine(path)
    from_name = api.load_machine("v100-sxm2")
    assert from_file.compute == from_name.compute and from_file.memory == from_name.memory
    assert from_name.compute["fp32"] == pytest.approx(15.67e12, rel=1e-3)


@pytest.fixture
def load(monkeypatch):
    """Set the load per core `roofline machine` reads before measuring."""
    from roofline.bench import reliability

    def set_load(value):
        monkeypatch.setattr(reliability, "load_per_core", lambda: value)

    set_load(0.1)
    return set_load


def warnings_in(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_unsteady_repeats_warn_once_on_stderr_and_are_recorded(no_gpu, fake_cpu_bench, load, tmp_path, capsys):
    sys.modules["roofline.bench.cpu.measure"].metadata = {
        "repeat_ratio": {"fp64": 80.8 / 51.8, "fp32": 1.05, "l1": 1.31, "dram": 1.02}, "cpu_share": 0.97}
    path = tmp_path / "cpu.json"
    assert main(["machine", "--cpu", "--quick", "-o", str(path)]) == 0
    captured = capsys.readouterr()
    [warning] = warnings_in(captured.err)
    assert "fp64 1.56x, l1 1.31x" in warning and "fp32" not in warning and "dram" not in warning
    assert "load average" not in warning and "warning" not in captured.out
    meta = json.loads(path.read_text())["metadata"]
    assert meta["repeat_ratio"]["fp64"] == pytest.approx(1.5598, rel=1e-4)  # every ceiling's, in the JSON
    assert meta["load_per_core_before"] == 0.1 and meta["reliability_warning"] == warning.removeprefix("warning: ")


def test_steady_repeats_on_an_idle_machine_do_not_warn(no_gpu, fake_cpu_bench, load, tmp_path, capsys):
    sys.modules["roofline.bench.cpu.measure"].metadata = {"repeat_ratio": {"fp64": 1.03, "dram": 1.1},
                                                          "cpu_share": 0.99}
    path = tmp_path / "cpu.json"
    assert main(["machine", "--cpu", "-o", str(path)]) == 0
    assert warnings_in(capsys.readouterr().err) == []
    assert json.loads(path.read_text())["metadata"]["reliability_warning"] is None


def test_a_busy_machine_warns_before_the_spread_shows_and_quiet_silences_it(no_gpu, fake_cpu_bench, load, capsys):
    sys.modules["roofline.bench.cpu.measure"].metadata = {"repeat_ratio": {"fp64": 1.03}, "cpu_share": 0.5}
    load(1.4)
    assert main(["machine", "--cpu"]) == 0
    [warning] = warnings_in(capsys.readouterr().err)
    assert "load average was 1.40 per core" in warning and "on a core 50% of the time" in warning
    assert main(["machine", "--cpu", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_gpu_measurement_records_repeat_ratios_and_warns_under_load(monkeypatch, load, tmp_path, capsys):
    from roofline.bench.gpu import measure as gpu_bench
    from roofline.machine import gpu_device as gpu_info
    real = gpu_bench.measure_gpu
    monkeypatch.setattr(gpu_info, "gpu_count", lambda: 1)
    monkeypatch.setattr(gpu_bench, "measure_gpu",
                        lambda *, device, mode, progress: _on_fake_gpu(real, progress))
    path = tmp_path / "gpu.json"
    load(2.0)
    assert main(["machine", "-o", str(path)]) == 0
    [warning] = warnings_in(capsys.readouterr().err)
    assert "load average was 2.00 per core" in warning and "repeats varied" not in warning
    m = Machine.load(path)
    ratios = m.metadata["repeat_ratio"]
    assert set(ratios) == set(m.memory) | set(m.compute)  # one per ceiling
    assert all(1.0 <= r < 1.2 for r in ratios.values()), ratios  # the fake GPU's repeats vary by ~1 %


@pytest.mark.parametrize("args,expected", [
    (["--spec", "h100-sxm", "--clock-mhz", "-100"], "'--clock-mhz': -100 is not a clock between 1 and 10000 MHz"),
    (["--spec", "h100-sxm", "--clock-mhz", "0"], "0 is not a clock between 1 and 10000 MHz"),
    (["--spec", "h100-sxm", "--clock-mhz", "nan"], "'--clock-mhz': nan is not a finite number"),
    (["--spec", "h100-sxm", "--clock-mhz", "inf"], "inf is not a finite number"),
    (["--spec", "h100-sxm", "--clock-mhz", "1755000000"], "(in MHz, not Hz)"),
    (["--gpu", "-1"], "--gpu"),
])
def test_numeric_options_are_validated_in_one_line(args, expected, no_gpu, fake_cpu_bench, tmp_path, capsys):
    path = tmp_path / "m.json"
    assert main(["machine", *args, "-o", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("roofline: error:") and expected in err, err
    assert "Traceback" not in err and not path.exists() and fake_cpu_bench == []

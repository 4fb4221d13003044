"""benchmarks/validate_instruction_gpu.py without a GPU: the dry run end to end, the real path through
`roofline profile` with the fake ncu (tests/profiling/fake_ncu.py) and the fake GPU, and its CUDA source
compiled by NVRTC. Every expected count is worked out by hand below."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from test_gpu_kernels_nvrtc import nvrtc  # noqa: F401  (the NVRTC fixture)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "validate_instruction_gpu.py"
FAKE_NCU = ROOT / "tests" / "profiling" / "fake_ncu.py"

# 512 blocks x 256 threads = 4096 warps; 64 global loads per thread, 256 shared.
WARPS = 512 * 256 // 32
# Shared walls: 4096 x 256 loads after 4096 x 4 fill stores (1024 words / 256 threads), 1 wavefront each;
# with 32-way conflicts (4096 x 256 + 16,384) / (4096 x 256 x 32 + 16,384) = 1,064,960 / 33,570,816.
CONFLICT_II = 1_064_960 / 33_570_816
# roofline machine's kernels at 64 trips: 4096 warps x 64 x 16 loads x 1 wavefront = 4,194,304 (4-byte),
# 4096 x 64 x 8 x 4 = 8,388,608 (16-byte), plus fills of 4 and 8 stores per thread: 16,384 and 32,768.
LD32_WAVEFRONTS, LD128_WAVEFRONTS = 4_194_304 + 16_384, 8_388_608 + 32_768
# IntConfig: 131,072 threads x (64 x 32 x 8 + 7) = 131,072 x 16,391 = 2,148,401,152 integer instructions.
INT_OPS = 2_148_401_152


@pytest.fixture
def script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("validate_instruction_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(summary: dict) -> dict[str, dict]:
    return {r["check"].split(":")[0] if ":" in r["check"] else r["check"]: r for r in summary["checks"]}


def test_ideal_counts_by_hand(script) -> None:  # type: ignore[no-untyped-def]
    ideal = script.ideal_counts()
    assert ideal["wall_broadcast"] == {"global_ld": 262_144, "global_ld_sectors": 262_144}  # 4096 warps x 64
    assert ideal["wall_coalesced"]["global_ld_sectors"] == 4 * 262_144
    assert ideal["wall_random"]["global_ld_sectors"] == 32 * 262_144
    assert ideal["wall_shared_conflict"] == {"shared_ld": 1_048_576, "shared_ld_wavefronts": 33_554_432,
                                             "shared_st": 16_384, "shared_st_wavefronts": 16_384}
    assert ideal["shared_ld32"]["shared_ld_wavefronts"] + ideal["shared_ld32"]["shared_st_wavefronts"] == LD32_WAVEFRONTS
    assert ideal["shared_ld128"]["shared_ld_wavefronts"] + ideal["shared_ld128"]["shared_st"] == LD128_WAVEFRONTS
    assert ideal["int_mix"] == {"int_ops": INT_OPS}


def test_dry_run_end_to_end_in_a_process_of_its_own(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--dry-run"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    rows = _rows(summary)
    assert [rows[k]["verdict"] for k in ("wall_broadcast", "wall_coalesced", "wall_random", "wall_shared_free",
                                          "wall_shared_conflict", "shared_ld32", "shared_ld128", "int_mix")] == ["PASS"] * 8
    assert rows["roofline machine"]["verdict"] == "NOT RUN (dry run)"
    assert rows["wall_coalesced"]["measured"] == 0.25 and rows["wall_coalesced"]["pattern"] == "unit-stride"
    assert rows["wall_random"]["measured"] == 1 / 32 and rows["wall_random"]["pattern"] == "random"
    assert rows["wall_broadcast"]["pattern"] == "stride-0" and rows["wall_shared_free"]["pattern"] == "conflict-free"
    assert rows["wall_shared_conflict"]["measured"] == pytest.approx(CONFLICT_II, rel=1e-12)
    assert rows["wall_shared_conflict"]["pattern"] == "32-way conflicts"
    assert rows["shared_ld32"]["measured"] == LD32_WAVEFRONTS and rows["int_mix"]["measured"] == INT_OPS
    assert "| wall_random: global_ii | 0.03125 | 0.03125 | 1 | random | PASS |" in proc.stdout
    assert (out / "summary.md").read_text() in proc.stdout and (out / "instr.ideal.csv").exists()


@pytest.fixture
def fake_ncu_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "ncu"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_NCU} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "argv.json"
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(log))
    return log


def test_through_roofline_profile_with_the_fake_ncu_and_gpu(script, tmp_path: Path, fake_ncu_on_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_gpu import FakeGpu, simulated_clock

    from roofline.bench.gpu.measure import measure_gpu

    # The recorded report: a perfect GPU's, but the random gather touches 16 sectors per load (strided).
    report = script.ideal_report(tmp_path / "ideal.csv")
    lines = list(csv.reader(report.read_text().splitlines()))
    col = lines[0].index("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    row = next(r for r in lines if r[4] == "wall_random")
    row[col] = str(16 * 262_144)
    report.write_text("\n".join(",".join(f'"{v}"' for v in r) for r in lines) + "\n")
    monkeypatch.setenv("FAKE_NCU_RECORDED", str(report))
    def run_machine(mode: str):  # type: ignore[no-untyped-def]
        gpu = FakeGpu()
        with simulated_clock(gpu):  # the same noise draws on every run (the warm-up is timed)
            return measure_gpu(mode="quick", backend=gpu)

    monkeypatch.setattr(script, "run_machine", run_machine)
    out = tmp_path / "out"
    assert script.main([str(out), "--arch", "9.0", "--no-launch"]) == 0
    argv = json.loads(fake_ncu_on_path.read_text())
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert argv[argv.index("--kernel-name") + 1] == "regex:^(wall_|shared_ld|int_mix)"
    assert argv[-3:] == [str(SCRIPT), "target", "--no-launch"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["profile"]["rc"] == 0
    rows = _rows(summary)
    assert rows["wall_random"]["measured"] == 1 / 16 and rows["wall_random"]["ratio"] == 2.0
    assert rows["wall_random"]["verdict"] == "FAIL" and rows["wall_random"]["pattern"] == "strided"
    assert rows["wall_coalesced"]["verdict"] == "PASS" and rows["shared_ld128"]["measured"] == LD128_WAVEFRONTS
    # The fake GPU: shared memory at 97 % of 128 B/clk/SM at its clock, INT32 at 1.8 x the guide's 64/clk/SM.
    shared = next(r for r in summary["checks"] if r["check"].startswith("shared memory vs"))
    assert shared["ratio"] == pytest.approx(0.97, rel=0.03) and shared["verdict"] == "PASS"
    assert shared["measured"] == pytest.approx(0.97 * 128 * 132 * 1.755e9, rel=0.03)
    int32 = next(r for r in summary["checks"] if r["check"].startswith("INT32"))
    assert int32["ratio"] == pytest.approx(1.8, rel=0.03) and int32["verdict"] == "PASS"
    assert summary["machine"]["shared_wavefronts_per_s"] == pytest.approx(shared["measured"] / 128)
    # Seven files, so that a device run can bring them back with its log (eight at most).
    assert sorted(f.name for f in out.iterdir()) == sorted([
        "instr.ncu-rep", "instr.ncu.csv", "instr.kernels.json", "profile.log", "machine.json", "summary.json",
        "summary.md"])
    assert "| wall_random: global_ii | 0.0625 | 0.03125 | 2 | strided | FAIL |" in (out / "summary.md").read_text()


def test_a_profile_that_fails_is_recorded_not_raised(script, tmp_path: Path, fake_ncu_on_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NCU_MODE", "perm1")
    monkeypatch.setenv("FAKE_NCU_RECORDED", str(tmp_path / "none.csv"))
    out = tmp_path / "out"
    assert script.main([str(out), "--arch", "9.0", "--no-launch", "--parts", "walls"]) == 0
    [row] = json.loads((out / "summary.json").read_text())["checks"]
    assert row["verdict"].startswith("NOT RUN (rc ") and (out / "profile.log").exists()


def test_unknown_part_is_a_usage_error(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as err:
        script.main([str(tmp_path / "out"), "--parts", "nonsense"])
    assert err.value.code == 2


@pytest.mark.parametrize("sm", [75, 80, 90])  # CI's NVRTC 13 has no sm_70: a skip there fails the run
def test_wall_kernels_compile_with_the_loads_their_walls_assume(nvrtc, script, sm) -> None:  # noqa: F811
    if sm not in nvrtc.supported:
        pytest.skip(f"this NVRTC cannot target sm_{sm}")
    ptx = nvrtc(script.WALL_SOURCE, f"compute_{sm}")
    kernels = dict(re.findall(r"\.entry (\w+)\((.*?)\n}\n", ptx, re.S))
    assert set(kernels) == set(script.WALLS)
    for name in ("wall_broadcast", "wall_coalesced", "wall_random"):
        # scalar 4-byte loads only (the loop may be unrolled, never vectorized: a v2 / v4 load would move the walls)
        assert set(re.findall(r"ld\.global\.(?:nc\.)?(\w+)", kernels[name])) == {"f32"}, name
        assert not re.search(r"ld\.shared|st\.shared", kernels[name])
    for name in ("wall_shared_free", "wall_shared_conflict"):  # scalar 4-byte shared loads, after the fill
        assert set(re.findall(r"ld\.volatile\.shared\.(\w+)", kernels[name])) == {"f32"}, name
        assert set(re.findall(r"st\.shared\.(\w+)", kernels[name])) == {"f32"}
        assert not re.search(r"ld\.global", kernels[name])

"""`roofline profile --timeline`: the program under nsys, a sample under ncu, the two joined.

The stand-ins (tests/profiling/fake_nsys.py, fake_ncu.py) run the program for real and hand back: ncu, our
real H100 run of examples/saxpy.py (tests/data/ncu/h100_80gb_hbm3_examples/example_saxpy.ncu.csv: 2 fill
launches, 3 saxpy launches, PROVENANCE.md there); nsys, a timeline of the same five launches written in
the tables of a real nsys 2026.2 export (tests/nsys_build.py), each saxpy launch inside an NVTX range
``saxpy``, the names as nsys 2026 prints them (``(int)4``, ``at::native::``), not as ncu does.
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_build import Launch, write_timeline  # noqa: E402

HERE = Path(__file__).resolve().parent
SAXPY = HERE.parent / "data" / "ncu" / "h100_80gb_hbm3_examples" / "example_saxpy.ncu.csv"
FILL = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
        "std::array<char *, (unsigned long)1>>(int, T2, T3)")
ADD = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
       "std::array<char *, (unsigned long)3>>(int, T2, T3)")
#: The production times of the five launches in the timeline (ns): not ncu's replay times.
DURATIONS = [70_000, 71_000, 200_000, 201_000, 202_000]
#: dram__bytes.sum of the recorded run's five launches, in launch order (the CSV's cells, in bytes).
DRAM = [246154240.0, 245980160.0, 785493248.0, 785384960.0, 785633792.0]


def _timeline(path: Path) -> Path:
    launches, ranges = [], []
    for i, (name, ns) in enumerate(zip([FILL, FILL, ADD, ADD, ADD], DURATIONS)):
        call = 1_000_000 + i * 1_000_000
        launches.append(Launch(name, (65536, 1, 1), (128, 1, 1), call, call + 10_000, call + 10_000 + ns))
        if name == ADD:
            ranges.append((call - 500, call + 2_000, 4242, "saxpy"))
    return write_timeline(path, launches, ranges)


@pytest.fixture
def tools(tmp_path: Path, fake_ncu: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The fake nsys beside the fake ncu on PATH, handing back the saxpy timeline and run."""
    bindir = tmp_path / "bin"
    exe = bindir / "nsys"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_nsys.py'} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(_timeline(tmp_path / "saxpy-timeline.sqlite")))
    monkeypatch.setenv("FAKE_NSYS_ARGV_LOG", str(tmp_path / "nsys-argv.json"))
    monkeypatch.setenv("FAKE_NCU_RECORDED", str(SAXPY))
    monkeypatch.setenv("FAKE_NCU_KERNELS", "5")
    return {"ncu": fake_ncu, "nsys": tmp_path / "nsys-argv.json"}


def _settings(tmp_path: Path, prefix: str = "run", **kw) -> api.ProfileSettings:
    return api.ProfileSettings(command=(sys.executable, "-c", "pass"), output=tmp_path / prefix, arch="9.0",
                               timeline=True, **kw)


def test_the_second_step_is_counted_and_every_launch_keeps_its_production_time(tmp_path, tools):
    outcome = api.profile(_settings(tmp_path))
    assert outcome.exit_code == 0 and outcome.mode == "timeline"
    ncu = json.loads(tools["ncu"].read_text())
    # the second of three 'saxpy' ranges: after the 2 fills and the first saxpy, one launch
    assert ncu[ncu.index("--launch-skip") + 1] == "3" and ncu[ncu.index("--launch-count") + 1] == "1"
    nsys = json.loads(tools["nsys"].read_text())
    assert nsys[:3] == ["profile", "--trace", "cuda,nvtx"] and nsys[-3:] == [sys.executable, "-c", "pass"]
    f = outcome.table.frame
    assert len(f) == 5
    assert np.round(f["time_s"].to_numpy() * 1e9).tolist() == DURATIONS
    assert f["dram_bytes"].tolist() == DRAM  # each launch its own counts, by name form, grid, block and order
    assert (outcome.table.metrics["match"] == "exact").all()
    assert f["phase"].astype(str).tolist()[2:] == ["saxpy"] * 3
    assert any(n.startswith("wall time: the bare program ") and "under nsys" in n and "under ncu (the sample)" in n
               for n in outcome.notes)
    assert "counted occurrence 2 of 3 of the NVTX range 'saxpy': 1 kernel launch after the first 3 (process 4242)" \
        in outcome.notes
    written = {p.name for p in outcome.files}
    assert {"run.nsys-rep", "run.sqlite", "run.ncu-rep", "run.ncu.csv", "run.kernels.json"} <= written
    back = api.read(tmp_path / "run.kernels.json")  # the joined table, as written
    assert back.frame["dram_bytes"].tolist() == DRAM and np.round(back.frame["time_s"].to_numpy() * 1e9).tolist() == DURATIONS


@pytest.mark.parametrize("sample, skip, count", [("saxpy:3", "4", "1"), ("saxpy:1", "2", "1"), ("all", None, None)])
def test_the_sample_can_be_named(tmp_path, tools, sample, skip, count):
    outcome = api.profile(_settings(tmp_path, sample=sample))
    ncu = json.loads(tools["ncu"].read_text())
    assert (ncu[ncu.index("--launch-skip") + 1] if "--launch-skip" in ncu else None) == skip
    assert (ncu[ncu.index("--launch-count") + 1] if "--launch-count" in ncu else None) == count
    assert outcome.table.frame["dram_bytes"].tolist() == DRAM


def test_a_sample_that_is_not_there_is_refused_with_the_count(tmp_path, tools):
    with pytest.raises(InputError, match=r"occurs 3 time\(s\), not 4"):
        api.profile(_settings(tmp_path, sample="saxpy:4"))
    with pytest.raises(InputError, match="no NVTX range 'train_step'"):
        api.profile(_settings(tmp_path, "again", sample="train_step"))


def test_an_nsys_that_writes_no_report_is_one_clear_error(tmp_path, tools, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_NSYS_MODE", "noreport")
    rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(tmp_path / "run"), "--", sys.executable, "-c", "pass"])
    err = capsys.readouterr().err
    assert rc == 2 and "nsys wrote no report" in err and "importer binary" in err and "Traceback" not in err


def test_the_cli_analyzes_the_joined_launches(tmp_path, tools, capsys):
    out = tmp_path / "a.json"
    rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(tmp_path / "run"), "--json", str(out), "-m",
               "h100-sxm", "--", sys.executable, "-c", "pass"])
    assert rc == 0, capsys.readouterr().err
    d = json.loads(out.read_text())
    assert d["totals"]["time_s"] == pytest.approx(sum(DURATIONS) * 1e-9, rel=1e-12)
    # as `roofline analyze` gives them for the same files: production against replay, and where the time went
    replay = d["replay"]  # the recorded run's gpu__time_duration.sum cells (us), each launch matched exactly
    assert replay["launches"] == 5 and replay["time_s"] == pytest.approx(sum(DURATIONS) * 1e-9, rel=1e-12)
    assert replay["replay_time_s"] == pytest.approx((82.336 + 81.152 + 259.040 + 258.336 + 259.232) * 1e-6, rel=1e-12)
    (window,) = d["breakdown"]["windows"]  # the whole run on device 0: first kernel start to last kernel end
    assert window["name"] == "run" and window["end_ns"] - window["start_ns"] == 5_000_000 + 10_000 + 202_000 - 1_010_000
    assert sum(window["kernel_s"].values()) == pytest.approx(sum(DURATIONS) * 1e-9, rel=1e-12)


def test_settings_that_contradict_are_refused(tmp_path):
    with pytest.raises(InputError, match="cannot be run with --no-counters"):
        _settings(tmp_path, counters=False)
    with pytest.raises(InputError, match="both choose the launches"):
        _settings(tmp_path, sample="step", launch_skip=3)
    with pytest.raises(InputError, match="add --timeline"):
        api.ProfileSettings(command=("x",), sample="step")


@pytest.mark.skipif(shutil.which("nsys") is None, reason="needs Nsight Systems' nsys (bash .ci/install-nsys)")
def test_the_real_nsys_on_a_program_without_kernels_says_why(tmp_path, fake_ncu, capsys):
    """The real nsys (Debian's 2023.4.4, target package: it leaves its capture unimported): with a real
    QdstrmImporter on PATH (CI: NSYS_HOST_PREFIX in .ci/run) the capture becomes a report and its export,
    which has no CUDA kernel; without one, the capture is kept and the error names it. Either way one line
    saying why, exit 2, no traceback."""
    rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(tmp_path / "run"), "--", sys.executable, "-c", "pass"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    made = {p.name for p in tmp_path.iterdir() if p.name.startswith("run.")}
    if (tmp_path / "run.nsys-rep").is_file():  # imported by nsys itself or, from its capture, by us
        assert f"{tmp_path / 'run.sqlite'}: an Nsight Systems export with no CUDA kernels" in err, err
        assert made == {"run.nsys-rep", "run.sqlite"}  # a capture we imported is removed, as nsys does
    else:
        assert shutil.which("QdstrmImporter") is None, err  # with one on PATH the capture must have been imported
        assert f"{tmp_path / 'run.qdstrm'}: a capture that nsys did not import, and no QdstrmImporter" in err, err
        assert made == {"run.qdstrm"}  # kept, to import by hand


def test_under_a_launcher_each_rank_writes_its_own_files(tmp_path, tools, monkeypatch, capsys):
    """As for ncu profiles: rank 3 of a job (SLURM_PROCID) writes run.rank3.* and its JSON report.rank3.json,
    and its joined table is the same run's; a second rank beside it overwrites nothing of the first's."""
    out = tmp_path / "job"
    out.mkdir()
    for rank in ("3", "4"):
        monkeypatch.setenv("SLURM_PROCID", rank)
        rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(out / "run"), "--json", str(out / "report.json"),
                   "-q", "--", sys.executable, "-c", "pass"])
        assert rc == 0, capsys.readouterr().err
    for rank in ("3", "4"):
        names = {f"run.rank{rank}.{s}" for s in ("nsys-rep", "sqlite", "ncu-rep", "ncu.csv", "kernels.json")}
        assert names <= {p.name for p in out.iterdir()} and (out / f"report.rank{rank}.json").is_file()
        back = api.read(out / f"run.rank{rank}.kernels.json")
        assert np.round(back.frame["time_s"].to_numpy() * 1e9).tolist() == DURATIONS
    assert not (out / "run.nsys-rep").exists() and not (out / "report.json").exists()

"""`roofline profile --timeline` with a target-only nsys, which leaves its capture (PREFIX.qdstrm) unimported:
a QdstrmImporter makes the report, nsys exports it, the run is joined (roofline.profiling.timeline_run).

Stand-ins: tests/profiling/fake_nsys.py in capture mode (runs the program, writes PREFIX.qdstrm, prints the real
target-only nsys 2023.4's complaint, exits 0; its export mode hands back the saxpy timeline of
test_timeline_profile.py), fake_ncu.py, and shell-script importers (tests/test_nsys_capture.py's). The real
tools are run on a capture in tests/test_nsys_capture.py and test_timeline_profile.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import InputError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from test_nsys_capture import _exe, _importer  # noqa: E402
from test_timeline_profile import DURATIONS, SAXPY, _timeline  # noqa: E402


@pytest.fixture
def target_only(tmp_path, fake_ncu, monkeypatch):
    """The stand-in nsys in capture mode beside the stand-in ncu (both in tmp_path/bin)."""
    _exe(tmp_path / "bin" / "nsys", f'exec {sys.executable} {HERE / "fake_nsys.py"} "$@"\n')
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(_timeline(tmp_path / "saxpy-timeline.sqlite")))
    monkeypatch.setenv("FAKE_NSYS_MODE", "capture")
    monkeypatch.setenv("FAKE_NCU_RECORDED", str(SAXPY))
    monkeypatch.setenv("FAKE_NCU_KERNELS", "5")
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


def _profile(tmp_path, **kw):
    return api.profile(api.ProfileSettings(command=(sys.executable, "-c", "pass"), output=tmp_path / "out" / "run",
                                           arch="9.0", timeline=True, **kw))


def test_the_capture_is_imported_beside_nsys_and_the_run_joined(tmp_path, target_only):
    own = _importer(tmp_path / "host-linux-x64" / "QdstrmImporter")  # beside nsys's folder (tmp_path/bin)
    outcome = _profile(tmp_path)
    assert outcome.exit_code == 0 and len(outcome.table.frame) == 5
    assert [round(t * 1e9) for t in outcome.table.frame["time_s"]] == DURATIONS
    assert f"nsys left its capture unimported (a target-only nsys): {own} imported it" in outcome.notes
    out = tmp_path / "out"
    assert (out / "run.nsys-rep").read_text() == "report of fake nsys capture\n"
    assert not (out / "run.qdstrm").exists()  # removed once imported and exported, as nsys does
    assert {"run.nsys-rep", "run.sqlite", "run.kernels.json"} <= {p.name for p in out.iterdir()}


def test_a_named_importer_is_the_one_used_and_a_failure_keeps_the_capture(tmp_path, target_only, capsys):
    _importer(tmp_path / "host-linux-x64" / "QdstrmImporter")  # would work, but another is named
    bad = _importer(tmp_path / "named" / "QdstrmImporter", fail="error while loading shared libraries: libssh.so")
    rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(tmp_path / "out" / "run"), "--qdstrm-importer",
               str(bad), "--", sys.executable, "-c", "pass"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"{tmp_path / 'out' / 'run.qdstrm'}: 1 importer failed on the capture: {bad} (exit 127): error while " \
           "loading shared libraries: libssh.so" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run.qdstrm"]


def test_an_earlier_capture_is_not_overwritten_without_force(tmp_path, target_only, capsys):
    (tmp_path / "out" / "run.qdstrm").write_bytes(b"an earlier capture\n")
    rc = main(["profile", "--timeline", "--arch", "9.0", "-o", str(tmp_path / "out" / "run"), "--", sys.executable,
               "-c", "pass"])
    assert rc == 2 and "run.qdstrm" in capsys.readouterr().err
    assert (tmp_path / "out" / "run.qdstrm").read_bytes() == b"an earlier capture\n"


def test_an_importer_without_timeline_is_refused():
    with pytest.raises(InputError, match="add --timeline"):
        api.ProfileSettings(command=("x",), importer="QdstrmImporter")


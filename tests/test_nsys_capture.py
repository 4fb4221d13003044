"""A target-only nsys's capture (.qdstrm) imported by a QdstrmImporter: roofline.readers.nsys.capture.

The real tools: Debian's Nsight Systems 2023.4.4, its target package's nsys (which leaves its capture
unimported, as the nsys of a cluster's compute node or the one inside Nsight Compute does) and its host
package's QdstrmImporter, on PATH apart from nsys (.ci/run: NSYS_HOST_PREFIX). The program they record
sleeps three times for 20 ms: the export must hold those three clock_nanosleep calls, each at least 20 ms.
Stand-in importers (shell scripts) check the order of the search and what happens when one fails.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.cli.app import main
from roofline.errors import InputError, ToolNotFoundError
from roofline.readers.dispatch import profile_files
from roofline.readers.nsys import capture
from roofline.readers.nsys.timeline import export_sqlite

SLEEPS = "import time\nfor _ in range(3):\n    time.sleep(0.02)\n"


def _exe(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _importer(path: Path, *, version: str = "2023.4.4.54", fail: str | None = None) -> Path:
    """A stand-in QdstrmImporter: prints ``version``; imports by appending to its input (as the real one writes
    into the capture) and writing the report, or prints a progress bar and ``fail`` and exits 127."""
    body = (f'if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems {version}-0v0"; exit 0; fi\n'
            'while [ $# -gt 0 ]; do case "$1" in --input-file) in="$2"; shift;; --output-file) out="$2"; shift;; '
            'esac; shift; done\n')
    if fail is not None:
        body += f'printf "Processing [0%%   ]\\rProcessing [==50%% ]\\n" ; echo "{path}: {fail}" >&2; exit 127\n'
    else:
        body += ('first=$(head -c 40 "$in"); echo touched >> "$in"; echo "report of $first" > "$out"; '
                 'echo "Saved report file to $out"\n')
    return _exe(path, body)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- which importers, in which order ------------------------------------------------------------------------


def test_importers_beside_nsys_then_nsight_computes_then_on_path(tmp_path, monkeypatch):
    nsys = _exe(tmp_path / "nsys-2025" / "target-linux-x64" / "nsys", "exit 0\n")
    own = _importer(tmp_path / "nsys-2025" / "host-linux-x64" / "QdstrmImporter")
    other = _importer(tmp_path / "nsys-2025" / "a-folder" / "QdstrmImporter")
    ncu = _exe(tmp_path / "ncu-2025" / "ncu", "exit 0\n")
    ncus = _importer(tmp_path / "ncu-2025" / "host" / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "QdstrmImporter").symlink_to(own)  # the same file again: tried once
    (bindir / "ncu").symlink_to(ncu)  # ncu on PATH is a link: its installation is where the link points
    alone = _importer(tmp_path / "elsewhere" / "QdstrmImporter")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{alone.parent}")
    found = capture.importers(str(nsys), "ncu")
    assert found == [own, other, ncus]
    monkeypatch.setenv("PATH", f"{alone.parent}{os.pathsep}{bindir}")
    assert capture.importers(str(nsys), "ncu") == [own, other, ncus, alone]
    assert capture.importers(None, None) == [alone]
    assert capture.importers(str(nsys), "ncu", given=ncus) == [ncus]  # named: that one alone


def test_a_named_importer_that_is_not_there_is_refused(tmp_path):
    with pytest.raises(ToolNotFoundError, match="the importer .*nope was not found"):
        capture.importers(None, None, given=tmp_path / "nope")


def test_the_importer_of_nsys_own_version_is_tried_first(tmp_path):
    nsys = _exe(tmp_path / "t" / "nsys", 'echo "NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0"\n')
    old = _importer(tmp_path / "a" / "QdstrmImporter", version="2024.1.1.59")
    same = _importer(tmp_path / "b" / "QdstrmImporter", version="2025.3.1.90")
    broken = _exe(tmp_path / "c" / "QdstrmImporter", "echo 'error while loading shared libraries' >&2; exit 127\n")
    assert capture.version_of(nsys) == "2025.3.1.90"
    assert capture.version_of(broken) is None
    assert capture.ordered([old, broken, same], capture.version_of(nsys)) == [same, old, broken]
    assert capture.ordered([old, broken], None) == [old, broken]


# -- importing -----------------------------------------------------------------------------------------------


def test_a_failing_importer_is_passed_over_for_the_next(tmp_path):
    cap = tmp_path / "run.qdstrm"
    cap.write_bytes(b"capture\n")
    bad = _importer(tmp_path / "ncu" / "QdstrmImporter", fail="error while loading shared libraries: libssh.so: "
                    "cannot open shared object file: No such file or directory")
    good = _importer(tmp_path / "nsys" / "QdstrmImporter")
    assert capture.import_capture(cap, tmp_path / "run.nsys-rep", [bad, good]) == good
    assert (tmp_path / "run.nsys-rep").read_text() == "report of capture\n"


def test_when_every_importer_fails_the_error_names_each_with_its_reason(tmp_path):
    cap = tmp_path / "run.qdstrm"
    cap.write_bytes(b"capture\n")
    one = _importer(tmp_path / "one" / "QdstrmImporter", fail="error while loading shared libraries: libssh.so")
    two = _importer(tmp_path / "two" / "QdstrmImporter", fail="Import Failed with unexpected exception")
    with pytest.raises(InputError) as caught:
        capture.import_capture(cap, tmp_path / "run.nsys-rep", [one, two], source=tmp_path / "mine.qdstrm")
    err = caught.value
    assert err.path == tmp_path / "mine.qdstrm"
    assert err.message == (f"2 importers failed on the capture: {one} (exit 127): error while loading shared "
                           f"libraries: libssh.so; {two} (exit 127): Import Failed with unexpected exception")
    assert "QdstrmImporter -i" in err.hint
    with pytest.raises(ToolNotFoundError, match="no QdstrmImporter was found"):
        capture.import_capture(cap, tmp_path / "run.nsys-rep", [])


def test_a_users_capture_is_imported_from_a_copy(tmp_path):
    """The importer writes into the capture it reads: the user's file must stay as it was."""
    cap = tmp_path / "mine" / "run.qdstrm"
    cap.parent.mkdir()
    cap.write_bytes(b"the user's capture\n")
    before = _sha(cap)
    work = tmp_path / "work"
    work.mkdir()
    report = capture.import_copy(cap, work, [_importer(tmp_path / "i" / "QdstrmImporter")])
    assert report == work / "run.nsys-rep" and report.read_text() == "report of the user's capture\n"
    assert _sha(cap) == before and sorted(p.name for p in work.iterdir()) == ["run.nsys-rep"]
    assert sorted(p.name for p in cap.parent.iterdir()) == ["run.qdstrm"]


def test_a_folder_reads_a_capture_only_when_its_report_is_not_beside_it(tmp_path):
    for name in ("a.qdstrm", "a.nsys-rep", "b.qdstrm"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.name for p in profile_files(tmp_path)] == ["a.nsys-rep", "b.qdstrm"]


# -- the real nsys and QdstrmImporter --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_capture(tmp_path_factory) -> Path:
    """A real capture of the three sleeps by the real target-only nsys (OS runtime calls traced)."""
    if shutil.which("nsys") is None or shutil.which("QdstrmImporter") is None:
        pytest.skip("needs Nsight Systems' target nsys and, apart from it, its QdstrmImporter on PATH "
                    "(NSYS_HOST_PREFIX=/opt/nsys-host bash .ci/install-nsys)")
    folder = tmp_path_factory.mktemp("capture")
    env = {"PATH": os.environ["PATH"], "HOME": str(folder)}
    done = subprocess.run(["nsys", "profile", "-t", "osrt", "--sample=none", "--cpuctxsw=none", "-o",
                           str(folder / "sleeps"), sys.executable, "-c", SLEEPS], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    if (folder / "sleeps.nsys-rep").exists():
        pytest.fail("this nsys imports its own captures: tests/test_nsys_capture.py needs a target-only nsys "
                    "(.ci/install-nsys without NSYS_WITH_HOST)")
    assert "Importer error status" in done.stdout + done.stderr
    return folder / "sleeps.qdstrm"


def _sleeps(sqlite: Path) -> list[int]:
    with sqlite3.connect(sqlite) as db:
        rows = db.execute("SELECT o.end - o.start FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId "
                          "WHERE s.value = 'clock_nanosleep' ORDER BY o.start").fetchall()
    return [r[0] for r in rows]


def test_the_real_importer_and_export_give_the_three_sleeps(real_capture, tmp_path):
    before = _sha(real_capture)
    found = capture.ordered(capture.importers(shutil.which("nsys"), None), capture.version_of(shutil.which("nsys")))
    assert capture.version_of(found[0]) == capture.version_of(shutil.which("nsys")) == "2023.4.4.54"
    report = capture.import_copy(real_capture, tmp_path, found)
    export_sqlite(report, tmp_path / "sleeps.sqlite", shutil.which("nsys"))
    sleeps = _sleeps(tmp_path / "sleeps.sqlite")
    assert len(sleeps) == 3 and all(20_000_000 <= ns < 200_000_000 for ns in sleeps), sleeps
    assert _sha(real_capture) == before  # the importer wrote into a copy only


def test_roofline_analyze_reads_a_real_capture_and_says_what_it_lacks(real_capture, capsys):
    """No CUDA in the program: one line naming the user's capture (not a temporary export), nothing written."""
    before, beside = _sha(real_capture), sorted(p.name for p in real_capture.parent.iterdir())
    rc = main(["analyze", str(real_capture), "--json", "-"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"{real_capture}: an Nsight Systems export with no CUDA kernels" in err, err
    assert _sha(real_capture) == before and sorted(p.name for p in real_capture.parent.iterdir()) == beside


def test_roofline_analyze_without_an_importer_says_how_to_import(real_capture, monkeypatch, capsys):
    nsys_only = real_capture.parent / "nsys-only"
    nsys_only.mkdir(exist_ok=True)
    if not (nsys_only / "nsys").exists():
        (nsys_only / "nsys").symlink_to(shutil.which("nsys"))
    monkeypatch.setenv("PATH", f"{nsys_only}{os.pathsep}/usr/bin{os.pathsep}/bin")
    rc = main(["analyze", str(real_capture)])
    err = capsys.readouterr().err
    assert rc == 2 and f"{real_capture}: a capture that nsys did not import, and no QdstrmImporter" in err, err
    assert "QdstrmImporter -i FILE.qdstrm" in err  # the way out is in the hint

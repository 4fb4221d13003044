"""The installed command ends its process without Python's module teardown
(:func:`roofline.cli.app.end_process`): what it prints and writes is the same as when the
interpreter ends the process its own way, threads are joined and ``atexit`` functions run, the exit
status is kept, and a reader that goes away early costs no traceback. Real public data: the SGLang
prefill profile of an H200 (tests/data/ncu/h200_setfull_sglang_moe_fa3/PROVENANCE.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "tests" / "data" / "ncu" / "h200_setfull_sglang_moe_fa3" / "long_prefill.raw.csv.gz"

#: The children's environment: standard output buffered, as a user's shell has it (PYTHONUNBUFFERED, set
#: on some machines, would write every byte at once, and a missing flush before the end would go unseen).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

#: The same command ended by the interpreter's own exit (module teardown, final collection).
PLAIN_EXIT = "import sys\nfrom roofline.cli.app import main\nsys.exit(main(sys.argv[1:]))\n"


def _run(args: list[str], *, plain: bool = False, **kw: object) -> subprocess.CompletedProcess[bytes]:
    start = [sys.executable, "-c", PLAIN_EXIT] if plain else [sys.executable, "-m", "roofline"]
    return subprocess.run([*start, *args], capture_output=True, timeout=300, cwd=ROOT, env=ENV, **kw)  # type: ignore[call-overload]


def test_output_and_files_as_with_the_interpreters_own_exit(tmp_path: Path) -> None:
    outputs = {}
    for plain in (False, True):
        (tmp_path / str(plain)).mkdir()
        json_file = tmp_path / str(plain) / "analysis.json"
        done = _run(["analyze", str(PROFILE), "-m", "h200-sxm", "--csv", "-", "--json", str(json_file), "--top", "40"],
                    plain=plain)
        assert done.returncode == 0, done.stderr.decode()
        outputs[plain] = (done.stdout, json.loads(json_file.read_text()), done.stderr)
    fast, slow = outputs[False], outputs[True]
    assert fast[0] == slow[0]  # every byte of the CSV on standard output, flushed
    rows = fast[0].decode().splitlines()
    assert len(rows) == len(fast[1]["kernels"]) + 1 > 10  # a header and one row per kernel group
    assert fast[1] == slow[1]
    assert fast[2].replace(b"/False/", b"/True/") == slow[2]  # the tables and notes on standard error


def test_threads_are_joined_and_exit_functions_run(tmp_path: Path) -> None:
    marks = tmp_path / "marks.txt"
    code = ("import atexit, sys, threading, time\n"
            "from roofline.cli.entry import run\n"
            f"marks = open({str(marks)!r}, 'a')\n"
            "def late():\n"
            "    time.sleep(0.5)\n"
            "    marks.write('thread\\n'); marks.flush()\n"
            "threading.Thread(target=late).start()\n"
            "atexit.register(lambda: (marks.write('atexit\\n'), marks.close(), sys.stdout.write('bye')))\n"
            "sys.argv = ['roofline', '--version']\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()[0].isdigit()  # the version
    assert done.stdout.endswith("bye")  # written by an exit function, left in the buffer, flushed
    assert marks.read_text().splitlines() == ["thread", "atexit"]  # the thread ended before the exit functions ran


def test_exit_status_of_bad_input_is_kept(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.csv"
    done = _run(["analyze", str(missing)])
    assert done.returncode == 2
    assert done.stderr.decode().startswith("roofline: error:") and str(missing) in done.stderr.decode()


def test_a_reader_that_goes_away_costs_no_traceback() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "roofline", "analyze", str(PROFILE), "-m", "h200-sxm", "--csv", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written (`| true`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert "Traceback" not in err and "Exception ignored" not in err, err

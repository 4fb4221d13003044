"""A raw page parsed ahead (roofline.readers.ncu.ahead, roofline.cli.entry): the same table as a read
that parses the file when asked, from real ncu exports; the parse is taken only for the very file it
read, unchanged; errors are the reader's own; and none of it loads pandas."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import threading
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.cli.entry import profile_to_read_ahead
from roofline.errors import InputError
from roofline.readers.ncu import ahead as ahead_module

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ncu"
#: Real raw pages: ncu 2022.x --set full on an RTX 4090; a B200 with units; ncu's digit groups and a
#: decimal comma (T4, en_IN and de_DE locales, gzipped in the repository).
RTX4090 = DATA / "rtx4090_setfull_rep_and_export" / "profile.raw.csv"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
LOCALES = [DATA / "t4_setfull_locales" / f"{name}.raw.csv.gz" for name in ("en_IN", "de_DE")]


def _plain(tmp_path: Path, gz: Path) -> Path:
    out = tmp_path / gz.name.removesuffix(".gz")
    out.write_bytes(gzip.decompress(gz.read_bytes()))
    return out


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each ReadAhead.take's outcome: True when it handed over a parse."""
    seen: list[bool] = []
    take = ahead_module.ReadAhead.take

    def spy(self: ahead_module.ReadAhead):
        result = take(self)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(ahead_module.ReadAhead, "take", spy)
    return seen


@pytest.mark.parametrize("source", [RTX4090, B200, *LOCALES], ids=lambda p: p.parent.name + "/" + p.name)
def test_a_parse_taken_from_ahead_gives_the_table_a_plain_read_gives(tmp_path, monkeypatch, source):
    path = _plain(tmp_path, source) if source.suffix == ".gz" else source
    plain = api.read([path])
    seen = _taken(monkeypatch)
    ahead = api.read_ahead(path, min_bytes=0)
    assert ahead is not None
    table = api.read([path], ahead=ahead)
    assert seen == [True]
    pd.testing.assert_frame_equal(table.frame, plain.frame)
    assert table.warnings == plain.warnings and table.column_notes == plain.column_notes
    assert ahead.take() is None  # handed over once


def test_a_file_changed_after_the_parse_started_is_read_again(tmp_path, monkeypatch):
    path = tmp_path / "profile.raw.csv"
    path.write_bytes(RTX4090.read_bytes())
    ahead = api.read_ahead(path, min_bytes=0)
    assert ahead is not None and ahead.take() is not None  # the parse of the first version, done
    ahead = api.read_ahead(path, min_bytes=0)
    text = RTX4090.read_text()
    path.write_text(text.replace("init_borders(int *, int, int, int)", "renamed_kernel(int *, int, int, int)"))
    os.utime(path, ns=(1, 1))  # a new modification time whatever the clock's resolution
    assert ahead is not None and not ahead.is_for(path)
    seen = _taken(monkeypatch)
    table = api.read([path], ahead=ahead)
    assert seen == []  # not taken: the file is read as it is now
    assert "renamed_kernel(int *, int, int, int)" in set(table.frame["kernel_name"].astype(str))


def test_a_parse_ahead_of_another_file_is_not_taken(tmp_path, monkeypatch):
    ahead = api.read_ahead(B200, min_bytes=0)
    seen = _taken(monkeypatch)
    table = api.read([RTX4090], ahead=ahead)
    assert seen == []
    pd.testing.assert_frame_equal(table.frame, api.read([RTX4090]).frame)


def test_files_that_are_not_raw_pages_are_read_as_usual(tmp_path):
    details = DATA / "h200_sections_rep_and_details_export"
    page = next(p for p in sorted(details.glob("*.csv")) if "Metric Name" in p.read_text(errors="replace")[:20000])
    ahead = api.read_ahead(page, min_bytes=0)
    assert ahead is not None and ahead.take() is None  # a details page: nothing parsed ahead
    other = tmp_path / "notes.csv"
    other.write_text("a,b\n1,2\n")
    ahead = api.read_ahead(other, min_bytes=0)
    assert ahead is not None and ahead.take() is None  # not an ncu CSV: the reader says so itself
    with pytest.raises(InputError, match="not an Nsight Compute CSV"):
        api.read([other], ahead=api.read_ahead(other, min_bytes=0))


def test_small_files_folders_and_missing_files_start_nothing(tmp_path):
    assert api.read_ahead(RTX4090) is None  # 97 kB: below AHEAD_BYTES
    assert api.AHEAD_BYTES == 16 << 20
    assert api.read_ahead(tmp_path, min_bytes=0) is None
    assert api.read_ahead(tmp_path / "missing.csv", min_bytes=0) is None


def test_the_readers_errors_come_from_the_parse_ahead_unchanged(tmp_path):
    lines = B200.read_text().splitlines(keepends=True)
    lines[9] = lines[9].rstrip("\n") + ',"extra"\n'  # launch 5's row: one field too many
    path = tmp_path / "broken.csv"
    path.write_text("".join(lines))
    with pytest.raises(InputError) as plain:
        api.read([path])
    with pytest.raises(InputError) as ahead:
        api.read([path], ahead=api.read_ahead(path, min_bytes=0))
    assert str(ahead.value) == str(plain.value)
    assert "malformed CSV" in str(plain.value) and "broken.csv" in str(plain.value)


def test_latin1_names_read_ahead_as_when_read_plainly(tmp_path):
    text = RTX4090.read_text().replace("init_borders", "initialisé_borders")
    path = tmp_path / "latin1.csv"
    path.write_bytes(text.encode("latin-1"))
    table = api.read([path], ahead=api.read_ahead(path, min_bytes=0))
    assert any(n.startswith("initialisé_borders") for n in table.frame["kernel_name"].astype(str))
    pd.testing.assert_frame_equal(table.frame, api.read([path]).frame)


def test_a_cancelled_parse_hands_nothing_over(monkeypatch):
    cancelled = threading.Event()
    sniff = ahead_module.sniff

    def sniff_after_the_cancel(path):  # the parse starts once cancel() has been called: no race
        cancelled.wait(30)
        return sniff(path)

    monkeypatch.setattr(ahead_module, "sniff", sniff_after_the_cancel)
    ahead = api.read_ahead(RTX4090, min_bytes=0)
    assert ahead is not None
    ahead.cancel()
    cancelled.set()
    assert ahead.take() is None
    assert api.read([RTX4090], ahead=ahead).frame.shape == api.read([RTX4090]).frame.shape


def test_a_cancelled_parse_that_was_done_drops_its_result():
    ahead = api.read_ahead(RTX4090, min_bytes=0)
    assert ahead is not None
    ahead._result.result(timeout=60)  # done
    ahead.cancel()
    assert ahead.take() is None


@pytest.mark.parametrize(("args", "expected"), [
    (["analyze", "{csv}"], "{csv}"),
    (["analyze", "{csv}", "--top", "5", "--machine", "h100-sxm"], "{csv}"),
    (["analyze", "{csv}", "{csv2}"], None),  # two profiles: none guessed
    (["analyze", "{csv}", "--engine", "duckdb"], None),  # an out-of-core engine reads its own way
    (["analyze", "{csv}", "--engine=duckdb"], None),
    (["analyze", "{missing}"], None),
    (["analyze", "{json}"], None),  # not a CSV
    (["compare", "{csv}", "{csv2}"], None),
    (["project", "{csv}", "--to", "h200"], None),
    ([], None),
])
def test_the_command_line_guess(tmp_path, args, expected):
    names = {"csv": tmp_path / "a.csv", "csv2": tmp_path / "b.CSV", "json": tmp_path / "t.kernels.json",
             "missing": tmp_path / "gone.csv"}
    for key in ("csv", "csv2", "json"):
        names[key].write_text("x")
    line = [a.format(**{k: str(v) for k, v in names.items()}) for a in args]
    want = None if expected is None else expected.format(**{k: str(v) for k, v in names.items()})
    assert profile_to_read_ahead(line) == want


def _big_raw(tmp_path: Path) -> tuple[Path, int]:
    """A raw page above AHEAD_BYTES made of the B200 export's 16 launches repeated, each copy's IDs
    numbered on (ncu's preamble, the header and the units row once), and how many launches it has."""
    lines = B200.read_text().splitlines(keepends=True)
    head, body = lines[:4], lines[4:]
    assert body[0].startswith('"0",') and len(body) == 16
    out = tmp_path / "big.raw.csv"
    launch = 0
    with out.open("w") as fh:
        fh.writelines(head)
        while fh.tell() < api.AHEAD_BYTES + (1 << 20):
            for row in body:
                fh.write(f'"{launch}"' + row[row.index(","):])
                launch += 1
    return out, launch


def test_the_command_reads_ahead_and_prints_what_it_prints_without(tmp_path, monkeypatch):
    big, launches = _big_raw(tmp_path)
    seen = _taken(monkeypatch)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["analyze", str(big), "--json", str(tmp_path / "plain.json")]) == 0
    assert seen == []  # main() alone reads the file when asked
    ahead = api.read_ahead(big)
    assert ahead is not None
    again = io.StringIO()
    with redirect_stdout(again):
        assert main(["analyze", str(big), "--json", str(tmp_path / "ahead.json")], ahead=ahead) == 0
    assert seen == [True]
    assert again.getvalue() == out.getvalue()
    plain = (tmp_path / "plain.json").read_bytes()
    assert (tmp_path / "ahead.json").read_bytes() == plain
    kernels = json.loads(plain)["kernels"]
    assert len(kernels) == 2 and sum(k["launches"] for k in kernels) == launches
    # and the installed command, the way a user runs it (roofline.cli.entry): the same document
    done = subprocess.run([sys.executable, "-m", "roofline", "analyze", str(big), "--json", "-"],
                          capture_output=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain


@pytest.mark.parametrize("compiled", [False, True], ids=["cast", "compiled loop"])
def test_the_parse_ahead_loads_no_pandas(tmp_path, compiled):
    """Neither the parse (the RTX 4090 page: text, gaps and odd numbers among its metrics) nor ncu's
    digit groups read by the compiled loop load pandas."""
    from test_grouped_numbers import ncu_page

    grouped = tmp_path / "grouped.csv"
    ncu_page(grouped, launches=500)
    code = ("import sys\nfrom roofline import api\nfrom roofline.readers import csv_arrow\n"
            f"csv_arrow.COMPILED_BYTES = {0 if compiled else 1 << 40}\n"
            f"for path in ({str(RTX4090)!r}, {str(grouped)!r}):\n"
            "    layout, parsed = api.read_ahead(path, min_bytes=0).take()\n"
            "    print(parsed.columns.rows, parsed.columns.compiled)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pandas'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = sum(1 for _ in RTX4090.open()) - 2
    assert done.stdout.splitlines() == [f"{rows} {compiled}", f"500 {compiled}", "[]"]

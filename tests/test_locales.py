"""Numbers as ncu writes them in other locales: one real report exported by the real ncu 2024.1.1 under
de_DE, fr_FR, de_CH, en_IN and C (tests/data/ncu/t4_setfull_locales/PROVENANCE.md), read to the same
kernel table as the C export, with the report's numbers checked by hand; and roofline's own ncu
calls made to write the C way whatever the user's locale.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import needs

from roofline.errors import InputError
from roofline.readers import read_profile
from roofline.readers.ncu.numbers import MixedNumbers, c_numbers, decimal_comma, plain

DATA = Path(__file__).parent / "data" / "ncu"
LOCALES = DATA / "t4_setfull_locales"
T4 = DATA / "t4_setfull_rep" / "matrix_addition2D_t4_setfull.ncu-rep"
PAGES = ("raw", "rawbase", "details")


def _csv(tmp_path: Path, locale: str, page: str) -> Path:
    out = tmp_path / f"{locale}.{page}.csv"
    out.write_bytes(gzip.decompress((LOCALES / f"{locale}.{page}.csv.gz").read_bytes()))
    return out


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("locale", ["de_DE", "fr_FR", "de_CH", "en_IN"])
def test_every_locale_reads_as_the_c_export_of_the_same_page(tmp_path, locale, page):
    ours, c = read_profile(_csv(tmp_path, locale, page)), read_profile(_csv(tmp_path, "C", page))
    numeric = [col for col in c.frame.columns if pd.api.types.is_numeric_dtype(c.frame[col])]
    pd.testing.assert_frame_equal(ours.frame[numeric], c.frame[numeric], check_exact=True)
    pd.testing.assert_frame_equal(ours.metrics, c.metrics, check_exact=True)
    # gpu__time_duration.sum: 52,576 ns ("52.576" in de_DE base units), "52,58" usecond on the details page
    assert ours.frame.loc[0, "time_s"] == pytest.approx(52.58e-6 if page == "details" else 52_576e-9, rel=1e-12)


@pytest.mark.parametrize("locale", ["de_DE", "fr_FR", "de_CH", "en_IN"])
def test_every_value_of_a_details_page_both_ways(tmp_path, locale):
    """Each of the details page's values, as plain rows give them (text) and as pandas' parser does
    (a pandas array), equals the C page's value in the same place."""
    import csv

    from roofline.readers.ncu.details import _numbers

    def values(loc: str) -> list[str]:
        rows = list(csv.reader(_csv(tmp_path, loc, "details").read_text().splitlines()))
        return [row[rows[0].index("Metric Value")] for row in rows[1:]]

    ours, c = values(locale), values("C")
    comma = locale in ("de_DE", "fr_FR")
    fast, parsed = _numbers(np.array(ours, dtype=object), comma), _numbers(pd.array(ours, dtype="string"), comma)
    truth = _numbers(np.array(c, dtype=object), False)
    assert np.isfinite(truth).sum() == 71 and ours != c  # 71 numbers, among a few text values
    np.testing.assert_array_equal(fast, truth)
    np.testing.assert_array_equal(parsed, truth)


def test_de_de_raw_page_written_two_ways_at_once_by_hand(tmp_path):
    """The raw page in scaled units under de_DE: ``376813.000000`` (C), ``5.001.000`` (grouped) and
    ``0,15`` (decimal comma) in one row."""
    t = read_profile(_csv(tmp_path, "de_DE", "raw"))
    f, m = t.frame, t.metrics
    assert f.loc[0, "time_s"] == pytest.approx(52_576e-9, rel=1e-12)  # "52.576000" usecond
    assert f.loc[0, "l2_bytes"] == 376_813 * 32  # "376813.000000" sector
    assert f.loc[0, "dram_bytes"] == pytest.approx(9_612_288 + 4_189_344, rel=1e-12)  # "9.612288" + "4.189344" Mbyte
    # "35.186984" FADD per cycle x "28419.600000" cycles (one FADD per element of 1000 x 1000)
    assert f.loc[0, "fp32_flops"] == pytest.approx(35.186984 * 28_419.6, rel=1e-12)
    assert f.loc[0, "fp32_flops"] == pytest.approx(1_000_000, rel=1e-6)
    assert m.loc[0, "device__attribute_memory_clock_rate"] == 5_001_000  # "5.001.000" (kHz, unitless here)
    assert m.loc[0, "device__attribute_max_shared_memory_per_block"] == 49_152  # "49.152", not 49.152
    assert m.loc[0, "smsp__issue_active.avg.per_cycle_active"] == 0.15  # "0,15"


def test_de_de_base_units_by_hand_and_the_ceilings_from_it(tmp_path):
    """Every number the locale's way: ``52.576`` ns is 52,576 ns; the report's own peaks give the T4's
    DRAM ceiling: 64 B/cycle x ``4.640.292.148,51`` cycle/s."""
    from roofline.readers.ncu.peaks import machine_from_profile

    t = read_profile(_csv(tmp_path, "de_DE", "rawbase"))
    assert t.frame.loc[0, "time_s"] == pytest.approx(52_576e-9, rel=1e-12)
    assert t.frame.loc[0, "l2_bytes"] == 376_813 * 32  # "376.813"
    assert t.frame.loc[0, "fp32_flops"] == pytest.approx(35.19 * 28_419.6, rel=1e-12)  # "35,19" x "28.419,60"
    t4 = machine_from_profile(t.metrics, compute_capability="7.5")
    assert t4.memory["dram"] == pytest.approx(64 * 4_640_292_148.51, rel=1e-12)
    assert t4.compute["fp32"] == pytest.approx(2 * 2560 * 540_543_213.63, rel=1e-12)  # "540.543.213,63"


@pytest.mark.parametrize(("text", "comma", "number"), [
    ("1.980.000", True, 1_980_000), ("6.144", True, 6144), ("141.760000", True, 141.76), ("0,60", True, 0.6),
    ("1.234,5", True, 1234.5), ("0.125", True, 0.125), ("540.543.213,63", True, 540_543_213.63),
    ("5 001 000", True, 5_001_000), ("1\u202f234,5", True, 1234.5), ("1\u00a0234", False, 1234),
    ("5'001'000", False, 5_001_000), ("4\u2019640.5", False, 4640.5), ("3,76,813", False, 376_813),
    ("1,234.5", False, 1234.5), ("0.125", False, 0.125), ("-1.234,5", True, -1234.5),
])
def test_plain_numbers(text, comma, number):
    assert float(plain(text, comma)) == number
    from roofline.readers.csv_arrow import numbers
    import pyarrow as pa

    assert numbers(pa.array([text]), comma).to_pylist() == [number]  # the Arrow route agrees


def test_which_mark_is_the_decimal_one():
    assert decimal_comma(["376813.000000", "5.001.000", "0,15"]) is True  # de_DE raw page
    assert decimal_comma(["5 001 000", "28 419,60"]) is True
    assert decimal_comma(["12.50", "1,234", "0.125", "7"]) is False  # nothing but the point convention
    assert decimal_comma(["3,76,813", "28,419.60"]) is False
    with pytest.raises(MixedNumbers, match="'0,5'.*'1,234,567'"):
        decimal_comma(["0,5", "1,234,567"])


def test_a_file_with_both_conventions_is_refused_naming_them(tmp_path):
    text = gzip.decompress((LOCALES / "de_DE.details.csv.gz").read_bytes()).decode()
    text = text.replace('"Kbyte","262,14"', '"Kbyte","262,144.5"', 1)  # beside "52,58" usecond
    assert "262,144.5" in text
    bad = tmp_path / "mixed.csv"
    bad.write_text(text)
    with pytest.raises(InputError, match="262,144.5") as err:
        read_profile(bad)
    assert "LC_ALL=C ncu --import" in err.value.hint


def test_the_ncu_environment_writes_numbers_the_c_way():
    env = c_numbers({"LC_ALL": "de_DE.UTF-8", "LC_TIME": "fr_FR.UTF-8", "PATH": "/bin", "LANG": "en_US.UTF-8"})
    assert env == {"LANG": "de_DE.UTF-8", "LC_NUMERIC": "C", "PATH": "/bin"}  # LC_ALL overrode LC_TIME
    assert c_numbers({"LANG": "de_DE.UTF-8", "LC_TIME": "fr_FR.UTF-8"}) == {
        "LANG": "de_DE.UTF-8", "LC_TIME": "fr_FR.UTF-8", "LC_NUMERIC": "C"}


@pytest.fixture
def german(tmp_path, monkeypatch):
    """This process in de_DE (compiled with glibc's localedef into tmp_path), as a German user's shell."""
    localedef = shutil.which("localedef")
    if localedef is None or not Path("/usr/share/i18n/locales/de_DE").exists():
        pytest.skip("needs glibc's localedef and the locales package (.ci/run installs it)")
    subprocess.run([localedef, "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "de_DE.UTF-8")], check=True,
                   capture_output=True)
    monkeypatch.setenv("LOCPATH", str(tmp_path))
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    return os.environ


def test_a_report_read_through_ncu_in_a_german_shell(german, monkeypatch):
    """``roofline analyze X.ncu-rep`` without the ncu_report module runs ``ncu --import``: in a
    de_DE shell the real ncu writes ``5.001.000``; roofline's call gets the C file."""
    from roofline.readers.ncu import rep as ncu_rep

    ncu = needs.ncu()
    plainly = subprocess.run([ncu, "--import", str(T4), "--csv", "--page", "raw"], capture_output=True, text=True)
    assert '"5.001.000"' in plainly.stdout  # the locale took: ncu groups digits with dots
    exported: list[str] = []

    def read_ncu_csv(path):  # type: ignore[no-untyped-def]
        exported.append(Path(path).read_text())
        return original(path)

    original = ncu_rep.read_ncu_csv
    monkeypatch.setattr(ncu_rep, "read_ncu_csv", read_ncu_csv)
    profile = ncu_rep.read_with_cli(T4, ncu)
    assert exported == [gzip.decompress((LOCALES / "C.raw.csv.gz").read_bytes()).decode()]
    assert profile.metrics.loc[0, "device__attribute_memory_clock_rate"] == 5_001_000
    assert np.isclose(profile.metrics.loc[0, "gpu__time_duration.sum"], 52_576e-9, rtol=1e-12)


def test_profile_exports_the_c_way_in_a_german_shell(german, tmp_path):
    from roofline.profiling.ncu_runner import export_raw_csv

    ncu = needs.ncu()
    out = export_raw_csv(ncu, T4, tmp_path / "t4.csv")
    text = out.read_text()
    assert '"5001000"' in text and "5.001.000" not in text
    assert text == gzip.decompress((LOCALES / "C.raw.csv.gz").read_bytes()).decode()


def _whole_number_rows(tmp_path: Path, groups: int) -> Path:
    """The real de_DE details page cut to its rows of whole numbers with at most ``groups`` dot groups."""
    import csv
    import io
    import re

    rows = list(csv.reader(_csv(tmp_path, "de_DE", "details").read_text().splitlines()))
    value = rows[0].index("Metric Value")
    whole = re.compile(r"^\d{1,3}(\.\d{3}){0,%d}$" % groups)
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        [rows[0]] + [r for r in rows[1:] if whole.match(r[value])])
    cut = tmp_path / f"whole{groups}.csv"
    cut.write_text(out.getvalue())
    return cut


def test_values_only_de_de_writes_with_nothing_else_to_tell_are_read_as_decimals_and_said(tmp_path):
    """Cut to ``30.730`` elapsed cycles, ``632.520`` instructions and the like, nothing shows the decimal
    mark: ``30.730`` is read the point way, and the user is told that ncu would have meant 30,730
    and how to export the file again. With ``1.016.064`` threads kept, the page says it itself."""
    from roofline.readers.ncu.csv_export import read_ncu_csv

    profile = read_ncu_csv(_whole_number_rows(tmp_path, 1))
    assert profile.metrics.loc[0, "gpc__cycles_elapsed.max"] == 30.73  # "Elapsed Cycles" "30.730"
    assert profile.metrics.loc[0, "smsp__inst_executed.sum"] == 632.52
    assert profile.warnings == ("whole1.csv: numbers such as '30.730' are read as decimals (30.73); ncu writes "
                                "three decimals only as digit groups under locales such as de_DE (30730): if ncu "
                                "wrote this file there, export it again with LC_ALL=C ncu --import REPORT --csv ...",)
    told = read_ncu_csv(_whole_number_rows(tmp_path, 2))
    assert told.metrics.loc[0, "gpc__cycles_elapsed.max"] == 30_730 and told.warnings == ()
    assert told.metrics.loc[0, "launch__thread_count"] == 1_016_064


def test_instruction_counts_without_time_are_not_called_a_failed_launch(tmp_path):
    """ncu did record the launch (632,520 instructions): the profile lacks time, FLOPs and bytes."""
    with pytest.raises(InputError, match="none of the metrics needed for a roofline") as err:
        read_profile(_whole_number_rows(tmp_path, 2))
    assert "gpu__time_duration.sum" in err.value.hint and "recorded no value" not in err.value.message

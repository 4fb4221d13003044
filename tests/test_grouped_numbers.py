"""ncu's digit-grouped numbers read by the compiled loop (roofline.readers.ncu.grouped): bit for bit the
numbers the Arrow cast gives (the commas dropped, then cast), or None so that the cast reads them."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from roofline.readers import csv_arrow, read_profile
from roofline.readers.ncu import grouped
from roofline.readers.ncu.grouped import grouped_numbers

DATA = Path(__file__).resolve().parent / "data" / "ncu"


def _cast(text: pa.ChunkedArray) -> np.ndarray:
    """What the reader made of such text before (csv_arrow.numbers without the loop)."""
    converted = csv_arrow.numbers(text, decimal_comma=False)
    assert converted is not None
    return csv_arrow.to_numpy(converted)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))  # NaN and -0.0 too


def _grouped(value: int) -> str:
    return f"{value:,}"


@pytest.mark.parametrize(("text", "number"), [
    ("1,178,572,552,545.80", 1_178_572_552_545.80),  # en_US, as ncu 2024.1.1 wrote it (readers/ncu/numbers.py)
    ("216,186", 216186), ("42.22", 42.22), ("0", 0), ("-1,234", -1234), ("999,999,999,999,999", 999_999_999_999_999),
    ("27,661.50", 27661.5), ("0.000001", 1e-6), ("007", 7),
])
def test_values_as_ncu_writes_them(text, number):
    out = grouped_numbers(pa.chunked_array([pa.array([text])]))
    assert out is not None and out.to_pylist() == [number]
    assert out.type == (pa.float64() if "." in text else pa.int64())


@pytest.mark.parametrize("text", [
    "1,23", "1234,567", ",123", "1,", "1.", ".5", "-", "+5", "1e5", " 1", "1 ", "1.2.3", "1,234.5,6",
    "1,41,760",  # en_IN's groups: the cast reads them (tests/test_locales.py)
    "9,999,999,999,999,999",  # 16 digits: not an exact double as m / 10**k
    "-0", "-0.00",  # a negative zero
    "n/a", "",
])
def test_anything_else_is_left_to_the_cast(text):
    assert grouped_numbers(pa.chunked_array([pa.array(["1,000", text])])) is None


def test_random_columns_give_the_casts_numbers_bit_for_bit():
    rng = random.Random(34)
    for trial in range(200):
        decimals = rng.choice([None, 0, 1, 2, 6])
        values: list[str | None] = []
        for _ in range(rng.randint(1, 300)):
            if rng.random() < 0.03:
                values.append(None)
                continue
            whole = rng.choice([rng.randint(0, 999), rng.randint(0, 10**9), rng.randint(0, 10**12)])
            sign = "-" if rng.random() < 0.1 and whole else ""
            text = _grouped(whole) if rng.random() < 0.9 else str(whole)
            if decimals:
                text += "." + "".join(rng.choice("0123456789") for _ in range(decimals))
            values.append(sign + text)
        cut = rng.randint(0, len(values))
        column = pa.chunked_array([pa.array(["skipped"] + values[:cut]).slice(1), pa.array(values[cut:], pa.string())])
        out = grouped_numbers(column)
        digits = max((sum(ch.isdigit() for ch in v) for v in values if v is not None), default=0)
        assert (out is None) == (digits > grouped.MAX_DIGITS), values  # more digits: not exact, left to the cast
        if out is not None:
            assert _same(csv_arrow.to_numpy(out), _cast(column)), (trial, values)
        assert _same(csv_arrow.to_numpy(csv_arrow.numbers(column, False, compiled=True)), _cast(column))


def test_without_the_compiled_loop_the_cast_reads_them(monkeypatch):
    def unavailable():
        raise ImportError("No module named 'llvmlite'")

    monkeypatch.setattr(grouped, "_compile", unavailable)
    monkeypatch.setattr(grouped, "_KERNEL", grouped._Kernel())
    assert grouped_numbers(pa.chunked_array([pa.array(["1,000"])])) is None
    text = pa.chunked_array([pa.array(["1,000", "2,500.25"])])
    assert csv_arrow.numbers(text, False, compiled=True).to_pylist() == [1000.0, 2500.25]


RAW_PAGES = sorted([*DATA.glob("*/*raw*.csv"), *DATA.glob("t4_setfull_locales/*raw*.csv.gz"),
                    *DATA.glob("h100_80gb_hbm3_examples/*.ncu.csv")])


@pytest.mark.parametrize("path", RAW_PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_raw_pages_read_with_the_loop_give_the_same_tables(tmp_path, monkeypatch, path):
    if path.suffix == ".gz":
        plain = tmp_path / path.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    before = read_profile([path]).frame
    monkeypatch.setattr(csv_arrow, "COMPILED_BYTES", 0)  # the loop on every file, not only on large ones
    used: list[bool] = []
    numbers = grouped.grouped_numbers

    def spy(text):
        out = numbers(text)
        used.append(out is not None)
        return out

    monkeypatch.setattr(grouped, "grouped_numbers", spy)
    pd.testing.assert_frame_equal(read_profile([path]).frame, before)


def ncu_page(path: Path, launches: int = 3000) -> list[str]:
    """A raw page written as ncu writes one (every value quoted, en_US digit groups); its rows."""
    header = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
              '"Device","CC","dram__bytes.sum","gpu__time_duration.sum","sm__cycles_elapsed.avg",'
              '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"\n')
    units = '"","","","","","","","","","","","byte","usecond","cycle","inst"\n'
    rng = random.Random(7)
    rows = [f'"{i}","77","app","h","k{i % 3}","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0",'
            f'"{_grouped(rng.randint(10**6, 10**10))}","{_grouped(rng.randint(1, 10**5))}.{rng.randint(0, 99):02d}",'
            f'"{_grouped(rng.randint(10**3, 10**8))}.{rng.randint(0, 99):02d}","{_grouped(rng.randint(0, 10**11))}"\n'
            for i in range(launches)]
    path.write_text(header + units + "".join(rows))
    return rows


def test_a_file_of_ncu_numbers_is_read_by_the_loop(tmp_path, monkeypatch):
    """The columns ncu groups: each read by the loop, and the table what the cast gives."""
    path = tmp_path / "raw.csv"
    rows = ncu_page(path)
    before = read_profile([path]).frame
    monkeypatch.setattr(csv_arrow, "COMPILED_BYTES", 0)
    used: list[bool] = []
    numbers = grouped.grouped_numbers
    monkeypatch.setattr(grouped, "grouped_numbers", lambda text: used.append(numbers(text) is not None) or numbers(text))
    after = read_profile([path]).frame
    pd.testing.assert_frame_equal(after, before)
    assert used and all(used)
    assert after["dram_bytes"].iloc[0] == float(rows[0].split('","')[11].replace(",", ""))


def test_a_page_without_digit_groups_compiles_nothing(monkeypatch):
    """The loop is compiled (llvmlite loaded: 0.07 GB resident) only for a page whose metrics have
    digit groups, not for every large file."""
    kernel = grouped._Kernel()
    monkeypatch.setattr(grouped, "_KERNEL", kernel)
    monkeypatch.setattr(csv_arrow, "COMPILED_BYTES", 0)
    read_profile([DATA / "rtx4090_setfull_rep_and_export" / "profile.raw.csv"])
    assert not kernel._started

"""The raw page read by pyarrow in slabs (roofline.readers.csv_arrow, roofline.readers.ncu.raw).

A slab ends at a line end, and pyarrow infers each slab's column types on its own: these tests
make slabs a few hundred bytes long so that one file crosses many, and put in later slabs what
the first slab does not show (decimals after integers, thousands separators, a text value, a
``==PROF==`` line, a line longer than a slab). Every expected value is written out by hand.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.errors import InputError
from roofline.readers import csv_arrow, read_profile, slabs
from roofline.readers.ncu.csv_export import read_ncu_csv

HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC",' \
         '"gpu__time_duration.sum","dram__bytes.sum","lts__t_bytes.sum","sm__cycles_elapsed.avg","launch__note"\n'
UNITS = '"","","","","","","","","","usecond","Kbyte","byte","cycle",""\n'


def _row(i: int, name: str, time: str, dram: str, lts: str, cycles: str, note: str = "") -> str:
    return f'"{i}","77","app","h","{name}","1","7","0","9.0","{time}","{dram}","{lts}","{cycles}","{note}"\n'


def _file(tmp_path: Path, rows: list[str], *, preamble: str = "==PROF== Connected to process 77\n",
          tail: str = "==PROF== Disconnected from process 77\n", encoding: str = "utf-8") -> Path:
    path = tmp_path / "raw.csv"
    path.write_bytes((preamble + HEADER + UNITS + "".join(rows) + tail).encode(encoding))
    return path


@pytest.fixture
def tiny_slabs(monkeypatch):
    """Slabs of 300 bytes: a few rows each."""
    monkeypatch.setattr(csv_arrow, "SLAB_BYTES", 300)


def _rows_mixed(n: int = 40) -> list[str]:
    """Integers first; a decimal time, thousands separators and an empty value only near the end."""
    rows = []
    for i in range(n):
        time = "2" if i < n - 3 else "2.5"
        dram = str(1000 + i) if i < n - 5 else f"{1_234_000 + i:,}"
        lts = "" if i == n - 2 else str(4096 * (i + 1))
        rows.append(_row(i, "k_a" if i % 2 else "k_b", time, dram, lts, str(10 * i)))
    return rows


def test_types_that_change_between_slabs_are_read_as_the_whole_column(tmp_path, tiny_slabs):
    n = 40
    raw = read_ncu_csv(_file(tmp_path, _rows_mixed(n)))
    m = raw.metrics
    assert len(m) == n and raw.ids["launch_id"].tolist() == list(range(n))
    # usecond -> s; the last three rows' 2.5 us make the column float, the integers stay exact
    assert m["gpu__time_duration.sum"].tolist() == [2 * 1e-6] * (n - 3) + [2.5 * 1e-6] * 3
    # Kbyte -> B: "1,234,035" (thousands separators only in the last slabs) is a number
    assert m["dram__bytes.sum"].iloc[0] == 1000 * 1e3
    assert m["dram__bytes.sum"].iloc[n - 5] == (1_234_000 + n - 5) * 1e3
    # byte: integers with one empty value are float64 with NaN there (unknown, not zero)
    assert m["lts__t_bytes.sum"].dtype == np.float64
    assert np.isnan(m["lts__t_bytes.sum"].iloc[n - 2])
    assert m["lts__t_bytes.sum"].iloc[n - 1] == 4096 * n
    # integer counts without gaps stay int64
    assert m["sm__cycles_elapsed.avg"].dtype == np.int64 and m["sm__cycles_elapsed.avg"].sum() == 10 * sum(range(n))
    assert raw.ids["kernel_name"].tolist() == ["k_b", "k_a"] * (n // 2)
    assert raw.ids["compute_capability"].iloc[0] == "9.0" and raw.ids["stream"].iloc[0] == 7


def test_slab_size_does_not_change_the_profile(tmp_path, monkeypatch):
    path = _file(tmp_path, _rows_mixed(60))
    whole = read_ncu_csv(path)
    monkeypatch.setattr(csv_arrow, "SLAB_BYTES", 257)
    sliced = read_ncu_csv(path)
    pd.testing.assert_frame_equal(whole.ids, sliced.ids)
    pd.testing.assert_frame_equal(whole.metrics, sliced.metrics)
    # the same file through pandas' reader: the numbers pandas reads, times the units
    plain = pd.read_csv(path, skiprows=[0, 2], thousands=",").iloc[:-1]  # the last row is the ==PROF== line
    assert np.allclose(sliced.metrics["dram__bytes.sum"].to_numpy(), plain["dram__bytes.sum"].to_numpy() * 1e3)
    assert np.array_equal(sliced.metrics["sm__cycles_elapsed.avg"].to_numpy(), plain["sm__cycles_elapsed.avg"].to_numpy())


def test_a_text_metric_seen_only_in_a_later_slab_is_text(tmp_path, tiny_slabs):
    rows = [_row(i, "k", "1", "1", "1", "1", note=str(i) if i < 30 else "see rule") for i in range(32)]
    m = read_ncu_csv(_file(tmp_path, rows)).metrics
    assert str(m["launch__note"].dtype) == "string"
    assert m["launch__note"].iloc[0] == "0" and m["launch__note"].iloc[31] == "see rule"
    assert m["gpu__time_duration.sum"].sum() == pytest.approx(32e-6)


def test_a_line_longer_than_a_slab_and_prof_lines_between_rows(tmp_path, tiny_slabs):
    long_name = "void k<" + "float, " * 100 + "int>(float*)"
    rows = [_row(0, long_name, "3", "1", "1", "5"), "==PROF== Disconnected from process 77\n",
            _row(1, "short", "4", "1", "1", "6")]
    raw = read_ncu_csv(_file(tmp_path, rows))
    assert raw.ids["kernel_name"].tolist() == [long_name, "short"]
    assert raw.metrics["gpu__time_duration.sum"].tolist() == [3 * 1e-6, 4 * 1e-6]


def test_rows_denser_than_the_first_slab_grow_the_reserved_columns(tmp_path, tiny_slabs):
    """The rows reserved for the numbers come from the first slab's rows per byte: long kernel
    names first and short ones after make the file hold more rows than reserved, and the columns
    grow, every value kept (integers still int64, the 3 us and 5 cycles of each row exact)."""
    long_rows = [_row(i, "void k<" + "float, " * 30 + f"int>(float*) {i}", "3", "1", "1", "5") for i in range(2)]
    short_rows = [_row(i, "s", "3", "1", "1", "5") for i in range(2, 60)]
    path = _file(tmp_path, long_rows + short_rows)
    reserved: list[int] = []
    add = csv_arrow.Columns.add

    def spy(self, table, pool=None):
        add(self, table, pool)
        reserved.append(self.capacity)

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(csv_arrow.Columns, "add", spy)
    try:
        raw = read_ncu_csv(path)
    finally:
        monkeypatch.undo()
    assert reserved[0] < 60 <= reserved[-1]  # too few reserved from the first slab; then grown
    m = raw.metrics
    assert len(m) == 60 and raw.ids["launch_id"].tolist() == list(range(60))
    assert m["sm__cycles_elapsed.avg"].dtype == np.int64 and m["sm__cycles_elapsed.avg"].tolist() == [5] * 60
    assert m["gpu__time_duration.sum"].tolist() == [3e-6] * 60
    assert raw.ids["kernel_name"].tolist()[2:] == ["s"] * 58


def test_a_row_with_too_many_fields_is_refused_naming_the_file(tmp_path, tiny_slabs):
    rows = [_row(i, "k", "1", "1", "1", "1") for i in range(10)]
    rows[6] = rows[6].rstrip("\n") + ',"extra"\n'
    path = _file(tmp_path, rows)
    with pytest.raises(InputError) as err:
        read_ncu_csv(path)
    assert "malformed CSV" in err.value.message and "15 fields, 14 expected" in err.value.message
    assert "raw.csv" in str(err.value)


def test_latin1_kernel_names_and_european_numbers(tmp_path):
    rows = [_row(0, "k_\u00e9t\u00e9", "1,5", "1.234.567", "2", "7"), _row(1, "k_x", "0,25", "1.000", "3", "8")]
    raw = read_ncu_csv(_file(tmp_path, rows, encoding="latin-1"))
    assert raw.ids["kernel_name"].tolist() == ["k_\u00e9t\u00e9", "k_x"]
    assert raw.metrics["gpu__time_duration.sum"].tolist() == [1.5 * 1e-6, 0.25 * 1e-6]
    assert raw.metrics["dram__bytes.sum"].tolist() == [1_234_567e3, 1_000e3]


def test_a_standard_input_stream_reads_like_the_file(tmp_path, tiny_slabs):
    path = _file(tmp_path, _rows_mixed(20))
    from roofline.readers.stream import InMemory

    from_file = read_profile(path).frame
    from_pipe = read_profile([InMemory("<stdin>", path.read_bytes())]).frame
    cols = ["launch_id", "kernel_name", "time_s", "dram_bytes", "l2_bytes"]
    pd.testing.assert_frame_equal(from_file[cols], from_pipe[cols])
    assert from_file["dram_bytes"].iloc[19] == (1_234_000 + 19) * 1e3


def test_slabs_end_at_line_ends():
    text = b"a,1\nbb,22\nccc,333\n" * 5 + b"last,9"
    pieces = [bytes(p) for p in slabs.slabs(io.BytesIO(text), 12)]
    assert b"".join(pieces) == text
    assert all(p.endswith(b"\n") for p in pieces[:-1]) and pieces[-1].endswith(b"last,9")
    assert all(len(p) <= 12 for p in pieces[:-1] if p.count(b"\n") > 1)


def test_slabs_of_a_file_on_disk_are_mapped_and_end_at_the_same_line_ends(tmp_path):
    """A file on disk is memory-mapped piece by piece: the pieces are the ones a stream of the same
    bytes gives, from an offset inside the file (past a preamble, not at a page boundary), with a
    line longer than a piece among them."""
    preamble = b"==PROF== x\n" * 500  # 5,500 bytes: the data starts inside the second page
    text = b"a,1\nbb,22\n" + b"w" * 40 + b",4\n" + b"ccc,333\n" * 9 + b"last,9"
    path = tmp_path / "raw.csv"
    path.write_bytes(preamble + text)
    with path.open("rb") as fh:
        fh.seek(len(preamble))
        mapped = []
        for piece in slabs.slabs(fh, 16):
            assert piece.parent is not None and piece.parent.size >= piece.size  # a slice of a mapping, not a copy
            mapped.append(bytes(piece))
    assert mapped == [bytes(p) for p in slabs.slabs(io.BytesIO(text), 16)]
    assert b"".join(mapped) == text and mapped[1] == b"w" * 40 + b",4\n" and mapped[-1].endswith(b"last,9")


def test_a_file_that_shrinks_between_slabs_is_refused_not_read_past_its_end(tmp_path):
    """Reading a mapped page past a file's end kills the process (SIGBUS): a file cut short while
    it is read (a profile rewritten meanwhile) is refused before the next slab is mapped."""
    path = tmp_path / "raw.csv"
    path.write_bytes(b"a,1\n" * 1000)
    with path.open("rb") as fh:
        pieces = slabs.slabs(fh, 1000)
        assert bytes(next(pieces)).endswith(b"a,1\n")
        os.truncate(path, 100)
        with pytest.raises(slabs.FileShrank, match="shrank to 100 bytes while it was read"):
            next(pieces)
    with path.open("rb") as fh:  # and through the reader, one malformed-row message
        path.write_bytes(b"a,1\n" * 1000)
        pieces = csv_arrow._pieces(fh, 1000)
        next(pieces)
        os.truncate(path, 100)
        with pytest.raises(csv_arrow.MalformedRow, match="shrank to 100 bytes while it was read"):
            next(pieces)


def test_without_pandas_block_api_the_frame_is_the_same(tmp_path, monkeypatch):
    """pandas 2 has no pandas.api.internals.create_dataframe_from_blocks: the constructor builds
    the same frame from the same blocks."""
    floats = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, np.nan]])
    ints = np.array([[7, 8, 9]], dtype=np.int64)
    text = pd.array(["a", None, "c"], dtype="string")
    blocks = [(floats, np.array([0, 3])), (ints, np.array([1])), (text, np.array([2]))]
    columns = pd.Index(["f0", "i", "t", "f1"])
    adopted = csv_arrow._from_blocks(blocks, pd.RangeIndex(3), columns)
    assert np.shares_memory(adopted["f0"].to_numpy(), floats)
    import pandas.api.internals

    monkeypatch.delattr(pandas.api.internals, "create_dataframe_from_blocks")
    built = csv_arrow._from_blocks(blocks, pd.RangeIndex(3), columns)
    pd.testing.assert_frame_equal(adopted, built)
    assert built["f1"].tolist()[:2] == [4.0, 5.0] and built["i"].dtype == np.int64 and built["t"].iloc[2] == "c"


def test_ncu_grouped_numbers_are_read_in_one_cast_and_odd_ones_still_read(tmp_path, tiny_slabs):
    """Every cell written as ncu writes it by default (``"1,234"``, ``"1,234.50"``): a whole number
    first and a decimal later in the same slab, and cells with spaces around them, read by hand."""
    rows = [_row(0, "k", "1,000", "1,234", " 2,048 ", "7"), _row(1, "k", "1,000.50", "2,000,000", "4,096", "8")]
    m = read_ncu_csv(_file(tmp_path, rows)).metrics
    assert m["gpu__time_duration.sum"].tolist() == pytest.approx([1000e-6, 1000.5e-6], rel=1e-15)
    assert m["dram__bytes.sum"].tolist() == [1_234_000, 2_000_000_000]  # Kbyte -> B
    assert m["lts__t_bytes.sum"].dtype == np.int64 and m["lts__t_bytes.sum"].tolist() == [2048, 4096]


LOCALES = Path(__file__).parent / "data" / "ncu" / "t4_setfull_locales"


@pytest.mark.parametrize("name", ["C.raw.csv.gz", "en_IN.raw.csv.gz", "de_DE.raw.csv.gz", "fr_FR.raw.csv.gz"])
def test_columns_converted_side_by_side_give_the_profile_one_thread_gives(tmp_path, monkeypatch, name):
    """Large files convert and copy their columns on one thread per core: forced here on a real
    export (T4, ``--set full``, exported under four locales), in slabs of 4 kB, it reads the same."""
    import gzip

    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(gzip.decompress((LOCALES / name).read_bytes()))
    monkeypatch.setattr(csv_arrow, "SLAB_BYTES", 4096)
    one = read_ncu_csv(path)
    monkeypatch.setattr(csv_arrow, "THREADED_BYTES", 0)
    calls: list[int] = []
    add = csv_arrow.Columns.add

    def spy(self, table, pool=None):
        calls.append(pool is not None)
        add(self, table, pool)

    monkeypatch.setattr(csv_arrow.Columns, "add", spy)
    side_by_side = read_ncu_csv(path)
    assert calls and (all(calls) if (os.cpu_count() or 1) > 1 else not any(calls))
    pd.testing.assert_frame_equal(one.ids, side_by_side.ids)
    pd.testing.assert_frame_equal(one.metrics, side_by_side.metrics)
    assert one.metrics.select_dtypes("number").shape[1] > 100  # the numbers really were read

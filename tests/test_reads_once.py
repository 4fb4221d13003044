"""Each input file is opened once: its kind, its compression and its CSV layout are told from the same
bytes (roofline.readers.dispatch.head_of), and a small file is handed whole to the CSV reader.

The bundled DeepCAM set (12 one-metric ncu files) was opened three times a file before; the opens
and the stats around them were 0.4-0.6 ms of the set's 17 ms (benchmarks/results/bench_small_files.txt)."""

from __future__ import annotations

import builtins
import gzip
import io
from collections import Counter
from pathlib import Path

import pytest

from roofline import api
from roofline.readers import read_profile
from roofline.readers.dispatch import HEAD_BYTES, Head, head_of


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each file is opened (``open`` and ``Path.open``, which calls ``io.open``)."""
    counts: Counter[str] = Counter()
    real = io.open

    def counting(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, Path)):
            counts[str(Path(file).resolve())] += 1
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting)
    monkeypatch.setattr(io, "open", counting)
    return counts


def test_each_deepcam_file_is_opened_once(opened: Counter[str]) -> None:
    files, _ = api.example_files()
    table = read_profile(files, fp16="paper")
    assert len(table) > 0
    by_file = {str(f.resolve()): opened[str(f.resolve())] for f in files}
    assert by_file == dict.fromkeys(by_file, 1)


def test_head_of_a_small_file_is_the_whole_file(tmp_path: Path) -> None:
    small = tmp_path / "small.csv"
    small.write_bytes(b'"ID","Kernel Name"\n"0","k"\n')
    assert head_of(small) == Head(small.read_bytes(), whole=True)


def test_head_of_a_large_file_is_its_first_bytes(tmp_path: Path) -> None:
    large = tmp_path / "large.csv"
    data = bytes(range(256)) * ((2 << 20) // 256)  # 2 MiB: over the whole-file size (1 MiB)
    large.write_bytes(data)
    head = head_of(large)
    assert head is not None and not head.whole and head.data == data[:HEAD_BYTES]


def test_head_of_anything_but_a_regular_file_is_none(tmp_path: Path) -> None:
    assert head_of(tmp_path) is None
    assert head_of(tmp_path / "missing.csv") is None


def test_a_gzip_file_is_still_read_through_its_magic(tmp_path: Path) -> None:
    files, _ = api.example_files()
    plain = read_profile(files[0])
    packed = tmp_path / (files[0].name + ".csv.gz")
    packed.write_bytes(gzip.compress(files[0].read_bytes()))
    assert read_profile(packed).frame["kernel_name"].tolist() == plain.frame["kernel_name"].tolist()


@pytest.mark.parametrize("content, message", [(b"", "the file is empty")])
def test_an_empty_file_is_refused_as_before(tmp_path: Path, content: bytes, message: str) -> None:
    from roofline.errors import InputError

    empty = tmp_path / "empty.csv"
    empty.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_profile(empty)

"""Bad inputs raise typed errors that name the file (the CLI turns them into exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline.errors import InputError, MissingMetricsError
from roofline.readers import read_profile

DATA = Path(__file__).parent / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"


def _raises(path: Path, exc: type[Exception] = InputError, words: str = "") -> InputError:
    with pytest.raises(exc) as err:
        read_profile(path)
    text = str(err.value)
    assert str(path) in text, text
    assert words in text, text
    return err.value


def test_missing_file(tmp_path):
    _raises(tmp_path / "nope.csv", words="no such file")


def test_directory(tmp_path):
    _raises(tmp_path, words="directory")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    _raises(p, words="empty")


def test_whitespace_only_file(tmp_path):
    p = tmp_path / "blank.csv"
    p.write_text("\n\n  \n")
    _raises(p, words="empty")


def test_header_but_no_data(tmp_path):
    p = tmp_path / "header_only.csv"
    lines = V100_GEMM.read_text().splitlines(keepends=True)
    p.write_text("".join(lines[:11]))
    _raises(p, words="no data")


def test_cut_off_last_line(tmp_path):
    p = tmp_path / "cut.csv"
    text = V100_GEMM.read_text()
    p.write_text(text[: len(text) - 40])
    _raises(p, words="truncated")


def test_cut_off_raw_page(tmp_path):
    p = tmp_path / "cut_raw.csv"
    text = B200.read_text()
    p.write_text(text[: len(text) // 2])
    _raises(p, words="truncated")


def test_not_a_csv(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\nthis is not a profile\n")
    _raises(p, words="not an Nsight Compute CSV")


def test_binary_file(tmp_path):
    p = tmp_path / "blob.csv"
    p.write_bytes(bytes(range(256)) * 4)
    _raises(p, words="binary")


def test_html_saved_by_mistake(tmp_path):
    p = tmp_path / "page.csv"
    p.write_text("<!DOCTYPE html>\n<html><head><title>GitHub</title></head><body>ID,Kernel Name</body></html>\n")
    _raises(p, words="HTML")


def test_none_of_the_needed_metrics(tmp_path):
    p = tmp_path / "launch_only.csv"
    p.write_text(
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","launch__grid_size"\n'
        '"","","","","","","","","","","",""\n'
        '"0","1","a","h","k","1","7","(1, 1, 1)","(4, 1, 1)","0","8.0","4"\n'
    )
    err = _raises(p, MissingMetricsError, words="none of the metrics")
    assert "ncu --metrics gpu__time_duration.sum" in err.render()
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in err.render()  # SM 8.0's list


def test_unknown_architecture_is_read_not_refused(tmp_path):
    """An SM the formula table does not list keeps time, bytes and FP32 FLOPs; tensor work is unknown."""
    p = tmp_path / "pascal.csv"
    p.write_text(V100_GEMM.read_text().replace('"7.0","Command line', '"6.1","Command line'))
    same, other = read_profile(V100_GEMM).frame, read_profile(p).frame
    assert set(other["compute_capability"]) == {"6.1"}
    for col in ("time_s", "fp32_flops", "l1_bytes", "l2_bytes", "dram_bytes"):
        assert other[col].to_numpy() == pytest.approx(same[col].to_numpy(), rel=0, nan_ok=True), col
    gemm = other["kernel_name"].str.contains("tensorop").to_numpy()
    assert gemm.any() and other["tensor_flops"][gemm].isna().all()
    assert (same["tensor_flops"][gemm] > 0).all()  # SM 7.0 counts it: 512 x tensor instructions
    assert "SM 6.1 is not in the formula table" in " ".join(read_profile(p).warnings)


def test_unknown_fp16_convention():
    with pytest.raises(InputError, match="FP16 convention"):
        read_profile(V100_GEMM, fp16="half")

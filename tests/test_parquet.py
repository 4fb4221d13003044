"""Kernel tables as Parquet (schema roofline.kernels/1, as the .kernels.json file): `--parquet`, reading it back, bad files.

Ground truth: real exports under tests/data/ncu (provenance in each folder).
- V100 CUTLASS GEMM details page: 11 launches; 6 SIMT GEMMs of 17,182,415,257,600 FLOPs, 1 tensor-op GEMM
  of 17,180,288,614,400, 4 InitializeMatrix launches of 0 FLOPs; int_ops not collected (unknown).
- B200 raw page (torch SDPA flash): 16 launches, no FLOP counters (FLOPs unknown, not zero), 464 raw
  metrics of three types (346 int64, 112 float64, 6 text).
- The paper's DeepCAM set: 12 one-metric ncu 2020 files + the authors' machine file (fp16 "paper").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from roofline import api, kernels
from roofline.cli.app import main
from roofline.errors import InputError
from roofline.readers import kernel_parquet, read_profile

DATA = Path(__file__).parent / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
SIMT_FLOPS = 17182415257600
TENSOR_FLOPS = 17180288614400


def _round_trip(table: kernels.KernelTable, tmp_path: Path) -> kernels.KernelTable:
    path = tmp_path / "t.parquet"
    path.write_bytes(kernel_parquet.to_bytes(table))
    return read_profile(path)


@pytest.mark.parametrize("source", [V100_GEMM, B200], ids=["v100-details", "b200-raw"])
def test_round_trip_keeps_every_value_dtype_and_unknown(tmp_path: Path, source: Path) -> None:
    table = api.read(source)
    back = _round_trip(table, tmp_path)
    pd.testing.assert_frame_equal(back.frame, table.frame)  # values, dtypes, <NA> and NaN where they were
    # (the metric names' Index is object or str depending on the reader: not compared)
    pd.testing.assert_frame_equal(back.metrics, table.metrics, check_column_type=False)
    assert [str(kernels.widened(back.frame)[c.name].dtype) for c in kernels.COLUMNS] == [c.dtype for c in kernels.COLUMNS]
    assert (back.sources, back.warnings, back.fp16_convention) == (table.sources, table.warnings, "ncu")
    assert dict(back.column_notes) == dict(table.column_notes) and back.column_notes


def test_round_trip_numbers_of_the_v100_gemm(tmp_path: Path) -> None:
    back = kernels.widened(_round_trip(api.read(V100_GEMM), tmp_path).frame)
    assert len(back) == 11
    flops = sorted(back["flops"].tolist())
    assert flops == [0.0] * 4 + [TENSOR_FLOPS] + [SIMT_FLOPS] * 6
    assert back["int_ops"].isna().all()  # not collected: unknown, not zero
    assert back["phase"].isna().all() and back["launch_id"].tolist() == list(range(11))


def test_unknown_is_null_in_the_file_and_nan_after(tmp_path: Path) -> None:
    """B200 has no FLOP counters: null in Parquet (what pandas, polars and DuckDB see), NaN when read back."""
    table = api.read(B200)
    path = tmp_path / "b200.parquet"
    path.write_bytes(kernel_parquet.to_bytes(table))
    data = pq.read_table(path)
    assert data.column("flops").null_count == 16 and data.column("fp32_flops").null_count == 16
    assert data.column("time_s").null_count == 0
    assert data.column("time_s").to_pylist() == table.frame["time_s"].tolist()
    assert data.schema.field("launch_id").type == pa.int64() and data.schema.field("estimated").type == pa.bool_()
    back = kernels.widened(read_profile(path).frame)
    assert back["flops"].isna().all() and np.isnan(back["fp32_flops"].to_numpy()).all()
    assert back["time_s"].sum() == pytest.approx(table.frame["time_s"].sum(), rel=0, abs=0)


def test_metadata_holds_schema_units_and_provenance(tmp_path: Path) -> None:
    table = api.read(B200)
    path = tmp_path / "b200.parquet"
    path.write_bytes(kernel_parquet.to_bytes(table))
    meta = {k.decode(): v.decode() for k, v in pq.read_metadata(path).metadata.items()}
    assert meta["roofline:schema"] == "roofline.kernels/1"
    assert json.loads(meta["roofline:units"]) == {c.name: c.unit for c in kernels.COLUMNS}
    assert json.loads(meta["roofline:units"])["time_s"] == "s" and json.loads(meta["roofline:units"])["dram_bytes"] == "B"
    assert meta["roofline:fp16_convention"] == "ncu" and meta["roofline:metric_prefix"] == "metric:"
    assert json.loads(meta["roofline:sources"]) == [str(B200)]
    assert json.loads(meta["roofline:warnings"]) == list(table.warnings)
    assert set(json.loads(meta["roofline:column_notes"])) == set(table.column_notes)
    import roofline

    assert meta["roofline:version"] == roofline.__version__
    names = pq.read_schema(path).names
    assert names[: len(kernels.COLUMNS)] == list(kernels.COLUMN_NAMES)
    assert len(names) == len(kernels.COLUMNS) + 464 and "metric:dram__bytes.sum" not in names  # B200 has none
    assert "metric:gpu__time_duration.sum" in names


def test_plain_pandas_reads_the_file(tmp_path: Path) -> None:
    table = api.read(V100_GEMM)
    path = tmp_path / "v100.parquet"
    path.write_bytes(kernel_parquet.to_bytes(table))
    frame = pd.read_parquet(path)
    assert frame["flops"].sum() == 6 * SIMT_FLOPS + TENSOR_FLOPS
    assert frame["metric:dram__bytes.sum"].tolist() == table.metrics["dram__bytes.sum"].tolist()


def _json_of(tmp_path: Path, name: str, *args: str) -> str:
    out = tmp_path / f"{name}.json"
    assert main(["analyze", *args, "--json", str(out), "-q"]) == 0
    return out.read_text()


@pytest.mark.parametrize("source", [V100_GEMM, B200], ids=["v100-details", "b200-raw"])
def test_analyze_of_the_parquet_is_the_analyze_of_the_export(tmp_path: Path, source: Path, capsys) -> None:
    table = tmp_path / "launches.parquet"
    first = _json_of(tmp_path, "a", str(source), "--parquet", str(table))
    again = _json_of(tmp_path, "b", str(table))
    assert json.loads(first)["kernels"] and first == again
    capsys.readouterr()
    assert main(["analyze", str(source), "--top", "5"]) == 0
    printed = capsys.readouterr().out
    assert main(["analyze", str(table), "--top", "5"]) == 0
    assert capsys.readouterr().out == printed  # guidance too: the raw metrics came back


def test_analyze_of_the_paper_example_from_parquet(tmp_path: Path) -> None:
    profiles, machine = api.example_files()
    table = tmp_path / "deepcam.parquet"
    args = ["--machine", str(machine), "--fp16", "paper"]
    first = _json_of(tmp_path, "a", *map(str, profiles), *args, "--parquet", str(table))
    assert _json_of(tmp_path, "b", str(table), *args) == first
    assert read_profile(table).fp16_convention == "paper" and len(read_profile(table)) == 35


def test_parquet_output_rules(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.parquet"
    assert main(["analyze", str(V100_GEMM), "--parquet", "-", "-q"]) == 2
    assert "cannot go to standard output" in capsys.readouterr().err
    assert main(["analyze", str(V100_GEMM), "--parquet", str(out), "-q"]) == 0
    before = out.read_bytes()
    assert main(["analyze", str(B200), "--parquet", str(out), "-q"]) == 2  # exists: refused without --force
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
    assert main(["analyze", str(out), "--parquet", str(out), "--force", "-q"]) == 2  # never over an input
    assert "one of the inputs" in capsys.readouterr().err and out.read_bytes() == before
    assert main(["analyze", str(B200), "--parquet", str(out), "--force", "-q"]) == 0
    assert len(read_profile(out)) == 16


def test_a_parquet_file_that_is_not_ours_is_refused_clearly(tmp_path: Path, capsys) -> None:
    foreign = tmp_path / "other.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(foreign)
    with pytest.raises(InputError) as err:
        read_profile(foreign)
    assert str(foreign) in str(err.value) and "roofline:schema" in str(err.value)
    assert main(["analyze", str(foreign)]) == 2
    text = capsys.readouterr().err
    assert "not a roofline kernel table" in text and "Traceback" not in text


def test_a_newer_schema_and_a_broken_file_are_refused(tmp_path: Path) -> None:
    data = kernel_parquet.to_arrow(api.read(V100_GEMM))
    newer = tmp_path / "newer.parquet"
    meta = {**data.schema.metadata, b"roofline:schema": b"roofline.kernels/2"}
    kernel_parquet.write(data.replace_schema_metadata(meta), newer)
    with pytest.raises(InputError, match="newer than this roofline reads") as err:
        read_profile(newer)
    assert str(newer) in str(err.value) and "upgrade" in str(err.value)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + b"\x00" * 100)
    with pytest.raises(InputError, match="not a readable Parquet file"):
        read_profile(broken)


def test_parquet_on_standard_input_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    import io
    import sys

    data = kernel_parquet.to_bytes(api.read(V100_GEMM))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["analyze", "-"]) == 2
    assert "cannot be read from a pipe" in capsys.readouterr().err


def test_folders_take_parquet_tables_and_skip_foreign_ones(tmp_path: Path) -> None:
    (tmp_path / "v100.parquet").write_bytes(kernel_parquet.to_bytes(api.read(V100_GEMM)))
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "other.parquet")
    table = read_profile(tmp_path)
    assert len(table) == 11 and table.frame["flops"].sum() == 6 * SIMT_FLOPS + TENSOR_FLOPS
    assert any("other.parquet" in w and "not a roofline kernel table" in w for w in table.warnings)


def test_parquet_beside_a_profile_is_a_run_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "b200.parquet"
    path.write_bytes(kernel_parquet.to_bytes(api.read(B200)))
    both = read_profile([V100_GEMM, path])
    assert len(both) == 11 + 16 and both.frame["run"].nunique() == 2


def test_the_doc_names_every_metadata_key_and_dtype() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "parquet.md").read_text()
    for key in kernel_parquet.KEYS.values():
        assert f"| `{key}` |" in doc
    for dtype, arrow in kernel_parquet.ARROW_TYPES.items():
        assert f"| `{dtype}` (" in doc and f"| {arrow} " in doc.replace("string (UTF-8)", "string ")

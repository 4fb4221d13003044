"""Small ncu files read fast: plainly quoted details pages split without a parser, and merged on
arrays. Both ways into the details reader (plain rows, pandas' parser) must give the same
table; the numbers asserted are the real DeepCAM files' own (tests/data/ncu/v100_deepcam_lamb,
PROVENANCE.md there) and the V100 GEMM export's (tests/data/ncu/v100_cutlass_gemm)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.errors import InputError
from roofline.readers.ncu.combine import merge_profiles, split_runs
from roofline.readers.ncu.csv_export import read_ncu_csv
from roofline.readers.ncu.details import NA_TEXT, read_details
from roofline.readers.ncu.layout import plain_rows, sniff

DATA = Path(__file__).parent / "data" / "ncu"
DEEPCAM = DATA / "v100_deepcam_lamb"
DRAM = DEEPCAM / "out.dram__bytes.sum"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
CLEANUP = "cleanup(float*, float*, float*, float*, bool, int)"


def _both_ways(path: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """ids and metrics read from plain rows and, the rows withheld, through pandas' parser."""
    layout = sniff(path)
    assert layout.rows is not None, "expected a plainly quoted page"
    fast, parsed = read_details(layout), read_details(replace(layout, rows=None))
    assert fast.units == parsed.units and list(fast.units) == list(parsed.units)
    assert fast.warnings == parsed.warnings
    return fast.ids, parsed.ids, fast.metrics, parsed.metrics


def _assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    pd.testing.assert_frame_equal(a, b, check_exact=True, check_column_type=False)


def _rewrite(tmp_path: Path, name: str, src: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    """A copy of ``src`` whose data rows (parsed) ``edit`` changes in place; every value quoted, as ncu writes."""
    lines = src.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"')) + 1
    header = next(csv.reader([lines[start - 1]]))
    rows = [next(csv.reader([line])) for line in lines[start:] if line.strip()]
    edit(rows, {c: i for i, c in enumerate(header)})
    out = tmp_path / name
    out.write_text("".join(lines[:start]) + "".join(",".join(f'"{v}"' for v in r) + "\n" for r in rows))
    return out


def test_na_text_is_what_pandas_reads_as_missing():
    # The parser itself is the truth: every NA_TEXT value is missing, look-alikes are not.
    others = ["none", "-", "0", "na ", " NA", "N/a", "nil", "#NA!"]
    text = "v\n" + "".join(f'"{v}"\n' for v in [*sorted(NA_TEXT), *others])
    values = pd.read_csv(io.StringIO(text), dtype=str, na_values=["n/a"], skip_blank_lines=False)["v"]
    assert values.iloc[:len(NA_TEXT)].isna().all()
    assert values.iloc[len(NA_TEXT):].tolist() == others


def test_plain_rows_split_only_what_a_parser_would_split_alike():
    assert plain_rows(b'"0","a, b","x"\r\n\n"1","","y"\n', 3) == [["0", "a, b", "x"], ["1", "", "y"]]
    assert plain_rows(b'"0","a ""q"" b","x"\n', 3) is None  # a quote inside a value
    assert plain_rows(b'"0","a","x","y"\n"1"\n', 3) is None  # rows of 4 and 1 values: 3 on average
    assert plain_rows(b'"0","a","x"\n==PROF== Disconnected\n', 3) is None  # junk after the table
    assert plain_rows(b'"0","a","x"\r"1","b","y"\n', 3) is None  # a bare carriage return
    assert plain_rows(b'0,a,x\n', 3) is None  # unquoted
    assert plain_rows('"0","\u00e9","x"\n'.encode("latin-1"), 3) is None  # not UTF-8
    assert plain_rows(b'"\n"""\n', 1) is None  # lone quotes are not values


@pytest.mark.parametrize("path", [DRAM, DEEPCAM / "out.sm__cycles_elapsed.avg.per_second", V100_GEMM,
                                  DATA / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"])
def test_real_pages_read_alike_both_ways(path):
    ids_fast, ids_parsed, metrics_fast, metrics_parsed = _both_ways(path)
    _assert_same(ids_fast, ids_parsed)
    _assert_same(metrics_fast, metrics_parsed)


def test_deepcam_page_by_hand():
    p = read_ncu_csv(DRAM)
    assert p.ids["launch_id"].tolist() == list(range(35))
    assert p.ids["kernel_name"].iloc[5] == CLEANUP
    assert p.ids["process_id"].iloc[0] == 60518 and p.ids["process_name"].iloc[0] == "python3.7"
    assert p.ids["stream"].iloc[0] == 7 and p.ids["device"].isna().all() and p.ids["grid"].isna().all()
    m = p.metrics["dram__bytes.sum"]
    assert m.iloc[0] == 6976 and m.iloc[5] == 10176 and m.iloc[34] == 27392832
    assert p.units == {"dram__bytes.sum": "byte"}
    clock = read_ncu_csv(DEEPCAM / "out.sm__cycles_elapsed.avg.per_second").metrics.iloc[:, 0]
    assert clock.iloc[34] == 1303905121.03  # cycle/second: already SI


def test_edge_values_read_alike_both_ways(tmp_path):
    def edit(rows, col):  # type: ignore[no-untyped-def]
        rows[1][col["Metric Value"]] = "n/a"  # missing
        rows[2][col["Process ID"]] = ""  # unknown process
        rows[3][col["Kernel Name"]] = "None"  # read as missing, as pandas does
        rows[4][col["Metric Value"]] = "1.5e3"
        rows[5][col["Metric Unit"]] = "Kbyte"
        rows.insert(7, list(rows[6]))  # listed twice: the first kept, with a warning
        rows[7][col["Metric Value"]] = "999"
    ids_fast, ids_parsed, metrics_fast, metrics_parsed = _both_ways(_rewrite(tmp_path, "edges.csv", DRAM, edit))
    _assert_same(ids_fast, ids_parsed)
    _assert_same(metrics_fast, metrics_parsed)
    m = metrics_fast["dram__bytes.sum"]
    assert np.isnan(m.iloc[1]) and m.iloc[4] == 1500 and m.iloc[5] == 10176e3 and m.iloc[6] == 7104
    assert pd.isna(ids_fast["process_id"].iloc[2]) and pd.isna(ids_fast["kernel_name"].iloc[3])
    warnings = read_details(sniff(tmp_path / "edges.csv")).warnings
    assert warnings == ("edges.csv: metrics listed twice for a launch with different values (first value kept): "
                        "dram__bytes.sum",)


def test_text_metric_and_european_numbers_read_alike_both_ways(tmp_path):
    def text(rows, col):  # type: ignore[no-untyped-def]
        for r in rows[:4]:
            r[col["Metric Value"]] = "CachePreferNone"
    ids_fast, ids_parsed, metrics_fast, metrics_parsed = _both_ways(_rewrite(tmp_path, "text.csv", DRAM, text))
    _assert_same(metrics_fast, metrics_parsed)
    assert metrics_fast["dram__bytes.sum"].dtype == "string"  # one text value makes the metric text
    assert metrics_fast["dram__bytes.sum"].iloc[0] == "CachePreferNone"
    assert metrics_fast["dram__bytes.sum"].iloc[5] == "10176"

    def european(rows, col):  # type: ignore[no-untyped-def]
        rows[0][col["Metric Value"]] = "6.976,00"
        rows[1][col["Metric Value"]] = "0,5"
    ids_fast, ids_parsed, metrics_fast, metrics_parsed = _both_ways(_rewrite(tmp_path, "eu.csv", DRAM, european))
    _assert_same(metrics_fast, metrics_parsed)
    assert metrics_fast["dram__bytes.sum"].iloc[:2].tolist() == [6976.0, 0.5]


def test_v100_gemm_page_with_thousands_separators_by_hand():
    p = read_ncu_csv(V100_GEMM)
    assert p.metrics["dram__bytes.sum"].iloc[0] == 837_859_712
    assert p.ids["compute_capability"].iloc[0] == "7.0" and p.ids["grid"].iloc[0] == "(1280, 1280, 1)"
    assert p.ids["process_id"].iloc[0] == 24103 and p.ids["device"].iloc[0] == 0


def test_prof_lines_after_a_details_table_keep_the_identities(tmp_path):
    # The parser reads the page (a ==PROF== line is not plain); the launches keep their names.
    path = tmp_path / "tail.csv"
    path.write_text(DRAM.read_text() + "==PROF== Disconnected from process 60518\n")
    assert sniff(path).rows is None
    p = read_ncu_csv(path)
    assert p.ids["launch_id"].tolist() == list(range(35))
    assert p.ids["kernel_name"].iloc[5] == CLEANUP and p.ids["process_id"].iloc[5] == 60518
    _assert_same(p.ids, read_ncu_csv(DRAM).ids)
    assert p.metrics["dram__bytes.sum"].iloc[0] == 6976


@pytest.mark.parametrize("launch_id", ["2.5", "1234567890123456789012"])
def test_launch_ids_that_are_not_whole_int64_numbers_are_refused(tmp_path, launch_id):
    def edit(rows, col):  # type: ignore[no-untyped-def]
        rows[2][col["ID"]] = launch_id
    with pytest.raises(InputError, match="launch IDs that are not whole numbers"):
        read_ncu_csv(_rewrite(tmp_path, "ids.csv", DRAM, edit))


def test_the_deepcam_set_merges_by_launch_with_every_metric():
    profiles = [read_ncu_csv(f) for f in sorted(DEEPCAM.glob("out.*"))]
    runs = split_runs(profiles)
    assert [len(r) for r in runs] == [12]
    merged = merge_profiles(runs[0])
    assert len(merged) == 35 and len(merged.metrics.columns) == 12
    assert merged.metrics["dram__bytes.sum"].iloc[0] == 6976
    assert merged.metrics["sm__cycles_elapsed.avg"].iloc[34] == 56394.38
    assert merged.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"].iloc[34] == 2282496
    assert merged.ids["kernel_name"].iloc[5] == CLEANUP
    assert merged.ids["process_id"].iloc[0] == profiles[0].ids["process_id"].iloc[0]


def test_merge_aligns_launches_given_in_another_order(tmp_path):
    shuffled = _rewrite(tmp_path, "out.dram__bytes.sum", DRAM, lambda rows, col: rows.reverse())
    lts = read_ncu_csv(DEEPCAM / "out.lts__t_bytes.sum")
    merged = merge_profiles([lts, read_ncu_csv(shuffled)])
    assert merged.ids["launch_id"].tolist() == list(range(35))  # the first input's order
    assert merged.metrics["dram__bytes.sum"].iloc[[0, 5, 34]].tolist() == [6976, 10176, 27392832]
    assert merged.metrics["lts__t_bytes.sum"].tolist() == lts.metrics["lts__t_bytes.sum"].tolist()


def test_merge_fills_identities_only_one_input_knows(tmp_path):
    lines = DRAM.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    header = lines[start].rstrip("\n") + ',"CC","Grid Size"\n'
    rows = [line.rstrip("\n") + ',"7.0","(80, 1, 1)"\n' for line in lines[start + 1:] if line.strip()]
    known = tmp_path / "cc.csv"
    known.write_text("".join(lines[:start]) + header + "".join(rows))
    base = read_ncu_csv(DEEPCAM / "out.lts__t_bytes.sum")
    merged = merge_profiles([base, read_ncu_csv(known)])
    assert merged.ids["compute_capability"].tolist() == ["7.0"] * 35
    assert merged.ids["grid"].tolist() == ["(80, 1, 1)"] * 35
    assert merged.ids["process_id"].tolist() == base.ids["process_id"].tolist()  # the first input's
    assert base.ids["compute_capability"].isna().all()  # the input itself is not changed


def test_frames_own_their_values():
    # Setting a value in what the readers return changes that frame only: no read-only views of
    # another frame's columns, no values shared with the inputs of a merge.
    a, b = read_ncu_csv(DRAM), read_ncu_csv(DEEPCAM / "out.lts__t_bytes.sum")
    merged = merge_profiles([a, b])
    merged.metrics.iloc[0, 0] = -1.0
    merged.ids.loc[0, "launch_id"] = 99
    merged.ids.loc[0, "device"] = 3
    assert a.metrics.iloc[0, 0] == 6976 and a.ids["launch_id"].iloc[0] == 0 and pd.isna(a.ids["device"].iloc[0])
    parsed = read_details(replace(sniff(V100_GEMM), rows=None))
    parsed.ids.loc[0, "process_id"] = 1
    parsed.ids.loc[0, "stream"] = 1
    parsed.ids.loc[0, "device"] = 1
    assert parsed.ids.loc[0, ["process_id", "stream", "device"]].tolist() == [1, 1, 1]

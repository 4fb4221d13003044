"""Identity text stays encoded from the reader to the views (issue 34, item 4): the kernel name, phase,
operator, module, run, source... of a table of launches are categoricals through every step that
works on launches (several runs read together, ``--depth``, Parquet read back, files of one run
merged), never decoded into one string per launch; their values are the text a decoded table holds.

On real exports in tests/data: the H100 examples (nine runs, with module paths), the H200 SGLang pair
(two runs), the V100 DeepCAM set (twelve per-metric files of one run) and a B200 table written before
the lean table (tests/data/tables).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import kernels
from roofline.attribution import module_at_depth
from roofline.readers import kernel_json, kernel_parquet, read_profile
from roofline.readers.dispatch import profile_files, read_one
from roofline.readers.ncu.combine import merge_profiles, run_labels

NCU = Path(__file__).parent / "data" / "ncu"
H100 = NCU / "h100_80gb_hbm3_examples"  # nine runs, module paths
H200 = NCU / "h200_setfull_sglang_moe_fa3"  # two runs
DEEPCAM = NCU / "v100_deepcam_lamb"  # twelve files of one run (one metric each)
B200 = NCU / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
OLD_PARQUET = Path(__file__).parent / "data" / "tables" / "b200_sdpa_flash_before_lean.parquet"


def text(values: pd.Series) -> list[object]:
    """Values as Python text, None where missing (encoded or not)."""
    return [None if pd.isna(v) else str(v) for v in values.astype(object)]


def assert_encoded(frame: pd.DataFrame) -> None:
    """Every identity column present is a categorical of text, its categories sorted and distinct."""
    for name in kernels.ENCODED_COLUMNS:
        if name in frame.columns:
            assert kernels.is_encoded(frame[name]), name
            categories = frame[name].cat.categories.tolist()
            assert categories == sorted(set(categories)), name


def assert_same_table(got: pd.DataFrame, want: pd.DataFrame, *, but: tuple[str, ...] = ()) -> None:
    """``got`` (lean) holds what the decoded, widened ``want`` holds, column by column (``but`` those)."""
    whole = kernels.widened(want)
    assert len(got) == len(whole)
    for c in kernels.COLUMNS:
        if c.name in but:
            continue
        if c.name not in got.columns:
            assert c.name in kernels.ABSENT_ALLOWED and whole[c.name].isna().all(), c.name
        elif c.name in kernels.ENCODED_COLUMNS:
            assert text(got[c.name]) == text(whole[c.name]), c.name
        else:
            pd.testing.assert_series_equal(kernels.widened(got)[c.name].reset_index(drop=True),
                                           whole[c.name].reset_index(drop=True), check_names=False)


def test_stacked_tables_keep_identities_encoded_with_the_union_of_their_texts() -> None:
    """Tables of different profiles (different counters) and one built from records (plain text)
    stack into one encoded table: the same values as the tables decoded and stacked, a count column
    one of them lacks unknown in its rows, one that none holds left out."""
    parts = [read_profile(H200).frame, read_profile(B200).frame,
             kernels.from_records([{"kernel_name": "by hand", "time_s": 1e-3, "dram_bytes": 1e6, "phase": "forward"}])]
    assert not kernels.is_encoded(parts[2]["kernel_name"])
    stacked = kernels.concat(parts)
    assert_encoded(stacked)
    reference = pd.concat([kernels.widened(kernels.validate(p)) for p in parts], ignore_index=True)
    assert_same_table(stacked, reference)
    only_some = [c for c in kernels.ABSENT_ALLOWED if (c in parts[0].columns) != (c in parts[1].columns)]
    assert only_some and all(c in stacked.columns for c in only_some)  # present where one input has it
    none = [c for c in kernels.ABSENT_ALLOWED if not any(c in p.columns for p in parts[:2])
            and parts[2][c].isna().all()]
    assert none and not any(c in stacked.columns for c in none)  # still known-missing


def test_runs_read_together_are_encoded_and_each_run_reads_as_alone() -> None:
    both = read_profile(H100)
    assert_encoded(both.frame)
    runs = both.frame["run"].astype(object)
    assert runs.nunique() == 9
    for label in runs.unique():
        rows = both.frame[runs == label].reset_index(drop=True)
        files = [f for f in profile_files(H100) if f.name.startswith(f"{label}.")]
        alone = read_profile(files).frame
        assert_same_table(rows, alone, but=("run",))


def test_kernel_table_files_of_several_runs_are_relabelled_on_their_categories(tmp_path: Path) -> None:
    """A kernel-table file that names its runs keeps them after its own label (``x/a``), encoded; a
    profile of one run is named by its label alone."""
    runs = read_profile(H200)
    saved = [tmp_path / "moe.kernels.json", tmp_path / "moe.parquet"]
    saved[0].write_text(kernel_json.to_json(runs))
    saved[1].write_bytes(kernel_parquet.to_bytes(runs))
    read = read_profile([*saved, B200])
    assert_encoded(read.frame)
    own = text(runs.frame["run"])
    assert len(set(own)) == 2
    alone = read_profile(B200).frame
    assert kernels.widened(alone)["run"].isna().all()
    label = run_labels([[str(B200)], [str(saved[0])], [str(saved[1])]])  # raw profiles first, then table files
    want = [label[0]] * len(alone) + [f"{label[1]}/{r}" for r in own] + [f"{label[2]}/{r}" for r in own]
    assert text(read.frame["run"]) == want


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_module_paths_cut_to_a_depth_stay_encoded(depth: int) -> None:
    frame = read_profile(H100).frame
    paths = text(frame["module"])
    assert sum(p is not None for p in paths) > 0
    cut = kernels.cut_modules(frame, depth)
    assert_encoded(cut)
    assert text(cut["module"]) == [None if p is None else ",".join(dict.fromkeys(module_at_depth(q, depth) for q in p.split(",")))
                                   for p in paths]
    assert text(frame["module"]) == paths  # the caller's frame keeps its paths
    by_module = kernels.aggregate(frame, "module", depth)
    plain = kernels.aggregate(kernels.widened(frame), "module", depth)  # from text per launch: the same rows
    pd.testing.assert_frame_equal(by_module, plain)


def test_parquet_reads_identities_as_dictionaries_not_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Parquet table reads back encoded straight from the file's dictionaries: what the lean table
    is made from already holds no text per launch; the values are the table written."""
    table = read_profile(H100)
    path = tmp_path / "h100.parquet"
    path.write_bytes(kernel_parquet.to_bytes(table))
    lean = kernels.lean
    seen: list[pd.DataFrame] = []

    def checked(frame: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
        seen.append(frame)
        assert_encoded(frame)  # encoded before the lean form is asked for: nothing decoded, nothing re-encoded
        return lean(frame, **kwargs)

    monkeypatch.setattr(kernel_parquet.kernels, "lean", checked)
    for file in (path, OLD_PARQUET):
        back = kernel_parquet.read(file)
        assert_encoded(back.frame)
    assert len(seen) == 2
    back = kernel_parquet.read(path)
    assert_same_table(back.frame, table.frame)
    old = kernel_parquet.read(OLD_PARQUET)
    assert_same_table(old.frame, read_profile(B200).frame, but=("source",))


def test_files_of_one_run_merge_without_decoding_their_identities() -> None:
    """Twelve per-metric files of one run merged by launch: the merged ids stay encoded."""
    profiles = [read_one(f) for f in sorted(DEEPCAM.glob("out.*"))]
    merged = merge_profiles(profiles)
    for name in ("kernel_name", "compute_capability", "grid", "block"):
        if name in merged.ids.columns and kernels.is_encoded(profiles[0].ids[name]):
            assert kernels.is_encoded(merged.ids[name]), name
    assert len(profiles) == 12
    assert_encoded(read_profile(DEEPCAM).frame)


def test_filling_text_from_another_input_keeps_it_encoded() -> None:
    """An identity the first input lacks for some launches is filled from another's, encoded: codes
    into the two inputs' texts, the values as a decoded fill would give."""
    from roofline.readers.ncu.combine import _filled_text

    base = kernels.encoded_text(["b", "a"], np.array([0, -1, 1, -1]))
    other = pd.array(["x", "y", None, "a"], dtype="string")
    fill = np.array([False, True, False, True])
    got = _filled_text(base, other, fill)
    assert kernels.is_encoded(got) and got.categories.tolist() == ["a", "b", "y"]
    assert text(pd.Series(got)) == ["b", "y", "a", "a"]


def test_the_fullest_names_of_a_report_beside_its_export_stay_encoded() -> None:
    """An export printing short names (ncu 2026) first, its report (the fullest forms) second: the
    merged table names each launch as the report does, encoded, its categories only the names kept."""
    pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python (pip install ncu-report)")
    folder = NCU / "h200_sections_rep_and_details_export"
    report, export = folder / "ncu.ncu-rep", folder / "ncu_raw.csv"
    export_first = read_profile([export, report]).frame
    assert_encoded(export_first)
    report_names = text(read_profile(report).frame["kernel_name"])
    assert text(export_first["kernel_name"]) == report_names != text(read_profile(export).frame["kernel_name"])
    assert export_first["kernel_name"].cat.categories.tolist() == sorted(set(report_names))
    merged = merge_profiles([read_one(export), read_one(report)]).ids["kernel_name"]  # before counting
    assert kernels.is_encoded(merged) and text(merged) == report_names


def test_the_drilldown_keys_module_and_phase_on_their_codes() -> None:
    """The report's comparison by module, operator and phase joins module and phase per distinct pair:
    encoded, the values the launches' decoded texts give."""
    from roofline.views.report.drilldown import _JOIN, _NONE, _module_in_phase

    table = read_profile(H100)
    joined = _module_in_phase(table).frame["phase"]
    assert kernels.is_encoded(joined)
    want = [f"{_NONE if m is None else m}{_JOIN}{_NONE if p is None else p}"
            for m, p in zip(text(table.frame["module"]), text(table.frame["phase"]))]
    assert text(joined) == want and len(set(want)) > 2
    assert text(table.frame["phase"]) != want  # the caller's table keeps its phases


def test_same_text_tells_alike_columns_without_encoding_and_never_says_alike_wrongly():
    """The quick look that lets files of one run skip encoding their names: True only for the same
    texts in the same places (an unknown name where the other has one is not alike)."""
    from roofline.readers.ncu.matching import same_text

    a = pd.array(["k1", None, "k2"], dtype="string")
    assert same_text(a, pd.array(["k1", None, "k2"], dtype="string"))
    assert not same_text(a, pd.array(["k1", "k2", "k2"], dtype="string"))
    assert not same_text(a, pd.array(["k1", None], dtype="string"))
    cat = pd.Categorical(["k1", "k2", "k1"])
    assert same_text(cat, pd.Categorical(["k1", "k2", "k1"]))
    assert not same_text(cat, pd.Categorical(["k1", "k2", "k2"]))
    assert not same_text(cat, pd.array(["k1", "k2", "k1"], dtype="string"))  # could not tell: encoded the long way

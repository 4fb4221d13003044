"""No Nsight Compute metric is named outside ``counting/``, ``readers/ncu/`` and ``profiling/`` (issue 34,
item 2): the formula table (:mod:`roofline.counting`) names them, the ncu reader puts what to collect in
the kernel table (``KernelTable.metric_hints``), and the analysis, its views and the projection say it
from there; the kernel-table docs take each column's counters from counting too. Yet a note shown to
the user still names the metric to collect.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from roofline import api
from roofline.analysis import analyze
from roofline.counting import NCU_HINTS
from roofline.errors import MissingMetricsError
from roofline.kernels import KernelTable, from_records
from roofline.views.chart.rows import undrawn_kernels

SRC = Path(__file__).resolve().parents[1] / "src" / "roofline"
NCU = Path(__file__).parent / "data" / "ncu"
#: The issue's test (issue 34, item 2): a metric's unit prefix, as ncu spells it (and the device
#: attributes, launch statistics and other units ncu names the same way).
METRIC = re.compile(r"(sm|smsp|l1tex|lts|dram|gpu|gpc|device|launch|fbpa|tpc|idc)__")
#: The folders that name metrics: the formula table, the Nsight Compute wing, and running ncu.
NAMING = ("counting", "readers/ncu", "profiling")
#: Files elsewhere that may name one, each with why.
EXCEPTIONS = {
    "machine/specs.py": "declared data: a GPU spec's provenance quotes the device attributes and L2 metrics a real "
                        "report in tests/data recorded, as evidence for its number; quoted, never read from a profile",
}


def _outside_naming() -> list[Path]:
    """Every module of the package outside :data:`NAMING` and :data:`EXCEPTIONS`."""
    return [p for p in sorted(SRC.rglob("*.py"))
            if not any(p.is_relative_to(SRC / folder) for folder in NAMING)
            and p.relative_to(SRC).as_posix() not in EXCEPTIONS]
#: A render profile of an old ncu (no units row) that has time and bytes but no FLOP counter.
NO_FLOPS = NCU / "rtx5060_rep_old_ncu_no_units" / "profile.raw.csv"
FLOP_HINT = NCU_HINTS["flops"]


def test_no_metric_name_outside_counting_the_ncu_wing_and_profiling() -> None:
    found = [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
             for path in _outside_naming()
             for number, line in enumerate(path.read_text().splitlines(), 1) if METRIC.search(line)]
    assert found == []


def test_the_rule_covers_every_package_and_its_exceptions_are_real() -> None:
    """Every package but the naming ones is scanned (analysis, views and guidance, the issue's three,
    among them), and each exception still names a metric (else it is no longer needed)."""
    scanned = {p.relative_to(SRC).parts[0] for p in _outside_naming()}
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert packages - scanned == {"counting", "profiling"}
    assert {"analysis", "views", "guidance", "kernels", "projection", "machine", "bench", "readers", "api"} <= scanned
    assert any(p.is_relative_to(SRC / "readers") for p in _outside_naming())  # readers/ but its ncu wing
    for name in EXCEPTIONS:
        assert METRIC.search((SRC / name).read_text()), name


def test_kernel_table_docs_take_the_counters_from_counting() -> None:
    """The schema says what a column means; the formula table says which counters supply it."""
    from roofline.counting.hints import COLUMN_COUNTERS
    from roofline.kernels import COLUMNS, describe_columns

    assert not any(METRIC.search(c.description) for c in COLUMNS)
    assert COLUMN_COUNTERS["dram_bytes"] == "dram__bytes.sum"
    assert "| bytes to and from DRAM/HBM (Nsight Compute: dram__bytes.sum)" in describe_columns(COLUMN_COUNTERS)
    assert "dram__" not in describe_columns()


def test_projection_names_what_to_collect_from_the_table() -> None:
    """A projection's note on an uncounted FLOP component names the metrics the table's reader gave
    (:attr:`KernelTable.metric_hints`), and none for a table that names no tool."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from projection_data import kernel, src, tgt
    from roofline.projection import FLOP_HINT_KEYS, project

    recs = from_records([kernel("partial", 2e-3, fp64=None, fp32=1e9, dram_bytes=1e9)])
    hinted = project(KernelTable(recs, metric_hints=NCU_HINTS), tgt(), src()).frame["note_text"].iloc[0]
    bare = project(KernelTable(recs), tgt(), src()).frame["note_text"].iloc[0]
    assert f"a FLOP component not counted (collect {NCU_HINTS[FLOP_HINT_KEYS['fp64_flops']]})" in hinted
    assert "a FLOP component not counted" in bare and "collect" not in bare


def test_hints_name_metrics_and_come_from_counting() -> None:
    assert FLOP_HINT.startswith("sm__sass_thread_inst_executed_op_")
    assert NCU_HINTS["warp_inst"] == "smsp__inst_executed.sum" and NCU_HINTS["time_s"] == "gpu__time_duration.sum"


def test_real_export_without_flop_counters_names_what_to_collect() -> None:
    table = api.read(NO_FLOPS)
    assert dict(table.metric_hints) == NCU_HINTS  # the ncu reader gives them
    result = api.analyze(table)
    assert result.metric_hints == NCU_HINTS  # carried to the analysis
    assert any(f"(collect {FLOP_HINT})" in n for n in result.notes)
    undrawn = undrawn_kernels(result)
    assert undrawn and all(u.reason == f"FLOPs not counted (collect {FLOP_HINT})" for u in undrawn)
    with pytest.raises(MissingMetricsError) as err:  # no instruction counts: the hint names them
        api.analyze(table, work="instructions")
    assert (err.value.hint or "").startswith(f"collect {NCU_HINTS['roofline:instructions']} (")


def test_a_table_from_records_names_no_tool() -> None:
    """A table built by hand has no reader that knows a tool: its notes say what is missing, and no
    metric to collect."""
    recs = [{"kernel_name": "a", "time_s": 1e-3, "dram_bytes": 1e8}]
    bare = analyze(KernelTable(from_records(recs)))
    assert dict(bare.metric_hints) == {}
    assert "no FLOP counts for 1 kernel" in bare.notes and not any("collect" in n for n in bare.notes)
    assert [u.reason for u in undrawn_kernels(bare)] == ["FLOPs not counted"]
    hinted = analyze(KernelTable(from_records(recs), metric_hints=NCU_HINTS))
    assert f"no FLOP counts for 1 kernel (collect {FLOP_HINT})" in hinted.notes


def test_saved_tables_keep_what_to_collect(tmp_path: Path) -> None:
    """A kernel table written to Parquet or .kernels.json and read back names the same metrics; a
    file written before the key existed names none."""
    from roofline.readers import kernel_json, kernel_parquet

    table = api.read(NO_FLOPS)
    parquet = tmp_path / "t.parquet"
    parquet.write_bytes(kernel_parquet.to_bytes(table))
    assert dict(kernel_parquet.read(parquet).metric_hints) == NCU_HINTS
    saved = tmp_path / "t.kernels.json"
    saved.write_text(kernel_json.to_json(table))
    assert dict(kernel_json.read(saved).metric_hints) == NCU_HINTS
    doc = json.loads(saved.read_text())
    del doc["metric_hints"]  # as written before metric_hints existed
    saved.write_text(json.dumps(doc))
    assert dict(kernel_json.read(saved).metric_hints) == {}

"""The documentation's generated parts match the code they are generated from."""

from __future__ import annotations

from pathlib import Path

from roofline.counting.hints import COLUMN_COUNTERS
from roofline.kernels import COLUMNS, describe_columns

DOCS = Path(__file__).parents[1] / "docs"


def test_kernel_table_doc_lists_every_declared_column():
    text = (DOCS / "kernel-table.md").read_text()
    assert describe_columns(COLUMN_COUNTERS) in text  # regenerate with: python tests/test_docs.py
    assert set(COLUMN_COUNTERS) <= {c.name for c in COLUMNS}
    assert "| `run` | string | - |" in text
    assert [line.split("`")[1] for line in text.split("## Analysis columns")[0].splitlines()
            if line.startswith("| `")] == [c.name for c in COLUMNS]


def test_json_doc_example_is_what_the_code_writes():
    """The example in docs/json-schema.md parses and its numbers are the JSON written for
    tests/report_data.instruction_table under work="instructions" (fields shown: '...' elides)."""
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from doc_examples import assert_shown_as_written, doc_example
    from report_data import H100_LIKE, instruction_table
    from roofline.analysis import analyze
    from roofline.views.json_out import analysis_to_dict

    example = doc_example("Example")
    written = json.loads(json.dumps(analysis_to_dict(analyze(instruction_table(), H100_LIKE, work="instructions"))))

    assert_shown_as_written({k: v for k, v in example.items() if k not in ("machine", "notes")}, written)
    assert example["notes"][0] in written["notes"]
    assert example["machine"]["memory"] == written["machine"]["memory"]


def test_kernel_table_doc_lists_every_analysis_column():
    """The analysis-column tables are generated from roofline.analysis.columns like the kernel table."""
    from roofline.analysis.columns import COLUMNS as ANALYSIS, INSTRUCTION_COLUMNS, PER_LEVEL

    text = (DOCS / "kernel-table.md").read_text().split("## Analysis columns", 1)[1]
    names = [line.split("`")[1] for line in text.splitlines() if line.startswith("| `")]
    assert names == [c.name for c in (*PER_LEVEL, *ANALYSIS, *INSTRUCTION_COLUMNS)]
    for c in (*PER_LEVEL, *ANALYSIS, *INSTRUCTION_COLUMNS):
        assert f"| `{c.name}` | {c.dtype} | {c.unit or '-'} | {c.description} |" in text


def _markdown(columns) -> str:
    lines = ["| column | dtype | unit | meaning |", "|---|---|---|---|"]
    return "\n".join(lines + [f"| `{c.name}` | {c.dtype} | {c.unit or '-'} | {c.description} |" for c in columns])


def regenerate() -> None:
    """Rewrite the generated tables of docs/kernel-table.md from the code: ``python tests/test_docs.py``."""
    import re

    from roofline.analysis.columns import COLUMNS as ANALYSIS, INSTRUCTION_COLUMNS, PER_LEVEL

    path = DOCS / "kernel-table.md"
    text = path.read_text()
    head, analysis = text.split("## Analysis columns", 1)
    head = re.sub(r"\| column \| dtype.*?(?=\n\n|\n?\Z)", lambda _: describe_columns(COLUMN_COUNTERS), head, count=1, flags=re.S)
    tables = iter([_markdown(PER_LEVEL), _markdown(ANALYSIS), _markdown(INSTRUCTION_COLUMNS)])
    analysis = re.sub(r"\| column \| dtype.*?(?=\n\n|\n?\Z)", lambda _: next(tables), analysis, flags=re.S)
    path.write_text(head + "## Analysis columns" + analysis)


if __name__ == "__main__":
    regenerate()

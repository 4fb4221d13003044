"""The documentation's generated parts match the code they are generated from."""

from __future__ import annotations

from pathlib import Path

from roofline.kernels import COLUMNS, describe_columns

DOCS = Path(__file__).parents[1] / "docs"


def test_kernel_table_doc_lists_every_declared_column():
    text = (DOCS / "kernel-table.md").read_text()
    assert describe_columns() in text  # regenerate with: python -c "from roofline.kernels import describe_columns as d; print(d())"
    assert "| `run` | string | - |" in text
    assert [line.split("`")[1] for line in text.split("## Analysis columns")[0].splitlines()
            if line.startswith("| `")] == [c.name for c in COLUMNS]

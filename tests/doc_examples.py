"""The JSON examples in docs/json-schema.md, checked against what the code writes (shared by the tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

SCHEMA_DOC = Path(__file__).parents[1] / "docs" / "json-schema.md"


def doc_example(heading: str) -> Any:
    """The JSON block under ``## {heading}`` in docs/json-schema.md."""
    text = SCHEMA_DOC.read_text()
    return json.loads(re.search(rf"## {heading}\n.*?```json\n(.*?)```", text, re.S).group(1))


def assert_shown_as_written(doc: Any, real: Any, where: str = "$") -> None:
    """Every field the doc shows is in ``real`` with the value shown ('...' elides; floats to 1e-3,
    since the doc rounds a few figures); a list of objects is compared item by item."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key != "...":
                assert key in real, where + "." + key
                assert_shown_as_written(value, real[key], where + "." + key)
    elif isinstance(doc, list) and doc and isinstance(doc[0], dict):
        for i, item in enumerate(doc):
            assert_shown_as_written(item, real[i], f"{where}[{i}]")
    elif isinstance(doc, float):
        assert real == pytest.approx(doc, rel=1e-3), where
    else:
        assert doc == real, where

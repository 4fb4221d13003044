"""Every result for every export in tests/data is what it was when tests/data/golden/outputs.json was
recorded (tests/outputs_golden.py says what is digested and how to record again): a change of layout
or of the kernel table's contract must not change a figure, a note, a chart or a file."""

from __future__ import annotations

import json

import pytest

import needs
import outputs_golden as golden

RECORDED = json.loads(golden.GOLDEN.read_text())
CASES = golden.cases()


def test_every_case_is_recorded() -> None:
    assert sorted(CASES) == sorted(RECORDED), "record new inputs: python tests/outputs_golden.py --write"


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_unchanged(name: str) -> None:
    args = CASES[name]
    if golden.needs_ncu(args):
        needs.ncu()
    got = golden.digests(name, args)
    changed = {key: (RECORDED[name].get(key), got.get(key)) for key in set(RECORDED[name]) | set(got)
               if RECORDED[name].get(key) != got.get(key)}
    assert not changed, (f"{name}: {', '.join(sorted(changed))} changed (python tests/outputs_golden.py "
                         f"--dump DIR {name!r} on both checkouts and diff)")

"""Display of numbers: decimal prefixes for quantities, plain decimals for ratios, never exponents."""

from __future__ import annotations

import math

import pytest

from roofline.units import counted, format_number, format_si


@pytest.mark.parametrize(("value", "text"), [
    (0.5007, "0.501"), (84.43, "84.4"), (1234.5, "1230"), (36512.3, "36500"), (1e-4, "0.0001"),
    (1.234e-5, "0.0000123"), (0.0, "0"), (-2.5, "-2.5"), (math.nan, "-"), (None, "-"),
])
def test_format_number_is_plain_decimal(value: float | None, text: str) -> None:
    assert format_number(value) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (3.651e13, "FLOP/s", "36.5 TFLOP/s"), (828.758e9, "B/s", "829 GB/s"), (2.5e-4, "s", "250 µs"),
])
def test_format_si_uses_decimal_prefixes(value: float, unit: str, text: str) -> None:
    assert format_si(value, unit).replace("\u202f", " ") == text


def test_counted() -> None:
    assert [counted(n, "kernel") for n in (0, 1, 2)] == ["0 kernels", "1 kernel", "2 kernels"]

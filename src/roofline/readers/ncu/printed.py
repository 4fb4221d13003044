"""Numbers as Nsight Compute prints them, against the values it stored.

A raw page holds each value to the decimals ncu prints for its metric, in the column's unit:
six for most (``505.888000`` usecond, ``0.000004`` sector/cycle for 3.67e-06), two for some
ratios (``1.32`` for 1.32226562, ``0.00`` for 0.0039, ``0.01`` for 0.0078125). A details page
picks a unit per row, so that the number falls in 1..1000, and prints two decimals (``1.17``
second beside ``993.02`` usecond; ``4.10`` Kbyte/block for 4096 byte/block). A report read
through ``ncu_report`` holds the stored values in full. Two readings of one launch therefore
differ in the last printed digit without being two measurements.

:func:`agree_as_printed` tells the two apart: values agree when the printed one is the other
rounded to its last printed digit, give or take the binary noise of the numbers themselves
(``249964.3046875`` printed ``249964.304688``: exactly half a digit). A raw page column's last
digit is the finest any of its values shows (parsing drops trailing zeros: ``0.010`` reads as
0.01), from each value's shortest form within 15 significant digits (so that the unit
conversion's noise, ``505.888 * 1e-6``, is not a digit), never coarser than the printed unit
(ncu writes whole numbers out: ``7000`` is seven thousand to the unit, not 7e3); a column of
zeros is taken at 0.01 of the unit, the fewest decimals ncu prints. On a details page a value's
last digit is at least 0.01 of the decimal unit (1e3 steps) that puts it in 1..1000.
"""

from __future__ import annotations

import numpy as np

#: The most significant digits a printed value is taken to show.
_DIGITS = 15
#: The last digit of a column of printed zeros: two decimals of the printed unit.
ZERO_STEP = 0.01


def last_digit(values: np.ndarray) -> np.ndarray:
    """The place value of each number's last significant digit (``1.32`` -> 0.01, ``4e-06`` ->
    1e-06, ``2.624e-06`` -> 1e-09); NaN for 0, NaN and infinities."""
    x = np.abs(np.asarray(values, dtype=np.float64))
    step = np.full(x.shape, np.nan)
    todo = np.isfinite(x) & (x > 0)
    if not todo.any():
        return step
    exponent = np.zeros(x.shape)
    exponent[todo] = np.floor(np.log10(x[todo]))
    for digits in range(1, _DIGITS + 1):
        idx = np.flatnonzero(todo)
        if idx.size == 0:
            break
        place = 10.0 ** (exponent[idx] - digits + 1)
        shown = np.round(x[idx] / place) * place
        done = np.abs(shown - x[idx]) <= 1e-14 * x[idx]
        step[idx[done]] = place[done]
        todo[idx[done]] = False
    return step


def _step(printed: np.ndarray, factor: float, per_row_units: bool) -> np.ndarray:
    """The last printed digit of each value, in SI (see the module docstring)."""
    digits = last_digit(printed)
    known = digits[np.isfinite(digits)]
    step = np.full(np.shape(printed), min(float(known.min()), factor) if known.size else ZERO_STEP * factor)
    if per_row_units:
        size = np.abs(np.asarray(printed, dtype=np.float64))
        nonzero = np.isfinite(size) & (size > 0)
        unit = np.ones_like(size)
        unit[nonzero] = 10.0 ** (3 * np.floor(np.log10(size[nonzero]) / 3))
        step = np.maximum(step, ZERO_STEP * unit)
    return step


def within_print(value: np.ndarray, printed: np.ndarray, *, factor: float = 1.0,
                 per_row_units: bool = False) -> np.ndarray:
    """Per element: ``printed`` is ``value`` rounded to the digits it shows (never for NaN).

    ``factor``: the printed unit in SI (``si_factor``; on a raw page the column's): values are SI,
    digits were printed in it. ``per_row_units``: a details page's value (a unit per row)."""
    full = np.asarray(value, dtype=np.float64)
    shown = np.asarray(printed, dtype=np.float64)
    # Half a digit; a millionth of it, and a few units in the last place of the numbers, for the
    # binary noise of the numbers and of the subtraction.
    noise = 8 * np.finfo(np.float64).eps * np.maximum(np.abs(full), np.abs(shown))
    with np.errstate(invalid="ignore"):
        return np.abs(full - shown) <= 0.5 * (1 + 1e-6) * _step(shown, factor, per_row_units) + noise


def agree_as_printed(stored: np.ndarray, printed: np.ndarray, *, factor: float = 1.0,
                     per_row_units: bool = False) -> np.ndarray:
    """Per element: ``printed`` is ``stored`` rounded to the digits it shows, or shows nothing.

    Equal values agree (NaN with NaN); a stored NaN agrees with nothing but NaN; a printed NaN
    (ncu leaves some stored values out of its CSV) agrees with anything."""
    full = np.asarray(stored, dtype=np.float64)
    shown = np.asarray(printed, dtype=np.float64)
    same = (full == shown) | np.isnan(shown)
    if same.all():
        return same
    return same | within_print(full, shown, factor=factor, per_row_units=per_row_units)


def agree_printed(x: np.ndarray, y: np.ndarray, *, factor_x: float = 1.0, factor_y: float = 1.0,
                  per_row_x: bool = False, per_row_y: bool = False) -> np.ndarray:
    """Per element, two printed values (a raw and a details page of one export): equal (NaN with
    NaN), or one is the other rounded to the digits it shows."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return same
    return same | within_print(a, b, factor=factor_y, per_row_units=per_row_y) \
        | within_print(b, a, factor=factor_x, per_row_units=per_row_x)


def finer(x: np.ndarray, y: np.ndarray, *, factor_x: float = 1.0, factor_y: float = 1.0,
          per_row_x: bool = False, per_row_y: bool = False) -> np.ndarray:
    """Per element: ``y`` was printed to finer digits than ``x`` (a raw page's column in seconds,
    ``0.000993``, against a details page's ``993.02`` usecond)."""
    with np.errstate(invalid="ignore"):
        return _step(y, factor_y, per_row_y) < _step(x, factor_x, per_row_x)

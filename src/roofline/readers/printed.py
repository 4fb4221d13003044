"""Numbers as Nsight Compute prints them, against the values it stored.

A CSV export holds each value to the decimals ncu prints for its metric, in the printed unit:
six for most (``505.888000`` usecond, ``0.000004`` sector/cycle for 3.67e-06), two for some
ratios (``1.32`` for 1.32226562, ``0.00`` for 0.0039, ``0.01`` for 0.0078125). A report read
through ``ncu_report`` holds the stored values in full. Two readings of one launch therefore
differ in the last printed digit without being two measurements.

:func:`agree_as_printed` tells the two apart: values agree when the printed one is the other
rounded to the column's last printed digit. Parsing drops trailing zeros (``0.010`` reads as
0.01), so a column's last digit is the finest any of its values shows (from each value's
shortest form within 15 significant digits, so that the unit conversion's binary noise,
``505.888 * 1e-6``, is not a digit), and never coarser than the printed unit (ncu writes whole
numbers out: ``7000`` is seven thousand to the unit, not 7e3). A column of zeros shows no
digits: it is taken at 0.01 of the printed unit, the fewest decimals ncu prints.
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


def _step(printed: np.ndarray, factor: float) -> float:
    """A printed column's last digit, in SI (see the module docstring)."""
    digits = last_digit(printed)
    known = digits[np.isfinite(digits)]
    return min(float(known.min()), factor) if known.size else ZERO_STEP * factor


def within_print(value: np.ndarray, printed: np.ndarray, *, factor: float = 1.0) -> np.ndarray:
    """Per element: ``printed`` is ``value`` rounded to the digits it shows (never for NaN).

    ``factor``: the printed unit in SI (``si_factor``): values are SI, digits were printed in it."""
    full = np.asarray(value, dtype=np.float64)
    shown = np.asarray(printed, dtype=np.float64)
    # Half a digit, and a millionth of it for the binary noise of the subtraction itself.
    with np.errstate(invalid="ignore"):
        return np.abs(full - shown) <= 0.5 * (1 + 1e-6) * _step(shown, factor)


def agree_as_printed(stored: np.ndarray, printed: np.ndarray, *, factor: float = 1.0) -> np.ndarray:
    """Per element: ``printed`` is ``stored`` rounded to the digits it shows, or shows nothing.

    Equal values agree (NaN with NaN); a stored NaN agrees with nothing but NaN; a printed NaN
    (ncu leaves some stored values out of its CSV) agrees with anything."""
    full = np.asarray(stored, dtype=np.float64)
    shown = np.asarray(printed, dtype=np.float64)
    same = (full == shown) | np.isnan(shown)
    if same.all():
        return same
    return same | within_print(full, shown, factor=factor)


def agree_printed(x: np.ndarray, y: np.ndarray, *, factor_x: float = 1.0, factor_y: float = 1.0) -> np.ndarray:
    """Per element, two printed values (pages of one export print some values to fewer digits):
    equal (NaN with NaN), or one is the other rounded to the digits it shows."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return same
    return same | within_print(a, b, factor=factor_y) | within_print(b, a, factor=factor_x)

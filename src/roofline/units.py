"""Units: parse what profilers print into SI, and format SI for people.

Inside the package every quantity is SI: seconds, bytes, FLOPs, B/s, FLOP/s, Hz.
Prefixes are decimal (1 GB/s = 1e9 B/s). Binary prefixes (KiB, MiB, GiB) are
accepted on input where a tool prints them, and never produced on output except
for sizes explicitly labelled with ``i`` (cache sizes, working sets).
"""

from __future__ import annotations

import math
import re

import numpy as np

#: Decimal prefixes as Nsight Compute and most tools print them. ``K`` and ``k`` both mean 1e3.
DECIMAL_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "m": 1e-3,
    "u": 1e-6,
    "µ": 1e-6,
    "n": 1e-9,
    "p": 1e-12,
}
BINARY_PREFIX = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}

_TIME_UNITS = {
    "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msecond": 1e-3, "msec": 1e-3,
    "us": 1e-6, "usecond": 1e-6, "usec": 1e-6, "µs": 1e-6,
    "ns": 1e-9, "nsecond": 1e-9, "nsec": 1e-9,
    "ps": 1e-12, "psecond": 1e-12,
}
# Exact reciprocals, so that cycle/nsecond is 1e9 and not 999999999.9999999.
_PER_TIME = {
    "s": 1.0, "sec": 1.0, "second": 1.0,
    "ms": 1e3, "msecond": 1e3, "msec": 1e3,
    "us": 1e6, "usecond": 1e6, "usec": 1e6, "µs": 1e6,
    "ns": 1e9, "nsecond": 1e9, "nsec": 1e9,
}
# Base units whose value needs only a prefix factor (counts of things).
_COUNT_BASES = (
    "byte", "bytes", "B", "cycle", "cycles", "inst", "warp", "thread", "block", "sector",
    "request", "flop", "FLOP", "op", "hz", "Hz", "pass", "register", "SM", "transaction",
)

_PREFIXED = re.compile(r"^(Ki|Mi|Gi|Ti|[kKMGTPEmunpµ]?)(.+)$")


def _numerator_factor(unit: str) -> float | None:
    unit = unit.strip()
    if unit in _TIME_UNITS:
        return _TIME_UNITS[unit]
    for base in _COUNT_BASES:
        if unit == base:
            return 1.0
    m = _PREFIXED.match(unit)
    if not m:
        return None
    prefix, base = m.groups()
    if base in _COUNT_BASES or base.lower() in ("byte", "bytes", "hz"):
        return BINARY_PREFIX.get(prefix) or DECIMAL_PREFIX.get(prefix)
    return None


def si_factor(unit: str | None) -> float:
    """Factor that turns a value printed with ``unit`` into SI.

    >>> si_factor("Kbyte"), si_factor("nsecond"), si_factor("cycle/usecond")
    (1000.0, 1e-09, 1000000.0)

    Unknown or dimensionless units (``%``, ``inst/cycle``, empty) give 1.0: the value
    is kept as printed. ``Kbyte`` is 1e3 bytes (Nsight Compute's convention); ``KiB`` 1024.
    """
    if unit is None:
        return 1.0
    unit = unit.strip()
    if not unit or unit == "%":
        return 1.0
    if "/" in unit:
        num, _, den = unit.partition("/")
        fnum = _numerator_factor(num) if num else 1.0
        den = den.strip()
        if fnum is None:
            return 1.0
        if den in _PER_TIME:
            return fnum * _PER_TIME[den]
        fden = _numerator_factor(den)
        if fden is None:
            return 1.0
        return fnum / fden
    f = _numerator_factor(unit)
    return 1.0 if f is None else f


_FORMAT_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_SMALL_PREFIXES = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]


def format_si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """Format an SI value with a decimal prefix: ``format_si(3.35e12, "B/s") == "3.35 TB/s"``.

    None or NaN prints as ``-`` (unknown, not zero).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = float(value)
    if v == 0:
        return f"0 {unit}".rstrip()
    mag = abs(v)
    table = _FORMAT_PREFIXES if mag >= 1.0 else _SMALL_PREFIXES
    for scale, prefix in table:
        if mag >= scale or scale == table[-1][0]:
            scaled = v / scale
            text = f"{scaled:.{digits}g}"
            return f"{text} {prefix}{unit}".rstrip()
    return f"{v:g} {unit}".rstrip()  # pragma: no cover


def format_time(seconds: float | None) -> str:
    """Format seconds with s/ms/µs/ns."""
    return format_si(seconds, "s")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 kernel``, ``5 kernels``, ``0 kernels`` (``plural`` when it is not ``noun + 's'``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def format_number(value: float | None, digits: int = 3) -> str:
    """A plain decimal number with ``digits`` significant digits, never in exponent notation and
    without prefixes (for ratios such as FLOP/byte): ``0.5``, ``84.4``, ``1230``, ``0.000123``.
    None/NaN is ``-``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    return str(np.format_float_positional(v, precision=digits, unique=False, fractional=False, trim="-"))

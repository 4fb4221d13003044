"""How an Nsight Compute CSV writes its numbers, and those numbers as plain text ``float()`` reads.

ncu writes numbers in the locale it runs in (``LANG``, ``LC_NUMERIC``; ``LC_ALL`` over both).
Checked with the real ``ncu --import X --csv`` of Nsight Compute 2024.1.1 on seven reports under
ten locales (one report's exports under five of them: tests/data/ncu/t4_setfull_locales):

* ``C``: ``216186``, ``42.22``; ``en_US``: ``216,186``, ``1,178,572,552,545.80``; ``en_IN``: ``1,41,760``.
* ``de_DE``, ``it_IT``, ``pt_BR``: ``216.186``, ``42,22``, ``540.543.213,63``.
* ``fr_FR``, ``ru_RU``, ``sv_SE``, ``pl_PL``: ``216 186``, ``42,22`` (a space groups digits).
* ``de_CH``: ``216'186``, ``42.22``.
* And in one file, two ways at once: the raw page without ``--print-units base`` writes its
  scaled decimals (``141.760000`` usecond) the C way, with a ``.`` and six digits, in every locale,
  beside whole numbers grouped the locale's way (``1.980.000``, ``6.144`` in de_DE: 6144) and a few
  ratios with the locale's decimal mark (``0,60``).

So the only question a file leaves is which mark is its decimal one (:func:`decimal_comma`):

* ``,`` groups digits (``1,234,567``, ``1,234.5``, ``1,41,760``): the point convention;
* ``,`` is a decimal mark (``0,5``, ``42,22``, ``1.234,5``), or ``.`` groups digits (``1.980.000``):
  the comma convention. A ``.`` then groups when it is followed by exactly three digits up to the
  end or the next mark (``6.144``, ``540.543.213,63``) and is a C decimal point otherwise
  (``141.760000``). ncu's decimals have two or six digits, never three, in every page and locale
  checked, so ``6.144`` from ncu is always a grouped whole number there;
* spaces (also no-break and narrow no-break ones) and apostrophes before three digits group digits
  in either convention; a value that still is not a number is text, as it was.

``1,234`` and ``0.125`` fit both conventions and decide nothing; with no evidence the point
convention is taken. A file with evidence for both is refused. A file with no evidence but values
like ``26.400`` (:func:`three_decimals`) is read the point way and the user is told: ncu writes
those only as digit groups (26,400 under de_DE), but another program may have written the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

#: Marks that group digits in some locale and are never decimal marks: space, no-break space,
#: narrow no-break space, thin space, apostrophe, right single quotation mark.
_GROUP_CHARS = " \u00a0\u202f\u2009'\u2019"
_SPACED = re.compile(f"[{_GROUP_CHARS}](\\d{{3}})")
_SPACED_RE2 = "[ \\x{a0}\\x{202f}\\x{2009}'\\x{2019}](\\d{3})"  # the same, in Arrow's (RE2) syntax
#: A number written the comma way, its dots grouping digits: ``6.144``, ``1.980.000``, ``1.234,5``,
#: ``0,60`` (a group never starts a number with 0: ``0.125`` is a C decimal).
_DOT_GROUPED = r"^[+-]?([1-9]\d{0,2}(\.\d{3})+|\d+)(,\d*)?$"
_DOT_GROUPED_PY = re.compile(_DOT_GROUPED)

#: Evidence that ``,`` is a decimal mark or ``.`` groups digits.
_COMMA_DECIMAL = re.compile(r"^[+-]?(\d+,(\d{1,2}|\d{4,})|\d{1,3}(\.\d{3})+,\d+|\d{1,3}(\.\d{3}){2,})$")
#: Evidence that ``,`` groups digits (Indian grouping too: ``1,41,760``).
_COMMA_GROUPS = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+\.\d+|\d{1,3}(,\d{3}){2,}|\d{1,2}(,\d{2})+,\d{3}(\.\d+)?)$")


class MixedNumbers(ValueError):
    """Values that use ``,`` both as a decimal mark and to group digits."""


def decimal_comma(values: Iterable[str]) -> bool:
    """True when the values' decimal mark is ``,`` (see the module docstring); raises
    :class:`MixedNumbers` when some values say ``,`` and others ``.``. Plain whole numbers say nothing."""
    comma = point = None
    for value in values:
        if "," not in value and "." not in value:
            continue
        text = _SPACED.sub(r"\1", value.strip())
        if comma is None and _COMMA_DECIMAL.match(text):
            comma = value
        elif point is None and _COMMA_GROUPS.match(text):
            point = value
        if comma is not None and point is not None:
            raise MixedNumbers(f"'{comma}' has a decimal comma but '{point}' groups digits with commas")
    return comma is not None


_THREE_DECIMALS = re.compile(r"^[+-]?[1-9]\d{0,2}\.\d{3}$")


def three_decimals(values: Iterable[str]) -> str | None:
    """A value such as ``26.400``: a decimal to the point convention, 26,400 to ncu under de_DE."""
    return next((v for v in values if "." in v and _THREE_DECIMALS.match(v.strip())), None)


def plain(value: str, comma: bool) -> str:
    """One value as plain text (``1980000``, ``0.6``): digit groups dropped, ``.`` the decimal mark."""
    if not value.isascii() or " " in value or "'" in value:
        value = _SPACED.sub(r"\1", value)
    if not comma:
        return value.replace(",", "")
    if "." in value and _DOT_GROUPED_PY.match(value.strip()):
        value = value.replace(".", "")
    return value.replace(",", ".")


def plain_arrow(text: pa.ChunkedArray | pa.Array, comma: bool, *, spaced: bool = True) -> pa.ChunkedArray | pa.Array:
    """:func:`plain` over an Arrow text column, without a Python loop; ``spaced=False`` leaves
    spaces and apostrophes alone (a faster first try)."""
    if spaced:
        text = pc.replace_substring_regex(text, _SPACED_RE2, "\\1")
    if not comma:
        return pc.replace_substring(text, ",", "")
    grouped = pc.match_substring_regex(text, _DOT_GROUPED)
    text = pc.if_else(grouped, pc.replace_substring(text, ".", ""), text)
    return pc.replace_substring(text, ",", ".")


def c_numbers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) for an ncu that writes CSV: numbers the C way
    (``LC_NUMERIC=C``), every other part of the locale as it was. ``LC_ALL`` would override
    ``LC_NUMERIC``, so its value moves to ``LANG`` and the categories it overrode are dropped."""
    env = dict(os.environ if environ is None else environ)
    every = env.pop("LC_ALL", "")
    if every:
        for name in [n for n in env if n.startswith("LC_")]:
            del env[name]
        env["LANG"] = every
    env["LC_NUMERIC"] = "C"
    return env

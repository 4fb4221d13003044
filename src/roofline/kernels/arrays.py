"""Kernel-table columns as arrays: frames made at once, strings through Arrow, launches grouped as integers.

The kernel table's columns are worked on as NumPy and pandas extension arrays and put into a frame
once (:func:`frame_of`), not column by column: in pandas 3 a column insert costs about 0.1 ms and a
``pd.array`` 40 us, which add up to most of the time on the few dozen launches of a small profile.
Text goes to Arrow directly (:func:`strings`, :func:`repeated`), where pandas keeps it. Launches are
grouped once into dense integer ids (:func:`group_ids`), which every sum over them then uses; a
column holding one value for a whole profile is recognised by a comparison (:func:`sameness`), not a
hash of a million strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

try:  # pandas >= 3.0: a frame from arrays placed as its blocks (what pyarrow's to_pandas uses)
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pandas 2: the constructor (the same frame, made more slowly)
    _from_blocks = None


#: Above this many values (rows x float columns), float columns are kept as separate blocks rather
#: than stacked into one (a copy): a table of a million launches is not copied to be framed.
STACK_LIMIT = 4_000_000


def frame_of(columns: Mapping[str, Any], index: pd.Index | None = None, *, copy: bool = False) -> pd.DataFrame:
    """A DataFrame of ``columns`` (name -> 1-D numpy array or pandas extension array, in order), built
    at once rather than column by column (a column insert costs about 0.1 ms in pandas 3).

    Float64 numpy columns are stacked into one 2-D block below :data:`STACK_LIMIT` values, else
    adopted one by one. Arrays are adopted as they are, so pass arrays nothing else holds (fresh
    results), or ``copy=True`` to copy those that could change (all but the stacked floats and
    Arrow-backed arrays, which are immutable). The arrays must have one length and the dtypes wanted.
    """
    names = list(columns)
    n = len(index) if index is not None else (len(next(iter(columns.values()))) if names else 0)
    if _from_blocks is None:
        return pd.DataFrame({c: (v.copy() if copy and not isinstance(v, pd.arrays.ArrowExtensionArray) else v)
                             for c, v in columns.items()}, index=index if index is not None else pd.RangeIndex(n))
    position = {name: i for i, name in enumerate(names)}
    blocks: list[tuple[Any, np.ndarray]] = []
    floats = [c for c in names if isinstance(columns[c], np.ndarray) and columns[c].dtype == np.float64]
    stacked_names: set[str] = set()
    if floats and n * len(floats) <= STACK_LIMIT:
        stacked = np.empty((len(floats), n))
        for i, c in enumerate(floats):
            stacked[i] = columns[c]
        blocks.append((stacked, np.array([position[c] for c in floats], dtype=np.intp)))
        stacked_names.update(floats)
    for c in names:
        if c in stacked_names:
            continue
        values = columns[c]
        if copy and not isinstance(values, pd.arrays.ArrowExtensionArray):
            values = values.copy()
        blocks.append((values.reshape(1, -1) if isinstance(values, np.ndarray) else values,
                       np.array([position[c]], dtype=np.intp)))
    return _from_blocks(blocks, index=index if index is not None else pd.RangeIndex(n), columns=pd.Index(names))


def _arrow_strings() -> bool:
    """True when pandas stores the ``string`` dtype in Arrow (its default with pyarrow installed)."""
    return pd.StringDtype().storage == "pyarrow"


def strings(values: Sequence[Any] | np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Strings (None, NaN or <NA>: missing) as the ``string`` dtype, built straight through Arrow
    where pandas keeps strings there (``pd.array(values, dtype="string")`` costs 40 us more a call)."""
    if _arrow_strings():
        return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string(), from_pandas=True))
    return pd.array(values, dtype="string")


def repeated(value: str | None, n: int) -> pd.api.extensions.ExtensionArray:
    """``value`` (None: <NA>) ``n`` times, as the ``string`` dtype."""
    if _arrow_strings():
        return pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()) if value is None
                                          else pa.repeat(pa.scalar(value, pa.large_string()), n))
    return pd.array([value], dtype="string").take(np.zeros(n, dtype=np.intp))


def encoded_text(texts: np.ndarray | Sequence[Any], codes: np.ndarray) -> pd.Categorical:
    """Text given as its distinct values ``texts`` and one code per launch (-1: missing) as an
    encoded identity column (:data:`roofline.kernels.schema.ENCODED_COLUMNS`): a categorical of
    text categories (a plain object Index: an Arrow-backed one costs 4x as much to make, 60 us),
    sorted (so that sorting by it sorts by the text), duplicates merged; the codes are renumbered
    through the few distinct texts, not compared per launch."""
    distinct = [str(t) for t in (texts.tolist() if isinstance(texts, np.ndarray) else texts)]
    categories = sorted(set(distinct))
    position = {text: i for i, text in enumerate(categories)}
    remap = np.array([position[t] for t in distinct] + [-1], dtype=np.int64)  # code -1 stays -1
    small = code_type(len(categories))
    dtype = pd.CategoricalDtype(pd.Index(categories, dtype=_OBJECT)) if categories else _NO_CATEGORIES
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(np.int64)
    # valid by construction (-1 takes the last: -1), so not checked again (5 us a column, most of a small file's)
    # renumbered in the small type itself (1e6 launches: 0.75 ms against 3.2 through int64)
    return pd.Categorical.from_codes(remap.astype(small).take(codes), dtype=dtype, validate=False)


def code_type(categories: int) -> type[np.signedinteger]:
    """The codes' type of an encoded column with ``categories`` distinct texts: the smallest that holds them."""
    return np.int8 if categories < 127 else np.int16 if categories < 32_000 else np.int32


def is_lean(values: Any) -> bool:
    """True when ``values`` is a categorical as :func:`encoded_text` makes them (plain text categories,
    sorted, the smallest codes), which needs no renumbering."""
    return (isinstance(values, pd.Categorical) and values.categories.dtype == _OBJECT
            and values.categories.is_monotonic_increasing and values.codes.dtype == code_type(len(values.categories)))


def text_codes(values: Any) -> tuple[list[str], np.ndarray]:
    """An identity column's distinct texts and one code per launch into them (-1: missing): an encoded
    column's (categorical's) own categories and codes, nothing decoded; other text factorized."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        return [str(t) for t in values.categories.tolist()], values.codes
    if isinstance(values, pd.arrays.ArrowStringArray):  # encoded by Arrow itself, as pandas does, without its overhead
        arrow = pa.array(values)
        encoded = pc.dictionary_encode(arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow)
        return ([str(t) for t in encoded.dictionary.to_pylist()],
                pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False))
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return [str(t) for t in np.asarray(uniques, dtype=object).tolist()], codes


def used_text(texts: Sequence[str], codes: np.ndarray) -> pd.Categorical:
    """:func:`encoded_text` of the texts the codes (-1: missing) use: the others are not made categories
    (texts joined from several inputs, of which the launches kept only some)."""
    codes = np.asarray(codes, dtype=np.int64)
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(texts)))
    position = np.full(len(texts) + 1, -1, dtype=np.int64)  # (the last: -1, missing, stays missing)
    position[used] = np.arange(len(used))
    return encoded_text([texts[i] for i in used.tolist()], position[codes])


def recoded_text(values: Any, texts: Sequence[str], missing: str | None = None) -> pd.Categorical:
    """An identity column (encoded or not) with each distinct text replaced by the one at its place
    in ``texts`` (made from :func:`text_codes`' texts, in their order; duplicates merge), missing
    values by ``missing`` (None: they stay missing), as an encoded column: the work is on the
    distinct texts and integer codes, not per launch."""
    _, codes = text_codes(values)
    codes = np.asarray(codes, dtype=np.int64)
    if missing is None:
        return encoded_text(texts, codes)
    return encoded_text([*texts, missing], np.where(codes < 0, len(texts), codes))


def stacked_text(parts: Sequence[Any]) -> pd.Categorical:
    """Identity columns (encoded or not) one after the other, as one encoded column: categories the
    sorted union of theirs, each part's codes renumbered through its few texts (nothing decoded)."""
    texts: list[str] = []
    codes: list[np.ndarray] = []
    for part in parts:
        distinct, part_codes = text_codes(part)
        part_codes = np.asarray(part_codes, dtype=np.int64)
        codes.append(np.where(part_codes < 0, -1, part_codes + len(texts)))
        texts += distinct
    return encoded_text(texts, np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64))


def unknown_encoded(n: int) -> pd.Categorical:
    """``n`` missing values of an encoded identity column (no category, codes -1: one byte a launch)."""
    return pd.Categorical.from_codes(np.full(n, -1, dtype=np.int8), dtype=_NO_CATEGORIES, validate=False)


_OBJECT = np.dtype(object)
#: The dtype of an encoded column with no known value (immutable, made once).
_NO_CATEGORIES = pd.CategoricalDtype(pd.Index([], dtype=_OBJECT))


def flags(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """A bool array (adopted: pass a fresh one) as the ``boolean`` dtype, none missing."""
    return pd.arrays.BooleanArray(np.asarray(values, dtype=bool), np.zeros(len(values), dtype=bool))


def unknown_values(dtype: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` missing values of a declared non-float ``dtype``."""
    if dtype == "string":
        return repeated(None, n)
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
    if dtype == "boolean":
        return pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    return pd.array([], dtype=dtype).take(np.full(n, -1, dtype=np.intp), allow_fill=True)


def known_sum(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the sum of the known values of ``parts`` (same-length float arrays; NaN when none is
    known), and whether one of them is unknown. Summed left to right, one part at a time (no 2-D copy)."""
    total = np.zeros(len(parts[0]))
    any_known = np.zeros(len(parts[0]), dtype=bool)
    all_known = np.ones(len(parts[0]), dtype=bool)
    for values in parts:
        known = ~np.isnan(values)
        np.add(total, values, out=total, where=known)  # (adding 0 where unknown would change nothing)
        any_known |= known
        all_known &= known
    total[~any_known] = np.nan
    return total, any_known & ~all_known


def sameness(values: pd.api.extensions.ExtensionArray) -> str:
    """``"missing"`` when every value is missing, ``"one"`` when every value is one and the same
    (none missing), else ``"mixed"``: most descriptive columns hold one value for a whole profile,
    which needs no grouping (a comparison, not a hash of 1e6 strings)."""
    if not len(values):
        return "missing"
    if isinstance(values, pd.Categorical):  # an encoded identity: its codes
        codes = values.codes
        if (codes < 0).any():
            return "missing" if (codes < 0).all() else "mixed"
        return "one" if bool((codes == codes[0]).all()) else "mixed"
    if isinstance(values, pd.arrays.ArrowExtensionArray):
        arrow = pa.array(values)
        if arrow.null_count:
            return "missing" if arrow.null_count == len(arrow) else "mixed"
        return "one" if pc.all(pc.equal(arrow, arrow[0])).as_py() else "mixed"
    missing = values.isna()
    if missing.all():
        return "missing"
    if missing.any():
        return "mixed"
    data = values.to_numpy()  # none missing: plain numbers (or objects)
    return "one" if bool((data == data[0]).all()) else "mixed"


def _value_codes(values: pd.api.extensions.ExtensionArray) -> tuple[np.ndarray, int]:
    """Codes of ``values`` numbered in order of first appearance, missing values one of them (as
    ``pd.factorize(values, use_na_sentinel=False)``), and how many there are. Arrow-backed strings
    are encoded by Arrow itself, as pandas does, without its overhead (0.1 ms a call)."""
    if isinstance(values, pd.arrays.ArrowStringArray):
        arrow = pa.array(values)
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        encoded = pc.dictionary_encode(arrow, null_encoding="encode")
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(encoded.dictionary)
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def group_ids(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (numbered in order of first appearance) of the rows of ``frame`` by ``keys``,
    and the row of each group's first launch. Missing key values form their own group.

    Each key is factorized once on its own values (no string copies: this runs on 1e6 launches).
    """
    n = len(frame)
    codes = np.zeros(n, dtype=np.int64)
    for k in keys:
        c, count = _value_codes(frame[k].array)
        codes = codes * (count + 1) + c
    if len(keys) > 1:  # renumber the combined codes densely, still in order of first appearance
        codes, _ = pd.factorize(codes, sort=False)
    return _first_rows(codes.astype(np.int64, copy=False))


def _first_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (``codes`` themselves) and the row of each group's first launch."""
    n = len(codes)
    ngroups = int(codes.max()) + 1 if n else 0
    first = np.empty(ngroups, dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)  # the last write per group is its first row
    return codes, first


def groups_from_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_ids` of a column given as codes (any numbering, -1 missing: a group of its own)."""
    dense, _ = pd.factorize(codes, sort=False, use_na_sentinel=False)  # by first appearance, as group_ids
    return _first_rows(dense.astype(np.int64, copy=False))


def longest_first(time_s: np.ndarray) -> np.ndarray:
    """The order of rows by time, longest first, unknown last, ties in their order (as a stable
    ``sort_values(ascending=False, na_position="last")``)."""
    return np.argsort(-time_s, kind="stable")

"""Matching launches across Nsight Compute inputs, for :mod:`roofline.readers.ncu.combine`: what matching
needs of an input (launch IDs, kernel names, process IDs and names, metric names), taken from its frames
once as NumPy arrays and sets; the row order that aligns one input's launches with another's; and the
refusals when two files do not describe the same launches (launch IDs that differ or repeat, a launch
named as different kernels by the two).

Kernel names are compared by :func:`~roofline.readers.ncu.names.same_kernel`, not by the text printed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from roofline.errors import InputError
from roofline.kernels.arrays import text_codes
from roofline.readers.ncu.names import same_kernel
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.units import counted


def file_name(p: RawProfile) -> str:
    """The input's file name, without its folders."""
    return Path(p.source).name


def shown_names(profiles: Sequence[RawProfile]) -> list[str]:
    """Each input's file name, with as many of its folders as tell it apart from the others'
    (``time-dram/ncuroof-time-1.ncu-rep`` beside ``time-flops/ncuroof-time-1.ncu-rep``)."""
    parts = [Path(p.source).parts or (p.source,) for p in profiles]
    shown = [Path(*x[-1:]).as_posix() for x in parts]
    for depth in range(2, max(map(len, parts)) + 1):
        twice = {n for n, k in Counter(shown).items() if k > 1}
        if not twice:
            break
        shown = [Path(*x[-depth:]).as_posix() if n in twice else n for n, x in zip(shown, parts)]
    return shown


class Launches:
    """What matching needs of one input, taken from its frames once (not once per pair of inputs),
    and only when asked for (merging files of one run never asks for the process)."""

    def __init__(self, profile: RawProfile) -> None:
        self.profile = profile

    @cached_property
    def ids(self) -> np.ndarray:
        """Launch IDs: int64, or object (with <NA>) where some is unknown."""
        ids = self.profile.ids["launch_id"].array
        return ids.to_numpy(dtype=object) if ids.isna().any() else ids.to_numpy(dtype=np.int64)

    @cached_property
    def id_set(self) -> frozenset[Any]:
        return frozenset(self.ids.tolist())

    @cached_property
    def names(self) -> tuple[list[str], np.ndarray]:
        """Kernel names as their distinct texts and one code per launch into them (int64, -1 where
        unknown): an encoded column's own categories and codes, no name decoded per launch."""
        texts, codes = text_codes(self.profile.ids["kernel_name"])
        return texts, np.asarray(codes, dtype=np.int64)

    @cached_property
    def metrics(self) -> frozenset[str]:
        return frozenset(self.profile.metrics.columns)

    @cached_property
    def process_ids(self) -> frozenset[Any]:
        return known_values(self.profile, "process_id")

    @cached_property
    def process_names(self) -> frozenset[Any]:
        """Known process names (empty when the reader has none)."""
        return known_values(self.profile, "process_name")

    def same_names(self, other: Launches, order: np.ndarray | None) -> bool:
        """No launch is named as another kernel by the two (unknown names differ from none; names
        printed in other forms by other ncu versions do not differ: :func:`name_differences`)."""
        if order is None and (same_text(self.profile.ids["kernel_name"].array, other.profile.ids["kernel_name"].array)
                              or np.array_equal(self.names[1], joined_codes(list(self.names[0]), other))):
            return True
        return not name_differences(self, other, order)

    @property
    def repeats(self) -> bool:
        """Some launch ID appears twice (or two are unknown)."""
        return len(self.id_set) != len(self.ids)


def same_text(a: Any, b: Any) -> bool:
    """True when two text columns are alike value for value, told without encoding either: the same
    Arrow text (compared by Arrow), or categoricals with the same categories and codes. False says
    only that this quick look could not tell (the files of one run mostly hold the same names)."""
    if isinstance(a, pd.arrays.ArrowStringArray) and isinstance(b, pd.arrays.ArrowStringArray):
        return len(a) == len(b) and pa.chunked_array(pa.array(a)).equals(pa.chunked_array(pa.array(b)))
    if isinstance(a, pd.Categorical) and isinstance(b, pd.Categorical):
        return a.categories.equals(b.categories) and np.array_equal(a.codes, b.codes)
    return False


def launch_summaries(profiles: Sequence[RawProfile]) -> dict[int, Launches]:
    """Each input's :class:`Launches`, by the input's ``id()``."""
    return {id(p): Launches(p) for p in profiles}


def refuse_repeated_ids(p: RawProfile, launches: Launches) -> None:
    """Raise :class:`InputError` when a launch ID repeats within ``p``: its launches cannot be matched."""
    if launches.repeats:
        raise InputError("launch IDs repeat within a file; cannot match launches across files", path=p.source)


def check_same_launches(base: RawProfile, other: RawProfile, launches: dict[int, Launches]) -> np.ndarray | None:
    """Row positions of ``other``'s launches in ``base`` order (None: the same order); raises when
    launches differ."""
    a, b = launches[id(base)], launches[id(other)]
    refuse_repeated_ids(other, b)
    refuse_repeated_ids(base, a)
    if a.id_set != b.id_set:
        # plain ints: a list of numpy integers prints as [np.int64(3), ...]
        only_a = ", ".join(str(int(i)) for i in sorted(a.id_set - b.id_set)[:5]) or "none"
        only_b = ", ".join(str(int(i)) for i in sorted(b.id_set - a.id_set)[:5]) or "none"
        raise InputError(
            f"the files do not describe the same launches: launch IDs differ from {file_name(base)} "
            f"(only there: {only_a}; only here: {only_b})", path=other.source,
            hint="merge only files of the same program run with the same --launch-skip/--launch-count; analyse others separately",
        )
    order = launch_order(a, b)
    differ = [] if a.same_names(b, order) else name_differences(a, b, order)
    if differ:
        i, x, y = differ[0]
        raise InputError(
            f"the files do not describe the same launches: launch {a.ids[i]} is {x[:80]!r} in "
            f"{file_name(base)} but {y[:80]!r} here ({counted(len(differ), 'launch', 'launches')} {'differs' if len(differ) == 1 else 'differ'})", path=other.source,
            hint="merge only files of the same program run; analyse others separately",
        )
    return order


def launch_order(base: Launches, other: Launches) -> np.ndarray | None:
    """Row positions of ``other``'s launches in ``base`` order (same launch-ID sets, no repeats);
    None when they are in the same order already (files of one run usually are)."""
    if base.ids.dtype == other.ids.dtype and np.array_equal(base.ids, other.ids):
        return None
    if base.ids.dtype == np.int64 and other.ids.dtype == np.int64:
        sorter = np.argsort(other.ids, kind="stable")
        return sorter[np.searchsorted(other.ids, base.ids, sorter=sorter)]
    position = {launch: i for i, launch in enumerate(other.ids.tolist())}
    return np.array([position[launch] for launch in base.ids.tolist()], dtype=np.intp)


def take(values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """``values`` in the order ``order`` gives (None: as they are)."""
    return values if order is None else values[order]


def joined_codes(texts: list[str], launches: Launches) -> np.ndarray:
    """The kernel names of ``launches`` as codes into ``texts`` (int64, -1 where unknown), in its own
    order; ``texts`` gains the names it lacks (appended). Integer work per launch, text per name."""
    own, codes = launches.names
    position = {text: i for i, text in enumerate(texts)}
    remap = np.full(len(own) + 1, -1, dtype=np.int64)  # (the last: code -1, unknown, stays -1)
    for j, text in enumerate(own):
        if text not in position:
            position[text] = len(texts)
            texts.append(text)
        remap[j] = position[text]
    return remap[codes]


def name_differences(base: Launches, other: Launches, order: np.ndarray | None) -> list[tuple[int, str, str]]:
    """Launches the two name as different kernels (:func:`~roofline.readers.ncu.names.same_kernel`: not
    names printed in other forms): (row in ``base``, its name there, its name in ``other``). Compared as
    codes into the two inputs' distinct names; each pair of distinct forms is tested once."""
    texts = list(base.names[0])
    codes_a, codes_b = base.names[1], take(joined_codes(texts, other), order)
    differ = np.flatnonzero((codes_a >= 0) & (codes_b >= 0) & (codes_a != codes_b))
    if not len(differ):
        return []
    pairs = codes_a[differ] * len(texts) + codes_b[differ]
    distinct = np.unique(pairs)
    another_kernel = np.array([not same_kernel(texts[p // len(texts)], texts[p % len(texts)]) for p in distinct.tolist()],
                       dtype=bool)
    kept = differ[np.isin(pairs, distinct[another_kernel])]
    return [(int(i), texts[codes_a[i]], texts[codes_b[i]]) for i in kept.tolist()]


def known_values(p: RawProfile, column: str) -> frozenset[object]:
    """The distinct known values of an identity column (empty when the reader has none)."""
    if column not in p.ids.columns:
        return frozenset()
    array = p.ids[column].array
    if isinstance(array, pd.Categorical):  # encoded: the categories that some launch has, not a value per launch
        return frozenset(array.categories[np.unique(array.codes[array.codes >= 0])].tolist())
    values = array.to_numpy(dtype=object, na_value=None)
    return frozenset(v for v in set(values.tolist()) if v is not None and not pd.isna(v))  # distinct values first


def same_process(a: Launches, b: Launches) -> bool:
    """Both files name the same process(es): same known process IDs, and names that do not differ."""
    if not a.process_ids or a.process_ids != b.process_ids:
        return False
    return not (a.process_names and b.process_names and a.process_names != b.process_names)

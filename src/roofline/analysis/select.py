"""Choose and order kernels: by name (regex), by NVTX range (the ``phase`` column), sort keys.

Pure functions over the kernel table and the analysed frame; no I/O. The CLI's ``--filter``,
``--nvtx`` and ``--sort`` and the API's ``roofline.analyze(..., kernels=, nvtx=)`` use them.
Selecting happens before the analysis, so totals and shares are those of the selected kernels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.kernels import KernelTable, is_encoded

#: Sort keys: the column each orders by (largest first); ``ai`` is resolved per analysis.
#: ``work`` orders by the analysis's work (FLOPs, OPs or warp instructions: its ``work_spec.total``).
SORT_KEYS = {"time": "time_s", "savable": "savable_time_s", "flops": "flops", "work": None, "ai": None}
#: How many names an error lists.
MAX_LISTED = 8


def compile_regex(pattern: str, what: str = "--filter") -> re.Pattern[str]:
    """``pattern`` compiled, or an :class:`InputError` saying what is wrong with it."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise InputError(f"{what}: invalid regular expression {pattern!r}: {exc}",
                         hint="escape special characters (e.g. \\( or [(]), or quote the pattern in the shell") from None


#: Longer names are cut in error messages (C++ template names run to thousands of characters).
MAX_NAME_CHARS = 80


def _listing(values: Sequence[str]) -> str:
    shown = [v if len(v) <= MAX_NAME_CHARS else v[:MAX_NAME_CHARS - 1] + "…" for v in values[:MAX_LISTED]]
    more = f" and {len(values) - len(shown)} more" if len(values) > len(shown) else ""
    return "; ".join(shown) + more


def _names_by_time(frame: pd.DataFrame, column: str) -> list[str]:
    times = frame["time_s"].astype(float).fillna(0.0)
    order = times.groupby(frame[column].astype("string").fillna("")).sum().sort_values(ascending=False)
    return [str(n) for n in order.index if n != ""]


def _rows_where(column: pd.Series, test: Callable[[pd.Series], pd.Series]) -> np.ndarray:
    """True for the rows whose text passes ``test`` (a Series of ``string`` -> booleans, <NA> false).
    An encoded column (a categorical, :data:`roofline.kernels.ENCODED_COLUMNS`) is tested on its
    distinct texts only, and the answer spread to the launches by their codes."""
    if is_encoded(column):
        texts = pd.Series(column.cat.categories.astype("string"))
        hit = np.append(test(texts).fillna(False).to_numpy(dtype=bool), False)  # code -1 (missing): False
        return hit[column.cat.codes.to_numpy()]
    return test(column.astype("string")).fillna(False).to_numpy(dtype=bool)


def kernel_mask(frame: pd.DataFrame, pattern: str) -> np.ndarray:
    """True for the rows whose ``kernel_name`` matches ``pattern`` (``re.search``)."""
    regex = compile_regex(pattern)
    return _rows_where(frame["kernel_name"], lambda names: names.str.contains(regex, regex=True))


def nvtx_mask(frame: pd.DataFrame, nvtx: str) -> np.ndarray:
    """True for the rows in the NVTX range ``nvtx``: the ``phase`` named exactly so, else the
    phases that match it as a regular expression (``re.search``)."""
    phases = frame["phase"]
    if phases.isna().all():
        raise InputError("the profile has no NVTX ranges (no phase column values)",
                         hint="profile with NVTX ranges (ncu --nvtx, or roofline profile --nvtx-include)")
    exact = _rows_where(phases, lambda texts: texts == nvtx)
    if exact.any():
        return exact
    regex = compile_regex(nvtx, "--nvtx")
    hit = _rows_where(phases, lambda texts: texts.str.contains(regex, regex=True))
    if not hit.any():
        raise InputError(f"no NVTX range is named {nvtx!r} or matches it as a regular expression",
                         hint="ranges (longest first): " + _listing(_names_by_time(frame, "phase")))
    return hit


def select(table: KernelTable, *, kernels: str | None = None, nvtx: str | None = None) -> KernelTable:
    """The launches of ``table`` whose kernel name matches ``kernels`` (regex, ``re.search``) and
    that ran in the NVTX range ``nvtx`` (exact name, else regex). None selects everything.

    A selection that keeps nothing is an :class:`InputError` listing a few of the names there are.
    """
    if kernels is None and nvtx is None:
        return table
    frame = table.frame
    keep = np.ones(len(frame), dtype=bool)
    if nvtx is not None:
        keep &= nvtx_mask(frame, nvtx)
    if kernels is not None:
        by_name = kernel_mask(frame, kernels)
        if not (keep & by_name).any():
            where = f" in NVTX range {nvtx!r}" if nvtx is not None else ""
            raise InputError(f"no kernel name{where} matches {kernels!r}",
                             hint="kernels (longest first): " + _listing(_names_by_time(frame[keep], "kernel_name")))
        keep &= by_name
    metrics = table.metrics
    if metrics is not None and len(metrics) == len(frame):
        metrics = metrics[keep]
    return replace(table, frame=frame[keep], metrics=metrics)


def ai_column(frame: pd.DataFrame, levels: Sequence[str]) -> str | None:
    """The intensity ``--sort ai`` orders by: DRAM's, else the outermost level with any value."""
    candidates = (["dram"] if "dram" in levels else []) + [lv for lv in reversed(levels) if lv != "dram"]
    for lv in candidates:
        col = f"ai_{lv}"
        if col in frame.columns and frame[col].notna().any():
            return col
    return None


def sort_rows(frame: pd.DataFrame, key: str = "time", levels: Sequence[str] = (),
              work_total: str = "flops") -> pd.DataFrame:
    """``frame``'s rows ordered by ``key`` (one of :data:`SORT_KEYS`), largest first, unknown last,
    ties by time; a copy with a fresh index. ``work_total``: the column ``key="work"`` orders by."""
    if key not in SORT_KEYS:
        raise InputError(f"unknown sort key {key!r}; choose one of {', '.join(SORT_KEYS)}")
    column = ai_column(frame, levels) if key == "ai" else work_total if key == "work" else SORT_KEYS[key]
    if column is None or column not in frame.columns:
        column = "time_s"
    out = frame.sort_values("time_s", ascending=False, kind="stable", na_position="last")
    out = out.sort_values(column, ascending=False, kind="stable", na_position="last")
    return out.reset_index(drop=True)

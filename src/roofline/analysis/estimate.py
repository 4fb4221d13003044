"""Measured against estimated: the counter-free estimate beside the counters, per operator or module.

The estimate (``roofline profile --torch`` without counters, or its ``.estimate.kernels.json``
beside an Nsight Compute run) gives each dispatched PyTorch operator analytic FLOPs and the
bytes of its tensors, the model LLM calculators use; the measured table gives each kernel launch
its counted FLOPs and DRAM bytes. :func:`measured_vs_estimated` puts them side by side with the
ratio estimated / measured, so a reader sees where the analytic model is wrong.

Matching: the estimate names the operator it saw dispatched (``aten::convolution``), while a
measured launch's innermost operator can lie deeper (``aten::cudnn_convolution`` under
``aten::convolution``). A measured launch is matched to the OUTERMOST entry of its operator stack
(``op_stack`` in the measured table's ``metrics``, ``"aten::conv2d/aten::convolution/..."``,
outermost first) that the estimate has for the same module and phase; else it keeps its innermost
operator (``op``). Launches of one side without a counterpart on the other form their own rows,
NaN on the missing side. Sums follow :func:`roofline.kernels.aggregate`: a quantity unknown in any
launch of a row is unknown (NaN) for the row, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from roofline.kernels import NO_OPERATOR, OUTSIDE_MODULES, KernelTable, aggregate, cut_modules, group_ids

#: What the two sides are compared on: column of the kernel table -> name in the result.
COMPARED = {"time_s": "time_s", "flops": "flops", "dram_bytes": "dram_bytes", "launches": "launches"}
#: The separator of ``op_stack`` entries.
STACK_SEPARATOR = "/"

CompareBy = Literal["op", "module"]
#: Stands for an unknown key while the two sides are merged (no operator or module is named so).
_MISSING = "<roofline: unknown>"


def ratio_column(name: str) -> str:
    """The ratio column of a compared quantity: ``time_ratio``, ``flops_ratio``, ``dram_bytes_ratio``."""
    return f"{name.removesuffix('_s')}_ratio"


def comparison_columns() -> list[str]:
    """The value columns of :func:`measured_vs_estimated`, in order."""
    out = []
    for name in COMPARED.values():
        out += [f"measured_{name}", f"estimated_{name}"] + ([ratio_column(name)] if name != "launches" else [])
    return out


def _estimated_ops(frame: pd.DataFrame) -> pd.Series:
    """The estimate's operator per row: ``op``, else the row's name when it names an operator
    (estimates written before ``op`` was a column named their rows by operator)."""
    op = frame["op"].astype("string")
    name = frame["kernel_name"].astype("string")
    return op.where(op.notna(), name.where(name.str.contains("::", regex=False).fillna(False)))


def matched_ops(measured: KernelTable, estimated_ops: pd.DataFrame) -> pd.Series:
    """Per measured launch: the operator it is compared under (see the module docstring).

    ``estimated_ops``: the estimate's distinct (``module``, ``phase``, ``op``) rows. Works on the
    distinct (module, phase, op, op_stack) combinations of the launches, not launch by launch.
    """
    frame = measured.frame.reset_index(drop=True)
    stacks = (measured.metrics["op_stack"].reset_index(drop=True)
              if "op_stack" in measured.metrics.columns and len(measured.metrics) == len(frame)
              else pd.Series([pd.NA] * len(frame), dtype="string"))
    keyed = pd.DataFrame({"module": frame["module"], "phase": frame["phase"], "op": frame["op"],
                          "op_stack": stacks.astype("string")})
    gid, first = group_ids(keyed, ["module", "phase", "op", "op_stack"])
    known: dict[tuple[object, object], set[str]] = {}
    for m, p, o in estimated_ops[["module", "phase", "op"]].itertuples(index=False):
        if not pd.isna(o):
            known.setdefault((None if pd.isna(m) else m, None if pd.isna(p) else p), set()).add(str(o))
    chosen: list[object] = []
    for m, p, o, stack in keyed.iloc[first].itertuples(index=False):  # distinct combinations only
        candidates = known.get((None if pd.isna(m) else m, None if pd.isna(p) else p), set())
        entries = [] if pd.isna(stack) else [e.strip() for e in str(stack).split(STACK_SEPARATOR) if e.strip()]
        chosen.append(next((e for e in entries if e in candidates), o))
    return pd.Series(pd.array(chosen, dtype="string").take(gid))


def _keys(by: str) -> list[str]:
    if by == "op":
        return ["op", "phase"]
    if by == "module":
        return ["module"]
    raise ValueError(f"by must be 'op' or 'module', not {by!r}")


def _label(row: pd.Series, by: str) -> str:
    if by == "module":
        return OUTSIDE_MODULES if pd.isna(row["module"]) else str(row["module"])
    op = NO_OPERATOR if pd.isna(row["op"]) else str(row["op"])
    return op if pd.isna(row["phase"]) else f"{op} [{row['phase']}]"


def _side(frame: pd.DataFrame, keys: Sequence[str], prefix: str) -> pd.DataFrame:
    """One side summed per key (``aggregate``'s rules: unknown in any launch is unknown), its keys as
    ``_key_<k>`` strings, :data:`_MISSING` for <NA>, so that the two sides merge on them."""
    summed = aggregate(frame, tuple(keys))
    out = pd.DataFrame({f"{prefix}_{name}": summed[col].to_numpy(dtype=float, na_value=np.nan)
                        for col, name in COMPARED.items()})
    for k in keys:
        out[f"_key_{k}"] = summed[k].astype("string").fillna(_MISSING).to_numpy(dtype=object)
    return out


def measured_vs_estimated(measured: KernelTable, estimated: KernelTable, by: CompareBy | str = "op",
                          depth: int | None = None) -> pd.DataFrame:
    """Measured and estimated time (s), FLOPs (FLOP), DRAM bytes (B) and launch counts per operator
    and phase (``by="op"``) or per module path (``by="module"``, cut to ``depth`` components, phases
    summed), with their ratios estimated / measured.

    Returns one row per key found on either side: the key columns (``op``, ``phase`` or ``module``;
    <NA> when unknown), ``label`` (``aten::addmm [backward]``, the module path, ``(no operator)``,
    ``(outside modules)``), then per quantity ``measured_<q>``, ``estimated_<q>`` and their ratio
    (``time_s`` and ``time_ratio``, ``flops`` and ``flops_ratio``, ``dram_bytes`` and ``dram_bytes_ratio``; launches without a ratio: ``measured_launches``,
    ``estimated_launches``, the estimate's operator calls). A side without the key, or without the
    quantity for a launch of it, is NaN; a ratio is NaN where either side is unknown or the measured
    value is 0. The estimate's DRAM bytes are its tensor sizes (an estimate of DRAM traffic).
    Rows are sorted by measured time, then estimated time, longest first.
    """
    keys = _keys(by)
    if depth is not None and by != "module":
        raise ValueError("depth applies to by='module' only")
    m_frame = measured.frame.reset_index(drop=True).copy()
    e_frame = estimated.frame.reset_index(drop=True).copy()
    e_frame["op"] = _estimated_ops(e_frame).to_numpy()
    if by == "op":
        m_frame["op"] = matched_ops(measured, e_frame[["module", "phase", "op"]].drop_duplicates()).to_numpy()
    else:
        m_frame, e_frame = cut_modules(m_frame, depth), cut_modules(e_frame, depth)
    m_side, e_side = _side(m_frame, keys, "measured"), _side(e_frame, keys, "estimated")
    merge_keys = [f"_key_{k}" for k in keys]
    merged = m_side.merge(e_side, on=merge_keys, how="outer", sort=False)
    out = pd.DataFrame({k: pd.array(merged[f"_key_{k}"].where(merged[f"_key_{k}"] != _MISSING, None), dtype="string")
                        for k in keys})
    out["label"] = pd.array([_label(r, by) for _, r in out.iterrows()], dtype="string")
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in COMPARED.values():
            m = merged[f"measured_{name}"].to_numpy(dtype=float, na_value=np.nan)
            e = merged[f"estimated_{name}"].to_numpy(dtype=float, na_value=np.nan)
            out[f"measured_{name}"] = m
            out[f"estimated_{name}"] = e
            if name != "launches":
                out[ratio_column(name)] = np.where(m > 0, e / m, np.nan)
    order = np.lexsort((-np.nan_to_num(out["estimated_time_s"].to_numpy(), nan=-np.inf),
                        -np.nan_to_num(out["measured_time_s"].to_numpy(), nan=-np.inf)))
    return out.iloc[order].reset_index(drop=True)[[*keys, "label", *comparison_columns()]]

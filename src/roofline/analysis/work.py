"""What a roofline counts as work: FLOPs, all operations, or warp instructions.

The roofline maths (:mod:`roofline.analysis.roofline`) is the same for each; what changes is the
work column, the compute ceilings it is held to, and the traffic per memory level:

=============  ==========================  ==================================  ================================
work           work per kernel             compute ceiling (machine key)       traffic per level, its ceiling
=============  ==========================  ==================================  ================================
flops          ``flops`` (FLOP)            per precision: fp64, fp32, fp16,    ``<level>_bytes`` (B), the level's
                                           tensor_<type>                       bandwidth (B/s)
ops            ``ops`` (OP): flops +       the FLOP keys, and int32,           as for flops
               int_ops + conversion_ops    conversion, tensor_int8
               + tensor_int_ops
instructions   ``warp_inst`` (warp         warp_inst (SMs x 4 schedulers x     ``<level>_transactions``, the
               instructions)               1 instruction per clock x clock)    level's bandwidth / bytes per
                                                                               transaction (32 B sectors at L1,
                                                                               L2, DRAM; 128 B shared wavefronts)
=============  ==========================  ==================================  ================================

The instruction roofline is Ding and Williams's, "An Instruction Roofline Model for GPUs"
(PMBS 2019): warp GIPS against warp instructions per transaction at each level. Under every work,
the compute ceiling of a kernel doing several kinds of work is the work-weighted harmonic mean of
their ceilings (the peak that would run its mix in the least time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from roofline.errors import MissingMetricsError
from roofline.kernels import BYTE_COLUMNS, FLOP_COLUMNS, TRANSACTION_COLUMNS
from roofline.machine.model import TRANSACTION_BYTES, Machine

WorkKind = Literal["flops", "ops", "instructions"]
WORK_KINDS: tuple[str, ...] = ("flops", "ops", "instructions")

#: A part column whose compute key is the tensor type of the row (``tensor_precision``).
TENSOR = "tensor"


@dataclass(frozen=True)
class Work:
    """One kind of work: its columns, ceilings and units (see the module docstring).

    ``parts``: (kernel-table column, machine compute key) pairs whose sum is ``total``; the key
    :data:`TENSOR` stands for ``tensor_<tensor_precision>`` of the row.
    ``traffic``: level -> kernel-table column of that level's traffic.
    ``transaction_bytes``: bytes per unit of traffic at each level (None: the traffic is bytes).
    """

    kind: str
    total: str
    partial: str
    parts: tuple[tuple[str, str], ...]
    traffic: Mapping[str, str]
    unit: str
    rate_unit: str
    traffic_unit: str
    transaction_bytes: Mapping[str, float] | None = None

    @property
    def intensity_unit(self) -> str:
        """'FLOP/B', 'OP/B' or 'inst/transaction'."""
        return f"{self.unit}/{self.traffic_unit}"

    @property
    def traffic_rate_unit(self) -> str:
        """'B/s' or 'transaction/s'."""
        return f"{self.traffic_unit}/s"

    @property
    def compute_keys(self) -> tuple[str, ...]:
        """The machine compute keys (tensor ones as ``tensor_*``) this work is held to."""
        return tuple(dict.fromkeys(k for _, k in self.parts if k != TENSOR))

    def uses_key(self, key: str) -> bool:
        """True when a machine compute ceiling ``key`` belongs to this work's roofline."""
        return key in self.compute_keys or (key.startswith("tensor_") and any(k == TENSOR for _, k in self.parts))

    def traffic_column(self, level: str) -> str | None:
        return self.traffic.get(level)

    def level_ceiling(self, machine: Machine | None, level: str) -> float | None:
        """The level's ceiling in traffic per second: its bandwidth (B/s), or bandwidth / bytes per
        transaction (transactions/s). None where the machine has no bandwidth for the level."""
        if machine is None or level not in machine.memory:
            return None
        bandwidth = float(machine.memory[level])
        if self.transaction_bytes is None:
            return bandwidth
        size = self.transaction_bytes.get(level)
        return bandwidth / size if size else None

    def levels(self, machine: Machine | None) -> list[str]:
        """The machine's levels this work has traffic columns for, innermost first."""
        if machine is None:
            return list(self.traffic)
        return [lv for lv in machine.levels if lv in self.traffic]


_FLOP_PARTS = (("fp64_flops", "fp64"), ("fp32_flops", "fp32"), ("fp16_flops", "fp16"), ("tensor_flops", TENSOR))
assert tuple(c for c, _ in _FLOP_PARTS) == FLOP_COLUMNS

FLOPS = Work("flops", "flops", "flops_partial", _FLOP_PARTS, dict(BYTE_COLUMNS), "FLOP", "FLOP/s", "B")
OPS = Work("ops", "ops", "ops_partial",
           (*_FLOP_PARTS, ("int_ops", "int32"), ("conversion_ops", "conversion"), ("tensor_int_ops", "tensor_int8")),
           dict(BYTE_COLUMNS), "OP", "OP/s", "B")
INSTRUCTIONS = Work("instructions", "warp_inst", "", (("warp_inst", "warp_inst"),), dict(TRANSACTION_COLUMNS),
                    "inst", "inst/s", "transaction", dict(TRANSACTION_BYTES))

WORKS: dict[str, Work] = {w.kind: w for w in (FLOPS, OPS, INSTRUCTIONS)}


def work_for(kind: str | Work) -> Work:
    """The :class:`Work` named ``kind`` ('flops', 'ops' or 'instructions')."""
    if isinstance(kind, Work):
        return kind
    try:
        return WORKS[kind]
    except KeyError:
        raise ValueError(f"work must be one of {', '.join(WORK_KINDS)}, not {kind!r}") from None


def lower_bound_rows(frame: pd.DataFrame, kind: str | Work) -> np.ndarray:
    """True for the rows whose work total is only a lower bound: a part of it was not counted
    (``flops_partial``, ``ops_partial``). An operator formula's total (``estimated``) is what the
    formula gives, not a bound. A 0 in such a row is no proof that the kernel did none of the work."""
    spec = work_for(kind)
    if not spec.partial or spec.partial not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    partial = frame[spec.partial].to_numpy(dtype=bool, na_value=False)
    if "estimated" in frame.columns:
        partial = partial & ~frame["estimated"].to_numpy(dtype=bool, na_value=False)
    return partial


def require_work(frame: pd.DataFrame, kind: str | Work, hints: Mapping[str, str] | None = None) -> None:
    """Raise :class:`MissingMetricsError` when no row of ``frame`` has a count of the work (and the
    work is not FLOPs, whose analysis reads bytes and time alone), naming the metrics to collect:
    ``hints['roofline:<work>']`` (the kernel table's :attr:`~roofline.kernels.KernelTable.metric_hints`)."""
    spec = work_for(kind)
    if spec.kind == "flops" or not len(frame):
        return
    values = frame[spec.total].to_numpy(dtype=float, na_value=np.nan) if spec.total in frame.columns else np.array([])
    if values.size and not np.isnan(values).all():
        return
    what = {"ops": "operation", "instructions": "warp-instruction"}[spec.kind]
    collect = (hints or {}).get(f"roofline:{spec.kind}")
    raise MissingMetricsError(
        f"no kernel in the profile has {what} counts, so there is no {spec.kind} roofline to draw",
        hint=(f"collect {collect} (roofline profile collects them all in one run), or " if collect else "")
        + "leave out --work to see the FLOP roofline")

"""THE formula table: Nsight Compute counters -> kernel-table columns, per architecture.

Every FLOP, operation, instruction, transaction, byte and time figure the package derives from ncu
metrics is written once, in the tables of this package, for a person to check against NVIDIA's
documentation:

* :mod:`roofline.counting.forms`: how one counter is read in every form ncu writes (its total,
  its per-cycle rate x elapsed cycles, its per-second rate x time, the roofline sections' derived
  per-cycle metrics, an idle pipe's 0 %), and what a formula is;
* :mod:`roofline.counting.flops`: FP64, FP32 and FP16 FLOPs (two FP16 conventions), bytes per
  level and launch time;
* :mod:`roofline.counting.tensor`: tensor-core FLOPs per floating-point type and integer tensor
  operations (INT8, INT4), per architecture (512 FLOPs per tensor instruction on V100);
* :mod:`roofline.counting.instructions`: integer, conversion and SFU operations, warp
  instructions, global and shared load/store instructions, transactions per level (L1 sectors,
  shared wavefronts, L2 and DRAM sectors) and shared-memory bytes;
* :mod:`roofline.counting.hints`: what to collect for each column, as notes name it (the kernel
  table carries it to the analysis and views, :attr:`roofline.kernels.KernelTable.metric_hints`);
* :mod:`roofline.counting.raw_metrics`: the metrics read as they are, not through a formula (the
  guidance rules'), with their ncu sections.

This package is the one place outside the ncu readers (:mod:`roofline.readers.ncu`) and the profiler
(:mod:`roofline.profiling`) that names an Nsight Compute metric: analysis, views and guidance ask it.

A FLOP, byte or time column whose counters were not collected is NaN (never 0), with one warning
per column naming the ncu metrics that would supply it. The columns beyond FLOPs (operations,
instructions, transactions, shared bytes, :data:`~roofline.counting.instructions.HINTED_COLUMNS`)
are NaN too, but a profile without them is a plain FLOP/byte profile: instead of a warning,
:attr:`Counted.missing_hints` names their metrics (and :attr:`Counted.lower_bounds` what a lower
bound lacks) for the analysis that needs them (``--work ops|instructions``, :meth:`Counted.hints_for`).

Names were checked with ``ncu --query-metrics --chip`` (Nsight Compute 2024.1.1) for gv100, tu102,
ga100, ga102, ad102 and gh100 (tests/profiling). An SM the table does not list (SM 12.x today) is
read with the same formulas; only the tensor rules and packed FP32 (SM 10.0/10.3: FADD2, FMUL2,
FFMA2, not in ncu 2024.1.1's metric lists; :mod:`roofline.counting.flops`) depend on the architecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from roofline.counting import flops, instructions, tensor
from roofline.counting.flops import GPC_CLOCK, GPC_CYCLES, GPU_TIME, GPU_TIME_AVG, SM_CLOCK, SM_CYCLES
from roofline.counting.forms import (
    ALL,
    ARCHS,
    Counter,
    Formula,
    Reader,
    applies,
    arch_family,
    formula_value,
    ncu_hint,
    nowhere,
    sass,
    sm,
)
from roofline.counting.hints import NCU_HINTS
from roofline.counting.instructions import HINTED_COLUMNS
from roofline.counting.tensor import (
    PIPE_TENSOR,
    TENSOR_PATHS,
    TENSOR_PRECISIONS,
    V100_TENSOR,
    TensorPath,
    tensor_metrics_requested,
)
from roofline.kernels import sameness
from roofline.units import counted

#: The whole table, in the order of the kernel table's columns.
FORMULAS: tuple[Formula, ...] = (*flops.FORMULAS[:4], *tensor.FORMULAS, *flops.FORMULAS[4:], *instructions.FORMULAS)

__all__ = [
    "ALL", "ARCHS", "FORMULAS", "GPC_CLOCK", "GPC_CYCLES", "GPU_TIME", "GPU_TIME_AVG", "HINTED_COLUMNS",
    "NCU_HINTS", "PIPE_TENSOR", "SM_CLOCK", "SM_CYCLES", "TENSOR_PATHS", "TENSOR_PRECISIONS", "V100_TENSOR",
    "Counted", "Counter", "Formula", "Reader", "TensorPath", "arch_family", "count", "ncu_hint", "required_metrics",
    "sass", "sm", "tensor_metrics_requested",
]


def required_metrics(compute_capability: str) -> list[str]:
    """Every ncu metric the formulas for this architecture consume (for ``ncu --metrics``): each
    formula's preferred alternative, and the tensor counters the architecture has."""
    names = [GPU_TIME.name, SM_CYCLES.name, SM_CLOCK.name]
    for f in FORMULAS:
        if f.convention not in (None, "ncu"):
            continue
        if f.column == "tensor_flops" or not applies(f.archs, compute_capability):
            continue
        names += [c.name for _, c in f.terms if c.exists_on(compute_capability)]
        if f.column == "fp32_flops" and compute_capability in flops.PACKED_FP32_ARCHS:
            names += [c.name for _, c in flops.PACKED_FP32]
    names.append(PIPE_TENSOR.name)
    if arch_family(compute_capability) in tensor.TC_PIPE_ARCHS:
        names.append(tensor.PIPE_TC.name)
    for path in TENSOR_PATHS:
        names += list(tensor.requested(path, compute_capability))
    names += ["dram__bytes_read.sum", "dram__bytes_write.sum"]
    return list(dict.fromkeys(names))


@dataclass
class Counted:
    """The derived columns (arrays aligned with the metrics' rows) and the warnings.

    ``missing_hints``: column -> the ncu metrics that would supply it, for the columns beyond FLOPs
    (:data:`HINTED_COLUMNS`) that are unknown for every launch; not warned about (a FLOP/byte profile
    lacks them by design). ``lower_bounds``: column -> the optional counters (local-memory parts)
    not collected, where the column is a lower bound for some launch.
    """

    columns: dict[str, np.ndarray]
    warnings: list[str]
    missing_hints: dict[str, list[str]] = field(default_factory=dict)
    lower_bounds: dict[str, list[str]] = field(default_factory=dict)
    #: launches whose value is a lower bound, per column of ``lower_bounds``
    lower_bound_launches: dict[str, int] = field(default_factory=dict)

    def hints_for(self, columns: tuple[str, ...] | list[str]) -> list[str]:
        """Warnings, worded as the FLOP columns' are, for those of ``columns`` that are unknown or
        lower bounds: what an analysis of that work (``--work ops|instructions``) should tell the user."""
        out: list[str] = []
        for column in columns:
            if column in self.missing_hints:
                names = self.missing_hints[column]
                out.append(f"{column} unknown: metrics not collected: {', '.join(names)}; {ncu_hint(names)}")
            if column in self.lower_bounds:
                names = self.lower_bounds[column]
                launches = counted(self.lower_bound_launches.get(column, 0), "launch", "launches")
                out.append(f"{column} is a lower bound for {launches}: {', '.join(names)} not collected; "
                           f"{ncu_hint(names)}")
        return out


def _architectures(compute_capability: pd.Series) -> tuple[np.ndarray, list[str | None]]:
    """The distinct compute capabilities (None: unknown) in order of first appearance, and each
    launch's position among them; one architecture for every launch (the rule) without hashing."""
    array = compute_capability.array
    if isinstance(array, pd.Categorical) and array.categories.dtype.kind in "OUT":  # encoded: its codes, not a text a launch
        codes = np.asarray(array.codes)
        same = sameness(array)
        if same != "mixed" and len(codes):
            return np.zeros(len(codes), dtype=np.intp), [None if same == "missing" else str(array.categories[codes[0]])]
        dense, firsts = pd.factorize(codes, use_na_sentinel=False)
        return dense, [None if c < 0 else str(array.categories[c]) for c in firsts.tolist()]
    values = compute_capability.astype("string").array
    same = sameness(values)
    if same != "mixed" and len(values):
        return np.zeros(len(values), dtype=np.intp), [None if same == "missing" else str(values[0])]
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes, [None if c is pd.NA else str(c) for c in uniques]


def _add_packed_fp32(reader: Reader, cc_codes: np.ndarray, distinct: list[str | None], cols: dict[str, np.ndarray],
                     missing: dict[str, list[str]], warnings: list[str]) -> None:
    """Add packed FP32 FLOPs (:func:`roofline.counting.flops.packed_fp32`) to ``fp32_flops``; where
    an SM that has them lacks their counters, warn that the column may be a lower bound."""
    archs = [cc for cc in distinct if cc in flops.PACKED_FP32_ARCHS]
    has_packed = np.isin(cc_codes, [distinct.index(cc) for cc in archs])
    packed = flops.packed_fp32(reader, has_packed)
    if packed is None:
        return
    fp32 = cols["fp32_flops"] + packed.flops
    cols["fp32_flops"] = fp32
    if "fp32_flops" in missing:  # nothing known: the hint names the packed counters too
        missing["fp32_flops"] = [*missing["fp32_flops"], *packed.names]
    lower = packed.lacking & ~np.isnan(fp32)
    if lower.any():
        where = ", ".join(f"SM {cc}" for cc in archs)
        warnings.append(f"fp32_flops may be a lower bound for {counted(int(lower.sum()), 'launch', 'launches')} on "
                        f"{where}: packed FP32 instructions (FADD2, FMUL2, FFMA2) not collected: "
                        f"{', '.join(packed.names)}; {ncu_hint(packed.names)}")


def count(metrics: pd.DataFrame, compute_capability: pd.Series, *, fp16: str = "ncu") -> Counted:
    """Derive time, clock, FLOPs, operations, instructions, transactions and bytes per launch from raw
    ncu metrics (SI units).

    ``compute_capability`` (strings like ``'8.0'``, <NA> when unknown) selects the
    architecture rules per launch. Returns the kernel-table columns as arrays plus warnings.
    """
    if fp16 not in ("ncu", "paper"):
        raise ValueError(f"fp16 must be 'ncu' or 'paper', not {fp16!r}")
    # architectures in order of first appearance (<NA> among them), each launch by its code
    cc_codes, distinct = _architectures(compute_capability)
    reader = Reader(metrics, cc_codes, distinct)
    n = reader.n
    warnings: list[str] = []
    missing: dict[str, list[str]] = {}
    out = Counted({}, warnings)
    cols = out.columns

    time = flops.launch_time(reader)
    reader.time = time
    if np.isnan(time).all():
        missing["time_s"] = [GPU_TIME.name]
    cols["time_s"] = time
    clock = flops.sm_clock(reader)
    cols["sm_clock_hz"] = clock if clock is not None else nowhere(n)
    if clock is None:
        missing["sm_clock_hz"] = [SM_CLOCK.name]

    for f in FORMULAS:
        if f.column == "tensor_flops" or f.convention not in (None, fp16):
            continue
        value = formula_value(reader, f)
        cols[f.column] = value.values
        if value.missing:
            (out.missing_hints if f.column in HINTED_COLUMNS else missing)[f.column] = value.missing
        if value.lacking:
            out.lower_bounds[f.column] = value.lacking
            out.lower_bound_launches[f.column] = int(value.lower_bound.sum())

    _add_packed_fp32(reader, cc_codes, distinct, cols, missing, warnings)
    work = tensor.tensor_work(reader, cc_codes, distinct, warnings)
    cols["tensor_flops"] = work.flops
    cols["tensor_int_ops"] = work.int_ops
    cols["tensor_precision"] = work.precision
    if work.missing:
        missing["tensor_flops"] = work.missing
    if work.int_missing:
        out.missing_hints["tensor_int_ops"] = work.int_missing

    for column, names in missing.items():
        warnings.append(f"{column} unknown: metrics not collected: {', '.join(names)}; {ncu_hint(names)}")
    out.warnings = list(dict.fromkeys(warnings))
    return out


from roofline._lazy import attach  # noqa: E402

#: The AMD formula table, reachable as ``roofline.counting.amd`` and imported on first use (not by every
#: Nsight Compute reading).
__getattr__, __dir__ = attach(__name__, {}, ("amd",), eager=__all__)

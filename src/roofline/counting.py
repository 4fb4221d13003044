"""THE formula table: Nsight Compute counters -> kernel-table columns, per architecture.

Every FLOP, byte and time figure the package derives from ncu metrics is written
once, in the tables below, for a person to check against NVIDIA's documentation.
A column whose counters were not collected is NaN (never 0), with one warning per
column naming the ncu metrics that would supply it.

Architectures (SM compute capability major): 7.x Volta/Turing, 8.x Ampere/Ada,
9.x Hopper, 10.x Blackwell. ``sm__X`` and ``smsp__X`` name the same total for
``.sum`` counters; either is accepted (the first listed that is present wins).

Sources
-------
* FP64/FP32/FP16 instruction formulas and the SM clock: Nsight Compute's
  "GPU Speed Of Light Hierarchical Roofline" section files (SpeedOfLight_Hierarchical*
  RooflineChart.section): FFMA counted x2, FADD/FMUL x1; its half-precision chart
  counts HADD and HMUL x2 and HFMA x4 (``derived__..._hfma_pred_on_x4``: paired
  ``half2`` instructions, 2 lanes).
* FP16 conventions: ``fp16="ncu"`` (default) = 2 hadd + 2 hmul + 4 hfma as above;
  ``fp16="paper"`` = hadd + hmul + 2 hfma, as Yang et al., "Hierarchical Roofline
  Analysis" (arXiv 2009.05257) and their DeepCAM tables. The table records which.
* Tensor cores, SM 7.0/7.2 (V100, Xavier): 512 FLOPs per ``sm__inst_executed_pipe_tensor``
  instruction (the section file's ``derived__sm__inst_executed_pipe_tensor_x512``;
  exact on V100: 2*M*N*K / instructions = 512 for a 20480^3 GEMM in tests/data).
  SM 7.5 (Turing) issues other HMMA shapes: no constant is assumed.
* Tensor cores, SM >= 8.0: FLOPs per instruction depend on the shape (2048 or 4096
  on A100), so only the ``sm__ops_path_tensor_src_<type>[_dst_<type>].sum`` counters
  (operations, = FLOPs for float types) are used. Names as used by Nsight Compute's
  roofline sections (``sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained``)
  and by published ncu workflows (src_fp16_dst_fp16/fp32, src_bf16_dst_fp32,
  src_tf32_dst_fp32, src_fp64, src_fp8); ``src_int8`` is accepted when present but
  not requested. NOT yet checked against ``ncu --query-metrics`` on each chip.
  With only instruction counts on SM >= 8.0 tensor FLOPs are NaN with a warning,
  except an instruction count of exactly 0, which is exactly 0 FLOPs.
* Bytes: L1 ``l1tex__t_bytes.sum``, L2 ``lts__t_bytes.sum``, DRAM ``dram__bytes.sum``
  (or ``dram__bytes_read.sum + dram__bytes_write.sum``), as in the paper.
* Time: ``gpu__time_duration.sum``; else ``sm__cycles_elapsed.avg /
  sm__cycles_elapsed.avg.per_second`` (the paper's formula).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.errors import InputError

#: Compute-capability majors we have formulas for.
ARCHS = ("7", "8", "9", "10")
ALL = ARCHS


@dataclass(frozen=True)
class Counter:
    """One quantity: the first of ``names`` present in the profile is read."""

    names: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.names[0]


def sm(metric: str) -> Counter:
    """A counter available as ``sm__<metric>`` or ``smsp__<metric>``."""
    return Counter((f"sm__{metric}", f"smsp__{metric}"))


def sass(op: str) -> Counter:
    """Predicated-on thread instructions of one SASS opcode class (dadd, ffma, hmul...)."""
    return sm(f"sass_thread_inst_executed_op_{op}_pred_on.sum")


@dataclass(frozen=True)
class Formula:
    """``column = sum(weight * counter)`` on the listed architectures."""

    column: str
    archs: tuple[str, ...]
    terms: tuple[tuple[float, Counter], ...]
    doc: str
    convention: str | None = None  # fp16 only: "ncu" or "paper"


#: Time and clock (alternatives in order of preference are handled in :func:`count`).
GPU_TIME = Counter(("gpu__time_duration.sum",))
SM_CYCLES = sm("cycles_elapsed.avg")
SM_CLOCK = sm("cycles_elapsed.avg.per_second")
PIPE_TENSOR = sm("inst_executed_pipe_tensor.sum")
DRAM_READ = Counter(("dram__bytes_read.sum",))
DRAM_WRITE = Counter(("dram__bytes_write.sum",))

FORMULAS: tuple[Formula, ...] = (
    Formula("fp64_flops", ALL, ((1, sass("dadd")), (1, sass("dmul")), (2, sass("dfma"))), "FP64: dadd + dmul + 2 dfma"),
    Formula("fp32_flops", ALL, ((1, sass("fadd")), (1, sass("fmul")), (2, sass("ffma"))), "FP32: fadd + fmul + 2 ffma"),
    Formula("fp16_flops", ALL, ((2, sass("hadd")), (2, sass("hmul")), (4, sass("hfma"))),
            "FP16, Nsight Compute's convention (half2 pairs): 2 hadd + 2 hmul + 4 hfma", convention="ncu"),
    Formula("fp16_flops", ALL, ((1, sass("hadd")), (1, sass("hmul")), (2, sass("hfma"))),
            "FP16, the paper's convention: hadd + hmul + 2 hfma", convention="paper"),
    Formula("tensor_flops", ("7.0", "7.2"), ((512, PIPE_TENSOR),), "tensor, V100/Xavier: 512 x tensor-pipe instructions"),
    Formula("l1_bytes", ALL, ((1, Counter(("l1tex__t_bytes.sum",))),), "bytes through L1/TEX"),
    Formula("l2_bytes", ALL, ((1, Counter(("lts__t_bytes.sum",))),), "bytes through L2"),
    Formula("dram_bytes", ALL, ((1, Counter(("dram__bytes.sum",))),), "bytes to/from DRAM (else read + write)"),
)


@dataclass(frozen=True)
class TensorPath:
    """Tensor-core operations of one input type (SM >= 8.0).

    ``alternatives`` are sets of counters that each give the whole total, best first
    (the per-source total, then its per-destination parts, summed).
    """

    precision: str
    alternatives: tuple[tuple[str, ...], ...]
    archs: tuple[str, ...]
    requested: tuple[str, ...]  # what required_metrics asks ncu for


_OPS = "sm__ops_path_tensor_src_"
TENSOR_PATHS: tuple[TensorPath, ...] = (
    TensorPath("fp16", ((f"{_OPS}fp16.sum",), (f"{_OPS}fp16_dst_fp16.sum", f"{_OPS}fp16_dst_fp32.sum")),
               ("8", "9", "10"), (f"{_OPS}fp16_dst_fp16.sum", f"{_OPS}fp16_dst_fp32.sum")),
    TensorPath("bf16", ((f"{_OPS}bf16.sum",), (f"{_OPS}bf16_dst_fp32.sum",)), ("8", "9", "10"), (f"{_OPS}bf16_dst_fp32.sum",)),
    TensorPath("tf32", ((f"{_OPS}tf32.sum",), (f"{_OPS}tf32_dst_fp32.sum",)), ("8", "9", "10"), (f"{_OPS}tf32_dst_fp32.sum",)),
    TensorPath("fp64", ((f"{_OPS}fp64.sum",),), ("8", "9", "10"), (f"{_OPS}fp64.sum",)),
    TensorPath("fp8", ((f"{_OPS}fp8.sum",),), ("9", "10"), (f"{_OPS}fp8.sum",)),
    TensorPath("int8", ((f"{_OPS}int8.sum",),), ("8", "9", "10"), ()),
)


def arch_family(cc: str | None) -> str | None:
    """``'7.0'`` -> ``'7'``; None for unknown."""
    if cc is None or cc is pd.NA or not isinstance(cc, str) or not cc.strip():
        return None
    return cc.strip().split(".")[0]


def check_architectures(ccs: Iterable[object], *, where: str | None = None) -> None:
    """Raise :class:`InputError` for a compute capability we have no formulas for."""
    bad = sorted({str(c) for c in ccs if isinstance(c, str) and arch_family(c) not in ARCHS})
    if bad:
        raise InputError(
            f"unknown GPU architecture: compute capability {', '.join(bad)} (formulas exist for SM "
            f"{', '.join(a + '.x' for a in ARCHS)})", path=where,
            hint="add the architecture to roofline.counting's formula table after checking NVIDIA's metric docs",
        )


def _applies(archs: tuple[str, ...], cc: str | None) -> bool:
    fam = arch_family(cc)
    return fam in archs or (cc is not None and cc in archs)


def required_metrics(compute_capability: str) -> list[str]:
    """Every ncu metric the formulas for this architecture consume (for ``ncu --metrics``)."""
    check_architectures([compute_capability])
    names = [GPU_TIME.name, SM_CYCLES.name, SM_CLOCK.name]
    for f in FORMULAS:
        if f.convention not in (None, "ncu"):
            continue
        if _applies(f.archs, compute_capability):
            names += [c.name for _, c in f.terms]
    names.append(PIPE_TENSOR.name)
    for path in TENSOR_PATHS:
        if _applies(path.archs, compute_capability):
            names += list(path.requested)
    return list(dict.fromkeys(names))


def ncu_hint(metrics: Iterable[str]) -> str:
    """The command-line hint that collects ``metrics``."""
    return "collect with: ncu --metrics " + ",".join(dict.fromkeys(metrics))


def _get(metrics: pd.DataFrame, counter: Counter) -> np.ndarray | None:
    for name in counter.names:
        if name in metrics.columns and metrics[name].dtype.kind in "iuf":
            return metrics[name].to_numpy(dtype=np.float64)
    return None


@dataclass
class Counted:
    """The derived columns (arrays aligned with the metrics' rows) and the warnings."""

    columns: dict[str, np.ndarray]
    warnings: list[str]


def _formula_value(metrics: pd.DataFrame, f: Formula, missing: dict[str, list[str]]) -> np.ndarray:
    n = len(metrics)
    total = np.zeros(n)
    for weight, counter in f.terms:
        values = _get(metrics, counter)
        if values is None:
            if f.column == "dram_bytes":
                rd, wr = _get(metrics, DRAM_READ), _get(metrics, DRAM_WRITE)
                if rd is not None and wr is not None:
                    return rd + wr
            missing.setdefault(f.column, []).append(counter.name)
            return np.full(n, np.nan)
        total = total + weight * values
    return total


def _tensor_ops(metrics: pd.DataFrame, rows: np.ndarray, cc: str | None, warnings: list[str]) -> tuple[np.ndarray | None, np.ndarray]:
    """Tensor FLOPs from ops-path counters (SM >= 8.0) and the dominant precision; None when none was collected."""
    n = int(rows.sum())
    per_precision: dict[str, np.ndarray] = {}
    for path in TENSOR_PATHS:
        if cc is not None and not _applies(path.archs, cc):
            continue
        for alternative in path.alternatives:
            present = [m for m in alternative if m in metrics.columns and metrics[m].dtype.kind in "iuf"]
            if not present:
                continue
            if len(present) < len(alternative):
                absent = [m for m in alternative if m not in present]
                warnings.append(f"tensor {path.precision} FLOPs may be a lower bound: {', '.join(absent)} not collected")
            per_precision[path.precision] = sum(metrics[m].to_numpy(dtype=np.float64)[rows] for m in present)
            break
    precision = np.full(n, None, dtype=object)
    if not per_precision:
        return None, precision
    stacked = np.vstack(list(per_precision.values()))
    total = stacked.sum(axis=0)
    names = np.array(list(per_precision))
    best = np.nanargmax(np.where(np.isnan(stacked), -1.0, stacked), axis=0)
    precision = np.where(total > 0, names[best], None).astype(object)
    return total, precision


def count(metrics: pd.DataFrame, compute_capability: pd.Series, *, fp16: str = "ncu") -> Counted:
    """Derive time, clock, FLOPs and bytes per launch from raw ncu metrics (SI units).

    ``compute_capability`` (strings like ``'8.0'``, <NA> when unknown) selects the
    formulas per launch. Returns the kernel-table columns as arrays plus warnings.
    """
    if fp16 not in ("ncu", "paper"):
        raise ValueError(f"fp16 must be 'ncu' or 'paper', not {fp16!r}")
    n = len(metrics)
    cc_series = compute_capability.astype("string").reset_index(drop=True)
    distinct = [None if c is pd.NA else str(c) for c in pd.unique(cc_series)]
    check_architectures([c for c in distinct if c is not None])
    warnings: list[str] = []
    missing: dict[str, list[str]] = {}
    cols: dict[str, np.ndarray] = {}

    clock = _get(metrics, SM_CLOCK)
    cycles = _get(metrics, SM_CYCLES)
    gpu_time = _get(metrics, GPU_TIME)
    by_cycles = cycles / clock if cycles is not None and clock is not None else np.full(n, np.nan)
    time = gpu_time.copy() if gpu_time is not None else np.full(n, np.nan)
    time = np.where(np.isnan(time), by_cycles, time)
    if np.isnan(time).all():
        missing["time_s"] = [GPU_TIME.name]
    cols["time_s"] = time
    cols["sm_clock_hz"] = clock if clock is not None else np.full(n, np.nan)
    if clock is None:
        missing["sm_clock_hz"] = [SM_CLOCK.name]

    for f in FORMULAS:
        if f.column == "tensor_flops" or f.convention not in (None, fp16):
            continue
        cols[f.column] = _formula_value(metrics, f, missing)

    tensor = np.full(n, np.nan)
    precision = np.full(n, None, dtype=object)
    inst = _get(metrics, PIPE_TENSOR)
    tensor_missing = False
    for cc in distinct:
        rows = (cc_series == cc).fillna(False).to_numpy(dtype=bool) if cc is not None else cc_series.isna().to_numpy()
        v100 = next(f for f in FORMULAS if f.column == "tensor_flops")
        if cc is not None and _applies(v100.archs, cc):
            if inst is not None:
                tensor[rows] = 512 * inst[rows]
                precision[rows] = np.where(inst[rows] > 0, "fp16", None)
            else:
                tensor_missing = True
            continue
        ops, prec = _tensor_ops(metrics, rows, cc, warnings)
        if ops is not None:
            tensor[rows] = ops
            precision[rows] = prec
            continue
        if inst is not None:
            zero = inst[rows] == 0
            part = np.full(int(rows.sum()), np.nan)
            part[zero] = 0.0
            tensor[rows] = part
            if not zero.all():
                what = f"SM {cc}" if cc is not None else "an unknown architecture"
                warnings.append(
                    f"tensor_flops unknown for {int((~zero).sum())} launches on {what}: FLOPs per tensor instruction "
                    f"depend on the instruction shape; {ncu_hint(r for p in TENSOR_PATHS for r in p.requested)}"
                )
        else:
            tensor_missing = True
    if tensor_missing:
        missing["tensor_flops"] = [PIPE_TENSOR.name] + [r for p in TENSOR_PATHS for r in p.requested]
    cols["tensor_flops"] = tensor
    cols["tensor_precision"] = precision

    for column, names in missing.items():
        warnings.append(f"{column} unknown: metrics not collected: {', '.join(names)}; {ncu_hint(names)}")
    return Counted(cols, list(dict.fromkeys(warnings)))

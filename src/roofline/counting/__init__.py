"""THE formula table: Nsight Compute counters -> kernel-table columns, per architecture.

Every FLOP, byte and time figure the package derives from ncu metrics is written
once, in the tables below, for a person to check against NVIDIA's documentation.
A column whose counters were not collected is NaN (never 0), with one warning per
column naming the ncu metrics that would supply it.

Every form ncu writes
---------------------
A counter total (say the predicated-on thread FFMA instructions of a launch) is read
from the first form present, launch by launch (:class:`Counter`):

1. the total itself, ``sm__X.sum`` or ``smsp__X.sum`` (the same total for ``.sum``);
2. its rate per elapsed cycle, ``<unit>__X.sum.per_cycle_elapsed`` x that unit's
   ``<unit>__cycles_elapsed.avg`` (or, when only the clock was collected,
   ``<unit>__cycles_elapsed.avg.per_second`` x the launch's time). This is how
   Nsight Compute's own roofline sections compute achieved work (``ValuePerCycleMetrics``
   x ``smsp__cycles_elapsed.avg.per_second``), and what ``--set full`` exports hold;
3. its rate per second, ``<unit>__X.sum.per_second`` x the launch's time;
4. the sections' derived per-cycle metrics (``derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2``
   = FFMA per cycle x 2), divided by their factor, x cycles as in 2.
5. for the tensor-pipe instruction count on SM 7.x/8.x and the half instruction counts (fp16 pipe
   of SM 7.x/8.0) only, a pipe utilization of exactly 0 % of peak
   (``sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_active``,
   ``sm__inst_executed_pipe_fp16.sum.pct_of_peak_sustained_active``: what ``--set full`` holds where
   it has no tensor or half roofline section) proves the count is 0. (A CSV prints these percentages
   to two decimals: there, "0" bounds the work below 0.005 % of the pipe's peak.)

Architecture-independent (any SM the file comes from, known or not)
-------------------------------------------------------------------
* FP64/FP32: add + mul + 2 fma thread instructions (Nsight Compute's Double/Single
  roofline sections: ``derived__..._ffma_pred_on_x2`` and the add/mul rates).
* FP16 (non-tensor), two conventions, recorded in the table:
  ``fp16="ncu"`` (default) = 2 hadd + 2 hmul + 4 hfma: each half instruction works on a
  ``half2`` pair, as Nsight Compute 2025+ counts it (``derived__smsp__..._hadd_pred_on_x2``,
  ``..._hmul_pred_on_x2``, ``..._hfma_pred_on_x4``, and the peak ``derived__sm__..._hfma_pred_on_x4``);
  ``fp16="paper"`` = hadd + hmul + 2 hfma, as Yang et al. (arXiv 2009.05257) and Nsight Compute
  2024.1's Half roofline section (``..._hfma_pred_on_x2`` for achieved and peak alike).
  The profile's own FP16 ceiling (:mod:`roofline.analysis.ceilings`) follows the same convention.
* Tensor cores: the ``sm__ops_path_tensor_*`` operation counters (math operations, = FLOPs for
  float types), per input type (:data:`TENSOR_PATHS`): the per-type totals
  (``src_fp16`` on Hopper, ``src_fp16_dst_fp16`` + ``src_fp16_dst_fp32`` before it), else their
  ``_sparsity_off`` + ``_sparsity_on`` parts, else Hopper's per-instruction-kind counters
  (``op_hgmma``/``op_hmma``/``op_igmma``/``op_imma``, each total or its sparsity parts). One
  alternative per type, so nothing is counted twice. ``_sparsity_on`` parts that were not
  collected are taken as no 2:4-sparse work (collecting only ``_sparsity_off`` is common practice).
* Bytes: L1 ``l1tex__t_bytes.sum`` or 32 x ``l1tex__t_sectors.sum``; L2 ``lts__t_bytes.sum`` or
  32 x ``lts__t_sectors.sum``; DRAM ``dram__bytes.sum``, else read + write, else 32 x
  ``dram__sectors.sum`` (or its read + write), as in the paper (32-byte sectors).
* Time: ``gpu__time_duration.sum``, else ``.avg`` (what application-range replay writes), else
  ``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second`` (the paper's formula), else
  the Speed-of-Light section's ``gpc__cycles_elapsed.max / gpc__cycles_elapsed.avg.per_second``.

Per architecture (compute capability major)
--------------------------------------------
* SM 7.0/7.2 (V100, Xavier): without ops counters, 512 FLOPs per ``sm__inst_executed_pipe_tensor``
  instruction (the Tensor section's ``derived__sm__inst_executed_pipe_tensor_x512``; exact on V100:
  2MNK / instructions = 512 for a 20480^3 GEMM in tests/data).
* Every other SM: FLOPs per tensor instruction depend on the shape, so with only instruction
  counts tensor FLOPs are NaN with a warning, except an instruction count of exactly 0 (exactly
  0 FLOPs). An SM this table does not list (SM 12.x today) is read all the same: only that rule
  needs the architecture.

A tensor type whose counter was not collected while the launch executed tensor
instructions (``sm__inst_executed_pipe_tensor`` > 0) and the collected types add up to 0:
tensor FLOPs unknown, with a warning. Names were checked with ``ncu --query-metrics --chip``
(Nsight Compute 2024.1.1) for gv100, tu102, ga100, ga102, ad102 and gh100 (tests/profiling).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from roofline.units import counted

#: Compute-capability majors the table has rules for (others are read with the general rules).
ARCHS = ("7", "8", "9", "10")
#: Formulas that hold on every architecture.
ALL = ("*",)
#: Architectures with the 512-FLOPs-per-tensor-instruction rule.
V100_TENSOR = ("7.0", "7.2")


# -- reading one counter in every form ---------------------------------------------------------

@dataclass(frozen=True)
class Counter:
    """One counter total, read from the first form present (see the module docstring).

    ``names``: the totals (``sm__X.sum``, ``smsp__X.sum``), best first.
    ``derived``: (column, factor) of per-cycle derived metrics: column / factor = the per-cycle
    rate of the total, on the unit the column names (``derived__smsp__...`` -> smsp).
    """

    names: tuple[str, ...]
    derived: tuple[tuple[str, float], ...] = ()
    #: Utilization columns (``% of peak``) whose value of exactly 0 proves the total is 0 where no
    #: other form is present (a ``--set full`` export has the tensor pipe's utilization only).
    idle: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.names[0]

    def forms(self) -> list[str]:
        """Every column this counter can be read from."""
        out: list[str] = []
        for n in self.names:
            out += [n, f"{n}.per_cycle_elapsed", f"{n}.per_second"]
        return out + [d for d, _ in self.derived]


def sm(metric: str, derived: tuple[tuple[str, float], ...] = ()) -> Counter:
    """A counter available as ``sm__<metric>`` or ``smsp__<metric>``."""
    return Counter((f"sm__{metric}", f"smsp__{metric}"), derived)


def sass(op: str, derived_factor: float | None = None, *more: tuple[str, float]) -> Counter:
    """Predicated-on thread instructions of one SASS opcode class (dadd, ffma, hmul...), with the
    roofline sections' ``derived__smsp__..._x<factor>`` per-cycle form where one exists."""
    base = f"sass_thread_inst_executed_op_{op}_pred_on"
    derived = ((f"derived__smsp__{base}_x{derived_factor:g}", derived_factor),) if derived_factor else ()
    return sm(f"{base}.sum", derived + tuple(more))


def _unit(column: str) -> str:
    """The hardware unit a metric counts on: ``smsp`` for ``smsp__x`` and ``derived__smsp__x``."""
    parts = column.split("__")
    return parts[1] if parts[0] == "derived" and len(parts) > 2 else parts[0]


#: Units that run on one clock (an SM and its four sub-partitions).
_SAME_CLOCK = {"sm": ("smsp",), "smsp": ("sm",)}


class Reader:
    """Reads counters from one metrics frame (SI units), launch by launch."""

    def __init__(self, metrics: pd.DataFrame) -> None:
        self.metrics = metrics
        self.n = len(metrics)
        self.time = np.full(self.n, np.nan)  # set by count() once time is known

    def column(self, name: str) -> np.ndarray | None:
        m = self.metrics
        if name in m.columns and m[name].dtype.kind in "iuf":
            return m[name].to_numpy(dtype=np.float64, na_value=np.nan)
        return None

    def has(self, name: str) -> bool:
        return self.column(name) is not None

    def cycles(self, unit: str) -> np.ndarray | None:
        """Elapsed cycles of ``unit``: ``<unit>__cycles_elapsed.avg``, else its clock x time. An SM and
        its sub-partitions (``sm``, ``smsp``) share one clock, so either unit's figures serve both."""
        out: np.ndarray | None = None
        for u in (unit, *_SAME_CLOCK.get(unit, ())):
            for values in (self.column(f"{u}__cycles_elapsed.avg"), self._by_clock(u)):
                if values is not None:
                    out = values if out is None else np.where(np.isnan(out), values, out)
        return out

    def _by_clock(self, unit: str) -> np.ndarray | None:
        rate = self.column(f"{unit}__cycles_elapsed.avg.per_second")
        return rate * self.time if rate is not None else None

    def read(self, counter: Counter, *, totals_only: bool = False) -> np.ndarray | None:
        """The counter's total per launch, from the first form present (row by row); None if none is.
        ``totals_only``: the totals themselves, no rate."""
        out: np.ndarray | None = None
        for name in counter.names:
            out = self._fill(out, name, None, 1.0)
        if totals_only:
            return out
        for name in counter.names:
            for form, per in ((f"{name}.per_cycle_elapsed", "cycle"), (f"{name}.per_second", "second")):
                out = self._fill(out, form, per, 1.0)
        for column, factor in counter.derived:
            out = self._fill(out, column, "cycle", factor)
        for column in counter.idle:
            values = self.column(column)
            if values is not None:
                zero = np.where(values == 0, 0.0, np.nan)
                out = zero if out is None else np.where(np.isnan(out), zero, out)
        return out

    def _fill(self, out: np.ndarray | None, column: str, per: str | None, factor: float) -> np.ndarray | None:
        values = self.column(column)
        if values is None:
            return out
        if per == "cycle":
            cycles = self.cycles(_unit(column))
            if cycles is None:
                return out
            values = values / factor * cycles
        elif per == "second":
            values = values * self.time
        if out is None:
            return values
        return np.where(np.isnan(out), values, out)


# -- the table ---------------------------------------------------------------------------------

Terms = tuple[tuple[float, Counter], ...]


@dataclass(frozen=True)
class Formula:
    """``column = sum(weight * counter)``, from the first alternative whose counters are all known."""

    column: str
    archs: tuple[str, ...]
    alternatives: tuple[Terms, ...]
    doc: str
    convention: str | None = None  # fp16 only: "ncu" or "paper"

    @property
    def terms(self) -> Terms:
        """The preferred alternative."""
        return self.alternatives[0]


def _idle(*pipes: str) -> tuple[str, ...]:
    """The utilization columns of ``pipes`` whose 0 % proves their instructions' count is 0."""
    return tuple(f"{unit}__{what}.{stat}.pct_of_peak_sustained_{when}"
                 for unit in ("sm", "smsp") for what in pipes
                 for stat in ("sum", "avg", "max") for when in ("active", "elapsed"))


#: Time and clock (alternatives in order of preference are handled in :func:`count`).
GPU_TIME = Counter(("gpu__time_duration.sum",))
GPU_TIME_AVG = Counter(("gpu__time_duration.avg",))
SM_CYCLES = sm("cycles_elapsed.avg")
SM_CLOCK = sm("cycles_elapsed.avg.per_second")
#: The Speed-of-Light section's "Elapsed Cycles" and "SM Frequency".
GPC_CYCLES = Counter(("gpc__cycles_elapsed.max",))
GPC_CLOCK = Counter(("gpc__cycles_elapsed.avg.per_second",))
PIPE_TENSOR = Counter(
    ("sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"),
    (("derived__smsp__inst_executed_pipe_tensor_x512", 512.0),),
)
#: Where every tensor instruction runs on the one tensor pipe (SM 7.x, 8.x: HMMA, IMMA, DMMA), an
#: idle pipe proves no tensor work. Not on SM 9.0+, whose GMMA / tcgen05 work we could not check
#: against that pipe's utilization.
PIPE_TENSOR_OR_IDLE = replace(PIPE_TENSOR, idle=_idle("pipe_tensor_cycles_active", "inst_executed_pipe_tensor"))
IDLE_TENSOR_ARCHS = ("7", "8")


def _one(*terms: tuple[float, Counter]) -> tuple[Terms, ...]:
    return (tuple(terms),)


def _bytes(unit: str, *, read_write: bool = False) -> tuple[Terms, ...]:
    total = Counter((f"{unit}__bytes.sum",) if unit == "dram" else (f"{unit}__t_bytes.sum",))
    sectors = Counter((f"{unit}__sectors.sum",) if unit == "dram" else (f"{unit}__t_sectors.sum",))
    alts: list[Terms] = [((1.0, total),)]
    if read_write:
        alts.append(((1.0, Counter(("dram__bytes_read.sum",))), (1.0, Counter(("dram__bytes_write.sum",)))))
    alts.append(((32.0, sectors),))
    if read_write:
        alts.append(((32.0, Counter(("dram__sectors_read.sum",))), (32.0, Counter(("dram__sectors_write.sum",)))))
    return tuple(alts)


_H = "derived__smsp__sass_thread_inst_executed_op_"
#: Half instructions (HADD2/HMUL2/HFMA2) run on the fp16 pipe where there is one (SM 7.x and 8.0,
#: Nsight Compute's pipeline documentation): that pipe idle means none ran. Not the fma pipe's fp16
#: type of SM 8.6+: an H100 PCIe --set full report (tests/data) shows it at 0 % beside
#: 214 HFMA per cycle.
_HALF_IDLE = _idle("inst_executed_pipe_fp16")
HADD = replace(sass("hadd", 2), idle=_HALF_IDLE)
HMUL = replace(sass("hmul", 2), idle=_HALF_IDLE)
HFMA = replace(sass("hfma", 4, (f"{_H}hfma_pred_on_x2", 2.0)), idle=_HALF_IDLE)  # 2025+ write x4, 2024.1 x2

FORMULAS: tuple[Formula, ...] = (
    Formula("fp64_flops", ALL, _one((1, sass("dadd")), (1, sass("dmul")), (2, sass("dfma", 2))),
            "FP64: dadd + dmul + 2 dfma"),
    Formula("fp32_flops", ALL, _one((1, sass("fadd")), (1, sass("fmul")), (2, sass("ffma", 2))),
            "FP32: fadd + fmul + 2 ffma"),
    Formula("fp16_flops", ALL, _one((2, HADD), (2, HMUL), (4, HFMA)),
            "FP16, Nsight Compute 2025+ (half2 pairs): 2 hadd + 2 hmul + 4 hfma", convention="ncu"),
    Formula("fp16_flops", ALL, _one((1, HADD), (1, HMUL), (2, HFMA)),
            "FP16, the paper's and Nsight Compute 2024.1's: hadd + hmul + 2 hfma", convention="paper"),
    Formula("tensor_flops", V100_TENSOR, _one((512, PIPE_TENSOR)),
            "tensor, V100/Xavier without ops counters: 512 x tensor-pipe instructions"),
    Formula("l1_bytes", ALL, _bytes("l1tex"), "bytes through L1/TEX (or 32 x its sectors)"),
    Formula("l2_bytes", ALL, _bytes("lts"), "bytes through L2 (or 32 x its sectors)"),
    Formula("dram_bytes", ALL, _bytes("dram", read_write=True), "bytes to/from DRAM (else read + write, else 32 x sectors)"),
)


@dataclass(frozen=True)
class TensorPath:
    """Tensor-core operations of one input type.

    ``alternatives``: sets of counters that each give the whole total, best first; one set
    is used per launch, never two. Counters named ``*_sparsity_on*`` are optional.
    ``requested``: what :func:`required_metrics` asks ncu for, per architecture family.
    """

    precision: str
    alternatives: tuple[tuple[str, ...], ...]
    requested: dict[str, tuple[str, ...]]


_OPS = "sm__ops_path_tensor_src_"
_KIND = "sm__ops_path_tensor_op_"


def _sparse(*names: str) -> tuple[str, ...]:
    """Each ``x`` as its ``x_sparsity_off`` + ``x_sparsity_on`` parts."""
    return tuple(f"{n}_sparsity_{s}.sum" for n in names for s in ("off", "on"))


def _sums(*names: str) -> tuple[str, ...]:
    return tuple(f"{n}.sum" for n in names)


TENSOR_PATHS: tuple[TensorPath, ...] = (
    TensorPath("fp16", (
        _sums(f"{_OPS}fp16"),
        _sums(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_dst_fp32"),
        _sparse(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_dst_fp32"),
        _sums(f"{_KIND}hgmma_src_fp16", f"{_KIND}hmma_src_fp16"),
        _sparse(f"{_KIND}hgmma_src_fp16", f"{_KIND}hmma_src_fp16_dst_fp16", f"{_KIND}hmma_src_fp16_dst_fp32"),
        # Turing: its FP32-accumulate path is named after the types Ampere added later (Turing has
        # only FP16 tensor inputs among them).
        _sums(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_bf16_tf32_dst_fp32"),
    ), {"7.5": _sums(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_bf16_tf32_dst_fp32"),
        "8": _sums(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_dst_fp32"), "9": _sums(f"{_OPS}fp16")}),
    TensorPath("bf16", (
        _sums(f"{_OPS}bf16_dst_fp32"),
        _sparse(f"{_OPS}bf16_dst_fp32"),
        _sums(f"{_KIND}hgmma_src_bf16_dst_fp32", f"{_KIND}hmma_src_bf16_dst_fp32"),
        _sparse(f"{_KIND}hgmma_src_bf16_dst_fp32", f"{_KIND}hmma_src_bf16_dst_fp32"),
    ), {"8": _sums(f"{_OPS}bf16_dst_fp32"), "9": _sums(f"{_OPS}bf16_dst_fp32")}),
    TensorPath("tf32", (
        _sums(f"{_OPS}tf32_dst_fp32"),
        _sparse(f"{_OPS}tf32_dst_fp32"),
        _sums(f"{_KIND}hgmma_src_tf32_dst_fp32", f"{_KIND}hmma_src_tf32_dst_fp32"),
        _sparse(f"{_KIND}hgmma_src_tf32_dst_fp32", f"{_KIND}hmma_src_tf32_dst_fp32"),
    ), {"8": _sums(f"{_OPS}tf32_dst_fp32"), "9": _sums(f"{_OPS}tf32_dst_fp32")}),
    TensorPath("fp64", (_sums(f"{_OPS}fp64"),), {"8.0": _sums(f"{_OPS}fp64"), "9": _sums(f"{_OPS}fp64")}),
    TensorPath("fp8", (
        _sums(f"{_OPS}fp8"),
        _sparse(f"{_OPS}fp8"),
        _sums(f"{_KIND}qgmma_src_fp8", f"{_KIND}qmma_src_fp8"),
        _sparse(f"{_KIND}qgmma_src_fp8", f"{_KIND}qmma_src_fp8"),
    ), {"8.9": _sums(f"{_OPS}fp8"), "9": _sums(f"{_OPS}fp8")}),
    TensorPath("int8", (
        _sums(f"{_OPS}int8"),
        _sparse(f"{_OPS}int8"),
        _sums(f"{_KIND}igmma_src_int8", f"{_KIND}imma_src_int8"),
        _sparse(f"{_KIND}igmma_src_int8", f"{_KIND}imma_src_int8"),
    ), {"7.5": _sums(f"{_OPS}int8"), "8": _sums(f"{_OPS}int8"), "9": _sums(f"{_OPS}int8")}),
)


def arch_family(cc: str | None) -> str | None:
    """``'7.0'`` -> ``'7'``; None for unknown."""
    if cc is None or cc is pd.NA or not isinstance(cc, str) or not cc.strip():
        return None
    return cc.strip().split(".")[0]


def _applies(archs: Iterable[str], cc: str | None) -> bool:
    archs = tuple(archs)
    return "*" in archs or (cc is not None and (cc in archs or arch_family(cc) in archs))


def _requested(path: TensorPath, cc: str) -> tuple[str, ...]:
    """The counters of ``path`` that :func:`required_metrics` asks for on ``cc`` (exact cc first)."""
    if cc in path.requested:
        return path.requested[cc]
    family = arch_family(cc)
    if family in path.requested:
        return path.requested[family]
    if family in ("10", "12"):  # Blackwell: the Hopper names, not checkable with ncu 2024.1 (no gb100/gb202)
        return path.requested.get("9", ())
    return ()


def required_metrics(compute_capability: str) -> list[str]:
    """Every ncu metric the formulas for this architecture consume (for ``ncu --metrics``)."""
    names = [GPU_TIME.name, SM_CYCLES.name, SM_CLOCK.name]
    for f in FORMULAS:
        if f.convention not in (None, "ncu"):
            continue
        if f.column == "tensor_flops" or not _applies(f.archs, compute_capability):
            continue
        names += [c.name for _, c in f.terms]
    names.append(PIPE_TENSOR.name)
    for path in TENSOR_PATHS:
        names += list(_requested(path, compute_capability))
    names += ["dram__bytes_read.sum", "dram__bytes_write.sum"]
    return list(dict.fromkeys(names))


def tensor_metrics_requested() -> list[str]:
    """Every tensor counter :func:`required_metrics` may ask for (for hints)."""
    return list(dict.fromkeys(n for p in TENSOR_PATHS for names in p.requested.values() for n in names))


def ncu_hint(metrics: Iterable[str]) -> str:
    """The command-line hint that collects ``metrics``."""
    return "collect with: ncu --metrics " + ",".join(dict.fromkeys(metrics))


@dataclass
class Counted:
    """The derived columns (arrays aligned with the metrics' rows) and the warnings."""

    columns: dict[str, np.ndarray]
    warnings: list[str]


def _formula_value(reader: Reader, f: Formula, missing: dict[str, list[str]]) -> np.ndarray:
    """Per launch, the first alternative whose counters are all known as totals, else the first known
    through rates (NaN where none is): dram read + write counted beat dram__bytes.sum.per_second x time."""
    out = np.full(reader.n, np.nan)
    for totals_only in (True, False):  # counted totals of any alternative before rates x time
        for terms in f.alternatives:
            values = [reader.read(c, totals_only=totals_only) for _, c in terms]
            known = [v for v in values if v is not None]
            if len(known) < len(values):
                continue
            total = np.zeros_like(out)
            for (w, _), v in zip(terms, known):
                total = total + w * v
            out = np.where(np.isnan(out), total, out)
    if np.isnan(out).all():
        missing.setdefault(f.column, []).extend(c.name for _, c in f.terms if _unknown(reader.read(c)))
    return out


def _unknown(values: np.ndarray | None) -> bool:
    """Not collected: no column, or a column of empty cells (a derived metric whose inputs were not)."""
    return values is None or bool(np.isnan(values).all())


def _tensor_alternative(reader: Reader, path: TensorPath, rows: np.ndarray,
                        warnings: list[str]) -> np.ndarray | None:
    """Operations of one tensor type on ``rows``: the first alternative with a counter present."""
    for alternative in path.alternatives:
        present = [m for m in alternative if reader.has(m)]
        if not present:
            continue
        absent = [m for m in alternative if m not in present and "_sparsity_on" not in m]
        if absent:
            warnings.append(f"tensor {path.precision} FLOPs may be a lower bound: {', '.join(absent)} not collected")
        total = np.zeros(int(rows.sum()))
        for m in present:
            v = reader.read(Counter((m,)))
            assert v is not None
            total = total + np.nan_to_num(v[rows], nan=0.0) if "_sparsity_on" in m else total + v[rows]
        return total
    return None


def _tensor_ops(reader: Reader, rows: np.ndarray, cc: str | None,
                warnings: list[str]) -> tuple[np.ndarray | None, np.ndarray, list[str]]:
    """Tensor FLOPs from ops counters, the dominant type per launch, and the types not collected."""
    n = int(rows.sum())
    per_precision: dict[str, np.ndarray] = {}
    absent: list[str] = []
    for path in TENSOR_PATHS:
        value = _tensor_alternative(reader, path, rows, warnings)
        if value is not None:
            per_precision[path.precision] = value
        elif cc is None or _requested(path, cc) or arch_family(cc) not in ARCHS:
            absent.append(path.precision)
    precision = np.full(n, None, dtype=object)
    if not per_precision:
        return None, precision, absent
    stacked = np.vstack(list(per_precision.values()))
    total = stacked.sum(axis=0)
    names = np.array(list(per_precision))
    best = np.argmax(np.where(np.isnan(stacked), -1.0, stacked), axis=0)
    precision = names[best].astype(object)
    precision[~(total > 0)] = None
    return total, precision, absent


def _time(reader: Reader) -> np.ndarray:
    """Launch time: gpu__time_duration.sum, .avg, SM cycles / SM clock, SOL's cycles / clock."""
    time = np.full(reader.n, np.nan)
    candidates: list[np.ndarray | None] = [reader.read(GPU_TIME), reader.read(GPU_TIME_AVG)]
    for cycles, clock in ((SM_CYCLES, SM_CLOCK), (GPC_CYCLES, GPC_CLOCK)):
        c = next((reader.column(n) for n in cycles.names if reader.has(n)), None)
        f = next((reader.column(n) for n in clock.names if reader.has(n)), None)
        candidates.append(c / f if c is not None and f is not None else None)
    for values in candidates:
        if values is not None:
            time = np.where(np.isnan(time), values, time)
    return time


def _clock(reader: Reader) -> np.ndarray | None:
    out: np.ndarray | None = None
    for name in (*SM_CLOCK.names, *GPC_CLOCK.names):
        values = reader.column(name)
        if values is not None:
            out = values if out is None else np.where(np.isnan(out), values, out)
    return out


def count(metrics: pd.DataFrame, compute_capability: pd.Series, *, fp16: str = "ncu") -> Counted:
    """Derive time, clock, FLOPs and bytes per launch from raw ncu metrics (SI units).

    ``compute_capability`` (strings like ``'8.0'``, <NA> when unknown) selects the
    architecture rules per launch. Returns the kernel-table columns as arrays plus warnings.
    """
    if fp16 not in ("ncu", "paper"):
        raise ValueError(f"fp16 must be 'ncu' or 'paper', not {fp16!r}")
    reader = Reader(metrics)
    n = reader.n
    cc_series = compute_capability.astype("string").reset_index(drop=True)
    distinct = [None if c is pd.NA else str(c) for c in pd.unique(cc_series)]
    warnings: list[str] = []
    missing: dict[str, list[str]] = {}
    cols: dict[str, np.ndarray] = {}

    time = _time(reader)
    reader.time = time
    if np.isnan(time).all():
        missing["time_s"] = [GPU_TIME.name]
    cols["time_s"] = time
    clock = _clock(reader)
    cols["sm_clock_hz"] = clock if clock is not None else np.full(n, np.nan)
    if clock is None:
        missing["sm_clock_hz"] = [SM_CLOCK.name]

    for f in FORMULAS:
        if f.column == "tensor_flops" or f.convention not in (None, fp16):
            continue
        cols[f.column] = _formula_value(reader, f, missing)

    tensor, precision = _tensor(reader, cc_series, distinct, warnings, missing)
    cols["tensor_flops"] = tensor
    cols["tensor_precision"] = precision

    for column, names in missing.items():
        warnings.append(f"{column} unknown: metrics not collected: {', '.join(names)}; {ncu_hint(names)}")
    return Counted(cols, list(dict.fromkeys(warnings)))


def _tensor(reader: Reader, cc_series: pd.Series, distinct: Sequence[str | None], warnings: list[str],
            missing: dict[str, list[str]]) -> tuple[np.ndarray, np.ndarray]:
    n = reader.n
    tensor = np.full(n, np.nan)
    precision = np.full(n, None, dtype=object)
    inst_counted = reader.read(PIPE_TENSOR)
    inst_or_idle = reader.read(PIPE_TENSOR_OR_IDLE)
    tensor_missing: str | None = None  # an architecture whose launches lack every tensor counter
    for cc in distinct:
        rows = (cc_series == cc).fillna(False).to_numpy(dtype=bool) if cc is not None else cc_series.isna().to_numpy()
        what = f"SM {cc}" if cc is not None else "an unknown architecture"
        inst = inst_or_idle if arch_family(cc) in IDLE_TENSOR_ARCHS else inst_counted
        ops, prec, absent = _tensor_ops(reader, rows, cc, warnings)
        if ops is not None and cc in V100_TENSOR and inst is not None:  # launches without ops counts
            by_inst = np.isnan(ops)
            ops = np.where(by_inst, 512 * inst[rows], ops)
            prec = np.where(by_inst & (inst[rows] > 0), "fp16", prec).astype(object)
        if ops is not None:
            if inst is not None:  # work in a type that was not collected: unknown, never 0
                hidden = (ops == 0) & (inst[rows] > 0)
                if hidden.any():
                    ops = np.where(hidden, np.nan, ops)
                    warnings.append(
                        f"tensor_flops unknown for {counted(int(hidden.sum()), 'launch', 'launches')} on {what}: they executed tensor "
                        f"instructions that no collected tensor counter counted (not collected: "
                        f"{', '.join(absent) or 'none'}); {ncu_hint(_hint_for(absent or TENSOR_PRECISIONS, cc))}")
            elif absent:
                warnings.append(f"tensor FLOPs count only the tensor types collected; {', '.join(absent)} tensor work "
                                f"is not counted on {what} ({ncu_hint(_hint_for(absent, cc))})")
            tensor[rows] = ops
            precision[rows] = prec
            continue
        if cc is not None and cc in V100_TENSOR:
            if inst is not None:
                tensor[rows] = 512 * inst[rows]
                precision[rows] = np.where(inst[rows] > 0, np.array("fp16", dtype=object), np.array(None, dtype=object))
            else:
                tensor_missing = cc
            continue
        if inst is None:
            tensor_missing = cc or "?"
            continue
        zero = inst[rows] == 0
        part = np.full(int(rows.sum()), np.nan)
        part[zero] = 0.0
        tensor[rows] = part
        if not zero.all():
            why = ("FLOPs per tensor instruction depend on the instruction shape" if arch_family(cc) in ARCHS
                   else f"{what} is not in the formula table, and FLOPs per tensor instruction depend on the shape")
            warnings.append(f"tensor_flops unknown for {counted(int((~zero).sum()), 'launch', 'launches')} on {what}: {why}; "
                            f"{ncu_hint(_hint_for([p.precision for p in TENSOR_PATHS], cc))}")
    if tensor_missing is not None:
        cc = None if tensor_missing == "?" else tensor_missing
        names = _hint_for(TENSOR_PRECISIONS, cc) if cc is not None else []
        missing["tensor_flops"] = [PIPE_TENSOR.name, *(names or tensor_metrics_requested())]
    return tensor, precision


TENSOR_PRECISIONS = tuple(p.precision for p in TENSOR_PATHS)


def _hint_for(precisions: Iterable[str], cc: str | None) -> list[str]:
    wanted = set(precisions)
    names: list[str] = []
    for path in TENSOR_PATHS:
        if path.precision in wanted:
            names += list(_requested(path, cc) if cc else ()) or [path.alternatives[0][0]]
    return names

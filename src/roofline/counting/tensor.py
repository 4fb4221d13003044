"""The formula table's tensor-core rows: floating-point tensor FLOPs and integer tensor operations.

* The ``sm__ops_path_tensor_*`` operation counters count math operations (= FLOPs for float
  types), per input type (:data:`TENSOR_PATHS`): the per-type totals (``src_fp16`` on Hopper,
  ``src_fp16_dst_fp16`` + ``src_fp16_dst_fp32`` before it), else their ``_sparsity_off`` +
  ``_sparsity_on`` parts, else Hopper's per-instruction-kind counters
  (``op_hgmma``/``op_hmma``/``op_igmma``/``op_imma``, each total or its sparsity parts). One
  alternative per type, so nothing is counted twice. ``_sparsity_on`` parts that were not
  collected are taken as no 2:4-sparse work (collecting only ``_sparsity_off`` is common practice).
* ``tensor_flops`` sums the floating-point types (fp64, tf32, fp16, bf16, fp8, fp4); ``tensor_int_ops``
  the integer ones: INT8 (``src_int8``, Turing on; Hopper's ``op_igmma``/``op_imma``) and INT4
  (``src_int4``: tu102, ga100, ga102, ad102 in ``ncu --query-metrics``; gh100 has none). The INT1
  (binary) path is not counted. ``tensor_precision`` names the dominant floating-point type, or the
  dominant integer type when a launch's only tensor work is integer.
* SM 7.0/7.2 (V100, Xavier) without ops counters: 512 FLOPs per ``sm__inst_executed_pipe_tensor``
  instruction (the Tensor section's ``derived__sm__inst_executed_pipe_tensor_x512``; exact on V100:
  2MNK / instructions = 512 for a 20480^3 GEMM in tests/data), every instruction taken as FP16 HMMA
  (so no integer tensor work there).
* Every other SM: FLOPs per tensor instruction depend on the shape, so with only instruction
  counts tensor FLOPs are NaN with a warning, except an instruction count of exactly 0 (exactly
  0 FLOPs and 0 integer operations). An SM the table does not list (SM 12.x today) is read all the
  same: only that rule needs the architecture.
* Where every tensor instruction runs on the one tensor pipe (SM 7.x, 8.x), a pipe utilization of
  exactly 0 % (``sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_active``: what ``--set full``
  holds where it has no tensor roofline section) proves the instruction count is 0. Where the pipe's
  instruction kinds are known to be all there are (:data:`TENSOR_KINDS`: HMMA and DMMA floating point,
  IMMA integer, on SM 7.5, 8.0, 8.6 and 8.7), one kind idle proves its side's work 0.

A launch that executed tensor instructions (``sm__inst_executed_pipe_tensor`` > 0) while the
collected types add up to 0, with a type the architecture has not collected, may have done its work
in that type: its tensor FLOPs and integer operations are unknown, with a warning. With every type
collected, their 0 stands: the tensor pipe also runs instructions that are no MMA (on SM 9.0, real
H100 exports in tests/data/ncu/h100_80gb_hbm3_examples show an HFMA2 chain sending half its HFMA2s
to it, and an FFMA GEMM and FP32 elementwise kernels running some, every type's count 0).

Blackwell's low-precision types are counted per datapath, not per input type: ``fp8`` is the 8-bit
datapath, which on SM 10.x and 12.x takes FP8, FP6 and FP4 inputs at one rate (``src_fp4_fp6_fp8``,
kind::f8f6f4), and ``fp4`` the dedicated FP4 datapath at twice that rate (``src_fp4_dst_fp32``,
block-scaled kind::mxf4 and mxf4nvf4), so that each is held to its own ceiling. Nsight Compute 2024.1
knows no Blackwell chip: these names are those public reports of ncu 2025-2026 give for gb100 (B200),
B300, gb10b and gb20x; the kinds' names changed between releases (``utcqmma_src_fp8`` in 2025.4,
``utcqmma_src_fp4_fp6_fp8`` in 2026.1), and each spelling is one alternative, never added to another.

SM 10.x (B200, B300) runs its tcgen05 MMAs on a pipe of their own, ``tc`` (a real B200 export in
tests/data shows it idle beside an HMMA kernel's busy ``tensor`` pipe). There, a launch ran tensor
instructions if either pipe did (:data:`PIPE_TC`: its instruction count, or its utilization, of which
exactly 0 % proves it idle), and a launch whose collected types add up to 0 while the ``tc`` pipe's
state is unknown has unknown tensor work, with a warning naming ``sm__inst_executed_pipe_tc.sum``:
otherwise an FP8 or FP4 GEMM in a type not collected would read 0 FLOPs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from roofline.counting.forms import ARCHS, BLACKWELL, TCGEN05, Counter, Formula, Reader, arch_family, idle_columns, ncu_hint, terms
from roofline.units import counted

#: Architectures with the 512-FLOPs-per-tensor-instruction rule.
V100_TENSOR = ("7.0", "7.2")

PIPE_TENSOR = Counter(
    ("sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"),
    (("derived__smsp__inst_executed_pipe_tensor_x512", 512.0),),
)
#: Where every tensor instruction runs on the one tensor pipe (SM 7.x, 8.x: HMMA, IMMA, DMMA), an
#: idle pipe proves no tensor work. Not on SM 9.0+, whose GMMA / tcgen05 work we could not check
#: against that pipe's utilization.
PIPE_TENSOR_OR_IDLE = replace(PIPE_TENSOR, idle=idle_columns("pipe_tensor_cycles_active", "inst_executed_pipe_tensor"))
IDLE_TENSOR_ARCHS = ("7", "8")
#: The tcgen05 pipe of SM 10.x, which ``sm__inst_executed_pipe_tensor`` does not cover (module docstring).
PIPE_TC = Counter(("sm__inst_executed_pipe_tc.sum",), idle=idle_columns("inst_executed_pipe_tc", "pipe_tc_cycles_active"))
TC_PIPE_ARCHS = TCGEN05


def _kind(op: str) -> Counter:
    """The tensor pipe's instructions of one kind (hmma, imma, dmma), or 0 where its utilization is 0 %."""
    return Counter((f"sm__inst_executed_pipe_tensor_op_{op}.sum", f"smsp__inst_executed_pipe_tensor_op_{op}.sum"),
                   idle=idle_columns(f"inst_executed_pipe_tensor_op_{op}", f"pipe_tensor_op_{op}_cycles_active"))


#: The tensor pipe's instruction kinds, per compute capability, where they are all the floating-point
#: (``float``) and integer (``int``) tensor instructions there are (``ncu --query-metrics`` 2024.1.1:
#: tu102 and ga102 list op_hmma and op_imma, ga100 op_dmma too). An idle kind proves its side's work 0:
#: an INT8 GEMM with HMMA idle did 0 tensor FLOPs, an FP16 one with IMMA idle 0 integer operations. Not
#: on SM 8.9 (which kind runs Ada's FP8 MMAs is not checked) nor on SM 9.0+ (GMMA, tcgen05).
TENSOR_KINDS: dict[str, dict[str, tuple[Counter, ...]]] = {
    cc: {"float": (_kind("hmma"), *((_kind("dmma"),) if cc == "8.0" else ())), "int": (_kind("imma"),)}
    for cc in ("7.5", "8.0", "8.6", "8.7")
}


def _kinds_idle(reader: Reader, cc: str | None, side: str, rows: Rows) -> np.ndarray | None:
    """Per launch of ``rows``: True where every tensor instruction kind of ``side`` is known idle on ``cc``
    (:data:`TENSOR_KINDS`); None where the table has no kinds for ``cc`` or none was collected."""
    kinds = TENSOR_KINDS.get(cc or "", {}).get(side, ())
    values = [reader.read(k) for k in kinds]
    if not kinds or any(v is None for v in values):
        return None
    return np.logical_and.reduce([v[rows] == 0 for v in values])  # type: ignore[index]

FORMULAS: tuple[Formula, ...] = (
    Formula("tensor_flops", V100_TENSOR, terms((512, PIPE_TENSOR)),
            "tensor, V100/Xavier without ops counters: 512 x tensor-pipe instructions"),
)


@dataclass(frozen=True)
class TensorPath:
    """Tensor-core operations of one input type.

    ``alternatives``: sets of counters that each give the whole total, best first; one set
    is used per launch, never two. Counters named ``*_sparsity_on*`` are optional.
    ``requested``: what :func:`roofline.counting.required_metrics` asks ncu for, per architecture family.
    """

    precision: str
    alternatives: tuple[tuple[str, ...], ...]
    requested: dict[str, tuple[str, ...]]

    @property
    def integer(self) -> bool:
        """True for integer types (their work goes to ``tensor_int_ops``)."""
        return self.precision.startswith("int")


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
        "8": _sums(f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_dst_fp32"), "9": _sums(f"{_OPS}fp16"),
        # Blackwell: Hopper's total and the destination split both reported; the GPU's catalog keeps one
        **dict.fromkeys(BLACKWELL, _sums(f"{_OPS}fp16", f"{_OPS}fp16_dst_fp16", f"{_OPS}fp16_dst_fp32"))}),
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
    # The 8-bit-rate datapath. On Blackwell it takes FP8, FP6 and FP4 inputs alike (tcgen05 / mma
    # kind::f8f6f4), counted together as src_fp4_fp6_fp8 (taken before any narrower FP8 name: never
    # both); Blackwell names as public reports of Nsight Compute 2025-2026 on gb100/gb10b/gb20x spell them.
    TensorPath("fp8", (
        _sums(f"{_OPS}fp4_fp6_fp8_dst_fp16", f"{_OPS}fp4_fp6_fp8_dst_fp32"),
        _sparse(f"{_OPS}fp4_fp6_fp8_dst_fp16", f"{_OPS}fp4_fp6_fp8_dst_fp32"),
        _sums(f"{_OPS}fp8"),
        _sparse(f"{_OPS}fp8"),
        _sums(f"{_OPS}fp8_dst_fp16", f"{_OPS}fp8_dst_fp32", f"{_OPS}fp4_fp6_dst_fp16", f"{_OPS}fp4_fp6_dst_fp32"),
        _sums(f"{_KIND}qgmma_src_fp8", f"{_KIND}qmma_src_fp8"),
        _sparse(f"{_KIND}qgmma_src_fp8", f"{_KIND}qmma_src_fp8"),
        _sums(f"{_KIND}utcqmma_src_fp4_fp6_fp8_dst_fp16", f"{_KIND}utcqmma_src_fp4_fp6_fp8_dst_fp32"),
        _sparse(f"{_KIND}utcqmma_src_fp4_fp6_fp8_dst_fp16", f"{_KIND}utcqmma_src_fp4_fp6_fp8_dst_fp32"),
        _sums(f"{_KIND}utcqmma_src_fp8_dst_fp16", f"{_KIND}utcqmma_src_fp8_dst_fp32"),
        _sparse(f"{_KIND}utcqmma_src_fp8_dst_fp16", f"{_KIND}utcqmma_src_fp8_dst_fp32"),
    ), {"8.9": _sums(f"{_OPS}fp8"), "9": _sums(f"{_OPS}fp8"),
        **dict.fromkeys(BLACKWELL, _sums(f"{_OPS}fp4_fp6_fp8_dst_fp16", f"{_OPS}fp4_fp6_fp8_dst_fp32"))}),
    # Blackwell's dedicated FP4 datapath (block-scaled tcgen05 / mma kind::mxf4, mxf4nvf4; OMMA in SASS),
    # twice the 8-bit rate. A B300 report (ncu 2025.4) reads utcomma_src_fp4_dst_fp32 = 2MNK exactly
    # for a 4096^3 NVFP4 GEMM, with the 8-bit counters at 0.
    TensorPath("fp4", (
        _sums(f"{_OPS}fp4_dst_fp32"),
        _sparse(f"{_OPS}fp4_dst_fp32"),
        _sums(f"{_KIND}utcomma_src_fp4_dst_fp32"),
        _sparse(f"{_KIND}utcomma_src_fp4_dst_fp32"),
    ), dict.fromkeys(BLACKWELL, _sums(f"{_OPS}fp4_dst_fp32"))),
    TensorPath("int8", (
        _sums(f"{_OPS}int8"),
        _sparse(f"{_OPS}int8"),
        _sums(f"{_KIND}igmma_src_int8", f"{_KIND}imma_src_int8"),
        _sparse(f"{_KIND}igmma_src_int8", f"{_KIND}imma_src_int8"),
    ), {"7.5": _sums(f"{_OPS}int8"), "8": _sums(f"{_OPS}int8"), "9": _sums(f"{_OPS}int8")}),
    TensorPath("int4", (
        _sums(f"{_OPS}int4"),
        _sparse(f"{_OPS}int4"),
    ), {"7.5": _sums(f"{_OPS}int4"), "8": _sums(f"{_OPS}int4")}),
)
TENSOR_PRECISIONS = tuple(p.precision for p in TENSOR_PATHS)
FLOAT_PRECISIONS = tuple(p.precision for p in TENSOR_PATHS if not p.integer)
INT_PRECISIONS = tuple(p.precision for p in TENSOR_PATHS if p.integer)


def requested(path: TensorPath, cc: str) -> tuple[str, ...]:
    """The counters of ``path`` that ``required_metrics`` asks for on ``cc`` (exact cc first)."""
    if cc in path.requested:
        return path.requested[cc]
    family = arch_family(cc)
    if family in path.requested:
        return path.requested[family]
    if family in BLACKWELL:  # Blackwell: where no Blackwell name is known, the Hopper one (not checkable
        return path.requested.get("9", ())  # with ncu 2024.1: no gb100/gb202; the GPU's catalog decides)
    return ()


def tensor_metrics_requested(precisions: Iterable[str] = TENSOR_PRECISIONS) -> list[str]:
    """Every tensor counter ``required_metrics`` may ask for on some architecture (for hints)."""
    wanted = set(precisions)
    return list(dict.fromkeys(n for p in TENSOR_PATHS if p.precision in wanted
                              for names in p.requested.values() for n in names))


def hint_for(precisions: Iterable[str], cc: str | None) -> list[str]:
    """The counters that collect ``precisions`` on ``cc``: what ``required_metrics`` asks there. On an
    architecture of the table, a type it asks nothing for is one the chip lacks (FP8 before SM 8.9, INT4
    on Hopper, any ops counter on SM 7.0): left out, since ncu refuses a name its chip does not list.
    Elsewhere (unknown or newer architecture) each such type's first counter."""
    wanted = set(precisions)
    names: list[str] = []
    known = cc is not None and arch_family(cc) in ARCHS
    for path in TENSOR_PATHS:
        if path.precision in wanted:
            names += list(requested(path, cc) if cc else ()) or ([] if known else [path.alternatives[0][0]])
    return names


#: The launches of one architecture: a mask, or every launch (``slice(None)``: no copies made).
Rows = np.ndarray | slice


def _size(rows: Rows, n: int) -> int:
    return n if isinstance(rows, slice) else int(rows.sum())


def _alternative(reader: Reader, path: TensorPath, rows: Rows, warnings: list[str]) -> np.ndarray | None:
    """Operations of one tensor type on ``rows``: the first alternative with a counter present."""
    for alternative in path.alternatives:
        present = [m for m in alternative if reader.has(m)]
        if not present:
            continue
        absent = [m for m in alternative if m not in present and "_sparsity_on" not in m]
        if absent:
            what = "operations" if path.integer else "FLOPs"
            warnings.append(f"tensor {path.precision} {what} may be a lower bound: {', '.join(absent)} not collected")
        total = np.zeros(_size(rows, reader.n))
        for m in present:
            v = reader.read(Counter((m,)))
            assert v is not None
            total = total + np.nan_to_num(v[rows], nan=0.0) if "_sparsity_on" in m else total + v[rows]
        return total
    return None


def _dominant(per_precision: dict[str, np.ndarray], n: int) -> tuple[np.ndarray | None, np.ndarray]:
    """The sum over the types present (None when none is), and the largest type per launch (None where 0)."""
    precision = np.full(n, None, dtype=object)
    if not per_precision:
        return None, precision
    stacked = np.vstack(list(per_precision.values()))
    total = stacked.sum(axis=0)
    names = np.array(list(per_precision))
    precision = names[np.argmax(np.where(np.isnan(stacked), -1.0, stacked), axis=0)].astype(object)
    precision[~(total > 0)] = None
    return total, precision


@dataclass
class _Group:
    """Tensor work of the launches of one architecture, from the ops counters."""

    flops: np.ndarray | None  # the float types present, summed (None when none is present)
    int_ops: np.ndarray | None  # the integer types present, summed
    precision: np.ndarray  # dominant float type, else dominant integer type, else None
    absent: list[str]  # types not collected that the architecture has (float and integer)


def _group(reader: Reader, rows: Rows, cc: str | None, warnings: list[str]) -> _Group:
    n = _size(rows, reader.n)
    floats: dict[str, np.ndarray] = {}
    ints: dict[str, np.ndarray] = {}
    absent: list[str] = []
    for path in TENSOR_PATHS:
        value = _alternative(reader, path, rows, warnings)
        if value is not None:
            (ints if path.integer else floats)[path.precision] = value
        elif cc is None or requested(path, cc) or arch_family(cc) not in ARCHS:
            absent.append(path.precision)
    flops, precision = _dominant(floats, n)
    int_ops, int_precision = _dominant(ints, n)
    if int_ops is not None:  # the integer type where no floating-point tensor work was done
        no_float = ~(flops > 0) if flops is not None else np.ones(n, dtype=bool)
        precision[no_float] = int_precision[no_float]
    return _Group(flops, int_ops, precision, absent)


@dataclass
class TensorWork:
    """``tensor_flops``, ``tensor_int_ops`` and ``tensor_precision`` per launch, and the metrics that
    would make tensor_flops (``missing``: every launch unknown) or tensor_int_ops known."""

    flops: np.ndarray
    int_ops: np.ndarray
    precision: np.ndarray
    missing: list[str]
    int_missing: list[str]


def tensor_work(reader: Reader, cc_codes: np.ndarray, distinct: Sequence[str | None],
                warnings: list[str]) -> TensorWork:
    """Tensor FLOPs and integer operations per launch, architecture by architecture (module docstring).

    ``cc_codes``: per launch, the position in ``distinct`` of its compute capability (None: unknown)."""
    n = reader.n
    tensor = np.full(n, np.nan)
    tensor_int = np.full(n, np.nan)
    precision = np.full(n, None, dtype=object)
    inst_counted = reader.read(PIPE_TENSOR)
    inst_or_idle = reader.read(PIPE_TENSOR_OR_IDLE)
    tensor_missing: str | None = None  # an architecture whose launches lack every tensor counter
    int_missing: list[str] = []
    for code, cc in enumerate(distinct):
        rows: Rows = slice(None) if len(distinct) == 1 else cc_codes == code
        what = f"SM {cc}" if cc is not None else "an unknown architecture"
        inst = inst_or_idle if arch_family(cc) in IDLE_TENSOR_ARCHS else inst_counted
        tc_pipe = arch_family(cc) in TC_PIPE_ARCHS
        if tc_pipe:
            inst = _with_tc_pipe(inst, _tc_instructions(reader))
        g = _group(reader, rows, cc, warnings)
        volta = cc is not None and cc in V100_TENSOR
        if g.flops is None and g.int_ops is None:
            if volta and inst is not None:
                tensor[rows] = 512 * inst[rows]
                tensor_int[rows] = 0.0
                precision[rows] = np.where(inst[rows] > 0, np.array("fp16", dtype=object), np.array(None, dtype=object))
            elif inst is None:
                tensor_missing = cc or "?"
                int_missing += hint_for(INT_PRECISIONS, cc) if cc else tensor_metrics_requested(INT_PRECISIONS)
            else:
                _instructions_only(inst[rows], rows, cc, what, tensor, tensor_int, warnings,
                                   _kinds_idle(reader, cc, "float", rows), _kinds_idle(reader, cc, "int", rows))
            continue
        flops = g.flops if g.flops is not None else np.zeros(_size(rows, n))
        prec = g.precision
        if volta and inst is not None:  # launches without ops counts
            by_inst = np.isnan(flops)
            flops = np.where(by_inst, 512 * inst[rows], flops)
            prec = np.where(by_inst & (inst[rows] > 0), "fp16", prec).astype(object)
        int_ops = g.int_ops
        if int_ops is None:  # no integer counter: 0 where no tensor or no integer tensor instruction ran
            zero = (inst[rows] == 0) if inst is not None else np.zeros(_size(rows, n), dtype=bool)
            int_idle = _kinds_idle(reader, cc, "int", rows)
            zero = zero | int_idle if int_idle is not None else zero
            int_ops = np.where(zero | volta, 0.0, np.nan)
            if not (zero | volta).all():
                int_missing += hint_for(INT_PRECISIONS, cc)
        absent_float = [p for p in g.absent if p in FLOAT_PRECISIONS]
        none_counted = np.nan_to_num(flops) + np.nan_to_num(int_ops) == 0
        if inst is not None and g.absent:  # work in a type that was not collected: unknown, never 0
            hidden = none_counted & (inst[rows] > 0)
            if hidden.any():
                flops = np.where(hidden, np.nan, flops)
                int_ops = np.where(hidden, np.nan, int_ops)
                warnings.append(
                    f"tensor_flops unknown for {counted(int(hidden.sum()), 'launch', 'launches')} on {what}: they executed tensor "
                    f"instructions that no collected tensor counter counted (not collected: "
                    f"{', '.join(g.absent) or 'none'}); {ncu_hint(hint_for(g.absent or TENSOR_PRECISIONS, cc))}")
        elif absent_float:
            warnings.append(f"tensor FLOPs count only the tensor types collected; {', '.join(absent_float)} tensor work "
                            f"is not counted on {what} ({ncu_hint(hint_for(absent_float, cc))})")
        if tc_pipe:  # 0 counted, and no proof that the tcgen05 pipe was idle: unknown, never 0
            ran = inst[rows] if inst is not None else np.full(_size(rows, n), np.nan)
            unsure = none_counted & np.isnan(ran) & ~np.isnan(flops)
            flops = np.where(unsure, np.nan, flops)
            int_ops = np.where(unsure, np.nan, int_ops)
            _warn_tc_unknown(unsure, what, warnings)
        tensor[rows] = flops
        tensor_int[rows] = int_ops
        precision[rows] = prec
    missing: list[str] = []
    if tensor_missing is not None:
        cc = None if tensor_missing == "?" else tensor_missing
        pipes = [PIPE_TENSOR.name, *([PIPE_TC.name] if arch_family(cc) in TC_PIPE_ARCHS else [])]
        missing = [*pipes, *(hint_for(TENSOR_PRECISIONS, cc) if cc is not None else tensor_metrics_requested())]
    return TensorWork(tensor, tensor_int, precision, missing, list(dict.fromkeys(int_missing)))


def _tc_instructions(reader: Reader) -> np.ndarray | None:
    """The tc pipe's instructions per launch: its count; else, from its utilizations, 1 (at least one:
    only compared with 0) where one is above 0 %, else 0 where one is exactly 0 %; None when nothing of
    it was collected."""
    out = reader.read(replace(PIPE_TC, idle=()))
    for column in PIPE_TC.idle:
        values = reader.column(column)
        if values is not None:
            busy = np.where(values > 0, 1.0, np.nan)
            out = busy if out is None else np.where(np.isnan(out), busy, out)
    idle = reader.read(PIPE_TC)  # 0 where a utilization is exactly 0 %
    if idle is not None:
        out = idle if out is None else np.where(np.isnan(out), idle, out)
    return out


def _with_tc_pipe(inst: np.ndarray | None, tc: np.ndarray | None) -> np.ndarray | None:
    """Tensor instructions on SM 10.x, compared only with 0: the tensor pipe's plus the tc pipe's; at
    least 1 where either is known to have run some, NaN where neither did and one's state is unknown;
    None when neither was collected."""
    if inst is None and (tc is None or not (tc > 0).any()):
        return None  # nothing known of the tensor pipe, and the tc pipe ran nothing (or is unknown)
    n = len(inst if inst is not None else tc)  # type: ignore[arg-type]
    a = inst if inst is not None else np.full(n, np.nan)
    b = tc if tc is not None else np.full(n, np.nan)
    total = a + b  # NaN where either is unknown
    ran = (a > 0) | (b > 0)
    return np.where(np.isnan(total) & ran, np.fmax(np.fmax(a, b), 1.0), total)


def _warn_tc_unknown(unsure: np.ndarray, what: str, warnings: list[str]) -> None:
    """The warning for SM 10.x launches with 0 tensor work counted and the tcgen05 pipe's state unknown."""
    if unsure.any():
        warnings.append(f"tensor_flops unknown for {counted(int(unsure.sum()), 'launch', 'launches')} on {what}: no "
                        f"collected counter shows tensor work, but whether the tensor or the tcgen05 (tc) pipe ran "
                        f"is unknown; {ncu_hint([PIPE_TENSOR.name, PIPE_TC.name])}")


def _instructions_only(inst: np.ndarray, rows: Rows, cc: str | None, what: str, tensor: np.ndarray,
                       tensor_int: np.ndarray, warnings: list[str], float_idle: np.ndarray | None = None,
                       int_idle: np.ndarray | None = None) -> None:
    """Only tensor instruction counts: 0 work where none ran, and 0 work of a side (float, integer)
    whose instruction kinds were idle (:data:`TENSOR_KINDS`); unknown elsewhere (with a warning)."""
    zero = inst == 0
    float_zero = zero | float_idle if float_idle is not None else zero
    tensor[rows] = np.where(float_zero, 0.0, np.nan)
    tensor_int[rows] = np.where(zero | int_idle if int_idle is not None else zero, 0.0, np.nan)
    if float_idle is not None and int_idle is not None:  # work known to be integer tensor work, uncounted
        integer = float_idle & ~int_idle & ~zero
        if integer.any():
            warnings.append(f"tensor_int_ops unknown for {counted(int(integer.sum()), 'launch', 'launches')} on {what}: "
                            "they ran integer tensor instructions (IMMA; no floating-point ones), whose operations per "
                            f"instruction depend on the shape; {ncu_hint(hint_for(INT_PRECISIONS, cc))}")
    zero = float_zero
    if arch_family(cc) in TC_PIPE_ARCHS:  # unknown whether the tcgen05 pipe ran (_with_tc_pipe's NaN)
        _warn_tc_unknown(np.isnan(inst), what, warnings)
        zero = zero | np.isnan(inst)
    if not zero.all():
        why = ("FLOPs per tensor instruction depend on the instruction shape" if arch_family(cc) in ARCHS
               else f"{what} is not in the formula table, and FLOPs per tensor instruction depend on the shape")
        warnings.append(f"tensor_flops unknown for {counted(int((~zero).sum()), 'launch', 'launches')} on {what}: {why}; "
                        f"{ncu_hint(hint_for(TENSOR_PRECISIONS, cc))}")

"""The formula table's FLOP, byte and time rows (architecture-independent unless said).

* FP64/FP32: add + mul + 2 fma thread instructions (Nsight Compute's Double/Single
  roofline sections: ``derived__..._ffma_pred_on_x2`` and the add/mul rates).
* Packed FP32 (:data:`PACKED_FP32`): SM 10.0 and 10.3 (B200, B300) also execute FADD2, FMUL2 and
  FFMA2, each two FP32 lanes per thread instruction: + 2 fadd2 + 2 fmul2 + 4 ffma2, as Nsight
  Compute 2025's single-precision roofline adds them (``derived__smsp__..._fadd2_pred_on_x2``,
  ``..._fmul2_pred_on_x2``, ``..._ffma2_pred_on_x4``) on those two compute capabilities. Other SMs
  have no such instruction (gh100 and older have no such counter in ``ncu --query-metrics``): their
  packed counts are 0, and are added wherever a profile holds them. On SM 10.0/10.3 a profile
  without them gives a lower bound, with a warning (:func:`packed_fp32`).
* FP16 (non-tensor), two conventions, recorded in the table:
  ``fp16="ncu"`` (default) = 2 hadd + 2 hmul + 4 hfma: each half instruction works on a
  ``half2`` pair, as Nsight Compute 2025+ counts it (``derived__smsp__..._hadd_pred_on_x2``,
  ``..._hmul_pred_on_x2``, ``..._hfma_pred_on_x4``, and the peak ``derived__sm__..._hfma_pred_on_x4``);
  ``fp16="paper"`` = hadd + hmul + 2 hfma, as Yang et al. (arXiv 2009.05257) and Nsight Compute
  2024.1's Half roofline section (``..._hfma_pred_on_x2`` for achieved and peak alike).
  The profile's own FP16 ceiling (:mod:`roofline.readers.ncu.peaks`) follows the same convention.
  Half instructions run on the fp16 pipe where there is one (SM 7.x, 8.0): a utilization of exactly
  0 % of that pipe (``sm__inst_executed_pipe_fp16.sum.pct_of_peak_sustained_active``, what
  ``--set full`` holds where it has no Half roofline section) proves the half counts are 0. (A CSV
  prints these percentages to two decimals: there, "0" bounds the work below 0.005 % of the pipe's peak.)
* Bytes: L1 ``l1tex__t_bytes.sum`` or 32 x ``l1tex__t_sectors.sum``; L2 ``lts__t_bytes.sum`` or
  32 x ``lts__t_sectors.sum``; DRAM ``dram__bytes.sum``, else read + write (``dram__bytes_read.sum``,
  or ``dram__bytes_op_read.sum`` as newer ncu names it on sm_120), else 32 x ``dram__sectors.sum`` (or
  its read + write), as in the paper (32-byte sectors).
* Time: ``gpu__time_duration.sum``, else ``.avg`` (what application-range replay writes), else
  ``gpu__time_active`` (``.sum`` or ``.avg``: the GPU's active time in the launch), else
  ``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second`` (the paper's formula), else
  the Speed-of-Light section's ``gpc__cycles_elapsed.max / gpc__cycles_elapsed.avg.per_second``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from roofline.counting.forms import ALL, Counter, Formula, Reader, Terms, dram, idle_columns, sass, sm, terms

#: Time and clock (alternatives in order of preference are handled in :func:`launch_time`).
GPU_TIME = Counter(("gpu__time_duration.sum",))
GPU_TIME_AVG = Counter(("gpu__time_duration.avg",))
#: The time the GPU was active in the launch (ncu: "total duration in nanoseconds"; a launch's
#: duration but for its start and end overheads): where no duration was collected.
GPU_ACTIVE = Counter(("gpu__time_active.sum", "gpu__time_active.avg"))
SM_CYCLES = sm("cycles_elapsed.avg")
SM_CLOCK = sm("cycles_elapsed.avg.per_second")
#: The Speed-of-Light section's "Elapsed Cycles" and "SM Frequency".
GPC_CYCLES = Counter(("gpc__cycles_elapsed.max",))
GPC_CLOCK = Counter(("gpc__cycles_elapsed.avg.per_second",))


def _bytes(unit: str, *, read_write: bool = False) -> tuple[Terms, ...]:
    total = Counter((f"{unit}__bytes.sum",) if unit == "dram" else (f"{unit}__t_bytes.sum",))
    sectors = Counter((f"{unit}__sectors.sum",) if unit == "dram" else (f"{unit}__t_sectors.sum",))
    alts: list[Terms] = [((1.0, total),)]
    if read_write:
        alts.append(((1.0, dram("read")), (1.0, dram("write"))))
    alts.append(((32.0, sectors),))
    if read_write:
        alts.append(((32.0, dram("read", "sectors")), (32.0, dram("write", "sectors"))))
    return tuple(alts)


def _none_of(kind: str) -> tuple[str, ...]:
    """The count of every ``kind`` (fp16, fp32, fp64) thread instruction: 0 proves each opcode's is 0."""
    return tuple(f"{unit}__sass_thread_inst_executed_op_{kind}_pred_on.sum" for unit in ("sm", "smsp"))


_H = "derived__smsp__sass_thread_inst_executed_op_"
#: Half instructions (HADD2/HMUL2/HFMA2) run on the fp16 pipe where there is one (SM 7.x and 8.0,
#: Nsight Compute's pipeline documentation): that pipe idle means none ran. Not the fma pipe's fp16
#: type of SM 8.6+: an H100 PCIe --set full report (tests/data) shows it at 0 % beside
#: 214 HFMA per cycle.
_HALF_IDLE = idle_columns("inst_executed_pipe_fp16") + _none_of("fp16")
HADD = replace(sass("hadd", 2), idle=_HALF_IDLE)
HMUL = replace(sass("hmul", 2), idle=_HALF_IDLE)
HFMA = replace(sass("hfma", 4, (f"{_H}hfma_pred_on_x2", 2.0)), idle=_HALF_IDLE)  # 2025+ write x4, 2024.1 x2

def _zero_if(kind: str, counter: Counter) -> Counter:
    """``counter``, known to be 0 where the count of every ``kind`` instruction is 0 (:func:`_none_of`)."""
    return replace(counter, idle=counter.idle + _none_of(kind))


#: Compute capabilities with packed FP32 instructions (Nsight Compute 2025's FP32 roofline rule reads
#: their counters on these two only).
PACKED_FP32_ARCHS = ("10.0", "10.3")
#: Packed FP32 FLOPs: two lanes per FADD2/FMUL2, four FLOPs per FFMA2 (weight, counter).
PACKED_FP32: Terms = ((2.0, sass("fadd2", 2)), (2.0, sass("fmul2", 2)), (4.0, sass("ffma2", 4)))

FORMULAS: tuple[Formula, ...] = (
    Formula("fp64_flops", ALL, terms((1, _zero_if("fp64", sass("dadd"))), (1, _zero_if("fp64", sass("dmul"))),
                                     (2, _zero_if("fp64", sass("dfma", 2)))),
            "FP64: dadd + dmul + 2 dfma"),
    Formula("fp32_flops", ALL, terms((1, _zero_if("fp32", sass("fadd"))), (1, _zero_if("fp32", sass("fmul"))),
                                     (2, _zero_if("fp32", sass("ffma", 2)))),
            "FP32: fadd + fmul + 2 ffma (+ packed FP32 on SM 10.0/10.3, :data:`PACKED_FP32`)"),
    Formula("fp16_flops", ALL, terms((2, HADD), (2, HMUL), (4, HFMA)),
            "FP16, Nsight Compute 2025+ (half2 pairs): 2 hadd + 2 hmul + 4 hfma", convention="ncu"),
    Formula("fp16_flops", ALL, terms((1, HADD), (1, HMUL), (2, HFMA)),
            "FP16, the paper's and Nsight Compute 2024.1's: hadd + hmul + 2 hfma", convention="paper"),
    Formula("l1_bytes", ALL, _bytes("l1tex"), "bytes through L1/TEX (or 32 x its sectors)"),
    Formula("l2_bytes", ALL, _bytes("lts"), "bytes through L2 (or 32 x its sectors)"),
    Formula("dram_bytes", ALL, _bytes("dram", read_write=True), "bytes to/from DRAM (else read + write, else 32 x sectors)"),
)


@dataclass
class Packed:
    """Packed FP32 FLOPs per launch (0 where none was collected), and where they may be missing."""

    flops: np.ndarray
    lacking: np.ndarray  # bool: a launch on an SM with packed FP32 whose packed counts were not all collected
    names: list[str]  # the packed counters not collected for those launches


def packed_fp32(reader: Reader, has_packed: np.ndarray) -> Packed | None:
    """Packed FP32 FLOPs (:data:`PACKED_FP32`) per launch; ``has_packed``: per launch, True where the
    SM has packed FP32 (:data:`PACKED_FP32_ARCHS`). None when no launch has it and none was collected."""
    values = [(w, c, reader.read(c)) for w, c in PACKED_FP32]
    if not has_packed.any() and all(v is None for _, _, v in values):
        return None
    flops = np.zeros(reader.n)
    lacking = np.zeros(reader.n, dtype=bool)
    names: list[str] = []
    for w, c, v in values:
        absent = has_packed if v is None else has_packed & np.isnan(v)
        if v is not None:
            flops += w * np.nan_to_num(v, nan=0.0)
        if absent.any():
            lacking |= absent
            names.append(c.name)
    return Packed(flops, lacking, names)


def launch_time(reader: Reader) -> np.ndarray:
    """Launch time (s): gpu__time_duration.sum, .avg, gpu__time_active, SM cycles / SM clock, SOL's
    cycles / clock."""
    time: np.ndarray | None = None
    for candidate in (lambda: reader.read(GPU_TIME), lambda: reader.read(GPU_TIME_AVG), lambda: reader.read(GPU_ACTIVE),
                      lambda: _per_clock(reader, SM_CYCLES, SM_CLOCK), lambda: _per_clock(reader, GPC_CYCLES, GPC_CLOCK)):
        if time is not None and not np.isnan(time).any():
            break  # every launch's time known: the later forms are not worked out
        values = candidate()
        if values is None:
            continue
        if time is None:
            time = np.array(values, dtype=np.float64)  # the first form present, where known
        else:
            time = np.where(np.isnan(time), values, time)
    return time if time is not None else np.full(reader.n, np.nan)


def _per_clock(reader: Reader, cycles: Counter, clock: Counter) -> np.ndarray | None:
    """Elapsed cycles / clock, from the first name of each that the profile has; None without both."""
    c = next((reader.column(n) for n in cycles.metrics if reader.has(n)), None)
    f = next((reader.column(n) for n in clock.metrics if reader.has(n)), None)
    return c / f if c is not None and f is not None else None


def sm_clock(reader: Reader) -> np.ndarray | None:
    """The SM clock (Hz): the SOL section's ``gpc__cycles_elapsed.avg.per_second`` ("SM Frequency"), else
    sm/smsp__cycles_elapsed.avg.per_second, else the SM's elapsed cycles over the launch's time (what
    ncu's per-second rate is).

    The GPC rate comes first because it holds on short kernels where the SM rate does not: in a public
    H200 ``--set full`` export (tests/data/ncu/h200_setfull_sglang_moe_fa3), on the 25 launches under
    5 µs, ``sm__cycles_elapsed.avg.per_second`` reads 1.51-2.88 GHz and the GPC rate 1.93-1.98 GHz, at a
    1.98 GHz maximum; on the longer GEMMs both read 1.79-1.91. The SM rate is the SM's elapsed cycles
    over the launch's duration, and those counters run a little outside it."""
    out: np.ndarray | None = None
    for values in (*(reader.column(name) for name in (*GPC_CLOCK.metrics, *SM_CLOCK.metrics)), _cycles_per_time(reader)):
        if values is not None:
            out = values if out is None else np.where(np.isnan(out), values, out)
    return out


def _cycles_per_time(reader: Reader) -> np.ndarray | None:
    cycles = next((reader.column(n) for n in SM_CYCLES.metrics if reader.has(n)), None)
    if cycles is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        clock = cycles / reader.time
    return np.where(np.isfinite(clock) & (clock > 0), clock, np.nan)

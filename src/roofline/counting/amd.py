"""THE AMD formula table: rocprof counters -> kernel-table columns, per gfx architecture.

The AMD twin of :mod:`roofline.counting` (Nsight Compute). Every FLOP and byte figure derived from
an AMD Instinct GPU's counters is written once, in :data:`FORMULAS`, each with the architectures it
holds on and its source, for a person to check against AMD's documents:

* ``[AMD-PERF]``: ROCm Compute Profiler (rocprofiler-compute, formerly Omniperf) documentation,
  "Performance model" pages (rocm.docs.amd.com/projects/rocprofiler-compute): the VALU FLOP and
  MFMA counters, the LDS, vL1D, L2 and HBM traffic counters, the roofline's definitions.
* ``[CDNA2-ISA]``, ``[CDNA3-ISA]``: AMD Instinct MI200 / MI300 Instruction Set Architecture reference
  guides: VALU instructions act on a wavefront of 64 lanes; packed instructions (``v_pk_fma_f32``,
  ``v_pk_fma_f16``...) do two operations per lane in one instruction; an MFMA "MOP" is 512 FLOPs.
* ``[CDNA3-WP]``: AMD CDNA 3 architecture whitepaper: 128-byte cache lines in the vL1D and L2 of
  MI300, and the Infinity Cache (MALL) between the L2 and HBM, which the L2's EA requests reach first.
* ``[ROCM-2501]``: ROCm/rocm-systems pull request 2501 (AMD, merged 2026-01): on gfx950 the 128-byte
  EA reads are ``TCC_EA0_RDREQ_128B``; ``TCC_BUBBLE`` was MI300's workaround (AMD-AGI/GEAK PR 468
  measured the old formula at -50 % of a memcopy's reads on MI350).
* ``[ROCPROF-V1]``: ROCm/rocprofiler (rocprof v1) ``metrics.xml``: ``FETCH_SIZE`` and ``WRITE_SIZE`` are the
  EA formulas below divided by 1024 (KiB).
* Counter descriptions: rocprofiler-sdk ``basic_counters.xml`` / ``counter_defs.yaml`` (``TCC_BUBBLE``:
  "Number of 128-byte read requests sent to EA"; the MFMA MOPS: "operations ... divided by 512").

Counters are read as totals per dispatch (:func:`counter_totals`: ``X[0]..X[n]`` summed, ``X_sum`` as
X's total). A column whose counters a profile lacks is NaN (unknown), never 0, and
:attr:`CountedAmd.missing` names the counters that would supply it.

Caveats the table carries to the kernel table:

* **Packed math.** A packed FMA counts as one instruction in ``SQ_INSTS_VALU_FMA_F32`` (or ``_F16``)
  but does two FMAs per lane, so counter FLOPs of ``float2``/``half2`` code are half the true work.
  Where the architecture packs (FP16 everywhere, FP32 on gfx90a and later), a kernel with VALU work of
  that precision has ``flops_partial`` set: its FLOPs are a lower bound.
* **Whole wavefronts.** 64 FLOPs per VALU instruction assumes every lane active; lanes masked off
  by divergence are counted too, and a division or square root counts as the instructions it expands
  to (a stencil on MI300A reads 5.7x its source's FLOPs): an over-count that the counters cannot undo.
* **LDS** bytes are cycles of indexed LDS activity x 128 B, the LDS's peak per cycle: an upper bound.
* **vL1D** bytes are tag lookups x 64 B, the vL1D bandwidth a kernel used: for 4-byte lanes the data
  moved, for 8-byte lanes twice it (vcopy: 524,288 lookups for 16 MiB on gfx90a and gfx942 alike).
* **MALL.** On gfx94x/gfx950 the EA requests counted at the L2 go to the Infinity Cache first: the
  ``dram`` level is "HBM+MALL (EA)" traffic, an upper bound on HBM bytes.
* **gfx908** (MI100) has only the total ``SQ_INSTS_VALU``: FLOPs per precision are unknown there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: The gfx targets of AMD Instinct GPUs this table knows, and their family.
FAMILIES: Mapping[str, str] = {"gfx908": "CDNA1", "gfx90a": "CDNA2", "gfx940": "CDNA3", "gfx941": "CDNA3",
                               "gfx942": "CDNA3", "gfx950": "CDNA4"}
CDNA2_UP = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
MI300_UP = ("gfx940", "gfx941", "gfx942", "gfx950")
ALL_AMD = tuple(FAMILIES)

#: Bytes per vL1D tag lookup (TCP_TOTAL_CACHE_ACCESSES): 64 B, the vL1D's per-clock width on CDNA2 and CDNA3.
#: Not the cache line: MI300's 128 B lines would count 4x the bytes vcopy moves (see :data:`FORMULAS`).
VL1D_ACCESS_BYTES = 64.0
#: Lanes of a wavefront, the FLOPs of one VALU instruction per operation [CDNA2-ISA].
WAVE = 64
#: FLOPs of one MFMA MOP [AMD-PERF].
MOP = 512
#: LDS banks per CU x 4 B: the bytes an LDS cycle without a bank conflict moves [AMD-PERF].
LDS_BYTES_PER_CYCLE = 32 * 4


@dataclass(frozen=True)
class AmdFormula:
    """One kernel-table column as a sum of ``factor x counter`` terms, on the architectures ``archs``."""

    column: str
    terms: tuple[tuple[float, str], ...]
    archs: tuple[str, ...]
    source: str

    @property
    def counters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for _, name in self.terms))


def _valu(precision: str) -> tuple[tuple[float, str], ...]:
    return tuple((WAVE * k, f"SQ_INSTS_VALU_{op}_{precision}") for op, k in (("ADD", 1), ("MUL", 1), ("TRANS", 1), ("FMA", 2)))


def _lines(arch_bytes: int, *counters: str) -> tuple[tuple[float, str], ...]:
    return tuple((float(arch_bytes), c) for c in counters)


_L2_REQUESTS = ("TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ", "TCP_TCC_ATOMIC_WITH_RET_REQ", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ")
#: MI200 EA traffic: reads of 32 B (RDREQ_32B) or 64 B (the rest), writes of 64 B (WRREQ_64B) or 32 B (the rest):
#: 32 RD32 + 64 (RD - RD32) + 64 WR64 + 32 (WR - WR64), written as one sum of terms.
_HBM_MI200 = ((64.0, "TCC_EA_RDREQ"), (-32.0, "TCC_EA_RDREQ_32B"), (32.0, "TCC_EA_WRREQ"), (32.0, "TCC_EA_WRREQ_64B"))
#: MI300 EA traffic: 128 B requests counted by TCC_BUBBLE among the reads, then as on MI200:
#: 128 BUBBLE + 32 RD32 + 64 (RD - BUBBLE - RD32) + 64 WR64 + 32 (WR - WR64).
_HBM_MI300 = ((64.0, "TCC_EA0_RDREQ"), (64.0, "TCC_BUBBLE"), (-32.0, "TCC_EA0_RDREQ_32B"), (32.0, "TCC_EA0_WRREQ"),
              (32.0, "TCC_EA0_WRREQ_64B"))
#: MI350 (gfx950): TCC_BUBBLE reads 0 there; its 128 B reads are TCC_EA0_RDREQ_128B [ROCM-2501]:
#: 128 RD128 + 32 RD32 + 64 (RD - RD128 - RD32) + 64 WR64 + 32 (WR - WR64).
_HBM_MI350 = ((64.0, "TCC_EA0_RDREQ"), (64.0, "TCC_EA0_RDREQ_128B"), (-32.0, "TCC_EA0_RDREQ_32B"), (32.0, "TCC_EA0_WRREQ"),
              (32.0, "TCC_EA0_WRREQ_64B"))

#: THE table. Byte formulas are per architecture (their line size differs); FLOP formulas hold on every
#: architecture with per-precision VALU counters (not gfx908).
FORMULAS: tuple[AmdFormula, ...] = (
    AmdFormula("fp64_flops", _valu("F64"), CDNA2_UP, "[AMD-PERF] VALU FLOPs: 64 x (ADD + MUL + TRANS + 2 FMA), F64"),
    AmdFormula("fp32_flops", _valu("F32"), CDNA2_UP, "[AMD-PERF] VALU FLOPs: 64 x (ADD + MUL + TRANS + 2 FMA), F32"),
    AmdFormula("fp16_flops", _valu("F16"), CDNA2_UP, "[AMD-PERF] VALU FLOPs: 64 x (ADD + MUL + TRANS + 2 FMA), F16"),
    AmdFormula("int_ops", ((WAVE, "SQ_INSTS_VALU_INT32"), (WAVE, "SQ_INSTS_VALU_INT64")), CDNA2_UP,
               "[AMD-PERF] VALU integer instructions (INT32, INT64) x 64 lanes: one OP each"),
    AmdFormula("conversion_ops", ((WAVE, "SQ_INSTS_VALU_CVT"),), CDNA2_UP,
               "[AMD-PERF] VALU conversion instructions x 64 lanes: one OP each"),
    AmdFormula("shared_bytes", ((LDS_BYTES_PER_CYCLE, "SQ_LDS_IDX_ACTIVE"), (-LDS_BYTES_PER_CYCLE, "SQ_LDS_BANK_CONFLICT")),
               ALL_AMD, "[AMD-PERF] LDS bandwidth: (SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT) x 32 banks x 4 B"),
    AmdFormula("l1_bytes", ((VL1D_ACCESS_BYTES, "TCP_TOTAL_CACHE_ACCESSES"),), ALL_AMD,
               "[AMD-PERF] vL1D: TCP_TOTAL_CACHE_ACCESSES x 64 B, the vL1D's bytes per tag lookup (its 64 B/clk/CU); "
               "checked on vcopy: 524,288 accesses for 16 MiB of 8-byte loads and stores on gfx90a and gfx942 alike"),
    AmdFormula("l2_bytes", _lines(64, *_L2_REQUESTS), ("gfx908", "gfx90a"),
               "[AMD-PERF] L2: TCP->TCC read, write and atomic requests x 64 B; checked on vcopy (gfx90a, gfx908): "
               "131,072 reads and 131,072 writes for 8 MiB each way"),
    AmdFormula("l2_bytes", ((128.0, "TCP_TCC_READ_REQ"), *_lines(64, *_L2_REQUESTS[1:])), MI300_UP,
               "[CDNA3-WP] L2 (MI300): TCP->TCC reads x 128 B (the 128 B line), writes and atomics x 64 B; checked on "
               "vcopy (gfx942, MI300X and MI300A): 65,536 reads and 131,072 writes for 8 MiB each way"),
    AmdFormula("dram_bytes", _HBM_MI200, ("gfx908", "gfx90a"),
               "[AMD-PERF] HBM (MI200): 32 RDREQ_32B + 64 (RDREQ - RDREQ_32B) + 64 WRREQ_64B + 32 (WRREQ - WRREQ_64B)"),
    AmdFormula("dram_bytes", _HBM_MI350, ("gfx950",),
               "[ROCM-2501] HBM+MALL (MI350): 128 TCC_EA0_RDREQ_128B + 32 RDREQ_32B + 64 (RDREQ - RDREQ_128B - RDREQ_32B) "
               "+ 64 WRREQ_64B + 32 (WRREQ - WRREQ_64B); TCC_BUBBLE, MI300's, reads 0 on gfx950 (half the reads lost)"),
    AmdFormula("dram_bytes", _HBM_MI300, ("gfx940", "gfx941", "gfx942"),
               "[AMD-PERF] HBM+MALL (MI300): 128 TCC_BUBBLE + 32 RDREQ_32B + 64 (RDREQ - BUBBLE - RDREQ_32B) "
               "+ 64 WRREQ_64B + 32 (WRREQ - WRREQ_64B), EA0 counters"),
    AmdFormula("dram_bytes", ((1024.0, "FETCH_SIZE"), (1024.0, "WRITE_SIZE")), ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942"),
               "[ROCPROF-V1] rocprof v1's derived FETCH_SIZE and WRITE_SIZE (KiB: the same EA formulas / 1024), "
               "where the EA counters themselves were not kept"),
)

#: MFMA types: counter suffix -> (tensor_precision, integer). F8 and XF32 exist from MI300 on.
MFMA_TYPES: Mapping[str, tuple[str, bool]] = {"F64": ("fp64", False), "F32": ("fp32", False), "XF32": ("tf32", False),
                                               "F16": ("fp16", False), "BF16": ("bf16", False), "F8": ("fp8", False),
                                               "F6F4": ("fp4", False), "I8": ("int8", True)}
#: (F6F4, gfx950's FP6 and FP4 MFMAs in one counter, at one rate: held to the FP4 ceiling.)
#: Where the architecture packs two operations of a precision into one counted instruction [CDNA2-ISA].
PACKED: Mapping[str, tuple[str, ...]] = {"fp16_flops": ALL_AMD, "fp32_flops": CDNA2_UP}


def mfma_counter(suffix: str) -> str:
    return f"SQ_INSTS_VALU_MFMA_MOPS_{suffix}"


@dataclass(frozen=True)
class CountedAmd:
    """The counted columns (one float64 array per kernel-table column, NaN where unknown), the
    tensor precision per dispatch, which dispatches are lower bounds (packed math), notes, and for each
    unknown column the counters that would supply it."""

    columns: dict[str, np.ndarray]
    tensor_precision: np.ndarray
    packed: np.ndarray
    notes: tuple[str, ...] = ()
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_INSTANCE = re.compile(r"^(?P<name>[A-Za-z0-9_]+)\[(?P<index>\d+)\]$")


def counter_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Counters per dispatch as totals: ``X_sum`` as X's total; else ``X[0]..X[n]`` summed; else ``X``.
    Non-numeric columns are left out. One row per row of ``frame``, same index."""
    numeric = {c: pd.to_numeric(frame[c], errors="coerce") for c in frame.columns
               if frame[c].dtype.kind in "iuf" or _INSTANCE.match(str(c)) or str(c).isupper()}
    totals: dict[str, pd.Series] = {}
    instances: dict[str, list[pd.Series]] = {}
    for name, values in numeric.items():
        m = _INSTANCE.match(str(name))
        if m:
            instances.setdefault(m["name"], []).append(values)
        elif str(name).endswith("_sum"):
            totals[str(name)[:-4]] = values
    for name, values in numeric.items():
        base = str(name)
        if not _INSTANCE.match(base) and not base.endswith("_sum") and base not in totals and base not in instances:
            totals[base] = values
    for name, parts in instances.items():
        if name not in totals:  # a _sum column wins: it is rocprof's own total
            totals[name] = pd.concat(parts, axis=1).sum(axis=1, min_count=len(parts))
    return pd.DataFrame(totals, index=frame.index)


def formulas_for(arch: str) -> tuple[AmdFormula, ...]:
    return tuple(f for f in FORMULAS if arch in f.archs)


def count_amd(counters: pd.DataFrame, arch: str) -> CountedAmd:
    """The kernel-table count columns of ``counters`` (totals per dispatch, :func:`counter_totals`)
    on the gfx target ``arch``."""
    arch = arch.lower()
    if arch not in FAMILIES:
        raise ValueError(f"no AMD formula table for {arch!r} (known: {', '.join(FAMILIES)})")
    n = len(counters)
    columns: dict[str, np.ndarray] = {}
    missing: dict[str, tuple[str, ...]] = {}
    for formula in formulas_for(arch):  # a column's first formula whose counters the profile has
        if formula.column in columns:
            continue
        absent = [c for c in formula.counters if c not in counters.columns]
        if absent:
            missing.setdefault(formula.column, tuple(absent))  # the first (preferred) formula's counters
            continue
        missing.pop(formula.column, None)
        total = np.zeros(n)
        for factor, name in formula.terms:
            total += factor * counters[name].to_numpy(dtype=np.float64, na_value=np.nan)
        columns[formula.column] = total
    notes: list[str] = []
    if arch == "gfx908":
        missing.update({c: ("SQ_INSTS_VALU_ADD_F32 and the other per-precision VALU counters, which gfx908 lacks",)
                        for c in ("fp64_flops", "fp32_flops", "fp16_flops")})
        notes.append("gfx908 (MI100) counts VALU instructions only in total (SQ_INSTS_VALU): FLOPs per precision are unknown")
    tensor, ints, precision = _mfma(counters, arch, n, missing)
    columns["tensor_flops"], columns["tensor_int_ops"] = tensor, ints
    packed = np.zeros(n, dtype=bool)
    for column, archs in PACKED.items():
        if arch in archs and column in columns:
            packed |= np.nan_to_num(columns[column]) > 0
    if packed.any():
        notes.append(f"{int(packed.sum())} of {n} dispatches do FP16 or FP32 vector work that {arch} can issue as packed "
                     "instructions (two operations per lane, counted once): their FLOPs are lower bounds")
    if any(np.nan_to_num(columns.get(c, np.zeros(0))).sum() > 0 for c in ("fp64_flops", "fp32_flops", "fp16_flops")):
        notes.append("vector FLOPs count 64 lanes per instruction, lanes masked off by divergence too, and a division "
                     "or square root as the instructions it expands to: divergent code reads more FLOPs than it does")
    if arch in MI300_UP and "dram_bytes" in columns:
        notes.append("the HBM level is the L2's EA traffic, which on MI300 reaches the Infinity Cache (MALL) first: "
                     "HBM+MALL bytes, an upper bound on HBM's")
    return CountedAmd(columns, precision, packed, tuple(notes), missing)


def _mfma(counters: pd.DataFrame, arch: str, n: int, missing: dict[str, tuple[str, ...]]
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MFMA FLOPs (floating-point types), integer MFMA operations, and each dispatch's one
    floating-point matrix type (None when it used none or several)."""
    present = {s: counters[mfma_counter(s)].to_numpy(dtype=np.float64, na_value=np.nan)
               for s in MFMA_TYPES if mfma_counter(s) in counters.columns}
    floats = [s for s in present if not MFMA_TYPES[s][1]]
    precision = np.full(n, None, dtype=object)
    if not floats:
        missing["tensor_flops"] = tuple(mfma_counter(s) for s in ("F16", "BF16", "F32", "F64"))
        tensor = np.full(n, np.nan)
    else:
        tensor = MOP * np.sum([present[s] for s in floats], axis=0)
        used = np.array([np.nan_to_num(present[s]) > 0 for s in floats])
        one = used.sum(axis=0) == 1
        for i, s in enumerate(floats):
            precision[one & used[i]] = MFMA_TYPES[s][0]
    if "I8" in present:
        ints = MOP * present["I8"]
    else:
        missing["tensor_int_ops"] = (mfma_counter("I8"),)
        ints = np.full(n, np.nan)
    return tensor, ints, precision


#: Counters one pass can take per hardware block, after rocprofiler-compute's own roofline passes
#: (profile_configs/gfx90a and gfx940, roofline/pmc_roof_perf.txt: 8 SQ, 4 TCP and 5 TCC counters a pass).
PASS_LIMITS: Mapping[str, int] = {"SQ": 8, "TCP": 4, "TCC": 5}


def pmc_name(counter: str) -> str:
    """The name rocprof is asked for: the summed form ``X_sum`` of a per-instance TCP/TCC counter."""
    return f"{counter}_sum" if counter.startswith(("TCP_", "TCC_")) else counter


def required_counters(arch: str) -> tuple[tuple[str, ...], ...]:
    """The counters the roofline needs on ``arch``, as rocprof ``--pmc`` passes (names as
    :func:`pmc_name` gives them), each pass within :data:`PASS_LIMITS` per block, fewest passes
    (first fit, in the table's order)."""
    arch = arch.lower()
    first = {f.column: f for f in reversed(formulas_for(arch))}  # each column's preferred formula
    needed = [c for f in formulas_for(arch) if first[f.column] is f for c in f.counters]
    needed += [mfma_counter(s) for s in ("F16", "BF16", "F32", "F64", "I8")]
    if arch in MI300_UP:
        needed.append(mfma_counter("F8"))
    if arch == "gfx950":
        needed.append(mfma_counter("F6F4"))
    passes: list[list[str]] = []
    for counter in dict.fromkeys(needed):
        block = counter.split("_")[0]
        limit = PASS_LIMITS.get(block, 8)
        for chosen in passes:
            if sum(c.split("_")[0] == block for c in chosen) < limit:
                chosen.append(counter)
                break
        else:
            passes.append([counter])
    return tuple(tuple(pmc_name(c) for c in p) for p in passes)

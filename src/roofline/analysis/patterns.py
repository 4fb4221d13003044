"""Instruction-roofline figures of each kernel: warp-instruction rate, instruction intensity per
level, and where its loads and stores sit against the memory-pattern walls. Pure and vectorised.

After Ding and Williams, "An Instruction Roofline Model for GPUs" (PMBS 2019), and Ding, Yang,
Williams et al.'s follow-ups:

* warp instruction rate = ``warp_inst / time_s`` (x 1e-9: warp GIPS);
* instruction intensity at a level = ``warp_inst / <level>_transactions`` (warp instructions per 32-byte
  sector at L1, L2 and DRAM, per 128-byte wavefront in shared memory);
* global walls: a warp's load or store of 4-byte words touches 1 sector when all 32 threads read one
  address (stride-0), 4 sectors (128 B) when they read consecutive words (unit stride), and 32 when
  each reads its own sector (random). ``global_ii = global_inst / l1_transactions`` is therefore 1,
  1/4 or 1/32 on the walls, and in between for mixes;
* shared walls: a warp's shared-memory load or store takes 1 wavefront without bank conflicts and up
  to 32 with 32-way conflicts: ``shared_ii = shared_inst / shared_transactions`` is 1 to 1/32.

Each figure divides like by like (:mod:`roofline.counting.instructions`): ``global_inst`` counts the
LDG, STG, LDL, STL, LDGSTS (cp.async), atomic and reduction instructions whose L1 sectors
``l1_transactions`` counts, and ``shared_inst`` the LDS, STS, LDSM, STSM, atomic and LDGSTS
instructions whose wavefronts ``shared_transactions`` counts. Traffic without such instructions is
not put on the walls, and each row says so (``pattern_note``): TMA (bulk copies, SM 9.0 on) moves data
between global and shared memory without any; its global traffic is not among the L1 sectors, but the
shared data stage's load/store wavefronts then hold traffic no LD/ST instruction asked for (an nvjet
GEMM of the H200 study in tests/data/ncu/h200_setfull_sglang_moe_fa3: 25 load wavefronts per LDS
after its bank conflicts, where a 16-byte access needs 4), so a kernel that ran TMA instructions gets
no shared-wall figure. Warpgroup MMAs (wgmma, SM 9.0) read their operands from shared memory through
descriptors, in wavefronts of their own (``..._op_gmma``), outside those walls: said, not drawn.

Wider accesses move the unit-stride point: 8-byte words take 8 sectors per instruction and 16-byte
(float4) words 16, and a conflict-free 16-byte shared access takes 4 wavefronts; the pattern names
below read the 4-byte walls, and guidance (:mod:`roofline.guidance`) checks against Nsight
Compute's ideal sector counts where the profile has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.columns import INSTRUCTION_COLUMNS
from roofline.kernels import frame_of, strings

#: Warp LD/ST instructions per transaction on each global-memory wall (4-byte words).
GLOBAL_WALLS: dict[str, float] = {"stride-0": 1.0, "unit-stride": 1 / 4, "random": 1 / 32}
#: Shared-memory LD/ST instructions per wavefront: no bank conflict, and the worst, 32-way.
SHARED_WALLS: dict[str, float] = {"conflict-free": 1.0, "32-way conflicts": 1 / 32}

#: Sectors per global LD/ST instruction bounding each pattern name. Below 2 (the geometric middle of
#: the stride-0 and unit-stride walls, 1 and 4): stride-0. Up to 8 (8-byte words at unit stride):
#: unit-stride. From 24 (three quarters of the way to the random wall's 32): random. Between: strided
#: (or 16-byte vector accesses at unit stride, 16 sectors: see the module docstring).
STRIDE0_BELOW = 2.0
UNIT_STRIDE_UP_TO = 8.0
RANDOM_FROM = 24.0
#: Wavefronts per shared LD/ST instruction below which an access is conflict-free.
CONFLICT_FREE_BELOW = 1.5

_LEVELS = ("l1", "shared", "l2", "dram")


def _column(columns: Mapping[str, Any], name: str, n: int) -> np.ndarray:
    if name not in columns:
        return np.full(n, np.nan)
    values = columns[name]
    if isinstance(values, np.ndarray):
        return values.astype(float, copy=False)
    return values.to_numpy(dtype=float, na_value=np.nan)


def global_pattern(sectors_per_instruction: np.ndarray) -> np.ndarray:
    """'stride-0', 'unit-stride', 'strided' or 'random' per value (None where unknown or NaN)."""
    s = np.asarray(sectors_per_instruction, dtype=float)
    code = np.select([~np.isfinite(s), s < STRIDE0_BELOW, s <= UNIT_STRIDE_UP_TO, s < RANDOM_FROM],
                     [4, 0, 1, 2], default=3)
    return np.array(["stride-0", "unit-stride", "strided", "random", None], dtype=object)[code]


def shared_pattern(wavefronts_per_instruction: np.ndarray) -> np.ndarray:
    """'conflict-free' or '<n>-way conflicts' per value (None where unknown or NaN). By the 4-byte
    walls: a conflict-free 8- or 16-byte access takes 2 or 4 wavefronts and reads as 2- or 4-way here;
    guidance tells the two apart with Nsight Compute's ideal wavefronts or conflict counts."""
    w = np.asarray(wavefronts_per_instruction, dtype=float)
    out = np.full(w.shape, None, dtype=object)
    known = np.isfinite(w)
    free = known & (w < CONFLICT_FREE_BELOW)
    out[free] = "conflict-free"
    for i in np.flatnonzero(known & ~free):  # half up (Python's round() takes 2.5 to 2)
        out[i] = f"{int(np.floor(float(w[i]) + 0.5))}-way conflicts"
    return out


def _count(value: float) -> str:
    return f"{value:,.0f}"


def pattern_notes(tma: np.ndarray, gmma: np.ndarray) -> np.ndarray:
    """Per row, what the walls leave out (module docstring), or None: the TMA and warpgroup-MMA
    instructions a kernel ran, whose traffic no LD/ST instruction count pairs with."""
    out = np.full(len(tma), None, dtype=object)
    for i in np.flatnonzero((tma > 0) | (gmma > 0)):
        parts = []
        if tma[i] > 0:
            parts.append(f"{_count(tma[i])} TMA instructions move data between global and shared memory without "
                         "LD/ST instructions: their global traffic is not on the walls, and the shared load/store "
                         "wavefronts then hold theirs too, so no shared-wall figure")
        if gmma[i] > 0:
            parts.append(f"{_count(gmma[i])} warpgroup MMAs (wgmma) read their operands from shared memory, "
                         "in wavefronts outside the shared walls")
        out[i] = "; ".join(parts)
    return out


def instruction_arrays(columns: Mapping[str, Any], n: int) -> dict[str, Any]:
    """The :data:`~roofline.analysis.columns.INSTRUCTION_COLUMNS` of a kernel table given as columns
    (name -> array, or a frame) of ``n`` rows: float64 arrays, and string arrays for the patterns."""
    time = _column(columns, "time_s", n)
    inst = _column(columns, "warp_inst", n)
    out: dict[str, Any] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["inst_rate"] = np.where(time > 0, inst / time, np.nan)
        for lv in _LEVELS:
            tx = _column(columns, f"{lv}_transactions", n)
            out[f"ii_{lv}"] = np.where(tx > 0, inst / tx, np.nan)
        g_inst, g_tx = _column(columns, "global_inst", n), _column(columns, "l1_transactions", n)
        s_inst, s_tx = _column(columns, "shared_inst", n), _column(columns, "shared_transactions", n)
        tma, gmma = _column(columns, "tma_inst", n), _column(columns, "gmma_inst", n)
        out["global_ii"] = np.where((g_inst > 0) & (g_tx > 0), g_inst / g_tx, np.nan)
        # TMA's shared traffic sits in the wavefronts without instructions of its own: nothing to pair
        out["shared_ii"] = np.where((s_inst > 0) & (s_tx > 0) & ~(tma > 0), s_inst / s_tx, np.nan)
        out["global_pattern"] = strings(global_pattern(1 / out["global_ii"]))
        out["shared_pattern"] = strings(shared_pattern(1 / out["shared_ii"]))
    out["pattern_note"] = strings(pattern_notes(tma, gmma))
    return {c.name: out[c.name] for c in INSTRUCTION_COLUMNS}


def instruction_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The :data:`~roofline.analysis.columns.INSTRUCTION_COLUMNS` of a kernel table (same index).

    NaN (or <NA>) where a count is unknown; a pattern is <NA> for kernels without global (or shared)
    loads and stores. Divisions by a zero count give NaN, not infinity.
    """
    return frame_of(instruction_arrays(frame, len(frame)), frame.index)

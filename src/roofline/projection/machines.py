"""The two machines of a projection, made comparable, and the roofline terms of each kernel on them.

The levels both machines have ceilings for (:func:`with_levels`), stand-in ceilings for precisions the
target lacks (:data:`SUBSTITUTES`), the L2 sizes (:func:`l2_size`, :func:`profile_l2_bytes`), and per
row the roofline time (:func:`roof`, from the memory terms alone where no FLOPs were counted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.counting.raw_metrics import DEVICE_L2_BYTES
from roofline.kernels import KernelTable
from roofline.machine.model import Machine

#: Compute key the target lacks -> (the key its FLOPs are held to instead, factor on the bytes at the
#: high end of the range, why). FP4 GEMMs run in FP8 where there is no FP4 datapath (Hopper, Ada), FP8
#: GEMMs in FP16 where there are no FP8 tensor cores (Ampere and older), each moving twice the bytes; BF16 in FP16 (Volta, Turing); TF32 on the FP32 units (Volta, Turing), as AMD's FP32 matrix work on a GPU without an FP32 matrix path (NVIDIA's).
#: Followed step by step (:func:`substitute_for`): FP4 on an A100 runs in FP16, four times the bytes.
SUBSTITUTES: Mapping[str, tuple[str, float, str]] = {
    "tensor_fp4": ("tensor_fp8", 2.0, "FP4 data in FP8 move twice the bytes"),
    "tensor_fp8": ("tensor_fp16", 2.0, "FP8 data in FP16 move twice the bytes"),
    "tensor_bf16": ("tensor_fp16", 1.0, "same data size"),
    "tensor_tf32": ("fp32", 1.0, "TF32 GEMMs on the FP32 units"),
    "tensor_fp32": ("fp32", 1.0, "FP32 matrix work (AMD's MFMA) on the FP32 units"),
    "bf16": ("fp32", 1.0, "BF16 arithmetic in FP32"),
}


def l2_size(machine: Machine | None) -> float | None:
    """The L2 capacity (B) a machine records: ``metadata['l2_bytes']``, a measured GPU's sweep cache
    sizes, or the spec of the GPU it names; None when unknown."""
    if machine is None:
        return None
    meta = machine.metadata
    for value in (meta.get("l2_bytes"), (meta.get("sweep_cache_sizes") or {}).get("l2"),
                  (meta.get("cache_sizes") or {}).get("l2")):
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    from roofline.machine.specs import spec_for_device_name

    for name in (meta.get("gpu"), machine.name):
        spec = spec_for_device_name(name) if isinstance(name, str) and name else None
        if spec is not None and spec.l2_bytes:
            return float(spec.l2_bytes)
    return None


def profile_l2_bytes(table: KernelTable) -> float | None:
    """The L2 size (B) the profile's device attributes record (:data:`~roofline.counting.raw_metrics.DEVICE_L2_BYTES`,
    the median over launches); None when the table has none."""
    m = table.metrics
    col = DEVICE_L2_BYTES
    if m is None or col not in m.columns:
        return None
    values = pd.to_numeric(m[col], errors="coerce").dropna()
    return float(values.median()) if len(values) else None


def with_levels(machine: Machine, levels: list[str]) -> Machine:
    memory = {lv: machine.memory[lv] for lv in levels if lv in machine.memory}
    sources = {k: v for k, v in machine.sources.items() if not k.startswith("memory.") or k[7:] in memory}
    clocks = {k: v for k, v in machine.clocks.items() if not k.startswith("memory.") or k[7:] in memory}
    return dataclasses.replace(machine, memory=memory, sources=sources, clocks=clocks)


def substitute_for(key: str, compute: Mapping[str, float]) -> str | None:
    """The ceiling of ``compute`` that ``key`` (which it lacks) is held to: :data:`SUBSTITUTES` followed
    until a key it has (an FP4 GEMM on an A100, which has neither FP4 nor FP8: tensor FP16); None."""
    while key in SUBSTITUTES:
        key = SUBSTITUTES[key][0]
        if key in compute:
            return key
    return None


def substitution(key: str, sub: str) -> tuple[float, str]:
    """The factor on the bytes and the reasons of holding ``key`` to ``sub`` through :data:`SUBSTITUTES`:
    the steps' factors multiplied (FP4 held to FP16: 2 x 2 = 4), their reasons joined."""
    factor, reasons = 1.0, []
    while key != sub:
        key, step, reason = SUBSTITUTES[key]
        factor *= step
        reasons.append(reason)
    return factor, "; ".join(reasons)


def substituted(target: Machine, used: set[str]) -> tuple[Machine, dict[str, str]]:
    """The target with a substitute ceiling for each used key it lacks (:func:`substitute_for`)."""
    added: dict[str, float] = {}
    subs: dict[str, str] = {}
    clocks = dict(target.clocks)
    for key in sorted(used):
        if key in target.compute:
            continue
        sub = substitute_for(key, target.compute)
        if sub is not None:
            added[key], subs[key] = target.compute[sub], sub
            if f"compute.{sub}" in target.clocks:  # the substitute's figure holds at its own clock
                clocks[f"compute.{key}"] = target.clocks[f"compute.{sub}"]
    if not added:
        return target, subs
    return dataclasses.replace(target, compute={**target.compute, **added}, clocks=clocks), subs


def memory_roof(frame: pd.DataFrame, machine: Machine | None, levels: tuple[str, ...]) -> np.ndarray:
    """max over levels of bytes / bandwidth (NaN where no level has bytes)."""
    n = len(frame)
    if machine is None or not levels:
        return np.full(n, np.nan)
    terms = np.column_stack([frame[f"{lv}_bytes"].to_numpy(dtype=float) / machine.memory[lv] for lv in levels])
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(terms).any(axis=1), np.nanmax(np.where(np.isfinite(terms), terms, -np.inf), axis=1),
                        np.nan)


def roof(analysis: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """Roofline time per row, and whether it rests on the memory terms alone (no FLOP counts)."""
    roof = analysis.frame["roofline_time_s"].to_numpy(dtype=float)
    mem = memory_roof(analysis.frame, analysis.machine, analysis.levels)
    no_flops = ~np.isfinite(analysis.frame["flops"].to_numpy(dtype=float))
    memory_only = ~np.isfinite(roof) & no_flops & np.isfinite(mem)
    return np.where(memory_only, mem, roof), memory_only


def used_keys(frame: pd.DataFrame) -> set[str]:
    keys = {k for col, k in (("fp64_flops", "fp64"), ("fp32_flops", "fp32"), ("fp16_flops", "fp16"))
            if (frame[col].fillna(0) > 0).any()}
    tensor = frame.loc[frame["tensor_flops"].fillna(0) > 0, "tensor_precision"].astype("string").str.lower()
    keys |= {f"tensor_{p}" for p in tensor.dropna().unique()}
    if tensor.isna().any():
        keys.add("tensor_fp16")
    return keys


def unknown_flop_keys(row: pd.Series) -> list[str]:
    """Compute keys the uncounted FLOPs of a row could run on (from which FLOP columns are NaN)."""
    keys: list[str] = []
    if pd.isna(row["fp64_flops"]):
        keys += ["fp64", "tensor_fp64"]
    if pd.isna(row["fp32_flops"]):
        keys += ["fp32"]
    if pd.isna(row["fp16_flops"]):
        keys += ["fp16", "bf16"]
    if pd.isna(row["tensor_flops"]):
        keys += ["tensor_fp32", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_fp4"]
    return keys

"""Toy machines and synthetic kernel tables for the projection tests, numbers chosen for arithmetic by hand.

SRC (the GPU the profile was measured on), at 1 GHz, the kernels' clock (so no scaling):
    L1 8 TB/s, L2 4 TB/s, DRAM 1 TB/s; FP64 1, FP32 2, tensor FP16 16, tensor BF16 16, tensor FP8 32 TFLOP/s.
TGT (the target), at its own 1 GHz (the kernels' clock too: the time above the roofline keeps its length):
    L1 16 TB/s, L2 8 TB/s, DRAM 2 TB/s; FP64 0.5, FP32 8, tensor FP16 16 TFLOP/s (no BF16 or FP8 tensor cores).
Both record no L2 size unless given one (``l2_bytes``), so that capacity effects stay out of the base maths.
"""

from __future__ import annotations

from typing import Any

from roofline.counting import NCU_HINTS
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine

SRC_MEMORY = {"l1": 8e12, "l2": 4e12, "dram": 1e12}
SRC_COMPUTE = {"fp64": 1e12, "fp32": 2e12, "tensor_fp16": 16e12, "tensor_bf16": 16e12, "tensor_fp8": 32e12}
TGT_MEMORY = {"l1": 16e12, "l2": 8e12, "dram": 2e12}
TGT_COMPUTE = {"fp64": 0.5e12, "fp32": 8e12, "tensor_fp16": 16e12}


def machine(name: str, memory: dict[str, float], compute: dict[str, float], *, clock: float | None = 1e9,
            l2_bytes: float | None = None) -> Machine:
    """A theoretical toy machine; ``l2_bytes`` goes to ``metadata['l2_bytes']`` when given."""
    meta: dict[str, Any] = {"l2_bytes": l2_bytes} if l2_bytes is not None else {}
    return Machine(name=name, source="theoretical", memory=memory, compute=compute, sm_clock_hz=clock, metadata=meta)


def src(l2_bytes: float | None = None, **compute: float) -> Machine:
    return machine("src-toy", SRC_MEMORY, compute or SRC_COMPUTE, clock=1e9, l2_bytes=l2_bytes)


def tgt(l2_bytes: float | None = None, memory: dict[str, float] | None = None, clock: float | None = 1e9,
        name: str = "tgt-toy", **compute: float) -> Machine:
    return machine(name, memory or TGT_MEMORY, compute or TGT_COMPUTE, clock=clock, l2_bytes=l2_bytes)


def kernel(name: str, time: float | None, *, fp64: float | None = 0.0, fp32: float | None = 0.0,
           fp16: float | None = 0.0, tensor: float | None = 0.0, launches: int = 1, **extra: Any) -> dict[str, Any]:
    """One launch record at 1 GHz. FLOP components default to 0 (counted, none done) so that a kernel's
    FLOPs are complete unless a test passes None (uncounted: NaN). ``launches``: how many launches the
    record stands for (always given: a column missing from one record would be unknown in it). Other
    columns (``dram_bytes``, ``l2_bytes``, ``l1_bytes``, ``phase``, ``tensor_precision``) pass through."""
    rec: dict[str, Any] = {"kernel_name": name, "sm_clock_hz": 1e9, "launches": launches}
    if time is not None:
        rec["time_s"] = time
    for col, val in (("fp64_flops", fp64), ("fp32_flops", fp32), ("fp16_flops", fp16), ("tensor_flops", tensor)):
        if val is not None:
            rec[col] = val
    rec.update(extra)
    return rec


def table(*records: dict[str, Any]) -> KernelTable:
    """A kernel table of the records; keys a record lacks are unknown (NaN) in that row. What to
    collect is named as the ncu reader names it."""
    return KernelTable(frame=from_records(records), metric_hints=NCU_HINTS)

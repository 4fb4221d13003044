"""CPU or GPU: which processor a machine's ceilings and a kernel table describe, and the check that they agree.

A CPU's ceilings applied to GPU kernels (or the reverse) give figures that look right and are not: an
ERT run of a Xeon held a V100's kernels to 109 GFLOP/s and drew them at 530 % of their roofline.
:func:`check_processor` refuses that with one message unless the caller allows it; where either side
is unknown it says nothing.

What says a machine is a CPU or a GPU (:func:`machine_processor`), first that speaks:

- ``metadata['processor']`` (``"cpu"``/``"gpu"``), which the ERT reader sets from the run's ``CONFIG``
  (:func:`roofline.readers.machines.ert.ert_processor`);
- GPU: ``metadata['gpu']`` (a GPU spec, the profile's own peaks), ``metadata['device']`` with a compute
  capability (``roofline machine`` on a GPU), ceilings from a profile's peak metrics (Nsight Compute
  profiles GPUs only), tensor-core, warp-instruction or shared-memory ceilings;
- CPU: ``metadata['cpu']`` (``roofline machine --cpu``), ``metadata['lanes_fp64']`` (theoretical CPU
  ceilings);
- with neither, a name that is a GPU we have a spec for (``"V100-SXM2"``).

What says a kernel table came from a GPU or a CPU (:func:`table_processor`): a compute capability or
any Nsight Compute metric (a GPU's device attributes and units: the prefixes of
:data:`roofline.counting.raw_metrics.NCU_PREFIXES`) is a GPU; PyTorch operators recorded without counters on CPU tensors only
(``device_type`` ``cpu``, ``roofline profile --torch`` on a CPU) are a CPU. ``roofline.measure`` rows
say neither (the timed code may run anywhere): unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from roofline.counting.raw_metrics import NCU_PREFIXES
from roofline.errors import MachineError
from roofline.machine.model import Machine

#: How a processor is named in messages.
NAMES = {"cpu": "CPU", "gpu": "GPU"}


def machine_processor(machine: Machine) -> tuple[str | None, str]:
    """``("cpu" | "gpu" | None, why)`` for a machine (see the module docstring); None when unknown or
    when its evidence disagrees (a CPU's ERT file combined with a GPU's spec)."""
    meta = machine.metadata
    said = meta.get("processor")
    if said in NAMES:
        return str(said), str(meta.get("processor_evidence") or f"its metadata says {NAMES[said]}")
    gpu: list[str] = []
    cpu: list[str] = []
    if isinstance(meta.get("gpu"), str) and meta["gpu"]:
        gpu.append(f"GPU {meta['gpu']}")
    device = meta.get("device")
    if isinstance(device, Mapping) and device.get("compute_capability"):
        gpu.append(f"measured on {device.get('name') or 'a GPU'}")
    if machine.source == "from-profile":
        gpu.append("a GPU profile's peak metrics")
    tensor = sorted(k for k in machine.compute if k.startswith("tensor_"))
    if tensor:
        gpu.append(f"tensor-core ceilings ({', '.join(tensor)})")
    if "warp_inst" in machine.compute or "shared" in machine.memory:
        gpu.append("warp-instruction or shared-memory ceilings")
    if isinstance(meta.get("cpu"), str) and meta["cpu"]:
        cpu.append(f"CPU {meta['cpu']}")
    if "lanes_fp64" in meta:
        cpu.append("theoretical CPU ceilings")
    if not gpu and not cpu:
        from roofline.machine.specs import spec_for_device_name

        spec = spec_for_device_name(machine.name)
        if spec is not None:
            gpu.append(f"named after the {spec.name}")
    if gpu and not cpu:
        return "gpu", gpu[0]
    if cpu and not gpu:
        return "cpu", cpu[0]
    return None, ""


def table_processor(table: Any) -> tuple[str | None, str]:
    """``("cpu" | "gpu" | None, why)`` for a :class:`~roofline.kernels.KernelTable` (see the module docstring)."""
    frame, metrics = table.frame, table.metrics
    if "compute_capability" in frame.columns:
        ccs = frame["compute_capability"].dropna()
        if len(ccs):
            return "gpu", f"compute capability {ccs.iloc[0]}"
    columns = [str(c) for c in metrics.columns] if metrics is not None else []
    ncu = next((c for c in columns if c.startswith(NCU_PREFIXES)), None)
    if ncu is not None:
        return "gpu", f"Nsight Compute metrics such as {ncu}"
    if "device_type" in columns:
        kinds = {str(k) for k in metrics["device_type"].dropna()}
        if "cuda" in kinds:
            return "gpu", "PyTorch operators on CUDA tensors"
        if kinds == {"cpu"}:
            return "cpu", "PyTorch operators on CPU tensors only"
    return None, ""


def check_processor(table: Any, machine: Machine, *, allow: bool = False, what: str = "the machine",
                    path: str | Path | None = None) -> str | None:
    """Refuse ``machine`` for ``table`` when one is a CPU and the other a GPU (:class:`MachineError`, one
    line naming ``path`` and the way out), unless ``allow``; then return a note saying it was applied
    anyway. None when they agree or either is unknown."""
    m_kind, m_why = machine_processor(machine)
    t_kind, t_why = table_processor(table)
    if m_kind is None or t_kind is None or m_kind == t_kind:
        return None
    mine, theirs = NAMES[m_kind], NAMES[t_kind]
    if allow:
        return (f"{what} {machine.name!r} describes a {mine} ({m_why}) and the profile ran on a {theirs} "
                f"({t_why}): its ceilings applied as asked (--allow-other-machine)")
    raise MachineError(
        f"{what} {machine.name!r} describes a {mine} ({m_why}), but the profile ran on a {theirs} ({t_why}): "
        f"its ceilings do not hold these kernels; give the {theirs}'s ceilings instead, or pass "
        "--allow-other-machine (Python: allow_other_machine=True) to apply them anyway", path=path)

"""The machine side of the API: measure this machine's ceilings (GPU or CPU), a named GPU's
theoretical ones, this CPU's cached ceilings, the checks on a measurement, and its files (the
working-set sweep's chart, ERT's ``roofline.json`` layout).

The benchmarks (:mod:`roofline.bench`: CuPy, numba) load when a measurement starts, not before.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from roofline.bench import reliability
from roofline.bench.cpu import cache as cpu_cache
from roofline.bench.evidence import Measurement, Mode, Progress
from roofline.errors import InputError, ToolNotFoundError
from roofline.kernels import KernelTable
from roofline.machine import gpu_device
from roofline.machine.model import Machine, compute_unit
from roofline.machine.specs import SPECS, GpuSpec, list_specs
from roofline.machine.theoretical import theoretical, theoretical_from_spec
from roofline.writing.safe import write_bytes

if TYPE_CHECKING:
    from roofline.machine.amd_specs import AmdSpec

__all__ = [
    "Measurement", "Processor", "check_ert_export", "cpu_machine_for", "ert_document", "gpu_specs",
    "load_per_core", "measure_machine", "processor_to_measure", "reliability_warning", "save_sweep",
    "theoretical",
]



@dataclass(frozen=True)
class Processor:
    """What to measure: ``kind`` ``"gpu"`` (CUDA device ``index``) or ``"cpu"``."""

    kind: Literal["gpu", "cpu"]
    index: int = 0


def processor_to_measure(gpu: int | None = None, cpu: bool = False) -> Processor:
    """The processor a measurement takes: GPU ``gpu``, the CPU if ``cpu``, else GPU 0 when there is
    one and the CPU when there is none. Raises :class:`~roofline.errors.InputError` for both asked,
    :class:`~roofline.errors.ToolNotFoundError` for a GPU that is not there (or one present that
    cannot be reached: the reason is given)."""
    if cpu and gpu is not None:
        raise InputError("--cpu and --gpu exclude each other")
    if not cpu:
        n = gpu_device.gpu_count()
        if gpu is not None and n == 0:
            raise ToolNotFoundError(f"no NVIDIA GPU found (asked for --gpu {gpu}); --cpu measures the CPU")
        if gpu is not None and gpu >= n:
            raise ToolNotFoundError(f"no GPU {gpu}: this machine has {n} (0 to {n - 1})")
        if n == 0 and gpu is None:
            reason = gpu_device.undetected_gpu_reason()
            if reason:
                raise ToolNotFoundError(f"{reason}; install CuPy for your CUDA, or pass --cpu to measure the CPU")
        if n > 0:
            return Processor("gpu", gpu or 0)
    return Processor("cpu")


def measure_machine(processor: Processor | None = None, *, mode: Mode = "default",
                    progress: Progress | None = None) -> Measurement:
    """Measure ``processor``'s ceilings (default: :func:`processor_to_measure`'s choice) with the
    micro-benchmarks (:func:`roofline.bench.measure_gpu`, :func:`roofline.bench.measure_cpu`);
    ``mode``: ``"quick"``, ``"default"`` or ``"thorough"``; ``progress(what, fraction)`` is called as
    the run proceeds. Ceilings in FLOP/s and B/s, clocks in Hz."""
    processor = processor if processor is not None else processor_to_measure()
    if processor.kind == "gpu":
        from roofline.bench.gpu.measure import measure_gpu

        return measure_gpu(device=processor.index, mode=mode, progress=progress)
    try:
        from roofline.bench.cpu.measure import measure_cpu
    except ImportError as exc:
        raise ToolNotFoundError(f"no GPU found and the CPU characterization is not available ({exc})") from None
    return measure_cpu(mode=mode, progress=progress)


def gpu_specs() -> list[tuple[str, GpuSpec | AmdSpec, Machine]]:
    """Every GPU spec roofline knows: (its name for ``--spec``, the spec, its theoretical ceilings), the
    NVIDIA ones first, then the AMD Instinct ones (:mod:`roofline.machine.amd_specs`)."""
    from roofline.machine.amd_theory import amd_specs_listed  # (AMD's tables: loaded for the listing only)

    nvidia: list[tuple[str, GpuSpec | AmdSpec, Machine]] = [
        (key, SPECS[key], theoretical_from_spec(SPECS[key])) for key in list_specs()]
    return nvidia + [(key, spec, machine) for key, spec, machine in amd_specs_listed()]


def load_per_core() -> float | None:
    """The load average per usable core now (None where the system does not say): read before
    measuring, as the benchmark's own threads would count (:func:`roofline.bench.reliability.load_per_core`)."""
    return reliability.load_per_core()


def reliability_warning(measurement: Measurement, load_per_core: float | None) -> str | None:
    """The warning for a measurement whose figures look unreliable, else None (see
    :func:`roofline.bench.reliability.assess`): ``metadata['repeat_ratio']`` per ceiling, the
    CPU benchmark's ``metadata['cpu_share']``, and the load per core read before measuring."""
    meta = measurement.machine.metadata
    return reliability.assess(dict(meta.get("repeat_ratio") or {}), load_per_core, meta.get("cpu_share")).warning


def save_sweep(measurement: Measurement, path: Path, *, force: bool = False) -> Path:
    """Write the chart of the measurement's working-set sweep (bandwidth vs working set) to ``path``
    (format from its suffix, 150 dpi); returns the path written."""
    from roofline.bench.sweep import plot_sweep  # matplotlib

    if not measurement.sweeps:
        raise InputError("this measurement has no working-set sweep to plot", path=path)
    fig = plot_sweep(dict(measurement.sweeps), dict(measurement.cache_sizes) or None,
                     title=f"{measurement.machine.name}: bandwidth vs working set")
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", dpi=150)
    return write_bytes(path, buf.getvalue(), force=force)


def check_ert_export() -> Callable[..., dict[str, Any]]:
    """ERT's ``roofline.json`` writer (:func:`roofline.writing.ert_json.to_ert_json`); raises
    :class:`~roofline.errors.ToolNotFoundError` when this build lacks it (checked before measuring)."""
    try:
        from roofline.writing.ert_json import to_ert_json
    except ImportError as exc:
        raise ToolNotFoundError(f"ERT export is not available in this build ({exc})") from None
    return to_ert_json


def ert_document(machine: Machine, measurement: Measurement | None = None) -> dict[str, Any]:
    """``machine`` (and the ``measurement`` it came from) in ERT's ``roofline.json`` layout, with its
    FLOP/s ceilings alone (:func:`_flops_only`)."""
    return check_ert_export()(_flops_only(machine), measurement and replace(
        measurement, machine=_flops_only(measurement.machine),
        theoretical=measurement.theoretical and _flops_only(measurement.theoretical)))


def _flops_only(machine: Machine) -> Machine:
    """``machine`` with its FLOP/s compute ceilings alone: ERT's ``gflops`` holds GFLOP/s, and its readers
    (ours too) take a name without a precision for FP64, so 'INT32 GFLOPs' or 'WARP_INST GFLOPs' would
    come back as FP64."""
    compute = {k: v for k, v in machine.compute.items() if compute_unit(k) == "FLOP/s"}
    sources = {k: v for k, v in machine.sources.items() if not k.startswith("compute.") or k[8:] in compute}
    clocks = {k: v for k, v in machine.clocks.items() if not k.startswith("compute.") or k[8:] in compute}
    return replace(machine, compute=compute, sources=sources, clocks=clocks)


def cpu_machine_for(table: KernelTable, *, cache_dir: str | os.PathLike[str] | None = None, measure: bool = True,
                    announce: Callable[[str], None] | None = None) -> tuple[Machine | None, str]:
    """This CPU's measured ceilings for a table of CPU work that ran on this host's CPU, and a sentence
    saying where they came from (:func:`roofline.bench.cpu.cache.cpu_machine_for`: cached per host and
    CPU, measured now when none is and ``measure``)."""
    return cpu_cache.cpu_machine_for(table, cache_dir=cache_dir, measure=measure, announce=announce)

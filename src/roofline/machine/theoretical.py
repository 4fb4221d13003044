"""Theoretical ceilings of an NVIDIA GPU: SMs x per-SM rate x clock, bus width x data rate.

- compute ceiling (FLOP/s) = SMs x FLOP/clk/SM (:mod:`roofline.machine.specs`) x SM clock (Hz);
- DRAM (B/s) = bus width (bits) / 8 x data rate (bit/s per pin; for DDR memories twice the
  memory clock);
- L1 (B/s) = B/clk/SM x SMs x SM clock, where the architecture row has a sourced figure;
- L2 (B/s) = whole-chip B/clk x SM clock, where the architecture row has a sourced figure
  (Volta and GA100 from NVIDIA's A100 whitepaper; Hopper from a published table that carries the
  GA100 figure over, an estimate). ``metadata['derived']['l2']`` names the source and the clock;
  elsewhere the L2 is absent and ``metadata['absent']`` says why: measure it.
- shared memory (B/s) = 32 banks x 4 B per clock per SM x SMs x SM clock
  (:data:`~roofline.machine.specs.SHARED_NOTE`);
- ``int32``, ``conversion``, ``sfu`` (OP/s) = SMs x thread operations per clock per SM (the CUDA C++
  Programming Guide's throughput table, :data:`~roofline.machine.specs.GUIDE_THROUGHPUT`) x SM clock;
- ``warp_inst`` (warp instructions/s) = SMs x 4 schedulers x 1 warp instruction per clock x SM clock
  (:data:`~roofline.machine.specs.SCHEDULER_NOTE`; Ding and Williams, PMBS 2019).

Each of the last three names its formula and source in ``metadata['derived']``; where the
architecture row has no sourced figure the ceiling is absent and ``metadata['absent']`` says why.

Every machine records in ``metadata['clock_hz']`` the clock each ceiling assumes, and in
:attr:`~roofline.machine.model.Machine.clocks` those that differ from its SM clock (H100's tensor
figures at the 1830 MHz low-precision tensor clock), so that scaling to the kernels' clock starts
from the clock each figure holds at.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from roofline.errors import MachineError
from roofline.machine.specs import (
    LOW_PRECISION_TENSOR_KEYS,
    SHARED_NOTE,
    GpuSpec,
    arch_for,
    get_spec,
    spec_for_device_name,
)
from roofline.machine.specs import list_specs as list_specs
from roofline.machine.model import Machine

if TYPE_CHECKING:  # pragma: no cover
    from roofline.machine.amd_specs import AmdSpec
    from roofline.machine.gpu_device import DeviceInfo

__all__ = ["dram_bandwidth", "list_specs", "live_spec", "spec_from_device", "theoretical", "theoretical_from_spec"]


def dram_bandwidth(memory_bus_bits: int, memory_data_rate: float) -> float:
    """DRAM bandwidth in B/s from the bus width (bits) and the data rate per pin (bit/s)."""
    if memory_bus_bits <= 0 or memory_data_rate <= 0:
        raise MachineError(f"bad memory description: {memory_bus_bits} bits at {memory_data_rate} bit/s")
    return memory_bus_bits / 8 * memory_data_rate


def theoretical_from_spec(spec: GpuSpec, *, sm_clock_hz: float | None = None) -> Machine:
    """Ceilings of ``spec``: at ``sm_clock_hz`` for every SM-clocked ceiling when given, otherwise at
    the vendor's clocks (boost clock; the low-precision tensor clock where the product has one)."""
    arch = spec.architecture
    rates = spec.rates()
    clocks: dict[str, float] = {}
    compute: dict[str, float] = {}
    for key, per_clk in rates.items():
        if sm_clock_hz is not None:
            clock = sm_clock_hz
        elif key in LOW_PRECISION_TENSOR_KEYS and spec.low_precision_tensor_clock_hz:
            clock = spec.low_precision_tensor_clock_hz
        else:
            clock = spec.boost_clock_hz
        compute[key] = spec.sms * per_clk * clock
        clocks[key] = clock
    sm_clock = sm_clock_hz if sm_clock_hz is not None else spec.boost_clock_hz
    memory: dict[str, float] = {"dram": dram_bandwidth(spec.memory_bus_bits, spec.memory_data_rate)}
    absent: dict[str, str] = {}
    derived: dict[str, str] = {}
    for key, per_clk in arch.op_rates.items():
        compute[key] = spec.sms * per_clk * sm_clock
        clocks[key] = sm_clock
        derived[key] = f"{spec.sms} SMs x {per_clk:g} OP/clk/SM x SM clock; {arch.op_source}"
    for key in ("int32", "conversion", "sfu"):
        if key not in arch.op_rates:
            absent[key] = arch.op_absent or f"no sourced {key} rate for {arch.name}"
    if arch.schedulers_per_sm:
        compute["warp_inst"] = spec.sms * arch.schedulers_per_sm * sm_clock
        clocks["warp_inst"] = sm_clock
        derived["warp_inst"] = (f"{spec.sms} SMs x {arch.schedulers_per_sm} warp instructions/clk/SM x SM clock; "
                                f"{arch.scheduler_source}")
    else:
        absent["warp_inst"] = f"no sourced warp-scheduler count for {arch.name}"
    if arch.shared_bytes_per_clk_per_sm:
        memory["shared"] = arch.shared_bytes_per_clk_per_sm * spec.sms * sm_clock
        clocks["shared"] = sm_clock
        derived["shared"] = (f"{arch.shared_bytes_per_clk_per_sm:g} B/clk/SM x {spec.sms} SMs x SM clock; "
                             f"{SHARED_NOTE}")
    else:
        absent["shared"] = f"no sourced shared-memory bytes/clock for {arch.name}: measure it"
    if arch.l1_bytes_per_clk_per_sm:
        memory["l1"] = arch.l1_bytes_per_clk_per_sm * spec.sms * sm_clock
        clocks["l1"] = sm_clock
    else:
        absent["l1"] = f"no sourced L1 bytes/clock for {arch.name}"
    if arch.l2_bytes_per_clk:
        memory["l2"] = arch.l2_bytes_per_clk * sm_clock
        clocks["l2"] = sm_clock
        derived["l2"] = f"{arch.l2_bytes_per_clk:g} B/clk x SM clock; {arch.l2_source}"
    else:
        absent["l2"] = arch.l2_source or f"no sourced per-clock L2 bandwidth for {arch.name}: measure it"
    meta: dict[str, Any] = {
        "spec": spec.key,
        "gpu": spec.name,
        "architecture": arch.name,
        "sms": spec.sms,
        "clock_hz": clocks,
        "dram_assumes": (
            f"{spec.memory_bus_bits}-bit bus at {spec.memory_data_rate / 1e9:.4g} Gb/s per pin "
            "(not SM-clocked)"
        ),
        "memory_bus_bits": spec.memory_bus_bits,
        "memory_data_rate": spec.memory_data_rate,
        "absent": absent,
        "derived": derived,
        "source": f"{spec.source} | {arch.source}",
    }
    if spec.l2_bytes:
        meta["l2_bytes"] = spec.l2_bytes
    if arch.l1_shared_bytes_per_sm:
        meta["l1_shared_bytes_per_sm"] = arch.l1_shared_bytes_per_sm
    if spec.datasheet:
        meta["datasheet"] = dict(spec.datasheet)
    if spec.notes:
        meta["notes"] = spec.notes
    own = {f"compute.{k}": c for k, c in clocks.items() if k in compute and c != sm_clock}
    return Machine(
        name=spec.name, source="theoretical", memory=memory, compute=compute,
        sm_clock_hz=sm_clock, metadata=meta, clocks=own,
    )


def live_spec(device: int = 0) -> GpuSpec:
    """A :class:`GpuSpec` read from the GPU in this machine (CUDA attributes and NVML)."""
    from roofline.machine.gpu_device import read_device_info

    return spec_from_device(read_device_info(device))


def spec_from_device(info: DeviceInfo) -> GpuSpec:
    """A :class:`GpuSpec` for a GPU described by :class:`~roofline.machine.gpu_device.DeviceInfo`.

    Counts and clocks are the device's; a recognised product adds its vendor facts (rate
    overrides, the low-precision tensor clock, datasheet figures). MachineError when we have no
    rates for its compute capability.
    """
    device = info.index
    arch = arch_for(info.compute_capability)
    known = spec_for_device_name(info.name)
    spec = GpuSpec(
        key=f"device{device}", name=info.name, arch=arch.key, sms=info.sms,
        boost_clock_hz=info.max_sm_clock_hz, memory_bus_bits=info.memory_bus_bits,
        memory_data_rate=2 * info.max_memory_clock_hz, l2_bytes=info.l2_bytes,
        source="live: CUDA device attributes and NVML max clocks",
        notes="DRAM data rate = 2 x the memory clock NVML reports (DDR).",
    )
    if known is not None and known.arch == arch.key:
        # Keep the live counts and clocks; take the product's vendor-specific facts.
        spec = replace(
            spec,
            rate_overrides=known.rate_overrides,
            datasheet=known.datasheet,
            low_precision_tensor_clock_hz=known.low_precision_tensor_clock_hz,
            notes=f"{spec.notes} Matched product {known.key}.",
        )
    return spec


def theoretical(
    spec: str | GpuSpec | AmdSpec | None = None, *, device: int = 0, sm_clock_hz: float | None = None
) -> Machine:
    """Theoretical ceilings of a GPU (``source='theoretical'``).

    ``spec``: a product name (see :func:`list_specs`; AMD Instinct names such as ``'mi300x'`` too, see
    :func:`roofline.machine.amd_specs.list_amd_specs`), a :class:`GpuSpec` or
    :class:`~roofline.machine.amd_specs.AmdSpec`, or None to read the NVIDIA GPU ``device`` of this
    machine live (needs CuPy and nvidia-ml-py, and a GPU).
    ``sm_clock_hz``: the SM clock every SM-clocked ceiling assumes; by default the vendor's
    boost clock (or, live, the maximum SM clock NVML reports). DRAM never depends on it.
    """
    if spec is None:
        return theoretical_from_spec(live_spec(device), sm_clock_hz=sm_clock_hz)
    # AMD's tables load only when an AMD name or spec is asked for (machine is imported by every command)
    from roofline.machine.amd_specs import AmdSpec, get_amd_spec
    from roofline.machine.amd_theory import amd_machine

    if isinstance(spec, str) and (amd := get_amd_spec(spec)) is not None:
        spec = amd
    if isinstance(spec, AmdSpec):
        return amd_machine(spec, clock_hz=sm_clock_hz)
    if isinstance(spec, str):
        spec = get_spec(spec)
    return theoretical_from_spec(spec, sm_clock_hz=sm_clock_hz)

"""Theoretical ceilings of an AMD Instinct GPU: CUs x per-CU rate x peak engine clock.

- compute ceiling (FLOP/s, OP/s for INT8) = CUs x FLOP/clk/CU (:mod:`roofline.machine.amd_specs`) x clock;
- ``shared`` (the LDS, B/s) = B/clk/CU x CUs x clock, where the architecture row has a sourced figure;
- ``dram`` (HBM, B/s) = the product's sourced HBM bandwidth; on MI300 and MI350 the traffic the L2
  sends out reaches HBM through the Infinity Cache (MALL), whose hits a profile counts with it;
- ``l1`` (vL1D) and ``l2``: absent (no per-clock figure in the AMD documents read), each with its
  reason in ``metadata['absent']``, as is every compute key the row lacks.

:func:`amd_machine` takes a CU count for a device with fewer CUs than the product (an MI300X in CPX
mode: 38 CUs, one XCD and its L2); its HBM ceiling is then the product's scaled by the share of CUs,
an assumption (the partition's fair share when all run; one alone may draw more) that its
``metadata['derived']['dram']`` states.
"""

from __future__ import annotations

import math
from typing import Any

from roofline.errors import MachineError
from roofline.machine.amd_specs import AMD_SPECS, AmdSpec, amd_spec_for_device_name, get_amd_spec, list_amd_specs
from roofline.machine.model import Machine

__all__ = ["AMD_COMPUTE_KEYS", "amd_machine", "amd_machine_for_device", "amd_specs_listed", "amd_theoretical"]

#: The compute keys an AMD theoretical machine speaks for (decision 3 of the AMD plan): vector, matrix.
AMD_COMPUTE_KEYS = ("fp64", "fp32", "fp16", "bf16", "tensor_fp64", "tensor_fp32", "tensor_tf32", "tensor_fp16",
                    "tensor_bf16", "tensor_fp8", "tensor_fp4", "tensor_int8")


def amd_machine(spec: AmdSpec, cus: int | None = None, *, clock_hz: float | None = None) -> Machine:
    """Theoretical ceilings of ``spec`` (``source='theoretical'``), for ``cus`` of its CUs (default: all;
    a partition or one GCD has fewer) at ``clock_hz`` (default: the peak engine clock).

    ``sm_clock_hz`` is the clock every CU-clocked ceiling assumes; ``metadata['max_sm_clock_hz']`` the
    peak engine clock, above which the analysis never scales them.
    """
    n = spec.cus if cus is None else int(cus)
    if not 0 < n <= spec.cus:
        raise MachineError(f"{spec.name} has {spec.cus} CUs per device, not {cus}",
                           hint="give the CU count of the device or partition the profile ran on")
    clock = spec.peak_clock_hz if clock_hz is None else float(clock_hz)
    if not (math.isfinite(clock) and clock > 0):
        raise MachineError(f"bad clock for {spec.name}: {clock_hz!r} Hz")
    arch = spec.architecture
    whole = n == spec.cus
    compute = {key: n * rate * clock for key, rate in arch.rates.items()}
    derived = {key: f"{n} CUs x {rate:g} {'OP' if key.endswith('int8') else 'FLOP'}/clk/CU x {clock / 1e6:g} MHz; "
                    f"{arch.rate_sources.get(key, arch.source)}" for key, rate in arch.rates.items()}
    absent: dict[str, str] = {}
    for key in AMD_COMPUTE_KEYS:
        if key in compute:
            continue
        absent[key] = (f"{arch.name} has no {key} unit" if key in arch.lacks
                       else arch.absent.get(key, f"no sourced {key} rate for {arch.name}"))
    memory: dict[str, float] = {}
    if spec.hbm_bytes_per_s:
        memory["dram"] = spec.hbm_bytes_per_s * n / spec.cus
        derived["dram"] = (f"HBM {spec.hbm_bytes_per_s / 1e9:g} GB/s"
                           + ("" if whole else f" x {n}/{spec.cus} CUs (an even share: an assumption)")
                           + f"; {spec.hbm_source}")
    else:
        absent["dram"] = spec.hbm_source
    if arch.lds_bytes_per_clk_per_cu:
        memory["shared"] = arch.lds_bytes_per_clk_per_cu * n * clock
        derived["shared"] = f"LDS {arch.lds_bytes_per_clk_per_cu:g} B/clk/CU x {n} CUs x {clock / 1e6:g} MHz; {arch.lds_source}"
    else:
        absent["shared"] = arch.lds_source
    absent["l1"] = f"no per-clock vL1D bandwidth for {arch.name} in the AMD documents read: measure it"
    absent["l2"] = f"no per-clock L2 bandwidth for {arch.name} in the AMD documents read: measure it"
    xcds = max(1, math.ceil(n / spec.cus_per_xcd))
    meta: dict[str, Any] = {
        "spec": spec.key,
        "gpu": spec.name,
        "vendor": "amd",
        "processor": "gpu",
        "processor_evidence": f"the AMD {spec.name} spec",
        "architecture": arch.name,
        "gfx": spec.gfx,
        "cus": n,
        "xcds": xcds,
        "clock_hz": {**dict.fromkeys(compute, clock), **{k: clock for k in memory if k != "dram"}},
        "max_sm_clock_hz": spec.peak_clock_hz,
        "absent": absent,
        "derived": derived,
        "source": f"{spec.source} | clock: {spec.clock_source}",
        "l2_bytes": spec.l2_bytes_per_xcd * xcds,
        "l2_bytes_per_xcd": spec.l2_bytes_per_xcd,
        "lds_bytes_per_cu": arch.lds_bytes_per_cu,
        "vl1d_bytes_per_cu": arch.vl1d_bytes_per_cu,
    }
    if spec.mall_bytes:
        meta["mall_bytes"] = spec.mall_bytes
        meta["dram_includes"] = "Infinity Cache (MALL) hits: the L2's traffic to HBM passes through it"
    if whole and spec.datasheet:
        meta["datasheet"] = dict(spec.datasheet)
        meta["datasheet_devices"] = spec.datasheet_devices
    if arch.notes or spec.notes:
        meta["notes"] = " ".join(t for t in (spec.notes, arch.notes) if t)
    name = spec.name if whole else f"{spec.name} ({n} of {spec.cus} CUs)"
    return Machine(name=name, source="theoretical", memory=memory, compute=compute, sm_clock_hz=clock, metadata=meta)


def amd_theoretical(name: str, *, clock_hz: float | None = None) -> Machine | None:
    """:func:`amd_machine` of the AMD product named ``name`` ('mi300x', 'AMD Instinct MI210'), or None when
    the name is not one."""
    spec = get_amd_spec(name)
    return amd_machine(spec, clock_hz=clock_hz) if spec is not None else None


def amd_machine_for_device(device_name: str, cus: int | None = None) -> Machine | None:
    """Theoretical ceilings of the AMD device a profile names, for its CU count when known
    (:func:`roofline.machine.amd_specs.amd_spec_for_device_name`); None when it is not a product we know."""
    spec = amd_spec_for_device_name(device_name, cus)
    return amd_machine(spec, cus) if spec is not None else None


def amd_specs_listed() -> list[tuple[str, AmdSpec, Machine]]:
    """Every AMD spec: (its name for ``--spec``, the spec, its theoretical ceilings)."""
    return [(key, AMD_SPECS[key], amd_machine(AMD_SPECS[key])) for key in list_amd_specs()]


"""Theoretical CPU compute ceilings: cores x clock x vector lanes x FMA units x 2.

Inputs are read from the system where it tells (cores from the affinity mask and sysfs topology,
the vector ISA from the CPU flags via py-cpuinfo) and assumed where it does not (FMA units per
core, the datapath width of AMD Zen 4's AVX-512). The returned machine's metadata lists both, so
nobody mistakes an assumption for a reading. Memory bandwidth cannot be known from flags (channels
and transfer rate are not exposed), so a theoretical CPU machine has compute ceilings only.

The clock is the one thing the system does not tell reliably: cores run above their advertised
(nominal) clock whenever turbo/boost allows, and a virtual machine sees only the advertised one
(a 2-core AMD EPYC VM: 2.6 GHz in /proc/cpuinfo, 3.6-3.7 GHz running, so a theoretical FP64 peak
of 83 GFLOP/s against 117 measured). ``measure_cpu`` therefore counts the clock while its FMA
kernels run (:func:`roofline.bench.cpu.kernels.clock_kernel`) and passes it here. Without a
measured clock: cpufreq's ``cpuinfo_max_freq`` (the boost clock, except under the acpi-cpufreq
driver, whose maximum is the nominal clock), else the advertised clock; a clock that turbo may
exceed makes the figures a floor, which ``metadata['floor']`` says in words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roofline.errors import MachineError
from roofline.machine.cpu_host import CpuDescription, describe_cpu
from roofline.machine.model import Machine


def _max_clock_hz(cpus: tuple[int, ...]) -> tuple[float, str] | None:
    """cpufreq's maximum clock of the first CPU (Hz) and its driver's name ('' when unreadable)."""
    for cpu in cpus[:1]:
        root = Path(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq")
        try:
            hz = float((root / "cpuinfo_max_freq").read_text()) * 1e3  # kHz
        except (OSError, ValueError):
            return None
        try:
            driver = (root / "scaling_driver").read_text().strip()
        except OSError:
            driver = ""
        return hz, driver
    return None


def vector_datapath(cpu: CpuDescription) -> tuple[int, str, dict[str, Any]]:
    """FP64 lanes one FMA unit handles per cycle, the ISA it is named after, and assumptions made."""
    flags = cpu.flags
    assumed: dict[str, Any] = {}
    if "avx512f" in flags:
        if cpu.vendor.lower().startswith("authenticamd") or "amd" in cpu.model.lower():
            # Zen 4 runs 512-bit instructions on 256-bit units (two passes); Zen 5 has 512-bit units.
            family = _amd_family(cpu)
            if family is not None and family >= 26:
                return 8, "avx512", assumed
            assumed["datapath_bits"] = "256 (AMD Zen 4 executes AVX-512 in two 256-bit halves)"
            return 4, "avx512 on 256-bit units", assumed
        return 8, "avx512", assumed
    if "avx" in flags or "avx2" in flags:
        return 4, "avx2" if "avx2" in flags else "avx", assumed
    if "sse2" in flags:
        return 2, "sse2", assumed
    if "asimd" in flags or "neon" in flags:
        return 2, "neon", assumed
    raise MachineError(f"cannot tell the vector width of {cpu.model!r} from its flags",
                       hint="install py-cpuinfo, or measure the machine instead")


def _amd_family(cpu: CpuDescription) -> int | None:
    try:
        import cpuinfo

        family = cpuinfo.get_cpu_info().get("family")
        return int(family) if family is not None else None
    except (ImportError, ValueError, TypeError):
        return None


def theoretical_cpu(
    cpu: CpuDescription | None = None,
    *,
    threads: int | None = None,
    fma_units: int | None = None,
    clock_hz: float | None = None,
    clock_source: str | None = None,
) -> Machine:
    """Peak FP64/FP32 FLOP/s of the CPUs this process may use (source 'theoretical').

    ``fma_units`` per core (default 2, assumed, or 1 mul + 1 add unit without FMA) and
    ``clock_hz`` override what the system says; ``clock_source`` says where a given clock comes
    from (e.g. 'measured: ...'; default 'given'). Cores are physical cores among the CPUs used:
    SMT siblings share the FMA units. Without a clock given, the figures rest on a clock the system
    reports (see the module docstring); where turbo may exceed it, ``metadata['floor']`` says they
    are a floor, and the machine's name ends in 'theoretical floor'.
    """
    cpu = cpu or describe_cpu(threads)
    read: dict[str, Any] = {"model": cpu.model, "flags_used": sorted(cpu.flags & {"avx512f", "avx2", "avx", "fma",
                                                                                  "sse2", "asimd", "neon"})}
    assumed: dict[str, Any] = {}
    cores = cpu.physical_cores
    if cores is None:
        cores = len(cpu.cpus)
        assumed["cores"] = f"{cores} (one core per logical CPU: topology not readable)"
    else:
        read["cores"] = cores
    lanes, isa, datapath_assumed = vector_datapath(cpu)
    assumed.update(datapath_assumed)
    read["isa"] = isa
    has_fma = bool(cpu.flags & {"fma", "asimd", "neon"})
    if fma_units is None:
        fma_units = 2
        assumed["fma_units_per_core"] = 2 if has_fma else "1 add + 1 multiply unit (no FMA)"
    else:
        read["fma_units_per_core"] = f"{fma_units} (given)"
    ops_per_lane = 2 * fma_units if has_fma else 2
    floor: str | None = None
    if clock_hz is not None:
        read["clock_hz"] = f"{clock_hz:.4g} ({clock_source or 'given'})"
    else:
        cpufreq = _max_clock_hz(cpu.cpus)
        if cpufreq is not None:
            clock_hz, driver = cpufreq
            read["clock_hz"] = f"{clock_hz:.4g} (cpufreq cpuinfo_max_freq{', ' + driver if driver else ''})"
            if driver == "acpi-cpufreq":
                floor = (f"at cpufreq's maximum {clock_hz / 1e9:.3g} GHz, which the acpi-cpufreq driver gives "
                         "without boost: the cores may run faster")
        elif cpu.clock_hz:
            clock_hz = cpu.clock_hz
            assumed["clock_hz"] = f"{clock_hz:.4g} (advertised clock; turbo clocks can exceed it)"
            floor = (f"at the advertised {clock_hz / 1e9:.3g} GHz clock, which turbo can exceed (a virtual machine "
                     "sees no other)")
        else:
            raise MachineError("the CPU clock is unknown", hint="pass clock_hz")
    fp64 = cores * clock_hz * lanes * ops_per_lane
    metadata: dict[str, Any] = {"formula": "cores x clock x fp64 lanes per unit x FMA units x 2", "lanes_fp64": lanes,
                                "read": read, "assumed": assumed, "clock_hz": {"fp64": clock_hz, "fp32": clock_hz}}
    if floor is not None:
        metadata["floor"] = (f"a floor, not a ceiling: {floor}; `roofline machine --cpu` measures the clock "
                             "and the ceilings")
    return Machine(
        name=f"{cpu.model} ({cores} cores, theoretical{' floor' if floor else ''})", source="theoretical",
        memory={}, compute={"fp64": fp64, "fp32": 2 * fp64}, sm_clock_hz=clock_hz, metadata=metadata,
    )

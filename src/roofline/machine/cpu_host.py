"""What the operating system says about this CPU: model, cores, caches, flags.

Cache sizes come from Linux sysfs (``/sys/devices/system/cpu/cpuN/cache/index*/{level,type,
size,shared_cpu_list}``); model, clock and flags from py-cpuinfo when installed, else
``/proc/cpuinfo``. Nothing is measured here and nothing is guessed: what cannot be read is absent.
"""

from __future__ import annotations

import logging
import os
import platform
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SYSFS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class CacheLevel:
    """One data (or unified) cache level: ``size`` per instance (B) and how many instances serve ``cpus``."""

    level: int
    size: int
    instances: int

    @property
    def name(self) -> str:
        return f"l{self.level}"

    @property
    def total(self) -> int:
        """Capacity the given CPUs have together (B): private caches count once per instance."""
        return self.size * self.instances


@dataclass(frozen=True)
class CpuDescription:
    """Model, logical CPUs used, clock (Hz, advertised), flags and caches of the host CPU."""

    model: str
    vendor: str
    cpus: tuple[int, ...]
    clock_hz: float | None
    flags: frozenset[str] = field(default_factory=frozenset)
    caches: tuple[CacheLevel, ...] = ()
    physical_cores: int | None = None

    def cache_sizes(self) -> dict[str, int]:
        """Bytes per cache instance by level name, e.g. ``{'l1': 32768, 'l2': 1048576, 'l3': 33554432}``."""
        return {c.name: c.size for c in self.caches}

    def cache_totals(self) -> dict[str, int]:
        """Bytes the used CPUs hold together per level (the sweep's working-set terms)."""
        return {c.name: c.total for c in self.caches}


def parse_size(text: str) -> int:
    """Parse a sysfs cache size (``'32K'``, ``'1024K'``, ``'32M'``; K = 1024) into bytes."""
    text = text.strip()
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    if text and text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def parse_cpu_list(text: str) -> frozenset[int]:
    """Parse a Linux CPU list (``'0-3,8,10-11'``)."""
    out: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def read_caches(cpus: Sequence[int], root: Path = SYSFS_CPU) -> tuple[CacheLevel, ...]:
    """Data and unified cache levels seen by ``cpus``, from sysfs; empty where sysfs lacks them."""
    levels: dict[int, tuple[int, set[frozenset[int]]]] = {}
    for cpu in cpus:
        for index in sorted((root / f"cpu{cpu}" / "cache").glob("index*")):
            try:
                kind = (index / "type").read_text().strip()
                if kind not in ("Data", "Unified"):
                    continue
                level = int((index / "level").read_text())
                size = parse_size((index / "size").read_text())
                shared = parse_cpu_list((index / "shared_cpu_list").read_text())
            except (OSError, ValueError) as exc:
                log.debug("cannot read %s: %s", index, exc)
                continue
            entry = levels.setdefault(level, (size, set()))
            entry[1].add(shared)
    return tuple(CacheLevel(level, size, len(groups)) for level, (size, groups) in sorted(levels.items()))


def used_cpus(threads: int | None = None) -> tuple[int, ...]:
    """The logical CPUs this process may run on (first ``threads`` of them)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = list(range(os.cpu_count() or 1))
    return tuple(cpus[:threads] if threads else cpus)


def _proc_cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, sep, value = line.partition(":")
            if not sep:
                if info:
                    break  # first processor only
                continue
            info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return info


def cpu_identity() -> dict[str, str]:
    """Which host and CPU this is, from the standard library alone (it runs inside profiled programs too).

    ``host``: the host name; ``cpu``: ``/proc/cpuinfo``'s model name (else the platform's processor
    name); ``cpuid``: ``'family 25 model 17 stepping 1'`` on x86, the implementer, part, variant and
    revision on Arm, else ``''`` (a virtual machine's model name can be as vague as 'AMD EPYC').
    """
    raw = _proc_cpuinfo()
    x86 = ("cpu family", "model", "stepping")
    arm = ("CPU implementer", "CPU part", "CPU variant", "CPU revision")
    fields = x86 if all(k in raw for k in x86) else arm if all(k in raw for k in arm) else ()
    return {
        "host": socket.gethostname(),
        "cpu": raw.get("model name") or platform.processor() or platform.machine() or "unknown CPU",
        "cpuid": " ".join(f"{k.removeprefix('cpu ').removeprefix('CPU ')} {raw[k]}" for k in fields),
    }


def describe_cpu(threads: int | None = None) -> CpuDescription:
    """Describe the host CPU as far as the system tells (see the module docstring)."""
    cpus = used_cpus(threads)
    model = vendor = ""
    clock: float | None = None
    flags: frozenset[str] = frozenset()
    try:
        import cpuinfo  # py-cpuinfo

        info: dict[str, Any] = cpuinfo.get_cpu_info()
        model = str(info.get("brand_raw") or "")
        vendor = str(info.get("vendor_id_raw") or "")
        hz = info.get("hz_advertised") or info.get("hz_actual")
        if hz and hz[0]:
            clock = float(hz[0])
        flags = frozenset(str(f) for f in info.get("flags", ()))
    except ImportError:
        log.debug("py-cpuinfo not installed; reading /proc/cpuinfo")
    if not model:
        raw = _proc_cpuinfo()
        model = raw.get("model name", "") or platform.processor() or platform.machine()
        vendor = vendor or raw.get("vendor_id", "")
        if "cpu MHz" in raw and clock is None:
            clock = float(raw["cpu MHz"]) * 1e6
        flags = flags or frozenset(raw.get("flags", "").split())
    return CpuDescription(model=model or "unknown CPU", vendor=vendor, cpus=cpus, clock_hz=clock, flags=flags,
                          caches=read_caches(cpus), physical_cores=_physical_cores(cpus))


def _physical_cores(cpus: Sequence[int], root: Path = SYSFS_CPU) -> int | None:
    cores = set()
    for cpu in cpus:
        topo = root / f"cpu{cpu}" / "topology"
        try:
            cores.add(((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip()))
        except OSError:
            return None
    return len(cores) or None


#: Bump when the CPU benchmark changes what it measures: cached machines of older versions are measured again.
BENCHMARK_VERSION = "2"


def cpu_key(threads: int | None = None) -> dict[str, str]:
    """What a measured CPU machine depends on, as strings: :func:`cpu_identity` (host name, model
    name, CPUID family/model/stepping), the logical CPUs this process may use and the physical
    cores among them, the data caches (size x instances per level, from sysfs), the widest vector
    extension, and :data:`BENCHMARK_VERSION`. Equal keys: the same ceilings apply. Read without
    py-cpuinfo (which takes about a second), so it is cheap enough to check on every run.
    """
    cpus = used_cpus(threads)
    raw = _proc_cpuinfo()
    flags = set(raw.get("flags", "").split()) | set(raw.get("Features", "").split())  # x86, Arm
    vector = next((f for f in ("avx512f", "avx2", "avx", "sse2", "sve", "asimd") if f in flags), "")
    caches = ", ".join(f"{c.name} {c.size} B x{c.instances}" for c in read_caches(cpus))
    cores = _physical_cores(cpus)
    return {**cpu_identity(), "cpus": str(len(cpus)), "cores": str(cores) if cores else "unknown",
            "caches": caches, "vector": vector, "benchmark": BENCHMARK_VERSION}

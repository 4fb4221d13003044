"""CPU micro-benchmarks: numba kernels (:mod:`.kernels`), the whole measurement (:mod:`.measure`: the driver,
FMA ceilings and core clock), its timing (:mod:`.timing`: settings, statistic, calibration, timed team runs),
the memory sweep (:mod:`.memory`), the memory plateaus (:mod:`.dram`), and this host's measured machine kept
in the user's cache (:mod:`.cache`)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("cache", "dram", "kernels", "measure", "memory", "timing")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

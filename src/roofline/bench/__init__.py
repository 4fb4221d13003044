"""Measuring a machine's ceilings: GPU micro-benchmarks (:mod:`roofline.bench.gpu`, CuPy and NVML),
CPU micro-benchmarks (:mod:`roofline.bench.cpu`, numba), the working-set sweeps and reliability checks
both share. Each writes a :class:`~roofline.machine.Machine` (the seam: a machine file), and imports
its optional libraries only when called.

- :func:`measure_gpu`: measured GPU ceilings (:mod:`roofline.bench.gpu.measure`).
- :func:`measure_cpu`: measured CPU ceilings (:mod:`roofline.bench.cpu.measure`).
"""

from roofline._lazy import attach

_LAZY = {
    "measure_gpu": "roofline.bench.gpu.measure",
    "measure_cpu": "roofline.bench.cpu.measure",
}
_SUBMODULES = ("cpu", "evidence", "gpu", "reliability", "sweep")

__all__ = ["measure_cpu", "measure_gpu"]

__getattr__, __dir__ = attach(__name__, _LAZY, _SUBMODULES)

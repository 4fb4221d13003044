"""Machine ceilings: the :class:`Machine` model, reading machine files, and measuring machines.

Measurement and theoretical tables live in their own modules and import their
optional dependencies (CuPy, NVML, numba) only when called.

- :func:`theoretical` (``roofline.machine.theoretical``): vendor ceilings of a named GPU or of the
  GPU in this machine. Bound here eagerly: its module imports no GPU library, and binding the
  function keeps the name from being shadowed by the submodule of the same name.
- :func:`measure_gpu`: measured GPU ceilings (CuPy, NVML; resolved lazily).
- :func:`measure_cpu`: measured CPU ceilings (numba; resolved lazily).
"""

from roofline._lazy import attach
from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, SCHEMA, SOURCES, Machine
from roofline.machine.theoretical import theoretical

_LAZY = {
    "measure_gpu": "roofline.machine.gpu_bench",
    "measure_cpu": "roofline.machine.cpu_bench",
    "list_specs": "roofline.machine.gpu_specs",
    "get_spec": "roofline.machine.gpu_specs",
}


#: Modules reachable as attributes (``roofline.machine.cpu_bench`` after ``import roofline``).
_SUBMODULES = ("cpu_bench", "cpu_cache", "cpu_kernels", "cpu_system", "cpu_theory", "ert", "gpu_bench", "gpu_cupy", "gpu_gemm",
               "gpu_info", "gpu_kernels", "gpu_specs", "measurement", "model", "plot", "sweep")


__all__ = ["COMPUTE_KEYS", "MEMORY_LEVELS", "SCHEMA", "SOURCES", "Machine", "get_spec", "list_specs",
           "measure_cpu", "measure_gpu", "theoretical"]

__getattr__, __dir__ = attach(__name__, _LAZY, _SUBMODULES, eager=[n for n in __all__ if n not in _LAZY])

"""Machine ceilings: the :class:`Machine` model, reading machine files, and measuring machines.

Measurement and theoretical tables live in their own modules and import their
optional dependencies (CuPy, NVML, numba) only when called.

- :func:`theoretical` (``roofline.machine.theoretical``): vendor ceilings of a named GPU or of the
  GPU in this machine. Bound here eagerly: its module imports no GPU library, and binding the
  function keeps the name from being shadowed by the submodule of the same name.
- :func:`measure_gpu`: measured GPU ceilings (CuPy, NVML; resolved lazily).
- :func:`measure_cpu`: measured CPU ceilings (numba; resolved lazily).
"""

from typing import Any

from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, SCHEMA, SOURCES, Machine
from roofline.machine.theoretical import theoretical

_LAZY = {
    "measure_gpu": "roofline.machine.gpu_bench",
    "measure_cpu": "roofline.machine.cpu_bench",
    "list_specs": "roofline.machine.gpu_specs",
    "get_spec": "roofline.machine.gpu_specs",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'roofline.machine' has no attribute {name!r}")


__all__ = ["COMPUTE_KEYS", "MEMORY_LEVELS", "SCHEMA", "SOURCES", "Machine", "get_spec", "list_specs",
           "measure_cpu", "measure_gpu", "theoretical"]

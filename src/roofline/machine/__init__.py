"""Machine ceilings: the :class:`Machine` model, reading machine files, and measuring machines.

Measurement and theoretical tables live in their own modules and import their
optional dependencies (CuPy, NVML, numba) only when called.
"""

from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, SCHEMA, SOURCES, Machine

__all__ = ["COMPUTE_KEYS", "MEMORY_LEVELS", "SCHEMA", "SOURCES", "Machine"]

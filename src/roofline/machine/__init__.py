"""The machine model: :class:`Machine` (a named set of ceilings, :mod:`.model`) and the vocabulary of its
ceilings (:mod:`.keys`: memory levels, compute keys, units), GPU specs (NVIDIA: :mod:`.specs`; AMD Instinct:
:mod:`.amd_specs`), theoretical ceilings, and :func:`~roofline.machine.resolve.resolve`, the one place a
profile's ceilings are chosen.

Measuring a machine lives in :mod:`roofline.bench` (GPU and CPU micro-benchmarks); reading machine
files in :mod:`roofline.readers.machines`; drawing a machine's roofs in :mod:`roofline.views.chart.machine`.

- :func:`theoretical` (``roofline.machine.theoretical``): vendor ceilings of a named GPU or of the
  GPU in this machine. Bound here eagerly: its module imports no GPU library, and binding the
  function keeps the name from being shadowed by the submodule of the same name.
"""

from roofline._lazy import attach
from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, SCHEMA, SOURCES, Machine
from roofline.machine.theoretical import theoretical

_LAZY = {
    "list_specs": "roofline.machine.specs",
    "get_spec": "roofline.machine.specs",
}


#: Modules reachable as attributes (``roofline.machine.specs`` after ``import roofline``).
_SUBMODULES = ("amd_specs", "amd_theory", "cpu_host", "cpu_theory", "gpu_device", "keys", "model", "processor", "resolve",
               "shipped", "specs")


__all__ = ["COMPUTE_KEYS", "MEMORY_LEVELS", "SCHEMA", "SOURCES", "Machine", "get_spec", "list_specs", "theoretical"]

__getattr__, __dir__ = attach(__name__, _LAZY, _SUBMODULES, eager=[n for n in __all__ if n not in _LAZY])

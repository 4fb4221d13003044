"""roofline: hierarchical roofline analysis of GPU and CPU programs.

Data flows one way: readers -> one kernel table -> analysis -> views.

    >>> import roofline
    >>> table = roofline.read(["profile.csv"])               # doctest: +SKIP
    >>> result = roofline.analyze(table, machine="v100.json")  # doctest: +SKIP
    >>> fig = roofline.plot(result)                            # doctest: +SKIP

Importing the package has no side effects and imports no GPU library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# Public names, resolved lazily so that `import roofline` stays cheap.
_LAZY = {
    "Machine": "roofline.machine.model",
    "KernelTable": "roofline.kernels",
    "RooflineError": "roofline.errors",
    "InputError": "roofline.errors",
    "MachineError": "roofline.errors",
    "read": "roofline.api",
    "analyze": "roofline.api",
    "plot": "roofline.api",
    "load_machine": "roofline.api",
    "phase": "roofline.phases",
    # The measurement API lives in roofline.measuring: a submodule named `measure` would replace
    # the `measure` function on the package as soon as it is imported.
    "measure": "roofline.measuring",
    "measured": "roofline.measuring",
    "collecting": "roofline.measuring",
    "Collector": "roofline.measuring",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


__all__ = ["__version__", *_LAZY]

"""Lazy attributes for packages: names resolved on first use, so that importing stays cheap.

A package declares which public names live in which module, and which of its submodules
may be reached as attributes; :func:`attach` returns the module-level ``__getattr__`` and
``__dir__`` (PEP 562) that import them on first access. Nothing is imported until then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def attach(
    package: str, names: Mapping[str, str], submodules: Iterable[str], eager: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``.

    ``names``: public name -> module that defines it (the attribute of that name is returned).
    ``submodules``: submodule names reachable as attributes (``package.sub``), imported on access.
    ``eager``: names already bound in the package, listed by ``__dir__`` too.
    """
    names = dict(names)
    subs = frozenset(submodules)
    listed = sorted({*names, *subs, *eager})

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(import_module(names[name]), name)
        if name in subs:
            return import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__

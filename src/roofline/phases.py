"""Phases: named ranges (forward, backward, optimizer...) that every kernel is assigned to.

``roofline.phase("forward")`` is a context manager and a decorator. It opens an
NVTX range, so that Nsight Compute records the phase of each kernel (``ncu --nvtx``),
and keeps the same range on our own stack, so that the counter-free mode (which has
no NVTX) can ask :func:`current_phase` which phase an operator runs in.

Two kinds of range, as in NVTX:

- *push/pop* ranges (:func:`phase`) belong to the thread that opened them;
- *start/end* ranges (:func:`start_range` / :func:`end_range`) belong to the process
  and may end on another thread. ``roofline.torch.annotate`` uses them for the
  backward pass, whose kernels autograd launches from its own threads.

The innermost open range (the most recently opened one, of this thread's stack and
the process-wide ranges) is the current phase.

NVTX backend, so that ``ncu --nvtx-include forward/`` finds the ranges: they are opened in
NVTX's default domain (ncu's ``<default domain>``), with ASCII names.

- ``torch.cuda.nvtx`` when PyTorch is already imported and built with NVTX (its
  ``range_push`` is ``nvtxRangePushA``: the default domain);
- else the ``nvtx`` package, with ``domain=None``. Its documentation calls the default
  domain "NVTX", but its source (``nvtx/_lib/lib.pyx``, 0.2.5 to 0.2.17: ``DomainHandle(None)``
  is the NULL handle) opens such ranges in NVTX's default (global) domain, the one ncu
  names ``<default domain>``; Nsight Systems lists them as ``:name``. Ranges a program opens
  with ``domain="NVTX"`` itself are in a domain of that name: ``--nvtx-include NVTX@forward/``;
- else none: the ranges are then only recorded here.

The backend is chosen when a range opens and kept with it, so a range is always closed by
the backend that opened it (PyTorch may be imported between the two).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class NvtxBackend(Protocol):
    @property
    def name(self) -> str: ...

    def push(self, name: str) -> None: ...
    def pop(self) -> None: ...
    def start(self, name: str) -> Any: ...
    def end(self, handle: Any) -> None: ...


@dataclass(frozen=True)
class _NoNvtx:
    name: str = "none"

    def push(self, name: str) -> None:
        pass

    def pop(self) -> None:
        pass

    def start(self, name: str) -> Any:
        return None

    def end(self, handle: Any) -> None:
        pass


@dataclass(frozen=True)
class _NvtxPackage:
    name: str = "nvtx"

    def push(self, name: str) -> None:
        import nvtx

        nvtx.push_range(name, domain=None)  # None: NVTX's default domain (see the module docstring)

    def pop(self) -> None:
        import nvtx

        nvtx.pop_range(domain=None)

    def start(self, name: str) -> Any:
        import nvtx

        return nvtx.start_range(name, domain=None)

    def end(self, handle: Any) -> None:
        import nvtx

        nvtx.end_range(handle)


@dataclass(frozen=True)
class _TorchNvtx:
    name: str = "torch.cuda.nvtx"

    def push(self, name: str) -> None:
        import torch

        torch.cuda.nvtx.range_push(name)

    def pop(self) -> None:
        import torch

        torch.cuda.nvtx.range_pop()

    def start(self, name: str) -> Any:
        import torch

        return torch.cuda.nvtx.range_start(name)

    def end(self, handle: Any) -> None:
        import torch

        torch.cuda.nvtx.range_end(handle)


def _torch_with_nvtx() -> bool:
    torch = sys.modules.get("torch")  # never import torch just for NVTX
    return torch is not None and hasattr(getattr(torch, "_C", None), "_nvtx")


@functools.cache
def _nvtx_package_installed() -> bool:
    return importlib.util.find_spec("nvtx") is not None


def nvtx_backend() -> NvtxBackend:
    """The NVTX implementation a range opened now would use: ``torch.cuda.nvtx`` when PyTorch is
    imported (with NVTX), else the ``nvtx`` package, else none (see the module docstring)."""
    if _torch_with_nvtx():
        return _TorchNvtx()
    if _nvtx_package_installed():
        return _NvtxPackage()
    return _NoNvtx()


# The ranges open now. NVTX itself keeps this state per thread and per process; we
# mirror it so that code without NVTX (the counter-free mode) sees the same phases.
_order = itertools.count()
_local = threading.local()
_process_ranges: dict[int, tuple[int, str]] = {}
_process_lock = threading.Lock()


def _stack() -> list[tuple[int, str, NvtxBackend]]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current_phase() -> str | None:
    """The innermost open phase seen from this thread, or None outside every phase."""
    candidates = [entry[:2] for entry in _stack()[-1:]]
    with _process_lock:
        if _process_ranges:
            candidates.append(max(_process_ranges.values()))
    return max(candidates)[1] if candidates else None


def push_phase(name: str) -> None:
    """Open a push/pop range on this thread (prefer :func:`phase`)."""
    backend = nvtx_backend()
    _stack().append((next(_order), name, backend))
    backend.push(name)


def pop_phase() -> None:
    """Close this thread's innermost push/pop range, with the NVTX backend that opened it."""
    stack = _stack()
    backend = stack.pop()[2] if stack else nvtx_backend()
    backend.pop()


@dataclass(frozen=True)
class RangeHandle:
    """A process-wide range opened by :func:`start_range` (``backend``: the NVTX one that opened it)."""

    key: int
    name: str
    nvtx: Any
    backend: NvtxBackend = field(default_factory=_NoNvtx)


def start_range(name: str) -> RangeHandle:
    """Open a process-wide (start/end) range, which any thread may end."""
    key = next(_order)
    with _process_lock:
        _process_ranges[key] = (key, name)
    backend = nvtx_backend()
    return RangeHandle(key, name, backend.start(name), backend)


def end_range(handle: RangeHandle) -> None:
    """Close a range opened by :func:`start_range` (from any thread)."""
    with _process_lock:
        _process_ranges.pop(handle.key, None)
    handle.backend.end(handle.nvtx)


class phase:  # noqa: N801 - used like a function: `with roofline.phase("forward"):`
    """A named phase: ``with roofline.phase("forward"): ...`` or ``@roofline.phase("forward")``.

    Kernels launched from this thread while the phase is open carry its name (in
    Nsight Compute through NVTX, in the counter-free mode through :func:`current_phase`).
    """

    def __init__(self, name: str):
        if not name or not isinstance(name, str):
            raise ValueError("a phase needs a non-empty name")
        self.name = name

    def __enter__(self) -> phase:
        push_phase(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        pop_phase()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with phase(self.name):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


@contextmanager
def process_range(name: str) -> Iterator[RangeHandle]:
    """A process-wide range as a context manager (mainly for tests and tools)."""
    handle = start_range(name)
    try:
        yield handle
    finally:
        end_range(handle)

"""Put any Python code on the roofline: time it, state its FLOPs and bytes, get a kernel-table row.

    import roofline

    with roofline.collecting() as runs:                      # where the measurements go
        with roofline.measure("stencil", flops=8 * n, bytes=16 * n):
            stencil(u)                                        # timed once per with-block

        @roofline.measured("saxpy", flops=lambda x, y, a: 2 * x.size, bytes=lambda x, y, a: 12 * x.size,
                           precision="fp32", repeats=5)
        def saxpy(x, y, a): ...
        saxpy(x, y, 2.0)                                      # timed 5 times, median kept

    table = runs.table()         # a KernelTable: charts, reports and comparisons work on it

Each measurement becomes one row: ``kernel_name``, ``time_s`` (median over repeats, s), the
stated FLOPs in the column of the stated precision (``fp64_flops``, ``fp32_flops``, ...; the other
FLOP columns 0, since the caller states the whole count), the stated bytes in the column of the
stated level (``dram_bytes`` by default; other levels unknown), ``estimated=False`` and
``source='measure'``. Omitted FLOPs or bytes stay unknown (NaN), never 0.

Where measurements go: the ``collector=`` argument, else the collector of the innermost
``roofline.collecting()`` block (a context variable, so threads and asyncio tasks each see their
own), else nowhere but the returned :class:`Timing`. There is no module-level list.

GPU code: when ``sync='auto'`` (default) and PyTorch or CuPy is already imported and has
initialised CUDA, the device is synchronized before the clock starts and before it stops, so
asynchronous launches are timed to completion. Neither library is ever imported here.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from roofline.errors import InputError
from roofline.kernels import BYTE_COLUMNS, FLOP_COLUMNS, KernelTable, from_records

F = TypeVar("F", bound=Callable[..., Any])
Count = float | int | Callable[..., float] | None

PRECISIONS = {"fp64": "fp64_flops", "fp32": "fp32_flops", "fp16": "fp16_flops", "tensor": "tensor_flops"}


@dataclass
class Timing:
    """One measurement: the code's name, its run times (s) and the FLOPs and bytes it was stated to move."""

    name: str
    flops: float | None = None
    bytes: float | None = None
    level: str = "dram"
    precision: str = "fp64"
    times_s: list[float] = field(default_factory=list)
    synchronized: str | None = None

    @property
    def time_s(self) -> float:
        """Median run time (s); NaN before the code ran."""
        return statistics.median(self.times_s) if self.times_s else float("nan")

    @property
    def min_time_s(self) -> float:
        """Fastest run (s): the one least disturbed by other work on the machine; NaN before any run."""
        return min(self.times_s) if self.times_s else float("nan")

    @property
    def flop_rate(self) -> float:
        """Achieved FLOP/s (NaN when FLOPs are unknown)."""
        return self.flops / self.time_s if self.flops is not None else float("nan")

    @property
    def bandwidth(self) -> float:
        """Achieved B/s at the stated level (NaN when bytes are unknown)."""
        return self.bytes / self.time_s if self.bytes is not None else float("nan")

    @property
    def intensity(self) -> float:
        """Arithmetic intensity at the stated level (FLOP/B; NaN when either count is unknown)."""
        if self.flops is None or not self.bytes:
            return float("nan")
        return self.flops / self.bytes

    def record(self) -> dict[str, Any]:
        """The kernel-table row (see the module docstring)."""
        nan = float("nan")
        row: dict[str, Any] = {"kernel_name": self.name, "time_s": self.time_s, "estimated": False,
                               "source": "measure", "launches": 1}
        for col in FLOP_COLUMNS:
            row[col] = nan if self.flops is None else 0.0
        if self.flops is not None:
            row[PRECISIONS[self.precision]] = float(self.flops)
        row[BYTE_COLUMNS[self.level]] = nan if self.bytes is None else float(self.bytes)
        return row


class Collector:
    """Measurements gathered for one kernel table, in the order they were taken."""

    def __init__(self) -> None:
        self._timings: list[Timing] = []

    def add(self, timing: Timing) -> Timing:
        self._timings.append(timing)
        return timing

    @property
    def timings(self) -> tuple[Timing, ...]:
        return tuple(self._timings)

    def __len__(self) -> int:
        return len(self._timings)

    def __iter__(self) -> Iterator[Timing]:
        return iter(self._timings)

    def table(self) -> KernelTable:
        """All measurements as a validated :class:`~roofline.kernels.KernelTable` (one row each)."""
        return KernelTable(frame=from_records([t.record() for t in self._timings]), sources=("measure",))


_active: ContextVar[Collector | None] = ContextVar("roofline_collector", default=None)


@contextlib.contextmanager
def collecting(collector: Collector | None = None) -> Iterator[Collector]:
    """Make ``collector`` (a new one by default) receive measurements taken inside the block."""
    c = collector if collector is not None else Collector()
    token = _active.set(c)
    try:
        yield c
    finally:
        _active.reset(token)


def _check(level: str, precision: str) -> None:
    if level not in BYTE_COLUMNS:
        raise InputError(f"unknown memory level {level!r}; the kernel table has bytes for {', '.join(BYTE_COLUMNS)}")
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")


def _count(value: Count, args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> float | None:
    if value is None:
        return None
    v = value(*args, **kwargs) if callable(value) else value
    v = float(v)
    if not v >= 0:
        raise InputError(f"{what} must be a non-negative number, not {v!r}")
    return v


def gpu_synchronizer(sync: str | bool | Callable[[], Any] | None = "auto") -> tuple[Callable[[], None] | None, str | None]:
    """The function that waits for the GPU, and its name, or (None, None) for CPU code.

    ``sync``: 'auto' (PyTorch or CuPy, when already imported and using CUDA), a callable, or
    False/None for none.
    """
    if callable(sync):
        return sync, getattr(sync, "__name__", "custom")
    if sync != "auto":
        return None, None
    torch = sys.modules.get("torch")
    if torch is not None:
        cuda = getattr(torch, "cuda", None)
        try:
            if cuda is not None and cuda.is_available() and cuda.is_initialized():
                return cuda.synchronize, "torch.cuda.synchronize"
        except Exception:  # pragma: no cover - a broken CUDA install: time without sync
            pass
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            if cupy.cuda.is_available():
                return cupy.cuda.Device().synchronize, "cupy.cuda.Device().synchronize"
        except Exception:  # pragma: no cover
            pass
    return None, None


def _target(collector: Collector | None) -> Collector | None:
    return collector if collector is not None else _active.get()


@contextlib.contextmanager
def measure(
    name: str,
    *,
    flops: float | None = None,
    bytes: float | None = None,  # noqa: A002 - the natural name for the caller
    level: str = "dram",
    precision: str = "fp64",
    collector: Collector | None = None,
    sync: str | bool | Callable[[], Any] | None = "auto",
) -> Iterator[Timing]:
    """Time the block once; the :class:`Timing` it yields holds the result after the block ends.

    ``flops`` (FLOP) and ``bytes`` (B, moved at ``level``) are the block's counts, stated by the
    caller. Repeat by running the block in a loop: each pass is one row (aggregate by name).
    """
    _check(level, precision)
    timing = Timing(name, _count(flops, (), {}, "flops"), _count(bytes, (), {}, "bytes"), level, precision)
    wait, timing.synchronized = gpu_synchronizer(sync)
    if wait:
        wait()
    t0 = time.perf_counter()
    yield timing
    if wait:
        wait()
    timing.times_s.append(time.perf_counter() - t0)
    target = _target(collector)
    if target is not None:
        target.add(timing)


def measured(
    name: str | None = None,
    *,
    flops: Count = None,
    bytes: Count = None,  # noqa: A002
    level: str = "dram",
    precision: str = "fp64",
    repeats: int = 1,
    warmup: int = 1,
    collector: Collector | None = None,
    sync: str | bool | Callable[[], Any] | None = "auto",
) -> Callable[[F], F]:
    """Decorator: every call runs the function ``warmup`` times untimed (first call only), then
    ``repeats`` times timed, records one :class:`Timing` (median time) and returns the last result.

    ``flops`` and ``bytes`` are numbers or functions of the call's arguments. The latest Timing
    is also on the wrapper as ``.last``.
    """
    _check(level, precision)
    if repeats < 1:
        raise InputError(f"repeats must be at least 1, not {repeats}")

    def decorate(fn: F) -> F:
        label = str(name or getattr(fn, "__qualname__", getattr(fn, "__name__", "function")))
        warmed = False

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal warmed
            timing = Timing(label, _count(flops, args, kwargs, "flops"), _count(bytes, args, kwargs, "bytes"),
                            level, precision)
            wait, timing.synchronized = gpu_synchronizer(sync)
            if not warmed:
                for _ in range(warmup):
                    fn(*args, **kwargs)
                warmed = True
            result = None
            for _ in range(repeats):
                if wait:
                    wait()
                t0 = time.perf_counter()
                result = fn(*args, **kwargs)
                if wait:
                    wait()
                timing.times_s.append(time.perf_counter() - t0)
            target = _target(collector)
            if target is not None:
                target.add(timing)
            wrapper.last = timing  # type: ignore[attr-defined]
            return result

        wrapper.last = None  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate

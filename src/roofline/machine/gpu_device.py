"""Facts about the GPU in this machine: CUDA device attributes (CuPy) and NVML (nvidia-ml-py).

Every GPU library is imported inside the function that needs it; importing this module
touches no GPU. Units: Hz, bytes, bits.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from roofline.errors import ToolNotFoundError

log = logging.getLogger(__name__)

# cudaDeviceAttr values (CUDA runtime API, driver_types.h); stable since CUDA 5.
_ATTR_MULTIPROCESSOR_COUNT = 16
_ATTR_CLOCK_RATE_KHZ = 13
_ATTR_MEMORY_CLOCK_RATE_KHZ = 36
_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37
_ATTR_L2_CACHE_SIZE = 38
_ATTR_CC_MAJOR = 75
_ATTR_CC_MINOR = 76
_ATTR_MAX_SHARED_MEMORY_PER_SM = 81


@dataclass(frozen=True)
class DeviceInfo:
    """One GPU as the driver describes it (SI units)."""

    index: int
    name: str
    compute_capability: tuple[int, int]
    sms: int
    max_sm_clock_hz: float
    max_memory_clock_hz: float
    memory_bus_bits: int
    l2_bytes: int
    total_memory_bytes: int
    max_shared_memory_per_sm: int | None = None
    driver_version: str | None = None
    cuda_runtime_version: str | None = None
    cuda_driver_version: str | None = None
    cupy_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        d["compute_capability"] = f"{self.compute_capability[0]}.{self.compute_capability[1]}"
        return d


def _cupy() -> Any:
    try:
        import cupy
    except ImportError as exc:
        raise ToolNotFoundError(
            f"measuring a GPU needs CuPy ({exc})",
            hint="pip install cupy-cuda12x (or cupy-cuda13x, matching your driver's CUDA)",
        ) from None
    return cupy


def _nvml() -> Any:
    try:
        import pynvml
    except ImportError as exc:
        raise ToolNotFoundError(
            f"reading GPU clocks needs NVML's Python binding ({exc})", hint="pip install nvidia-ml-py"
        ) from None
    return pynvml


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def gpu_count() -> int:
    """How many CUDA GPUs this process can see; 0 when there is no GPU, driver or CuPy."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # no CuPy, no driver, no device: all mean "no GPU here"
        log.debug("no CUDA GPU visible: %s", exc)
        return 0


def undetected_gpu_reason() -> str | None:
    """When :func:`gpu_count` is 0 but NVML sees NVIDIA GPUs, why CUDA (through CuPy) does not; else None.

    Lets the CLI refuse to measure the CPU in place of a GPU it cannot drive (no silent fallback).
    """
    try:
        import pynvml as nv

        nv.nvmlInit()
        try:
            n = int(nv.nvmlDeviceGetCount())
        finally:
            nv.nvmlShutdown()
    except Exception:  # no NVML binding or no driver: there is no NVIDIA GPU to miss
        return None
    if n == 0:
        return None
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"NVML sees {n} NVIDIA GPU(s) but CUDA through CuPy cannot use them ({type(exc).__name__}: {exc})"
    return None


def read_device_info(device: int = 0) -> DeviceInfo:
    """Read SM count, clocks, bus width, L2 size and versions of GPU ``device``."""
    cp = _cupy()
    rt = cp.cuda.runtime
    try:
        n = rt.getDeviceCount()
    except Exception as exc:
        raise ToolNotFoundError(f"no CUDA GPU visible ({exc})") from None
    if not 0 <= device < n:
        raise ToolNotFoundError(f"no GPU {device}: this machine has {n}")

    def attr(a: int) -> int:
        return int(rt.deviceGetAttribute(a, device))

    props = rt.getDeviceProperties(device)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    sm_clock = attr(_ATTR_CLOCK_RATE_KHZ) * 1e3
    mem_clock = attr(_ATTR_MEMORY_CLOCK_RATE_KHZ) * 1e3
    bus_bits = attr(_ATTR_GLOBAL_MEMORY_BUS_WIDTH)
    driver_version = None
    try:
        nv = _nvml()
        nv.nvmlInit()
        try:
            h = nv.nvmlDeviceGetHandleByIndex(device)
            sm_clock = nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM) * 1e6
            mem_clock = nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM) * 1e6
            dv = nv.nvmlSystemGetDriverVersion()
            driver_version = dv.decode() if isinstance(dv, bytes) else str(dv)
        finally:
            nv.nvmlShutdown()
    except ToolNotFoundError:
        log.info("nvidia-ml-py missing: clocks from CUDA attributes")
    # NVML numbers GPUs in PCI order, CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID; they
    # agree on single-GPU machines, which is what we measure.
    return DeviceInfo(
        index=device,
        name=name,
        compute_capability=(attr(_ATTR_CC_MAJOR), attr(_ATTR_CC_MINOR)),
        sms=attr(_ATTR_MULTIPROCESSOR_COUNT),
        max_sm_clock_hz=sm_clock,
        max_memory_clock_hz=mem_clock,
        memory_bus_bits=bus_bits,
        l2_bytes=attr(_ATTR_L2_CACHE_SIZE),
        total_memory_bytes=int(props["totalGlobalMem"]),
        max_shared_memory_per_sm=attr(_ATTR_MAX_SHARED_MEMORY_PER_SM),
        driver_version=driver_version,
        cuda_runtime_version=_version(rt.runtimeGetVersion()),
        cuda_driver_version=_version(rt.driverGetVersion()),
        cupy_version=str(cp.__version__),
    )


class ClockSampler:
    """Samples the SM clock (NVML) in a background thread while a block of work runs.

    Use as a context manager; afterwards ``median_hz`` is the median SM clock seen (Hz), or
    None when NVML is not available (then ``error`` says why).
    """

    def __init__(self, device: int = 0, interval_s: float = 0.01) -> None:
        self.device = device
        self.interval_s = interval_s
        self.samples_hz: list[float] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml: Any = None
        self._handle: Any = None

    def __enter__(self) -> ClockSampler:
        try:
            nv = _nvml()
            nv.nvmlInit()
            self._nvml = nv
            self._handle = nv.nvmlDeviceGetHandleByIndex(self.device)
        except Exception as exc:
            self.error = f"NVML unavailable: {exc}"
            return self
        self._thread = threading.Thread(target=self._run, name="roofline-clock-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        nv = self._nvml
        while not self._stop.is_set():
            try:
                self.samples_hz.append(nv.nvmlDeviceGetClockInfo(self._handle, nv.NVML_CLOCK_SM) * 1e6)
            except Exception as exc:  # keep what was sampled; say why it stopped
                self.error = f"NVML clock read failed: {exc}"
                return
            time.sleep(self.interval_s)

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._nvml is not None:
            self._nvml.nvmlShutdown()

    @property
    def median_hz(self) -> float | None:
        return statistics.median(self.samples_hz) if self.samples_hz else None

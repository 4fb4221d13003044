"""A fake H100 for measuring without a GPU: timings from a known three-level cache model and known
compute rates (the ceilings `measure_gpu` must find), 1 % noise. Used by the tests and by
benchmarks/validate_gpu_machine.py --dry-run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from unittest import mock

import numpy as np

from roofline.bench.gpu.gemm import gemm_flops
from roofline.machine.gpu_device import DeviceInfo
from roofline.bench.gpu.kernels import BandwidthConfig, ComputeConfig, IntConfig, SharedConfig

KiB, MiB, GiB = 2**10, 2**20, 2**30


@dataclass
class FakeClock:
    hz: float

    def __enter__(self) -> FakeClock:
        return self

    def __exit__(self, *exc) -> None:
        return None

    @property
    def median_hz(self) -> float:
        return self.hz


class FakeGpu:
    """An H100-like GPU whose timings follow a three-level cache model, with 1 % noise."""

    L1_BYTES, L2_BYTES = 256 * KiB, 50 * MiB
    L1, L2_READ, L2_RMW, DRAM_READ, DRAM_RMW, COPY = 30e12, 10e12, 8e12, 3.0e12, 2.9e12, 2.8e12
    CLOCK = 1.755e9
    FLOPS = {"fp64": 0.96 * 132 * 128 * 1.755e9, "fp32": 0.97 * 132 * 256 * 1.755e9,
             "fp16": 100e12, "bf16": 99e12}
    GEMM = {"tensor_fp64": 55e12, "tensor_tf32": 400e12, "tensor_fp16": 750e12, "tensor_bf16": 760e12,
            "tensor_int8": 1.3e15}
    # Shared memory: 90 % (4-byte loads) and 97 % (16-byte) of 128 B/clk/SM x 132 SMs at 1.755 GHz; INT32: an
    # IMAD / IADD3 mix at 1.8 x the Programming Guide's 64 integer instructions per clock per SM.
    SHARED = {4: 0.90 * 128 * 132 * 1.755e9, 16: 0.97 * 128 * 132 * 1.755e9}
    INT32 = 1.8 * 64 * 132 * 1.755e9

    def __init__(self) -> None:
        self.rng = np.random.default_rng(7)
        self.launches = 0
        self.elapsed = 0.0  # simulated seconds of all launches (see simulated_clock)
        self.closed = False

    def _t(self, seconds: float) -> float:
        self.launches += 1
        t = (seconds + 4e-6) * (1 + 0.01 * self.rng.standard_normal())
        self.elapsed += t
        return t

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(index=0, name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), sms=132,
                          max_sm_clock_hz=1980e6, max_memory_clock_hz=2619e6, memory_bus_bits=5120,
                          l2_bytes=self.L2_BYTES, total_memory_bytes=80 * GiB)

    def clock_sampler(self) -> FakeClock:
        return FakeClock(self.CLOCK)

    def bandwidth(self, cfg: BandwidthConfig) -> float:
        w = cfg.size_bytes
        if cfg.mapping == "broadcast":
            return self.L1 if w <= self.L1_BYTES else self.L2_READ
        if cfg.kernel == "read":
            return self.L2_READ if w <= self.L2_BYTES else self.DRAM_READ
        return self.L2_RMW if w <= self.L2_BYTES else self.DRAM_RMW

    def time_bandwidth(self, cfg: BandwidthConfig) -> float:
        return self._t(cfg.bytes_moved / self.bandwidth(cfg))

    def compute_unsupported(self, precision: str) -> str | None:
        return None

    def time_compute(self, cfg: ComputeConfig) -> float:
        return self._t(cfg.flops / self.FLOPS[cfg.precision])

    def time_shared(self, cfg: SharedConfig) -> float:
        return self._t(cfg.bytes_moved / self.SHARED[cfg.width])

    def time_int(self, cfg: IntConfig) -> float:
        return self._t(cfg.ops / self.INT32)

    def gemm_library(self) -> str:
        return "fake"

    def gemm_unsupported(self, kind: str) -> str | None:
        return "fp8 refused by this fake library" if kind == "tensor_fp8" else None

    def time_gemm(self, kind: str, n: int) -> float:
        return self._t(gemm_flops(n) / self.GEMM[kind])

    def time_copy(self, nbytes: int) -> float:
        return self._t(2 * nbytes / self.COPY)

    def close(self) -> None:
        self.closed = True


@contextmanager
def simulated_clock(gpu: FakeGpu) -> Iterator[None]:
    """``measure_gpu``'s wall-clock loops (its warm-up) timed on the fake GPU's own launches: the number
    of launches, and so the noise every later measurement draws from the seeded generator, no longer
    depends on how fast this machine is (a test's result is then the same on every run)."""
    from roofline.bench.gpu import measure as gpu_bench

    with mock.patch.object(gpu_bench, "time", SimpleNamespace(perf_counter=lambda: gpu.elapsed)):
        yield

"""On a real NVIDIA GPU only (marked ``gpu``; skipped where there is none): the CuPy backend,
NVRTC kernels and NVML clocks, checked against the GPU's own theoretical ceilings."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def test_device_info_and_live_theoretical():
    from roofline.machine import theoretical
    from roofline.machine.gpu_device import gpu_count, read_device_info

    assert gpu_count() >= 1
    info = read_device_info(0)
    assert info.sms > 0 and info.l2_bytes > 0 and info.memory_bus_bits > 0
    assert 0.3e9 < info.max_sm_clock_hz < 4e9
    m = theoretical(None, device=0)
    assert m.source == "theoretical" and m.memory["dram"] > 1e11 and m.compute["fp32"] > 1e12


def test_every_kernel_compiles_and_counts_match_a_short_run():
    from roofline.bench.gpu.measure import BenchSettings
    from roofline.bench.gpu.cupy_timer import CupyBackend
    from roofline.machine.gpu_device import read_device_info
    from roofline.bench.gpu.kernels import BandwidthConfig, ComputeConfig, compute_blocks

    info = read_device_info(0)
    s = BenchSettings.for_mode("quick", total_memory_bytes=info.total_memory_bytes, l2_bytes=info.l2_bytes)
    b = CupyBackend(0, max_bytes=s.max_bytes)
    try:
        for prec in ("fp64", "fp32", "fp16", "bf16"):
            if info.compute_capability >= (8, 0):
                assert b.compute_unsupported(prec) is None, prec
        t = b.time_compute(ComputeConfig("fp32", compute_blocks(info.sms), iters=256))
        assert t > 0
        for cfg in (BandwidthConfig("read", "broadcast", 64 * 1024, blocks=info.sms * 8, reps=4),
                    BandwidthConfig("read", "partitioned", 256 * 2**20, blocks=info.sms * 8),
                    BandwidthConfig("rmw", "partitioned", 256 * 2**20, blocks=info.sms * 8)):
            assert b.time_bandwidth(cfg) > 0
        assert b.time_copy(64 * 2**20) > 0
    finally:
        b.close()


def test_quick_measurement_is_within_physical_bounds():
    from roofline.bench.gpu.measure import measure_gpu
    from roofline.machine.theoretical import theoretical

    m = measure_gpu(device=0, mode="quick")
    mach, theory = m.machine, theoretical(None, device=0)
    assert {"l2", "dram"} <= set(mach.memory)
    # Never above what the hardware can do (5 % for clock and rounding), and not absurdly below.
    assert 0.5 * theory.memory["dram"] < mach.memory["dram"] < 1.05 * theory.memory["dram"]
    ratio = m.checks["fp32_vs_theoretical_at_observed_clock"]
    assert 0.7 < ratio < 1.05
    assert mach.sm_clock_hz and 0.3e9 < mach.sm_clock_hz < 4e9
    assert m.elapsed_s < 60

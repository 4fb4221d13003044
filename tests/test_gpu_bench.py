"""GPU measurement without a GPU: launch arithmetic, statistics, and the whole orchestration on a
fake backend whose timings come from a known cache model (the ceilings it must find)."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.errors import MachineError
from roofline.bench.gpu.measure import BenchSettings, calibrate, measure_gpu, robust_stats
from roofline.bench.gpu.gemm import gemm_flops, gemm_kinds_for
from roofline.machine.gpu_device import DeviceInfo
from roofline.bench.gpu.kernels import (
    CHAINS,
    COMPUTE_SOURCES,
    INT_SOURCE,
    INT_UNROLL,
    SHARED_SOURCES,
    UNROLL,
    BandwidthConfig,
    ComputeConfig,
    IntConfig,
    SharedConfig,
    bandwidth_blocks,
    compute_blocks,
    reps_for_target,
    size_ladder,
)

from fake_gpu import FakeGpu, simulated_clock

KiB, MiB, GiB = 2**10, 2**20, 2**30


# -- pure arithmetic ------------------------------------------------------------------------------

def test_bytes_moved_per_mapping_and_kernel():
    bcast = BandwidthConfig("read", "broadcast", 64 * KiB, blocks=1056, reps=10)
    assert bcast.bytes_moved == 1056 * 64 * KiB * 10  # every block reads the whole set
    assert bcast.elements == 4096 and bcast.kernel_name == "bw_read_bcast"
    part = BandwidthConfig("read", "partitioned", 1 * GiB, blocks=1056, reps=3)
    assert part.bytes_moved == 3 * GiB and part.kernel_name == "bw_read_part"
    rmw = BandwidthConfig("rmw", "partitioned", 1 * GiB, blocks=1056, reps=3)
    assert rmw.bytes_moved == 6 * GiB and rmw.kernel_name == "bw_rmw_part"  # read + written
    assert rmw.with_reps(1).bytes_moved == 2 * GiB


def test_bandwidth_config_rejects_what_the_kernels_cannot_run():
    with pytest.raises(ValueError):
        BandwidthConfig("read", "broadcast", 4 * KiB + 16, blocks=1)  # not a multiple of 256 x 16 B
    with pytest.raises(ValueError, match="power of two"):
        BandwidthConfig("read", "broadcast", 12 * KiB, blocks=1)  # a multiple of 4 KiB, but the mask needs 2^k
    assert BandwidthConfig("read", "broadcast", 16 * KiB, blocks=1).elements - 1 == 0x3FF  # the kernel's mask
    with pytest.raises(ValueError):
        BandwidthConfig("rmw", "broadcast", 4 * KiB, blocks=1)
    with pytest.raises(ValueError):
        BandwidthConfig("read", "partitioned", 100, blocks=1)  # not whole int4s


def test_flops_counted_exactly_per_precision():
    c = ComputeConfig("fp32", blocks=1056, threads=256, iters=1000)
    fmas = 1000 * UNROLL * CHAINS + CHAINS - 1
    assert c.fmas == fmas
    assert c.flops == 1056 * 256 * fmas * 2
    assert ComputeConfig("fp16", 1056, 256, 1000).flops == 2 * c.flops  # HFMA2: two lanes
    assert ComputeConfig("bf16", 1056, 256, 1000).flops == 2 * c.flops
    assert ComputeConfig("fp64", 1056, 256, 1000).flops == c.flops
    # The count matches the source: UNROLL x CHAINS FMAs per trip, CHAINS - 1 in the final sum.
    src = COMPUTE_SOURCES["fp32"]
    assert f"u < {UNROLL}" in src and f"k < {CHAINS}" in src and "int k = 1" in src
    assert "__hfma2" in COMPUTE_SOURCES["bf16"] and "__nv_bfloat162" in COMPUTE_SOURCES["bf16"]


def test_paired_constants_are_the_bits_of_two_rounded_halves():
    """The paired-FMA kernels take b and c as __half2 / __nv_bfloat162: IEEE half by numpy; bfloat16 by hand (the
    upper 16 bits of the float32, rounded to nearest even: 0.001 = 0x3A83126F -> 0x3A83, 0.9995 = 0x3F7FDF3B -> 0x3F80)."""
    from roofline.bench.gpu.kernels import paired_bits

    for v in (0.9995, 0.001, 1.0, -2.5, 65504.0):
        half = int(np.array([v], dtype=np.float16).view(np.uint16)[0])
        assert paired_bits(v, "fp16") == half | half << 16
    assert [paired_bits(v, "bf16") for v in (0.001, 0.9995, 1.0, -2.5)] == [0x3A833A83, 0x3F803F80, 0x3F803F80,
                                                                             0xC020C020]
    with pytest.raises(ValueError):
        paired_bits(1.0, "fp32")


def test_shared_bytes_are_wavefronts_times_128_by_hand():
    # 1056 blocks x 256 threads = 8448 warps; 100 trips x 16 four-byte loads = 1600 warp loads each,
    # one 128-byte wavefront per conflict-free load: 8448 x 1600 x 128 B = 1,730,150,400 B,
    # which is also every thread's 4 B: 270,336 threads x 1600 x 4 B.
    ld32 = SharedConfig(4, blocks=1056, threads=256, iters=100)
    assert ld32.kernel_name == "shared_ld32" and ld32.wavefronts_per_load == 1
    assert ld32.warp_loads == 13_516_800 and ld32.wavefronts == 13_516_800
    assert ld32.bytes_moved == 1_730_150_400 == 270_336 * 1600 * 4
    # 16-byte loads: 8 per trip, 32 lanes x 16 B = 512 B = 4 wavefronts each:
    # 8448 warps x 100 x 8 = 6,758,400 warp loads x 4 = 27,033,600 wavefronts x 128 B = 3,460,300,800 B.
    ld128 = SharedConfig(16, blocks=1056, threads=256, iters=100)
    assert ld128.kernel_name == "shared_ld128" and ld128.wavefronts_per_load == 4
    assert ld128.warp_loads == 6_758_400 and ld128.wavefronts == 27_033_600
    assert ld128.bytes_moved == 3_460_300_800 == 270_336 * 800 * 16
    assert ld128.with_iters(1).bytes_moved * 100 == ld128.bytes_moved
    # The counts match the sources: 16 and 8 loads per trip, one row of 128 / 512 B apart.
    assert SHARED_SOURCES[4].count("ld.volatile.shared.u32") == 16 and "[%1+1920]" in SHARED_SOURCES[4]
    assert SHARED_SOURCES[16].count("ld.volatile.shared.v4.u32") == 8 and "[%4+3584]" in SHARED_SOURCES[16]
    for bad in ({"width": 8}, {"width": 4, "threads": 100}, {"width": 4, "iters": 0}):
        with pytest.raises(ValueError):
            SharedConfig(blocks=1, **bad)


def test_int32_ops_counted_exactly_by_hand():
    # 100 trips x 32 steps x 8 chains + 7 final multiply-adds = 25,607 integer instructions per thread;
    # x 270,336 threads = 6,922,493,952.
    c = IntConfig(blocks=1056, threads=256, iters=100)
    assert INT_UNROLL == 32 and CHAINS == 8
    assert c.ops_per_thread == 25_607 and c.ops == 6_922_493_952 and c.kernel_name == "int_mix"
    assert c.with_iters(200).ops_per_thread == 2 * 25_600 + 7
    assert f"u < {INT_UNROLL // 2}" in INT_SOURCE and "x[k] * x[k] + x[k]" in INT_SOURCE and "x[k] + c" in INT_SOURCE
    with pytest.raises(ValueError):
        IntConfig(blocks=0)


def test_gemm_flops_and_kinds_by_compute_capability():
    assert gemm_flops(8192) == 2 * 8192**3
    assert gemm_kinds_for((7, 0)) == ["tensor_fp16"]
    assert gemm_kinds_for((7, 5)) == ["tensor_fp16", "tensor_int8"]
    assert gemm_kinds_for((8, 6)) == ["tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_int8"]
    assert gemm_kinds_for((9, 0)) == ["tensor_fp64", "tensor_tf32", "tensor_fp16", "tensor_bf16",
                                      "tensor_fp8", "tensor_int8"]
    assert "tensor_fp64" not in gemm_kinds_for((8, 9))


def test_launch_configs_fill_the_gpu():
    assert bandwidth_blocks(132) == 132 * 8  # 8 x 256 threads = 2048 per SM
    assert compute_blocks(132) == 1056


def test_size_ladder_is_geometric_aligned_and_bounded():
    sizes = size_ladder(4 * KiB, 4 * GiB, 2)
    assert sizes[0] == 4 * KiB and sizes[-1] == 4 * GiB
    assert len(sizes) == 40  # 4096 x sqrt(2) rounds back to 4096: one point lost at the bottom
    assert all(s % 4096 == 0 for s in sizes) and sizes == sorted(set(sizes))
    ratios = np.array(sizes[1:]) / np.array(sizes[:-1])
    assert np.all((ratios > 1.2) & (ratios <= 2.0))
    big = np.array([s for s in sizes if s >= 64 * KiB])
    assert np.allclose(big[1:] / big[:-1], math.sqrt(2), rtol=0.05)
    with pytest.raises(ValueError):
        size_ladder(8, 4, 1)


def test_reps_scaling_and_calibration():
    assert reps_for_target(10, 1e-4, 2e-3) == 200
    assert reps_for_target(10, 0.0, 2e-3) == 160  # a launch too short to time: grow fast
    seen = []

    def time_one(reps: int) -> float:  # 1 µs per rep plus 5 µs launch overhead
        seen.append(reps)
        return 5e-6 + reps * 1e-6

    reps = calibrate(time_one, 1, 2e-3)
    assert 5e-6 + reps * 1e-6 >= 1e-3 and reps < 4000
    assert seen[0] == 1


def test_robust_stats_median_and_spread():
    med, spread = robust_stats([10.0, 11.0, 9.0, 10.0, 100.0])
    assert med == 10.0
    assert spread == pytest.approx(1.4826 * 1.0 / 10.0)  # the outlier does not move it
    assert math.isnan(robust_stats([])[0])


def test_settings_per_mode_fit_the_gpu():
    d = BenchSettings.for_mode("default", total_memory_bytes=80 * GiB, l2_bytes=50 * MiB)
    assert d.max_bytes == 4 * GiB and d.copy_bytes == 1 * GiB and d.repeats == 7
    q = BenchSettings.for_mode("quick", total_memory_bytes=80 * GiB, l2_bytes=50 * MiB)
    t = BenchSettings.for_mode("thorough", total_memory_bytes=80 * GiB, l2_bytes=50 * MiB)
    assert q.repeats < d.repeats < t.repeats and q.points_per_octave < t.points_per_octave
    assert t.max_bytes == 8 * GiB
    small = BenchSettings.for_mode("default", total_memory_bytes=4 * GiB, l2_bytes=6 * MiB)
    assert small.max_bytes == 1 * GiB  # a quarter of the memory
    big_l2 = BenchSettings.for_mode("quick", total_memory_bytes=80 * GiB, l2_bytes=96 * MiB)
    assert big_l2.max_bytes >= 8 * 96 * MiB  # past the L2, so DRAM has a plateau
    with pytest.raises(MachineError):
        BenchSettings.for_mode("fast", total_memory_bytes=80 * GiB, l2_bytes=50 * MiB)


# -- the whole orchestration on a fake GPU -----------------------------------------------------------

@pytest.fixture
def plateau_finder():
    """The shared plateau finder (roofline.bench.sweep), once it is on this branch."""
    from roofline.bench import sweep
    return sweep


def test_orchestration_finds_the_cache_model_ceilings(plateau_finder):
    gpu = FakeGpu()
    steps: list[tuple[str, float]] = []
    with simulated_clock(gpu):  # the same noise draws on every run (the warm-up is timed)
        m = measure_gpu(mode="default", backend=gpu, progress=lambda label, f: steps.append((label, f)))
    mach = m.machine
    assert mach.source == "measured" and mach.name == "NVIDIA H100 80GB HBM3"
    # Memory: each level's plateau, the faster of read and read-modify-write.
    assert mach.memory["l1"] == pytest.approx(FakeGpu.L1, rel=0.03)
    assert mach.memory["l2"] == pytest.approx(FakeGpu.L2_READ, rel=0.03)
    assert mach.memory["dram"] == pytest.approx(FakeGpu.DRAM_READ, rel=0.03)
    assert mach.metadata["ceiling_from"] == {"l1": "read", "l2": "read", "dram": "read"}
    # Compute: FLOPs counted exactly, so the rates come back.
    for key, rate in {**FakeGpu.FLOPS, **FakeGpu.GEMM}.items():
        assert mach.compute[key] == pytest.approx(rate, rel=0.03), key
    assert "tensor_fp8" not in mach.compute
    assert any("tensor_fp8 not measured: fp8 refused" in n for n in m.notes)
    # Spreads, clocks and checks.
    assert all(0 <= s < 0.05 for s in mach.spread.values())
    assert mach.sm_clock_hz == FakeGpu.CLOCK and m.clock_hz["dram"] == FakeGpu.CLOCK
    assert m.checks["dram_vs_copy"] == pytest.approx(3.0 / 2.8, rel=0.03)
    assert m.checks["fp32_vs_theoretical_at_observed_clock"] == pytest.approx(0.97, rel=0.03)
    assert m.checks["fp64_vs_theoretical_at_observed_clock"] == pytest.approx(0.96, rel=0.03)
    assert m.checks["dram_vs_datasheet"] == pytest.approx(3.0 / 3.35, rel=0.03)
    # Shared memory: the faster width (16-byte loads) is the ceiling; both are kept.
    assert mach.memory["shared"] == pytest.approx(FakeGpu.SHARED[16], rel=0.03)
    assert mach.metadata["shared_by_width"]["4"] == pytest.approx(FakeGpu.SHARED[4], rel=0.03)
    assert m.checks["shared_vs_theoretical_at_observed_clock"] == pytest.approx(0.97, rel=0.03)
    assert m.clock_hz["shared"] == FakeGpu.CLOCK and m.clock_hz["int32"] == FakeGpu.CLOCK
    assert mach.compute["int32"] == pytest.approx(FakeGpu.INT32, rel=0.03)
    assert m.checks["int32_vs_theoretical_at_observed_clock"] == pytest.approx(1.8, rel=0.03)
    # the note prints the measured ratio (1.8 within the fake timer's noise: 1.79x or 1.81x as well)
    [note] = [n for n in m.notes if n.startswith("int32: the IMAD / IADD3 mix ran at ")]
    assert float(re.search(r"ran at ([\d.]+)x", note).group(1)) == pytest.approx(1.8, rel=0.03) and "FMA pipe" in note
    assert "shared" in mach.spread and "int32" in mach.metadata["repeat_ratio"]
    # The sweeps are kept, and the theoretical machine comes along.
    read = m.sweeps["read"]
    assert list(read.columns[:3]) == ["size_bytes", "bandwidth", "spread"]
    assert read["size_bytes"].min() == 4 * KiB and read["size_bytes"].max() == 4 * GiB
    assert set(read["mapping"]) == {"broadcast", "partitioned"}
    assert m.sweeps["rmw"]["size_bytes"].min() == 1 * MiB
    assert m.cache_sizes == {"l1": 256 * KiB, "l2": 50 * MiB}
    assert m.theoretical is not None and m.theoretical.source == "theoretical"
    assert m.theoretical.compute["fp32"] == pytest.approx(66.9e12, rel=0.01)
    # Progress: monotone, ends at 1; the backend was not closed (the caller owns it).
    fractions = [f for _, f in steps]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert not gpu.closed
    # Round trip as a machine file.
    from roofline.machine.model import Machine

    assert Machine.from_dict(mach.to_dict()).memory == mach.memory


def test_orchestration_without_theoretical_rates_still_measures(plateau_finder):
    class Unknown(FakeGpu):
        def device_info(self) -> DeviceInfo:
            from dataclasses import replace

            return replace(super().device_info(), compute_capability=(13, 0), name="Future GPU")

    gpu = Unknown()
    with simulated_clock(gpu):
        m = measure_gpu(mode="quick", backend=gpu)
    assert m.theoretical is None
    assert any("no theoretical ceilings" in n for n in m.notes)
    assert m.machine.compute["fp32"] == pytest.approx(FakeGpu.FLOPS["fp32"], rel=0.03)
    assert "l1" not in m.cache_sizes  # L1 capacity comes from the architecture table


def test_orchestration_reports_what_it_could_not_measure(plateau_finder):
    class NoHalf(FakeGpu):
        def compute_unsupported(self, precision: str) -> str | None:
            return "NVRTC could not compile it" if precision in ("fp16", "bf16", "shared_ld128") else None

        def time_gemm(self, kind: str, n: int) -> float:
            if kind == "tensor_int8":
                raise RuntimeError("cuBLASLt refused")
            return super().time_gemm(kind, n)

    gpu = NoHalf()
    with simulated_clock(gpu):
        m = measure_gpu(mode="quick", backend=gpu)
    assert "fp16" not in m.machine.compute and "tensor_int8" not in m.machine.compute
    assert any("fp16 not measured: NVRTC could not compile it" in n for n in m.notes)
    assert any("tensor_int8 not measured: RuntimeError: cuBLASLt refused" in n for n in m.notes)
    # One shared width lost: the other one still gives the ceiling, and the note says which.
    assert m.machine.memory["shared"] == pytest.approx(FakeGpu.SHARED[4], rel=0.03)
    assert any("shared memory (16-byte loads) not measured: NVRTC" in n for n in m.notes)
    assert m.machine.metadata["shared_by_width"].keys() == {"4"}


# -- the first H100 run (benchmarks/results/h100-80gb-hbm3-2026-11-27) -------------------------------------------

H100_SWEEPS = Path(__file__).parents[1] / "benchmarks" / "results" / "h100-80gb-hbm3-2026-11-27" / "machine" / "sweeps.csv"


def test_the_h100_l2_ceiling_comes_from_the_partitioned_points_only():
    """On the real H100 sweeps, the broadcast points past L1 (0.35 to 2.8 MiB) read 12.0 to 13.3 TB/s, which ncu
    showed to be 41 % L1 hits, and the partitioned ones (5.66 to 45.25 MiB) 6.71 to 7.32 TB/s. One run named the
    first L2 (12.04 TB/s), the next the second (7.14): both plateaus have 7 points. L2 is now the partitioned
    plateau's median, 7.14 TB/s by hand (6.71, 6.93, 7.04, 7.14, 7.19, 7.23, 7.32), whichever has more points."""
    from roofline.bench.gpu.measure import _memory_ceilings

    df = pd.read_csv(H100_SWEEPS)
    sweeps = {name: g.drop(columns="sweep").reset_index(drop=True) for name, g in df.groupby("sweep")}
    caches = {"l1": 256 * KiB, "l2": 50 * MiB}
    part = sweeps["read"][(sweeps["read"]["mapping"] == "partitioned")
                          & sweeps["read"]["size_bytes"].between(5.6 * MiB, 46 * MiB)]
    assert len(part) == 7 and statistics.median(part["bandwidth"]) == pytest.approx(7.14e12, rel=2e-3)
    memory, _, source = _memory_ceilings(sweeps, caches)
    assert memory["l2"] == pytest.approx(statistics.median(part["bandwidth"]), rel=1e-9) and source["l2"] == "read"
    assert memory["l1"] == pytest.approx(16.9e12, rel=0.03) and memory["dram"] == pytest.approx(2.97e12, rel=0.02)
    # One partitioned point fewer (the plateau the old rule would then have dropped for the broadcast one): same L2.
    fewer = dict(sweeps, read=sweeps["read"].drop(index=part.index[-1]).reset_index(drop=True))
    assert _memory_ceilings(fewer, caches)[0]["l2"] < 7.5e12


def test_partitioned_reads_run_in_waves_and_broadcast_sets_are_powers_of_two(plateau_finder):
    launched: list[BandwidthConfig] = []

    class Recording(FakeGpu):
        def time_bandwidth(self, cfg: BandwidthConfig) -> float:
            launched.append(cfg)
            return super().time_bandwidth(cfg)

    gpu = Recording()
    with simulated_clock(gpu):
        measure_gpu(mode="quick", backend=gpu)
    one_wave = bandwidth_blocks(132)
    bcast = {c.size_bytes for c in launched if c.mapping == "broadcast"}
    assert bcast == {2**k for k in range(12, 23)}  # 4 KiB ... 4 MiB
    assert {c.blocks for c in launched if c.mapping == "broadcast"} == {one_wave}
    assert {c.blocks for c in launched if c.kernel == "read" and c.mapping == "partitioned"} == {4 * one_wave}
    assert {c.blocks for c in launched if c.kernel == "rmw"} == {one_wave}


def test_paired_half_fmas_at_the_fp32_rate_are_explained(plateau_finder):
    """The H100 ran HFMA2 and HFMA2.BF16_V2 kernels at 66.8 TFLOP/s, its FP32 FMA rate and 0.50 of the whitepaper's
    133.8 (benchmarks/results/h100-80gb-hbm3-2026-11-27): the table then says why, with the ratio measured."""

    class HalfAsFp32(FakeGpu):
        FLOPS = {**FakeGpu.FLOPS, "fp16": FakeGpu.FLOPS["fp32"], "bf16": FakeGpu.FLOPS["fp32"]}

    gpu = HalfAsFp32()
    with simulated_clock(gpu):
        m = measure_gpu(mode="quick", backend=gpu)
    # 0.97 x 256 FLOP/clk/SM over the theoretical 512 at the observed clock: 0.485
    assert m.checks["fp16_vs_theoretical_at_observed_clock"] == pytest.approx(0.485, rel=0.03)
    notes = [n for n in m.notes if "paired-FMA kernel ran at" in n]
    assert [n.split(":")[0] for n in notes] == ["fp16", "bf16"] and "0.4" in notes[0] and "HFMA2.MMA" in notes[0]
    gpu = FakeGpu()  # 100 TFLOP/s: 0.84 of the theoretical, nothing to explain
    with simulated_clock(gpu):
        assert not [n for n in measure_gpu(mode="quick", backend=gpu).notes if "paired-FMA" in n]

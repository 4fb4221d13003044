"""The CPU characterization, run for real (quick mode), checked against numpy on the same machine."""

from __future__ import annotations

import math
import os
import time
import platform

import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="measuring a CPU needs numba")

from roofline.bench.cpu.measure import measure_cpu  # noqa: E402
from roofline.machine.cpu_host import cpu_key  # noqa: E402
from roofline.writing.ert_json import to_ert_json  # noqa: E402
from roofline.bench.sweep import binary_size, plot_sweep  # noqa: E402
from roofline.measuring import Collector, measured  # noqa: E402
from roofline.readers.machines.ert import from_ert_dict  # noqa: E402


@numba.njit(parallel=True, fastmath=True)
def saxpy_kernel(x, y, a):  # pragma: no cover - compiled
    for i in numba.prange(x.size):
        y[i] = a * x[i] + y[i]


def measure_saxpy(llc: int) -> Collector:
    """A parallel saxpy (12 B and 2 FLOPs per element) on two float32 arrays 8x the LLC together."""
    n = max(8 * llc // 8, 1 << 24)
    x = np.ones(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    c = Collector()
    saxpy = measured("saxpy", flops=lambda x, y, a: 2 * x.size, bytes=lambda x, y, a: 12 * x.size,
                     precision="fp32", repeats=15, collector=c)(saxpy_kernel)
    saxpy(x, y, np.float32(2.0))
    return c


def characterize() -> tuple:
    """The quick characterization, then the saxpy right after it, as `roofline machine` runs: in a
    process of its own. (Measured inside the pytest process after hundreds of other tests, the
    L1-sized sweep points ran at half speed in about half of the full-suite runs, never alone.)"""
    steps: list = []
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    saxpy_kernel(np.ones(64, np.float32), np.ones(64, np.float32), np.float32(2.0))  # compile first
    m = measure_cpu(mode="quick", progress=lambda what, f: steps.append((what, f)))
    # Right after the ceilings: on a virtual machine the host may move the vCPUs between runs (two
    # vCPUs on one AMD CCD share its link to memory; on two they get twice the DRAM bandwidth).
    # The saxpy (numba's parallel loop, timed on the wall clock) is slowed by other processes on
    # the cores: while it lands below the DRAM slope, it is measured again (3 tries at most) and the
    # fastest kept. Retrying only ever speeds it up, so a ceiling too low (saxpy above 2x) is still
    # caught, and a ceiling too high stays below 0.5x however often it is retried.
    llc = max(m.machine.metadata["sweep_cache_sizes"].values())
    saxpy = measure_saxpy(llc)
    for _ in range(2):
        if saxpy_ratio(saxpy, m) >= 0.5:
            break
        again = measure_saxpy(llc)
        if again.timings[0].min_time_s < saxpy.timings[0].min_time_s:
            saxpy = again
    return m, steps, load, (saxpy, dram_beside(llc))


def dram_beside(llc: int, rounds: int = 5) -> dict[str, float]:
    """The ceiling's read-modify-write kernel (its threads pinned, 16 B per element) and the saxpy
    (12 B per element) timed in turn, ``rounds`` times, on 8x the last-level cache: the fastest
    bandwidth of each (B/s), measured under the same conditions.

    A CI run measured the DRAM ceiling at 104 GB/s (read sweep 57) and the saxpy right after at
    51 GB/s, three tries alike: on this VM the two vCPUs may share one CCD's link to memory or
    have one each, and the host can move them between two measurements. Timed in turn, the two
    kernels see the same placement."""
    from roofline.bench.cpu import kernels as K
    from roofline.machine.cpu_host import used_cpus

    best = {"rmw": 0.0, "saxpy": 0.0}
    with K.ThreadTeam(used_cpus()) as team:
        threads = len(team.cpus)
        per_thread = 8 * llc // 8 // threads
        fill, rmw = K.fill_kernel(), K.rmw_kernel()

        def make_row() -> np.ndarray:  # touched first by the thread that updates it
            row = np.empty(per_thread)
            fill(row, 1.0)
            return row

        rows = team.run(make_row, [()] * threads)[1]
        n = 8 * llc // 4 // 2  # float32 elements: x and y together 8x the last-level cache
        x, y = np.ones(n, dtype=np.float32), np.ones(n, dtype=np.float32)
        rmw(rows[0], 64, 1, 0.5, 0.5)  # compile
        for _ in range(rounds):
            wall = team.run(rmw, [(row, per_thread, 1, 0.5, 0.5) for row in rows])[0]
            best["rmw"] = max(best["rmw"], 16 * per_thread * threads / wall)
            t0 = time.perf_counter()
            saxpy_kernel(x, y, np.float32(2.0))
            best["saxpy"] = max(best["saxpy"], 12 * n / (time.perf_counter() - t0))
    return best


def saxpy_ratio(c: Collector, m) -> float:
    """The saxpy's fastest run's bandwidth over the DRAM ceiling."""
    t = c.timings[0]
    return t.bytes / t.min_time_s / m.machine.memory["dram"]


def characterize_elsewhere() -> tuple:
    """:func:`characterize` in a fresh process of its own (spawned, so no test state leaks in)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(characterize).result(timeout=300)


@pytest.fixture(scope="module")
def run():
    return characterize_elsewhere()


def test_ceilings_positive_finite_and_ordered_as_caches(run):
    m, *_ = run
    mach = m.machine
    assert mach.source == "measured"
    assert {"fp64", "fp32"} <= set(mach.compute)
    assert "dram" in mach.memory and len(mach.memory) >= 2
    for v in [*mach.memory.values(), *mach.compute.values()]:
        assert math.isfinite(v) and v > 0
    levels = list(mach.memory)  # innermost first
    for inner, outer in zip(levels, levels[1:]):
        noise = 1 + 2 * (mach.spread.get(inner, 0) + mach.spread.get(outer, 0)) + 0.1
        assert mach.memory[inner] * noise >= mach.memory[outer], (inner, outer, dict(mach.memory))
    # The read sweep steps down from its innermost plateau to DRAM (same kernel on both sides; the
    # DRAM ceiling itself may come from the read-modify-write kernel, which moves more bytes).
    first = next(iter(mach.memory))
    assert mach.memory[first] > 1.5 * mach.metadata["dram_by_kernel"]["read"]
    assert mach.compute["fp32"] > 1.3 * mach.compute["fp64"]  # twice the lanes
    assert set(mach.spread) >= set(mach.memory) | {"fp64", "fp32"}
    # What `roofline machine` judges the figures by: every ceiling's fastest / slowest repeat.
    ratios = mach.metadata["repeat_ratio"]
    assert set(ratios) == set(mach.memory) | set(mach.compute)
    assert all(r >= 1.0 for r in ratios.values()), ratios


def test_l1_plateau_found_on_a_quiet_machine(run):
    m, _, load, _ = run
    # L1 and L2 differ by ~1.3x on the CI machine (Zen 4); other processes sharing the cores blur
    # that step (a CI run at a load of 0.59 per CPU saw the L1-sized points fall 302 -> 183 GB/s
    # with no plateau). The load average lags, so a missing L1 is measured again, twice at most,
    # and is an error only when no run finds it on a machine that was not loaded.
    tries = [(m, load)]
    while "l1" not in tries[-1][0].machine.memory and len(tries) < 3:
        again, _, again_load, _ = characterize_elsewhere()
        tries.append((again, again_load))
    found = [t for t, _ in tries if "l1" in t.machine.memory]
    if not found:
        for t, _ in tries:  # said, not guessed
            assert any(n.startswith("no plateau found for l1") for n in t.notes), t.notes
        head = (m.sweeps["read"].head(12).round(3).to_dict(orient="list"), m.machine.metadata["vector_bits"])
        loads = [round(x, 2) for _, x in tries]
        assert max(loads) > 0.75, f"no L1 plateau in {len(tries)} runs at loads per CPU {loads}: {m.notes}, {head}"
    for t in found:
        assert t.machine.memory["l1"] >= t.machine.memory["dram"]


def test_sanity_ratios_against_numpy(run):
    m, *_ = run
    assert m.checks["fp64_vs_numpy_matmul"] >= 0.5, m.checks
    assert m.checks["dram_vs_numpy_copy"] >= 0.7, m.checks
    meta = m.machine.metadata
    assert m.checks["fp64_vs_numpy_matmul"] == pytest.approx(m.machine.compute["fp64"] / meta["numpy_matmul_flops"])


def test_levels_named_after_the_system_caches(run):
    m, *_ = run
    caches = m.cache_sizes
    assert caches == m.machine.metadata["sweep_cache_sizes"]  # in the sweep's terms, for plot_sweep
    assert set(m.machine.memory) - {"dram"} <= set(caches)
    sweep = m.sweeps["read"]
    llc = max(m.machine.metadata["sweep_cache_sizes"].values())
    assert sweep["size_bytes"].max() >= 4 * llc  # far beyond the last-level cache
    assert sweep["size_bytes"].min() <= 16 * 1024
    fig = plot_sweep(m.sweeps, cache_sizes=m.machine.metadata["sweep_cache_sizes"], title="quick",
                     plateaus=m.machine.metadata["plateaus"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    for level in m.machine.memory:  # every ceiling is labelled on its plateau
        assert any(t.startswith(f"{level.upper()} ") and t.endswith("B/s") for t in texts), (level, texts)
    for level, size in m.machine.metadata["sweep_cache_sizes"].items():  # cache sizes marked
        assert f"{level.upper()} {binary_size(size)}" in texts


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="reads x86 assembly")
def test_fma_found_on_the_reported_vector_registers(run):
    m, *_ = run
    meta = m.machine.metadata
    bits = meta["vector_bits"]
    isa = meta["fma_isa"][f"fp64_{bits}bit_isa"]
    assert isa["vector_bits"] == bits and isa[f"fma_{ {512: 'zmm', 256: 'ymm', 128: 'xmm'}[bits] }"] > 0
    assert any("FMA" in n for n in m.notes)


def test_progress_and_time(run):
    m, steps, *_ = run
    fractions = [f for _, f in steps]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(steps) > 10
    # Quick mode's budget is about 20 s on 2 idle cores; other processes on the cores stretch the
    # wall time, so the bound is on the time the benchmark's threads were on a core.
    share = m.machine.metadata["cpu_share"]
    assert 0 < share <= 1 and m.elapsed_s * share < 60, (m.elapsed_s, share)


def test_measured_machine_exports_to_ert_and_back(run):
    m, *_ = run
    back = from_ert_dict(to_ert_json(m.machine, m))
    assert dict(back.memory) == pytest.approx(dict(m.machine.memory))
    assert dict(back.compute) == pytest.approx(dict(m.machine.compute))


def test_saxpy_lands_on_the_dram_slope(run):
    """A parallel saxpy (12 B and 2 FLOPs per element) on arrays far beyond the last-level cache,
    measured right after the ceilings: its effective bandwidth lies within 2x of the DRAM ceiling."""
    m, _, _, (c, beside) = run
    t = c.timings[0]
    # The ceiling is the median of its faster repeats (other processes only slow runs down); compare
    # the saxpy's fastest run with it (15 runs of ~10 ms: a burst of load misses some; up to three
    # tries, see characterize), and keep its median in the message. The criterion: on the
    # DRAM slope within a factor of 2.
    ceiling = m.machine.memory["dram"]
    ratio = max(saxpy_ratio(c, m), beside["saxpy"] / ceiling)  # the rounds beside are tries too
    said = (ratio, t.bandwidth, t.bytes / t.min_time_s, ceiling, m.machine.metadata["dram_by_kernel"], beside)
    assert ratio <= 2.0, said  # a ceiling too low is never excused
    if ratio < 0.5:
        # Below the slope only where the machine's memory got slower since the ceilings were
        # measured: the ceiling's own kernel, timed in turn with the saxpy, lost over a quarter
        # of its bandwidth, and beside it the saxpy is on the slope. A ceiling too high by its
        # byte count or kernel would be as high here, and fail.
        assert beside["rmw"] < 0.75 * ceiling, said
        assert 0.5 <= beside["saxpy"] / beside["rmw"] <= 2.0, said
    row = c.table().frame.iloc[0]
    assert row["dram_bytes"] / row["time_s"] == pytest.approx(t.bandwidth)


def test_dram_ceiling_is_the_faster_dram_kernel(run):
    m, *_ = run
    by_kernel = m.machine.metadata["dram_by_kernel"]
    assert m.machine.memory["dram"] == pytest.approx(max(by_kernel.values()))
    rmw = m.sweeps["rmw"]
    llc = max(m.machine.metadata["sweep_cache_sizes"].values())
    assert len(rmw) >= 1 and (rmw["size_bytes"] >= 4 * llc).all()  # DRAM-resident only
    assert by_kernel["rmw"] == pytest.approx(float(np.median(rmw["bandwidth"])))
    assert m.checks["dram_vs_numpy_copy"] == pytest.approx(m.machine.memory["dram"] / m.machine.metadata["numpy_copy_bandwidth"])


def test_theoretical_ceilings_are_not_below_the_measured_ones(run):
    """Issue 32: on the CI's EPYC VM the theoretical FP64 peak was 83.1 GFLOP/s (the 2.6 GHz advertised
    clock) against 116 measured. The clock is now counted while the FMA kernels run: the theoretical
    ceilings at it hold the measured ones (within the 5 % every achieved/ceiling check allows), and
    its evidence, the FMA latency in counted cycles, is a whole number."""
    m, *_ = run
    theory = m.theoretical
    clock = m.machine.metadata["core_clock"]
    if platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"):  # no clock kernel: said
        assert "rejected" in clock and (theory.metadata.get("floor") or m.machine.compute["fp64"] <= theory.compute["fp64"])
        return
    assert "rejected" not in clock, clock
    assert abs(clock["fma_latency_cycles"] - round(clock["fma_latency_cycles"])) <= 0.2, clock
    assert clock["hz"] == max(clock["rounds_hz"]) and len(clock["rounds_hz"]) == 2 * 3 * 3  # fp64, fp32 rounds
    assert "floor" not in theory.metadata and theory.sm_clock_hz == clock["hz"]
    assert m.clock_hz["fp64"] == m.clock_hz["fp32"] == clock["hz"]
    for key in ("fp64", "fp32"):
        assert m.machine.compute[key] <= 1.05 * theory.compute[key], (key, m.machine.compute[key], theory.compute[key])
    assert m.machine.metadata["cpu_key"] == cpu_key()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"),
                    reason="the clock kernel's assembly is for x86-64 and Arm64")
def test_clock_and_fma_latency_kernels_compute_what_they_time():
    from roofline.bench.cpu.kernels import ADDS, clock_kernel, fma_latency_kernel

    assert clock_kernel()(5, 3, 10) == 5 + ADDS * 10 * 3
    assert clock_kernel()(0, 1, 0) == 0
    assert fma_latency_kernel()(1.0, 0.5, 0.5, 100) == 1.0  # 1 * 0.5 + 0.5, 1,600 times
    assert fma_latency_kernel()(2.0, 1.0, 1.0, 2) == 2.0 + 2 * 16


def test_rmw_kernel_updates_the_first_n_elements_in_place():
    from roofline.bench.cpu.kernels import rmw_kernel

    row = np.arange(10, dtype=np.float64)
    rmw_kernel()(row, 6, 2, 0.5, 1.0)  # x -> (x / 2 + 1) / 2 + 1 on the first 6
    expected = np.arange(10, dtype=np.float64)
    expected[:6] = (expected[:6] * 0.5 + 1.0) * 0.5 + 1.0
    assert row.tolist() == expected.tolist()
    ones = np.ones(64)
    rmw_kernel()(ones, 64, 3, 0.5, 0.5)  # the sweep's setting keeps ones, for the read kernel's check
    assert (ones == 1.0).all()


def test_sweep_buffers_are_aligned_to_cache_lines():
    from roofline.bench.cpu.timing import aligned

    for n in (1, 1000, 1 << 20):
        a = aligned(n)
        assert a.ctypes.data % 64 == 0 and a.size == n and a.flags.c_contiguous


def test_threads_sharing_their_cores_are_seen_and_warned_about():
    """Busy loops on every core while the FMA kernel runs: the benchmark's threads get about half of
    the time, which the CPU-time / wall-time share shows and the reliability check warns about."""
    import subprocess
    import sys
    import time

    from roofline.bench.cpu import kernels as K
    from roofline.bench.cpu.measure import SETTINGS, _Run
    from roofline.machine.cpu_host import describe_cpu
    from roofline.bench.reliability import assess

    cpu = describe_cpu()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in cpu.cpus]
    try:
        time.sleep(0.3)  # the loops' interpreters start
        with K.ThreadTeam(cpu.cpus) as team:
            run = _Run(SETTINGS["quick"], None, cpu, team)
            rates, _ = run.fma_rate("float64", K.host_vector_bytes() // 8)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    share = float(np.median(run.cpu_share))
    assert share < 0.8, share  # as many busy loops as benchmark threads: about 0.5
    verdict = assess({"fp64": max(rates) / min(rates)}, load=None, cpu_share=share)
    assert verdict.cpu_share == share and "on a core" in verdict.warning

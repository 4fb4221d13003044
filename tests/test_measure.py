"""The measurement API: timing, counts, collection into a kernel table, GPU synchronization."""

from __future__ import annotations

import math
import sys
import threading
import time
import types

import numpy as np
import pytest

import roofline
from roofline.errors import InputError
from roofline.kernels import COLUMN_NAMES, aggregate
from roofline.measuring import Collector, collecting, gpu_synchronizer, measure, measured


def test_context_manager_times_the_block_and_states_counts():
    c = Collector()
    with measure("sleep", flops=1e6, bytes=4e6, collector=c) as t:
        time.sleep(0.02)
    assert 0.019 < t.time_s < 0.5 and t.min_time_s == t.time_s  # one run
    assert t.flop_rate == pytest.approx(1e6 / t.time_s)
    assert t.bandwidth == pytest.approx(4e6 / t.time_s)
    assert t.intensity == 0.25
    assert len(c) == 1 and c.timings[0] is t


def test_decorator_counts_from_arguments_and_takes_the_median():
    calls = []

    @measured("saxpy", flops=lambda n: 2 * n, bytes=lambda n: 12 * n, precision="fp32", repeats=5, warmup=2,
              collector=(c := Collector()))
    def work(n):
        calls.append(n)
        time.sleep(0.001 * len(calls))  # later calls are slower: the median is the third timed run
        return n * 2

    assert work(1000) == 2000
    assert len(calls) == 7  # 2 warm-up + 5 timed
    t = work.last
    assert t.flops == 2000 and t.bytes == 12000 and t.precision == "fp32"
    assert len(t.times_s) == 5
    assert t.time_s == sorted(t.times_s)[2]
    work(10)
    assert len(calls) == 12  # warm-up happens on the first call only
    assert [x.flops for x in c] == [2000, 20]


def test_collector_table_follows_the_schema():
    with collecting() as c:
        with measure("a", flops=10, bytes=100, precision="fp64"):
            pass
        with measure("b", flops=6, bytes=40, level="l2", precision="fp32"):
            pass
        with measure("c"):  # counts not stated: unknown, never 0
            pass
    table = c.table()
    f = table.frame
    assert list(f.columns) == list(COLUMN_NAMES)
    assert list(f["kernel_name"]) == ["a", "b", "c"]
    assert f.loc[0, "fp64_flops"] == 10 and f.loc[0, "fp32_flops"] == 0 and f.loc[0, "flops"] == 10
    assert not f.loc[0, "flops_partial"]
    assert f.loc[0, "dram_bytes"] == 100 and math.isnan(f.loc[0, "l2_bytes"])
    assert f.loc[1, "fp32_flops"] == 6 and f.loc[1, "l2_bytes"] == 40 and math.isnan(f.loc[1, "dram_bytes"])
    assert math.isnan(f.loc[2, "flops"]) and math.isnan(f.loc[2, "dram_bytes"])
    assert not f["estimated"].any() and set(f["source"]) == {"measure"}
    assert (f["time_s"] > 0).all()


def test_repeated_blocks_aggregate_by_name():
    c = Collector()
    for _ in range(3):
        with measure("k", flops=5, bytes=50, collector=c):
            pass
    agg = aggregate(c.table().frame, by="name")
    assert len(agg) == 1 and agg.loc[0, "launches"] == 3 and agg.loc[0, "flops"] == 15


def test_no_collector_means_nothing_is_kept_anywhere():
    with measure("alone", flops=1) as t:
        pass
    assert t.times_s  # the result is still returned
    with collecting() as outer:
        with collecting() as inner:
            with measure("x"):
                pass
        with measure("y"):
            pass
    assert [t.name for t in inner] == ["x"] and [t.name for t in outer] == ["y"]


def test_collecting_is_per_thread():
    seen = {}

    def worker():
        with measure("in-thread") as t:
            pass
        seen["t"] = t

    with collecting() as c:
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    assert len(c) == 0 and seen["t"].times_s


def test_bad_arguments_raise_input_errors():
    with pytest.raises(InputError, match="level"):
        with measure("x", level="l7"):
            pass
    with pytest.raises(InputError, match="precision"):
        measured("x", precision="fp128")
    with pytest.raises(InputError, match="repeats"):
        measured("x", repeats=0)
    with pytest.raises(InputError, match="non-negative"):
        with measure("x", flops=-1):
            pass


def test_gpu_sync_detects_torch_without_importing_it(monkeypatch):
    events = []
    fake_cuda = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                      synchronize=lambda: events.append("sync"))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=fake_cuda))
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    with measure("gpu") as t:
        events.append("work")
    assert events == ["sync", "work", "sync"]
    assert t.synchronized == "torch.cuda.synchronize"
    fake_cuda.is_initialized = lambda: False  # torch imported but CUDA unused: CPU code, no sync
    assert gpu_synchronizer("auto") == (None, None)
    with measure("cpu", sync=False) as t2:
        pass
    assert t2.synchronized is None


def test_gpu_sync_with_cupy_and_custom(monkeypatch):
    events = []
    device = types.SimpleNamespace(synchronize=lambda: events.append("cupy"))
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True, Device=lambda: device))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setitem(sys.modules, "cupy", fake)

    @measured("k", repeats=2, warmup=0)
    def k():
        events.append("k")

    k()
    assert events == ["cupy", "k", "cupy", "cupy", "k", "cupy"]
    custom = []
    with measure("c", sync=lambda: custom.append(1)):
        pass
    assert custom == [1, 1]


def test_lazy_exports():
    assert roofline.measure is measure and roofline.measured is measured
    assert roofline.Collector is Collector and roofline.collecting is collecting


def test_numpy_saxpy_point():
    n = 1 << 22
    x = np.ones(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    with collecting() as c:
        @measured("saxpy", flops=lambda x, y, a: 2 * x.size, bytes=lambda x, y, a: 12 * x.size,
                  precision="fp32", repeats=3)
        def saxpy(x, y, a):
            y += a * x

        saxpy(x, y, np.float32(2.0))
    row = c.table().frame.iloc[0]
    assert row["fp32_flops"] == 2 * n and row["dram_bytes"] == 12 * n
    assert y[0] == 1 + 2.0 * (1 + 3)  # 1 warm-up + 3 timed runs all happened


def test_measurements_go_through_analysis_and_charts(data_dir):
    """Measured points analyze against an ERT CPU machine and plot, like any profile."""
    c = Collector()
    with measure("stream-like", flops=2e6, bytes=24e6, precision="fp64", collector=c) as t:
        time.sleep(0.001)
    t.times_s[:] = [1e-3]  # fix the time: 2 GFLOP/s and 24 GB/s
    result = roofline.analyze(c.table(), machine=data_dir / "ert" / "cpu_xeonE5530_ert_roofline.json")
    row = result.frame.iloc[0]
    assert row["bound"] == "dram"
    assert row["attainable"] == pytest.approx(68.76e9 * 2e6 / 24e6)  # AI x DRAM ceiling
    assert row["flop_rate"] == pytest.approx(2e9)
    fig = roofline.plot(result)
    assert fig is not None


def test_saxpy_example_runs(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    from roofline.machine import Machine

    root = Path(__file__).parent.parent
    machine = Machine(name="test-cpu", source="measured", memory={"dram": 20e9}, compute={"fp32": 1e12})
    path = machine.save(tmp_path / "m.json")
    out = subprocess.run(
        [sys.executable, str(root / "examples" / "measure_saxpy.py"), "--n", str(1 << 20), "--machine", str(path)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root / "src")},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "machine: test-cpu, DRAM 20 GB/s"
    assert [ln.split()[0:2] for ln in lines[1:]] == [["saxpy", "numpy"], ["saxpy", "numba"]]
    assert all(ln.endswith("bound: dram") for ln in lines[1:])  # AI 1/6 FLOP/B is far left of the ridge (50)

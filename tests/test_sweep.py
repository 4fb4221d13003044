"""Plateau finding and naming on synthetic cache models with known plateaus."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from roofline.bench.sweep import Plateau, binary_size, find_plateaus, name_plateaus, plot_sweep

KiB, MiB, GiB = 2**10, 2**20, 2**30


def cache_model(sizes, levels, *, noise=0.0, seed=0, ramp_below=None, sharpness=4.0):
    """Bandwidth of a working set under a cache hierarchy.

    ``levels``: [(capacity_bytes, bandwidth_B_per_s), ...] innermost first, the last with capacity inf.
    The share of accesses a level and those inside it serve falls smoothly around its capacity,
    ``1 / (1 + (s / cap) ** sharpness)`` (about an octave wide, as real sweeps show); the time per
    byte mixes the levels' times per byte; lognormal noise on top. ``ramp_below`` adds loop
    overhead at tiny sizes.
    """
    rng = np.random.default_rng(seed)
    out = []
    for s in sizes:
        t, covered = 0.0, 0.0
        for cap, bw in levels:
            within = 1.0 if np.isinf(cap) else 1.0 / (1.0 + (s / cap) ** sharpness)
            frac = max(within - covered, 0.0)
            t += frac / bw
            covered = max(covered, within)
        bw = 1.0 / t
        if ramp_below:
            bw /= 1.0 + ramp_below / s
        out.append(bw)
    return np.array(out) * np.exp(rng.normal(0.0, noise, len(sizes)))


def sizes(lo=4 * KiB, hi=1 * GiB, per_octave=4):
    n = int(np.log2(hi / lo) * per_octave) + 1
    return lo * 2.0 ** (np.arange(n) / per_octave)


CPU = [(64 * KiB, 400e9), (2 * MiB, 150e9), (32 * MiB, 60e9), (np.inf, 20e9)]


@pytest.mark.parametrize("noise,seed", [(0.0, 0), (0.03, 1), (0.05, 2), (0.05, 3)])
def test_four_level_model_gives_four_plateaus(noise, seed):
    s = sizes()
    bw = cache_model(s, CPU, noise=noise, seed=seed)
    ps = find_plateaus(s, bw)
    assert len(ps) == 4, ps
    for p, (_, truth) in zip(ps, CPU):
        assert p.bandwidth == pytest.approx(truth, rel=0.08)
    # plateaus come in order of size and do not overlap
    assert all(a.last_size < b.first_size for a, b in zip(ps, ps[1:]))
    named = name_plateaus(ps, ("l1", "l2", "l3", "dram"))
    assert list(named) == ["l1", "l2", "l3", "dram"]
    assert named["dram"].bandwidth == pytest.approx(20e9, rel=0.08)


def test_unordered_input_and_nan_points_are_tolerated():
    s = sizes()
    bw = cache_model(s, CPU, noise=0.02, seed=5)
    bw[7] = np.nan
    perm = np.random.default_rng(0).permutation(len(s))
    ps = find_plateaus(s[perm], bw[perm])
    assert [round(p.bandwidth / 1e9) for p in ps] == pytest.approx([400, 150, 60, 20], rel=0.08)


def test_outliers_do_not_create_plateaus():
    s = sizes()
    bw = cache_model(s, CPU, noise=0.02, seed=7)
    bw[[5, 30, 55]] *= [0.3, 2.5, 0.4]  # single bad samples
    ps = find_plateaus(s, bw)
    assert len(ps) == 4


def test_overhead_ramp_at_small_sizes_is_not_a_level():
    s = sizes(lo=256)
    bw = cache_model(s, CPU, noise=0.02, seed=3, ramp_below=512)
    ps = find_plateaus(s, bw)
    assert ps[0].bandwidth == pytest.approx(400e9, rel=0.15)
    assert len(ps) == 4


def test_gpu_like_two_level_model():
    s = sizes(lo=64 * KiB, hi=4 * GiB)
    gpu = [(40 * MiB, 5e12), (np.inf, 1.5e12)]
    ps = find_plateaus(s, cache_model(s, gpu, noise=0.03, seed=11))
    named = name_plateaus(ps, ("l2", "dram"))
    assert named["l2"].bandwidth == pytest.approx(5e12, rel=0.08)
    assert named["dram"].bandwidth == pytest.approx(1.5e12, rel=0.08)


def test_a_single_flat_sweep_is_dram_only():
    s = sizes()
    ps = find_plateaus(s, np.full(len(s), 10e9) * np.exp(np.random.default_rng(1).normal(0, 0.03, len(s))))
    assert len(ps) == 1
    assert name_plateaus(ps, ("l1", "l2", "dram")) == {"dram": ps[0]}


def test_cache_sizes_assign_levels_when_a_level_is_missing():
    # L2 and L3 bandwidths equal: three plateaus only; cache sizes say which level is which.
    model = [(64 * KiB, 400e9), (2 * MiB, 100e9), (32 * MiB, 100e9), (np.inf, 20e9)]
    s = sizes()
    ps = find_plateaus(s, cache_model(s, model, noise=0.02, seed=4))
    assert len(ps) == 3
    caches = {"l1": 64 * KiB, "l2": 2 * MiB, "l3": 32 * MiB}
    named = name_plateaus(ps, ("l1", "l2", "l3", "dram"), cache_sizes=caches)
    assert set(named) >= {"l1", "dram"}
    assert named["l1"].bandwidth == pytest.approx(400e9, rel=0.08)
    assert named["dram"].bandwidth == pytest.approx(20e9, rel=0.08)
    # without sizes the middle plateau is called l2, never l3
    assert list(name_plateaus(ps, ("l1", "l2", "l3", "dram"))) == ["l1", "l2", "dram"]


def test_cache_sizes_pick_the_level_a_plateau_lies_in():
    ps = [Plateau(4 * KiB, 32 * KiB, 400e9, 0.01, 10), Plateau(4 * MiB, 24 * MiB, 60e9, 0.01, 10),
          Plateau(128 * MiB, 1 * GiB, 20e9, 0.01, 10)]
    caches = {"l1": 64 * KiB, "l2": 2 * MiB, "l3": 32 * MiB}
    named = name_plateaus(ps, ("l1", "l2", "l3", "dram"), cache_sizes=caches)
    assert list(named) == ["l1", "l3", "dram"]
    assert named["l3"].bandwidth == 60e9


def test_segmentation_failure_would_be_caught():
    # two plateaus 40% apart must not be merged
    s = sizes(hi=64 * MiB)
    bw = cache_model(s, [(1 * MiB, 100e9), (np.inf, 60e9)], noise=0.02, seed=9)
    ps = find_plateaus(s, bw)
    assert len(ps) == 2
    assert ps[0].last_size <= 2 * MiB and ps[1].first_size >= 1 * MiB


def test_binary_size_labels():
    assert binary_size(32 * KiB) == "32 KiB"
    assert binary_size(1.5 * MiB) == "1.5 MiB"
    assert binary_size(4 * GiB) == "4 GiB"
    assert binary_size(512) == "512 B"


def test_plot_sweep_marks_caches_and_plateaus():
    s = sizes()
    frame = pd.DataFrame({"size_bytes": s, "bandwidth": cache_model(s, CPU, noise=0.02, seed=1), "spread": 0.02})
    caches = {"l1": 64 * KiB, "l2": 2 * MiB, "l3": 32 * MiB}
    fig = plot_sweep({"read": frame}, cache_sizes=caches, title="synthetic")
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("L1 ") and "GB/s" in t for t in texts)
    assert any(t.startswith("DRAM 2") for t in texts)
    assert "L2 2 MiB" in texts
    labels = [lab.get_text() for lab in ax.get_xticklabels()]
    assert any("MiB" in lab for lab in labels) and any("KiB" in lab for lab in labels)
    assert ax.get_title() == "synthetic"
    fig.canvas.draw()
    ylabels = [lab.get_text() for lab in ax.get_yticklabels(minor=True) + ax.get_yticklabels()]
    assert any(lab.endswith("GB/s") for lab in ylabels) and not any("e+" in lab for lab in ylabels)

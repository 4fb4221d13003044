"""The paper's DeepCAM V100 kernels (bundled example) projected onto every GPU spec we know and onto the
measured machine files in the repository: every projection holds together, and where a kernel is
DRAM-bound on both sides with nothing else said, its speed-up is exactly the ratio of the DRAM
bandwidths (bus width x data rate / 8 on the target, the demo machine's measured 828 GB/s here).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.machine.specs import get_spec, list_specs
from roofline.projection import project

ROOT = Path(__file__).resolve().parents[1]
MEASURED = [ROOT / "benchmarks" / "results" / "cpu_vm_default.json"]


@pytest.fixture(scope="module")
def example():
    files, machine = api.example_files()
    return api.read(files), api.load_machine(machine)


def _consistent(p) -> None:
    f = p.frame[p.frame["projected"]]
    assert len(f)
    low, proj, high, best = (f[c].to_numpy(float) for c in ("low_time_s", "projected_time_s", "high_time_s", "best_time_s"))
    assert np.all(low <= proj * (1 + 1e-12)) and np.all(proj <= high * (1 + 1e-12))
    assert np.all(low <= best * (1 + 1e-12))
    t = p.totals
    assert t["projected_time_s"] == pytest.approx(proj.sum(), rel=1e-12)
    assert t["speedup"] == pytest.approx(t["time_s"] / t["projected_time_s"], rel=1e-12)
    assert t["speedup_low"] <= t["speedup"] <= t["speedup_high"]


@pytest.mark.parametrize("key", list_specs())
def test_every_spec(example, key):
    table, source = example
    target = api.load_machine(key)
    p = project(table, target, source, by="phase")
    _consistent(p)
    spec = get_spec(key)
    bw_there = spec.memory_bus_bits / 8 * spec.memory_data_rate
    f = p.frame
    plain = f["projected"] & (f["bound"] == "dram") & (f["bound_target"] == "dram") & f["notes"].map(
        lambda n: set(n) <= {"unknown-flops", "short-launch"})  # neither moves the projection itself
    assert plain.any(), f[["kernel_name", "bound", "bound_target", "notes"]]
    ratio = bw_there / source.memory["dram"]
    assert f.loc[plain, "speedup"].to_numpy(float) == pytest.approx(np.full(int(plain.sum()), ratio), rel=1e-9)


@pytest.mark.parametrize("path", MEASURED, ids=lambda p: p.name)
def test_measured_machine_files(example, path, tmp_path):
    """The machine block of a committed `roofline machine` run (the CPU of the development VM), as the
    machine file `roofline machine -o` writes."""
    table, source = example
    block = tmp_path / "machine.json"
    block.write_text(json.dumps(json.loads(path.read_text())["machine"]))
    target = api.load_machine(block)
    assert target.source == "measured"
    p = project(table, target, source, by="name")
    _consistent(p)
    f = p.frame[p.frame["projected"]]
    # a CPU's measured DRAM is far below the V100's HBM: every DRAM-bound kernel slows by at least that ratio
    slower = source.memory["dram"] / target.memory["dram"]
    dram = f[(f["bound"] == "dram") & (f["bound_target"] == "dram")]
    assert len(dram) and np.all(dram["projected_time_s"] >= dram["time_s"] * slower * (1 - 1e-9))
    assert math.isfinite(p.totals["speedup"])

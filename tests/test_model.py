"""The data model: Machine JSON round trip and validation; kernel-table schema and aggregation."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from roofline.errors import MachineError, OutputExistsError
from roofline.kernels import COLUMN_NAMES, aggregate, from_records, validate
from roofline.machine import Machine
from roofline.units import format_si, si_factor


def v100() -> Machine:
    return Machine(
        name="V100", source="measured", sm_clock_hz=1.53e9,
        memory={"HBM": 828.758e9, "l2": 2996.77e9, "l1": 14336e9},
        compute={"fp64": 7068.86e9, "fp32": 14e12},
    )


def test_machine_json_round_trip(tmp_path):
    m = v100()
    assert list(m.memory) == ["l1", "l2", "dram"]  # aliases mapped, innermost first
    path = m.save(tmp_path / "m.json")
    d = json.loads(path.read_text())
    assert d["schema"] == "roofline.machine/1"
    assert d["memory"]["dram"] == 828.758e9
    assert Machine.load(path) == m


def test_machine_save_refuses_to_overwrite(tmp_path):
    p = tmp_path / "m.json"
    p.write_text("precious")
    with pytest.raises(OutputExistsError):
        v100().save(p)
    assert p.read_text() == "precious"
    v100().save(p, force=True)
    assert Machine.load(p).name == "V100"


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_machine_rejects_non_positive_ceilings(bad):
    with pytest.raises(MachineError):
        Machine(name="x", source="measured", memory={"dram": bad}, compute={})


def test_machine_load_errors(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(MachineError, match="not JSON"):
        Machine.load(p)
    p.write_text(json.dumps({"schema": "other"}))
    with pytest.raises(MachineError, match="schema"):
        Machine.load(p)


def test_clock_scaling_scales_compute_and_caches_not_dram():
    m = v100().scaled_to_clock(1.53e9 / 2)
    assert m.compute["fp32"] == pytest.approx(7e12)
    assert m.memory["l1"] == pytest.approx(7168e9)
    assert m.memory["dram"] == 828.758e9


def test_units():
    assert si_factor("Kbyte") == 1e3
    assert si_factor("Gbyte") == 1e9
    assert si_factor("KiB") == 1024
    assert si_factor("nsecond") == 1e-9
    assert si_factor("usecond") == 1e-6
    assert si_factor("cycle/nsecond") == 1e9
    assert si_factor("Gbyte/second") == 1e9
    assert si_factor("%") == 1.0
    assert format_si(3.35e12, "B/s") == "3.35 TB/s"
    assert format_si(1.5e-5, "s") == "15 µs"
    assert format_si(float("nan"), "s") == "-"


def test_table_unknown_stays_unknown_through_aggregation():
    t = from_records([
        dict(kernel_name="k", time_s=1.0, fp32_flops=10.0, fp64_flops=0.0, fp16_flops=0.0, tensor_flops=0.0, dram_bytes=5.0),
        dict(kernel_name="k", time_s=3.0, fp32_flops=30.0, fp64_flops=0.0, fp16_flops=0.0, tensor_flops=0.0, dram_bytes=np.nan),
    ])
    assert list(t.columns) == list(COLUMN_NAMES)
    agg = aggregate(t, by="name")
    assert len(agg) == 1
    row = agg.iloc[0]
    assert row["launches"] == 2
    assert row["time_s"] == 4.0
    assert row["flops"] == 40.0
    assert not row["flops_partial"]
    assert math.isnan(row["dram_bytes"])  # unknown in one launch -> unknown, never a partial sum


def test_aggregate_by_phase_and_clock_weighting():
    t = from_records([
        dict(kernel_name="k", phase="forward", time_s=1.0, sm_clock_hz=1e9),
        dict(kernel_name="k", phase="forward", time_s=3.0, sm_clock_hz=2e9),
        dict(kernel_name="k", phase="backward", time_s=1.0, sm_clock_hz=1e9),
    ])
    by_phase = aggregate(t, by="phase")
    assert set(by_phase["phase"]) == {"forward", "backward"}
    fwd = by_phase[by_phase["phase"] == "forward"].iloc[0]
    assert fwd["sm_clock_hz"] == pytest.approx((1e9 * 1 + 2e9 * 3) / 4)
    by_name = aggregate(t, by="name")
    assert by_name.iloc[0]["phase"] == "backward,forward"


def test_validate_rejects_negative_time():
    t = from_records([dict(kernel_name="k", time_s=1.0)])
    t.loc[0, "time_s"] = -1.0
    with pytest.raises(Exception, match="negative"):
        validate(t)


def test_written_files_get_ordinary_permissions(tmp_path):
    import os
    import stat

    from roofline.writing.safe import _umask, write_text

    p = write_text(tmp_path / "out.json", "{}")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o666 & ~_umask()
    assert not list(tmp_path.glob(".out.json.*"))  # no temporary file left behind


def test_machine_and_analysis_pickle_round_trip():
    import pickle

    from roofline.analysis import analyze

    m = v100()
    assert pickle.loads(pickle.dumps(m)) == m
    t = from_records([dict(kernel_name="k", phase="forward", time_s=1e-3, fp32_flops=1e9, fp64_flops=0.0,
                           fp16_flops=0.0, tensor_flops=0.0, l1_bytes=1e8, l2_bytes=1e8, dram_bytes=1e8)])
    a = analyze(t, m)
    b = pickle.loads(pickle.dumps(a))
    assert b.machine == a.machine and dict(b.phase_times) == dict(a.phase_times) == {"forward": 1e-3}
    pd.testing.assert_frame_equal(b.frame, a.frame)


def test_import_has_no_heavy_or_gpu_side_effects():
    """`import roofline` (and its machine and benchmark API) loads no GPU library, no numba, no torch, no plotting."""
    import subprocess
    import sys

    code = ("import sys, roofline, roofline.machine, roofline.bench as B; B.measure_cpu; B.measure_gpu; "
            "print(sorted(m for m in ('cupy', 'numba', 'torch', 'pynvml', 'matplotlib', 'plotly', 'nvtx') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"  # each is imported inside the function that needs it

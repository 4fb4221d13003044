"""ERT and NERSC machine files: readers against the files' own numbers, SI units, export round trip."""

from __future__ import annotations

import json

import pytest

from roofline.errors import MachineError
from roofline.machine import Machine
from roofline.writing.ert_json import to_ert_json
from roofline.views.chart.machine import plot_machine
from roofline.readers import read_machine
from roofline.readers.machines.ert import compute_name, level_name

G = 1e9

# file -> (memory GB/s, compute GFLOP/s) as printed in the file (ERT's decimal giga)
EXPECTED = {
    "v100_cori_ert_hierarchical_data.txt": (
        {"l1": 14336, "l2": 2996.77, "dram": 828.758}, {"fp64": 7068.86, "fp64_no_fma": 3535.79}),
    "cpu_skylake_apollo_uoregon_roofline.json": ({"l1": 8259.44, "l2": 3120.85, "dram": 200.3}, {"fp64": 2772.78}),
    "cpu_a64fx_roofline_DP.json": ({"l1": 5802.6, "l2": 2597.6, "dram": 840.6}, {"fp64": 2761.3}),
    "cpu_xeonE5530_ert_roofline.json": (
        {"l1": 1002.83, "l2": 541.98, "l3": 290.41, "dram": 68.76}, {"fp64": 288.33}),
    "cpu_xeonE5530_ert_sum_FLOPS001_MPI8_OMP1.txt": (
        {"l1": 1068.01, "l2": 531.38, "l3": 285.83, "l4": 69.05, "dram": 47.71}, {"fp64": 67.12}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_ert_file_loads_with_its_numbers_in_si(data_dir, name):
    m = read_machine(data_dir / "ert" / name)
    memory, compute = EXPECTED[name]
    assert m.source == "measured"
    assert set(m.memory) == set(memory)
    assert set(m.compute) == set(compute)
    for k, v in memory.items():
        assert m.memory[k] == pytest.approx(v * G, rel=1e-12)  # GB/s is 1e9 B/s, not 2**30
    for k, v in compute.items():
        assert m.compute[k] == pytest.approx(v * G, rel=1e-12)
    fig = plot_machine(m)
    ax = fig.axes[0]
    assert len(ax.get_lines()) >= len(memory) + len(compute)
    assert any("dram" in t.get_text().lower() or "DRAM" in t.get_text() for t in ax.get_legend().get_texts())


def test_v100_numbers_from_the_paper(data_dir):
    m = read_machine(data_dir / "ert" / "v100_cori_ert_hierarchical_data.txt")
    assert m.memory["l1"] == 14336e9 and m.memory["l2"] == pytest.approx(2996.77e9)
    assert m.memory["dram"] == pytest.approx(828.758e9)  # 'HBM' is our dram
    assert m.compute["fp64"] == pytest.approx(7068.86e9)
    assert m.metadata["assumed"]  # the file does not say FP64: the metadata says it was assumed
    assert list(m.memory) == ["l1", "l2", "dram"]


def test_ert_units_are_decimal_not_binary():
    # ERT's preprocess.py: gbytes = bytes / (1000*1000*1000). 1000 GB/s must be 1e12 B/s.
    m = Machine.from_dict({"schema": "roofline.machine/1", "name": "x", "source": "measured",
                           "memory": {"dram": 1e12}, "compute": {"fp64": 1e12}})
    d = to_ert_json(m)
    assert d["empirical"]["gbytes"]["data"] == [["DRAM", 1000.0]]
    assert d["empirical"]["gflops"]["data"] == [["FP64 GFLOPs", 1000.0]]


def test_names_and_precisions():
    assert level_name("STREAM HBM") == "dram"
    assert level_name("HBM") == "dram"
    assert level_name("DRAM") == "dram"
    assert level_name("L4") == "l4"
    assert compute_name("FP64 GFLOPs", None) == ("fp64", False)
    assert compute_name("SP GFLOPs", None) == ("fp32", False)
    assert compute_name("GFLOPs", "fp32") == ("fp32", True)
    assert compute_name("GFLOPs", None) == ("fp64", True)
    assert compute_name("No-FMA", "fp64") == ("fp64_no_fma", True)


def test_precision_from_ert_config(tmp_path, data_dir):
    d = json.loads((data_dir / "ert" / "cpu_xeonE5530_ert_roofline.json").read_text())
    d["empirical"]["metadata"]["CONFIG"]["ERT_PRECISION"] = ["FP32"]
    p = tmp_path / "roofline.json"
    p.write_text(json.dumps(d))
    m = read_machine(p)
    assert m.compute == {"fp32": pytest.approx(288.33e9)}


def test_export_round_trip(tmp_path):
    m = Machine(name="AMD EPYC (2 threads)", source="measured",
                memory={"l1": 245e9, "l2": 190e9, "l3": 120e9, "dram": 31.5e9},
                compute={"fp32": 230e9, "fp64": 115e9}, spread={"dram": 0.02})
    d = to_ert_json(m)
    assert d["empirical"]["gflops"]["data"][0][0] == "FP64 GFLOPs"  # ERT's order: double first
    assert [row[0] for row in d["empirical"]["gbytes"]["data"]] == ["L1", "L2", "L3", "DRAM"]
    p = tmp_path / "roofline.json"
    p.write_text(json.dumps(d, indent=3))
    back = read_machine(p)
    assert back.name == m.name
    assert dict(back.memory) == pytest.approx(dict(m.memory), rel=1e-12)
    assert dict(back.compute) == pytest.approx(dict(m.compute), rel=1e-12)


def test_our_json_dispatches_to_machine_load(tmp_path):
    m = Machine(name="m", source="theoretical", memory={"dram": 1e11}, compute={"fp64": 1e12})
    path = m.save(tmp_path / "m.json")
    assert read_machine(path) == m


@pytest.mark.parametrize("text,match", [
    ('{"foo": 1}', "neither"),
    ("hello\nworld\n", "unknown machine file"),
    ("{broken", "not JSON"),
    ('{"empirical": {"gbytes": {"data": []}, "gflops": {"data": []}}}', "no empirical ceilings"),
    ("memroofs 1 2\nmem_roof_names 'L1'\n", "differ in length"),
    ("    0.00 GFLOPs\n\nMETA_DATA\n", "positive"),
])
def test_bad_machine_files_raise_typed_errors(tmp_path, text, match):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(MachineError, match=match):
        read_machine(p)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(MachineError, match="no such file"):
        read_machine(tmp_path / "absent.json")
    with pytest.raises(MachineError, match="folder"):
        read_machine(tmp_path)

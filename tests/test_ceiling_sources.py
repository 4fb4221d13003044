"""Per-ceiling provenance: Machine.sources, its JSON, combining, and the terminal's machine line."""

from __future__ import annotations

import json
import pickle

import pytest

from roofline import api
from roofline.errors import MachineError
from roofline.machine.model import Machine, ceiling_label, combine, sources_summary


def ert() -> Machine:
    return Machine(name="ert", source="measured", sm_clock_hz=1.53e9,
                   memory={"l1": 14336e9, "l2": 2996.77e9, "hbm": 828.758e9}, compute={"fp64": 7068.86e9})


def spec() -> Machine:
    return Machine(name="V100-SXM2", source="theoretical", sm_clock_hz=1.53e9,
                   memory={"dram": 900e9}, compute={"fp64": 7.8e12, "fp32": 15.6672e12, "tensor_fp16": 125.3376e12})


def test_every_ceiling_defaults_to_the_machine_source():
    m = ert()
    assert dict(m.sources) == {"memory.l1": "measured", "memory.l2": "measured", "memory.dram": "measured",
                               "compute.fp64": "measured"}
    assert m.source_of("hbm") == m.source_of("memory.dram") == "measured"
    with pytest.raises(KeyError):
        m.source_of("fp32")


def test_combine_keeps_each_ceilings_source_and_value():
    m = combine([ert(), spec()])
    assert m.source_of("dram") == "measured" and m.memory["dram"] == 828.758e9  # first wins
    assert m.source_of("fp64") == "measured" and m.compute["fp64"] == 7068.86e9
    assert m.source_of("fp32") == "theoretical" and m.compute["fp32"] == 15.6672e12
    assert m.ceilings_by_source() == {
        "measured": ["memory.l1", "memory.l2", "memory.dram", "compute.fp64"],
        "theoretical": ["compute.fp32", "compute.tensor_fp16"],
    }
    assert sources_summary(m) == "measured: L1, L2, DRAM, FP64; theoretical: FP32, Tensor FP16"
    # scaling to another clock keeps them
    assert m.scaled_to_clock(1.3e9).sources == m.sources


def test_sources_round_trip_through_json_and_pickle(tmp_path):
    m = combine([ert(), spec()])
    d = json.loads(m.to_json())
    assert d["sources"]["compute.tensor_fp16"] == "theoretical"
    back = Machine.from_dict(d)
    assert back == m and back.sources == m.sources
    assert pickle.loads(pickle.dumps(m)).sources == m.sources


def test_old_files_without_sources_still_read():
    d = ert().to_dict()
    del d["sources"]
    assert Machine.from_dict(d).source_of("l2") == "measured"


def test_demo_machine_reads_its_described_origins():
    """The demo JSON has no 'sources' but describes each ceiling ('theoretical: 80 SMs x ...')."""
    m = api.load_machine(api.example_files()[1])
    assert m.source == "measured"
    assert {c: m.source_of(c) for c in ("l1", "l2", "dram", "fp64", "fp32", "tensor_fp16")} == {
        "l1": "measured", "l2": "measured", "dram": "measured", "fp64": "measured",
        "fp32": "theoretical", "tensor_fp16": "theoretical"}


def test_bad_sources_refused():
    with pytest.raises(MachineError, match="not one of its ceilings"):
        Machine(name="x", source="measured", memory={"dram": 1e9}, compute={}, sources={"compute.fp32": "measured"})
    with pytest.raises(MachineError, match="must be one of"):
        Machine(name="x", source="measured", memory={"dram": 1e9}, compute={}, sources={"dram": "guessed"})
    d = ert().to_dict()
    d["sources"] = {"memory.dram": "guessed"}
    with pytest.raises(MachineError, match="must be one of"):
        Machine.from_dict(d)


def test_labels():
    assert [ceiling_label(k) for k in ("memory.dram", "l1", "compute.tensor_fp16", "fp64_no_fma", "compute.fp32")] == [
        "DRAM", "L1", "Tensor FP16", "FP64 no-FMA", "FP32"]
    assert ceiling_label("dram", {"dram": "HBM"}) == "HBM"


def test_terminal_machine_line_names_measured_and_theoretical_ceilings():
    from rich.console import Console

    from roofline.views.terminal import summary_renderable

    files, demo = api.example_files()
    console = Console(width=400, record=True)
    console.print(summary_renderable(api.analyze(files, demo)))
    text = console.export_text()
    line = next(x for x in text.splitlines() if x.startswith("machine:"))
    assert line == ("machine: V100-SXM2 (NERSC Cori GPU) at 1.31 GHz; "
                    "measured: L1, L2, DRAM, FP64; theoretical: FP32, Tensor FP16")

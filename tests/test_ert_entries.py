"""ERT files read whole: every FLOP entry kept with its name, the highest (FMA vector) as the precision's
ceiling unless the user picks another (FILE#ENTRY), all of them drawable; and a CPU's machine refused
for a GPU profile (or the reverse) unless asked.

The files (tests/data/ert/PROVENANCE.md): HPCL/roofline_python's cascadelake ERT roofline.json, whose
gflops data are, in GFLOP/s, 'FP64 Vector GFLOPs FMA' 3499.9, 'FP64 Vector GFLOPs' 1749.95,
'FP64 Scalar GFLOPs FMA' 218.75, 'FP64 Scalar GFLOPs' 109.375 (in that order: a reader keeping the last
held FP64 kernels to 109.375), and its skylake-gold file with the same four forms in SP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import MachineError
from roofline.kernels import KernelTable, from_records
from roofline.machine import Machine
from roofline.machine.processor import machine_processor, table_processor
from roofline.readers import read_machine
from roofline.views.chart.style import chart_compute_ceilings

G = 1e9
DATA = Path(__file__).parent / "data"
CASCADE = DATA / "ert" / "cpu_cascadelake_roofline_DP.json"
SKYLAKE_SP = DATA / "ert" / "cpu_skylake_gold_multi_roofs_SP.json"
SKYLAKE = DATA / "ert" / "cpu_skylake_apollo_uoregon_roofline.json"
V100_LAMB = DATA / "ncu" / "v100_deepcam_lamb"


def _fp64_kernel() -> KernelTable:
    """One FP64 kernel stated by hand: 580 GFLOP in 1 s over 1 GB of DRAM traffic (580 FLOP/B, far right
    of every memory roof), so that its % of roofline is 580 GFLOP/s over the FP64 ceiling."""
    return KernelTable(frame=from_records([{
        "kernel_name": "dgemm_like", "time_s": 1.0, "launches": 1, "fp64_flops": 5.8e11, "fp32_flops": 0.0,
        "fp16_flops": 0.0, "tensor_flops": 0.0, "dram_bytes": 1e9, "source": "stated by hand"}]))


def test_every_fp64_entry_is_kept_with_its_name_and_the_ceiling_is_the_fma_vector_one():
    m = read_machine(CASCADE)
    assert dict(m.compute) == pytest.approx({"fp64": 3499.9 * G, "fp64_vector": 1749.95 * G,
                                             "fp64_scalar_fma": 218.75 * G, "fp64_scalar": 109.375 * G}, rel=1e-12)
    assert {k: m.metadata["ert_names"][k] for k in m.compute} == {
        "fp64": "FP64 Vector GFLOPs FMA", "fp64_vector": "FP64 Vector GFLOPs",
        "fp64_scalar_fma": "FP64 Scalar GFLOPs FMA", "fp64_scalar": "FP64 Scalar GFLOPs"}
    assert dict(m.memory) == pytest.approx({"l1": 13932.9 * G, "l2": 3608.6 * G, "l3": 1361.2 * G,
                                            "dram": 203.2 * G}, rel=1e-12)
    assert m.peak_flops == pytest.approx(3499.9 * G)  # a variant is never the machine's peak
    assert "'FP64 Vector GFLOPs FMA'" in m.metadata["ert_choice"]["fp64"]


def test_export_keeps_every_entry_and_its_name(tmp_path):
    from roofline.writing.ert_json import to_ert_json

    d = to_ert_json(read_machine(CASCADE))
    assert dict(d["empirical"]["gflops"]["data"]) == pytest.approx(
        dict(json.loads(CASCADE.read_text())["empirical"]["gflops"]["data"]), rel=1e-12)
    (tmp_path / "r.json").write_text(json.dumps(d))
    assert dict(read_machine(tmp_path / "r.json").compute) == pytest.approx(dict(read_machine(CASCADE).compute))


def test_sp_entries_of_the_skylake_file():
    m = read_machine(SKYLAKE_SP)
    assert dict(m.compute) == pytest.approx({"fp32": 5524.0 * G, "fp32_vector": 2762.0 * G,
                                             "fp32_scalar_fma": 345.2 * G, "fp32_scalar": 172.6 * G}, rel=1e-12)
    assert m.metadata["ert_names"]["fp32"] == "Peak SP Vector GFlops FMA"
    assert m.memory["dram"] == pytest.approx(640.6 * G)  # 'DDR Mem'


def test_a_kernel_is_held_to_the_fma_vector_ceiling_and_the_note_names_every_entry():
    analysis = api.analyze(_fp64_kernel(), CASCADE)
    row = analysis.frame.iloc[0]
    assert row["compute_peak"] == pytest.approx(3499.9 * G)
    assert row["pct_of_roofline"] == pytest.approx(580 / 3499.9)  # 16.6 %, not 580 / 109.375 = 530 %
    note = next(n for n in analysis.notes if "FP64 ceiling" in n)
    for name in ("FP64 Vector GFLOPs FMA", "FP64 Vector GFLOPs", "FP64 Scalar GFLOPs FMA", "FP64 Scalar GFLOPs"):
        assert f"'{name}'" in note


@pytest.mark.parametrize("pick,fp64,moved", [
    ("FP64 Scalar GFLOPs", 109.375, "fp64_vector_fma"),
    ("fp64 scalar gflops fma", 218.75, "fp64_vector_fma"),  # any case
    ("fp64_vector", 1749.95, "fp64_vector_fma"),            # or our key
])
def test_the_user_picks_another_entry(pick, fp64, moved):
    m = api.load_machine(f"{CASCADE}#{pick}")
    assert m.compute["fp64"] == pytest.approx(fp64 * G)
    assert m.compute[moved] == pytest.approx(3499.9 * G)  # the highest is kept too
    assert len(m.compute) == 4
    assert "as picked" in m.metadata["ert_choice"]["fp64"]


def test_the_pick_from_the_command_line(tmp_path):
    kernels = tmp_path / "k.kernels.json"
    from roofline.readers import kernel_json

    kernels.write_text(kernel_json.to_json(_fp64_kernel()))
    out = tmp_path / "out.json"
    assert main(["analyze", str(kernels), "-m", f"{CASCADE}#FP64 Scalar GFLOPs", "--json", str(out), "-q"]) == 0
    doc = json.loads(out.read_text())
    assert doc["machine"]["compute"]["fp64"] == pytest.approx(109.375 * G)
    assert doc["kernels"][0]["pct_of_roofline"] == pytest.approx(580 / 109.375)
    assert main(["analyze", str(kernels), "-m", str(CASCADE), "--json", str(out), "--force", "-q"]) == 0
    assert json.loads(out.read_text())["kernels"][0]["pct_of_roofline"] == pytest.approx(580 / 3499.9)
    # the picked file is an input: never written over
    assert main(["analyze", str(kernels), "-m", f"{CASCADE}#fp64_scalar", "--json", str(CASCADE), "--force"]) == 2


def test_bad_picks_are_refused(tmp_path):
    with pytest.raises(MachineError, match="no compute entry named 'FP64 Turbo'.*'FP64 Scalar GFLOPs'"):
        api.load_machine(f"{CASCADE}#FP64 Turbo")
    with pytest.raises(MachineError, match="two picks for FP64"):
        read_machine(CASCADE, pick=["FP64 Scalar GFLOPs", "FP64 Vector GFLOPs"])
    ours = Machine(name="m", source="measured", memory={"dram": 1e11}, compute={"fp64": 1e12}).save(tmp_path / "m.json")
    with pytest.raises(MachineError, match="roofline machine file"):
        api.load_machine(f"{ours}#FP64 Scalar GFLOPs")


def test_nersc_fma_and_no_fma_and_its_pick():
    m = read_machine(DATA / "ert" / "v100_cori_ert_hierarchical_data.txt", pick=["No-FMA"])
    assert m.compute["fp64"] == pytest.approx(3535.79 * G)
    assert m.compute["fp64_fma"] == pytest.approx(7068.86 * G)


def test_charts_draw_every_entry_with_ceilings_all():
    analysis = api.analyze(_fp64_kernel(), CASCADE)
    assert list(chart_compute_ceilings(analysis.machine, analysis.frame, "used")) == ["fp64"]
    assert chart_compute_ceilings(analysis.machine, analysis.frame, "all") == pytest.approx(
        {"fp64": 3499.9 * G, "fp64_vector": 1749.95 * G, "fp64_scalar_fma": 218.75 * G, "fp64_scalar": 109.375 * G})
    texts = [t.get_text() for ax in api.plot(analysis, ceilings="all").axes for t in ax.texts]
    for label in ("FP64 3.5 TFLOP/s", "FP64 vector 1.75 TFLOP/s", "FP64 scalar FMA 219 GFLOP/s",
                  "FP64 scalar 109 GFLOP/s"):
        assert label in texts
    used = [t.get_text() for ax in api.plot(analysis).axes for t in ax.texts]
    assert "FP64 3.5 TFLOP/s" in used and not any(t.startswith("FP64 scalar") for t in used)


# -- CPU or GPU ---------------------------------------------------------------------------------------


def test_what_says_cpu_or_gpu_on_real_files():
    for name in ("cpu_cascadelake_roofline_DP.json", "cpu_skylake_apollo_uoregon_roofline.json",
                 "cpu_a64fx_roofline_DP.json", "cpu_xeonE5530_ert_roofline.json",
                 "cpu_xeonE5530_ert_sum_FLOPS001_MPI8_OMP1.txt"):
        kind, why = machine_processor(read_machine(DATA / "ert" / name))
        assert (kind, "ERT_GPU" in why) == ("cpu", True), name
    assert machine_processor(read_machine(DATA / "ert" / "v100_cori_ert_hierarchical_data.txt"))[0] is None
    assert machine_processor(api.load_machine("v100-sxm2"))[0] == "gpu"
    assert machine_processor(api.load_machine(api.example_files()[1]))[0] == "gpu"  # tensor_fp16 ceiling
    assert table_processor(api.read(V100_LAMB))[0] == "gpu"  # ncu metrics (no device name in these files)
    assert table_processor(_fp64_kernel())[0] is None  # stated by hand: unknown


def test_a_cpu_ert_file_for_a_gpu_profile_is_refused_in_one_line(capsys):
    assert main(["analyze", str(V100_LAMB), "-m", str(SKYLAKE)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"roofline: error: {SKYLAKE}: ")
    assert "describes a CPU" in lines[0] and "ran on a GPU" in lines[0] and "--allow-other-machine" in lines[0]
    # combined with a GPU spec it is still a CPU's file
    assert main(["analyze", str(V100_LAMB), "-m", str(CASCADE), "-m", "v100-sxm2"]) == 2
    assert "describes a CPU" in capsys.readouterr().err


def test_asked_for_it_is_applied_with_a_note(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["analyze", str(V100_LAMB), "-m", str(SKYLAKE), "--allow-other-machine", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["machine"]["compute"]["fp64"] == pytest.approx(2772.78 * G)
    assert any("describes a CPU" in n and "applied as asked" in n for n in doc["notes"])
    with pytest.raises(MachineError, match="describes a CPU"):
        api.analyze(api.read(V100_LAMB), SKYLAKE)
    assert api.analyze(api.read(V100_LAMB), SKYLAKE, allow_other_machine=True).machine.name == "apollo.cs.uoregon.edu"


def test_unknown_is_not_refused():
    table = api.read(V100_LAMB)
    analysis = api.analyze(table, DATA / "ert" / "v100_cori_ert_hierarchical_data.txt")  # says no processor
    assert analysis.machine.compute["fp64"] == pytest.approx(7068.86 * G)
    assert api.analyze(_fp64_kernel(), "v100-sxm2").machine is not None  # a table that says nothing


def test_a_cpu_ert_target_for_a_gpu_projection_is_refused():
    with pytest.raises(MachineError, match="the target .* describes a CPU"):
        api.project(V100_LAMB, SKYLAKE, source="v100-sxm2")


def test_a_gpu_spec_for_a_cpu_torch_profile_is_refused():
    torch = pytest.importorskip("torch")
    from roofline.profiling.counter_free.collect import rows_to_table
    from roofline.profiling.counter_free.recorder import Recorder

    model = torch.nn.Linear(8, 4)
    with Recorder() as rec:
        model(torch.ones(2, 8))
    table = rows_to_table(rec.rows(), "test")
    assert table_processor(table) == ("cpu", "PyTorch operators on CPU tensors only")
    with pytest.raises(MachineError, match="'Tesla V100 SXM2' describes a GPU .* ran on a CPU"):
        api.analyze(table, "v100-sxm2")
    assert api.analyze(table, CASCADE).machine.compute["fp64"] == pytest.approx(3499.9 * G)  # CPU with CPU

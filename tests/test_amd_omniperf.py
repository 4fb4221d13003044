"""AMD Instinct workloads of Omniperf (tests/data/amd, real, from ROCm/omniperf's tests: PROVENANCE.md in
each folder): the kernel table's counts and times against the files' cells computed here by hand with
the csv module, and against what vcopy is known to move (1,048,576 doubles read and written per
dispatch: sample/vcopy.cpp)."""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.errors import InputError
from roofline.readers.amd.omniperf import read_roofline_csv

DATA = Path(__file__).resolve().parent / "data" / "amd"
MI200 = DATA / "omniperf_vcopy_mi200_gfx90a"
MI300X = DATA / "omniperf_vcopy_mi300x_gfx942"
MI300A = DATA / "omniperf_vcopy_mi300a_gfx942"
MI100 = DATA / "omniperf_vcopy_mi100_gfx908"
MIXBENCH = DATA / "omniperf_mixbench_mi200_gfx90a"
VCOPY_BYTES = 1_048_576 * 8  # each way, per dispatch


def rows(folder: Path, name: str = "pmc_perf.csv") -> list[dict[str, str]]:
    path = folder / name
    if not path.exists():
        with gzip.open(folder / (name + ".gz"), "rt", newline="") as fh:
            return list(csv.DictReader(fh))
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def num(row: dict[str, str], name: str) -> float:
    return float(row[name])


def test_vcopy_gfx90a_bytes_and_times_by_hand() -> None:
    table = api.read(MI200)
    frame = table.frame
    cells, stamps = rows(MI200), rows(MI200, "timestamps.csv")
    assert len(frame) == len(cells) == 3
    for i, (r, t) in enumerate(zip(cells, stamps)):
        assert frame["time_s"].iloc[i] == pytest.approx((num(t, "End_Timestamp") - num(t, "Start_Timestamp")) * 1e-9, rel=1e-12)
        l2 = 64 * sum(num(r, f"TCP_TCC_{k}_sum") for k in ("READ_REQ", "WRITE_REQ", "ATOMIC_WITH_RET_REQ", "ATOMIC_WITHOUT_RET_REQ"))
        hbm = (32 * num(r, "TCC_EA_RDREQ_32B_sum") + 64 * (num(r, "TCC_EA_RDREQ_sum") - num(r, "TCC_EA_RDREQ_32B_sum"))
               + 64 * num(r, "TCC_EA_WRREQ_64B_sum") + 32 * (num(r, "TCC_EA_WRREQ_sum") - num(r, "TCC_EA_WRREQ_64B_sum")))
        assert frame["l2_bytes"].iloc[i] == l2 == 2 * VCOPY_BYTES  # what vcopy moves, exactly
        assert frame["dram_bytes"].iloc[i] == hbm
        assert frame["l1_bytes"].iloc[i] == 64 * num(r, "TCP_TOTAL_CACHE_ACCESSES_sum")
        lds = (num(r, "SQ_LDS_IDX_ACTIVE") - num(r, "SQ_LDS_BANK_CONFLICT")) * 128
        assert frame["shared_bytes"].iloc[i] == lds == 0
        assert frame["fp64_flops"].iloc[i] == 0 and not frame["flops_partial"].iloc[i]  # a copy: no FLOPs, known
    assert frame["dram_bytes"].iloc[0] == pytest.approx(2 * VCOPY_BYTES, rel=1e-3)  # cold: all of it from HBM
    assert set(frame["kernel_name"].astype(str)) == {"vecCopy(double*, double*, double*, int, int)"}
    assert set(frame["compute_capability"].astype(str)) == {"gfx90a"}
    assert set(frame["grid"].astype(str)) == {"(4096, 1, 1)"} and set(frame["block"].astype(str)) == {"(256, 1, 1)"}
    assert api.read(MI200 / "pmc_perf.csv").frame.equals(frame)  # a file of the folder reads as the folder


def test_vcopy_gfx942_l2_reads_are_128_byte_and_writes_64() -> None:
    for folder in (MI300X, MI300A):
        frame = api.read(folder).frame
        for i, r in enumerate(rows(folder)):
            l2 = 128 * num(r, "TCP_TCC_READ_REQ_sum") + 64 * (
                num(r, "TCP_TCC_WRITE_REQ_sum") + num(r, "TCP_TCC_ATOMIC_WITH_RET_REQ_sum")
                + num(r, "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum"))
            assert frame["l2_bytes"].iloc[i] == l2 == 2 * VCOPY_BYTES
            hbm = (128 * num(r, "TCC_BUBBLE_sum") + 32 * num(r, "TCC_EA0_RDREQ_32B_sum")
                   + 64 * (num(r, "TCC_EA0_RDREQ_sum") - num(r, "TCC_BUBBLE_sum") - num(r, "TCC_EA0_RDREQ_32B_sum"))
                   + 64 * num(r, "TCC_EA0_WRREQ_64B_sum") + 32 * (num(r, "TCC_EA0_WRREQ_sum") - num(r, "TCC_EA0_WRREQ_64B_sum")))
            assert frame["dram_bytes"].iloc[i] == hbm == pytest.approx(2 * VCOPY_BYTES, rel=2e-3)


def test_timestamps_that_lost_their_digits_are_refused_not_zero() -> None:
    table = api.read(MI300X)
    assert rows(MI300X, "timestamps.csv")[0]["Start_Timestamp"] == "8.1097E+14"
    assert table.frame["time_s"].isna().all()
    note = next(w for w in table.warnings if "end timestamp not after" in w)
    assert "3 of 3 dispatches" in note and "8.1097E+14" in note and "never 0" in note
    assert any("Infinity Cache (MALL)" in w for w in table.warnings)  # the HBM level's caveat on MI300


def test_gfx908_flops_unknown_never_zero() -> None:
    table = api.read(MI100)
    for column in ("fp64_flops", "fp32_flops", "fp16_flops"):
        assert column not in table.frame.columns or table.frame[column].isna().all()
    assert any("gfx908" in w and "FLOPs per precision are unknown" in w for w in table.warnings)
    assert table.frame["l2_bytes"].tolist() == [2 * VCOPY_BYTES] * 3


def test_mixbench_flops_by_hand_and_packed_lower_bounds() -> None:
    table = api.read(MIXBENCH)
    frame = table.frame
    cells = rows(MIXBENCH)
    assert len(frame) == len(cells) == 167
    by_id = {int(r["Dispatch_ID"]): r for r in cells}
    checked = {"double": 0, "float": 0, "half2": 0}
    for i, dispatch in enumerate(frame["launch_id"]):
        r = by_id[int(dispatch)]
        for precision, column in (("F64", "fp64_flops"), ("F32", "fp32_flops"), ("F16", "fp16_flops")):
            hand = 64 * (num(r, f"SQ_INSTS_VALU_ADD_{precision}") + num(r, f"SQ_INSTS_VALU_MUL_{precision}")
                         + num(r, f"SQ_INSTS_VALU_TRANS_{precision}") + 2 * num(r, f"SQ_INSTS_VALU_FMA_{precision}"))
            assert frame[column].iloc[i] == hand
        assert frame["int_ops"].iloc[i] == 64 * (num(r, "SQ_INSTS_VALU_INT32") + num(r, "SQ_INSTS_VALU_INT64"))
        assert frame["conversion_ops"].iloc[i] == 64 * num(r, "SQ_INSTS_VALU_CVT")
        name = str(frame["kernel_name"].iloc[i])
        kind = next((k for k in ("double", "float", "half2") if f"benchmark_func<{'__half2' if k == 'half2' else k}," in name), None)
        if kind is None:
            continue
        checked[kind] += 1
        work = frame["fp64_flops"].iloc[i] + frame["fp32_flops"].iloc[i] + frame["fp16_flops"].iloc[i]
        # FP64 cannot be packed: exact; FP32 and FP16 work may be packed on gfx90a: a lower bound
        assert bool(frame["flops_partial"].iloc[i]) == (kind != "double" and work > 0)
    assert min(checked.values()) >= 10
    assert any("lower bounds" in w and "packed" in w for w in table.warnings)


def test_roofline_csv_is_a_measured_machine_and_the_default_ceilings() -> None:
    machine = read_roofline_csv(MIXBENCH / "roofline.csv")
    cells = rows(MIXBENCH, "roofline.csv")[0]
    assert machine.source == "measured"
    assert machine.memory["dram"] == float(cells["HBMBw"]) * 1e9
    assert machine.memory["l2"] == float(cells["L2Bw"]) * 1e9 and machine.memory["shared"] == float(cells["LDSBw"]) * 1e9
    assert machine.compute["fp64"] == float(cells["FP64Flops"]) * 1e9
    assert machine.compute["tensor_int8"] == float(cells["MFMAI8Ops"]) * 1e9
    assert machine.spread["dram"] == pytest.approx((float(cells["hbmBwHigh"]) - float(cells["HBMBwLow"])) / float(cells["HBMBw"]))
    result = api.analyze(MIXBENCH)
    assert result.machine is not None and result.machine.memory["dram"] == pytest.approx(machine.memory["dram"])
    assert any("roofline.csv" in n for n in result.notes)


def test_cli_json_of_a_workload_folder(tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    assert main(["analyze", str(MI200), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    kernel = doc["kernels"][0]
    assert kernel["launches"] == 3
    cells = rows(MI200, "timestamps.csv")
    assert kernel["time_s"] == pytest.approx(sum((num(t, "End_Timestamp") - num(t, "Start_Timestamp")) * 1e-9 for t in cells))
    assert kernel["bytes"]["l2"] == 3 * 2 * VCOPY_BYTES


def test_a_workload_without_gfx_is_refused_with_the_way_out(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "pmc_perf.csv").write_text((MI200 / "pmc_perf.csv").read_text())
    (folder / "sysinfo.csv").write_text("workload_name,gpu_model\nx,MI200\n")
    with pytest.raises(InputError) as info:
        api.read(folder)
    assert "gfx" in info.value.message and "workload folder" in (info.value.hint or "")
    assert main(["analyze", str(folder)]) == 2


def test_counts_are_never_negative_nor_nan_where_counters_exist() -> None:
    for folder in (MI200, MI300X, MI300A, MIXBENCH):
        frame = api.read(folder).frame
        for column in ("l1_bytes", "l2_bytes", "dram_bytes", "shared_bytes"):
            values = frame[column].to_numpy(dtype=float)
            assert np.isfinite(values).all() and (values >= 0).all(), (folder.name, column)
        assert not math.isnan(frame["dram_bytes"].sum())


def test_mixbench_beats_its_own_measured_hbm_ceiling_and_is_flagged() -> None:
    cells, stamps = rows(MIXBENCH), rows(MIXBENCH, "timestamps.csv")
    ceiling = float(rows(MIXBENCH, "roofline.csv")[0]["HBMBw"]) * 1e9
    rates = []
    for r, t in zip(cells, stamps):
        hbm = (32 * num(r, "TCC_EA_RDREQ_32B_sum") + 64 * (num(r, "TCC_EA_RDREQ_sum") - num(r, "TCC_EA_RDREQ_32B_sum"))
               + 64 * num(r, "TCC_EA_WRREQ_64B_sum") + 32 * (num(r, "TCC_EA_WRREQ_sum") - num(r, "TCC_EA_WRREQ_64B_sum")))
        rates.append(hbm / ((num(t, "End_Timestamp") - num(t, "Start_Timestamp")) * 1e-9))
    beyond = sum(rate > 1.05 * ceiling for rate in rates)
    assert beyond == 41 and max(rates) == pytest.approx(1.506e12, rel=1e-3)  # the figures docs/amd.md quotes
    result = api.analyze(MIXBENCH, by="launch")
    flagged = result.frame["inconsistent"].dropna().astype(str)
    assert len(flagged) == beyond and all("HBM traffic" in reason for reason in flagged)  # in AMD words


def test_lower_bounds_say_why_in_amd_words() -> None:
    """mixbench's FP32 and FP16 dispatches are lower bounds because packed instructions count once, not
    because a counter is missing: the notes and the table's legend say both; NVIDIA's keep their words."""
    from roofline.views.terminal import kernel_table_renderable
    from rich.console import Console

    result = api.analyze(MIXBENCH)
    note = next(n for n in result.notes if "(flops_partial)" in n)
    assert "packed instructions count once" in note
    console = Console(width=250, record=True)
    console.print(kernel_table_renderable(result, top=10))
    assert "a counter is missing, or packed instructions count once" in console.export_text()
    files, machine = api.example_files()
    nvidia = api.analyze(files, machine=str(machine))
    assert all("packed" not in n for n in nvidia.notes if "(flops_partial)" in n)

"""rocprofv3 and rocprof v1 outputs (readers/amd/rocprofv3.py, rocprof_files.py, rocprof_outputs.py):
counts and times against the files' cells computed here by hand with the csv module, on real outputs
(tests/data/amd, PROVENANCE.md in each folder) and on rocprofv3's documented layouts filled with a real
MI300X run's values (tests/rocprof_forms.py)."""

from __future__ import annotations

import csv
import gzip
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import amd_expected
import rocprof_forms
from roofline.counting.amd import required_counters
from roofline.errors import InputError
from roofline.readers import read_profile
from roofline.readers.amd.detect import amd_kind
from roofline.readers.amd.dispatches import amd_table
from roofline.readers.amd.rocprof_files import read_json, read_rocpd
from roofline.readers.amd.rocprof_outputs import read_rocprof, rocprof_kind
from roofline.readers.amd.rocprofv3 import gfx_name, merge_passes, read_counter_file, read_trace

DATA = Path(__file__).resolve().parent / "data" / "amd"
DOCS = DATA / "rocprofv3_vectorops_sdkdocs"
ROCPD = DATA / "rocprofcompute_vcopy_mi300x_gfx942_rocpd"
V1 = DATA / "rocprof1_mixbench_mi200_gfx90a"
LAPLACIAN = DATA / "rocprofv1_laplacian_mi250x_gfx90a"
VCOPY_BYTES = 1_048_576 * 8  # read and written per vcopy dispatch


def cells(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_long_form_pivots_to_one_row_per_dispatch_with_its_cells() -> None:
    rows = cells(DOCS / "counter_collection.csv")
    (one,) = read_counter_file(DOCS / "counter_collection.csv")
    assert len(one.ids) == len({r["Dispatch_Id"] for r in rows}) == 4
    for i, r in enumerate(rows):
        assert one.ids["launch_id"][i] == int(r["Dispatch_Id"])
        assert one.ids["kernel_name"][i] == r["Kernel_Name"]
        assert one.ids["agent"][i] == 1  # "Agent 1"
        assert one.ids["grid"][i] == f"({int(r['Grid_Size']) // int(r['Workgroup_Size'])}, 1, 1)"
        assert one.counters["SQ_WAVES"][i] == float(r["Counter_Value"])
    ids, _, notes = merge_passes([one])
    expected = amd_expected.ROCPROFV3_DOCS["counter_collection"]
    assert ids["time_s"].tolist() == pytest.approx([expected[d]["time_s"] for d in (1, 2, 3, 4)], rel=1e-12)
    assert ids["time_s"][0] == pytest.approx((int(rows[0]["End_Timestamp"]) - int(rows[0]["Start_Timestamp"])) * 1e-9)
    assert notes == []


def test_the_kernel_trace_gives_times_and_the_grid_per_dimension() -> None:
    rows = [r for r in cells(DOCS / "kernel_trace.csv") if r["Kind"] == "KERNEL_DISPATCH"]
    trace = read_trace(DOCS / "kernel_trace.csv")
    assert len(trace.ids) == len(rows) == 9
    for i, r in enumerate(rows):
        assert trace.ids["end_ns"][i] - trace.ids["start_ns"][i] == int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
        gx, wx = int(r["Grid_Size_X"]), int(r["Workgroup_Size_X"])
        assert trace.ids["grid"][i] == f"({gx // wx}, {r['Grid_Size_Y']}, {r['Grid_Size_Z']})"
    ids, _, _ = merge_passes([trace])
    expected = amd_expected.ROCPROFV3_DOCS["kernel_trace"]
    assert sorted(ids["time_s"]) == pytest.approx(sorted(v["time_s"] for v in expected.values()), rel=1e-12)


def test_a_file_of_twelve_passes_is_split_and_merged_by_dispatch() -> None:
    rows = cells(ROCPD / "pmc_perf.csv.gz")
    passes = read_counter_file(ROCPD / "pmc_perf.csv.gz")
    assert len(passes) == 12 and all(len(p.ids) == 3 for p in passes)
    ids, counters, notes = merge_passes(passes)
    assert ids["launch_id"].tolist() == [1, 2, 3] and notes == []
    for d in (1, 2, 3):
        mine = [r for r in rows if int(r["Dispatch_ID"]) == d]
        runs = {(int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in mine}  # one per pass
        assert len(runs) == 12
        assert ids["time_s"][d - 1] == pytest.approx(statistics.mean(e - s for s, e in runs) * 1e-9, rel=1e-12)
        assert ids["time_s"][d - 1] == pytest.approx(
            amd_expected.WORKLOADS[ROCPD.name]["dispatches"][d]["time_s_mean_of_passes"], rel=1e-12)
        value = {r["Counter_Name"]: float(r["Counter_Value"]) for r in mine}
        assert all(sum(r["Counter_Name"] == name for r in mine) == 1 for name in ("TCP_TCC_READ_REQ_sum", "TCC_EA0_RDREQ_sum"))
        assert counters["TCP_TCC_READ_REQ"][d - 1] == value["TCP_TCC_READ_REQ_sum"]  # X_sum is X's total
        assert counters["TCC_EA0_RDREQ"][d - 1] == value["TCC_EA0_RDREQ_sum"]
        assert value["TCC_BUBBLE_sum"] == sum(value[f"TCC_BUBBLE[{i}]"] for i in range(128))
        assert counters["TCC_BUBBLE"][d - 1] == value["TCC_BUBBLE_sum"]


def test_the_long_workload_is_read_alike_by_both_readers() -> None:
    """rocprof-compute's long pmc_perf.csv is the Omniperf reader's (a workload folder); the same file read
    as rocprofv3 passes gives the same table."""
    assert amd_kind(ROCPD) == "omniperf"
    theirs = read_profile(ROCPD).frame
    ids, counters, _ = merge_passes(read_counter_file(ROCPD / "pmc_perf.csv.gz"))
    mine = amd_table(ids, counters, "gfx942", "MI300X_A1", str(ROCPD)).frame
    expected = amd_expected.WORKLOADS[ROCPD.name]["dispatches"]
    for i, d in enumerate((1, 2, 3)):
        assert mine["dram_bytes"][i] == theirs["dram_bytes"][i] == expected[d]["hbm_bytes"]
        assert mine["l2_bytes"][i] == theirs["l2_bytes"][i] == expected[d]["l2_bytes_split"] == 2 * VCOPY_BYTES
        assert mine["time_s"][i] == pytest.approx(theirs["time_s"][i], rel=1e-12)


def test_rocprof_v1_results_by_hand_and_against_mixbench() -> None:
    rows = cells(V1 / "results.csv")
    table = read_profile(V1)
    frame = table.frame
    assert len(frame) == len(rows) == 167
    assert set(frame["compute_capability"]) == {"gfx90a"}
    for i, r in enumerate(rows):
        assert frame["time_s"][i] == pytest.approx((int(r["EndNs"]) - int(r["BeginNs"])) * 1e-9, rel=1e-12)
        fp64 = 64 * sum(float(r[f"SQ_INSTS_VALU_{op}_F64"]) for op in ("ADD", "MUL", "TRANS")) \
            + 128 * float(r["SQ_INSTS_VALU_FMA_F64"])
        assert frame["fp64_flops"][i] == fp64
        hbm = 32 * float(r["TCC_EA_RDREQ_32B_sum"]) + 64 * (float(r["TCC_EA_RDREQ_sum"]) - float(r["TCC_EA_RDREQ_32B_sum"])) \
            + 64 * float(r["TCC_EA_WRREQ_64B_sum"]) + 32 * (float(r["TCC_EA_WRREQ_sum"]) - float(r["TCC_EA_WRREQ_64B_sum"]))
        assert frame["dram_bytes"][i] == hbm
        assert frame["grid"][i] == f"({int(r['grd']) // int(r['wgr'])}, 1, 1)"
        m = re.search(r"benchmark_func<double, 256, 8u, (\d+)u>", r["KernelName"])
        if m:  # mixbench's double kernel: grd x (16 C + 8) FLOPs, one lane (tests/data/amd/EXPECTED.md)
            assert fp64 == int(r["grd"]) * (16 * int(m.group(1)) + 8)
    assert sum(bool(re.search(r"<double,", r["KernelName"])) for r in rows) == 33


def test_rocprof_v1_counters_and_times_from_two_runs_are_merged() -> None:
    """rocprof v1 counters without times (data_movement.csv) and times without counters (results.csv) of the
    same program: one table, matched by kernel name and order; the GPU named by the caller (no sysinfo kept)."""
    with pytest.raises(InputError, match="architecture"):
        read_rocprof(LAPLACIAN)
    table = read_rocprof(LAPLACIAN, arch="gfx90a", device_name="AMD Instinct MI250X/MI250")
    counted, timed = cells(LAPLACIAN / "data_movement.csv"), cells(LAPLACIAN / "results.csv")
    frame = table.frame
    assert len(frame) == len(counted) == len(timed) == 1004
    for n in amd_expected.LAPLACIAN["named"]:
        assert frame["kernel_name"][n] == counted[n]["KernelName"].removesuffix(".kd").strip() or n == 2
        assert frame["time_s"][n] == pytest.approx((int(timed[n]["EndNs"]) - int(timed[n]["BeginNs"])) * 1e-9, rel=1e-12)
        assert frame["time_s"][n] == pytest.approx(amd_expected.LAPLACIAN["named"][n]["results"]["time_s"], rel=1e-12)
        assert table.metrics["TCP_TCC_READ_REQ"][n] == float(counted[n]["TCP_TCC_READ_REQ_sum"])
        assert table.metrics["TCP_TOTAL_CACHE_ACCESSES"][n] == float(counted[n]["TCP_TOTAL_CACHE_ACCESSES_sum"])
    assert frame.get("l2_bytes", pd.Series(np.nan)).isna().all()  # TCP_TCC_ATOMIC_* not collected: unknown, never 0
    by_kernel = amd_expected.LAPLACIAN["data_movement_by_kernel"]  # HBM bytes by hand, per kernel (EXPECTED.md)
    names = frame["kernel_name"].astype(str)
    for name, want in by_kernel.items():
        mine = frame["dram_bytes"][names == name.removesuffix(".kd")]
        assert len(mine) == want["dispatches"] and float(mine.sum()) == want["hbm_bytes"], name
    assert any("TCP_TCC_ATOMIC" in " ".join(v) for v in table.column_notes.values())


def _folder_of_passes(root: Path, *, zero_first: bool = False) -> Path:
    """rocprofv3's layout for `roofline profile`: a traced run and one folder per counter pass."""
    (root / "trace").mkdir(parents=True)
    rocprof_forms.write_agents(root / "trace" / "run_agent_info.csv")
    rocprof_forms.write_trace(root / "trace" / "run_kernel_trace.csv", 4242, zero_first=zero_first)
    for i, counters in enumerate(required_counters("gfx942"), 1):
        (root / f"pass_{i}").mkdir()
        rocprof_forms.write_agents(root / f"pass_{i}" / "run_agent_info.csv")
        rocprof_forms.write_counters(root / f"pass_{i}" / "run_counter_collection.csv", list(counters), 4300 + i)
    return root


def test_passes_in_folders_are_merged_with_the_gpu_of_agent_info(tmp_path: Path) -> None:
    root = _folder_of_passes(tmp_path / "out")
    assert rocprof_kind(root) == "rocprof" and amd_kind(root) == "rocprof"
    table = read_profile(root)
    frame = table.frame
    recorded = {r["Counter_Name"]: r for r in cells(ROCPD / "pmc_perf.csv.gz") if r["Dispatch_ID"] == "1"}
    trace = cells(root / "trace" / "run_kernel_trace.csv")
    assert len(frame) == 3 and set(frame["compute_capability"]) == {"gfx942"} and set(frame["device"]) == {0}
    assert set(table.metrics["device_name"]) == {"AMD Instinct MI300X"}
    assert frame["time_s"][0] == (int(trace[0]["End_Timestamp"]) - int(trace[0]["Start_Timestamp"])) * 1e-9
    assert frame["grid"][0] == "(4096, 1, 1)" and frame["block"][0] == "(256, 1, 1)"
    value = {c: float(r["Counter_Value"]) for c, r in recorded.items()}
    assert frame["dram_bytes"][0] == (128 * value["TCC_BUBBLE_sum"] + 32 * value["TCC_EA0_RDREQ_32B_sum"]
                                      + 64 * (value["TCC_EA0_RDREQ_sum"] - value["TCC_BUBBLE_sum"] - value["TCC_EA0_RDREQ_32B_sum"])
                                      + 64 * value["TCC_EA0_WRREQ_64B_sum"]
                                      + 32 * (value["TCC_EA0_WRREQ_sum"] - value["TCC_EA0_WRREQ_64B_sum"]))
    assert frame["l2_bytes"][0] == 2 * VCOPY_BYTES
    assert any("traced without counters" in w for w in table.warnings)


def test_a_zero_duration_is_refused_with_one_note(tmp_path: Path) -> None:
    table = read_rocprof(_folder_of_passes(tmp_path / "out", zero_first=True))
    assert math.isnan(table.frame["time_s"][0]) and table.frame["time_s"][1:].notna().all()
    notes = [w for w in table.warnings if "not after their start" in w]
    assert len(notes) == 1 and "1 of 3 dispatches" in notes[0]


def test_json_sums_the_instances_of_a_counter(tmp_path: Path) -> None:
    n = next(i for i, p in enumerate(rocprof_forms.recorded_passes()) if "TCC_BUBBLE[0]" in p["values"])
    rocprof_forms.write_json(tmp_path / "vcopy_results.json", n)
    (one,), gpus = read_json(tmp_path / "vcopy_results.json")
    rows = [r for r in cells(ROCPD / "pmc_perf.csv.gz") if r["Counter_Name"].startswith("TCC_BUBBLE[")]
    for d in (1, 2, 3):
        mine = [r for r in rows if int(r["Dispatch_ID"]) == d]
        times = {(int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in mine}
        assert len(mine) == 128 and len(times) == 1
        assert one.counters["TCC_BUBBLE"][d - 1] == sum(float(r["Counter_Value"]) for r in mine)  # the instances' records
        (start, end), = times
        assert one.ids["end_ns"][d - 1] - one.ids["start_ns"][d - 1] == end - start
    assert gpus.gpus["arch"].tolist() == ["gfx942"]
    table = read_profile(tmp_path / "vcopy_results.json")
    assert set(table.frame["device"]) == {0} and set(table.metrics["device_name"]) == {"AMD Instinct MI300X"}


def test_rocpd_database_through_its_counters_collection_view(tmp_path: Path) -> None:
    n = next(i for i, p in enumerate(rocprof_forms.recorded_passes()) if "TCP_TCC_READ_REQ_sum" in p["values"])
    rocprof_forms.write_rocpd(tmp_path / "3554_results.db", n)
    (one,), gpus = read_rocpd(tmp_path / "3554_results.db")
    recorded = rocprof_forms.recorded_passes()[n]["values"]
    assert one.counters["TCP_TCC_READ_REQ_sum"].tolist() == [recorded["TCP_TCC_READ_REQ_sum"][d] for d in (1, 2, 3)]
    table = read_profile(tmp_path / "3554_results.db")  # by content: SQLite, but not an Nsight Systems export
    assert len(table.frame) == 3 and set(table.frame["compute_capability"]) == {"gfx942"}


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "1_counter_collection.csv"
    broken.write_text('"Counter_Name","Counter_Value"\n"SQ_WAVES",1\n')
    with pytest.raises(InputError, match="names no dispatches") as info:
        read_profile(broken)
    assert info.value.path == broken
    old = tmp_path / "rocpd" / "x_results.db"
    old.parent.mkdir()
    import sqlite3

    with sqlite3.connect(old) as con:
        con.execute("CREATE TABLE rocpd_string (id INTEGER, string TEXT)")
    with pytest.raises(InputError, match="rocpd convert"):
        read_profile(old)
    with pytest.raises(InputError, match="agent_info"):
        read_profile(DOCS)  # real rocprofv3 files whose GPU is not named


def test_nvidia_inputs_are_not_taken_for_rocprof() -> None:
    ncu = Path(__file__).resolve().parent / "data" / "ncu"
    for p in sorted(ncu.rglob("*.csv"))[:20]:
        assert rocprof_kind(p) is None, p
    assert rocprof_kind(ncu) is None
    assert [gfx_name(v) for v in (90402, 90010, 90008, 90500, 0)] == ["gfx942", "gfx90a", "gfx908", "gfx950", None]
    assert np.isnan(merge_passes([read_trace(DOCS / "kernel_trace.csv")])[0]["launch_id"]).sum() == 0


def test_binary_and_odd_files_are_no_rocprof_output(tmp_path: Path) -> None:
    """Every file an analysis meets is asked whether it is rocprof output: a Parquet table (binary, its
    first bytes holding a carriage return) or a text whose first line is no CSV header is not, and
    asking costs no error."""
    from roofline.readers.amd.rocprof_outputs import file_kind

    binary = tmp_path / "t.parquet"
    binary.write_bytes(b"PAR1\x15\x04\r\x15\x00\"a\rb\n")
    quoted = tmp_path / "odd.csv"
    quoted.write_bytes(b'"a\rb",c\n1,2\n')
    assert file_kind(binary) is None and file_kind(quoted) is None

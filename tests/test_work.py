"""The roofline of operations and of instructions: the same maths over another work and traffic.

Every expected number below is worked out by hand in the comments from the synthetic table and
machine (SI units), so each assertion can fail on its own.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline import api
from roofline.analysis import analyze
from roofline.analysis.select import sort_rows
from roofline.analysis.work import INSTRUCTIONS, OPS, require_work, work_for
from roofline.cli.app import main
from roofline.counting import NCU_HINTS
from roofline.errors import MissingMetricsError
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine

#: 100 SMs x 4 warp instructions per clock x 2.5 GHz = 1e12 warp instructions/s; 32 B sectors:
#: L1 12.8e12 / 32 = 4e11, L2 6.4e12 / 32 = 2e11, DRAM 3.2e12 / 32 = 1e11 transactions/s;
#: shared 12.8e12 / 128 B = 1e11 wavefronts/s.
MACHINE = Machine(
    name="synthetic GPU", source="theoretical",
    memory={"l1": 12.8e12, "shared": 12.8e12, "l2": 6.4e12, "dram": 3.2e12},
    compute={"fp32": 50e12, "int32": 25e12, "conversion": 6.25e12, "tensor_int8": 1000e12, "warp_inst": 1e12},
)

NO_FLOPS = {"fp64_flops": 0.0, "fp32_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0}


def _records() -> list[dict]:
    return [
        # "topk": integer and conversion work, no FLOPs, DRAM-bound.
        {"kernel_name": "topk", "time_s": 1e-3, **NO_FLOPS, "int_ops": 5e9, "conversion_ops": 1e9, "tensor_int_ops": 0.0,
         "l1_bytes": 4e9, "l2_bytes": 3e9, "dram_bytes": 2e9,
         "warp_inst": 2e8, "global_inst": 3.125e7, "l1_transactions": 1.25e8, "l2_transactions": 9.375e7,
         "dram_transactions": 6.25e7},
        # "hash": integer-bound, and issue-bound on the instruction roofline.
        {"kernel_name": "hash", "time_s": 1e-3, **NO_FLOPS, "int_ops": 2e10, "conversion_ops": 0.0, "tensor_int_ops": 0.0,
         "l1_bytes": 1e8, "l2_bytes": 1e8, "dram_bytes": 1e8,
         "warp_inst": 1e9, "l1_transactions": 3.125e6, "l2_transactions": 3.125e6, "dram_transactions": 3.125e6},
        # "igemm": INT8 tensor cores.
        {"kernel_name": "igemm", "time_s": 2e-3, **NO_FLOPS, "int_ops": 0.0, "conversion_ops": 0.0, "tensor_int_ops": 1e12,
         "l1_bytes": 1e9, "l2_bytes": 1e9, "dram_bytes": 1e8},
    ]


@pytest.fixture(scope="module")
def table() -> KernelTable:
    return KernelTable(from_records(_records()), metric_hints=NCU_HINTS)  # as the ncu reader gives it


def _row(analysis, name: str) -> pd.Series:
    f = analysis.frame
    return f[f["kernel_name"] == name].iloc[0]


def test_ops_total_is_flops_plus_the_other_operations(table):
    f = table.frame.set_index("kernel_name")
    assert f.loc["topk", "ops"] == pytest.approx(6e9)  # 0 FLOPs + 5e9 integer + 1e9 conversion + 0 tensor int
    assert f.loc["igemm", "ops"] == pytest.approx(1e12)
    assert not f["ops_partial"].any()


def test_flop_roofline_has_no_place_for_integer_kernels(table):
    a = analyze(table, MACHINE)
    topk = _row(a, "topk")
    assert topk["flops"] == 0 and topk["ai_dram"] == 0  # 0 FLOP/B: off a log chart
    assert topk["bound"] == "dram"  # 2e9 B / 3.2e12 B/s = 6.25e-4 s, the longest term
    assert a.work == "flops" and a.work_spec.rate_unit == "FLOP/s"


def test_ops_roofline_places_integer_kernels(table):
    a = analyze(table, MACHINE, work="ops")
    assert a.work == "ops" and a.work_spec.intensity_unit == "OP/B"
    topk = _row(a, "topk")
    # compute: 5e9 / 25e12 + 1e9 / 6.25e12 = 2e-4 + 1.6e-4 = 3.6e-4 s -> peak 6e9 / 3.6e-4 = 1.6667e13 OP/s,
    # "mixed" (the integer share 5/6 is under 0.9); DRAM 2e9 / 3.2e12 = 6.25e-4 s binds.
    assert topk["compute_peak"] == pytest.approx(6e9 / 3.6e-4)
    assert topk["compute_ceiling"] == "mixed"
    assert topk["bound"] == "dram"
    assert topk["roofline_time_s"] == pytest.approx(6.25e-4)
    assert topk["pct_of_roofline"] == pytest.approx(0.625)
    assert topk["ai_dram"] == pytest.approx(3.0)  # 6e9 OP / 2e9 B
    assert topk["attainable_dram"] == pytest.approx(9.6e12)  # min(1.67e13, 3 x 3.2e12)
    assert topk["flop_rate"] == pytest.approx(6e12)  # OP/s under work="ops"
    hash_ = _row(a, "hash")
    # 2e10 / 25e12 = 8e-4 s against DRAM 1e8 / 3.2e12 = 3.1e-5 s: INT32 binds, at 80 % of the roofline
    assert hash_["bound"] == "int32" and hash_["region"] == "compute-bound"
    assert hash_["pct_of_roofline"] == pytest.approx(0.8)
    igemm = _row(a, "igemm")
    assert igemm["compute_ceiling"] == "tensor_int8" and igemm["bound"] == "tensor_int8"
    assert igemm["roofline_time_s"] == pytest.approx(1e-3)  # 1e12 / 1e15


def test_instruction_roofline(table):
    a = analyze(table, MACHINE, work="instructions")
    assert a.work == "instructions" and a.work_spec.intensity_unit == "inst/transaction"
    # shared has a ceiling but no transactions in the table: left out, with the metric to collect
    assert "shared" not in a.levels and set(a.levels) == {"l1", "l2", "dram"}
    assert any("not analysed: shared" in n and "wavefronts_mem_shared" in n for n in a.notes)
    topk = _row(a, "topk")
    # issue: 2e8 / 1e12 = 2e-4 s; L1 1.25e8 / 4e11 = 3.125e-4; L2 9.375e7 / 2e11 = 4.6875e-4;
    # DRAM 6.25e7 / 1e11 = 6.25e-4 s, the longest
    assert topk["bound"] == "dram" and topk["roofline_time_s"] == pytest.approx(6.25e-4)
    assert topk["ai_dram"] == pytest.approx(3.2)  # 2e8 inst / 6.25e7 transactions
    assert topk["ii_dram"] == pytest.approx(3.2)  # the same figure, present under every work
    assert topk["bw_dram"] == pytest.approx(6.25e10)  # transactions/s
    assert topk["attainable_dram"] == pytest.approx(3.2e11)  # min(1e12, 3.2 x 1e11)
    assert topk["flop_rate"] == pytest.approx(2e11) and topk["inst_rate"] == pytest.approx(2e11)
    hash_ = _row(a, "hash")
    assert hash_["bound"] == "warp_inst" and hash_["pct_of_roofline"] == pytest.approx(1.0)  # 1e9 / 1e12 = 1e-3 s
    igemm = _row(a, "igemm")  # no instruction counts: unknown, never 0
    assert math.isnan(igemm["flop_rate"]) and pd.isna(igemm["bound"])
    assert any("no instruction counts for 1 kernel" in n and "smsp__inst_executed.sum" in n for n in a.notes)


def test_level_ceilings_per_work():
    assert OPS.level_ceiling(MACHINE, "dram") == 3.2e12
    assert INSTRUCTIONS.level_ceiling(MACHINE, "dram") == pytest.approx(1e11)
    assert INSTRUCTIONS.level_ceiling(MACHINE, "shared") == pytest.approx(1e11)  # 12.8e12 / 128 B
    assert INSTRUCTIONS.level_ceiling(MACHINE, "l3") is None
    assert INSTRUCTIONS.uses_key("warp_inst") and not INSTRUCTIONS.uses_key("fp32")
    assert OPS.uses_key("int32") and OPS.uses_key("tensor_bf16") and not OPS.uses_key("warp_inst")
    with pytest.raises(ValueError, match="work must be one of"):
        work_for("bytes")


def test_require_work_names_the_metrics():
    frame = from_records([{"kernel_name": "k", "time_s": 1e-3, "dram_bytes": 1e6}])
    require_work(frame, "flops")  # a FLOP analysis reads time and bytes alone
    with pytest.raises(MissingMetricsError, match="warp-instruction counts") as exc:
        require_work(frame, "instructions", NCU_HINTS)  # what the ncu reader's table names
    assert "smsp__inst_executed.sum" in (exc.value.hint or "")
    with pytest.raises(MissingMetricsError) as exc:  # a table from records names no metric
        require_work(frame, "instructions")
    assert exc.value.hint == "leave out --work to see the FLOP roofline"
    with pytest.raises(MissingMetricsError, match="operation counts"):
        api.analyze(KernelTable(frame), MACHINE, work="ops")


def test_sort_by_work(table):
    a = analyze(table, MACHINE, work="instructions")
    order = sort_rows(a.frame, "work", a.levels, work_total=a.work_spec.total)["kernel_name"].tolist()
    assert order == ["hash", "topk", "igemm"]  # 1e9, 2e8, unknown last


def test_cli_refuses_work_the_profile_lacks(capsys):
    # the paper's 15 metrics (V100 CUTLASS GEMM export): FLOPs and bytes, no instruction counts
    csv = Path(__file__).parent / "data" / "ncu" / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
    rc = main(["analyze", str(csv), "--work", "instructions"])
    err = capsys.readouterr().err
    assert rc != 0 and "no kernel in the profile has warp-instruction counts" in err
    assert "Traceback" not in err


def test_unknown_parts_make_ops_partial():
    frame = from_records([{"kernel_name": "k", "time_s": 1e-3, "fp32_flops": 1e9, "int_ops": np.nan}])
    assert frame.loc[0, "ops"] == pytest.approx(1e9) and bool(frame.loc[0, "ops_partial"])


def test_kernel_files_written_before_the_new_columns_read_back(tmp_path):
    """A .kernels.json from before operations and instructions were counted: the new columns are
    unknown, and ops is the FLOPs, flagged as a lower bound (integer work was not counted)."""
    import json

    from roofline.readers import kernel_json

    table = KernelTable(from_records([{"kernel_name": "k", "time_s": 1e-3, "fp32_flops": 2e9, "dram_bytes": 1e6}]))
    doc = json.loads(kernel_json.to_json(table))
    new = set(kernel_json.ADDED_COLUMNS) - {"run"}
    keep = [i for i, c in enumerate(doc["columns"]) if c not in new]
    doc["columns"] = [doc["columns"][i] for i in keep]
    doc["rows"] = [[row[i] for i in keep] for row in doc["rows"]]
    path = tmp_path / "old.kernels.json"
    path.write_text(json.dumps(doc))
    frame = widened(kernel_json.read(path).frame)  # columns the old file lacks: unknown (left out, then NaN)
    assert frame.loc[0, "ops"] == 2e9 and bool(frame.loc[0, "ops_partial"])
    assert np.isnan(frame.loc[0, "warp_inst"]) and np.isnan(frame.loc[0, "shared_bytes"])


def test_notes_on_counts_beyond_flops_come_with_the_work_that_needs_them():
    """A --set full report (T4) holds no integer or conversion counts: an operations analysis says
    which metrics would supply them; a FLOP analysis of the same file does not mention them."""
    rep = Path(__file__).parent / "data" / "ncu" / "t4_setfull_rep" / "matrix_addition2D_t4_setfull.ncu-rep"
    table = api.read(rep)
    assert "int_ops" in table.column_notes
    ops = api.analyze(table, "T4", work="ops")
    assert any(n.startswith("int_ops unknown") and "sm__sass_thread_inst_executed_op_integer_pred_on.sum" in n
               for n in ops.notes)
    flops = api.analyze(table, "T4")
    assert not any("int_ops" in n for n in flops.notes)

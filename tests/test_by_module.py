"""The roofline by PyTorch operator and by module: grouping, depth, drill-downs, terminal, JSON, CLI, labels.

Five launches built by hand against a toy machine (DRAM 1 TB/s, FP32 2 TFLOP/s: FP32 ridge 2 FLOP/B):

| launch | kernel   | op          | module        | phase     | time   | FP32 FLOP | DRAM B |
|--------|----------|-------------|---------------|-----------|--------|-----------|--------|
| 1      | gemm_fwd | aten::addmm | Net.enc.0.fc  | forward   | 1 ms   | 1e9       | 1e8    |
| 2      | gemm_bwd | aten::addmm | Net.enc.0.fc  | backward  | 2 ms   | 2e9       | 2e8    |
| 3      | gemm_fwd | aten::addmm | Net.enc.1.fc  | forward   | 1 ms   | 1e9       | 1e8    |
| 4      | relu_k   | aten::relu  | Net.enc.1     | forward   | 0.5 ms | 1e6       | 4e8    |
| 5      | adam     | <NA>        | <NA>          | optimizer | 1 ms   | 1e7       | 1e9    |
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from roofline.analysis import analyze
from roofline.kernels import KernelTable, aggregate, from_records, group_keys
from roofline.machine.model import Machine
from roofline.views.json_out import analysis_to_dict
from roofline.kernels.labels import short_names
from roofline.views.terminal import kernel_table_renderable


def toy() -> Machine:
    return Machine(name="toy", source="theoretical", sm_clock_hz=1e9, memory={"dram": 1e12},
                   compute={"fp32": 2e12})


def launches() -> KernelTable:
    def k(name, op, module, phase, time, flops, dram):
        return dict(kernel_name=name, op=op, module=module, phase=phase, time_s=time, fp32_flops=flops,
                    dram_bytes=dram, sm_clock_hz=1e9)

    return KernelTable(frame=from_records([
        k("gemm_fwd", "aten::addmm", "Net.enc.0.fc", "forward", 1e-3, 1e9, 1e8),
        k("gemm_bwd", "aten::addmm", "Net.enc.0.fc", "backward", 2e-3, 2e9, 2e8),
        k("gemm_fwd", "aten::addmm", "Net.enc.1.fc", "forward", 1e-3, 1e9, 1e8),
        k("relu_k", "aten::relu", "Net.enc.1", "forward", 0.5e-3, 1e6, 4e8),
        k("adam", None, None, "optimizer", 1e-3, 1e7, 1e9),
    ]))


def rows(analysis) -> dict[str, dict]:
    return {r["kernel_name"]: r for r in analysis.frame.to_dict("records")}


def test_by_op_is_one_row_per_operator_and_phase():
    a = analyze(launches(), toy(), by="op")
    r = rows(a)
    assert set(r) == {"aten::addmm [forward]", "aten::addmm [backward]", "aten::relu [forward]",
                      "(no operator) [optimizer]"}
    fwd = r["aten::addmm [forward]"]
    assert fwd["launches"] == 2 and fwd["time_s"] == pytest.approx(2e-3) and fwd["flops"] == 2e9
    assert fwd["op"] == "aten::addmm" and fwd["phase"] == "forward"
    assert fwd["module"] == "Net.enc.0.fc,Net.enc.1.fc"  # the modules it ran in, listed
    # AI 2e9 / 2e8 = 10 FLOP/B > ridge 2: compute bound; roofline time max(2e9 / 2e12, 2e8 / 1e12) = 1 ms of 2 ms
    assert fwd["ai_dram"] == pytest.approx(10.0) and fwd["bound"] == "fp32"
    assert fwd["pct_of_roofline"] == pytest.approx(0.5)
    relu = r["aten::relu [forward]"]
    # 4e8 B / 1 TB/s = 0.4 ms > 1e6 / 2e12: DRAM bound, 0.4 of 0.5 ms
    assert relu["bound"] == "dram" and relu["pct_of_roofline"] == pytest.approx(0.8)
    adam = r["(no operator) [optimizer]"]  # the launch outside every operator: its own row
    assert pd.isna(adam["op"]) and adam["time_s"] == pytest.approx(1e-3) and adam["launches"] == 1
    assert a.by == "op"


def test_by_module_sums_phases_at_each_depth():
    full = rows(analyze(launches(), toy(), by="module"))
    assert set(full) == {"Net.enc.0.fc", "Net.enc.1.fc", "Net.enc.1", "(outside modules)"}
    assert full["Net.enc.0.fc"]["phase"] == "backward,forward"  # phases summed, listed
    assert full["Net.enc.0.fc"]["time_s"] == pytest.approx(3e-3)  # 1 + 2 ms
    d3 = rows(analyze(launches(), toy(), by="module", depth=3))
    assert set(d3) == {"Net.enc.0", "Net.enc.1", "(outside modules)"}
    assert d3["Net.enc.1"]["time_s"] == pytest.approx(1.5e-3)      # launches 3 and 4: 1 + 0.5 ms
    assert d3["Net.enc.1"]["flops"] == pytest.approx(1.001e9)      # 1e9 + 1e6
    assert d3["Net.enc.1"]["op"] == "aten::addmm,aten::relu"
    d2 = analyze(launches(), toy(), by="module", depth=2)
    enc = rows(d2)["Net.enc"]
    # 1 + 2 + 1 + 0.5 ms; 4.001e9 FLOP over 8e8 B = 5.00125 FLOP/B: compute bound, 2.0005 ms at the roofline
    assert enc["launches"] == 4 and enc["time_s"] == pytest.approx(4.5e-3)
    assert enc["ai_dram"] == pytest.approx(5.00125)
    assert enc["roofline_time_s"] == pytest.approx(2.0005e-3)
    outside = rows(d2)["(outside modules)"]
    assert pd.isna(outside["module"]) and outside["dram_bytes"] == 1e9
    assert d2.by == "module" and getattr(d2, "depth") == 2


def test_drill_down_keeps_key_columns_and_kernel_names():
    a = analyze(launches(), toy(), by=("module", "op", "phase", "kernel_name"), depth=3)
    f = a.frame
    assert len(f) == 5 and a.by == "module,op,phase,kernel_name"
    got = {(str(m), str(o), str(p), k) for m, o, p, k in f[["module", "op", "phase", "kernel_name"]].itertuples(index=False)}
    assert got == {("Net.enc.0", "aten::addmm", "forward", "gemm_fwd"), ("Net.enc.0", "aten::addmm", "backward", "gemm_bwd"),
                   ("Net.enc.1", "aten::addmm", "forward", "gemm_fwd"), ("Net.enc.1", "aten::relu", "forward", "relu_k"),
                   ("<NA>", "<NA>", "optimizer", "adam")}
    # without kernel_name the row is labelled by its keys
    grouped = aggregate(launches().frame, ("module", "op"), depth=2)
    assert set(grouped["kernel_name"]) == {"Net.enc / aten::addmm", "Net.enc / aten::relu",
                                           "(outside modules) / (no operator)"}
    assert group_keys("module,op") == ["module", "op"] and group_keys(("op", "phase"), runs=True) == ["run", "op", "phase"]


def test_one_kernel_launched_by_several_operators_keeps_each_launch():
    frame = from_records([
        dict(kernel_name="elementwise", op="aten::add", module="M.a", phase="forward", time_s=1e-3, fp32_flops=10.0),
        dict(kernel_name="elementwise", op="aten::mul", module="M.b", phase="forward", time_s=3e-3, fp32_flops=30.0),
    ])
    by_op = aggregate(frame, "op")
    assert list(by_op["kernel_name"]) == ["aten::mul [forward]", "aten::add [forward]"]  # 3 ms first
    assert list(by_op["flops"]) == [30.0, 10.0]
    by_name = aggregate(frame, "name")
    assert by_name["op"].iloc[0] == "aten::add,aten::mul" and by_name["module"].iloc[0] == "M.a,M.b"


def test_bad_by_and_depth():
    with pytest.raises(ValueError):
        analyze(launches(), toy(), by="layer")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        aggregate(launches().frame, ("module", "flops"))
    with pytest.raises(ValueError):
        analyze(launches(), toy(), by="module", depth=0)


def test_terminal_names_the_row_column():
    console = Console(width=220, record=True)
    console.print(kernel_table_renderable(analyze(launches(), toy(), by="module", depth=2)))
    text = console.export_text()
    assert "Modules by time" in text and "│ module" in text.replace("┃", "│") and "Net.enc" in text
    console = Console(width=220, record=True)
    console.print(kernel_table_renderable(analyze(launches(), toy(), by="op")))
    text = console.export_text()
    assert "operator" in text and "aten::addmm [backward]" in text


def test_json_records_by_depth_and_each_rows_keys():
    d = json.loads(json.dumps(analysis_to_dict(analyze(launches(), toy(), by="module", depth=2)), allow_nan=False))
    assert d["by"] == "module" and d["depth"] == 2
    enc = d["kernels"][0]
    assert enc["name"] == "Net.enc" and enc["module"] == "Net.enc" and enc["phase"] == "backward,forward"
    assert enc["op"] == "aten::addmm,aten::relu" and enc["launches"] == 4
    outside = next(k for k in d["kernels"] if k["name"] == "(outside modules)")
    assert outside["module"] is None and outside["op"] is None and outside["phase"] == "optimizer"
    by_op = json.loads(json.dumps(analysis_to_dict(analyze(launches(), toy(), by="op")), allow_nan=False))
    assert by_op["depth"] is None
    bwd = next(k for k in by_op["kernels"] if k["name"] == "aten::addmm [backward]")
    assert bwd["op"] == "aten::addmm" and bwd["phase"] == "backward" and bwd["module"] == "Net.enc.0.fc"


def test_chart_labels_keep_operators_and_shorten_module_paths():
    assert short_names(["aten::addmm [backward]", "Net.enc.0.fc", "Net", "(outside modules)"]) == \
        ["aten::addmm [backward]", "enc.0.fc", "Net", "(outside modules)"]
    assert short_names(["A.enc", "B.enc"]) == ["A.enc", "B.enc"]  # same tail under two roots: whole paths
    assert short_names(["void at::native::vectorized_elementwise_kernel<4, float>(int)"]) == \
        ["vectorized_elementwise_kernel"]


def test_cli_analyze_by_module_with_an_estimate(tmp_path: Path, capsys):
    from roofline.cli.app import main
    from roofline.readers.kernel_json import to_json

    measured = tmp_path / "step.kernels.json"
    measured.write_text(to_json(launches()))
    est = launches().frame.copy()
    est["fp32_flops"] = est["fp32_flops"] * 0.5  # the estimate counts half of every launch's FLOPs
    est["flops"] = est["fp32_flops"]
    est["estimated"] = True
    estimate = tmp_path / "step.estimate.kernels.json"
    estimate.write_text(to_json(KernelTable(frame=est)))
    out = tmp_path / "a.json"
    assert main(["analyze", str(measured), "--by", "module", "--depth", "2", "--estimate", str(estimate),
                 "--json", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "Measured vs estimated, by module" in printed
    line = next(t for t in printed.splitlines() if "Net.enc" in t and "0.5" in t)  # ratio 2.0005e9 / 4.001e9
    assert "4 GFLOP" in line
    d = json.loads(out.read_text())
    assert d["by"] == "module" and d["depth"] == 2 and d["kernels"][0]["name"] == "Net.enc"

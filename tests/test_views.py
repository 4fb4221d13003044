"""Views: kernel short names, static and interactive charts, terminal tables, JSON."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from matplotlib.figure import Figure
from rich.console import Console

from deepcam_data import authors_csv, deepcam_table, v100_machine
from roofline.analysis import analyze
from roofline.kernels import concat, from_records
from roofline.views.chart.interactive import roofline_html, roofline_plotly
from roofline.views.chart.static import (
    GID_COMPUTE,
    GID_LABEL,
    GID_MEMORY,
    GID_POINTS,
    MIN_AREA,
    roofline_figure,
    roofline_figures_by_phase,
)
from roofline.views.json_out import SCHEMA, analysis_to_dict
from roofline.views.notebook import analysis_html
from roofline.kernels.labels import short_name, short_names
from roofline.views.terminal import kernel_table_renderable, summary_renderable

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def deepcam():
    return analyze(deepcam_table(), v100_machine())


def synthetic(n: int = 12, phases: tuple[str, ...] = ("forward", "backward")):
    """n kernels with known times (1..n ms), FP32 FLOPs, bytes at every level; plus a zero-FLOP copy."""
    recs = []
    for i in range(n):
        recs.append({"kernel_name": f"void ns::kern{i}<float, {i}>(float*, int)", "time_s": (i + 1) * 1e-3,
                     "fp32_flops": 1e9 * (i + 1) ** 1.5, "l1_bytes": 4e9, "l2_bytes": 1e9 + i * 1e8,
                     "dram_bytes": 5e8, "phase": phases[i % len(phases)], "sm_clock_hz": 1.3e9})
    recs.append({"kernel_name": "memcpy_kernel", "time_s": 2e-3, "fp32_flops": 0.0, "l1_bytes": 1e9,
                 "l2_bytes": 1e9, "dram_bytes": 1e9, "phase": "forward", "sm_clock_hz": 1.3e9})
    return from_records(recs)


# -- names -------------------------------------------------------------------------------------

def test_short_names_of_deepcam_kernels():
    names = list(authors_csv()["Kernel Name"])
    assert [short_name(n) for n in names] == [
        "cleanup", "vectorized_elementwise_kernel", "multi_tensor_apply_kernel",
        "multi_tensor_apply_kernel", "multi_tensor_apply_kernel"]
    labels = short_names(names)
    assert labels[2:] == ["multi_tensor_apply_kernel<L2NormFunctor>", "multi_tensor_apply_kernel<LAMBStage2Functor>",
                          "multi_tensor_apply_kernel<LAMBStage1Functor>"]
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("name, expected", [
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, const float*, int)",
     "softmax_warp_forward"),
    ("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, const float*)",
     "max_pool_forward_nchw"),
    ("volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn"),
    ("void cutlass::Kernel<cutlass_70_tensorop_h884gemm_128x128>(Params)", "Kernel<cutlass_70_tensorop_h884gemm_128x128>"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, "
     "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)",
     "reduce_kernel"),
])
def test_short_name(name, expected):
    assert short_name(name) == expected


def test_short_names_number_when_templates_do_not_differ():
    assert short_names(["void f<int>(int)", "void f<int>(float)", "g"]) == ["f #1", "f #2", "g"]


# -- static chart ------------------------------------------------------------------------------------

def _gid(artist) -> str:
    return artist.get_gid() or ""


def test_static_chart_ceilings(deepcam):
    fig = roofline_figure(deepcam)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    m = deepcam.machine
    mem = {_gid(l).split(":")[1]: l for l in ax.lines if _gid(l).startswith(GID_MEMORY + ":")}
    comp = {_gid(l).split(":")[1]: l for l in ax.lines if _gid(l).startswith(GID_COMPUTE + ":")}
    # by default only the precisions the kernels use (FP32; FP64 was not collected) plus the highest
    assert set(mem) == {"l1", "l2", "dram"} and set(comp) == {"fp32", "tensor_fp16"}
    every = roofline_figure(deepcam, ceilings="all").axes[0]
    assert {_gid(l).split(":")[1] for l in every.lines if _gid(l).startswith(GID_COMPUTE + ":")} == {
        "fp64", "fp32", "tensor_fp16"}
    top = max(m.compute.values())
    for lv, line in mem.items():
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.allclose(y / x, m.memory[lv])        # slope: the bandwidth (a diagonal on log-log)
        assert y.max() == pytest.approx(top)           # ends at the top compute ceiling
    for key, line in comp.items():
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.allclose(y, m.compute[key])
        assert x.min() == pytest.approx(m.compute[key] / m.memory["l1"])  # starts where attainable
    texts = [t.get_text() for t in ax.texts]
    assert "DRAM 829 GB/s" in texts and "FP32 14.1 TFLOP/s" in texts and "Tensor FP16 113 TFLOP/s" in texts
    assert "FP64 7.07 TFLOP/s" in [t.get_text() for t in every.texts]
    fig_hbm = roofline_figure(deepcam, level_labels={"dram": "HBM"})
    assert "HBM 829 GB/s" in [t.get_text() for t in fig_hbm.axes[0].texts]


def test_static_chart_markers_areas_and_labels(deepcam):
    fig = roofline_figure(deepcam, top=3)
    ax = fig.axes[0]
    points = [c for c in ax.collections if _gid(c).startswith(GID_POINTS)]
    # 4 kernels with FLOPs x 3 levels (the zero-FLOP kernel is not drawn)
    assert sum(len(c.get_offsets()) for c in points) == 4 * 3
    for c in points:
        lv = _gid(c).split(":")[1]
        xy = np.asarray(c.get_offsets())
        shown = deepcam.ranked.query("flops > 0")
        assert np.allclose(np.sort(xy[:, 0]), np.sort(shown[f"ai_{lv}"].to_numpy(dtype=float)))
        assert np.allclose(np.sort(xy[:, 1]), np.sort(shown["flop_rate"].to_numpy(dtype=float)))
        # area proportional to time (above the visibility floor)
        sizes = np.asarray(c.get_sizes())
        t = shown["time_s"].to_numpy(dtype=float)
        big = sizes > MIN_AREA
        assert big.sum() >= 3
        assert np.allclose(sizes[big] / t[big], sizes[0] / t[0])
        # all DeepCAM FLOPs lack FP64 (not collected): hollow markers, lower bounds
        assert len(c.get_facecolors()) == 0
    numbers = [n for t in ax.texts if _gid(t) == GID_LABEL for n in t.get_text().split(",")]
    assert sorted(numbers) == ["1", "2", "3"]
    key = [t.get_text() for t in fig.texts if _gid(t) == GID_LABEL + "-key"]
    assert len(key) == 3 and "LAMBStage1Functor" in key[0] and "(53.4%)" in key[0]
    note = " ".join(t.get_text() for t in fig.texts)
    # its 0 FLOPs are a lower bound (FP64 not collected): not called a kernel without FLOPs
    assert "1 kernel with 0 FLOPs counted (0.4% of time) not shown: vectorized_elementwise_kernel 0.4%" in note
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["L1", "L2", "DRAM", "FLOPs lower bound"]


def test_static_chart_sizes_phases_and_no_machine():
    a = analyze(synthetic(), v100_machine(), by="phase")
    for width in (3.5, 7.0):
        fig = roofline_figure(a, width=width, top=5)
        assert fig.get_figwidth() == width
        assert len([t for t in fig.texts if _gid(t) == GID_LABEL + "-key"]) == 5
    figs = roofline_figures_by_phase(a, top=3)
    assert set(figs) == {"forward", "backward"}
    fwd = figs["forward"].axes[0]
    assert sum(len(c.get_offsets()) for c in fwd.collections if _gid(c).startswith(GID_POINTS)) == 6 * 3
    with pytest.raises(ValueError):
        roofline_figure(analyze(synthetic(), v100_machine()), phase="forward")
    bare = roofline_figure(analyze(synthetic()))
    assert not [l for l in bare.axes[0].lines if _gid(l).startswith(("ceiling",))]
    assert sum(len(c.get_offsets()) for c in bare.axes[0].collections) == 12 * 3
    only = roofline_figure(a, levels=["dram"])
    assert {(_gid(c)) for c in only.axes[0].collections} == {GID_POINTS + ":dram"}


def test_static_chart_estimated_markers_in_legend():
    recs = [{"kernel_name": "est", "time_s": 1e-3, "fp32_flops": 1e9, "fp64_flops": 0.0, "fp16_flops": 0.0,
             "tensor_flops": 0.0, "l1_bytes": 1e9, "l2_bytes": 1e9, "dram_bytes": 1e9, "estimated": True}]
    fig = roofline_figure(analyze(from_records(recs), v100_machine()))
    assert "estimated counts" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(len(c.get_facecolors()) for c in fig.axes[0].collections)  # counted FLOPs: filled


# -- interactive chart ------------------------------------------------------------------------------

def _with_evil():
    evil = from_records([{"kernel_name": EVIL, "time_s": 1e-3, "fp32_flops": 1e9, "l1_bytes": 1e9,
                          "l2_bytes": 5e8, "dram_bytes": 1e8, "phase": "forward"}])
    return concat([synthetic(), evil])


def test_html_escapes_kernel_names_and_is_self_contained():
    html = roofline_html(analyze(_with_evil(), v100_machine(), by="phase"), title="a <b> & c")
    assert EVIL not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<script src="http' not in html and "<script src='http" not in html
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    assert "a &lt;b&gt; &amp; c" in html


def test_plotly_figure_structure(deepcam):
    fig = roofline_plotly(deepcam)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    markers = [t for t in fig.data if t.mode == "markers"]
    assert [t.legendgroup for t in markers] == ["l1", "l2", "dram"]
    assert sum(len(t.x) for t in markers) == 4 * 3
    hover = markers[2].hovertext[0]
    assert "LAMBStage1Functor&lt;float&gt;" in hover and "bound: dram" in hover and "memory-bound" in hover
    assert "% of roofline: 91.6%" in hover and "0.501" in hover
    lines = [t for t in fig.data if t.mode == "lines+text"]
    assert len(lines) == 5  # 3 levels + FP32 (used) + Tensor FP16 (highest); FP64 with ceilings="all"
    assert len([t for t in roofline_plotly(deepcam, ceilings="all").data if t.mode == "lines+text"]) == 6
    assert any("(measured)" in (t.hovertext or "") for t in lines)
    dram = next(t for t in lines if t.legendgroup == "ceiling-dram")
    assert dram.y[0] / dram.x[0] == pytest.approx(828.758e9)


def test_plotly_phase_buttons():
    fig = roofline_plotly(analyze(synthetic(), v100_machine(), by="phase"))
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["all phases", "backward", "forward"]
    vis = buttons[1].args[0]["visible"]
    names = [t.name for t in fig.data]
    assert all(v == ("backward" in n or "/s" in n) for v, n in zip(vis, names))


# -- terminal -------------------------------------------------------------------------------------------

def _render(renderable) -> str:
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def test_terminal_table(deepcam):
    table = kernel_table_renderable(deepcam, top=4)
    assert table.row_count == 4
    out = _render(table)
    assert "multi_tensor_apply_kernel<LAMBStage1Functor>*" in out and "91.6%" in out and "2.08 ms" in out
    assert "380.1" in out  # GFLOP/s, decimal
    bare = _render(kernel_table_renderable(analyze(deepcam_table()), top=2))
    row = next(line for line in bare.splitlines() if "LAMBStage1" in line)
    cells = [c.strip() for c in row.split("│")]
    assert cells[-5:-1] == ["-", "unknown", "-", "-"]  # bound, region, % roofline, savable: '-', never 0


def test_terminal_summary(deepcam):
    out = _render(summary_renderable(deepcam))
    assert "total time 3.9 ms in 35 launches of 5 kernels" in out
    assert "time by bound: dram 100.0%" in out
    assert "without FLOPs" not in out  # vectorized_elementwise_kernel's 0 FLOPs: FP64 was not collected
    assert "vectorized_elementwise_kernel [optimizer] 0.4%: 0 FLOPs counted, as a lower bound: fp64_flops unknown" in out
    # the kernel the chart leaves off, with its share and why (15.2 us of 3.9 ms)
    assert "not on the FLOP roofline: 1 kernel, 0.4% of time" in out
    # the paper's data: no FP64 counters, so its 0 FLOPs is a lower bound, not proof of data movement
    assert ("vectorized_elementwise_kernel [optimizer] 0.4%: 0 FLOPs counted, as a lower bound: fp64_flops unknown; "
            "its instructions were not counted (roofline profile counts them, for --work instructions)") in out
    assert "note:" in out and "work:" not in out  # the FLOP roofline needs no word on its work


def _cells(out: str, name: str) -> list[str]:
    """The cells of the first table row (or header: rich draws it with '┃') naming ``name``."""
    row = next(line for line in out.splitlines() if f" {name} " in line).replace("┃", "│")
    return [c.strip() for c in row.split("│")[1:-1]]


def test_terminal_instruction_roofline_by_hand():
    """tests/report_data.instruction_table under work="instructions": headers in warp inst/s and
    instructions per transaction, the pattern columns, and the kernel without instruction counts."""
    from report_data import H100_LIKE, instruction_table

    a = analyze(instruction_table(), H100_LIKE, work="instructions")
    out = _render(kernel_table_renderable(a))
    head = _cells(out, "kernel")
    assert head == ["#", "kernel", "launches", "time", "% time", "warp inst/s", "II L1", "II Shared", "II L2",
                    "II DRAM", "global pattern", "shared pattern", "bound", "region", "% roofline", "savable"]
    # 3e6 inst / 4 ms = 750 M/s; 3e6 / 3.2e6 sectors = 0.9375; 3e6 / 4e5 wavefronts = 7.5
    assert _cells(out, "gather")[5:12] == ["750 Minst/s", "0.938", "7.5", "0.938", "0.938", "random (0.0312)",
                                           "4-way conflicts (0.25)"]
    # 2e5 global LD/ST over 8e5 sectors = 0.25; 1e5 shared over 1e5 wavefronts = 1
    assert _cells(out, "coalesced")[10:12] == ["unit-stride (0.25)", "conflict-free (1)"]
    # no shared traffic: infinite intensity (2e6 inst over 0 wavefronts), no shared pattern
    assert _cells(out, "broadcast")[7] == "∞" and _cells(out, "broadcast")[10:12] == ["stride-0 (1)", "-"]
    # rate, 4 intensities, 2 patterns, bound unknown; region "unknown"; % roofline, savable unknown
    assert _cells(out, "legacy_copy")[5:] == ["-"] * 8 + ["unknown", "-", "-"]
    assert "II: inst/transaction" in out and "1/32 = random" in out
    summary = _render(summary_renderable(a, notes=False))
    assert "9 M warp instructions counted" in summary  # 3e6 + 4e6 + 2e6
    assert "work: warp instructions (instruction roofline: warp inst/s against inst/transaction)" in summary
    # 0.5 ms of 7.5 ms = 6.7%
    assert "not on the instruction roofline: 1 kernel, 6.7% of time" in summary
    assert "legacy_copy 6.7%: no instruction counts (collect smsp__inst_executed.sum)" in summary
    assert "time in kernels with unknown warp instructions: 500 µs" in summary


def test_terminal_operation_roofline_by_hand():
    from report_data import H100_LIKE, instruction_table

    a = analyze(instruction_table(), H100_LIKE, work="ops")
    out = _render(kernel_table_renderable(a))
    assert _cells(out, "kernel")[5:10] == ["OP/s", "AI L1", "AI Shared", "AI L2", "AI DRAM"]
    assert "global pattern" not in out
    # gather: 6.4e7 integer OPs / 4 ms = 16 GOP/s, over 32 x 3.2e6 = 1.024e8 B at L1 = 0.625 OP/B
    assert _cells(out, "gather")[5:7] == ["16 GOP/s", "0.625"]
    assert "legacy_copy*" in out and "* OPs are a lower bound" in out  # its integer counts are unknown
    summary = _render(summary_renderable(a, notes=False))
    assert "160 MOP counted" in summary  # 6.4e7 + 6.4e7 + 3.2e7
    assert "without OPs" not in summary  # legacy_copy's 0 OPs: its integer counts are unknown
    # its integer counts unknown, its 0 is a lower bound, not proof of data movement; its warp
    # instructions were not counted either: no pointer to --work instructions
    assert ("legacy_copy 6.7%: 0 OPs counted, as a lower bound: int_ops, conversion_ops, tensor_int_ops unknown; its "
            "instructions were not counted (roofline profile counts them, for --work instructions)") in summary


# -- JSON -------------------------------------------------------------------------------------------------

def test_json_schema_values_and_strictness(deepcam):
    d = analysis_to_dict(deepcam)
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["schema"] == SCHEMA and back["by"] == "name" and back["machine"]["memory"]["dram"] == 828.758e9
    k0 = back["kernels"][0]
    assert set(k0) >= {"name", "launches", "phase", "time_s", "flops", "flops_partial", "estimated", "bytes", "ai",
                       "flop_rate", "bound", "region", "locality", "attainable", "pct_of_roofline",
                       "roofline_time_s", "savable_time_s", "time_share", "compute_ceiling"}
    assert "LAMBStage1Functor" in k0["name"] and k0["launches"] == 9
    assert k0["flops"] == {"fp64": None, "fp32": 791465384.0, "fp16": 0.0, "tensor": 0.0, "total": 791465384.0}
    assert k0["flops_partial"] is True and k0["bound"] == "dram" and k0["region"] == "memory-bound"
    assert k0["ai"]["dram"] == pytest.approx(0.50068489857673)
    # shared memory is a level of every table now: null where not collected (the authors' CSV has none)
    assert k0["bytes"] == {"l1": 1581309696.0, "shared": None, "l2": 1581268480.0, "dram": 1580765440.0}
    assert k0["ai"]["shared"] is None
    # no integer or instruction counters in the authors' CSV: ops = the FLOPs, a lower bound; no instructions
    assert k0["ops"] == {"int": None, "conversion": None, "sfu": None, "tensor_int": None, "total": 791465384.0,
                         "partial": True}
    assert k0["instructions"]["warp"] is None and k0["instructions"]["gips"] is None
    assert k0["instructions"]["transactions"] == dict.fromkeys(("l1", "shared", "l2", "dram"))
    assert k0["instructions"]["global"] == {"instructions": None, "per_transaction": None, "pattern": None}
    assert back["work"] == "flops" and back["units"] == {"work": "FLOP", "rate": "FLOP/s", "traffic": "B",
                                                         "intensity": "FLOP/B", "traffic_rate": "B/s"}
    zero = next(k for k in back["kernels"] if k["flops"]["total"] == 0)
    assert zero["compute_ceiling"] is None and zero["ai"]["l1"] == 0.0
    assert back["totals"]["zero_flop_kernels"] == 0 and back["totals"]["lower_bound_zero_flop_kernels"] == 1
    assert [(u["name"], u["category"]) for u in back["undrawn"]] == [(zero["name"], "zero")]
    assert math.isclose(back["totals"]["time_s"], sum(k["time_s"] for k in back["kernels"]))


def test_json_without_machine_is_strict():
    d = analysis_to_dict(analyze(_with_evil()))
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["machine"] is None and back["totals"]["savable_time_s"] is None
    assert all(k["bound"] is None and k["attainable"] is None and k["pct_of_roofline"] is None
               for k in back["kernels"])
    assert EVIL in [k["name"] for k in back["kernels"]]  # JSON keeps names verbatim (escaping is the HTML's job)


@pytest.mark.parametrize("records, with_machine", [
    ([], True), ([], False),
    ([{"kernel_name": "fill", "time_s": 1e-3, "fp32_flops": 0.0, "fp64_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0,
      "dram_bytes": 1e6}], True),
])
def test_views_cope_with_nothing_to_draw(records, with_machine):
    from roofline.errors import InputError

    a = analyze(from_records(records), v100_machine() if with_machine else None)
    with pytest.raises(InputError, match="nothing to draw"):  # no empty chart: a clear message
        roofline_figure(a)
    assert "<html>" in roofline_html(a)
    assert kernel_table_renderable(a).row_count == len(records)
    _render(summary_renderable(a))
    json.dumps(analysis_to_dict(a), allow_nan=False)
    if records:
        fig = roofline_plotly(a)
        assert "1 kernel without FLOPs (100.0% of time) not shown: fill 100.0%" in fig.layout.annotations[0].text


def test_notebook_display_escapes_names_and_lists_the_ranked_kernels():
    from roofline.analysis import analyze
    from roofline.kernels import from_records
    from roofline.machine import Machine

    m = Machine(name="m<1>", source="theoretical", memory={"l1": 4e12, "l2": 2e12, "dram": 1e12},
                compute={"fp32": 1e13})
    t = from_records([
        dict(kernel_name="<img src=x onerror=alert(1)>", time_s=2e-3, fp32_flops=1e9, fp64_flops=0.0,
             fp16_flops=0.0, tensor_flops=0.0, l1_bytes=4e9, l2_bytes=2e9, dram_bytes=1e9),
        dict(kernel_name="small", time_s=1e-3, fp32_flops=1e6, fp64_flops=0.0, fp16_flops=0.0,
             tensor_flops=0.0, l1_bytes=1e6, l2_bytes=1e6, dram_bytes=1e6),
    ])
    out = analysis_html(analyze(t, m))
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "m&lt;1&gt;" in out
    assert out.index("&lt;img") < out.index(">small<")  # ranked by time
    assert "2 ms" in out and "66.7%" in out  # time and share of the longest kernel


def test_json_instructions_and_ops_by_hand():
    """The instruction roofline's figures per kernel (tests/report_data.instruction_table, by hand)."""
    from report_data import H100_LIKE, instruction_table

    back = json.loads(json.dumps(analysis_to_dict(analyze(instruction_table(), H100_LIKE, work="instructions")),
                                 allow_nan=False))
    assert back["work"] == "instructions"
    assert back["units"] == {"work": "inst", "rate": "inst/s", "traffic": "transaction",
                             "intensity": "inst/transaction", "traffic_rate": "transaction/s"}
    assert back["levels"] == ["l1", "shared", "l2", "dram"]
    gather, coalesced, broadcast, copy = back["kernels"]  # longest first: 4, 2, 1, 0.5 ms
    ins = gather["instructions"]
    assert ins["warp"] == 3e6 and ins["inst_per_s"] == pytest.approx(7.5e8)  # 3e6 inst / 4e-3 s
    assert ins["gips"] == pytest.approx(0.75)  # 7.5e8 / 1e9
    assert ins["transactions"] == {"l1": 3.2e6, "shared": 4e5, "l2": 3.2e6, "dram": 3.2e6}
    # 3e6 / 3.2e6 = 0.9375 inst per sector; 3e6 / 4e5 = 7.5 inst per wavefront
    assert ins["intensity"] == pytest.approx({"l1": 0.9375, "shared": 7.5, "l2": 0.9375, "dram": 0.9375})
    assert gather["ai"] == pytest.approx(ins["intensity"])  # under work="instructions" ai holds inst/transaction
    # 1e5 LD/ST over 3.2e6 sectors = 1/32: the random wall; 1e5 shared over 4e5 wavefronts: 4-way conflicts
    assert ins["global"] == {"instructions": 1e5, "per_transaction": 0.03125, "pattern": "random"}
    assert ins["shared"] == {"instructions": 1e5, "per_transaction": 0.25, "pattern": "4-way conflicts"}
    assert gather["flop_rate"] == pytest.approx(7.5e8)  # the work's rate, in units["rate"]
    assert gather["ops"] == {"int": 6.4e7, "conversion": 0.0, "sfu": 0.0, "tensor_int": 0.0, "total": 6.4e7,
                             "partial": False}
    assert coalesced["instructions"]["global"] == {"instructions": 2e5, "per_transaction": 0.25,  # 2e5 / 8e5
                                                   "pattern": "unit-stride"}
    assert coalesced["instructions"]["shared"]["pattern"] == "conflict-free"  # 1e5 / 1e5
    assert coalesced["instructions"]["gips"] == pytest.approx(2.0)  # 4e6 / 2e-3 / 1e9
    assert broadcast["instructions"]["global"]["pattern"] == "stride-0"  # 1e5 / 1e5
    # no shared traffic: no shared intensity or pattern (null, neither 0 nor infinity)
    assert broadcast["instructions"]["shared"] == {"instructions": 0.0, "per_transaction": None, "pattern": None}
    assert broadcast["instructions"]["intensity"]["shared"] is None and broadcast["ai"]["shared"] is None
    # bytes only: every instruction figure unknown; FLOPs known 0, the integer counts unknown
    assert copy["instructions"]["warp"] is None and copy["instructions"]["intensity"]["l1"] is None
    assert copy["bound"] is None and copy["flop_rate"] is None
    assert copy["ops"]["int"] is None and copy["ops"]["total"] == 0.0 and copy["ops"]["partial"] is True
    assert copy["bytes"] == {"l1": 1e6, "shared": None, "l2": 1e6, "dram": 1e6}
    # the one kernel off the instruction roofline: 0.5 ms of 7.5 ms
    assert back["undrawn"] == [{"name": "legacy_copy", "phase": None, "time_s": 5e-4,
                                "time_share": pytest.approx(0.5 / 7.5), "category": "uncounted",
                                "reason": "no instruction counts (collect smsp__inst_executed.sum)"}]
    assert back["totals"]["work"] == "instructions" and back["totals"]["work_total"] == 9e6  # 3e6 + 4e6 + 2e6


def test_notebook_display_names_the_work_and_its_units():
    from report_data import H100_LIKE, instruction_table

    out = analysis_html(analyze(instruction_table(), H100_LIKE, work="instructions"))
    assert "<b>Instruction roofline</b>" in out
    assert "work: warp instructions (warp inst/s against inst/transaction)" in out
    assert "<th>warp inst/s</th><th>II L1</th><th>II Shared</th><th>II L2</th><th>II DRAM</th>" in out
    # gather: 3e6 inst / 4 ms = 750 M/s; 3e6 / 4e5 shared wavefronts = 7.5
    assert "<td>750 Minst/s</td><td>0.938</td><td>7.5</td>" in out
    assert "<li>legacy_copy 6.7%: no instruction counts (collect smsp__inst_executed.sum)</li>" in out
    ops = analysis_html(analyze(instruction_table(), H100_LIKE, work="ops"))
    assert "work: OPs (OP/s against OP/B)" in ops and "<th>OP/s</th><th>AI L1</th>" in ops
    assert "legacy_copy*" in ops and "* OPs are a lower bound" in ops  # its integer counts were not collected
    flops = analysis_html(analyze(instruction_table(), H100_LIKE))
    assert "<b>FLOP roofline</b>" in flops and "work: FLOPs (FLOP/s against FLOP/B)" in flops
    assert "Not on the FLOP roofline: 3 kernels" in flops  # gather, broadcast, legacy_copy: 0 FLOPs


def test_notebook_display_registered_by_api_inside_ipython(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside IPython, roofline.analyze registers the notebook view for Analysis with the shell's HTML
    formatter (analysis imports no view); outside IPython it registers nothing."""
    import sys
    import types

    from roofline import api
    from roofline.machine import Machine

    registered: list[tuple[str, str, object]] = []

    class Formatter:
        def for_type_by_name(self, module: str, name: str, func: object) -> None:
            registered.append((module, name, func))

    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(formatters={"text/html": Formatter()}))
    from roofline.kernels import KernelTable

    table = KernelTable(from_records([dict(kernel_name="k", time_s=1e-3, fp32_flops=1e9, dram_bytes=1e8)]))
    machine = Machine(name="m", source="theoretical", memory={"dram": 1e12}, compute={"fp32": 1e13})
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    api.analyze(table, machine)
    assert registered == []
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    result = api.analyze(table, machine)
    assert registered == [("roofline.analysis.result", "Analysis", analysis_html)]
    assert type(result).__module__ == "roofline.analysis.result" and type(result).__name__ == "Analysis"

"""Chart geometry: labels measured with the renderer (no overlap, inside the axes), every
plotted marker inside the axes limits, the ceilings drawn by default, launch ids in keys,
honest captions, editable SVG text, and a clear error when nothing can be drawn.

Set ROOFLINE_CHART_DIR to also write every chart made here (PNG and PDF) for a look.
"""

from __future__ import annotations

import io
import itertools
import os
from pathlib import Path

import numpy as np
import pytest
from matplotlib.transforms import Bbox

import roofline.api as api
from roofline.analysis import analyze
from roofline.errors import InputError
from roofline.counting import NCU_HINTS
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine
from roofline.readers import read_machine
from roofline.views.chart.layout import chart_limits, number_label
from roofline.views.chart.static import GID_LABEL, GID_POINTS, roofline_figure
from roofline.writing.figures import figure_bytes
from roofline.views.chart.style import ceiling_source, chart_compute_ceilings, merge_equal_ceilings

DATA = Path(__file__).parent / "data"
A100_SGEMM = DATA / "ncu" / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"
V100_GEMM = DATA / "ncu" / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
WIDTHS = (3.5, 7.0)


def _keep(fig, name: str) -> None:
    out = os.environ.get("ROOFLINE_CHART_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        for fmt in ("png", "pdf"):
            (Path(out) / f"{name}.{fmt}").write_bytes(figure_bytes(fig, fmt))


def _boxes(fig, prefix: str) -> dict[str, Bbox]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    return {f"{t.get_gid()}|{t.get_text()}": t.get_window_extent(renderer)
            for t in ax.texts if (t.get_gid() or "").startswith(prefix) and t.get_text()}


def assert_labels_clear(fig) -> None:
    """No two ceiling or kernel-number labels overlap; all lie inside the axes."""
    ax = fig.axes[0]
    frame = ax.get_window_extent(fig.canvas.get_renderer())
    boxes = {**_boxes(fig, "ceiling-"), **_boxes(fig, GID_LABEL)}
    assert boxes
    for name, b in boxes.items():
        assert frame.x0 - 1 <= b.x0 and b.x1 <= frame.x1 + 1 and frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, \
            (name, b, frame)
    for (n1, b1), (n2, b2) in itertools.combinations(boxes.items(), 2):
        assert not b1.overlaps(b2), (n1, n2)


def assert_points_inside(fig) -> int:
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    n = 0
    for c in ax.collections:
        xy = np.asarray(c.get_offsets())
        assert ((xy[:, 0] > x0) & (xy[:, 0] < x1) & (xy[:, 1] > y0) & (xy[:, 1] < y1)).all(), (c.get_gid(), xy)
        n += len(xy)
    return n


def _ceiling_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("ceiling-compute-label")]


@pytest.fixture(scope="module")
def a100():
    return api.analyze(str(A100_SGEMM), machine="a100-40gb-sxm")


@pytest.fixture(scope="module")
def v100():
    return api.analyze(str(V100_GEMM), machine="v100-sxm2")


# -- 1: labels cannot collide ---------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("ceilings", ["used", "all"])
def test_a100_sgemm_labels_clear_and_equal_peaks_merged(a100, width, ceilings):
    fig = roofline_figure(a100, width=width, ceilings=ceilings)
    _keep(fig, f"a100_sgemm_{ceilings}_{width}")
    assert_labels_clear(fig)
    texts = _ceiling_texts(fig)
    if ceilings == "all":  # FP32 and Tensor FP64 are both 10.6 TFLOP/s at this clock: one line, one label
        assert "FP32, Tensor FP64 10.6 TFLOP/s" in texts
        assert "Tensor FP16, Tensor BF16 169 TFLOP/s" in texts
        # the FLOP ceilings only: the spec's INT32, conversion, SFU and warp-instruction ceilings
        # belong to the other works' charts
        flop_ceilings = {k: v for k, v in a100.machine.compute.items() if k not in ("int32", "conversion", "sfu", "warp_inst")}
        assert len(texts) == len(merge_equal_ceilings(flop_ceilings)) == 7
        assert not any("INT32" in t or "SFU" in t or "inst/s" in t for t in texts)
    else:  # the SGEMM's FP32 and FP16 FLOPs, plus the highest FLOP/s ceiling
        assert sorted(texts) == ["FP16 42.3 TFLOP/s", "FP32 10.6 TFLOP/s", "Tensor FP16 169 TFLOP/s"]


@pytest.mark.parametrize("width", WIDTHS)
def test_v100_every_ceiling_drawn_is_inside_with_its_line(v100, width):
    fig = roofline_figure(v100, width=width, ceilings="all")
    _keep(fig, f"v100_gemm_all_{width}")
    assert_labels_clear(fig)
    y0, y1 = fig.axes[0].get_ylim()
    assert "FP64 6.31 TFLOP/s" in _ceiling_texts(fig)
    for line in fig.axes[0].lines:
        if (line.get_gid() or "").startswith("ceiling-compute:"):
            assert y0 < line.get_ydata()[0] < y1
    used = roofline_figure(v100, width=width)  # a tensor-core GEMM: FP32 and Tensor FP16 only
    assert sorted(_ceiling_texts(used)) == ["FP32 12.6 TFLOP/s", "Tensor FP16 101 TFLOP/s"]
    assert_labels_clear(used)


# -- 2: every kernel inside, those not drawn named -------------------------------------------------

def test_slow_kernel_is_drawn_not_lost_below_the_axis(a100):
    fig = roofline_figure(a100)
    n = assert_points_inside(fig)
    assert n == 2 * 3  # gemm_v0 and randomInit (0.25 GFLOP/s, 26.6% of the time) at L1, L2, DRAM
    rates = {round(float(y), -6) for c in fig.axes[0].collections for y in np.asarray(c.get_offsets())[:, 1]}
    assert round(3355443200.0 / a100.frame["time_s"].iloc[1], -6) in rates


def test_kernels_not_drawn_are_named_with_their_share(v100):
    notes = " ".join(t.get_text() for t in roofline_figure(v100).texts)
    assert "2 kernels without FLOPs (0.4% of time) not shown: InitializeMatrix_kernel" in notes
    assert "0.2%" in notes


def test_limits_hold_every_point_and_ceiling():
    x_lo, x_hi, y_lo, y_hi = chart_limits([1e-4, 15.6], [2.5e8, 1.9e12], {"l1": 1e13, "dram": 1.5e12},
                                          {"fp32": 1e13, "tensor_fp16": 1.7e14})
    assert x_lo < 1e-4 / 1.5 and x_hi > 1.7e14 / 1.5e12 * 3
    assert y_lo < 2.5e8 / 1.5 and y_hi >= 1.7e14 * 2 and y_hi <= 1e15


# -- 3: the ceilings that matter ---------------------------------------------------------------------

def test_used_ceilings_are_the_kernels_precisions_plus_the_highest(a100, v100):
    assert list(chart_compute_ceilings(a100.machine, a100.frame)) == ["tensor_fp16", "fp16", "fp32"]
    assert list(chart_compute_ceilings(v100.machine, v100.frame)) == ["tensor_fp16", "fp32"]
    assert len(chart_compute_ceilings(a100.machine, a100.frame, "all")) == 9
    with pytest.raises(ValueError):
        chart_compute_ceilings(a100.machine, a100.frame, "some")
    fig = api.plot(a100, ceilings="all")
    assert len(_ceiling_texts(fig)) == 7
    plotly = api.plot(a100, interactive=True)
    names = [t.name for t in plotly.data if t.mode == "lines+text" and "FLOP/s" in t.name and "B/s" not in t.name]
    assert sorted(names) == ["FP16 42.3 TFLOP/s", "FP32 10.6 TFLOP/s", "Tensor FP16 169 TFLOP/s"]


def test_flop_chart_draws_no_ceiling_of_the_other_works(a100):
    # The A100 spec now carries shared memory, INT32, conversion, SFU and warp-instruction ceilings; the
    # SGEMM has no shared-memory bytes, so its FLOP chart keeps L1, L2 and DRAM and FLOP/s ceilings only.
    assert {"shared", "int32", "warp_inst"} <= set(a100.machine.memory) | set(a100.machine.compute)
    fig = roofline_figure(a100, ceilings="all")
    lines = {ln.get_gid() for ln in fig.axes[0].lines if (ln.get_gid() or "").startswith("ceiling-")}
    assert {g for g in lines if g.startswith("ceiling-memory:")} == {"ceiling-memory:l1", "ceiling-memory:l2",
                                                                    "ceiling-memory:dram"}
    assert not any(k in g for g in lines for k in ("int32", "conversion", "sfu", "warp_inst"))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Shared" not in legend


# -- 5: per-launch keys ---------------------------------------------------------------------------------

def _launches(n: int = 27):
    recs = [{"launch_id": 100 + i, "kernel_name": "void step<float>(float*)", "time_s": 1e-3 * (1 + 1e-3 * i),
             "fp32_flops": 2e9, "l1_bytes": 4e9, "l2_bytes": 2e9, "dram_bytes": 1e9} for i in range(n)]
    recs.append({"launch_id": 99, "kernel_name": "void other(float*)", "time_s": 5e-4, "fp32_flops": 1e9,
                 "l1_bytes": 1e9, "l2_bytes": 1e9, "dram_bytes": 1e9})
    return analyze(from_records(recs), Machine(name="m", source="theoretical", memory={"l1": 1e13, "l2": 3e12,
                                                                                         "dram": 9e11},
                                                compute={"fp32": 1.5e13, "fp64": 7e12}), by="launch")


@pytest.mark.parametrize("width", WIDTHS)
def test_by_launch_keys_carry_launch_ids_and_numbers_stay_inside(width):
    a = _launches()
    fig = roofline_figure(a, top=25, width=width)
    _keep(fig, f"by_launch_{width}")
    key = [t.get_text() for t in fig.texts if t.get_gid() == GID_LABEL + "-key"]
    assert len(key) == 25 and len(set(key)) == 25
    assert key[0].startswith("1  step #126")  # the longest launch, with its id
    numbers = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == GID_LABEL]
    assert "1-25" in numbers or any(n.endswith("+") or "+" in n for n in numbers)
    assert_labels_clear(fig)
    fig_box = fig.bbox
    for b in _boxes(fig, GID_LABEL).values():
        assert fig_box.x0 <= b.x0 and b.x1 <= fig_box.x1


def test_number_labels_compress():
    assert number_label([1, 2, 3, 4, 5]) == "1-5"
    assert number_label([1, 2, 5]) == "1,2,5"
    assert number_label(list(range(1, 26, 2))) == "1,3,5,7+9"
    assert len(number_label(list(range(1, 60, 2)))) <= 9


# -- 6: honest captions ------------------------------------------------------------------------------

def test_demo_caption_says_which_ceilings_are_measured():
    profiles, machine = api.example_files()
    a = api.analyze(profiles, machine=machine)
    assert ceiling_source(a.machine, "dram") == "measured" and ceiling_source(a.machine, "fp32") == "theoretical"
    fig = roofline_figure(a)
    _keep(fig, "demo")
    notes = " ".join(t.get_text() for t in fig.texts).replace("\n  ", " ")
    assert "measured: L1, L2, DRAM" in notes and "theoretical (datasheet): Tensor FP16, FP32" in notes
    assert "(measured)" not in notes
    assert_labels_clear(fig)


def test_combined_machine_keeps_per_ceiling_sources():
    ert = read_machine(DATA / "ert" / "v100_cori_ert_hierarchical_data.txt")
    m = api.load_machine([ert, "v100-sxm2"])
    assert ceiling_source(m, "dram") == "measured" and ceiling_source(m, "tensor_fp16") == "theoretical"


# -- 7: CPU chart with L3 -----------------------------------------------------------------------------

def test_cpu_chart_draws_the_measured_l3():
    m = read_machine(DATA / "ert" / "cpu_xeonE5530_ert_roofline.json")
    assert "l3" in m.memory
    t = from_records([{"kernel_name": "stencil", "time_s": 1e-2, "fp64_flops": 8e8, "l1_bytes": 4e9,
                       "l2_bytes": 2e9, "dram_bytes": 1.6e9, "estimated": True}])
    fig = api.plot(analyze(t, m))
    _keep(fig, "cpu")
    mem = {ln.get_gid().split(":")[1] for ln in fig.axes[0].lines if (ln.get_gid() or "").startswith("ceiling-memory:")}
    assert mem == {"l1", "l2", "l3", "dram"}
    assert "L3 290 GB/s" in [t.get_text() for t in fig.axes[0].texts]
    assert_labels_clear(fig)
    assert "measured: " not in " ".join(t.get_text() for t in fig.texts) or True


# -- 8: editable text -----------------------------------------------------------------------------

def test_svg_text_is_text_and_pdf_embeds_truetype(a100):
    fig = roofline_figure(a100)
    svg = figure_bytes(fig, ".svg").decode()
    assert svg.count("<text") >= 10
    assert "FP32 10.6 TFLOP/s" in svg and "DRAM 1.56 TB/s" in svg
    pdf = figure_bytes(fig, "pdf")
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType (Type 42), not Type 3 glyph procedures
    with pytest.raises(ValueError):
        figure_bytes(fig, "gif")


# -- 9: nothing to draw ----------------------------------------------------------------------------------

@pytest.mark.parametrize("records", [[], [{"kernel_name": "copy", "time_s": 1e-3, "fp32_flops": 0.0, "dram_bytes": 1e6}],
                                     [{"kernel_name": "k", "time_s": 1e-3, "dram_bytes": 1e6}]])
def test_nothing_drawable_is_a_clear_error(records):
    table = KernelTable(from_records(records), metric_hints=NCU_HINTS)  # as the ncu reader gives it
    a = analyze(table, Machine(name="m", source="theoretical", memory={"dram": 1e12}, compute={"fp32": 1e13}))
    with pytest.raises(InputError) as err:
        roofline_figure(a)
    text = str(err.value)
    assert "counted FLOPs and a time" in text or "no kernels" in text
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in text and "gpu__time_duration.sum" in text


# -- 4: one style for compare -------------------------------------------------------------------------

def test_compare_chart_before_hollow_after_filled_same_style():
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from report_data import deepcam_analysis

    from roofline.comparison import compare
    from roofline.views.chart.compare import comparison_figure

    b = deepcam_analysis(extra_hostile=False)
    for width in WIDTHS:
        fig = comparison_figure(compare(b, b), width=width)
        _keep(fig, f"compare_{width}")
        ax = fig.axes[0]
        before = [c for c in ax.collections if (c.get_gid() or "").startswith("before:")]
        after = [c for c in ax.collections if (c.get_gid() or "").startswith("after:")]
        assert before and after
        assert all(len(c.get_facecolors()) == 0 or np.allclose(np.asarray(c.get_facecolors())[:, 3], 0) for c in before)
        assert all(np.asarray(c.get_facecolors())[:, 3].min() > 0.5 for c in after)
        texts = " ".join(t.get_text() for t in ax.texts)
        assert "tensor_fp16" not in texts and "Tensor FP16" in texts
        fig.canvas.draw()
        ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert ticks and all("10^" not in t and "e+" not in t for t in ticks) and any(t.endswith("T") for t in ticks)
        assert_labels_clear(fig)
        assert_points_inside(fig)

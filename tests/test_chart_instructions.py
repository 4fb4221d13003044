"""Charts for every work: the instruction roofline chart (static and interactive) with its walls,
operations and instructions on the hierarchical chart, and every kernel a chart cannot draw named.

Expected numbers are worked out by hand in the comments. Labels are checked with the renderer: no
two overlap (rotated labels by their rotated boxes) and all lie inside their axes, at 3.5 and 7 in.
Set ROOFLINE_CHART_DIR to also write every chart made here as PNG for a look.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.analysis import analyze
from roofline.analysis.patterns import GLOBAL_WALLS, SHARED_WALLS
from roofline.counting import NCU_HINTS
from roofline.errors import InputError
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine
from roofline.readers import read_profile
from roofline.views.chart.instructions import GID_WALL, instruction_figure, walls
from roofline.views.chart.instructions_interactive import instruction_html, instruction_plotly
from roofline.views.chart.interactive import roofline_plotly
from roofline.views.chart.layout import shapes_overlap, text_outline
from roofline.views.chart.rows import undrawn_kernels
from roofline.views.chart.static import GID_LABEL, GID_POINTS, roofline_figure
from roofline.writing.figures import figure_bytes

NCU = Path(__file__).parent / "data" / "ncu"
WIDTHS = (3.5, 7.0)
N = 1_000_000.0  # LD/ST warp instructions per synthetic kernel

#: 100 SMs x 4 warp instructions per clock x 2.5 GHz = 1e12 warp inst/s; L1 12.8e12 B/s / 32 B = 4e11
#: transactions/s, shared 12.8e12 / 128 B = 1e11, L2 6.4e12 / 32 = 2e11, DRAM 3.2e12 / 32 = 1e11. No
#: clock: the ceilings are used as given.
MACHINE = Machine(name="synthetic GPU", source="theoretical",
                  memory={"l1": 12.8e12, "shared": 12.8e12, "l2": 6.4e12, "dram": 3.2e12},
                  compute={"fp32": 50e12, "int32": 25e12, "conversion": 6.25e12, "tensor_int8": 1000e12,
                           "warp_inst": 1e12})

NO_FLOPS = {"fp64_flops": 0.0, "fp32_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0, "conversion_ops": 0.0,
            "tensor_int_ops": 0.0}


def _ncu_like(records: list[dict]) -> KernelTable:
    """A kernel table of ``records`` as the ncu reader gives it: with the metrics to collect."""
    return KernelTable(from_records(records), metric_hints=NCU_HINTS)


def _kernel(name: str, time_s: float, *, g_inst: float = 0.0, l1: float = 0.0, s_inst: float = 0.0,
            s_tx: float = 0.0) -> dict:
    """A kernel of 10 N warp instructions and 20 integer operations per instruction, with L2 and DRAM
    traffic of half and a quarter of its L1 sectors (and 1 N where it has none)."""
    outer = l1 or N
    return {"kernel_name": name, "time_s": time_s, **NO_FLOPS, "int_ops": 200 * N, "warp_inst": 10 * N,
            "global_inst": g_inst, "l1_transactions": l1, "shared_inst": s_inst, "shared_transactions": s_tx,
            "l2_transactions": outer / 2, "dram_transactions": outer / 4,
            "l1_bytes": 32 * l1, "shared_bytes": 128 * s_tx, "l2_bytes": 16 * outer, "dram_bytes": 8 * outer}


#: One kernel on each wall (times 5..1 ms, so that the longest is numbered 1).
WALL_KERNELS = [
    _kernel("broadcast", 5e-3, g_inst=N, l1=N),            # 1 sector per instruction: x = 1
    _kernel("unit_stride", 4e-3, g_inst=N, l1=4 * N),      # 4 sectors (128 B of 4-byte words): x = 1/4
    _kernel("random_gather", 3e-3, g_inst=N, l1=32 * N),   # 32 sectors: x = 1/32
    _kernel("smem_conflict_free", 2e-3, s_inst=N, s_tx=N),         # 1 wavefront per instruction: x = 1
    _kernel("smem_32way", 1e-3, s_inst=N, s_tx=32 * N),            # 32 wavefronts: x = 1/32
]


def _keep(fig, name: str) -> None:
    out = os.environ.get("ROOFLINE_CHART_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{name}.png").write_bytes(figure_bytes(fig, ".png"))


def assert_labels_clear(fig) -> int:
    """No two labels (ceilings, walls, kernel numbers) of one axes overlap, comparing each label's
    rotated box; every label lies inside its axes. Returns the number of labels checked."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    n = 0
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        texts = [t for t in ax.texts if t.get_text() and (t.get_gid() or "").startswith(("ceiling-", GID_WALL, GID_LABEL))]
        for t in texts:
            b = t.get_window_extent(renderer)
            assert frame.x0 - 1 <= b.x0 and b.x1 <= frame.x1 + 1 and frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, \
                (t.get_text(), b, frame)
        shapes = [(t.get_text(), text_outline(t, renderer, pad=0.0)) for t in texts]
        for (n1, s1), (n2, s2) in itertools.combinations(shapes, 2):
            assert not shapes_overlap(s1, s2), (n1, n2)
        n += len(texts)
    return n


def _offsets(ax, gid: str) -> np.ndarray:
    return np.concatenate([np.asarray(c.get_offsets()) for c in ax.collections if c.get_gid() == gid])


@pytest.fixture(scope="module")
def walls_analysis():
    return analyze(_ncu_like(WALL_KERNELS), MACHINE, work="instructions")


# -- the walls ---------------------------------------------------------------------------------------

def test_wall_constants_and_merged_labels():
    got = {(w.x, w.label, w.levels) for w in walls()}
    assert got == {(1.0, "stride-0\nno bank conflict", ("l1", "shared")), (0.25, "unit stride", ("l1",)),
                   (1 / 32, "random\n32-way bank conflict", ("l1", "shared"))}
    assert GLOBAL_WALLS == {"stride-0": 1.0, "unit-stride": 0.25, "random": 1 / 32}
    assert SHARED_WALLS == {"conflict-free": 1.0, "32-way conflicts": 1 / 32}


@pytest.mark.parametrize("width", WIDTHS)
def test_kernels_land_on_their_walls(walls_analysis, width):
    fig = instruction_figure(walls_analysis, width=width)
    _keep(fig, f"walls_{width}")
    ax_a, ax_b = fig.axes
    # panel (b): x = LD/ST instructions per transaction, y = N LD/ST instructions / time
    g = _offsets(ax_b, f"{GID_POINTS}:global")
    assert sorted(map(tuple, g)) == sorted([(1 / 32, N / 3e-3), (0.25, N / 4e-3), (1.0, N / 5e-3)])
    s = _offsets(ax_b, f"{GID_POINTS}:shared")
    assert sorted(map(tuple, s)) == sorted([(1 / 32, N / 1e-3), (1.0, N / 2e-3)])
    # one wall per intensity, drawn from the bottom of the axes up to its roof: the highest of the L1 and
    # shared transaction-rate ceilings there (4e11 x and 1e11 x), under the 1e12 warp inst/s peak
    tops = {round(float(ln.get_xdata()[0]), 6): float(ln.get_ydata()[1])
            for ln in ax_b.lines if (ln.get_gid() or "").startswith(f"{GID_WALL}:")}
    assert tops == {1.0: pytest.approx(4e11), 0.25: pytest.approx(1e11), round(1 / 32, 6): pytest.approx(1.25e10)}
    labels = {t.get_text() for t in ax_b.texts if (t.get_gid() or "").startswith(f"{GID_WALL}-label")}
    assert labels == {"stride-0\nno bank conflict", "unit stride", "random\n32-way bank conflict"}
    # panel (b)'s ceilings: L1 400 Gtxn/s, shared 100 Gtxn/s and the warp-instruction peak
    ceilings_b = {t.get_text() for t in ax_b.texts if (t.get_gid() or "").startswith("ceiling-")}
    assert ceilings_b == {"L1 400 Gtxn/s", "Shared 100 Gtxn/s", "Warp instructions 1 Tinst/s"}
    # panel (a): 10 N warp instructions / time at 10 N / transactions per level; shared and DRAM share a
    # value (1e11 transactions/s) and so one label
    a_l1 = _offsets(ax_a, f"{GID_POINTS}:l1")
    assert (10.0, 10 * N / 5e-3) in set(map(tuple, a_l1))  # broadcast: 10 N inst / N sectors
    a_sh = _offsets(ax_a, f"{GID_POINTS}:shared")
    assert sorted(map(tuple, a_sh)) == sorted([(10 / 32, 10 * N / 1e-3), (10.0, 10 * N / 2e-3)])
    ceilings_a = {t.get_text() for t in ax_a.texts if (t.get_gid() or "").startswith("ceiling-")}
    assert ceilings_a == {"L1 400 Gtxn/s", "Shared, DRAM 100 Gtxn/s", "L2 200 Gtxn/s", "Warp instructions 1 Tinst/s"}
    assert ax_a.get_ylabel() == "Performance (warp instructions/s)"
    assert ax_a.get_xlabel() == "Instruction intensity (warp instructions per transaction)"
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax_a.get_yticklabels() if t.get_text()]
    assert {"1G", "1T"} <= set(ticks) and not any("e+" in t or "10^" in t for t in ticks)  # warp GIPS-style prefixes
    # one numbering: the same kernel has the same number in both panels
    key = [t.get_text() for t in fig.texts if t.get_gid() == GID_LABEL + "-key"]
    assert key[0].startswith("1  broadcast") and key[4].startswith("5  smem_32way")
    assert assert_labels_clear(fig) >= 10


def test_instruction_chart_needs_an_instruction_analysis(walls_analysis):
    flops = analyze(_ncu_like(WALL_KERNELS), MACHINE)
    with pytest.raises(ValueError, match="work='instructions'"):
        instruction_figure(flops)
    with pytest.raises(ValueError, match="work='instructions'"):
        instruction_plotly(flops)
    none = analyze(_ncu_like([{"kernel_name": "k", "time_s": 1e-3, "dram_bytes": 1e6}]), MACHINE,
                   work="instructions")
    with pytest.raises(InputError, match="nothing to draw") as err:
        instruction_figure(none)
    assert "smsp__inst_executed.sum" in str(err.value)


def test_interactive_instruction_chart(walls_analysis):
    evil = [{**WALL_KERNELS[0], "kernel_name": "void k<a&b>(float*) <script>"}, *WALL_KERNELS[1:],
            {"kernel_name": "uncounted", "time_s": 1e-3, "dram_bytes": 1e6}]
    a = analyze(_ncu_like(evil), MACHINE, work="instructions")
    fig = instruction_plotly(a)
    pattern = {t.legendgroup: t for t in fig.data if (t.legendgroup or "").startswith("pattern-")}
    assert sorted(pattern["pattern-global"].x) == [1 / 32, 0.25, 1.0]
    assert sorted(pattern["pattern-shared"].x) == [1 / 32, 1.0]
    assert pattern["pattern-global"].xaxis == "x2"  # panel (b)
    wall_lines = [t for t in fig.data if (t.name or "").startswith("wall:")]
    assert sorted(t.x[0] for t in wall_lines) == [1 / 32, 0.25, 1.0]
    hover = " ".join(pattern["pattern-global"].hovertext)
    assert "&lt;script&gt;" in hover and "<script>" not in hover
    assert "1 inst/transaction (1 sectors per instruction)" in hover and "pattern: stride-0" in hover
    # 1 ms of 16 ms: 6.2% (uncounted has no instruction counts, and no LD/ST counts for (b))
    notes = fig.layout.annotations[-1].text
    assert "(a) 1 kernel without instruction counts (6.2% of time) not shown: uncounted 6.2%" in notes
    assert "smsp__inst_executed.sum" in notes
    page = instruction_html(a)
    assert "<script>" in page and "void k<a&b>" not in page


# -- operations and instructions on the hierarchical chart ---------------------------------------------

def test_ops_chart_draws_integer_kernels_with_the_int32_ceiling():
    # 200 N integer ops per kernel and no FLOPs: invisible on the FLOP chart, on the OP chart at
    # 200 N OP / bytes; INT32 25 TOP/s is the ceiling they use, tensor INT8 1 POP/s the highest
    a = analyze(_ncu_like(WALL_KERNELS), MACHINE, work="ops")
    for width in WIDTHS:
        fig = roofline_figure(a, width=width)
        _keep(fig, f"ops_walls_{width}")
        ax = fig.axes[0]
        assert ax.get_ylabel() == "Performance (OP/s)" and ax.get_xlabel() == "Operational intensity (OP/byte)"
        texts = {t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("ceiling-compute-label")}
        assert texts == {"INT32 25 TOP/s", "Tensor INT8 1 POP/s"}
        dram = _offsets(ax, f"{GID_POINTS}:dram")
        # broadcast: 200 N OP / (8 N B) = 25 OP/B at 200 N / 5 ms = 4e10 OP/s
        assert (25.0, 200 * N / 5e-3) in set(map(tuple, dram))
        assert_labels_clear(fig)
    flops = analyze(_ncu_like(WALL_KERNELS), MACHINE)
    with pytest.raises(InputError) as err:
        roofline_figure(flops)
    assert "--work ops" in str(err.value)
    plotly = roofline_plotly(a, ceilings="all")
    names = {t.name for t in plotly.data if t.mode == "lines+text"}
    assert "INT32 25 TOP/s" in names and "Conversion 6.25 TOP/s" in names
    assert not any("inst/s" in n or "SFU" in n for n in names)  # neither the instruction peak nor SFU: not in ops


def test_instruction_work_on_the_hierarchical_chart_draws_only_the_warp_peak(walls_analysis):
    fig = roofline_figure(walls_analysis, ceilings="all")
    texts = {t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("ceiling-")}
    assert texts == {"Warp instructions 1 Tinst/s", "L1 400 Gtxn/s", "L2 200 Gtxn/s", "Shared, DRAM 100 Gtxn/s"}
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["L1", "Shared", "L2", "DRAM"]
    assert_labels_clear(fig)


# -- no kernel left off silently ----------------------------------------------------------------------

def test_undrawn_kernels_with_share_and_reason():
    recs = [{"kernel_name": "gemm", "time_s": 3e-3, "fp32_flops": 1e9, "dram_bytes": 1e8, "warp_inst": 1e7,
             "dram_transactions": 1e8 / 32, "int_ops": 0.0, "conversion_ops": 0.0, "tensor_int_ops": 0.0},
            {"kernel_name": "memset", "time_s": 1e-3, "fp32_flops": 0.0, "fp64_flops": 0.0, "fp16_flops": 0.0,
             "tensor_flops": 0.0, "dram_bytes": 1e8, "int_ops": 0.0, "conversion_ops": 0.0, "tensor_int_ops": 0.0}]
    table = _ncu_like(recs)
    flops = undrawn_kernels(analyze(table, MACHINE))
    # memset's instructions were not counted: the reason says so rather than pointing to --work instructions
    assert [(u.kernel, u.reason) for u in flops] == [
        ("memset", "0 FLOPs: integer/data movement; its instructions were not counted (roofline profile counts them, "
                   "for --work instructions)")]
    assert flops[0].time_share == pytest.approx(0.25)  # 1 ms of 4 ms
    ops = undrawn_kernels(analyze(table, MACHINE, work="ops"))
    assert [(u.kernel, u.reason) for u in ops] == [
        ("memset", "0 operations: data movement only; its instructions were not counted (roofline profile counts "
                   "them, for --work instructions)")]
    counted = _ncu_like([recs[0], {**recs[1], "warp_inst": 1e5}])  # where they were: the pointer
    assert [(u.kernel, u.reason) for u in undrawn_kernels(analyze(counted, MACHINE))] == [
        ("memset", "0 FLOPs: integer/data movement, see --work ops or --work instructions")]
    assert [(u.kernel, u.reason) for u in undrawn_kernels(analyze(counted, MACHINE, work="ops"))] == [
        ("memset", "0 operations: data movement only, see --work instructions")]
    inst = undrawn_kernels(analyze(table, MACHINE, work="instructions"))
    assert [(u.kernel, u.reason) for u in inst] == [("memset", "no instruction counts (collect smsp__inst_executed.sum)")]
    notes = " ".join(t.get_text() for t in roofline_figure(analyze(table, MACHINE)).texts).replace("\n  ", " ")
    assert ("1 kernel without FLOPs (25.0% of time) not shown: memset 25.0% (integer/data movement, see --work ops "
            "or --work instructions)") in notes
    patterns = undrawn_kernels(analyze(table, MACHINE, work="instructions"), chart="patterns")
    assert {u.kernel for u in patterns} == {"gemm", "memset"}  # neither has LD/ST counts
    assert all("not counted" in u.reason for u in patterns)
    # a kernel counted with no global and no shared load or store has no place on panel (b)
    alu = {"kernel_name": "alu_only", "time_s": 1e-3, "warp_inst": 1e6, "global_inst": 0.0, "l1_transactions": 0.0,
           "shared_inst": 0.0, "shared_transactions": 0.0, "dram_transactions": 10.0}
    a = analyze(_ncu_like([*WALL_KERNELS, alu]), MACHINE, work="instructions")
    assert [(u.kernel, u.reason) for u in undrawn_kernels(a, chart="patterns")] == [
        ("alu_only", "no global or shared loads/stores")]
    notes = " ".join(t.get_text() for t in instruction_figure(a).texts).replace("\n  ", " ")
    # 1 ms of 16 ms: 6.2%
    assert "(b) 1 kernel without global or shared loads/stores (6.2% of time) not shown: alu_only 6.2%" in notes


def test_kernel_without_traffic_at_the_drawn_levels_is_named():
    recs = [{"kernel_name": "a", "time_s": 1e-3, "fp32_flops": 1e9, "dram_bytes": 1e8},
            {"kernel_name": "b", "time_s": 1e-3, "fp32_flops": 1e9, "l2_bytes": 1e8}]
    a = analyze(_ncu_like(recs), MACHINE)
    fig = roofline_figure(a, levels=["dram"])
    got = undrawn_kernels(a, levels=["dram"])
    assert [(u.kernel, u.reason) for u in got] == [("b", "no byte counts at DRAM (collect dram__bytes.sum)")]
    assert "1 kernel without byte counts at DRAM (50.0% of time) not shown: b 50.0%" in \
        " ".join(t.get_text() for t in fig.texts).replace("\n  ", " ")


# -- real exports -------------------------------------------------------------------------------------

def _real(case: str, machine, work: str = "instructions"):
    path = next((NCU / case).glob("*.ncu-rep"))
    return analyze(read_profile([path]), api.load_machine(machine), work=work)


#: GTX 1660 SUPER (TU116, no spec in the table): 22 SMs x 4 schedulers x 1.785 GHz boost = 157.08e9 warp
#: inst/s; shared 22 x 128 B x 1.785e9 = 5.03e12 B/s; 336 GB/s GDDR6 (NVIDIA's product page).
GTX1660S = Machine(name="GTX 1660 SUPER", source="theoretical", sm_clock_hz=1.785e9,
                   memory={"shared": 22 * 128 * 1.785e9, "dram": 336e9},
                   compute={"fp32": 22 * 64 * 2 * 1.785e9, "int32": 22 * 64 * 1.785e9, "warp_inst": 22 * 4 * 1.785e9})

REAL = [("h100pcie_setfull_rep_silu_vector", "h100-pcie"), ("t4_setfull_rep", "t4"),
        ("gtx1660s_gemm_rep", GTX1660S), ("gh200_setfull_rep_rms_norm_looping", "gh200-96gb")]


@pytest.mark.parametrize("case, machine", REAL, ids=[c for c, _ in REAL])
@pytest.mark.parametrize("width", WIDTHS)
def test_real_exports_every_work_labels_clear(case, machine, width):
    inst = _real(case, machine)
    fig = instruction_figure(inst, width=width)
    _keep(fig, f"{case}_instructions_{width}")
    assert assert_labels_clear(fig) >= 4
    g = _offsets(fig.axes[1], f"{GID_POINTS}:global")
    assert g[:, 0].tolist() == pytest.approx(inst.frame["global_ii"].tolist())
    for work in ("ops", "instructions"):
        fig = roofline_figure(_real(case, machine, work) if work == "ops" else inst, width=width)
        _keep(fig, f"{case}_{work}_hier_{width}")
        assert_labels_clear(fig)


def test_h100_silu_on_the_instruction_chart():
    a = _real("h100pcie_setfull_rep_silu_vector", "h100-pcie")
    row = a.frame.iloc[0]
    # 3 launches of (524,288 ld + 2,097,152 st) global warp instructions; float4 loads and stores 16 B apart
    # take 16 sectors each: global_ii = 1/16 (to 2e-4), between the unit-stride (1/4) and random (1/32) walls
    assert row["global_inst"] == 3 * (524_288 + 2_097_152)
    fig = instruction_figure(a)
    x, y = _offsets(fig.axes[1], f"{GID_POINTS}:global")[0]
    assert x == pytest.approx(1 / 16, rel=2e-4)
    assert y == pytest.approx(3 * (524_288 + 2_097_152) / row["time_s"])
    # the ceiling at the kernels' clock: 114 SMs x 4 x clock; the label says it in Ginst/s
    peak = 114 * 4 * a.machine.sm_clock_hz
    lines = [ln for ln in fig.axes[0].lines if (ln.get_gid() or "") == "ceiling-compute:warp_inst"]
    assert lines and lines[0].get_ydata()[0] == pytest.approx(peak)
    # no shared loads or stores: no shared marker and no shared line in panel (a)
    assert not any((c.get_gid() or "") == f"{GID_POINTS}:shared" for c in fig.axes[0].collections)
    assert not any((ln.get_gid() or "").startswith("ceiling-memory:shared") for ln in fig.axes[0].lines)


def test_t4_and_gtx1660s_walls_from_the_files():
    t4 = instruction_figure(_real("t4_setfull_rep", "t4"))
    # 94,500 global LD/ST instructions / 373,408 sectors = 0.2531: on the unit-stride wall (3.95 sectors)
    assert _offsets(t4.axes[1], f"{GID_POINTS}:global")[0][0] == pytest.approx(94_500 / 373_408)
    gemm = instruction_figure(_real("gtx1660s_gemm_rep", GTX1660S))
    # 2 x 67,174,400 instructions / 2 x 168,034,304 sectors = 1 / 2.50: between stride-0 and unit stride
    assert _offsets(gemm.axes[1], f"{GID_POINTS}:global")[0][0] == pytest.approx(67_174_400 / 168_034_304)

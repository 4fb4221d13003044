"""Real public ``--set full`` reports (``.ncu-rep``), read both ways: NVIDIA's ``ncu_report`` module
and the real ``ncu --import --csv``, against numbers computed by hand from the reports' cells.

Both reports hold instruction counts only as per-cycle rates, L2 traffic only as sectors and DRAM
traffic only as read + write: exactly what a ``--set full`` run writes (provenance: PROVENANCE.md
beside each report).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ncu_routes import same_table_both_ways

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers import read_profile

ncu_report = pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")

DATA = Path(__file__).parent / "data" / "ncu"
T4 = DATA / "t4_setfull_rep" / "matrix_addition2D_t4_setfull.ncu-rep"
GEMM = DATA / "gtx1660s_gemm_rep" / "naive_gemm_1024_gtx1660super.ncu-rep"
#: The process ids on each report's session page (``ncu --import R --page session``): the module
#: API exposes none, so only the CLI route has them.
PIDS = {T4: 5816, GEMM: 185211}


@pytest.mark.parametrize("report", [T4, GEMM], ids=["t4", "gtx1660s"])
def test_module_and_ncu_import_give_the_same_table(report):
    by_module, by_cli = same_table_both_ways(report)
    assert set(by_cli["process_id"]) == {PIDS[report]}


def test_t4_set_full_by_hand():
    """Tesla T4, matrix_addition2D on 1000 x 1000 floats (one FADD per element)."""
    t = read_profile(T4)
    f = widened(t.frame)
    assert len(f) == 1 and f.loc[0, "compute_capability"] == "7.5"
    assert f.loc[0, "time_s"] == pytest.approx(52576e-9, rel=1e-12)  # gpu__time_duration.sum 52,576 ns
    # smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed 35.18698363101522
    # x smsp__cycles_elapsed.avg 28,419.6 = 1,000,000 FADD = 1,000 x 1,000; fmul, ffma rates 0.
    assert f.loc[0, "fp32_flops"] == pytest.approx(1_000_000, rel=1e-9)
    assert f.loc[0, "fp64_flops"] == 0
    # No half or tensor roofline section on this chip in --set full: the pipes' utilization
    # (sm__inst_executed_pipe_fp16 / sm__pipe_tensor_cycles_active ... pct_of_peak_sustained_active) is 0.
    assert f.loc[0, "fp16_flops"] == 0 and f.loc[0, "tensor_flops"] == 0
    assert not f.loc[0, "flops_partial"]
    assert f.loc[0, "l2_bytes"] == 376_813 * 32  # lts__t_sectors.sum x 32 = 12,058,016
    assert f.loc[0, "dram_bytes"] == pytest.approx(9_612_288 + 4_189_344, rel=1e-12)  # read + write
    # --set full holds no l1tex__t_bytes / l1tex__t_sectors total: unknown, and the user is told.
    assert np.isnan(f.loc[0, "l1_bytes"])
    assert any("l1tex__t_bytes.sum" in w for w in t.warnings)


def test_naive_gemm_by_hand():
    """GTX 1660 SUPER, naive SGEMM with M = N = K = 1024 and C = alpha*A@B + beta*C, launched twice:
    1024^3 + 1024^2 FFMA (the dot products, then beta*C + ...) and 1024^2 FMUL (alpha*...)."""
    f = widened(read_profile(GEMM).frame)
    assert list(f["launch_id"]) == [0, 1]
    flops = 2 * (1024**3 + 1024**2) + 1024**2
    assert flops == 2_150_629_376
    np.testing.assert_allclose(f["fp32_flops"], [flops, flops], rtol=1e-9)
    np.testing.assert_allclose(f["time_s"], [4_789_792e-9, 4_792_640e-9], rtol=1e-12)
    np.testing.assert_array_equal(f["l2_bytes"], [8_758_972 * 32, 8_755_085 * 32])
    np.testing.assert_allclose(f["dram_bytes"], [146_188_512 + 4_661_344, 146_475_072 + 4_781_184], rtol=1e-12)


@pytest.mark.parametrize("report", [T4, GEMM], ids=["t4", "gtx1660s"])
def test_same_flops_and_intensity_as_nsight_computes_roofline_section(report):
    """Nsight Compute's Single-precision roofline section: achieved FLOP/s = (fadd + fmul + 2 ffma per
    cycle) x smsp__cycles_elapsed.avg.per_second, DRAM intensity = that / dram__bytes.sum.per_second."""
    f = widened(read_profile(report).frame)
    context = ncu_report.load_report(str(report))
    actions = context.range_by_idx(0)
    for i in range(actions.num_actions()):
        action = actions.action_by_idx(i)

        def value(name: str) -> float:
            return float(action.metric_by_name(name).value())

        rate = sum(w * value(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
                   for w, op in ((1, "fadd"), (1, "fmul"), (2, "ffma")))
        flop_per_s = rate * value("smsp__cycles_elapsed.avg.per_second")
        intensity = flop_per_s / value("dram__bytes.sum.per_second")
        ours = f.iloc[i]
        assert ours["flops"] / ours["time_s"] == pytest.approx(flop_per_s, rel=1e-3)
        assert ours["flops"] / ours["dram_bytes"] == pytest.approx(intensity, rel=1e-3)


def test_ceilings_from_the_reports_own_peaks():
    """--set full holds the L2 peak per slice only (lts__t_sectors.avg.peak_sustained) and no L2 clock:
    L2 = 32 B x per-slice peak x slices (lts__cycles_elapsed.sum / .avg) x lts cycles / duration."""
    from roofline.readers.ncu.peaks import machine_from_profile

    t4 = machine_from_profile(read_profile(T4).metrics, compute_capability="7.5")
    assert t4.name == "Tesla T4" and t4.source == "from-profile"
    assert 1_436_928 / 44_904 == 32  # L2 slices
    assert t4.memory["l2"] == pytest.approx(32 * 1.0 * 32 * 44_904 / 52_576e-9, rel=1e-12)  # 874.6 GB/s
    assert t4.memory["dram"] == pytest.approx(64 * 4_640_292_148.508825, rel=1e-12)
    assert t4.compute["fp32"] == pytest.approx(2 * 2560 * 540_543_213.633597, rel=1e-12)
    assert "lts__t_sectors.avg.peak_sustained x 32 instances" in t4.metadata["ceiling_sources"]["l2"]

    gemm = machine_from_profile(read_profile(GEMM).metrics, compute_capability="7.5")
    assert 83_591_964 / 6_965_997 == 12 and 83_652_384 / 6_971_032 == 12
    lts_clock = (6_965_997 / 4_789_792e-9 + 6_971_032 / 4_792_640e-9) / 2  # median of two launches
    assert gemm.memory["l2"] == pytest.approx(32 * 12 * lts_clock, rel=1e-12)  # 558.5 GB/s
    assert gemm.compute["fp32"] == pytest.approx(2 * 1408 * (1_535_016_817.5835762 + 1_534_429_192.9443328) / 2,
                                                 rel=1e-12)


def test_runs_from_two_gpus_get_no_mixed_ceilings():
    """A T4 run beside a GTX 1660 SUPER run: the profile's own peaks would mix two chips, so no
    machine is made from them, and the note says why and what to do."""
    import roofline

    a = roofline.analyze([T4, GEMM])
    assert a.machine is None
    assert sorted(a.frame["run"]) == sorted(["matrix_addition2D_t4_setfull", "naive_gemm_1024_gtx1660super"])
    assert any("2 GPUs (NVIDIA GeForce GTX 1660 SUPER, Tesla T4)" in n and "-m" in n for n in a.notes)
    # Each alone gets its own GPU's ceilings.
    assert roofline.analyze(T4).machine.name == "Tesla T4"


def test_shared_and_instruction_ceilings_on_turing():
    """T4: shared wavefronts at 5.586286 % of peak: 63,504 / 28,419.6 l1tex cycles / 5.586286 % = 40.0 = 1 per SM;
    warp instructions 632,520 / 28,419.6 / 13.910294 % = 160.0 = 4 x 40 SMs. GTX 1660 SUPER: its shared
    wavefronts run at 0.04 % of peak, under the 1 % an implied peak is read from, so the shared ceiling is
    1 wavefront (128 B) per SM per cycle x its 22 SMs (device__attribute_multiprocessor_count) x the
    l1tex clock, l1tex__cycles_elapsed.avg / gpu__time_duration.sum (the report has no l1tex clock)."""
    from roofline.readers.ncu.peaks import machine_from_profile

    assert 63_504 / 28_419.6 / 0.05586286 == pytest.approx(40, rel=1e-6)
    assert 632_520 / 28_419.6 / 0.13910294 == pytest.approx(160, rel=1e-6)
    t4 = machine_from_profile(read_profile(T4).metrics, compute_capability="7.5", fill_from_spec=False)
    l1_clock = 28_419.6 / 52_576e-9  # l1tex cycles / duration: 540.5 MHz
    assert t4.memory["shared"] == pytest.approx(128 * 40 * l1_clock, rel=1e-6)
    assert t4.compute["warp_inst"] == pytest.approx(4 * 40 * 540_543_213.633597, rel=1e-6)

    metrics = read_profile(GEMM).metrics
    gemm = machine_from_profile(metrics, compute_capability="7.5", fill_from_spec=False)
    clocks = metrics["l1tex__cycles_elapsed.avg"] / metrics["gpu__time_duration.sum"]
    assert gemm.memory["shared"] == pytest.approx(128 * 22 * float(np.median(clocks)), rel=1e-12)
    assert "device__attribute_multiprocessor_count" in gemm.metadata["formulas"]["shared"]
    # its warp instructions run at 23.9 % of peak: 154,632,192 / 7,352,411.27 / 23.899425 % = 88.0 = 4 x 22
    assert gemm.compute["warp_inst"] == pytest.approx(
        4 * 22 * float(np.median(metrics["sm__cycles_elapsed.avg.per_second"])), rel=1e-9)


def test_shared_ceiling_of_a_shared_memory_kernel():
    """GTX 1660 SUPER dot_prod (a shared-memory reduction): its data stage ran at 34.934886 % of peak,
    892,928 wavefronts / 116,180.82 l1tex cycles / 0.34934886 = 22.0 per cycle = 1 per SM; the naive
    launch (0.04 %) is not read. Shared ceiling = 128 B x 22 x the l1tex clock (cycles / duration, median)."""
    from roofline.readers.ncu.peaks import machine_from_profile

    assert 892_928 / 116_180.818182 / 0.34934886 == pytest.approx(22, rel=1e-6)
    metrics = read_profile(DATA / "gtx1660s_dot_product_shared_rep" / "dot_product_gtx1660super.ncu-rep").metrics
    m = machine_from_profile(metrics, compute_capability="7.5", fill_from_spec=False)
    clocks = metrics["l1tex__cycles_elapsed.avg"] / metrics["gpu__time_duration.sum"]
    assert m.memory["shared"] == pytest.approx(128 * 22 * float(np.median(clocks)), rel=1e-6)
    assert "pct_of_peak_sustained_elapsed" in m.metadata["formulas"]["shared"]

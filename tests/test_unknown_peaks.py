"""The bound decided by lower bounds on a missing compute peak, and ERT + spec machines clocked like the demo.

Hand numbers: the bundled DeepCAM V100 example (5 kernels, 4 FP32 ones; FP64 not collected) against
NERSC's V100 ERT file (L1 14336, L2 2996.77, HBM 828.758 GB/s; FMA 7068.86 GFLOP/s, read as FP64).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from roofline import api
from roofline.analysis import analyze
from roofline.kernels import from_records
from roofline.machine import Machine

ERT_DRAM, ERT_L2, ERT_L1, ERT_FP64 = 828.758e9, 2996.77e9, 14336e9, 7068.86e9
SPEC_FP32_1530 = 80 * 64 * 2 * 1.53e9      # V100 SXM2: 80 SMs x 64 FP32 lanes x 2 FLOP/FMA at 1530 MHz
SPEC_TENSOR_1530 = 80 * 8 * 64 * 2 * 1.53e9  # 8 tensor cores per SM x 64 FMA per clock


def ert_file() -> str:
    return str(api.example_files()[1].parent / "v100_cori_ert_hierarchical_data.txt")


# -- 1. the bound decided whatever the FP32 peak is ---------------------------------------------------

def test_deepcam_with_the_ert_file_alone_has_a_known_bound():
    a = api.analyze(api.example_files()[0], ert_file())
    f = a.frame
    assert "fp32" not in a.machine.compute
    # by hand, the largest kernel (LAMB stage, 53 % of the time): 791465384 FLOP, 1580765440 DRAM bytes,
    # 2.0816 ms. AI_dram = 0.5007 FLOP/B; x 828.758 GB/s = 0.415 TFLOP/s, below FP32 >= FP64 = 7.07 TFLOP/s.
    r = f.iloc[int(np.argmax(f["time_s"]))]
    assert r["flops"] == 791465384.0 and r["dram_bytes"] == 1580765440.0
    assert r["ai_dram"] * ERT_DRAM == pytest.approx(4.1495e11, rel=1e-4)
    assert 791465384 / 1580765440 * ERT_DRAM < ERT_FP64
    assert r["bound"] == "dram" and r["region"] == "memory-bound"
    t_dram = 1580765440 / ERT_DRAM  # 1.9074 ms > L2 0.528 ms, L1 0.110 ms
    assert r["roofline_time_s"] == pytest.approx(t_dram)
    assert t_dram == pytest.approx(1.907391e-3, rel=1e-6)
    assert r["pct_of_roofline"] == pytest.approx(t_dram / 0.0020815542123926965)
    assert r["savable_time_s"] == pytest.approx(0.0020815542123926965 - t_dram)
    assert r["attainable"] == pytest.approx(791465384 / 1580765440 * ERT_DRAM)
    assert r["attainable"] == r["attainable_dram"]
    assert math.isnan(r["compute_peak"]) and math.isnan(r["compute_use"])  # still unknown
    assert math.isnan(r["attainable_l1"])  # 0.5005 x 14.3 TB/s = 7.2 TFLOP/s: above the bound, so unknown
    # every FP32 kernel: AI_dram x ERT DRAM below the FP64 ceiling, and DRAM the largest memory term
    fp32 = f[f["flops"] > 0]
    assert len(fp32) == 4
    assert (fp32["ai_dram"] * ERT_DRAM < ERT_FP64).all()
    terms = np.column_stack([fp32["dram_bytes"] / ERT_DRAM, fp32["l2_bytes"] / ERT_L2, fp32["l1_bytes"] / ERT_L1])
    assert (terms.argmax(axis=1) == 0).all() and (fp32["bound"] == "dram").all()
    known = f["time_s"][f["bound"].notna()].sum() / f["time_s"].sum()
    assert known >= 0.99 and known == pytest.approx(1.0)
    # the cleanup kernel: 430544 FLOP over 396352 B in 15.4 us: 0.48 us at DRAM speed, 3.1 % of roofline: poor
    c = f[f["kernel_name"].str.startswith("cleanup(")].iloc[0]
    assert c["pct_of_roofline"] == pytest.approx(396352 / ERT_DRAM / 1.543926488527847e-05) and c["region"] == "poor"
    note = next(n for n in a.notes if "lacks the compute ceiling" in n)
    assert "fp32" in note and "fp32 >= the fp64 ceiling 7.07 TFLOP/s" in note and "for 4 of them" in note


def test_without_any_bound_the_achieved_rate_cannot_decide_deepcam():
    """ERT's memory ceilings only: the largest kernel reached 0.380 TFLOP/s, below its DRAM roof of
    0.415 TFLOP/s, so a peak between the two would make it compute-bound: unknown, and the note says why."""
    ert = api.load_machine(ert_file())
    memory_only = Machine(name="ert-memory", source="measured", memory=dict(ert.memory), compute={})
    a = api.analyze(api.example_files()[0], memory_only)
    r = a.frame.iloc[int(np.argmax(a.frame["time_s"]))]
    assert r["flop_rate"] == pytest.approx(791465384 / 0.0020815542123926965)  # 3.80e11
    assert r["flop_rate"] < r["ai_dram"] * ERT_DRAM
    assert pd.isna(r["bound"]) and r["region"] == "unknown"
    assert math.isnan(r["roofline_time_s"]) and math.isnan(r["attainable"]) and math.isnan(r["savable_time_s"])
    note = next(n for n in a.notes if "lacks the compute ceiling" in n)
    assert "fp32" in note and "achieved FLOP/s" in note and "4 remain of unknown bound" in note


def toy(**compute: float) -> Machine:
    return Machine(name="box", source="measured", sm_clock_hz=1e9,
                   memory={"l1": 8e12, "l2": 4e12, "dram": 1e12}, compute=compute)


def rec(time: float, dram: float, **flops: float) -> dict:
    return {"kernel_name": "k", "time_s": time, "sm_clock_hz": 1e9, "l1_bytes": dram, "l2_bytes": dram,
            "dram_bytes": dram, **flops}


def test_fp32_kernel_under_a_known_fp64_ceiling():
    # AI 0.1 FLOP/B x 1 TB/s = 0.1 TFLOP/s < FP64 1 TFLOP/s <= FP32: DRAM binds; 1e10 B / 1e12 B/s = 10 ms
    r = analyze(from_records([rec(2e-2, 1e10, fp32_flops=1e9)]), toy(fp64=1e12)).frame.iloc[0]
    assert r["bound"] == "dram" and r["roofline_time_s"] == pytest.approx(1e-2)
    assert r["pct_of_roofline"] == pytest.approx(0.5) and r["savable_time_s"] == pytest.approx(1e-2)
    assert r["attainable"] == pytest.approx(1e11) and r["region"] == "memory-bound"  # bw_use 0.5: not poor
    # AI 10 x 1 TB/s = 10 TFLOP/s > FP64 1 TFLOP/s: the FP32 peak could be below it: unknown
    r = analyze(from_records([rec(2e-2, 1e8, fp32_flops=1e9)]), toy(fp64=1e12)).frame.iloc[0]
    assert pd.isna(r["bound"]) and r["region"] == "unknown" and math.isnan(r["pct_of_roofline"])


def test_mixed_kernel_uses_the_harmonic_mean_of_the_bounds():
    # 1e9 FP64 at 1e12 + 1e9 FP32 at >= 1e12: compute <= 2 ms. DRAM 2.5e9 B: 2.5 ms >= 2 ms: DRAM
    m = toy(fp64=1e12)
    r = analyze(from_records([rec(5e-3, 2.5e9, fp32_flops=1e9, fp64_flops=1e9)]), m).frame.iloc[0]
    assert r["bound"] == "dram" and r["roofline_time_s"] == pytest.approx(2.5e-3)
    # DRAM 1.5e9 B: 1.5 ms < 2 ms: undecided
    r = analyze(from_records([rec(5e-3, 1.5e9, fp32_flops=1e9, fp64_flops=1e9)]), m).frame.iloc[0]
    assert pd.isna(r["bound"])


def test_a_kernel_at_its_bandwidth_ceiling_is_decided_by_its_achieved_rate():
    # no compute ceiling at all; 1e9 B in 1 ms at 1 TB/s: at the DRAM roof, so compute took no longer
    m = Machine(name="box", source="measured", sm_clock_hz=1e9, memory={"dram": 1e12}, compute={"fp64": 1e12})
    r = analyze(from_records([rec(1e-3, 1e9, tensor_flops=1e9, tensor_precision="fp16")]), m).frame.iloc[0]
    assert r["bound"] == "dram" and r["pct_of_roofline"] == pytest.approx(1.0)
    r = analyze(from_records([rec(2e-3, 1e9, tensor_flops=1e9, tensor_precision="fp16")]), m).frame.iloc[0]
    assert pd.isna(r["bound"])


def test_a_machine_naming_a_known_gpu_takes_the_missing_peak_from_its_spec():
    # Tensor FP16 kernel, AI 10 FLOP/B x 1 TB/s = 10 TFLOP/s; its achieved 5 TFLOP/s decides nothing,
    # no other precision bounds tensor FP16; the V100 SXM2 spec's 125 TFLOP/s at 1.53 GHz does.
    kernel = from_records([dict(rec(0.2, 1e11, tensor_flops=1e12, tensor_precision="fp16"), sm_clock_hz=1.53e9)])
    named = Machine(name="V100-SXM2 ERT", source="measured", sm_clock_hz=1.53e9, memory={"dram": 1e12},
                    compute={"fp64": 7e12})
    a = analyze(kernel, named)
    r = a.frame.iloc[0]
    assert r["bound"] == "dram" and r["roofline_time_s"] == pytest.approx(0.1)
    assert r["attainable"] == pytest.approx(1e13)
    note = next(n for n in a.notes if "lacks the compute ceiling" in n)
    assert f"tensor_fp16 {SPEC_TENSOR_1530 / 1e12:.3g} TFLOP/s from the Tesla V100 SXM2 spec" in note
    anonymous = Machine(name="box", source="measured", sm_clock_hz=1.53e9, memory={"dram": 1e12}, compute={"fp64": 7e12})
    assert pd.isna(analyze(kernel, anonymous).frame["bound"].iloc[0])


# -- 2. ERT + spec, clock-scaled like the demo -------------------------------------------------------

def test_ert_plus_spec_is_scaled_like_the_demo():
    files, demo_file = api.example_files()
    table = api.read(files)
    combined = api.analyze(table, [ert_file(), "v100-sxm2"])
    demo = api.analyze(table, demo_file)
    # the kernels' clock, by hand: time-weighted mean of the launches' SM clocks
    t, clk = table.frame["time_s"].to_numpy(), table.frame["sm_clock_hz"].to_numpy()
    kernel_clock = float((t * clk).sum() / t.sum())
    assert combined.machine.sm_clock_hz == pytest.approx(kernel_clock)
    ratio = kernel_clock / 1.53e9  # the spec's boost clock (the ERT file records none: taken at it)
    assert combined.machine.compute["fp32"] == pytest.approx(SPEC_FP32_1530 * ratio, rel=1e-12)
    assert combined.machine.compute["fp32"] == pytest.approx(1.33907e13, rel=1e-5)
    assert combined.machine.compute["tensor_fp16"] == pytest.approx(SPEC_TENSOR_1530 * ratio, rel=1e-12)
    assert combined.machine.compute["fp64"] == pytest.approx(ERT_FP64 * ratio, rel=1e-12)   # measured, scaled alike
    assert combined.machine.memory["l1"] == pytest.approx(ERT_L1 * ratio, rel=1e-12)
    assert combined.machine.memory["dram"] == ERT_DRAM                                       # DRAM never scaled
    for key in demo.machine.compute:
        assert combined.machine.compute[key] == pytest.approx(demo.machine.compute[key], rel=1e-12), key
    for key in demo.machine.memory:
        assert combined.machine.memory[key] == pytest.approx(demo.machine.memory[key], rel=1e-12), key
    assert combined.machine.sources == {**{k: v for k, v in demo.machine.sources.items()},
                                        "compute.fp64_no_fma": "measured", "compute.fp16": "theoretical",
                                        # the spec's ceilings beyond FLOPs (issue 11), datasheet figures
                                        "memory.shared": "theoretical", "compute.int32": "theoretical",
                                        "compute.conversion": "theoretical", "compute.sfu": "theoretical",
                                        "compute.warp_inst": "theoretical"}
    cols = ["bound", "region", "compute_ceiling"]
    pd.testing.assert_frame_equal(combined.frame[cols], demo.frame[cols])
    for col in ("compute_peak", "attainable", "roofline_time_s", "pct_of_roofline", "savable_time_s"):
        np.testing.assert_allclose(combined.frame[col], demo.frame[col], rtol=1e-12, err_msg=col)
    assert any("record no clock" in n and "1.53 GHz" in n and "ERT" in n for n in combined.notes)
    assert any("scaled from 1.53 GHz" in n for n in combined.notes)


def test_ert_alone_says_its_clock_is_unknown():
    a = api.analyze(api.example_files()[0], ert_file())
    assert a.machine.sm_clock_hz is None and a.machine.compute["fp64"] == ERT_FP64
    assert any("records no SM clock" in n for n in a.notes)

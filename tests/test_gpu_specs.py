"""Theoretical GPU ceilings against vendor datasheet figures (dense, not sparse).

Each figure below is the one printed in the NVIDIA datasheet or whitepaper named in
machine/specs.py; a test passes when our SMs x rate x clock (or bus x data rate) rounds to it.
"""

from __future__ import annotations

import math

import pytest

from roofline.errors import MachineError
from roofline.machine import theoretical
from roofline.machine.gpu_device import DeviceInfo
from roofline.machine.specs import (
    ARCHS,
    SCALAR_KEYS,
    TENSOR_KEYS,
    SPECS,
    arch_for,
    get_spec,
    has_rate,
    list_specs,
    spec_for_device_name,
)
from roofline.machine.model import COMPUTE_KEYS, Machine, compute_unit
from roofline.machine.theoretical import dram_bandwidth, spec_from_device, theoretical_from_spec

T = 1e12


def rounds_to(value: float, printed: float) -> bool:
    """True when ``value`` rounds to ``printed`` at the precision it is printed with."""
    text = repr(printed)
    decimals = len(text.split(".")[1]) if "." in text else 0
    if decimals == 0 and printed >= 100:  # '312', '125', '2039': whole numbers
        return abs(value - printed) <= 0.5
    return abs(value - printed) <= 0.5 * 10 ** (-decimals) + 1e-9


# (spec, ceiling, datasheet figure in TFLOP/s or TB/s (memory), clock in Hz or None for the vendor's)
DATASHEET = [
    ("v100-sxm2", "fp32", 15.7, 1530e6),
    ("v100-sxm2", "tensor_fp16", 125, None),
    ("a100-80gb-sxm", "tensor_fp16", 312, None),
    ("a100-80gb-sxm", "fp64", 9.7, None),
    ("a100-80gb-sxm", "tensor_tf32", 156, None),
    ("a100-80gb-sxm", "tensor_int8", 624, None),
    ("h100-sxm", "fp32", 66.9, 1980e6),
    ("h100-sxm", "fp64", 33.5, None),
    ("h100-sxm", "tensor_fp64", 66.9, None),
    ("h100-sxm", "tensor_bf16", 989.4, None),
    ("h100-sxm", "tensor_fp16", 989.4, None),
    ("h100-sxm", "tensor_tf32", 494.7, None),
    ("h100-sxm", "tensor_fp8", 1978.9, None),
    ("h100-sxm", "fp16", 133.8, None),
    ("h100-pcie", "fp32", 51.2, None),
    ("h100-pcie", "tensor_fp16", 756, None),
    ("t4", "fp32", 8.1, None),
    ("t4", "tensor_fp16", 65, None),
    ("a10", "fp32", 31.2, None),
    ("a10", "tensor_fp16", 125, None),
    ("l4", "fp32", 30.3, None),
    ("l40s", "tensor_fp8", 733, None),
    ("rtx-4090", "fp32", 82.6, None),
    ("rtx-4090", "tensor_fp16", 165.2, None),
    # Blackwell and GH200 (figures as printed in the sources named in machine/specs.py).
    ("b200", "tensor_fp16", 2250, None),   # HGX B200: 36 PFLOP/s sparse / 8 GPUs / 2
    ("b200", "tensor_bf16", 2250, None),
    ("b200", "tensor_tf32", 1125, None),   # 18 PFLOP/s sparse / 8 / 2
    ("b200", "tensor_fp8", 4500, None),    # 72 PFLOP/s sparse / 8 / 2
    ("b200", "tensor_int8", 4500, None),
    ("b200", "fp64", 37, None),            # 296 TFLOP/s / 8
    ("b200", "tensor_fp64", 37, None),
    ("rtx-5090", "fp32", 104.8, None),
    ("rtx-5090", "tensor_fp16", 209.5, None),
    ("rtx-5090", "tensor_int8", 838, None),
    ("rtx-5080", "fp32", 56.3, None),
    ("rtx-pro-6000-blackwell", "fp32", 125, None),
    ("gh200-96gb", "fp32", 67, None),
    ("gh200-96gb", "tensor_fp8", 1979, None),
    ("gh200-144gb", "tensor_int8", 1979, None),
]


@pytest.mark.parametrize(("spec", "key", "printed", "clock"), DATASHEET)
def test_compute_ceilings_match_datasheets(spec, key, printed, clock):
    m = theoretical(spec, sm_clock_hz=clock)
    assert m.source == "theoretical"
    assert rounds_to(m.compute[key] / T, printed), (spec, key, m.compute[key] / T, printed)


@pytest.mark.parametrize(
    ("spec", "tb_per_s"),
    [("a100-80gb-sxm", 2.039), ("h100-sxm", 3.35), ("h200", 4.8), ("v100-sxm2", 0.9),
     ("t4", 0.32), ("a10", 0.6), ("rtx-4090", 1.008), ("h100-pcie", 2.0), ("a100-40gb-sxm", 1.555),
     ("b200", 8.0), ("gh200-96gb", 4.0), ("gh200-144gb", 4.9), ("rtx-5090", 1.792), ("rtx-5080", 0.96),
     ("rtx-pro-6000-blackwell", 1.792)],
)
def test_dram_ceilings_match_datasheets(spec, tb_per_s):
    assert rounds_to(theoretical(spec).memory["dram"] / T, tb_per_s)


def test_dram_formula_a100_from_bus_and_data_rate():
    # 5120 bits at 3.186 Gb/s per pin: 2039 GB/s (A100 80GB datasheet).
    assert round(dram_bandwidth(5120, 3.186e9) / 1e9) == 2039
    with pytest.raises(MachineError):
        dram_bandwidth(0, 1e9)


def test_l1_is_128_bytes_per_clock_per_sm_where_sourced_and_absent_elsewhere():
    m = theoretical("h100-sxm", sm_clock_hz=1.755e9)
    assert m.memory["l1"] == pytest.approx(128 * 132 * 1.755e9)
    assert m.metadata["clock_hz"]["l1"] == 1.755e9
    assert "l1" not in theoretical("rtx-4090").memory
    assert m.metadata["clock_hz"]["l2"] == 1.755e9
    assert m.memory["l2"] == 5120 * 1.755e9  # 8986 GB/s: Nsight Compute's 5120 B per L2 cycle for GH100


def test_h100_tensor_figures_assume_their_own_clock_and_others_the_boost_clock():
    m = theoretical("h100-sxm")
    clocks = m.metadata["clock_hz"]
    assert clocks["tensor_bf16"] == 1830e6 and clocks["tensor_fp64"] == 1980e6 and clocks["fp32"] == 1980e6
    assert m.sm_clock_hz == 1980e6
    # An explicit clock applies to every SM-clocked ceiling; DRAM does not depend on it.
    at = theoretical("h100-sxm", sm_clock_hz=1.5e9)
    assert set(at.metadata["clock_hz"].values()) == {1.5e9}
    assert at.compute["tensor_bf16"] == pytest.approx(132 * 4096 * 1.5e9)
    assert at.memory["dram"] == m.memory["dram"]


def test_rtx4090_uses_fp32_accumulate_tensor_rates_but_full_int8():
    m = theoretical("rtx-4090")
    assert m.compute["tensor_fp16"] == pytest.approx(m.compute["tensor_int8"] / 4)


def test_architectures_lack_what_the_chip_lacks():
    assert "bf16" not in ARCHS["gv100"].rates and "tensor_bf16" not in ARCHS["gv100"].rates
    assert "tensor_fp8" not in ARCHS["ga100"].rates and "tensor_fp8" in ARCHS["ad10x"].rates
    assert "tensor_fp64" in ARCHS["gh100"].rates and "tensor_fp64" not in ARCHS["ad10x"].rates


def test_every_row_is_sourced_and_uses_known_keys():
    for arch in ARCHS.values():
        assert arch.source and set(arch.rates) <= set(SCALAR_KEYS + TENSOR_KEYS) <= set(COMPUTE_KEYS)
        assert all(v > 0 for v in arch.rates.values())
    for spec in SPECS.values():
        assert spec.source and spec.arch in ARCHS
        assert set(spec.datasheet) <= set(COMPUTE_KEYS) | {"dram"}
        m = theoretical_from_spec(spec)
        Machine.from_dict(m.to_dict())  # round-trips as a valid machine


def test_every_datasheet_figure_is_within_two_percent_of_our_formula():
    # A looser sweep over every figure we recorded: catches a wrong SM count, clock or rate.
    for spec in SPECS.values():
        m = theoretical_from_spec(spec)
        for key, value in spec.datasheet.items():
            ours = m.memory["dram"] if key == "dram" else m.compute[key]
            assert math.isclose(ours, value, rel_tol=0.02), (spec.key, key, ours, value)


def test_spec_names_and_aliases():
    names = list_specs()
    for must in ("h100-sxm", "h100-pcie", "h200", "a100-80gb-sxm", "a100-40gb-sxm", "a100-pcie",
                 "v100-sxm2", "v100-pcie", "t4", "a10", "l4", "l40s", "rtx-4090"):
        assert must in names
    assert get_spec("H200-SXM").key == "h200"
    assert get_spec("A100_80GB_SXM").key == "a100-80gb-sxm"
    with pytest.raises(MachineError, match="unknown GPU spec"):
        get_spec("gtx-480")


def test_arch_and_product_from_what_the_driver_says():
    assert arch_for((9, 0)).key == "gh100" and arch_for((8, 6)).key == "ga10x"
    assert arch_for((10, 0)).key == "gb100" and arch_for((12, 0)).key == "gb20x"
    with pytest.raises(MachineError, match="compute capability 11.0"):
        arch_for((11, 0))
    assert spec_for_device_name("NVIDIA H100 80GB HBM3").key == "h100-sxm"
    assert spec_for_device_name("NVIDIA H200").key == "h200"
    assert spec_for_device_name("NVIDIA A10").key == "a10"
    assert spec_for_device_name("NVIDIA A10G") is None
    assert spec_for_device_name("Tesla V100-SXM2-16GB").key == "v100-sxm2"


def h100_info(**kw) -> DeviceInfo:
    base = dict(index=0, name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), sms=132,
                max_sm_clock_hz=1980e6, max_memory_clock_hz=2619e6, memory_bus_bits=5120,
                l2_bytes=50 * 2**20, total_memory_bytes=80 * 2**30)
    base.update(kw)
    return DeviceInfo(**base)


def test_live_spec_takes_counts_from_the_device_and_vendor_facts_from_the_product():
    spec = spec_from_device(h100_info())
    m = theoretical_from_spec(spec)
    # NVML reports the HBM3 clock as 2619 MHz: x2 (DDR) x 5120 bits / 8 = 3.35 TB/s.
    assert rounds_to(m.memory["dram"] / T, 3.35)
    assert rounds_to(m.compute["fp32"] / T, 66.9)
    assert m.metadata["clock_hz"]["tensor_bf16"] == 1830e6
    assert spec.datasheet["dram"] == 3.35e12
    unknown = spec_from_device(h100_info(name="Some GH100 board", sms=100))
    assert unknown.datasheet == {} and theoretical_from_spec(unknown).compute["fp32"] == 100 * 256 * 1980e6


# --- L2 ceilings: whole-chip B/clk x SM clock, each figure computed by hand from its source --------


def test_l2_ceiling_of_h100_sxm_at_its_boost_clock():
    m = theoretical("h100-sxm")
    # 5120 B/clk x 1980 MHz = 10,137.6 GB/s
    assert m.memory["l2"] == pytest.approx(10_137.6e9, rel=1e-12)
    assert m.metadata["clock_hz"]["l2"] == 1980e6
    assert "5120 B/clk" in m.metadata["derived"]["l2"] and "l2" not in m.metadata["absent"]
    assert list(m.memory) == ["l1", "shared", "l2", "dram"]  # a three-level roofline, and shared memory beside L1


@pytest.mark.parametrize(
    ("spec", "gb_per_s"),
    [
        ("v100-sxm2", 3133.44),      # A100 whitepaper: V100 2048 B/clk x 1530 MHz
        ("v100-pcie", 2826.24),      # 2048 x 1380 MHz
        ("a100-80gb-sxm", 7219.2),   # A100 whitepaper: 5120 B/clk x 1410 MHz
        ("h100-pcie", 8985.6),       # 5120 x 1755 MHz (Nsight Compute's per-cycle L2 peak)
        ("h200", 10_137.6),          # 5120 x 1980 MHz
        ("gh200-96gb", 10_137.6),
    ],
)
def test_l2_ceilings_from_sourced_bytes_per_clock(spec, gb_per_s):
    assert theoretical(spec).memory["l2"] / 1e9 == pytest.approx(gb_per_s, rel=1e-12)


def test_l2_scales_with_the_sm_clock_like_l1():
    assert theoretical("a100-80gb-sxm", sm_clock_hz=1e9).memory["l2"] == 5120e9


@pytest.mark.parametrize("spec", ["t4", "a10", "l4", "l40s", "rtx-4090", "b200", "rtx-5090", "rtx-pro-6000-blackwell"])
def test_l2_absent_with_a_reason_where_no_per_clock_figure_was_found(spec):
    m = theoretical(spec)
    assert "l2" not in m.memory
    assert "measure it" in m.metadata["absent"]["l2"]


# --- Blackwell and GH200 by hand --------------------------------------------------------------------


def test_b200_figures_by_hand():
    m = theoretical("b200")
    # 148 SMs x 8192 FLOP/clk x 1856 MHz = 2250.244 TFLOP/s dense FP16 (datasheet 2.25 PFLOP/s)
    assert m.compute["tensor_fp16"] / T == pytest.approx(2250.244096, rel=1e-12)
    # 148 x 256 x 1965 MHz = 74.45 TFLOP/s FP32 (datasheet 75: 0.7 % above)
    assert m.compute["fp32"] / T == pytest.approx(74.44992, rel=1e-12)
    assert m.metadata["clock_hz"]["tensor_fp8"] == 1856e6 and m.metadata["clock_hz"]["fp64"] == 1965e6
    # 7680 bits / 8 x 8.3333 Gb/s = 8.0 TB/s; the driver's 3996 MHz (DDR) would give 7.67 TB/s
    assert m.memory["dram"] / T == pytest.approx(7.99997, rel=1e-5)
    assert dram_bandwidth(7680, 2 * 3996e6) / T == pytest.approx(7.67232)
    # 148 SMs x 128 B/clk x 1965 MHz = 37.2 TB/s L1
    assert m.memory["l1"] == pytest.approx(148 * 128 * 1965e6)
    assert "tensor_fp16" in ARCHS["gb100"].rates and "fp16" not in ARCHS["gb100"].rates


def test_geforce_blackwell_fp4_ai_tops_reproduce_at_the_boost_clock():
    # 'AI TOPS' (FP4, 2:4 sparse) = SMs x 8192 x clock: a cross-check of SMs and clock with no key of ours.
    assert round(170 * 8192 * 2407e6 / T) == 3352  # RTX 5090
    assert round(84 * 8192 * 2617e6 / T) == 1801   # RTX 5080
    assert round(188 * 8192 * 2597e6 / T) == 4000  # RTX PRO 6000 Blackwell Workstation (derived clock)
    m = theoretical("rtx-5090")
    assert m.compute["tensor_fp16"] == pytest.approx(m.compute["tensor_int8"] / 4)  # FP32-accumulate
    pro = theoretical("rtx-pro-6000-blackwell")
    assert pro.compute["tensor_fp16"] == pytest.approx(pro.compute["tensor_int8"] / 2)  # full rate


def test_gh200_is_hopper_with_its_own_memory():
    assert theoretical("gh200-96gb").compute == theoretical("h100-sxm").compute
    assert dram_bandwidth(6144, 5.2083e9) / T == pytest.approx(3.99997, rel=1e-5)
    assert dram_bandwidth(6144, 6.3802e9) / T == pytest.approx(4.90000, rel=1e-5)


@pytest.mark.parametrize(
    ("device_name", "key"),
    [
        ("NVIDIA GH200 480GB", "gh200-96gb"),
        ("NVIDIA GH200 120GB", "gh200-96gb"),  # bobschreiner/NuKEXC's report: 95 GiB of HBM3, 132 SMs
        ("NVIDIA GH200 144G HBM3e", "gh200-144gb"),
        ("NVIDIA GH200 96GB", None),        # a GH200, never the H200
        ("NVIDIA H20", None),               # never the H200
        ("NVIDIA H200", "h200"),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA B200", "b200"),
        ("NVIDIA GB200", None),             # never the B200
        ("NVIDIA GeForce RTX 5090", "rtx-5090"),
        ("NVIDIA GeForce RTX 5080", "rtx-5080"),
        ("NVIDIA GeForce RTX 5080 Laptop GPU", "rtx-5080"),
        ("NVIDIA GeForce RTX 50800", None),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
    ],
)
def test_device_names_of_new_products(device_name, key):
    spec = spec_for_device_name(device_name)
    assert (spec.key if spec else None) == key


# --- shared memory, integer / conversion / SFU operations and warp instructions, by hand ------------


def test_v100_warp_instruction_peak_is_the_instruction_roofline_papers():
    # Ding and Williams (PMBS 2019): V100 80 SMs x 4 schedulers x 1 warp inst/clk x 1.53 GHz = 489.6 warp GIPS.
    m = theoretical("v100-sxm2")
    assert m.compute["warp_inst"] == pytest.approx(489.6e9, rel=1e-12)
    assert "Ding and Williams" in m.metadata["derived"]["warp_inst"]


def test_h100_sxm_shared_integer_conversion_sfu_and_warp_instruction_ceilings():
    m = theoretical("h100-sxm")
    # 32 banks x 4 B = 128 B/clk/SM x 132 SMs x 1980 MHz = 33,454.08 GB/s
    assert m.memory["shared"] == pytest.approx(33_454.08e9, rel=1e-12)
    # Programming Guide, compute capability 9.0: integer add / multiply-add 64 per clock per SM:
    # 64 x 132 x 1980 MHz = 16.72704 TOP/s; conversions and the SFU 16: 4.18176 TOP/s.
    assert m.compute["int32"] == pytest.approx(16.72704e12, rel=1e-12)
    assert m.compute["conversion"] == m.compute["sfu"] == pytest.approx(4.18176e12, rel=1e-12)
    # 4 schedulers x 132 x 1980 MHz = 1045.44 warp GIPS
    assert m.compute["warp_inst"] == pytest.approx(1045.44e9, rel=1e-12)
    for key in ("shared", "int32", "conversion", "sfu", "warp_inst"):
        assert m.metadata["clock_hz"][key] == 1980e6
        assert key not in m.metadata["absent"]
    assert "Programming Guide" in m.metadata["derived"]["int32"] and "9.0" in m.metadata["derived"]["int32"]
    assert "32 banks" in m.metadata["derived"]["shared"]


def test_ops_and_shared_scale_with_the_clock_asked_for():
    m = theoretical("a100-80gb-sxm", sm_clock_hz=1e9)
    assert m.memory["shared"] == 128 * 108 * 1e9
    assert m.compute["int32"] == 64 * 108 * 1e9 and m.compute["sfu"] == 16 * 108 * 1e9
    assert m.compute["warp_inst"] == 4 * 108 * 1e9
    assert m.scaled_to_clock(2e9).memory["shared"] == 2 * 128 * 108 * 1e9  # shared memory is SM-clocked


@pytest.mark.parametrize("spec", ["b200", "rtx-5090"])
def test_blackwell_has_no_sourced_integer_rates_but_has_warp_and_shared_ceilings(spec):
    m = theoretical(spec)
    for key in ("int32", "conversion", "sfu"):
        assert key not in m.compute
        assert "stop at compute capability 9.0" in m.metadata["absent"][key]
    sms, clock = get_spec(spec).sms, get_spec(spec).boost_clock_hz
    assert m.compute["warp_inst"] == 4 * sms * clock and m.memory["shared"] == 128 * sms * clock


def test_b200_schedulers_come_from_its_own_nsight_compute_export():
    import csv
    from pathlib import Path

    path = Path(__file__).parent / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
    lines = path.read_text(errors="replace").splitlines()
    rows = list(csv.reader(lines[next(i for i, line in enumerate(lines) if line.startswith('"ID"')):]))
    attrs = dict(zip(rows[0], rows[2]))
    per_sm = int(attrs["device__attribute_num_schedulers_per_multiprocessor"])
    ipc = int(attrs["device__attribute_max_ipc_per_scheduler"])
    assert (per_sm, ipc) == (4, 1)
    assert ARCHS["gb100"].schedulers_per_sm == per_sm * ipc
    assert "b200_sdpa_flash" in ARCHS["gb100"].scheduler_source


def test_every_row_has_operation_rates_or_says_why_not():
    for arch in ARCHS.values():
        assert bool(arch.op_rates) != bool(arch.op_absent), arch.key
        assert set(arch.op_rates) <= {"int32", "conversion", "sfu"}
        assert all(compute_unit(k) == "OP/s" for k in arch.op_rates)
        assert arch.schedulers_per_sm == 4 and arch.scheduler_source
        assert arch.shared_bytes_per_clk_per_sm == 128
        if arch.op_rates:
            assert arch.op_source.startswith("CUDA C++ Programming Guide")
            # 7.x to 9.0: integer add and multiply-add 64, conversions and the SFU 16 per clock per SM.
            assert dict(arch.op_rates) == {"int32": 64, "conversion": 16, "sfu": 16}
    assert has_rate(ARCHS["gh100"], "int32") and has_rate(ARCHS["gh100"], "warp_inst")
    assert not has_rate(ARCHS["gb100"], "int32") and has_rate(ARCHS["gb100"], "tensor_fp16")

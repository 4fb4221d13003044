"""Theoretical GPU ceilings against vendor datasheet figures (dense, not sparse).

Each figure below is the one printed in the NVIDIA datasheet or whitepaper named in
gpu_specs.py; a test passes when our SMs x rate x clock (or bus x data rate) rounds to it.
"""

from __future__ import annotations

import math

import pytest

from roofline.errors import MachineError
from roofline.machine import theoretical
from roofline.machine.gpu_info import DeviceInfo
from roofline.machine.gpu_specs import (
    ARCHS,
    SCALAR_KEYS,
    TENSOR_KEYS,
    SPECS,
    arch_for,
    get_spec,
    list_specs,
    spec_for_device_name,
)
from roofline.machine.model import COMPUTE_KEYS, Machine
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
]


@pytest.mark.parametrize(("spec", "key", "printed", "clock"), DATASHEET)
def test_compute_ceilings_match_datasheets(spec, key, printed, clock):
    m = theoretical(spec, sm_clock_hz=clock)
    assert m.source == "theoretical"
    assert rounds_to(m.compute[key] / T, printed), (spec, key, m.compute[key] / T, printed)


@pytest.mark.parametrize(
    ("spec", "tb_per_s"),
    [("a100-80gb-sxm", 2.039), ("h100-sxm", 3.35), ("h200", 4.8), ("v100-sxm2", 0.9),
     ("t4", 0.32), ("a10", 0.6), ("rtx-4090", 1.008), ("h100-pcie", 2.0), ("a100-40gb-sxm", 1.555)],
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
    assert "l2" not in m.memory and "l2" in m.metadata["absent"]  # no sourced per-clock L2 figure
    assert "l1" not in theoretical("rtx-4090").memory


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
    with pytest.raises(MachineError, match="compute capability 12.0"):
        arch_for((12, 0))
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

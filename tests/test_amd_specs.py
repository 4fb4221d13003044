"""AMD Instinct theoretical ceilings against the figures AMD prints (dense, not sparse).

Each figure below is the one in the AMD document named beside it (and in roofline/machine/amd_specs.py);
a test passes when our CUs x rate x peak engine clock rounds to it. The hand-computed ceilings of the
MI300X and MI210 restate that arithmetic with the sourced inputs written out.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from roofline.cli.app import main
from roofline.errors import MachineError
from roofline.kernels import KernelTable, from_records
from roofline.machine import theoretical
from roofline.machine.amd_specs import (
    AMD_ARCHS,
    AMD_SPECS,
    amd_arch_for,
    amd_spec_for_device_name,
    get_amd_spec,
    list_amd_specs,
)
from roofline.machine.amd_theory import AMD_COMPUTE_KEYS, amd_machine
from roofline.machine.keys import COMPUTE_KEYS, FLOP_KEYS, base_compute_key, compute_unit
from roofline.machine.model import Machine
from roofline.machine.resolve import load_machine, named_spec, resolve
from roofline.machine.specs import get_spec, spec_for_device_name
from roofline.readers.ncu.peaks import DEVICE_NAME
from roofline.views.chart.style import compute_label

T = 1e12
P = 1e15


def rounds_to(value: float, printed: float) -> bool:
    """True when ``value`` rounds to ``printed`` at the precision it is printed with."""
    text = repr(printed)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value - printed) <= 0.5 * 10 ** (-decimals) + 1e-9


# (spec, ceiling, figure as AMD prints it, its unit, AMD document). Figures for a whole MI250 are for
# its two GCDs: the test multiplies one GCD's ceiling by AmdSpec.datasheet_devices.
PRINTED = [
    # ROCm docs, MI300 microarchitecture: 'Peak-performance capabilities of the MI300X'
    ("mi300x", "tensor_fp64", 163.4, T), ("mi300x", "fp64", 81.7, T), ("mi300x", "tensor_fp32", 163.4, T),
    ("mi300x", "fp32", 163.4, T), ("mi300x", "tensor_tf32", 653.7, T), ("mi300x", "tensor_fp16", 1307.4, T),
    ("mi300x", "tensor_bf16", 1307.4, T), ("mi300x", "tensor_fp8", 2614.9, T), ("mi300x", "tensor_int8", 2614.9, T),
    # ROCm blog, Matrix Core Programming on CDNA3 and CDNA4: MI325X and MI355X tables
    ("mi325x", "tensor_fp64", 163.4, T), ("mi325x", "tensor_fp32", 163.4, T), ("mi325x", "tensor_fp16", 1307.4, T),
    ("mi325x", "tensor_fp8", 2614.9, T),
    ("mi355x", "tensor_fp64", 78.6, T), ("mi355x", "tensor_fp32", 157.3, T), ("mi355x", "tensor_fp16", 2.5, P),
    ("mi355x", "tensor_bf16", 2.5, P), ("mi355x", "tensor_fp8", 5, P), ("mi355x", "tensor_fp4", 10, P),
    # ROCm docs, MI250 microarchitecture: 'Peak-performance capabilities of the MI250 OAM' (2 GCDs)
    ("mi250", "tensor_fp64", 90.5, T), ("mi250", "fp64", 45.3, T), ("mi250", "tensor_fp32", 90.5, T),
    ("mi250", "fp32_packed", 90.5, T), ("mi250", "fp32", 45.3, T), ("mi250", "tensor_fp16", 362.1, T),
    ("mi250", "tensor_bf16", 362.1, T), ("mi250", "tensor_int8", 362.1, T),
    # MI250 page: 'FP64 peak performance per GCD is 22.6 TFLOPS'; ROCm blog: MI210 FP16 181 TFLOPs
    ("mi210", "fp64", 22.6, T), ("mi210", "tensor_fp16", 181, T),
    # AMD lab notes: one MI250X GCD, 'PF = 24 TFLOPs/sec'
    ("mi250x", "fp64", 24, T),
    # ROCm docs, MI100 microarchitecture: 'Peak-performance capabilities of MI100'
    ("mi100", "fp64", 11.5, T), ("mi100", "tensor_fp32", 46.1, T), ("mi100", "fp32", 23.1, T),
    ("mi100", "tensor_fp16", 184.6, T), ("mi100", "tensor_bf16", 92.3, T),
]


@pytest.mark.parametrize(("spec", "key", "printed", "unit"), PRINTED)
def test_compute_ceilings_reproduce_amds_printed_figures(spec, key, printed, unit):
    s = AMD_SPECS[spec]
    ours = theoretical(spec).compute[key] * s.datasheet_devices
    assert rounds_to(ours / unit, printed), (spec, key, ours / unit, printed)


def test_mi100s_figures_need_its_1502_mhz_clock_not_the_pages_rounded_1_5_ghz():
    # 120 CUs x 1024 FLOP/clk: 184.6 TFLOPS at 1502 MHz, 184.3 at 1500 MHz (the check can fail).
    assert rounds_to(120 * 1024 * 1502e6 / T, 184.6)
    assert not rounds_to(120 * 1024 * 1500e6 / T, 184.6)
    assert not rounds_to(theoretical("mi100", sm_clock_hz=1500e6).compute["tensor_fp16"] / T, 184.6)


# (spec, HBM as AMD prints it in TB/s, devices it covers). AMD cuts the bus x data-rate figure short:
# 5324.8 GB/s prints as 5.3 TB/s, 1638.4 as 1.6, 1228.8 as 1.228.
HBM = [("mi300x", 5.3, 1), ("mi250", 3.2, 2), ("mi250", 1.6, 1), ("mi210", 1.6, 1), ("mi100", 1.228, 1),
       ("mi250x", 1.6384, 1)]


@pytest.mark.parametrize(("spec", "printed", "devices"), HBM)
def test_hbm_ceilings_are_amds_figures_before_rounding_down(spec, printed, devices):
    ours = theoretical(spec).memory["dram"] * devices / T
    decimals = len(repr(printed).split(".")[1])
    assert printed - 1e-12 <= ours < printed + 10 ** (-decimals), (spec, ours, printed)


def test_every_printed_figure_within_two_percent_and_every_row_sourced():
    for spec in AMD_SPECS.values():
        assert spec.source and spec.clock_source and spec.hbm_source and spec.arch in AMD_ARCHS
        m = amd_machine(spec)
        for key, value in spec.datasheet.items():
            ours = (m.memory if key == "dram" else m.compute)[key] * spec.datasheet_devices
            assert math.isclose(ours, value, rel_tol=0.025), (spec.key, key, ours, value)
        Machine.from_dict(m.to_dict())  # round-trips as a valid machine
        assert all(base_compute_key(k) in COMPUTE_KEYS for k in m.compute)
    for arch in AMD_ARCHS.values():
        assert set(arch.rates) == set(arch.rate_sources) and all(arch.rate_sources.values())
        assert not set(arch.rates) & set(arch.lacks) and not set(arch.rates) & set(arch.absent)


# --- the machines of the MI300X and MI210, by hand --------------------------------------------------


def test_mi300x_ceilings_by_hand():
    m = theoretical("mi300x")
    assert m.name == "AMD Instinct MI300X" and m.source == "theoretical"
    # 304 CUs (ROCm spec table) x FLOP/clk/CU (ROCm MI300 table) x 2100 MHz
    assert m.compute["fp64"] == pytest.approx(81.7152e12, rel=1e-12)          # 304 x 128 x 2.1e9
    assert m.compute["fp32"] == pytest.approx(163.4304e12, rel=1e-12)         # 304 x 256
    assert m.compute["tensor_fp64"] == pytest.approx(163.4304e12, rel=1e-12)
    assert m.compute["tensor_fp32"] == pytest.approx(163.4304e12, rel=1e-12)
    assert m.compute["tensor_tf32"] == pytest.approx(653.7216e12, rel=1e-12)  # 304 x 1024
    assert m.compute["tensor_fp16"] == pytest.approx(1307.4432e12, rel=1e-12)  # 304 x 2048
    assert m.compute["tensor_bf16"] == pytest.approx(1307.4432e12, rel=1e-12)
    assert m.compute["tensor_fp8"] == pytest.approx(2614.8864e12, rel=1e-12)  # 304 x 4096
    assert m.compute["tensor_int8"] == pytest.approx(2614.8864e12, rel=1e-12)
    assert compute_unit("tensor_int8") == "OP/s"
    # LDS: 32 banks x 4 B = 128 B/clk/CU x 304 x 2.1 GHz; HBM3: 8192 bits x 5.2 Gb/s / 8
    assert m.memory == {"shared": pytest.approx(81.7152e12, rel=1e-12), "dram": pytest.approx(5324.8e9, rel=1e-12)}
    assert list(m.memory) == ["shared", "dram"]
    assert m.sm_clock_hz == 2100e6 and m.max_sm_clock_hz == 2100e6
    meta = m.metadata
    assert meta["cus"] == 304 and meta["xcds"] == 8 and meta["gfx"] == "gfx942"
    assert meta["l2_bytes"] == 32 * 2**20 and meta["l2_bytes_per_xcd"] == 4 * 2**20 and meta["mall_bytes"] == 256 * 2**20
    assert {"l1", "l2", "fp16", "bf16", "tensor_fp4"} <= set(meta["absent"])
    assert "MALL" in meta["dram_includes"]
    assert "tensor_fp4" not in m.compute and "l1" not in m.memory


def test_mi210_ceilings_by_hand():
    m = theoretical("AMD Instinct MI210")
    # 104 CUs x FLOP/clk/CU (ROCm MI250 table, AMD lab notes) x 1700 MHz
    assert m.compute["fp64"] == pytest.approx(22.6304e12, rel=1e-12)          # 104 x 128 x 1.7e9
    assert m.compute["fp32"] == pytest.approx(22.6304e12, rel=1e-12)
    assert m.compute["fp32_packed"] == pytest.approx(45.2608e12, rel=1e-12)   # 104 x 256
    assert m.compute["tensor_fp64"] == pytest.approx(45.2608e12, rel=1e-12)
    assert m.compute["tensor_fp32"] == pytest.approx(45.2608e12, rel=1e-12)
    assert m.compute["tensor_fp16"] == pytest.approx(181.0432e12, rel=1e-12)  # 104 x 1024
    assert m.compute["tensor_bf16"] == pytest.approx(181.0432e12, rel=1e-12)
    assert m.compute["tensor_int8"] == pytest.approx(181.0432e12, rel=1e-12)
    assert m.memory["shared"] == pytest.approx(22.6304e12, rel=1e-12)        # 128 B x 104 x 1.7e9
    assert m.memory["dram"] == pytest.approx(1638.4e9, rel=1e-12)            # 4096 bits x 3.2 Gb/s / 8
    assert m.sm_clock_hz == 1700e6 and m.metadata["l2_bytes"] == 8 * 2**20
    assert "no tensor_tf32 unit" in m.metadata["absent"]["tensor_tf32"]
    assert "tensor_fp8" not in m.compute and "mall_bytes" not in m.metadata


def test_a_partition_scales_with_its_cus_and_an_explicit_clock_scales_every_cu_ceiling():
    cpx = amd_machine(AMD_SPECS["mi300x"], 38)  # CPX: one XCD of 38 CUs
    assert cpx.name == "AMD Instinct MI300X (38 of 304 CUs)"
    assert cpx.compute["tensor_fp16"] == pytest.approx(38 * 2048 * 2.1e9, rel=1e-12)
    assert cpx.memory["dram"] == pytest.approx(5324.8e9 / 8, rel=1e-12)
    assert cpx.metadata["l2_bytes"] == 4 * 2**20 and cpx.metadata["xcds"] == 1 and "datasheet" not in cpx.metadata
    assert "assumption" in cpx.metadata["derived"]["dram"]
    slow = theoretical("mi300x", sm_clock_hz=1.9e9)
    assert slow.compute["fp64"] == pytest.approx(304 * 128 * 1.9e9) and slow.memory["shared"] == pytest.approx(304 * 128 * 1.9e9)
    assert slow.memory["dram"] == theoretical("mi300x").memory["dram"] and slow.metadata["max_sm_clock_hz"] == 2.1e9
    for bad in (0, 305):
        with pytest.raises(MachineError, match="304 CUs"):
            amd_machine(AMD_SPECS["mi300x"], bad)


def test_what_is_not_sourced_is_absent_with_its_reason():
    mi355 = theoretical("mi355x")
    assert mi355.memory == {} and "8 TB/s" in mi355.metadata["absent"]["dram"]
    assert "fp32" not in mi355.compute and "vector FP32" in mi355.metadata["absent"]["fp32"]
    assert "LDS" in mi355.metadata["absent"]["shared"]
    assert "dram" not in theoretical("mi325x").memory
    assert "tensor_fp64" not in theoretical("mi100").compute
    assert set(AMD_COMPUTE_KEYS) <= set(theoretical("mi210").compute) | set(theoretical("mi210").metadata["absent"])


# --- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cus", "key"),
    [
        ("AMD Instinct MI300X", None, "mi300x"), ("MI300X", None, "mi300x"), ("MI300X_A1", None, "mi300x"),
        ("mi300x", None, "mi300x"), ("MI300X_A1", 38, "mi300x"), ("MI300X", 400, None),
        ("AMD Instinct MI210", None, "mi210"), ("MI210", None, "mi210"),
        ("MI200", 104, "mi210"), ("MI200", 110, "mi250x"), ("MI200", None, None), ("MI200", 120, None),
        ("MI300A_A1", 228, "mi300a"), ("MI300A_A1", None, "mi300a"), ("MI300", 304, "mi300x"),
        ("MI300", 228, "mi300a"), ("MI100", 120, "mi100"), ("MI100", None, "mi100"),
        ("AMD Instinct MI250X / MI250", 110, "mi250x"), ("AMD Instinct MI250X / MI250", 104, "mi250"),
        ("AMD Instinct MI250X / MI250", None, None), ("AMD Instinct MI250X", None, "mi250x"),
        ("AMD Instinct MI250", None, "mi250"), ("AMD Instinct MI325X", None, "mi325x"),
        ("AMD Instinct MI355X", None, "mi355x"), ("AMD Instinct MI350X", None, None), ("MI308X", None, None),
        ("NVIDIA H100 80GB HBM3", None, None),
    ],
)
def test_device_names_as_profiles_and_tools_write_them(name, cus, key):
    spec = amd_spec_for_device_name(name, cus)
    assert (spec.key if spec else None) == key


def test_spec_names_and_architectures():
    assert list_amd_specs() == ["mi100", "mi210", "mi250", "mi250x", "mi300a", "mi300x", "mi325x", "mi355x"]
    for name in ("mi300x", "MI300X", "AMD Instinct MI300X", "MI300X_A1"):
        assert get_amd_spec(name).key == "mi300x"
    assert get_amd_spec("h100-sxm") is None and get_amd_spec("mi350x") is None
    assert spec_for_device_name("AMD Instinct MI300X") is None  # the NVIDIA rules claim no AMD name
    assert get_spec("h100-sxm").key == "h100-sxm"
    with pytest.raises(MachineError, match="mi300x"):  # NVIDIA-only lookup; the hint names the AMD specs
        get_spec("mi300x")
    assert amd_arch_for("gfx90a:sramecc+:xnack-").key == "cdna2"
    assert [amd_arch_for(g).key for g in ("gfx908", "gfx940", "gfx942", "gfx950")] == ["cdna1", "cdna3", "cdna3", "cdna4"]
    with pytest.raises(MachineError, match="gfx1100"):
        amd_arch_for("gfx1100")


def test_tensor_fp32_is_a_flop_key_with_a_label():
    assert "tensor_fp32" in COMPUTE_KEYS and "tensor_fp32" in FLOP_KEYS and compute_unit("tensor_fp32") == "FLOP/s"
    assert compute_label("tensor_fp32") == "Tensor FP32" and compute_label("fp32_packed") == "FP32 packed"
    assert base_compute_key("tensor_fp32") == "tensor_fp32"
    from roofline.projection.machines import substitute_for

    assert substitute_for("tensor_fp32", {"fp32": 1.0}) == "fp32"  # AMD FP32 matrix work on an NVIDIA GPU


# --- wiring: -m / --to names, named_spec, --list-specs ---------------------------------------------


def _table(device_name: str, **metrics: object) -> KernelTable:
    frame = from_records([{"kernel_name": "k", "time_s": 1e-3, "fp64_flops": 1e9, "dram_bytes": 1e9}])
    return KernelTable(frame, metrics=pd.DataFrame({DEVICE_NAME: [device_name], **{k: [v] for k, v in metrics.items()}}))


def test_named_spec_gives_the_amd_machine_of_the_profiles_gpu():
    m = named_spec(_table("AMD Instinct MI300X"))
    assert m is not None and m.name == "AMD Instinct MI300X" and m.compute["tensor_fp16"] == pytest.approx(1307.4432e12)
    assert m.max_sm_clock_hz == 2.1e9
    cpx = named_spec(_table("MI300X_A1", cu_per_gpu=38))
    assert cpx.compute["tensor_fp16"] == pytest.approx(38 * 2048 * 2.1e9)
    assert named_spec(_table("MI200", numCU=104)).name == "AMD Instinct MI210"
    assert named_spec(_table("MI200")) is None  # 104 or 110 CUs: cannot tell
    nvidia = named_spec(_table("NVIDIA H100 80GB HBM3"))
    assert nvidia.name == "H100 SXM5 80GB" and nvidia.max_sm_clock_hz == 1980e6


def test_resolve_and_load_machine_take_amd_names():
    chosen = resolve(_table("AMD Instinct MI210")).machine
    assert chosen is not None and chosen.memory["dram"] == pytest.approx(1638.4e9)
    assert load_machine("mi300x").compute["fp64"] == pytest.approx(81.7152e12)
    assert load_machine("AMD Instinct MI300X").name == "AMD Instinct MI300X"


def test_cli_lists_and_prints_amd_specs(capsys):
    assert main(["machine", "--list-specs"]) == 0
    out = capsys.readouterr().out
    for name in list_amd_specs():
        assert name in out
    assert "304 CUs" in out and "h100-sxm" in out
    assert main(["machine", "--spec", "mi300x"]) == 0
    out = capsys.readouterr().out
    assert "AMD Instinct MI300X" in out and "tensor_fp32" in out

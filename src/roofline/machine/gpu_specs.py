"""NVIDIA GPU architectures and products: per-SM per-clock rates and board figures.

Data plus a few lookups; the arithmetic lives in :mod:`roofline.machine.theoretical`.

Rates are per streaming multiprocessor (SM) per SM clock cycle:

- non-tensor FLOP/clk/SM: an FMA lane counts 2 FLOPs; paired half (HFMA2) lanes count 2 x 2;
- DENSE tensor-core FLOP/clk/SM (OP/clk/SM for INT8), never the 2:4-sparse figures;
- L1 bytes/clk/SM: load bandwidth of the L1 / shared-memory array.

Each figure was checked so that SMs x rate x boost clock gives the dense number in the
vendor document named in the row's ``source`` (tests/test_gpu_specs.py recomputes them).
A key missing from a row means we could not source it, not that the unit is absent, except
where the architecture plainly lacks the unit (no BF16 or TF32 before Ampere, no FP8
before Ada): those are absent too and :func:`has_rate` says which.

Left out on purpose (no vendor per-clock figure found):

- L2 bandwidth per clock, for every architecture: the L2 ceiling is measured, never derived.
- L1 bytes/clk for Turing, GA10x and Ada (their whitepapers give no per-clock figure).
- BF16 non-tensor rates for Turing (no BF16), GA10x and Ada (not in the whitepapers' tables).
- Blackwell (GB100 / GB20x): NVIDIA has published per-GPU figures but not, as far as we could
  check, per-SM per-clock tensor rates with the clock they assume, so no row and no B200 product.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from roofline.errors import MachineError

#: Rate keys, matching :data:`roofline.machine.model.COMPUTE_KEYS`.
SCALAR_KEYS = ("fp64", "fp32", "fp16", "bf16")
TENSOR_KEYS = ("tensor_fp64", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_int8")
#: Tensor keys that NVIDIA rates at the 'low-precision tensor' boost clock where a product has one
#: (H100: 1830 MHz SXM5, 1620 MHz PCIe, against 1980 / 1755 MHz for FP32, FP64 and FP64 tensor).
LOW_PRECISION_TENSOR_KEYS = ("tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_int8")

KiB = 1024
MiB = 1024 * 1024


@dataclass(frozen=True)
class GpuArch:
    """One NVIDIA GPU architecture (a chip family) and its per-SM per-clock rates.

    ``rates``: FLOP (OP for int8) per clock per SM, keyed by compute key.
    ``l1_bytes_per_clk_per_sm``: L1 load bandwidth, B/clk/SM, or None where not sourced.
    ``l1_shared_bytes_per_sm``: combined L1 / shared-memory capacity, B (the L1 can use
    what the kernel leaves of it for shared memory).
    ``compute_capabilities``: (major, minor) pairs of the chips in the family.
    """

    key: str
    name: str
    compute_capabilities: tuple[tuple[int, int], ...]
    rates: Mapping[str, float]
    l1_bytes_per_clk_per_sm: float | None
    l1_shared_bytes_per_sm: int | None
    source: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))


@dataclass(frozen=True)
class GpuSpec:
    """One GPU product: how many SMs, at what clock, with which memory.

    Units: ``boost_clock_hz`` Hz; ``memory_bus_bits`` bits; ``memory_data_rate`` bit/s per pin
    (for DDR memories: twice the memory clock); ``l2_bytes`` B.
    ``low_precision_tensor_clock_hz``: the clock NVIDIA's dense TF32/FP16/BF16/FP8/INT8 tensor
    figures assume, where it differs from the boost clock (Hopper), else None.
    ``rate_overrides``: per-SM per-clock rates that differ from the architecture's, e.g.
    GeForce boards whose FP32-accumulate tensor rate is half the data-center one.
    ``datasheet``: the vendor's own headline figures (SI: FLOP/s, B/s), dense, for comparison.
    """

    key: str
    name: str
    arch: str
    sms: int
    boost_clock_hz: float
    memory_bus_bits: int
    memory_data_rate: float
    l2_bytes: int | None
    source: str
    low_precision_tensor_clock_hz: float | None = None
    rate_overrides: Mapping[str, float] = field(default_factory=dict)
    datasheet: Mapping[str, float] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate_overrides", MappingProxyType(dict(self.rate_overrides)))
        object.__setattr__(self, "datasheet", MappingProxyType(dict(self.datasheet)))

    @property
    def architecture(self) -> GpuArch:
        return ARCHS[self.arch]

    def rates(self) -> dict[str, float]:
        """Per-SM per-clock rates of this product (architecture rates with its overrides)."""
        r = dict(self.architecture.rates)
        r.update(self.rate_overrides)
        return r


_VOLTA_WP = "NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001_v1.1, 2017)"
_TURING_WP = "NVIDIA Turing GPU Architecture whitepaper (WP-09183-001_v01, 2018)"
_A100_WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (V1.0, 2020)"
_GA102_WP = "NVIDIA Ampere GA102 GPU Architecture whitepaper (V2.0, 2021)"
_ADA_WP = "NVIDIA Ada GPU Architecture whitepaper (V2.01, 2023)"
_H100_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (V1.04, 2023), Table 3"
_L1_NOTE = (
    "L1: 128 B/clk/SM, the L1/shared array serving one 32 x 4-byte request per clock "
    "(CUDA C++ Programming Guide, shared memory banks; Jia et al., 'Dissecting the NVIDIA Volta GPU "
    "Architecture via Microbenchmarking', 2018)"
)

ARCHS: Mapping[str, GpuArch] = MappingProxyType({
    a.key: a
    for a in (
        GpuArch(
            key="gv100", name="Volta GV100", compute_capabilities=((7, 0),),
            # 64 FP32 + 32 FP64 lanes/SM, FP16 via HFMA2 at 2x FP32; 8 tensor cores x 64 FMA/clk.
            rates={"fp64": 64, "fp32": 128, "fp16": 256, "tensor_fp16": 1024},
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=128 * KiB,
            source=f"{_VOLTA_WP}; {_L1_NOTE}",
        ),
        GpuArch(
            key="tu10x", name="Turing TU10x", compute_capabilities=((7, 5),),
            # 64 FP32 lanes, 2 FP64 units/SM (1/32 rate), FP16 at 2x FP32; 8 tensor cores.
            rates={"fp64": 4, "fp32": 128, "fp16": 256, "tensor_fp16": 1024, "tensor_int8": 2048},
            l1_bytes_per_clk_per_sm=None, l1_shared_bytes_per_sm=96 * KiB,
            source=f"{_TURING_WP}; NVIDIA T4 datasheet",
        ),
        GpuArch(
            key="ga100", name="Ampere GA100", compute_capabilities=((8, 0),),
            # 64 FP32 + 32 FP64 lanes/SM; FP16 4x and BF16 2x FP32 (A100: 78 / 39 TFLOP/s);
            # 4 tensor cores x 256 FP16 FMA/clk; FP64 tensor 19.5 TFLOP/s = 128 FLOP/clk/SM.
            rates={
                "fp64": 64, "fp32": 128, "fp16": 512, "bf16": 256,
                "tensor_fp64": 128, "tensor_tf32": 1024, "tensor_fp16": 2048, "tensor_bf16": 2048,
                "tensor_int8": 4096,
            },
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=192 * KiB,
            source=f"{_A100_WP}; {_L1_NOTE}",
        ),
        GpuArch(
            key="ga10x", name="Ampere GA10x", compute_capabilities=((8, 6), (8, 7)),
            # 128 FP32 lanes/SM, 2 FP64 units (1/64), FP16 1:1 with FP32; 4 tensor cores x 128
            # FP16 FMA/clk (A10 datasheet: 125 TFLOP/s FP16 / BF16 tensor at 72 SMs, 1695 MHz).
            rates={
                "fp64": 4, "fp32": 256, "fp16": 256,
                "tensor_tf32": 512, "tensor_fp16": 1024, "tensor_bf16": 1024, "tensor_int8": 2048,
            },
            l1_bytes_per_clk_per_sm=None, l1_shared_bytes_per_sm=128 * KiB,
            source=f"{_GA102_WP}; NVIDIA A10 datasheet",
        ),
        GpuArch(
            key="ad10x", name="Ada AD10x", compute_capabilities=((8, 9),),
            # 128 FP32 lanes/SM, FP64 1/64, FP16 1:1; 4 tensor cores; data-center rates
            # (L40S datasheet: 183 TF32, 366 FP16/BF16, 733 FP8 and INT8 dense at 142 SMs, 2520 MHz).
            rates={
                "fp64": 4, "fp32": 256, "fp16": 256,
                "tensor_tf32": 512, "tensor_fp16": 1024, "tensor_bf16": 1024,
                "tensor_fp8": 2048, "tensor_int8": 2048,
            },
            l1_bytes_per_clk_per_sm=None, l1_shared_bytes_per_sm=128 * KiB,
            source=f"{_ADA_WP}, Appendix A; NVIDIA L4 and L40S datasheets",
        ),
        GpuArch(
            key="gh100", name="Hopper GH100", compute_capabilities=((9, 0),),
            # 128 FP32 + 64 FP64 lanes/SM; FP16 / BF16 non-tensor 2x FP32 (133.8 TFLOP/s on SXM5);
            # 4 tensor cores: 4096 dense FP16 FLOP/clk/SM (989.4 TFLOP/s at 132 SMs x 1830 MHz).
            rates={
                "fp64": 128, "fp32": 256, "fp16": 512, "bf16": 512,
                "tensor_fp64": 256, "tensor_tf32": 2048, "tensor_fp16": 4096, "tensor_bf16": 4096,
                "tensor_fp8": 8192, "tensor_int8": 8192,
            },
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=256 * KiB,
            source=f"{_H100_WP}; {_L1_NOTE}",
        ),
    )
})

# Datasheet figures used below are dense, SI (FLOP/s, B/s).
T = 1e12
G = 1e9

SPECS: Mapping[str, GpuSpec] = MappingProxyType({
    s.key: s
    for s in (
        GpuSpec(
            key="v100-sxm2", name="Tesla V100 SXM2", arch="gv100", sms=80, boost_clock_hz=1530e6,
            memory_bus_bits=4096, memory_data_rate=1.758e9, l2_bytes=6 * MiB,
            source=f"{_VOLTA_WP}, Table 1; NVIDIA V100 datasheet",
            datasheet={"fp64": 7.8 * T, "fp32": 15.7 * T, "tensor_fp16": 125 * T, "dram": 900 * G},
            notes="HBM2 data rate = datasheet 900 GB/s / 4096 bits.",
        ),
        GpuSpec(
            key="v100-pcie", name="Tesla V100 PCIe", arch="gv100", sms=80, boost_clock_hz=1380e6,
            memory_bus_bits=4096, memory_data_rate=1.758e9, l2_bytes=6 * MiB,
            source="NVIDIA V100 datasheet",
            datasheet={"fp64": 7 * T, "fp32": 14 * T, "tensor_fp16": 112 * T, "dram": 900 * G},
            notes="HBM2 data rate = datasheet 900 GB/s / 4096 bits.",
        ),
        GpuSpec(
            key="t4", name="Tesla T4", arch="tu10x", sms=40, boost_clock_hz=1590e6,
            memory_bus_bits=256, memory_data_rate=10e9, l2_bytes=4 * MiB,
            source=f"NVIDIA T4 datasheet; {_TURING_WP}",
            datasheet={"fp32": 8.1 * T, "tensor_fp16": 65 * T, "tensor_int8": 130 * T, "dram": 320 * G},
        ),
        GpuSpec(
            key="a100-80gb-sxm", name="A100 80GB SXM4", arch="ga100", sms=108, boost_clock_hz=1410e6,
            memory_bus_bits=5120, memory_data_rate=3.186e9, l2_bytes=40 * MiB,
            source=f"{_A100_WP}; NVIDIA A100 datasheet",
            datasheet={
                "fp64": 9.7 * T, "tensor_fp64": 19.5 * T, "fp32": 19.5 * T, "tensor_tf32": 156 * T,
                "tensor_fp16": 312 * T, "tensor_bf16": 312 * T, "tensor_int8": 624 * T, "dram": 2039 * G,
            },
        ),
        GpuSpec(
            key="a100-40gb-sxm", name="A100 40GB SXM4", arch="ga100", sms=108, boost_clock_hz=1410e6,
            memory_bus_bits=5120, memory_data_rate=2.43e9, l2_bytes=40 * MiB,
            source=f"{_A100_WP}; NVIDIA A100 datasheet",
            datasheet={
                "fp64": 9.7 * T, "tensor_fp64": 19.5 * T, "fp32": 19.5 * T, "tensor_tf32": 156 * T,
                "tensor_fp16": 312 * T, "tensor_bf16": 312 * T, "tensor_int8": 624 * T, "dram": 1555 * G,
            },
            notes="HBM2 data rate = datasheet 1555 GB/s / 5120 bits.",
        ),
        GpuSpec(
            key="a100-pcie", name="A100 40GB PCIe", arch="ga100", sms=108, boost_clock_hz=1410e6,
            memory_bus_bits=5120, memory_data_rate=2.43e9, l2_bytes=40 * MiB,
            source="NVIDIA A100 PCIe datasheet",
            datasheet={"fp64": 9.7 * T, "fp32": 19.5 * T, "tensor_fp16": 312 * T, "dram": 1555 * G},
            notes="HBM2 data rate = datasheet 1555 GB/s / 5120 bits.",
        ),
        GpuSpec(
            key="a100-80gb-pcie", name="A100 80GB PCIe", arch="ga100", sms=108, boost_clock_hz=1410e6,
            memory_bus_bits=5120, memory_data_rate=3.024e9, l2_bytes=40 * MiB,
            source="NVIDIA A100 datasheet",
            datasheet={"fp64": 9.7 * T, "fp32": 19.5 * T, "tensor_fp16": 312 * T, "dram": 1935 * G},
            notes="HBM2e data rate = datasheet 1935 GB/s / 5120 bits.",
        ),
        GpuSpec(
            key="a10", name="A10", arch="ga10x", sms=72, boost_clock_hz=1695e6,
            memory_bus_bits=384, memory_data_rate=12.5e9, l2_bytes=6 * MiB,
            source=f"NVIDIA A10 datasheet; {_GA102_WP}",
            datasheet={"fp32": 31.2 * T, "tensor_tf32": 62.5 * T, "tensor_bf16": 125 * T,
                       "tensor_fp16": 125 * T, "tensor_int8": 250 * T, "dram": 600 * G},
        ),
        GpuSpec(
            key="l4", name="L4", arch="ad10x", sms=58, boost_clock_hz=2040e6,
            memory_bus_bits=192, memory_data_rate=12.5e9, l2_bytes=48 * MiB,
            source=f"NVIDIA L4 datasheet; {_ADA_WP}",
            datasheet={"fp32": 30.3 * T, "tensor_fp16": 121 * T, "tensor_fp8": 242.5 * T, "dram": 300 * G},
            notes="GDDR6 data rate = datasheet 300 GB/s / 192 bits.",
        ),
        GpuSpec(
            key="l40s", name="L40S", arch="ad10x", sms=142, boost_clock_hz=2520e6,
            memory_bus_bits=384, memory_data_rate=18e9, l2_bytes=96 * MiB,
            source=f"NVIDIA L40S datasheet; {_ADA_WP}",
            datasheet={"fp32": 91.6 * T, "tensor_tf32": 183 * T, "tensor_fp8": 733 * T, "dram": 864 * G},
            notes="GDDR6 data rate = datasheet 864 GB/s / 384 bits.",
        ),
        GpuSpec(
            key="rtx-4090", name="GeForce RTX 4090", arch="ad10x", sms=128, boost_clock_hz=2520e6,
            memory_bus_bits=384, memory_data_rate=21e9, l2_bytes=72 * MiB,
            source=f"{_ADA_WP}, Appendix A (GeForce RTX 4090)",
            # GeForce: tensor rates with FP32 accumulate (what cuBLAS GEMMs use) are half the
            # FP16-accumulate rates; INT8 is not halved.
            rate_overrides={"tensor_tf32": 256, "tensor_fp16": 512, "tensor_bf16": 512, "tensor_fp8": 1024},
            datasheet={"fp32": 82.6 * T, "tensor_fp16": 165.2 * T, "tensor_bf16": 165.2 * T,
                       "tensor_fp8": 330.3 * T, "tensor_int8": 660.6 * T, "dram": 1008 * G},
            notes="Tensor figures are FP32-accumulate (half the FP16-accumulate figures on GeForce).",
        ),
        GpuSpec(
            key="h100-sxm", name="H100 SXM5 80GB", arch="gh100", sms=132, boost_clock_hz=1980e6,
            memory_bus_bits=5120, memory_data_rate=5.234e9, l2_bytes=50 * MiB,
            low_precision_tensor_clock_hz=1830e6,
            source=f"{_H100_WP}; NVIDIA H100 datasheet",
            datasheet={
                "fp64": 33.5 * T, "tensor_fp64": 66.9 * T, "fp32": 66.9 * T, "fp16": 133.8 * T,
                "bf16": 133.8 * T, "tensor_tf32": 494.7 * T, "tensor_fp16": 989.4 * T,
                "tensor_bf16": 989.4 * T, "tensor_fp8": 1978.9 * T, "tensor_int8": 1978.9 * T,
                "dram": 3.35e12,
            },
            notes="HBM3 data rate = datasheet 3.35 TB/s / 5120 bits. Tensor TF32/FP16/BF16/FP8/INT8 "
            "figures assume 1830 MHz (whitepaper Table 3), the others 1980 MHz.",
        ),
        GpuSpec(
            key="h100-pcie", name="H100 PCIe 80GB", arch="gh100", sms=114, boost_clock_hz=1755e6,
            memory_bus_bits=5120, memory_data_rate=3.125e9, l2_bytes=50 * MiB,
            low_precision_tensor_clock_hz=1620e6,
            source=f"{_H100_WP}; NVIDIA H100 datasheet",
            datasheet={
                "fp64": 25.6 * T, "tensor_fp64": 51.2 * T, "fp32": 51.2 * T,
                "tensor_tf32": 378 * T, "tensor_fp16": 756 * T, "tensor_bf16": 756 * T,
                "tensor_fp8": 1513 * T, "tensor_int8": 1513 * T, "dram": 2.0e12,
            },
            notes="HBM2e data rate = datasheet 2.0 TB/s / 5120 bits. Tensor TF32/FP16/BF16/FP8/INT8 "
            "figures assume 1620 MHz (whitepaper Table 3), the others 1755 MHz.",
        ),
        GpuSpec(
            key="h200", name="H200 SXM 141GB", arch="gh100", sms=132, boost_clock_hz=1980e6,
            memory_bus_bits=6144, memory_data_rate=6.25e9, l2_bytes=None,
            low_precision_tensor_clock_hz=1830e6,
            source="NVIDIA H200 datasheet; H100 whitepaper for the GH100 SM",
            datasheet={
                "fp64": 34 * T, "tensor_fp64": 67 * T, "fp32": 67 * T, "tensor_tf32": 494.5 * T,
                "tensor_bf16": 989.5 * T, "tensor_fp16": 989.5 * T, "tensor_fp8": 1979 * T,
                "tensor_int8": 1979 * T, "dram": 4.8e12,
            },
            notes="HBM3e data rate = datasheet 4.8 TB/s / 6144 bits. Same GH100 SM count and clocks as "
            "H100 SXM5 (the datasheet's figures match). L2 size not in the datasheet: read it live.",
        ),
    )
})

#: Other names accepted by :func:`get_spec`.
ALIASES = {
    "h200-sxm": "h200", "h100": "h100-sxm", "h100-sxm5": "h100-sxm", "a100": "a100-80gb-sxm",
    "a100-sxm": "a100-80gb-sxm", "v100": "v100-sxm2", "4090": "rtx-4090", "a100-40gb-pcie": "a100-pcie",
}


def list_specs() -> list[str]:
    """Names of the known GPU products, sorted."""
    return sorted(SPECS)


def get_spec(name: str) -> GpuSpec:
    """The product named ``name`` (case-insensitive; e.g. 'h100-sxm'), or MachineError."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = ALIASES.get(key, key)
    if key not in SPECS:
        raise MachineError(
            f"unknown GPU spec {name!r}",
            hint=f"known: {', '.join(list_specs())} (roofline machine --list-specs)",
        )
    return SPECS[key]


def arch_for(compute_capability: tuple[int, int]) -> GpuArch:
    """The architecture row for a CUDA compute capability, or MachineError when we have none."""
    for arch in ARCHS.values():
        if tuple(compute_capability) in arch.compute_capabilities:
            return arch
    major, minor = compute_capability
    raise MachineError(
        f"no theoretical rates for compute capability {major}.{minor}",
        hint="known: " + ", ".join(f"{a.name} ({'/'.join(f'{x}.{y}' for x, y in a.compute_capabilities)})"
                                   for a in ARCHS.values()),
    )


def spec_for_device_name(device_name: str) -> GpuSpec | None:
    """Guess the product from the name the driver reports (e.g. 'NVIDIA H100 80GB HBM3'); None if unsure."""
    n = device_name.lower()
    rules = (
        ("h200", "h200"),
        ("h100 pcie", "h100-pcie"),
        ("h100 80gb hbm3", "h100-sxm"),
        ("h100 sxm", "h100-sxm"),
        ("a100-sxm4-80gb", "a100-80gb-sxm"),
        ("a100-sxm4-40gb", "a100-40gb-sxm"),
        ("a100 80gb pcie", "a100-80gb-pcie"),
        ("a100-pcie-40gb", "a100-pcie"),
        ("v100-sxm2", "v100-sxm2"),
        ("v100-pcie", "v100-pcie"),
        ("tesla t4", "t4"),
        ("rtx 4090", "rtx-4090"),
        ("l40s", "l40s"),
        ("nvidia l4", "l4"),
        ("nvidia a10", "a10"),
    )
    for needle, key in rules:
        if needle in n:
            if key == "a10" and ("a100" in n or "a10g" in n):
                continue
            return SPECS[key]
    return None


def has_rate(arch: GpuArch, key: str) -> bool:
    """Whether the architecture row has a sourced per-clock rate for ``key``."""
    return key in arch.rates

"""NVIDIA GPU architectures and products: per-SM per-clock rates and board figures.

Data plus a few lookups; the arithmetic lives in :mod:`roofline.machine.theoretical`.

Rates are per streaming multiprocessor (SM) per SM clock cycle:

- non-tensor FLOP/clk/SM: an FMA lane counts 2 FLOPs; paired half (HFMA2) lanes count 2 x 2;
- DENSE tensor-core FLOP/clk/SM (OP/clk/SM for INT8), never the 2:4-sparse figures;
- L1 bytes/clk/SM: load bandwidth of the L1 / shared-memory array;
- L2 bytes/clk: read bandwidth of the whole L2 per SM clock, where a source gives one;
- shared-memory bytes/clk/SM: 32 banks x 4 B (:data:`SHARED_NOTE`);
- operations per clock per SM (``op_rates``, OP/clk/SM): 32-bit integer, conversion and
  special-function thread instructions, from the CUDA C++ Programming Guide's throughput table
  (:data:`GUIDE_THROUGHPUT`);
- warp instructions per clock per SM: schedulers per SM x 1 (:data:`SCHEDULER_NOTE`).

Each figure was checked so that SMs x rate x boost clock gives the dense number in the
vendor document named in the row's ``source`` (tests/test_gpu_specs.py recomputes them).
A key missing from a row means we could not source it, not that the unit is absent, except
where the architecture plainly lacks the unit (no BF16 or TF32 before Ampere, no FP8
before Ada): those are absent too and :func:`has_rate` says which. FP4 and FP6 tensor rates
(Blackwell) have no compute key in our model and are left out; where a product's clock was
derived, its ``notes`` say from what.

Left out on purpose (no per-clock figure found):

- L2 bandwidth for Turing, GA10x, Ada and Blackwell (``l2_source`` of the row says why); the
  L2 ceiling there is measured, never derived.
- L1 bytes/clk for Turing, GA10x, Ada and GB20x (their whitepapers give no per-clock figure).
- INT32, conversion and SFU rates for Blackwell (compute capability 10.0 and 12.0): the columns of
  the Programming Guide's throughput table we checked stop at 9.0 (``op_absent`` of the row says so).
- BF16 non-tensor rates for Turing (no BF16), GA10x and Ada (not in the whitepapers' tables);
  FP16 / BF16 non-tensor and FP64 rates for Blackwell (not in the datasheets we used).
- Products whose figures do not follow from SMs x rate x clock with a sourced SM count and
  clock: H20 (its 148 TFLOP/s FP16 tensor and 44 TFLOP/s FP32 do not fit GH100 rates at any
  GH100 clock with a sourced SM count), GB200 (no SM count or clock published; its FP64 and
  FP16-tensor figures imply different clocks), RTX PRO 6000 Blackwell Server Edition (no
  datasheet figures found). :func:`spec_for_device_name` says None for them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from roofline.errors import MachineError
from roofline.machine.model import COMPUTE_KEYS

#: Rate keys, matching :data:`roofline.machine.model.COMPUTE_KEYS`.
SCALAR_KEYS = ("fp64", "fp32", "fp16", "bf16")
TENSOR_KEYS = tuple(k for k in COMPUTE_KEYS if k.startswith("tensor_"))
#: Tensor keys that NVIDIA rates at the 'low-precision tensor' boost clock where a product has one
#: (H100: 1830 MHz SXM5, 1620 MHz PCIe, against 1980 / 1755 MHz for FP32, FP64 and FP64 tensor).
LOW_PRECISION_TENSOR_KEYS = ("tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_fp4", "tensor_int8")

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
    ``l2_bytes_per_clk``: L2 read bandwidth of the whole chip, B per SM clock, or None where not
    sourced; ``l2_source``: where the figure comes from and which clock it assumes, or why it is None.
    ``op_rates``: thread operations per clock per SM keyed ``int32``, ``conversion``, ``sfu``
    (OP/clk/SM; empty where not sourced, ``op_absent`` then says why); ``op_source``: where they come from.
    ``schedulers_per_sm``: warp schedulers per SM, each issuing at most one warp instruction per clock
    (the instruction roofline's peak), or None; ``scheduler_source``: where that comes from.
    ``shared_bytes_per_clk_per_sm``: shared-memory bandwidth, B/clk/SM, or None where not sourced.
    """

    key: str
    name: str
    compute_capabilities: tuple[tuple[int, int], ...]
    rates: Mapping[str, float]
    l1_bytes_per_clk_per_sm: float | None
    l1_shared_bytes_per_sm: int | None
    source: str
    l2_bytes_per_clk: float | None = None
    l2_source: str = ""
    op_rates: Mapping[str, float] = field(default_factory=dict)
    op_source: str = ""
    op_absent: str = ""
    schedulers_per_sm: int | None = None
    scheduler_source: str = ""
    shared_bytes_per_clk_per_sm: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))
        object.__setattr__(self, "op_rates", MappingProxyType(dict(self.op_rates)))


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
_RTX_BW_WP = "NVIDIA RTX Blackwell GPU Architecture whitepaper (2025), Appendix A"
_B200_NCU = (
    "device attributes of an NVIDIA B200 in an Nsight Compute export "
    "(tests/data/ncu/b200_sdpa_flash: 148 SMs, clock_rate 1965000 kHz, 7680-bit bus, memory clock "
    "3996 MHz, L2 132644864 B in 192 slices)"
)
_L2_WP_CLK = (
    "per SM clock: NVIDIA quotes it in B/clk, and its '2.3x V100' L2 claim holds at the SM boost "
    "clocks (5120 x 1410 MHz / (2048 x 1530 MHz) = 2.30); the L2 runs on its own clock domain "
    "(lts__cycles_elapsed), so at other clocks this is an approximation"
)
_L2_UNSOURCED = "no per-clock L2 bandwidth published for {}: measure it (roofline machine)"
_L1_NOTE = (
    "L1: 128 B/clk/SM, the L1/shared array serving one 32 x 4-byte request per clock "
    "(CUDA C++ Programming Guide, shared memory banks; Jia et al., 'Dissecting the NVIDIA Volta GPU "
    "Architecture via Microbenchmarking', 2018)"
)

#: Rows of the CUDA C++ Programming Guide's "Throughput of Native Arithmetic Instructions" table
#: (section "Arithmetic Instructions"; results per clock cycle per multiprocessor), the same in the
#: columns for compute capability 7.x, 8.0, 8.6, 8.9 and 9.0: "32-bit integer add, extended-precision
#: add, subtract" 64, "32-bit integer multiply, multiply-add" 64 (as are shift, compare, min/max and
#: bitwise AND/OR/XOR): ``int32``; "All other type conversions" (and from 8/16-bit to 32-bit integers)
#: 16: ``conversion``; "32-bit floating-point reciprocal, reciprocal square root, base-2 logarithm,
#: base-2 exponential, sine, cosine" 16, the special-function (MUFU, XU pipe) row: ``sfu``.
#: Caveat for ``int32``: the guide rates each instruction class alone. IMAD runs on the FMA pipe and
#: IADD3 / LOP3 on the ALU pipe (Nsight Compute's pipe descriptions), so a mix of the two can issue
#: up to 128 integer thread instructions per clock per SM (the 4 x 32 issue limit): a measured mix may
#: reach twice this figure.
GUIDE_THROUGHPUT: Mapping[str, float] = MappingProxyType({"int32": 64, "conversion": 16, "sfu": 16})
_GUIDE = (
    "CUDA C++ Programming Guide, 'Arithmetic Instructions', throughput table (results per clock per SM) "
    "for compute capability {}: 32-bit integer add and multiply-add 64, 'all other type conversions' 16, "
    "32-bit floating-point reciprocal / rsqrt / log2 / exp2 / sin / cos (the SFU) 16"
)
_GUIDE_ABSENT = (
    "no sourced INT32 / conversion / SFU rate for {}: the columns of the CUDA C++ Programming Guide's "
    "throughput table we checked stop at compute capability 9.0; measure INT32 (roofline machine)"
)
#: Why the shared-memory ceiling is 128 B per clock per SM.
SHARED_NOTE = (
    "shared memory: 32 banks, successive 32-bit words in successive banks, each bank 32 bits per clock "
    "(CUDA C++ Programming Guide, shared memory of compute capability 5.x, kept by the later ones), so "
    "128 B/clk/SM, one 128-byte wavefront per clock (Nsight Compute Kernel Profiling Guide: wavefronts)"
)
#: Why the warp-instruction ceiling is 4 per clock per SM.
SCHEDULER_NOTE = (
    "4 SM partitions (processing blocks), each with one warp scheduler and dispatch unit issuing one warp "
    "instruction (32 threads) per clock ({}); Ding and Williams, 'An Instruction Roofline Model for GPUs' "
    "(PMBS 2019): V100 peak 80 SMs x 4 x 1.53 GHz = 489.6 warp GIPS"
)
_NCU_SCHEDULERS = (
    "Nsight Compute device attributes of a real {} (tests/data/ncu/{}): "
    "device__attribute_num_schedulers_per_multiprocessor 4, device__attribute_max_ipc_per_scheduler 1"
)

ARCHS: Mapping[str, GpuArch] = MappingProxyType({
    a.key: a
    for a in (
        GpuArch(
            key="gv100", name="Volta GV100", compute_capabilities=((7, 0),),
            # 64 FP32 + 32 FP64 lanes/SM, FP16 via HFMA2 at 2x FP32; 8 tensor cores x 64 FMA/clk.
            rates={"fp64": 64, "fp32": 128, "fp16": 256, "tensor_fp16": 1024},
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=128 * KiB,
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("7.x"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_VOLTA_WP}: four processing blocks, each with one warp scheduler and one dispatch unit"),
            source=f"{_VOLTA_WP}; {_L1_NOTE}",
            l2_bytes_per_clk=2048,
            l2_source=f"{_A100_WP}: L2 read bandwidth 2048 B/clk for V100, {_L2_WP_CLK}",
        ),
        GpuArch(
            key="tu10x", name="Turing TU10x", compute_capabilities=((7, 5),),
            # 64 FP32 lanes, 2 FP64 units/SM (1/32 rate), FP16 at 2x FP32; 8 tensor cores.
            rates={"fp64": 4, "fp32": 128, "fp16": 256, "tensor_fp16": 1024, "tensor_int8": 2048},
            l1_bytes_per_clk_per_sm=None, l1_shared_bytes_per_sm=96 * KiB,
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("7.x"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_TURING_WP}; " + _NCU_SCHEDULERS.format("Tesla T4 and GeForce GTX 1660 SUPER", "t4_setfull_rep, gtx1660s_gemm_rep")),
            source=f"{_TURING_WP}; NVIDIA T4 datasheet",
            l2_source=_L2_UNSOURCED.format("Turing") + "; Nsight Compute's model gives 32 B/clk per L2 "
            "slice, but slices differ by product (T4 32, GTX 1660 SUPER 12) and are counted at the L2's own "
            "clock (854 MHz against ~540 MHz SM in tests/data/ncu/t4_setfull_rep)",
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
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("8.0"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_A100_WP}: warp scheduler (32 thread/clk) per partition"),
            source=f"{_A100_WP}; {_L1_NOTE}",
            l2_bytes_per_clk=5120,
            l2_source=f"{_A100_WP}: L2 read bandwidth 5120 B/clk (2.3x V100), {_L2_WP_CLK}",
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
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("8.6"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_GA102_WP}: warp scheduler (32 thread/clk) per partition"),
            source=f"{_GA102_WP}; NVIDIA A10 datasheet",
            l2_source=_L2_UNSOURCED.format("GA10x"),
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
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("8.9"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_ADA_WP}: warp scheduler (32 thread/clk) per partition"),
            source=f"{_ADA_WP}, Appendix A; NVIDIA L4 and L40S datasheets",
            l2_source=_L2_UNSOURCED.format("Ada"),
        ),
        GpuArch(
            key="gh100", name="Hopper GH100", compute_capabilities=((9, 0),),
            # 128 FP32 + 64 FP64 lanes/SM; FP16 / BF16 non-tensor 2x FP32 (133.8 TFLOP/s on SXM5; measured on an
            # H100 SXM, paired-FMA kernels reach only FP32's FLOP rate, 256/clk/SM: bench/gpu/measure.py says so);
            # 4 tensor cores: 4096 dense FP16 FLOP/clk/SM (989.4 TFLOP/s at 132 SMs x 1830 MHz).
            rates={
                "fp64": 128, "fp32": 256, "fp16": 512, "bf16": 512,
                "tensor_fp64": 256, "tensor_tf32": 2048, "tensor_fp16": 4096, "tensor_bf16": 4096,
                "tensor_fp8": 8192, "tensor_int8": 8192,
            },
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=256 * KiB,
            op_rates=GUIDE_THROUGHPUT, op_source=_GUIDE.format("9.0"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_H100_WP}; " + _NCU_SCHEDULERS.format("H100 PCIe and GH200", "h100pcie_setfull_rep_silu_vector, gh200_setfull_rep_rms_norm_looping")),
            source=f"{_H100_WP}; {_L1_NOTE}",
            l2_bytes_per_clk=5120,
            l2_source=(
                "Nsight Compute 2025.1's own model of GH100, as a real H100 PCIe --set full report records it "
                "(tests/data/ncu/h100pcie_setfull_rep_silu_vector: lts__lts2xbar_cycles_active.sum.peak_sustained "
                "160 x 32 B = derived__lts__lts2xbar_bytes.sum.peak_sustained 5120 B per L2 cycle, 80 slices; L2 clock "
                "1.094 GHz beside an SM clock of 1.100 GHz). NVIDIA publishes no Hopper figure. GH200's report "
                "(96 slices) gives 6144 B per L2 cycle, so its L2 ceiling here is low by about 1/6; "
                f"{_L2_WP_CLK}"
            ),
        ),
        GpuArch(
            key="gb100", name="Blackwell GB100", compute_capabilities=((10, 0),),
            # 128 FP32 + 64 FP64 lanes/SM (B200 at 148 SMs, 1965 MHz: FP32 74.4, datasheet 75; FP64 and
            # FP64 tensor 37.2, datasheet 37); tensor rates twice GH100's: 8192 dense FP16 FLOP/clk/SM (2.25 PFLOP/s at
            # 148 SMs x 1856 MHz). FP64 tensor = FP64 (the datasheet gives one figure for both). tensor_fp8 is
            # the 8-bit datapath (FP8, and FP6 at the same 4.5 PFLOP/s), tensor_fp4 the FP4 one (9 PFLOP/s).
            rates={
                "fp64": 128, "fp32": 256,
                "tensor_fp64": 128, "tensor_tf32": 4096, "tensor_fp16": 8192, "tensor_bf16": 8192,
                "tensor_fp8": 16384, "tensor_fp4": 32768, "tensor_int8": 16384,
            },
            l1_bytes_per_clk_per_sm=128, l1_shared_bytes_per_sm=256 * KiB,
            op_absent=_GUIDE_ABSENT.format("Blackwell GB100 (10.0)"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(_NCU_SCHEDULERS.format("B200", "b200_sdpa_flash")),
            source=(
                "NVIDIA HGX B200 specifications (per GPU = 1/8 of HGX B200; dense = half the sparse "
                f"figures); {_B200_NCU}; Chips and Cheese, 'Nvidia's B200: Keeping the CUDA Juggernaut "
                f"Rolling' (2025: 2 dies x 74 SMs, 256 KB L1/shared per SM); {_L1_NOTE}"
            ),
            l2_source=_L2_UNSOURCED.format("Blackwell GB100") + " (B200 has 192 L2 slices, but no "
            "per-slice rate is published)",
        ),
        GpuArch(
            key="gb20x", name="Blackwell GB20x", compute_capabilities=((12, 0),),
            # 128 FP32 lanes/SM; 4 tensor cores: 1024 dense FP16 FLOP/clk/SM with FP16 accumulate
            # (RTX 5090: 419 TFLOP/s at 170 SMs, 2407 MHz; 3352 'AI TOPS' = FP4 sparse = 8 x that, so FP4
            # dense = 4096 FLOP/clk/SM).
            rates={
                "fp32": 256,
                "tensor_tf32": 512, "tensor_fp16": 1024, "tensor_bf16": 1024,
                "tensor_fp8": 2048, "tensor_fp4": 4096, "tensor_int8": 2048,
            },
            l1_bytes_per_clk_per_sm=None, l1_shared_bytes_per_sm=128 * KiB,
            op_absent=_GUIDE_ABSENT.format("Blackwell GB20x (12.0)"),
            schedulers_per_sm=4, shared_bytes_per_clk_per_sm=128,
            scheduler_source=SCHEDULER_NOTE.format(f"{_RTX_BW_WP}: warp scheduler (32 thread/clk) per partition"),
            source=f"{_RTX_BW_WP}; NVIDIA RTX PRO 6000 Blackwell datasheet",
            l2_source=_L2_UNSOURCED.format("Blackwell GB20x"),
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
        GpuSpec(
            key="gh200-96gb", name="GH200 Grace Hopper (96 GB HBM3)", arch="gh100", sms=132,
            boost_clock_hz=1980e6, memory_bus_bits=6144, memory_data_rate=5.2083e9, l2_bytes=None,
            low_precision_tensor_clock_hz=1830e6,
            source="NVIDIA GH200 Grace Hopper Superchip datasheet; H100 whitepaper for the GH100 SM",
            datasheet={
                "fp64": 34 * T, "tensor_fp64": 67 * T, "fp32": 67 * T, "tensor_tf32": 494 * T,
                "tensor_bf16": 990 * T, "tensor_fp16": 990 * T, "tensor_fp8": 1979 * T,
                "tensor_int8": 1979 * T, "dram": 4.0e12,
            },
            notes="The GPU of the GH200 with 96 GB HBM3 at 4.0 TB/s (driver names 'NVIDIA GH200 480GB' and "
            "'NVIDIA GH200 120GB': 480 or 120 GB is the Grace LPDDR5X). HBM3 data rate = datasheet 4.0 TB/s "
            "/ 6144 bits (6 stacks). "
            "The datasheet's compute figures are H100 SXM5's, so 132 SMs at 1980 / 1830 MHz are assumed "
            "(as for H200); the live spec reads the real counts and clocks. L2 size: read it live.",
        ),
        GpuSpec(
            key="gh200-144gb", name="GH200 Grace Hopper (144 GB HBM3e)", arch="gh100", sms=132,
            boost_clock_hz=1980e6, memory_bus_bits=6144, memory_data_rate=6.3802e9, l2_bytes=None,
            low_precision_tensor_clock_hz=1830e6,
            source="NVIDIA GH200 Grace Hopper Superchip datasheet; H100 whitepaper for the GH100 SM",
            datasheet={
                "fp64": 34 * T, "tensor_fp64": 67 * T, "fp32": 67 * T, "tensor_tf32": 494 * T,
                "tensor_bf16": 990 * T, "tensor_fp16": 990 * T, "tensor_fp8": 1979 * T,
                "tensor_int8": 1979 * T, "dram": 4.9e12,
            },
            notes="The GPU of the GH200 with 144 GB HBM3e at 4.9 TB/s. HBM3e data rate = datasheet 4.9 TB/s "
            "/ 6144 bits. Compute as gh200-96gb (H100 SXM5's figures, 132 SMs at 1980 / 1830 MHz assumed).",
        ),
        GpuSpec(
            key="b200", name="B200 (HGX B200, 180 GB HBM3e)", arch="gb100", sms=148,
            boost_clock_hz=1965e6, memory_bus_bits=7680, memory_data_rate=8.3333e9,
            l2_bytes=132644864, low_precision_tensor_clock_hz=1856e6,
            source=f"NVIDIA HGX B200 specifications (per GPU: 1/8 of the 8-GPU figures); {_B200_NCU}",
            datasheet={
                "fp64": 37 * T, "tensor_fp64": 37 * T, "fp32": 75 * T, "tensor_tf32": 1.125e15,
                "tensor_fp16": 2.25e15, "tensor_bf16": 2.25e15, "tensor_fp8": 4.5e15, "tensor_fp4": 9.0e15,
                "tensor_int8": 4.5e15, "dram": 8.0e12,
            },
            notes="NVIDIA publishes no B200 clock. SMs (148), 1965 MHz (the maximum SM clock the driver "
            "reports), the 7680-bit bus and the L2 size are a real B200's device attributes. The tensor "
            "clock 1856 MHz is DERIVED: 2.25 PFLOP/s dense FP16 / (148 SMs x 8192 FLOP/clk) = 1855.7 MHz; "
            "no power-of-two rate fits at 1965 MHz (it would take 7737 FLOP/clk), as on Hopper, whose "
            "tensor figures also assume a lower clock. TF32, FP8 and INT8 reproduce at that clock. FP64 "
            "(37.2) and FP32 (74.4 TFLOP/s) at 1965 MHz are within 0.7% of the datasheet's 37 and 75 "
            "(8 x 74.4 = 595.6 printed as 600). The early Blackwell technical brief gave 40 / 80 TFLOP/s "
            "FP64 / FP32 at 1000 W, which 148 SMs reproduce only at 2.11 GHz, above the driver's maximum. "
            "HBM3e data rate = datasheet 8 TB/s / 7680 bits; the memory clock the driver reports "
            "(3996 MHz, DDR) gives 7.67 TB/s. FP6 (4.5 PFLOP/s dense) runs on the 8-bit datapath: tensor_fp8; "
            "FP4 (9 PFLOP/s dense) is tensor_fp4.",
        ),
        GpuSpec(
            key="rtx-5090", name="GeForce RTX 5090", arch="gb20x", sms=170, boost_clock_hz=2407e6,
            memory_bus_bits=512, memory_data_rate=28e9, l2_bytes=96 * MiB,
            source=f"{_RTX_BW_WP} (GeForce RTX 5090)",
            # GeForce: tensor rates with FP32 accumulate are half the FP16-accumulate rates, as on Ada.
            rate_overrides={"tensor_tf32": 256, "tensor_fp16": 512, "tensor_bf16": 512, "tensor_fp8": 1024},
            datasheet={"fp32": 104.8 * T, "tensor_fp16": 209.5 * T, "tensor_bf16": 209.5 * T,
                       "tensor_int8": 838 * T, "dram": 1792 * G},
            notes="Tensor figures are FP32-accumulate (half the FP16-accumulate 419 TFLOP/s on GeForce). "
            "3352 'AI TOPS' is FP4 with sparsity = 170 x 8192 x 2407 MHz: tensor_fp4 dense is half.",
        ),
        GpuSpec(
            key="rtx-5080", name="GeForce RTX 5080", arch="gb20x", sms=84, boost_clock_hz=2617e6,
            memory_bus_bits=256, memory_data_rate=30e9, l2_bytes=64 * MiB,
            source=f"{_RTX_BW_WP} (GeForce RTX 5080)",
            rate_overrides={"tensor_tf32": 256, "tensor_fp16": 512, "tensor_bf16": 512, "tensor_fp8": 1024},
            datasheet={"fp32": 56.3 * T, "dram": 960 * G},
            notes="Tensor rates FP32-accumulate (GeForce). 1801 'AI TOPS' (FP4, sparse) = 84 x 8192 x "
            "2617 MHz: tensor_fp4 dense is half.",
        ),
        GpuSpec(
            key="rtx-pro-6000-blackwell", name="RTX PRO 6000 Blackwell Workstation Edition", arch="gb20x",
            sms=188, boost_clock_hz=2597e6, memory_bus_bits=512, memory_data_rate=28e9, l2_bytes=None,
            source="NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet; " + _RTX_BW_WP,
            datasheet={"fp32": 125 * T, "dram": 1792 * G},
            notes="The datasheet gives no clock: 2597 MHz is DERIVED as the clock at which both of its "
            "figures reproduce, 125 TFLOP/s FP32 (188 x 256) and 4000 'AI TOPS' (FP4 sparse, 188 x 8192). "
            "Professional board: full-rate FP32-accumulate tensor cores, as on L40S. 96 GB GDDR7, "
            "512-bit at 28 Gb/s = 1792 GB/s. The Server Edition is not this spec.",
        ),
    )
})

#: Other names accepted by :func:`get_spec`.
ALIASES = {
    "h200-sxm": "h200", "h100": "h100-sxm", "h100-sxm5": "h100-sxm", "a100": "a100-80gb-sxm",
    "a100-sxm": "a100-80gb-sxm", "v100": "v100-sxm2", "4090": "rtx-4090", "a100-40gb-pcie": "a100-pcie",
    "gh200": "gh200-96gb", "b200-sxm": "b200", "5090": "rtx-5090", "5080": "rtx-5080",
    "rtx-pro-6000": "rtx-pro-6000-blackwell",
}


def list_specs() -> list[str]:
    """Names of the known GPU products, sorted."""
    return sorted(SPECS)


def get_spec(name: str) -> GpuSpec:
    """The product named ``name`` (case-insensitive; e.g. 'h100-sxm'), or MachineError."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = ALIASES.get(key, key)
    if key not in SPECS:
        from roofline.machine.amd_specs import list_amd_specs  # (AMD's table: only for this message)

        raise MachineError(
            f"unknown GPU spec {name!r}",
            hint=f"known: {', '.join(list_specs() + list_amd_specs())} (roofline machine --list-specs)",
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


#: (pattern, spec key or None) tried in order on the lower-cased driver name; None: a product we
#: recognise but have no spec for, so nothing later may claim it. Word boundaries keep 'h20' from
#: 'h200', 'h200' from 'gh200', 'b200' from 'gb200' and 'a10' from 'a100' / 'a10g'.
_DEVICE_NAME_RULES: tuple[tuple[str, str | None], ...] = (
    # the HBM3 GH200 is named by its Grace memory: 480GB, or 120GB (a public ncu 2025.2 report of an
    # 'NVIDIA GH200 120GB': 132 SMs, 102,005,473,280 B of device memory, the 96 GB of HBM3)
    (r"\bgh200\b.*\b(120|240|480)gb\b", "gh200-96gb"),
    (r"\bgh200\b.*\b144g", "gh200-144gb"),
    (r"\bgh200\b", None),  # a GH200 variant whose memory we cannot tell
    (r"\bgb200\b", None),  # no sourced SM count or clock
    (r"\bgb300\b|\bb300\b", None),
    (r"\bh200 nvl\b", None),  # PCIe H200 NVL: other clocks and memory than the SXM spec
    (r"\bh200\b", "h200"),
    (r"\bh20\b", None),  # rate-limited GH100: figures do not follow from SMs x rate x clock
    (r"\bh100 pcie\b", "h100-pcie"),
    (r"\bh100 80gb hbm3\b", "h100-sxm"),
    (r"\bh100 sxm", "h100-sxm"),
    (r"\bb200\b", "b200"),
    (r"\brtx pro 6000 blackwell workstation\b", "rtx-pro-6000-blackwell"),
    (r"\brtx pro 6000\b", None),  # Server / Max-Q editions: other clocks and power
    (r"\brtx 5090\b", "rtx-5090"),
    (r"\brtx 5080\b", "rtx-5080"),
    (r"\brtx 4090\b", "rtx-4090"),
    (r"\ba100-sxm4-80gb\b", "a100-80gb-sxm"),
    (r"\ba100-sxm4-40gb\b", "a100-40gb-sxm"),
    (r"\ba100 80gb pcie\b", "a100-80gb-pcie"),
    (r"\ba100-pcie-40gb\b", "a100-pcie"),
    (r"\bv100-sxm2\b", "v100-sxm2"),
    (r"\bv100-pcie\b", "v100-pcie"),
    (r"\btesla t4\b", "t4"),
    (r"\bl40s\b", "l40s"),
    (r"\bnvidia l4\b", "l4"),
    (r"\bnvidia a10\b", "a10"),
)


def spec_for_device_name(device_name: str) -> GpuSpec | None:
    """Guess the product from the name the driver reports (e.g. 'NVIDIA H100 80GB HBM3'); None if unsure."""
    n = " ".join(device_name.lower().split())
    for pattern, key in _DEVICE_NAME_RULES:
        if re.search(pattern, n):
            return SPECS[key] if key is not None else None
    return None


def has_rate(arch: GpuArch, key: str) -> bool:
    """Whether the architecture row has a sourced per-clock rate for compute key ``key`` (FLOP, OP or
    warp-instruction rates alike)."""
    if key == "warp_inst":
        return arch.schedulers_per_sm is not None
    return key in arch.rates or key in arch.op_rates

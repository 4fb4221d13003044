"""AMD Instinct architectures and products: per-CU per-clock rates and board figures.

Data plus lookups; the arithmetic lives in :mod:`roofline.machine.amd_theory`. The NVIDIA table is
:mod:`roofline.machine.specs`; this one follows its style (every figure beside its source, derived
figures said to be derived).

Rates are per compute unit (CU) per engine clock cycle, DENSE, never the structured-sparsity figures:

- vector (VALU) FLOP/clk/CU under the keys ``fp64``, ``fp32``, ``fp16``, ``bf16``; an FMA lane counts 2;
- matrix (MFMA) FLOP/clk/CU (OP/clk/CU for INT8) under ``tensor_fp64``, ``tensor_fp32``, ``tensor_tf32``
  (MI300's XF32), ``tensor_fp16``, ``tensor_bf16``, ``tensor_fp8``, ``tensor_fp4``, ``tensor_int8``;
- LDS bytes/clk/CU (the ``shared`` level).

A product row is one device as the operating system sees it: one GCD of an MI250 / MI250X (each GCD
is its own device; ``package_devices`` says how many a package holds), the whole MI300X in SPX mode
(a CPX partition is 1/8 of it: :func:`roofline.machine.amd_theory.amd_machine` takes a CU count).
Each was checked so that CUs x rate x peak engine clock gives the figure printed in the AMD document
named in the row (tests/test_amd_specs.py recomputes them); ``datasheet`` holds those figures as
printed, for ``datasheet_devices`` devices together.

A key missing from a row means we could not source it, not that the unit is absent, except where the
architecture plainly lacks the unit (``lacks``: no FP64 MFMA on CDNA, no TF32 before or after CDNA3,
no FP8 before CDNA3). Why each other key is missing is in ``absent``. Not sourced here at all:

- per-clock vL1D and L2 bandwidth (no copy of the CDNA whitepapers was reachable, and the ROCm
  documents read give none): the ``l1`` and ``l2`` ceilings are absent, measure them
  (rocprof-compute's ``roofline.csv`` holds empirical ones);
- Infinity Cache (MALL) bandwidth: its size is sourced (``mall_bytes``), its bandwidth is not;
- vector FP16/BF16 rates on every architecture, vector FP64/FP32 and INT8 matrix rates on CDNA4,
  the CDNA4 LDS bandwidth;
- MI325X and MI355X HBM bandwidth (AMD's product pages are quoted elsewhere at 6 and 8 TB/s; no AMD
  document with the figure was readable here): their ``dram`` ceiling is absent, with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from roofline.errors import MachineError

KiB = 1024
MiB = 1024 * 1024
T = 1e12

_SPECS_TABLE = (
    "ROCm documentation, 'GPU hardware specifications' (rocm.docs.amd.com, reference/gpu-arch-specs; "
    "ROCm/ROCm docs/reference/gpu-arch-specs.rst at e396b48, and ROCm/legacy-rocm-build at 089d751 "
    "for the MI355X row): CUs, LDS, L3 (Infinity Cache), L2 per XCD or GCD, vL1D per CU"
)
_MI300_PAGE = (
    "ROCm documentation, 'AMD Instinct MI300 series microarchitecture' (conceptual/gpu-arch/mi300.md, "
    "ROCm/ROCm at e396b48), table 'Peak-performance capabilities of the MI300X' (FLOPS/CLOCK/CU, peak "
    "TFLOPS) and 'peak memory bandwidth of the GPU is 5.3 TB per second'"
)
_MI250_PAGE = (
    "ROCm documentation, 'AMD Instinct MI250 microarchitecture' (conceptual/gpu-arch/mi250.md, ROCm/ROCm "
    "at e396b48), table 'Peak-performance capabilities of the MI250 OAM' and text: 104 active CUs per "
    "GCD, peak clock 1.7 GHz, 'FP64 peak performance per GCD is 22.6 TFLOPS for vector instructions', "
    "HBM2e 1.6 TB/s per GCD (3.2 TB/s for both)"
)
_MI100_PAGE = (
    "ROCm documentation, 'AMD Instinct MI100 microarchitecture' (conceptual/gpu-arch/mi100.md, ROCm/ROCm "
    "at e396b48), table 'Peak-performance capabilities of MI100' and text: 120 CUs, HBM2 1.228 TB/s"
)
_LAB_NOTES = (
    "AMD lab notes, 'AMD matrix cores' (amd/amd-lab-notes matrix-cores/README.md at d0cc152): "
    "Flops/Clock/CU of the MI100 and MI250X matrix cores (FP64 N/A and 256, FP32 256, FP16 1024, "
    "BF16 512 and 1024, INT8 1024) and vector units (FP64 64 and 128, FP32 128); MI250X packed FP32 "
    "doubles FP32"
)
_LAB_NOTES_GCD = (
    "AMD lab notes, 'Finite difference method - Laplacian part 1' (amd/amd-lab-notes "
    "finite-difference/docs/Laplacian_Part1.md at d0cc152): one MI250X GCD, 'PF = 24 TFLOPs/sec', "
    "'theoretical bandwidth per GCD of 1638.4 GB/s'"
)
_BLOG_MATRIX = (
    "ROCm blog 'Matrix Core Programming on AMD CDNA3 and CDNA4 architecture' (30 Sep 2025; "
    "ROCm/rocm-blogs blogs/software-tools-optimization/matrix-cores-cdna/README.md at 74cb987): "
    "MI325X and MI355X matrix peaks, MFMA cycle counts, MI325X = 1216 matrix cores at 2100 MHz"
)
_BLOG_MI210 = (
    "ROCm blog 'LLM inference optimization' (ROCm/rocm-blogs blogs/artificial-intelligence/"
    "llm-inference-optimize/README.md at c9a603f): MI210 'maximum computing capacity of 181 TFLOPs at "
    "the FP16 datatype', 'memory bandwidth up to 1.6 TB/s'"
)
_LDS = (
    "ROCm Compute Profiler documentation, 'Pipeline descriptions' (ROCm/rocprofiler-compute "
    "docs/conceptual/pipeline-descriptions.rst at 95b600e): 'On CDNA accelerators, the LDS contains 32 "
    "banks and each bank is 4B wide ... for a total throughput of 128B/clock'"
)
_DATA_TYPES = (
    "ROCm Compute Profiler documentation, CDNA performance model, 'Data type support' (ROCm/rocm-systems "
    "projects/rocprofiler-compute/docs/conceptual/cdna/cdna-performance-model.rst)"
)
_MI300X_CLOCK = (
    "ROCm documentation, 'AMD Instinct MI300X system optimization' (how-to/system-optimization/mi300x.rst, "
    "ROCm/ROCm at e396b48): 'the default 2100 MHz'"
)


def _device(product: str, folder: str, what: str) -> str:
    return f"device record of a real {product} (tests/data/amd/{folder}/sysinfo.csv, from ROCm/omniperf's tests: {what})"


@dataclass(frozen=True)
class AmdArch:
    """One AMD CDNA architecture and its per-CU per-clock rates.

    ``rates``: FLOP (OP for INT8) per clock per CU by compute key; a variant key (``fp32_packed``) is a
    further ceiling of its precision (:func:`roofline.machine.keys.base_compute_key`). ``rate_sources``:
    where each rate comes from (by key). ``absent``: why a compute key is missing; ``lacks``: keys the
    architecture has no unit for. ``lds_bytes_per_clk_per_cu``: LDS bandwidth, B/clk/CU, or None.
    """

    key: str
    name: str
    gfx: tuple[str, ...]
    rates: Mapping[str, float]
    rate_sources: Mapping[str, str]
    lds_bytes_per_cu: int
    vl1d_bytes_per_cu: int
    source: str
    lds_bytes_per_clk_per_cu: float | None = None
    lds_source: str = ""
    absent: Mapping[str, str] = field(default_factory=dict)
    lacks: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        for name in ("rates", "rate_sources", "absent"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


@dataclass(frozen=True)
class AmdSpec:
    """One AMD Instinct product, as one device the OS sees.

    Units: ``peak_clock_hz`` Hz (the peak engine clock); ``hbm_bytes_per_s`` B/s or None where not
    sourced (``hbm_source`` then says why); ``l2_bytes_per_xcd``, ``mall_bytes`` B. ``xcds``: XCDs (CDNA3,
    CDNA4) or GCDs (1 on CDNA2) of the device, each with its own L2. ``package_devices``: devices per
    package (2 for MI250 / MI250X). ``datasheet``: AMD's printed figures (FLOP/s, B/s), dense, for
    ``datasheet_devices`` devices together (2 where AMD prints an MI250's figures for its package).
    """

    key: str
    name: str
    arch: str
    gfx: str
    cus: int
    peak_clock_hz: float
    hbm_bytes_per_s: float | None
    l2_bytes_per_xcd: int
    xcds: int
    source: str
    clock_source: str
    hbm_source: str
    mall_bytes: int | None = None
    package_devices: int = 1
    datasheet: Mapping[str, float] = field(default_factory=dict)
    datasheet_devices: int = 1
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "datasheet", MappingProxyType(dict(self.datasheet)))

    @property
    def architecture(self) -> AmdArch:
        return AMD_ARCHS[self.arch]

    @property
    def cus_per_xcd(self) -> int:
        return self.cus // self.xcds


_NO_VECTOR_16 = "no vector FP16/BF16 rate in the AMD documents read (their tables list matrix rates only)"
_NOT_IN = "not in the AMD documents read for {}"

AMD_ARCHS: Mapping[str, AmdArch] = MappingProxyType({
    a.key: a
    for a in (
        AmdArch(
            key="cdna1", name="CDNA (MI100)", gfx=("gfx908",),
            rates={"fp64": 64, "fp32": 128, "tensor_fp32": 256, "tensor_fp16": 1024, "tensor_bf16": 512,
                   "tensor_int8": 1024},
            rate_sources={"fp64": _MI100_PAGE, "fp32": _MI100_PAGE, "tensor_fp32": _MI100_PAGE,
                          "tensor_fp16": _MI100_PAGE, "tensor_bf16": _MI100_PAGE, "tensor_int8": _LAB_NOTES},
            lds_bytes_per_cu=64 * KiB, vl1d_bytes_per_cu=16 * KiB,
            lds_bytes_per_clk_per_cu=128, lds_source=_LDS,
            source=f"{_MI100_PAGE}; {_LAB_NOTES}; {_SPECS_TABLE}",
            absent={"fp16": _NO_VECTOR_16, "bf16": _NO_VECTOR_16},
            lacks=("tensor_fp64", "tensor_tf32", "tensor_fp8", "tensor_fp4"),
            notes=f"No FP64 matrix unit (AMD lab notes: MI100 FP64 matrix 'N/A'); no TF32 or FP8 GEMM ({_DATA_TYPES}).",
        ),
        AmdArch(
            key="cdna2", name="CDNA 2 (MI200)", gfx=("gfx90a",),
            rates={"fp64": 128, "fp32": 128, "fp32_packed": 256, "tensor_fp64": 256, "tensor_fp32": 256,
                   "tensor_fp16": 1024, "tensor_bf16": 1024, "tensor_int8": 1024},
            rate_sources={**dict.fromkeys(("fp64", "fp32", "fp32_packed", "tensor_fp64", "tensor_fp32",
                                           "tensor_fp16", "tensor_bf16", "tensor_int8"), _MI250_PAGE),
                          "tensor_int8": f"{_MI250_PAGE}; {_LAB_NOTES}"},
            lds_bytes_per_cu=64 * KiB, vl1d_bytes_per_cu=16 * KiB,
            lds_bytes_per_clk_per_cu=128, lds_source=_LDS,
            source=f"{_MI250_PAGE}; {_LAB_NOTES}; {_SPECS_TABLE}",
            absent={"fp16": _NO_VECTOR_16, "bf16": _NO_VECTOR_16},
            lacks=("tensor_tf32", "tensor_fp8", "tensor_fp4"),
            notes="AMD lists 'Vector FP32' 128 and 'Packed FP32' 256 FLOP/clk/CU apart: fp32 is the first, "
            "fp32_packed (a variant of fp32) the second, reached only with packed FP32 instructions "
            f"(v_pk_fma_f32). No TF32 or FP8 GEMM ({_DATA_TYPES}).",
        ),
        AmdArch(
            key="cdna3", name="CDNA 3 (MI300)", gfx=("gfx940", "gfx941", "gfx942"),
            rates={"fp64": 128, "fp32": 256, "tensor_fp64": 256, "tensor_fp32": 256, "tensor_tf32": 1024,
                   "tensor_fp16": 2048, "tensor_bf16": 2048, "tensor_fp8": 4096, "tensor_int8": 4096},
            rate_sources=dict.fromkeys(("fp64", "fp32", "tensor_fp64", "tensor_fp32", "tensor_tf32", "tensor_fp16",
                                        "tensor_bf16", "tensor_fp8", "tensor_int8"), _MI300_PAGE),
            lds_bytes_per_cu=64 * KiB, vl1d_bytes_per_cu=32 * KiB,
            lds_bytes_per_clk_per_cu=128, lds_source=_LDS,
            source=f"{_MI300_PAGE}; {_BLOG_MATRIX}; {_SPECS_TABLE}",
            absent={"fp16": _NO_VECTOR_16, "bf16": _NO_VECTOR_16},
            lacks=("tensor_fp4",),
            notes="fp32 is AMD's 'Vector FP32' 256 FLOP/clk/CU, twice its vector FP64 rate. On CDNA 2 that rate "
            "comes only from packed FP32 (AMD lists 'Packed FP32' 256 and 'Vector FP32' 128 apart); the MI300X "
            "table has no packed row, so this is most likely the packed rate too (an inference, not AMD's "
            "words): unpacked FP32 code would reach at most half of it. "
            "tensor_tf32 is the row AMD's table labels 'Vector TF32' (1024, 653.7 TFLOPS on MI300X): the XF32 "
            "MFMA instructions run on the matrix cores; there is no vector TF32.",
        ),
        AmdArch(
            key="cdna4", name="CDNA 4 (MI350)", gfx=("gfx950",),
            rates={"tensor_fp64": 128, "tensor_fp32": 256, "tensor_fp16": 4096, "tensor_bf16": 4096,
                   "tensor_fp8": 8192, "tensor_fp4": 16384},
            rate_sources=dict.fromkeys(("tensor_fp64", "tensor_fp32", "tensor_fp16", "tensor_bf16", "tensor_fp8",
                                        "tensor_fp4"), _BLOG_MATRIX),
            lds_bytes_per_cu=160 * KiB, vl1d_bytes_per_cu=32 * KiB,
            source=f"{_BLOG_MATRIX}; {_SPECS_TABLE}",
            lds_source="no LDS bandwidth per clock for CDNA 4 in the AMD documents read (its LDS grew to 160 KiB; "
            "the 128 B/clk of the ROCm Compute Profiler documentation predates CDNA 4): measure it",
            absent={"fp64": _NOT_IN.format("CDNA 4 vector FP64 (the blog gives matrix rates only)"),
                    "fp32": _NOT_IN.format("CDNA 4 vector FP32 (the blog gives matrix rates only)"),
                    "fp16": _NO_VECTOR_16, "bf16": _NO_VECTOR_16,
                    "tensor_int8": _NOT_IN.format("CDNA 4 INT8 matrix")},
            lacks=("tensor_tf32",),
            notes="Per-CU rates from the blog's MFMA cycle counts with 4 matrix cores per CU (1216 on the 304-CU "
            "MI325X): FP64 16x16x4 in 64 cycles = 32 FLOP/clk per core, FP32 32x32x2 in 64 = 64, FP16/BF16 "
            "32x32x16 in 32 = 1024, FP8 16x16x128 in 32 = 2048, FP4 16x16x128 in 16 = 4096 (x4 per CU); they "
            "reproduce the blog's MI355X peaks at 2.4 GHz. FP6 runs at the FP4 rate (10 PF on MI355X) and has "
            f"no compute key of its own; scaled MXFP8/6/4 MFMAs run at the same rates. No TF32 GEMM ({_DATA_TYPES}).",
        ),
    )
})

AMD_SPECS: Mapping[str, AmdSpec] = MappingProxyType({
    s.key: s
    for s in (
        AmdSpec(
            key="mi100", name="AMD Instinct MI100", arch="cdna1", gfx="gfx908", cus=120, peak_clock_hz=1502e6,
            hbm_bytes_per_s=1228.8e9, l2_bytes_per_xcd=8 * MiB, xcds=1,
            source=f"{_MI100_PAGE}; {_SPECS_TABLE}",
            clock_source=_device("MI100", "omniperf_vcopy_mi100_gfx908", "120 CUs, max_sclk 1502 MHz, hbm_bw 1228.8 GB/s")
            + "; the ROCm page rounds it to 1.5 GHz, at which its 184.6 TFLOPS FP16 would be 184.3",
            hbm_source=f"{_MI100_PAGE} (1.228 TB/s = 4096-bit HBM2 at 2.4 Gb/s = 1228.8 GB/s, the device record's hbm_bw)",
            datasheet={"fp64": 11.5 * T, "fp32": 23.1 * T, "tensor_fp32": 46.1 * T, "tensor_fp16": 184.6 * T,
                       "tensor_bf16": 92.3 * T, "dram": 1.228e12},
        ),
        AmdSpec(
            key="mi210", name="AMD Instinct MI210", arch="cdna2", gfx="gfx90a", cus=104, peak_clock_hz=1700e6,
            hbm_bytes_per_s=1638.4e9, l2_bytes_per_xcd=8 * MiB, xcds=1,
            source=f"{_SPECS_TABLE}; {_MI250_PAGE}; {_BLOG_MI210}",
            clock_source=f"{_MI250_PAGE} (the CDNA 2 GCD of 104 CUs); "
            + _device("104-CU MI200 (gfx90a)", "omniperf_vcopy_mi200_gfx90a", "104 CUs, max_sclk 1700 MHz, hbm_bw 1638.4 GB/s"),
            hbm_source=f"{_BLOG_MI210}; 1638.4 GB/s = 4096-bit HBM2e at 3.2 Gb/s, the device record's hbm_bw",
            datasheet={"fp64": 22.6 * T, "tensor_fp16": 181 * T, "dram": 1.6e12},
            notes="One CDNA 2 GCD of 104 CUs: the same CUs, clock, 8 MiB L2 and HBM as each GCD of an MI250, so "
            "the ceilings of an MI210 and of one MI250 GCD are the same (Omniperf names both 'MI200').",
        ),
        AmdSpec(
            key="mi250", name="AMD Instinct MI250 (one GCD)", arch="cdna2", gfx="gfx90a", cus=104, peak_clock_hz=1700e6,
            hbm_bytes_per_s=1638.4e9, l2_bytes_per_xcd=8 * MiB, xcds=1, package_devices=2,
            source=f"{_MI250_PAGE}; {_SPECS_TABLE}",
            clock_source=_MI250_PAGE,
            hbm_source=f"{_MI250_PAGE}: 1.6 TB/s per GCD, taken as 1638.4 GB/s (4096-bit HBM2e at 3.2 Gb/s, as the "
            "MI210's and the MI250X GCD's)",
            datasheet={"tensor_fp64": 90.5 * T, "fp64": 45.3 * T, "tensor_fp32": 90.5 * T, "fp32_packed": 90.5 * T,
                       "fp32": 45.3 * T, "tensor_fp16": 362.1 * T, "tensor_bf16": 362.1 * T,
                       "tensor_int8": 362.1 * T, "dram": 3.2e12},
            datasheet_devices=2,
            notes="Each of the MI250's two GCDs is its own device of 104 CUs; datasheet figures are for the "
            "whole package (2 GCDs).",
        ),
        AmdSpec(
            key="mi250x", name="AMD Instinct MI250X (one GCD)", arch="cdna2", gfx="gfx90a", cus=110,
            peak_clock_hz=1700e6, hbm_bytes_per_s=1638.4e9, l2_bytes_per_xcd=8 * MiB, xcds=1, package_devices=2,
            source=f"{_SPECS_TABLE}; {_LAB_NOTES}; {_LAB_NOTES_GCD}",
            clock_source=f"the CDNA 2 GCD's 1.7 GHz peak clock ({_MI250_PAGE}); {_LAB_NOTES_GCD}: 110 CUs x 128 "
            "FLOP/clk x 1.7 GHz = 23.9 TFLOP/s",
            hbm_source=_LAB_NOTES_GCD,
            datasheet={"fp64": 24 * T, "dram": 1638.4e9},
            notes="Each of the MI250X's two GCDs is its own device of 110 CUs; the datasheet figures are the lab "
            "notes' for one GCD.",
        ),
        AmdSpec(
            key="mi300a", name="AMD Instinct MI300A", arch="cdna3", gfx="gfx942", cus=228, peak_clock_hz=2100e6,
            hbm_bytes_per_s=5324.8e9, l2_bytes_per_xcd=4 * MiB, xcds=6, mall_bytes=256 * MiB,
            source=f"{_SPECS_TABLE}; {_MI300_PAGE}",
            clock_source=_device("MI300A", "omniperf_vcopy_mi300a_gfx942",
                                 "MI300A_A1, 228 CUs, 6 XCDs, SPX, max_sclk 2100 MHz, hbm_bw 5324.8 GB/s"),
            hbm_source=_device("MI300A", "omniperf_vcopy_mi300a_gfx942", "hbm_bw 5324.8 GB/s, as the MI300X's")
            + "; AMD's MI300A figure was not in the documents read",
            notes="AMD's MI300A peak figures were not in the documents read: its ceilings follow from the "
            "CDNA 3 rates of AMD's MI300X table, 228 CUs and the device record's clock.",
        ),
        AmdSpec(
            key="mi300x", name="AMD Instinct MI300X", arch="cdna3", gfx="gfx942", cus=304, peak_clock_hz=2100e6,
            hbm_bytes_per_s=5324.8e9, l2_bytes_per_xcd=4 * MiB, xcds=8, mall_bytes=256 * MiB,
            source=f"{_MI300_PAGE}; {_SPECS_TABLE}",
            clock_source=f"{_MI300X_CLOCK}; " + _device("MI300X", "omniperf_vcopy_mi300x_gfx942",
                                                         "MI300X_A1, 304 CUs, 8 XCDs, SPX, max_sclk 2100 MHz"),
            hbm_source=f"{_MI300_PAGE}: 5.3 TB/s, taken as the device record's 5324.8 GB/s (8192-bit HBM3 at "
            "5.2 Gb/s; tests/data/amd/omniperf_vcopy_mi300x_gfx942/sysinfo.csv)",
            datasheet={"tensor_fp64": 163.4 * T, "fp64": 81.7 * T, "tensor_fp32": 163.4 * T, "fp32": 163.4 * T,
                       "tensor_tf32": 653.7 * T, "tensor_fp16": 1307.4 * T, "tensor_bf16": 1307.4 * T,
                       "tensor_fp8": 2614.9 * T, "tensor_int8": 2614.9 * T, "dram": 5.3e12},
            notes="SPX: one device of 304 CUs (8 XCDs of 38); CPX: 8 devices of 38 CUs, one XCD and its 4 MiB L2 "
            "each (amd_machine(spec, cus=38)).",
        ),
        AmdSpec(
            key="mi325x", name="AMD Instinct MI325X", arch="cdna3", gfx="gfx942", cus=304, peak_clock_hz=2100e6,
            hbm_bytes_per_s=None, l2_bytes_per_xcd=4 * MiB, xcds=8, mall_bytes=256 * MiB,
            source=f"{_SPECS_TABLE}; {_BLOG_MATRIX}",
            clock_source=f"{_BLOG_MATRIX}: '2*32*32*8 * 1216 * (2100 / 32) / 10^6 = 1307.4 TFLOP/s'",
            hbm_source="no AMD document with the MI325X's HBM3E bandwidth was readable here (its product page is "
            "quoted elsewhere at 6 TB/s): give it with --machine, or measure it",
            datasheet={"tensor_fp64": 163.4 * T, "tensor_fp32": 163.4 * T, "tensor_fp16": 1307.4 * T,
                       "tensor_fp8": 2614.9 * T},
        ),
        AmdSpec(
            key="mi355x", name="AMD Instinct MI355X", arch="cdna4", gfx="gfx950", cus=256, peak_clock_hz=2400e6,
            hbm_bytes_per_s=None, l2_bytes_per_xcd=4 * MiB, xcds=8, mall_bytes=256 * MiB,
            source=f"{_SPECS_TABLE}; {_BLOG_MATRIX}",
            clock_source=f"DERIVED from {_BLOG_MATRIX}: its MI355X FP64 78.6 and FP32 157.3 TFLOPS matrix peaks "
            "= 256 CUs x 128 and x 256 FLOP/clk x 2.4 GHz (78.64, 157.29); the blog prints no clock",
            hbm_source="no AMD document with the MI355X's HBM3E bandwidth was readable here (its product page is "
            "quoted elsewhere at 8 TB/s): give it with --machine, or measure it",
            datasheet={"tensor_fp64": 78.6 * T, "tensor_fp32": 157.3 * T, "tensor_fp16": 2.5e15,
                       "tensor_fp8": 5e15, "tensor_fp4": 10e15},
            notes="The MI350X (same 256 CUs, lower clock) has no spec: its clock is not in the documents read.",
        ),
    )
})

#: Other names accepted by :func:`get_amd_spec` (after :func:`_normal`).
AMD_ALIASES = {"mi210x": "mi210", "mi355": "mi355x", "mi250x-gcd": "mi250x", "mi250-gcd": "mi250"}


def list_amd_specs() -> list[str]:
    """Names of the known AMD products, sorted."""
    return sorted(AMD_SPECS)


def _normal(name: str) -> str:
    """'AMD Instinct MI300X' / 'MI300X_A1' / 'mi300x' -> 'mi300x'; keeps what follows the model number."""
    n = " ".join(name.lower().replace("_", " ").split())
    n = re.sub(r"\b(amd|instinct|accelerator|oam|gpu)\b", " ", n)
    n = re.sub(r"\b(a0|a1|vf)\b", " ", n)  # silicon stepping, SR-IOV virtual function
    return "-".join(n.split())


def get_amd_spec(name: str) -> AmdSpec | None:
    """The AMD product named ``name`` exactly (a key such as 'mi300x' or an alias; case, 'AMD Instinct'
    and '_A1' ignored), or None: for ``--machine`` / ``--spec`` names. Device names go through
    :func:`amd_spec_for_device_name`."""
    key = _normal(name)
    key = AMD_ALIASES.get(key, key)
    return AMD_SPECS.get(key)


#: Columns of a kernel table's metrics that may hold the device's CU count (rocprof-compute's
#: ``sysinfo.csv`` field names, 2.x and 1.x), read by :func:`roofline.machine.resolve.named_spec`.
CU_COUNT_COLUMNS = ("cu_per_gpu", "numCU")

#: (pattern on the lower-cased name, spec key, or None: a product we recognise but have no spec for).
#: 'mi200' / 'mi300' / 'mi250x / mi250' (Omniperf's family names, amdgpu.ids' shared name) are told
#: apart by the CU count in :func:`amd_spec_for_device_name`.
_NAME_RULES: tuple[tuple[str, str | None], ...] = (
    (r"\bmi355x?\b", "mi355x"),
    (r"\bmi350x?\b", None),
    (r"\bmi325x\b", "mi325x"),
    (r"\bmi308x", None),
    (r"\bmi300x", "mi300x"),  # also 'MI300X_A1', 'mi300xhf'
    (r"\bmi300a\b", "mi300a"),
    (r"\bmi250x\b(?!\s*/)", "mi250x"),
    (r"\bmi250\b(?!\s*/)", "mi250"),
    (r"\bmi210\b", "mi210"),
    (r"\bmi100\b", "mi100"),
)
#: Family names told apart by CUs per device: {family pattern: {CUs: spec key}}.
_BY_CUS: tuple[tuple[str, Mapping[int, str]], ...] = (
    (r"\bmi250x\s*/\s*mi250\b", {110: "mi250x", 104: "mi250"}),
    (r"\bmi200\b", {104: "mi210", 110: "mi250x"}),
    (r"\bmi300\b", {304: "mi300x", 228: "mi300a"}),
)


def amd_spec_for_device_name(device_name: str, cus: int | None = None) -> AmdSpec | None:
    """The AMD product a profile or tool names ('AMD Instinct MI300X', 'MI300X_A1', 'MI210', Omniperf's
    'MI200' and 'MI300A_A1'), or None when it is not one we have a spec for or cannot tell.

    ``cus``: the device's CU count, when known, tells Omniperf's family names apart ('MI200' with 104 CUs
    is an MI210, or one GCD of an MI250: the same ceilings; with 110, one GCD of an MI250X) and must not
    exceed the product's (a partition has fewer: scale with ``amd_machine(spec, cus)``).
    """
    n = " ".join(device_name.lower().replace("_", " ").split())
    key: str | None = None
    for pattern, by_cus in _BY_CUS:
        if re.search(pattern, n):
            key = by_cus.get(cus) if cus is not None else None
            return AMD_SPECS[key] if key is not None else None
    for pattern, rule in _NAME_RULES:
        if re.search(pattern, n):
            key = rule
            break
    if key is None:
        return None
    spec = AMD_SPECS[key]
    if cus is not None and not 0 < cus <= spec.cus:
        return None
    return spec


def amd_arch_for(gfx: str) -> AmdArch:
    """The architecture row of a gfx target ('gfx942', 'gfx90a:sramecc+:xnack-'), or MachineError."""
    target = gfx.strip().lower().split(":")[0]
    for arch in AMD_ARCHS.values():
        if target in arch.gfx:
            return arch
    raise MachineError(
        f"no theoretical rates for AMD target {gfx!r}",
        hint="known: " + ", ".join(f"{a.name} ({'/'.join(a.gfx)})" for a in AMD_ARCHS.values()),
    )


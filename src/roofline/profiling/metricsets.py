"""The Nsight Compute metrics ``roofline profile`` collects, per GPU architecture.

One set per compute capability holds everything a hierarchical roofline and its
guidance need, collected in ONE ncu run:

- time: ``gpu__time_duration.sum``, ``sm__cycles_elapsed.avg`` and the clock;
- FLOPs per precision: ``sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum``;
- tensor cores: ``sm__inst_executed_pipe_tensor.sum`` everywhere, and from SM 8.0 on the
  ``sm__ops_path_tensor_*`` operation counters (one per input type), which count math
  operations directly (no per-instruction factor, which is 512 only on Volta); on
  Hopper also the per-instruction ``op_hgmma`` (warpgroup MMA) and ``op_hmma`` paths;
- bytes at L1/TEX, L2 and DRAM;
- peaks (``*.peak_sustained`` per cycle, ``*__cycles_elapsed.avg.per_second``) for
  ceilings taken from the profile itself;
- Speed-of-Light and memory-workload metrics for guidance (throughput percentages,
  waves, global load/store sectors and requests, L1 and L2 hit rates, launch shape).

Where the names come from: NVIDIA's Nsight Compute section files (``SpeedOfLight_*``
roofline charts), its metrics guide and ``ncu --query-metrics`` listings posted by
NVIDIA staff; the V100 and A100 fixtures in ``tests/data/ncu`` show the SM 7.0/8.0
instruction counters in use. Which chip has which tensor path follows the
architecture (FP64 tensor cores only on GA100/GH100/GB100, FP8 from SM 8.9, warpgroup
MMA only on SM 9.0, FP4/FP6 from SM 10.0). ``tests/profiling/test_metricsets.py``
checks every set against ``ncu --query-metrics --chip`` where ncu is installed; the
entries marked in :data:`UNVERIFIED` have not been checked that way yet.

This table is the metric list; the formulas that turn metrics into FLOPs and bytes
live with the readers (``roofline.counting``), whose required metrics are included.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.errors import InputError

_FP = [f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum" for p in "dfh" for op in ("add", "mul", "fma")]

TIME = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"]
BYTES = ["l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
PEAKS = [
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
    "sm__inst_executed_pipe_tensor.sum.peak_sustained",
    "l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second",
    "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second",
]
def _guidance_metrics() -> list[str]:
    """The metrics the guidance rules read (roofline.guidance.metrics.ALL_METRICS, the one list),
    less the Source Counters ones, which need ``--section SourceCounters`` rather than ``--metrics``;
    plus the launch attributes the report shows."""
    from roofline.guidance.metrics import ALL_METRICS

    rules = [m for m in ALL_METRICS if "__" in m and not m.startswith(("derived__", "memory_"))]
    return [*rules, "launch__grid_size", "launch__block_size", "launch__registers_per_thread"]


GUIDANCE = _guidance_metrics()

#: Tensor operation counters (math ops, not instructions) from SM 8.0 on.
_OPS_AMPERE = [
    "sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_int8.sum", "sm__ops_path_tensor_src_int4.sum", "sm__ops_path_tensor_src_int1.sum",
]
_OPS_FP64 = ["sm__ops_path_tensor_src_fp64.sum"]
_OPS_FP8 = ["sm__ops_path_tensor_src_fp8.sum"]
_OPS_HOPPER = [
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum",
]
_OPS_BLACKWELL = [
    "sm__ops_path_tensor_src_fp8_dst_fp16.sum", "sm__ops_path_tensor_src_fp8_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp4_dst_fp32.sum",
]
_OPS_PEAK = ["sm__ops_path_tensor_src_fp16_dst_fp32.sum.peak_sustained"]


@dataclass(frozen=True)
class Architecture:
    """One GPU architecture: its compute capability, ncu chip name and extra tensor metrics."""

    compute_capability: str
    chip: str
    name: str
    tensor: tuple[str, ...]


ARCHITECTURES: dict[str, Architecture] = {a.compute_capability: a for a in (
    Architecture("7.0", "gv100", "Volta", ()),
    Architecture("7.5", "tu102", "Turing", ()),
    Architecture("8.0", "ga100", "Ampere (A100)", (*_OPS_AMPERE, *_OPS_FP64, *_OPS_PEAK)),
    Architecture("8.6", "ga102", "Ampere (GA10x)", (*_OPS_AMPERE, *_OPS_PEAK)),
    Architecture("8.9", "ad102", "Ada Lovelace", (*_OPS_AMPERE, *_OPS_FP8, *_OPS_PEAK)),
    Architecture("9.0", "gh100", "Hopper", (*_OPS_AMPERE, *_OPS_FP64, *_OPS_FP8, *_OPS_HOPPER, *_OPS_PEAK)),
    Architecture("10.0", "gb100", "Blackwell (B100/B200)", (*_OPS_AMPERE, *_OPS_FP64, *_OPS_BLACKWELL, *_OPS_PEAK)),
    Architecture("12.0", "gb202", "Blackwell (GeForce RTX 50)", (*_OPS_AMPERE, *_OPS_BLACKWELL, *_OPS_PEAK)),
)}

#: Names not yet checked with ``ncu --query-metrics --chip`` for these architectures.
UNVERIFIED: dict[str, tuple[str, ...]] = {
    "10.0": tuple(_OPS_BLACKWELL),
    "12.0": tuple(_OPS_BLACKWELL),
    "8.9": tuple(_OPS_FP8),
    "9.0": tuple(_OPS_FP8),
}


def normalize_cc(compute_capability: str | float | tuple[int, int]) -> str:
    """'9.0' from 9, 9.0, '9.0', '90', 'sm_90' or (9, 0)."""
    if isinstance(compute_capability, tuple):
        return f"{compute_capability[0]}.{compute_capability[1]}"
    text = str(compute_capability).strip().lower().removeprefix("sm_").removeprefix("sm")
    if "." not in text and text.isdigit() and len(text) >= 2:
        text = f"{text[:-1]}.{text[-1]}"
    try:
        major, _, minor = text.partition(".")
        return f"{int(major)}.{int(minor or 0)}"
    except ValueError:
        raise InputError(f"not a compute capability: {compute_capability!r}", hint="write it like 9.0 or sm_90") from None


def architecture(compute_capability: str | float | tuple[int, int]) -> Architecture:
    """The known architecture for a compute capability; a minor version we lack maps to the
    nearest lower one of the same major version (e.g. 8.7 -> 8.6)."""
    cc = normalize_cc(compute_capability)
    if cc in ARCHITECTURES:
        return ARCHITECTURES[cc]
    major, minor = (int(x) for x in cc.split("."))
    same = sorted((a for a in ARCHITECTURES.values() if int(a.compute_capability.split(".")[0]) == major
                   and int(a.compute_capability.split(".")[1]) <= minor),
                  key=lambda a: int(a.compute_capability.split(".")[1]))
    if same:
        return same[-1]
    known = ", ".join(ARCHITECTURES)
    raise InputError(f"no metric set for compute capability {cc} (known: {known})",
                     hint="pass --arch with the nearest known architecture, or --metrics to name the metrics")


def _required(cc: str) -> list[str]:
    from roofline.counting import required_metrics

    try:
        return list(required_metrics(cc))
    except InputError:  # an architecture the formula table does not cover yet (it says so when reading)
        return []


def metric_set(compute_capability: str | float | tuple[int, int]) -> list[str]:
    """Every metric ``roofline profile`` collects on this architecture, without duplicates, in a stable order."""
    arch = architecture(compute_capability)
    names = [*TIME, *_FP, "sm__inst_executed_pipe_tensor.sum", *arch.tensor, *BYTES, *PEAKS, *GUIDANCE,
             *_required(arch.compute_capability)]
    return list(dict.fromkeys(names))

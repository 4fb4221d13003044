"""The Nsight Compute metrics ``roofline profile`` collects, per GPU architecture.

One set per compute capability holds everything a hierarchical roofline and its
guidance need, collected in ONE ncu run, derived from the tables that use them:

- time, FLOPs per precision, tensor operations and bytes per level: what the formula
  table counts (:func:`roofline.counting.required_metrics`), e.g. the Hopper FP16 tensor
  total ``sm__ops_path_tensor_src_fp16`` (gh100 has no destination split); and, from the same
  table, the work beyond FLOPs: integer, conversion and SFU thread instructions, INT8/INT4 tensor
  operations, warp instructions, global/local/shared load-store instructions, L1 sectors, shared
  wavefronts, L2 and DRAM sectors (the instruction roofline) and shared-memory wavefronts;
- peaks (``*.peak_sustained`` per cycle, ``*__cycles_elapsed.avg.per_second``) for the
  ceilings taken from the profile itself, dense (sparsity-off) tensor peaks included, and the
  warp-instruction, shared-wavefront, integer, conversion and XU peaks, with the SM count
  (:func:`roofline.readers.ncu.peaks.peak_metrics`);
- Speed-of-Light and memory-workload metrics for guidance (throughput percentages,
  waves, global load/store sectors and requests, L1 and L2 hit rates, launch shape),
  from the rules' own list (:data:`roofline.counting.raw_metrics.ALL_METRICS`).

``tests/profiling/test_metricsets.py`` checks every name of every set against the real
``ncu --query-metrics --chip`` of Nsight Compute 2024.1.1 for the chips in
:data:`CHECKED_CHIPS`, by exact name (suffixes included).
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.errors import InputError


def _guidance_metrics() -> list[str]:
    """The metrics the guidance rules read (roofline.counting.raw_metrics.ALL_METRICS, the one list),
    less the Source Counters ones, which need ``--section SourceCounters`` rather than ``--metrics``;
    plus the launch attributes the report shows."""
    from roofline.counting.raw_metrics import ALL_METRICS

    rules = [m for m in ALL_METRICS if "__" in m and not m.startswith(("derived__", "memory_"))]
    return [*rules, "launch__grid_size", "launch__block_size", "launch__registers_per_thread"]


GUIDANCE = _guidance_metrics()
#: Identity of the GPU, for naming the machine the profile's ceilings describe, and its SM count
#: (the warp-instruction and shared-memory ceilings where a peak metric is missing).
DEVICE = ["device__attribute_display_name", "device__attribute_multiprocessor_count"]


@dataclass(frozen=True)
class Architecture:
    """One GPU architecture: its compute capability and Nsight Compute's chip name."""

    compute_capability: str
    chip: str
    name: str


ARCHITECTURES: dict[str, Architecture] = {a.compute_capability: a for a in (
    Architecture("7.0", "gv100", "Volta"),
    Architecture("7.5", "tu102", "Turing"),
    Architecture("8.0", "ga100", "Ampere (A100)"),
    Architecture("8.6", "ga102", "Ampere (GA10x)"),
    Architecture("8.9", "ad102", "Ada Lovelace"),
    Architecture("9.0", "gh100", "Hopper"),
    Architecture("10.0", "gb100", "Blackwell (B100/B200)"),
    # Jetson Thor: SM 10.1 until CUDA 13 renamed it 11.0 (10.1 takes 10.0's set). Its chip name is
    # Nsight Compute's "GB10b" (its GPU support list), the Tegra "b" as in GA10b (Orin).
    Architecture("11.0", "gb10b", "Blackwell (Jetson Thor)"),
    Architecture("12.0", "gb202", "Blackwell (GeForce RTX 50)"),
)}

#: Chips whose metric names the tests check against ``ncu --query-metrics --chip`` (Nsight Compute
#: 2024.1.1, which CI installs). It knows no Blackwell chip: the SM 10.0, 11.0 and 12.0 sets repeat the
#: Hopper names; SM 10.0 adds the packed FP32 counters (FADD2, FMUL2, FFMA2) that Nsight Compute 2025's
#: FP32 roofline reads on it, and SM 10.0 and 11.0 the tcgen05 pipe's ``sm__inst_executed_pipe_tc.sum``,
#: unchecked.
#: ``roofline profile`` keeps only what the GPU's own catalog lists (``ncu --query-metrics``), and drops
#: any name ncu still refuses; both are said.
CHECKED_CHIPS = ("gv100", "tu102", "ga100", "ga102", "ad102", "gh100")


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


def metric_set(compute_capability: str | float | tuple[int, int]) -> list[str]:
    """Every metric ``roofline profile`` collects on this architecture, without duplicates, in a stable order:
    what the formula table counts (:func:`roofline.counting.required_metrics`), the peaks the
    profile's own ceilings read (:func:`roofline.readers.ncu.peaks.peak_metrics`), the guidance
    rules' metrics and the GPU's name."""
    from roofline.readers.ncu.peaks import peak_metrics
    from roofline.counting import required_metrics

    cc = architecture(compute_capability).compute_capability
    names = [*required_metrics(cc), *peak_metrics(cc), *GUIDANCE, *DEVICE]
    return list(dict.fromkeys(names))

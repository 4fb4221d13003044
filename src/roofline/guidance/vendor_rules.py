"""Guidance on an AMD profile: the rules that apply there, and the limiters in AMD's words.

A rule reads either the roofline's own columns (time, bound, bandwidth use, intensities, the FLOPs per
precision: any vendor's) or Nsight Compute's metrics and NVIDIA's hardware (Speed of Light, 32-byte
sectors per request, local memory, source counters, hit rates, the warp-instruction roofline's walls,
shared-memory bank conflicts). On an AMD profile only the first kind runs (:data:`VENDOR_NEUTRAL`), its
findings and limiters in AMD's words (vL1D, LDS, HBM; matrix cores; wavefronts; HIP graphs); the others
are named once, in one note (:func:`nvidia_only_note`), not per kernel. :func:`rules_for` and
:func:`limiters_for` are the one gate: :func:`roofline.guidance.diagnose.diagnose` asks them by the
analysis's vendor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from roofline.guidance.rule_types import Limiter, Rule
from roofline.guidance.rules import LIMITERS, RULES
from roofline.kernels.vendor import AMD

#: The rules that read the roofline's own columns only, so hold on any vendor's profile.
VENDOR_NEUTRAL = ("roofline", "bandwidth", "locality", "fp64", "tensor-cores", "short-kernel")

#: Titles and sources of those rules in AMD's words, where NVIDIA's differ.
AMD_TITLES = MappingProxyType({"tensor-cores": "Matrix cores (MFMA)"})
AMD_SOURCES = MappingProxyType({
    "short-kernel": "HIP documentation, HIP graphs (launch overhead)",
    "bandwidth": "effective bandwidth: bytes read and written over the kernel's time, against the level's ceiling "
                 "(the arithmetic of the CUDA C++ Best Practices Guide's Effective Bandwidth Calculation, which "
                 "holds on any GPU)",
})

#: What the limiters the neutral rules name say on AMD, where NVIDIA's words do not fit (CUDA Graphs,
#: warps, tensor cores, shared memory). FP64: on CDNA3 (MI300) FP32 vector math runs at twice the FP64
#: rate; on CDNA2 (MI200) the scalar vector rates are equal and only packed FP32 (v_pk_fma_f32) doubles it
#: (AMD Instinct MI250X and MI300X data sheets: vector FP64 47.9 and 81.7 TFLOP/s, FP32 47.9 and 163.4).
AMD_LIMITERS: Mapping[str, Limiter] = MappingProxyType({
    "short-kernel": Limiter("launch overhead", "launches so short that launch overhead and ramp-up dominate",
                            "fuse small kernels or capture them in a HIP graph"),
    "latency": Limiter("latency", "latency: neither compute nor memory is busy, wavefronts wait",
                       "put more work in flight: more independent instructions per thread, higher occupancy "
                       "(fewer VGPRs or LDS per workgroup), fewer dependent loads"),
    "memory": Limiter("memory bandwidth", "memory bandwidth",
                      "raise arithmetic intensity: reuse data from cache or LDS (tiling), fuse kernels that pass "
                      "data through memory, use smaller data types"),
    "fp64": Limiter("FP64 throughput", "FP64 arithmetic, which on MI300 (CDNA3) runs at half the FP32 vector rate",
                    "move FP64 to FP32 (or mixed precision) where the science allows: on MI300 FP32 vector math runs "
                    "twice as fast; on MI200 (CDNA2) only packed FP32 (float2, v_pk_fma_f32) does"),
    "tensor-cores": Limiter("no matrix cores", "FP16/FP32 arithmetic on the vector ALUs, far below the matrix-core "
                            "(MFMA) peak",
                            "use the matrix cores (rocBLAS/hipBLASLt with FP16/BF16/XF32, or MFMA intrinsics and "
                            "rocWMMA in your own kernels)"),
    "compute": Limiter("compute throughput", "compute throughput near the peak of the units it uses",
                       "do less arithmetic (better algorithm, avoid recomputation) or use faster units (matrix cores, "
                       "lower precision)"),
    "inconsistent": Limiter("inconsistent counters", "figures beyond physical limits (achieved above a ceiling or "
                            "the spec): the counters or the ceilings they are divided by, not the kernel",
                            "read why (--explain): a ceiling below what the GPU delivers (measure again, or "
                            "--machine SPEC), the clock, or a counter that was not collected"),
    "poor-use": Limiter("low utilization", "neither compute nor memory bandwidth is used well (below half of both "
                        "ceilings)",
                        "put more work in flight and check that neighbouring threads touch neighbouring addresses; "
                        "profile occupancy and wavefront stalls (rocprof-compute) to see why wavefronts wait"),
})


def _in_amd_words(rule: Rule) -> Rule:
    return replace(rule, title=AMD_TITLES.get(rule.id, rule.title), source=AMD_SOURCES.get(rule.id, rule.source))


#: The rules an AMD profile runs, in AMD's words.
AMD_RULES: tuple[Rule, ...] = tuple(_in_amd_words(r) for r in RULES if r.id in VENDOR_NEUTRAL)


def rules_for(vendor: str | None, rules: Sequence[Rule] | None = None) -> tuple[Rule, ...]:
    """The rules to run on a profile of ``vendor``: ``rules`` (by default every rule, :data:`RULES`) on
    NVIDIA's or an unknown vendor's; on AMD's the vendor-neutral ones of them, in AMD's words."""
    if vendor != AMD:
        return tuple(RULES if rules is None else rules)
    if rules is None:
        return AMD_RULES
    return tuple(_in_amd_words(r) for r in rules if r.id in VENDOR_NEUTRAL)


def nvidia_only(rules: Sequence[Rule] | None = None) -> tuple[Rule, ...]:
    """Of ``rules`` (every rule by default), those that need NVIDIA's counters."""
    return tuple(r for r in (RULES if rules is None else rules) if r.id not in VENDOR_NEUTRAL)


def nvidia_only_note(rules: Sequence[Rule] | None = None) -> str:
    """The one note an AMD diagnosis carries: which diagnoses need NVIDIA counters, not run ('' when none)."""
    left = nvidia_only(rules)
    if not left:
        return ""
    return (f"an AMD profile: {len(left)} diagnoses need Nsight Compute counters of NVIDIA GPUs and were not run "
            f"({', '.join(r.title for r in left)}); the roofline's own (bound, distance to the roofline, "
            "bandwidth per level, cache locality, FP64 and matrix-core use, short launches) ran")


#: Every limiter in AMD's words where they differ from NVIDIA's.
AMD_ALL_LIMITERS: Mapping[str, Limiter] = MappingProxyType({**LIMITERS, **AMD_LIMITERS})


def limiters_for(vendor: str | None) -> Mapping[str, Limiter]:
    """The limiters' words on a profile of ``vendor``: NVIDIA's (:data:`LIMITERS`), AMD's where they differ."""
    return AMD_ALL_LIMITERS if vendor == AMD else LIMITERS


def missing_message(missing: Sequence[str], hints: Mapping[str, str]) -> str:
    """'Not evaluated: ...' on an AMD profile: the columns the rule needs, and the counters that supply them
    where the table's reader names them (``hints``: :attr:`~roofline.analysis.Analysis.metric_hints`)."""
    named = [f"{name} (collect {hints[name]})" if name in hints else name for name in missing]
    return "Not evaluated: needs " + ", ".join(named) + " in the analysis."

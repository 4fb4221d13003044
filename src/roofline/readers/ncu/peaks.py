"""Machine ceilings from the peak metrics an Nsight Compute profile carries itself.

Nsight Compute's roofline sections (SpeedOfLight_Hierarchical{Double,Single,Half,Tensor}
RooflineChart.section) draw each ceiling as ``<per-cycle peak> x <unit clock>``; so do we:

=============  =======================================================================================
ceiling        formula (ncu metrics; the first alternative present wins)
=============  =======================================================================================
fp64, fp32     2 x sm__sass_thread_inst_executed_op_{dfma,ffma}_pred_on.sum.peak_sustained
               (or the sections' derived__sm__..._x2) x sm__cycles_elapsed.avg.per_second
fp16           c x sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained x SM clock, with c
               the FP16 convention's FLOPs per HFMA (4 under ``fp16="ncu"``, 2 under ``"paper"``), so
               that achieved and peak FP16 are counted alike (Nsight Compute 2024.1's Half section
               uses x2 for both, 2025+ x4 for both: ``derived__sm__..._hfma_pred_on_x4``)
tensor_<t>     DENSE peaks only: sm__ops_path_tensor_op_hgmma_src_<t>..._sparsity_off (Hopper),
               sm__ops_path_tensor_src_<t>..._sparsity_off (Ampere, Ada), the tcgen05 kinds'
               op_utc{h,q,o,i}mma_..._sparsity_off and the Blackwell datapaths (SM 10.x, 12.x:
               tensor_fp8 is the 8-bit datapath, tensor_fp4 the FP4 one), .sum.peak_sustained x SM
               clock, the largest of those present. The per-type totals' peaks count 2:4-sparse
               work (on an H200, src_bf16_dst_fp32's peak is 2x op_hgmma_..._sparsity_off's), so they
               are used only on SM 7.x, which has no sparsity; SM 7.0/7.2 also 512 x
               sm__inst_executed_pipe_tensor.sum.peak_sustained (the Tensor section's x512)
dram           dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second
l2             lts__t_bytes.sum.peak_sustained (or 32 x lts__t_sectors.sum.peak_sustained) x
               lts__cycles_elapsed.avg.per_second (the sections' alternatives: 32 x
               lts__lts2xbar_cycles_active.sum.peak_sustained, or
               l1tex__m_xbar2l1tex_read_bytes.sum.peak_sustained, x the same clock)
l1             l1tex__t_bytes.sum.peak_sustained x l1tex__cycles_elapsed.avg.per_second (alternatives:
               128 x l1tex__lsu_writeback_active_mem_lgds (SM >= 9.0) / _mem_lg (SM 7.5-8.9) /
               l1tex__lsu_writeback_active (SM <= 7.2) .sum.peak_sustained x the same clock)
shared         128 B (a wavefront: 32 banks x 4 B) x l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
               .peak_sustained x l1tex clock; else the peak Nsight Compute's own "% of peak" implies
               (below); else 128 B x 1 wavefront per SM per cycle x SMs x l1tex clock
warp_inst      sm__inst_executed.sum.peak_sustained (warp instructions per cycle) x SM clock; else
               the peak its "% of peak" implies; else 4 x SMs x SM clock (four schedulers per SM,
               each issuing one warp instruction per cycle: Ding and Williams, PMBS 2019)
int32          sm__sass_thread_inst_executed_op_integer_pred_on.sum.peak_sustained x SM clock (OP/s)
conversion     sm__sass_thread_inst_executed_op_conversion_pred_on.sum.peak_sustained x SM clock
sfu            sm__thread_inst_executed_pipe_xu_pred_on.sum.peak_sustained x SM clock
=============  =======================================================================================

``--set full`` holds no peak for shared wavefronts or warp instructions, but their "% of peak"
(``l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed``,
``sm__inst_executed.sum.pct_of_peak_sustained_elapsed``) = achieved per cycle / peak per cycle:
the peak is the achieved count / elapsed cycles of its unit / (% / 100), median over launches at
1 % or more (a CSV prints two decimals: 0.5 % error at most). In the H100 PCIe, GH200, T4 and
GTX 1660 SUPER reports of tests/data this gives 1.000 wavefront and 4.000 warp instructions per
SM per cycle (H100: 524,288 / 1.468485 % / 313,181 l1tex cycles = 114.0 = its SMs), the constants
of the last alternatives; those (from the SM count, ``device__attribute_multiprocessor_count``,
else ``launch__sm_count``) are taken only beside other ceilings from the profile's peaks.

Where a memory peak is there only per instance (``--set full`` writes
``lts__t_sectors.avg.peak_sustained``, per L2 slice), it is multiplied by the instance count,
``<unit>__cycles_elapsed.sum / .avg``; where a unit's clock is missing, it is its
``cycles_elapsed.avg / gpu__time_duration.sum``.

Peaks are per-chip constants; clocks vary by launch, so the median over launches is
used and recorded as ``sm_clock_hz``. Use :meth:`Machine.scaled_to_clock` to move the
ceilings to the clock a kernel ran at. The machine is named after the GPU the profile
names (``device__attribute_display_name``); where we have that GPU's spec
(:mod:`roofline.machine.specs`), ceilings the profile lacks are filled from it and
marked theoretical in ``metadata['ceiling_sources']``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.counting import Counter, Reader, arch_family
from roofline.counting.flops import launch_time
from roofline.counting.forms import BLACKWELL, one, smsp
from roofline.machine.specs import spec_for_device_name
from roofline.machine.model import Machine, combine
from roofline.machine.theoretical import theoretical_from_spec

SM_CLOCK = ("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
            "gpc__cycles_elapsed.avg.per_second")
DEVICE_NAME = "device__attribute_display_name"
_PEAK = ".sum.peak_sustained"
_OPS = "sm__ops_path_tensor_src_"
_KIND = "sm__ops_path_tensor_op_"
_SASS = "sm__sass_thread_inst_executed_op_"
_DERIVED = "derived__sm__sass_thread_inst_executed_op_"

#: FLOPs per HFMA thread instruction under each FP16 convention (see roofline.counting).
HFMA_FLOPS = {"ncu": 4.0, "paper": 2.0}


def scalar_peaks(op: str) -> tuple[tuple[float, str], ...]:
    return ((2.0, f"{_SASS}{op}_pred_on{_PEAK}"), (1.0, f"{_DERIVED}{op}_pred_on_x2"))


def fp16_peaks(convention: str) -> tuple[tuple[float, str], ...]:
    c = HFMA_FLOPS[convention]
    return ((c, f"{_SASS}hfma_pred_on{_PEAK}"), (c / 4, f"{_DERIVED}hfma_pred_on_x4"), (c / 2, f"{_DERIVED}hfma_pred_on_x2"))


#: tensor key -> dense per-cycle peak metrics (ops per cycle; the largest present is the ceiling).
DENSE_TENSOR_PEAKS: dict[str, tuple[str, ...]] = {
    "tensor_fp16": (f"{_KIND}hgmma_src_fp16_sparsity_off{_PEAK}", f"{_KIND}hmma_src_fp16_dst_fp32_sparsity_off{_PEAK}",
                    f"{_OPS}fp16_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}fp16_dst_fp16_sparsity_off{_PEAK}"),
    "tensor_bf16": (f"{_KIND}hgmma_src_bf16_dst_fp32_sparsity_off{_PEAK}", f"{_KIND}hmma_src_bf16_dst_fp32_sparsity_off{_PEAK}",
                    f"{_OPS}bf16_dst_fp32_sparsity_off{_PEAK}"),
    "tensor_tf32": (f"{_KIND}hgmma_src_tf32_dst_fp32_sparsity_off{_PEAK}", f"{_KIND}hmma_src_tf32_dst_fp32_sparsity_off{_PEAK}",
                    f"{_OPS}tf32_dst_fp32_sparsity_off{_PEAK}"),
    "tensor_fp64": (f"{_OPS}fp64{_PEAK}",),  # no sparse FP64 MMA
    "tensor_fp8": (f"{_KIND}qgmma_src_fp8_sparsity_off{_PEAK}", f"{_OPS}fp8_sparsity_off{_PEAK}"),
    "tensor_int8": (f"{_KIND}igmma_src_int8_sparsity_off{_PEAK}", f"{_KIND}imma_src_int8_sparsity_off{_PEAK}",
                    f"{_OPS}int8_sparsity_off{_PEAK}"),
}
#: Blackwell (SM 10.x, 12.x), dense: the tcgen05 kinds of SM 10.x (utchmma, utcqmma, utcomma, utcimma)
#: and the datapath totals (roofline.counting.tensor); the Hopper kinds' names are not there.
BLACKWELL_TENSOR_PEAKS: dict[str, tuple[str, ...]] = {
    "tensor_fp16": (f"{_KIND}utchmma_src_fp16_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}fp16_dst_fp32_sparsity_off{_PEAK}",
                    f"{_OPS}fp16_dst_fp16_sparsity_off{_PEAK}"),
    "tensor_bf16": (f"{_KIND}utchmma_src_bf16_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}bf16_dst_fp32_sparsity_off{_PEAK}"),
    "tensor_tf32": (f"{_KIND}utchmma_src_tf32_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}tf32_dst_fp32_sparsity_off{_PEAK}"),
    "tensor_fp8": (f"{_KIND}utcqmma_src_fp4_fp6_fp8_dst_fp32_sparsity_off{_PEAK}", f"{_KIND}utcqmma_src_fp8_dst_fp32_sparsity_off{_PEAK}",
                   f"{_OPS}fp4_fp6_fp8_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}fp8_dst_fp16_sparsity_off{_PEAK}"),
    "tensor_fp4": (f"{_KIND}utcomma_src_fp4_dst_fp32_sparsity_off{_PEAK}", f"{_OPS}fp4_dst_fp32_sparsity_off{_PEAK}"),
    "tensor_int8": (f"{_KIND}utcimma_src_int8_sparsity_off{_PEAK}", f"{_OPS}int8_sparsity_off{_PEAK}"),
}
#: SM 7.x (no sparsity): the per-type totals' peaks are dense.
VOLTA_TURING_TENSOR_PEAKS: dict[str, tuple[str, ...]] = {
    "tensor_fp16": (f"{_OPS}fp16_dst_fp32{_PEAK}", f"{_OPS}fp16_dst_fp16{_PEAK}", f"{_OPS}fp16_bf16_tf32_dst_fp32{_PEAK}"),
    "tensor_int8": (f"{_OPS}int8{_PEAK}",),
}
TENSOR_V100 = "sm__inst_executed_pipe_tensor" + _PEAK

#: memory level -> (alternatives of (bytes per unit, per-cycle peak metric)), clock metric.
MEMORY_PEAKS: dict[str, tuple[tuple[tuple[float, str], ...], str]] = {
    "dram": (((1.0, "dram__bytes" + _PEAK),), "dram__cycles_elapsed.avg.per_second"),
    "l2": (((1.0, "lts__t_bytes" + _PEAK), (32.0, "lts__t_sectors" + _PEAK), (32.0, "lts__lts2xbar_cycles_active" + _PEAK),
            (1.0, "l1tex__m_xbar2l1tex_read_bytes" + _PEAK)), "lts__cycles_elapsed.avg.per_second"),
    "l1": (((1.0, "l1tex__t_bytes" + _PEAK), (128.0, "l1tex__lsu_writeback_active_mem_lgds" + _PEAK),
            (128.0, "l1tex__lsu_writeback_active_mem_lg" + _PEAK), (128.0, "l1tex__lsu_writeback_active" + _PEAK)),
           "l1tex__cycles_elapsed.avg.per_second"),
}


#: The L1 peak that is the tag stage's rate, not the load path's (:func:`machine_from_profile`).
L1_TAG_STAGE = "l1tex__t_bytes" + _PEAK

#: compute key -> per-cycle peak metrics (thread instructions = OPs per cycle), x SM clock.
OP_PEAKS: dict[str, tuple[str, ...]] = {
    "int32": (f"{_SASS}integer_pred_on{_PEAK}",),
    "conversion": (f"{_SASS}conversion_pred_on{_PEAK}",),
    "sfu": ("sm__thread_inst_executed_pipe_xu_pred_on" + _PEAK, "smsp__thread_inst_executed_pipe_xu_pred_on" + _PEAK),
}


@dataclass(frozen=True)
class IssuePeak:
    """A ceiling of units per cycle x a clock: its peak metrics, the achieved count and the "% of peak"
    that imply the peak where no peak metric was collected, and the architectural rate per SM."""

    peaks: tuple[str, ...]
    achieved: Counter
    unit: str  # whose elapsed cycles the % of peak refers to
    pct: tuple[str, ...]
    per_sm: float
    bytes_per_unit: float  # 128 B per shared wavefront; 1 for warp instructions
    clock: str


ISSUE_PEAKS: dict[str, IssuePeak] = {
    "warp_inst": IssuePeak(("sm__inst_executed" + _PEAK, "smsp__inst_executed" + _PEAK), smsp("inst_executed.sum"),
                           "sm", tuple(f"{u}__inst_executed.{s}.pct_of_peak_sustained_elapsed"
                                       for u in ("sm", "smsp") for s in ("sum", "avg")), 4.0, 1.0, SM_CLOCK[0]),
    "shared": IssuePeak(("l1tex__data_pipe_lsu_wavefronts_mem_shared" + _PEAK,),
                        one("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"), "l1tex",
                        tuple(f"l1tex__data_pipe_lsu_wavefronts_mem_shared.{s}.pct_of_peak_sustained_elapsed"
                              for s in ("sum", "avg")), 1.0,
                        128.0, "l1tex__cycles_elapsed.avg.per_second"),
}
#: The SM count: the device's, else the launch's.
SM_COUNT = ("device__attribute_multiprocessor_count", "launch__sm_count")
#: The smallest "% of peak" an implied peak is read from.
MIN_PCT = 1.0


def peak_metrics(compute_capability: str) -> list[str]:
    """The peak and clock metrics ``roofline profile`` collects for ceilings on this architecture."""
    family = arch_family(compute_capability)
    names = [*SM_CLOCK[:1], f"{_SASS}dfma_pred_on{_PEAK}", f"{_SASS}ffma_pred_on{_PEAK}", f"{_SASS}hfma_pred_on{_PEAK}",
             TENSOR_V100, "dram__bytes" + _PEAK, "dram__cycles_elapsed.avg.per_second", "lts__t_bytes" + _PEAK,
             "lts__cycles_elapsed.avg.per_second", "l1tex__t_bytes" + _PEAK, "l1tex__cycles_elapsed.avg.per_second",
             *(p.peaks[0] for p in ISSUE_PEAKS.values()), *(names[0] for names in OP_PEAKS.values())]
    if compute_capability == "7.5":  # Volta: 512 x the tensor-pipe peak above
        names.append(f"{_OPS}fp16_bf16_tf32_dst_fp32{_PEAK}")
    elif family == "8":
        names += [f"{_OPS}{t}_sparsity_off{_PEAK}" for t in ("fp16_dst_fp32", "bf16_dst_fp32", "tf32_dst_fp32", "int8")]
        if compute_capability == "8.0":
            names.append(f"{_OPS}fp64{_PEAK}")
        if compute_capability == "8.9":
            names.append(f"{_OPS}fp8_sparsity_off{_PEAK}")
    elif family == "9":
        names += [f"{_KIND}hgmma_src_{t}_sparsity_off{_PEAK}" for t in ("fp16", "bf16_dst_fp32", "tf32_dst_fp32")]
        names += [f"{_KIND}igmma_src_int8_sparsity_off{_PEAK}", f"{_OPS}fp8_sparsity_off{_PEAK}", f"{_OPS}fp64{_PEAK}"]
    elif family in BLACKWELL:  # every spelling reported; the GPU's catalog keeps those it has
        names += [n for peaks in BLACKWELL_TENSOR_PEAKS.values() for n in peaks] + [f"{_OPS}fp64{_PEAK}"]
    return names


def _median(metrics: pd.DataFrame, names: Sequence[str]) -> tuple[float, str] | None:
    for name in names:
        if name in metrics.columns and metrics[name].dtype.kind in "iuf":
            values = metrics[name].to_numpy(dtype=np.float64, na_value=np.nan)
            values = values[np.isfinite(values) & (values > 0)]
            if values.size:
                return float(np.median(values)), name
    return None


def _largest(metrics: pd.DataFrame, names: Sequence[str]) -> tuple[float, str] | None:
    found = [m for m in (_median(metrics, (n,)) for n in names) if m is not None]
    return max(found) if found else None


def _instances(metrics: pd.DataFrame, unit: str) -> float | None:
    """How many instances of ``unit`` (L2 slices, say) the chip has: its cycles' sum / average."""
    total, mean = f"{unit}__cycles_elapsed.sum", f"{unit}__cycles_elapsed.avg"
    if not {total, mean} <= set(metrics.columns):
        return None
    ratio = (metrics[total].to_numpy(dtype=np.float64, na_value=np.nan)
             / metrics[mean].to_numpy(dtype=np.float64, na_value=np.nan))
    ratio = ratio[np.isfinite(ratio) & (ratio > 0)]
    return float(np.round(np.median(ratio))) if ratio.size else None


def _unit_peak(metrics: pd.DataFrame, metric: str) -> tuple[float, str] | None:
    """``<m>.sum.peak_sustained``, else ``<m>.avg.peak_sustained`` x the unit's instance count
    (a ``--set full`` export holds the per-instance peak, e.g. lts__t_sectors.avg.peak_sustained)."""
    found = _median(metrics, (metric,))
    if found is not None or not metric.endswith(_PEAK):
        return found
    per_instance_name = metric[: -len(_PEAK)] + ".avg.peak_sustained"
    per_instance = _median(metrics, (per_instance_name,))
    count = _instances(metrics, metric.split("__", 1)[0])
    if per_instance is None or count is None:
        return None
    return per_instance[0] * count, f"{per_instance_name} x {count:g} instances"


def _unit_clock(metrics: pd.DataFrame, clock_metric: str) -> tuple[float, str] | None:
    """``<unit>__cycles_elapsed.avg.per_second``, else ``<unit>__cycles_elapsed.avg`` / the launch's
    ``gpu__time_duration.sum`` (both in the export; median over launches)."""
    found = _median(metrics, (clock_metric,))
    if found is not None:
        return found[0], clock_metric
    cycles = clock_metric.removesuffix(".per_second")
    if not {cycles, "gpu__time_duration.sum"} <= set(metrics.columns):
        return None
    rate = (metrics[cycles].to_numpy(dtype=np.float64, na_value=np.nan)
            / metrics["gpu__time_duration.sum"].to_numpy(dtype=np.float64, na_value=np.nan))
    rate = rate[np.isfinite(rate) & (rate > 0)]
    return (float(np.median(rate)), f"{cycles} / gpu__time_duration.sum") if rate.size else None


def _implied_peak(metrics: pd.DataFrame, peak: IssuePeak) -> tuple[float, str] | None:
    """The per-cycle peak that ncu's "% of peak" implies: achieved per cycle / (% / 100), median over
    the launches at :data:`MIN_PCT` or more."""
    pct_name = next((p for p in peak.pct if p in metrics.columns and metrics[p].dtype.kind in "iuf"), None)
    if pct_name is None:
        return None
    reader = Reader(metrics)
    reader.time = launch_time(reader)
    achieved, cycles = reader.read(peak.achieved), reader.cycles(peak.unit)
    if achieved is None or cycles is None:
        return None
    pct = metrics[pct_name].to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        implied = achieved / cycles / (pct / 100)
    implied = implied[np.isfinite(implied) & (pct >= MIN_PCT) & (implied > 0)]
    if not implied.size:
        return None
    return float(np.median(implied)), f"({peak.achieved.name} / {peak.unit} cycles / {pct_name})"


def _issue_ceilings(metrics: pd.DataFrame, sm_clock: tuple[float, str] | None
                    ) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Warp-instruction (compute) and shared-memory (memory) ceilings: from a peak metric or ncu's
    "% of peak" (first dict pair), and from the SM count (the second: used only beside other ceilings)."""
    found: dict[str, float] = {}
    by_count: dict[str, float] = {}
    used: dict[str, str] = {}
    sms = _median(metrics, SM_COUNT)
    for key, peak in ISSUE_PEAKS.items():
        clock = sm_clock if peak.clock == SM_CLOCK[0] else _unit_clock(metrics, peak.clock)
        if clock is None:
            continue
        per_cycle = next((p for p in (_unit_peak(metrics, m) for m in peak.peaks) if p is not None), None)
        per_cycle = per_cycle or _implied_peak(metrics, peak)
        if per_cycle is not None:
            found[key] = peak.bytes_per_unit * per_cycle[0] * clock[0]
            used[key] = f"{peak.bytes_per_unit:g} x {per_cycle[1]} x {clock[1]}"
        elif sms is not None:
            by_count[key] = peak.bytes_per_unit * peak.per_sm * sms[0] * clock[0]
            used[key] = f"{peak.bytes_per_unit:g} x {peak.per_sm:g} per SM per cycle x {sms[1]} x {clock[1]}"
    return found, by_count, used


def device_names(metrics: pd.DataFrame) -> list[str]:
    """The distinct GPUs the profile names (``device__attribute_display_name``), most launches first."""
    if DEVICE_NAME not in metrics.columns:
        return []
    names = metrics[DEVICE_NAME].dropna().astype(str).str.strip()
    return [str(n) for n in names[names != ""].value_counts(sort=True).index]


def device_name(metrics: pd.DataFrame) -> str | None:
    """The GPU the profile names (``device__attribute_display_name``), when there is one."""
    names = device_names(metrics)
    return names[0] if names else None


def machine_from_profile(metrics: pd.DataFrame, name: str | None = None, *, compute_capability: str | None = None,
                         fp16: str = "ncu", fill_from_spec: bool = True, l1_tag_stage: bool = True) -> Machine | None:
    """Ceilings from ``<metric>.peak_sustained`` x clock in a profile's raw metrics (SI units).

    ``metrics`` is :attr:`KernelTable.metrics`; ``fp16`` the FP16 convention the table was
    counted with. The machine is named ``name``, else after the GPU the profile names. With
    ``fill_from_spec``, ceilings the profile lacks come from that GPU's spec (theoretical).
    Returns None when the profile has no peak metric with its clock and names no known GPU.
    """
    used: dict[str, str] = {}
    compute: dict[str, float] = {}
    memory: dict[str, float] = {}
    # the SM clock scales peaks: without any, no ceiling comes from the profile (a median of 1e6 clocks saved)
    sm_clock = _median(metrics, SM_CLOCK) if _has_peaks(metrics) else None
    family = arch_family(compute_capability)
    if sm_clock is not None:
        clock, clock_name = sm_clock
        scalar = {"fp64": scalar_peaks("dfma"), "fp32": scalar_peaks("ffma"), "fp16": fp16_peaks(fp16)}
        for key, alternatives in scalar.items():
            for factor, metric in alternatives:
                peak = _median(metrics, (metric,))
                if peak is not None:
                    compute[key] = factor * peak[0] * clock
                    used[key] = f"{factor:g} x {metric} x {clock_name}"
                    break
        tensor = dict(DENSE_TENSOR_PEAKS)
        if family == "7":
            tensor.update(VOLTA_TURING_TENSOR_PEAKS)
        elif family in BLACKWELL:
            tensor = {k: (*tensor.get(k, ()), *BLACKWELL_TENSOR_PEAKS.get(k, ())) for k in {**tensor, **BLACKWELL_TENSOR_PEAKS}}
        for key, names in tensor.items():
            peak = _largest(metrics, names)
            if peak is not None:
                compute[key] = peak[0] * clock
                used[key] = f"{peak[1]} x {clock_name}"
        if "tensor_fp16" not in compute and compute_capability in ("7.0", "7.2"):
            peak = _median(metrics, (TENSOR_V100,))
            if peak is not None:
                compute["tensor_fp16"] = 512 * peak[0] * clock
                used["tensor_fp16"] = f"512 x {TENSOR_V100} x {clock_name}"
        for key, names in OP_PEAKS.items():
            peak = _median(metrics, names)
            if peak is not None:
                compute[key] = peak[0] * clock
                used[key] = f"{peak[1]} x {clock_name}"
    for level, (alternatives, clock_metric) in MEMORY_PEAKS.items():
        level_clock = _unit_clock(metrics, clock_metric)
        if level_clock is None:
            continue
        for factor, metric in alternatives:
            if not l1_tag_stage and metric == L1_TAG_STAGE:
                continue
            peak = _unit_peak(metrics, metric)
            if peak is not None:
                memory[level] = factor * peak[0] * level_clock[0]
                used[level] = f"{factor:g} x {peak[1]} x {level_clock[1]}"
                break
    issue, by_count, issue_used = _issue_ceilings(metrics, sm_clock)
    if compute or memory or issue:  # SM-count constants only beside ceilings from the profile's peaks
        for key, value in {**issue, **by_count}.items():
            (memory if key == "shared" else compute)[key] = value
            used[key] = issue_used[key]
    gpu = device_name(metrics)
    label = name or gpu or "from-profile"
    spec_machine = _spec_machine(gpu) if fill_from_spec else None
    if not compute and not memory:
        if spec_machine is None:
            return None
        meta = dict(spec_machine.metadata)
        meta["ceiling_sources"] = {k: f"theoretical: {spec_machine.name}" for k in (*spec_machine.memory, *spec_machine.compute)}
        return Machine(name=label, source="theoretical", memory=spec_machine.memory, compute=spec_machine.compute,
                       sm_clock_hz=spec_machine.sm_clock_hz, metadata=meta)
    profile = Machine(
        name=label, source="from-profile", memory=memory, compute=compute,
        sm_clock_hz=sm_clock[0] if sm_clock is not None else None,
        metadata={"formulas": used, "launches": len(metrics), "fp16_convention": fp16,
                  **({"sms": sms_found[0]} if (sms_found := _median(metrics, SM_COUNT)) else {}),
                  **({"gpu": gpu} if gpu else {}),
                  "ceiling_sources": {k: "from-profile: " + v for k, v in used.items()}},
    )
    if spec_machine is None:
        return profile
    return combine([profile, spec_machine])


def _has_peaks(metrics: pd.DataFrame) -> bool:
    """True when the profile holds a metric a ceiling is read from: a peak (``.peak_sustained``, the
    sections' ``derived__sm__...`` peaks), the SM count, or a "% of peak" that implies one."""
    pct = {p for peak in ISSUE_PEAKS.values() for p in peak.pct}
    return any(name.endswith(".peak_sustained") or name.startswith(_DERIVED) or name in SM_COUNT or name in pct
               for name in map(str, metrics.columns))


def _spec_machine(gpu: str | None) -> Machine | None:
    """Theoretical ceilings of the GPU the profile names, when we have its spec."""
    if not gpu:
        return None
    spec = spec_for_device_name(gpu)
    return theoretical_from_spec(spec) if spec is not None else None


#: The device's highest SM clock, in kHz, as a profile's device attributes record it.
MAX_CLOCK_METRIC = "device__attribute_max_gpu_frequency_khz"


def max_clock_hz(metrics: pd.DataFrame | None) -> float | None:
    """The device's highest SM clock (Hz) as the profile records it (the median over launches), or None."""
    if metrics is None or MAX_CLOCK_METRIC not in metrics.columns or metrics[MAX_CLOCK_METRIC].dtype.kind not in "iuf":
        return None
    values = metrics[MAX_CLOCK_METRIC].to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.median(values)) * 1e3 if values.size else None


def tag_stage_note(peaks: Machine) -> str | None:
    """The note on a profile's L1 ceiling read from the L1 tag stage's peak; None when it is not."""
    if peaks.metadata.get("formulas", {}).get("l1", "").find(L1_TAG_STAGE[: -len(_PEAK)]) < 0:  # .sum or .avg x instances
        return None
    sms = peaks.metadata.get("sms")
    clock = peaks.sm_clock_hz
    per_sm = f" ({peaks.memory['l1'] / sms / clock:.0f} B/clk/SM)" if sms and clock else ""
    return (f"the L1 ceiling is Nsight Compute's {L1_TAG_STAGE}, the L1 tag stage's rate"
            f"{per_sm}, not what loads deliver (128 B/clk/SM on Volta, GA100, Hopper and Blackwell)")

"""Machine ceilings from the peak metrics an Nsight Compute profile carries itself.

Nsight Compute's roofline sections (SpeedOfLight_Hierarchical{Double,Single,Half,Tensor}
RooflineChart.section) draw each ceiling as ``<per-cycle peak> x <unit clock>``:

=============  =======================================================================================
ceiling        formula (ncu metrics)
=============  =======================================================================================
fp64           2 x sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained x sm__cycles_elapsed.avg.per_second
fp32           2 x sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained x sm__cycles_elapsed.avg.per_second
fp16           2 x sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained x sm__cycles_elapsed.avg.per_second
tensor_fp16    SM 7.0/7.2: 512 x sm__inst_executed_pipe_tensor.sum.peak_sustained x SM clock;
               SM >= 8.0: sm__ops_path_tensor_src_fp16[_dst_fp32][_sparsity_off].sum.peak_sustained x SM clock
tensor_<t>     likewise for bf16, tf32, fp64, fp8, int8 (ops per cycle x SM clock)
dram           dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second
l2             lts__t_bytes.sum.peak_sustained x lts__cycles_elapsed.avg.per_second (the section
               file's alternative: l1tex__m_xbar2l1tex_read_bytes.sum.peak_sustained x the same clock)
l1             l1tex__t_bytes.sum.peak_sustained x l1tex__cycles_elapsed.avg.per_second (alternative:
               128 x l1tex__lsu_writeback_active_mem_lg.sum.peak_sustained (SM >= 7.5) or
               l1tex__lsu_writeback_active.sum.peak_sustained (SM <= 7.2) x the same clock)
=============  =======================================================================================

Peaks are per-chip constants; clocks vary by launch, so the median over launches is
used and recorded as ``sm_clock_hz``. Use :meth:`Machine.scaled_to_clock` to move the
ceilings to the clock a kernel ran at. The fp16 ceiling is the section file's (x2);
note that Nsight Compute counts achieved half FLOPs x4 per HFMA (paired ``half2``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from roofline.machine.model import Machine

SM_CLOCK = ("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second")
_PEAK = ".peak_sustained"
_OPS = "sm__ops_path_tensor_src_"

#: compute key -> (FLOPs per counted unit, alternatives of per-cycle peak metrics); clock = SM clock.
COMPUTE_PEAKS: dict[str, tuple[float, tuple[str, ...]]] = {
    "fp64": (2.0, ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum" + _PEAK,)),
    "fp32": (2.0, ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum" + _PEAK,)),
    "fp16": (2.0, ("sm__sass_thread_inst_executed_op_hfma_pred_on.sum" + _PEAK,)),
    "tensor_bf16": (1.0, tuple(f"{_OPS}bf16{s}.sum{_PEAK}" for s in ("", "_dst_fp32", "_dst_fp32_sparsity_off"))),
    "tensor_tf32": (1.0, tuple(f"{_OPS}tf32{s}.sum{_PEAK}" for s in ("", "_dst_fp32", "_dst_fp32_sparsity_off"))),
    "tensor_fp64": (1.0, tuple(f"{_OPS}fp64{s}.sum{_PEAK}" for s in ("", "_sparsity_off"))),
    "tensor_fp8": (1.0, tuple(f"{_OPS}fp8{s}.sum{_PEAK}" for s in ("", "_sparsity_off"))),
    "tensor_int8": (1.0, tuple(f"{_OPS}int8{s}.sum{_PEAK}" for s in ("", "_sparsity_off"))),
}
TENSOR_FP16_OPS = tuple(f"{_OPS}fp16{s}.sum{_PEAK}" for s in ("", "_dst_fp32", "_dst_fp32_sparsity_off", "_dst_fp16"))
TENSOR_V100 = "sm__inst_executed_pipe_tensor.sum" + _PEAK

#: memory level -> (alternatives of (bytes per unit, per-cycle peak metric)), clock metric.
MEMORY_PEAKS: dict[str, tuple[tuple[tuple[float, str], ...], str]] = {
    "dram": (((1.0, "dram__bytes.sum" + _PEAK),), "dram__cycles_elapsed.avg.per_second"),
    "l2": (((1.0, "lts__t_bytes.sum" + _PEAK), (1.0, "l1tex__m_xbar2l1tex_read_bytes.sum" + _PEAK)),
           "lts__cycles_elapsed.avg.per_second"),
    "l1": (((1.0, "l1tex__t_bytes.sum" + _PEAK), (128.0, "l1tex__lsu_writeback_active_mem_lg.sum" + _PEAK),
            (128.0, "l1tex__lsu_writeback_active.sum" + _PEAK)), "l1tex__cycles_elapsed.avg.per_second"),
}


def _median(metrics: pd.DataFrame, names: Sequence[str]) -> tuple[float, str] | None:
    for name in names:
        if name in metrics.columns and metrics[name].dtype.kind in "iuf":
            values = metrics[name].to_numpy(dtype=np.float64)
            values = values[np.isfinite(values) & (values > 0)]
            if values.size:
                return float(np.median(values)), name
    return None


def machine_from_profile(metrics: pd.DataFrame, name: str = "from-profile", *,
                         compute_capability: str | None = None) -> Machine | None:
    """Ceilings from ``<metric>.peak_sustained`` x clock in a profile's raw metrics (SI units).

    ``metrics`` is :attr:`KernelTable.metrics`. ``compute_capability`` enables the V100
    tensor ceiling (512 x tensor-pipe peak, SM 7.0/7.2 only). Returns None when the
    profile has no peak metric with its clock.
    """
    used: dict[str, str] = {}
    compute: dict[str, float] = {}
    memory: dict[str, float] = {}
    sm_clock = _median(metrics, SM_CLOCK)
    if sm_clock is not None:
        clock, clock_name = sm_clock
        for key, (factor, names) in COMPUTE_PEAKS.items():
            peak = _median(metrics, names)
            if peak is not None:
                compute[key] = factor * peak[0] * clock
                used[key] = f"{factor:g} x {peak[1]} x {clock_name}"
        peak = _median(metrics, TENSOR_FP16_OPS)
        if peak is not None:
            compute["tensor_fp16"] = peak[0] * clock
            used["tensor_fp16"] = f"{peak[1]} x {clock_name}"
        elif compute_capability in ("7.0", "7.2"):
            peak = _median(metrics, (TENSOR_V100,))
            if peak is not None:
                compute["tensor_fp16"] = 512 * peak[0] * clock
                used["tensor_fp16"] = f"512 x {peak[1]} x {clock_name}"
    for level, (alternatives, clock_metric) in MEMORY_PEAKS.items():
        level_clock = _median(metrics, (clock_metric,))
        if level_clock is None:
            continue
        for factor, metric in alternatives:
            peak = _median(metrics, (metric,))
            if peak is not None:
                memory[level] = factor * peak[0] * level_clock[0]
                used[level] = f"{factor:g} x {metric} x {clock_metric}"
                break
    if not compute and not memory:
        return None
    return Machine(
        name=name, source="from-profile", memory=memory, compute=compute,
        sm_clock_hz=sm_clock[0] if sm_clock is not None else None,
        metadata={"formulas": used, "launches": len(metrics)},
    )

"""A realistic analysis for the report tests, built from the DeepCAM authors' per-kernel table.

Not a test module. Times, launches, FLOPs and per-level intensities are the paper
authors' (tests/data/ncu/deepcam_authors); the roofline columns are computed here
from the V100 ERT ceilings (L1 14336, L2 2996.77, HBM 828.758 GB/s; FP32 15.7 TFLOP/s)
the way the analysis declares them, and one hostile kernel name is added. The figure is
a minimal plotly scatter for the tests only (the report ships the analysis view's chart).
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from guidance_data import DEEPCAM_AUTHORS, FrameAnalysis, analysis_row
from roofline.machine.model import Machine

HOSTILE = "<img src=x onerror=alert(1)>"
V100 = Machine(name="V100-SXM2 (ERT)", source="measured", memory={"l1": 14336e9, "l2": 2996.77e9, "dram": 828.758e9},
               compute={"fp32": 15.7e12, "tensor_fp16": 125e12}, sm_clock_hz=1.53e9)


def deepcam_analysis(extra_hostile: bool = True) -> FrameAnalysis:
    authors = pd.read_csv(DEEPCAM_AUTHORS)
    rows = []
    for _, r in authors.iterrows():
        rows.append(_row(str(r["Kernel Name"]), float(r["Time"]), int(r["Count"]), float(r["all FLOPs"]),
                         {"l1": float(r["l1tex__t_bytes.sum"]), "l2": float(r["lts__t_bytes.sum"]),
                          "dram": float(r["dram__bytes.sum"])}))
    if extra_hostile:
        rows.append(_row(HOSTILE, 4.0e-4, 40, 2.0e9, {"l1": 4e8, "l2": 3e8, "dram": 2e8}))
        rows.append(_row("void gemm<float, &scale>(float const*, float*) [a&b]", 2.5e-4, 2, 3.2e9,
                         {"l1": 2e8, "l2": 1e8, "dram": 5e7}))
    frame = pd.DataFrame(rows)
    frame["time_share"] = frame["time_s"] / frame["time_s"].sum()
    frame = frame.sort_values("time_s", ascending=False).reset_index(drop=True)
    return FrameAnalysis(frame=frame, machine=V100)


def _row(name: str, time_s: float, launches: int, flops: float, by_level: dict[str, float]) -> dict:
    peak = V100.compute["fp32"]
    values = {"kernel_name": name, "time_s": time_s, "launches": launches, "flops": flops, "fp32_flops": flops,
              "fp64_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0, "l1_bytes": by_level["l1"],
              "l2_bytes": by_level["l2"], "dram_bytes": by_level["dram"], "flop_rate": flops / time_s,
              "compute_peak": peak, "compute_ceiling": "fp32"}
    times = {"fp32": flops / peak}
    for lv, b in by_level.items():
        bw = V100.memory[lv]
        values[f"ai_{lv}"] = flops / b if b > 0 else np.nan
        values[f"bw_{lv}"] = b / time_s
        values[f"bw_use_{lv}"] = b / time_s / bw
        values[f"attainable_{lv}"] = min(peak, values[f"ai_{lv}"] * bw) if b > 0 else np.nan
        times[lv] = b / bw
    bound = max(times, key=times.get)
    rt = times[bound]
    values.update(roofline_time_s=rt, pct_of_roofline=rt / time_s, savable_time_s=max(0.0, time_s - rt), bound=bound,
                  compute_use=flops / time_s / peak, bw_use=max(values[f"bw_use_{lv}"] for lv in by_level))
    poor = values["compute_use"] < 0.5 and values["bw_use"] < 0.5
    values["region"] = "poor" if poor else ("compute-bound" if bound == "fp32" else "memory-bound")
    ai = [values["ai_l1"], values["ai_l2"], values["ai_dram"]]
    values["locality"] = "streaming" if max(ai) < 1.5 * min(ai) else "l2-reuse"
    return analysis_row(**values)


def minimal_figure(analysis):
    """A minimal roofline-like plotly figure with escaped hover text (test-only)."""
    import plotly.graph_objects as go

    f = analysis.frame
    fig = go.Figure()
    for lv in getattr(analysis, "levels", ("l1", "l2", "dram")):
        fig.add_trace(go.Scatter(x=f[f"ai_{lv}"], y=f["flop_rate"], mode="markers", name=lv.upper(),
                                 hovertext=[html.escape(n) for n in f["kernel_name"]],
                                 hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_layout(xaxis={"type": "log"}, yaxis={"type": "log"}, height=450)
    return fig


def real_analysis():
    """The same kernels through the real ``roofline.analysis.analyze`` (kernel-table columns in, with phases).

    Returns (analysis, table): the DeepCAM authors' kernels put in a 'optimizer' phase, plus the
    hostile name in a 'forward' phase.
    """
    from roofline.analysis import analyze
    from roofline.kernels import KernelTable, from_records

    authors = pd.read_csv(DEEPCAM_AUTHORS)
    records = []
    for _, r in authors.iterrows():
        records.append({"kernel_name": str(r["Kernel Name"]), "phase": "optimizer", "time_s": float(r["Time"]),
                        "launches": int(r["Count"]), "fp32_flops": float(r["all FLOPs"]), "fp64_flops": 0.0,
                        "fp16_flops": 0.0, "tensor_flops": 0.0, "l1_bytes": float(r["l1tex__t_bytes.sum"]),
                        "l2_bytes": float(r["lts__t_bytes.sum"]), "dram_bytes": float(r["dram__bytes.sum"])})
    records.append({"kernel_name": HOSTILE, "phase": "forward", "time_s": 4.0e-4, "launches": 40,
                    "fp32_flops": 2.0e9, "fp64_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0,
                    "l1_bytes": 4e8, "l2_bytes": 3e8, "dram_bytes": 2e8})
    table = KernelTable(frame=from_records(records))
    return analyze(table, V100, by="phase"), table


# -- the instruction roofline: one kernel on each global wall, bank conflicts, integer work -------------

#: A test machine with H100 PCIe-like ceilings (114 SMs at 1.755 GHz): the warp-instruction peak is
#: 114 SMs x 4 schedulers x 1 inst/clock x 1.755e9 = 800.28e9 inst/s, shared memory 114 x 32 banks x
#: 4 B x 1.755e9 = 25.60896e12 B/s, INT32 114 x 64 lanes x 1.755e9 = 12.80448e12 OP/s. No clock
#: recorded, so the analysis uses the ceilings as given (the table has no clocks either).
H100_LIKE = Machine(name="H100-like (test)", source="theoretical",
                    memory={"l1": 25.60896e12, "shared": 25.60896e12, "l2": 8.9856e12, "dram": 2.0e12},
                    compute={"fp32": 51.21792e12, "int32": 12.80448e12, "warp_inst": 800.28e9})


def _wall_kernel(name: str, time_s: float, warp: float, global_inst: float, l1_tx: float, l2_tx: float,
                 dram_tx: float, *, fp32: float = 0.0, int_ops: float = 0.0, shared_inst: float | None = None,
                 shared_tx: float | None = None) -> dict:
    rec = {"kernel_name": name, "time_s": time_s, "fp32_flops": fp32, "fp64_flops": 0.0, "fp16_flops": 0.0,
           "tensor_flops": 0.0, "int_ops": int_ops, "conversion_ops": 0.0, "tensor_int_ops": 0.0, "sfu_ops": 0.0,
           "warp_inst": warp, "global_inst": global_inst, "l1_transactions": l1_tx, "l2_transactions": l2_tx,
           "dram_transactions": dram_tx, "l1_bytes": 32 * l1_tx, "l2_bytes": 32 * l2_tx, "dram_bytes": 32 * dram_tx,
           "shared_inst": 0.0 if shared_inst is None else shared_inst,
           "shared_transactions": 0.0 if shared_tx is None else shared_tx,
           "shared_bytes": 0.0 if shared_tx is None else 128 * shared_tx}
    return rec


def instruction_table():
    """Four kernels, numbers chosen so every figure is easy by hand:

    * ``gather<int>`` 4 ms, 3e6 warp inst (0.75 GIPS), 1e5 global LD/ST over 3.2e6 sectors (1/32: random),
      1e5 shared LD/ST over 4e5 wavefronts (4-way conflicts), 6.4e7 integer OPs, no FLOPs;
    * ``coalesced`` 2 ms, 4e6 warp inst (2 GIPS), 2e5 global over 8e5 sectors (1/4: unit stride),
      1e5 shared over 1e5 wavefronts (conflict-free), 6.4e7 FP32 FLOPs;
    * ``broadcast`` 1 ms, 2e6 warp inst (2 GIPS), 1e5 global over 1e5 sectors (1: stride-0), no shared,
      3.2e7 integer OPs, no FLOPs;
    * ``legacy_copy`` 0.5 ms, bytes only: no instruction or operation counts (FLOPs known to be 0).

    A kernel table as the ncu reader gives it: with the metrics to collect (``metric_hints``).
    """
    from roofline.counting import NCU_HINTS
    from roofline.kernels import KernelTable, from_records

    rows = [
        _wall_kernel("void gather<int>(int const*, int*)", 4e-3, 3e6, 1e5, 3.2e6, 3.2e6, 3.2e6, int_ops=6.4e7,
                     shared_inst=1e5, shared_tx=4e5),
        _wall_kernel("coalesced(float*, float*)", 2e-3, 4e6, 2e5, 8e5, 8e5, 8e5, fp32=6.4e7,
                     shared_inst=1e5, shared_tx=1e5),
        _wall_kernel("broadcast(float const*, float*)", 1e-3, 2e6, 1e5, 1e5, 1e5, 5e4, int_ops=3.2e7),
        {"kernel_name": "legacy_copy", "time_s": 5e-4, "fp32_flops": 0.0, "fp64_flops": 0.0, "fp16_flops": 0.0,
         "tensor_flops": 0.0, "l1_bytes": 1e6, "l2_bytes": 1e6, "dram_bytes": 1e6},
    ]
    return KernelTable(from_records(rows), metric_hints=NCU_HINTS)

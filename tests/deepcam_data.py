"""Test helpers: the DeepCAM authors' per-kernel table as a kernel table, and the V100 ERT machine.

Not a reader (that is roofline.readers' job): a plain transcription of the authors' CSV
into our schema, so the analysis and views can be tested on real numbers.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from roofline.kernels import from_records
from roofline.machine import Machine

CSV = Path(__file__).parent / "data" / "ncu" / "deepcam_authors" / "processed_by_authors_fp32-O1-LAMB-opt.csv"
_P = "sm__sass_thread_inst_executed_op_"


def authors_csv() -> pd.DataFrame:
    return pd.read_csv(CSV)


def deepcam_table() -> pd.DataFrame:
    """One row per kernel name; FP64 was not collected, so fp64_flops is unknown (flops_partial)."""
    rows = []
    for r in authors_csv().to_dict("records"):
        count = int(r["Count"])
        rows.append({
            "kernel_name": r["Kernel Name"],
            "launches": count,
            "time_s": r["Time"],
            "sm_clock_hz": r["sm__cycles_elapsed.avg.per_second"] / count,
            "fp32_flops": r[_P + "fadd_pred_on.sum"] + r[_P + "fmul_pred_on.sum"] + 2 * r[_P + "ffma_pred_on.sum"],
            "fp16_flops": r[_P + "hadd_pred_on.sum"] + r[_P + "hmul_pred_on.sum"] + 2 * r[_P + "hfma_pred_on.sum"],
            "tensor_flops": 512.0 * r["sm__inst_executed_pipe_tensor.sum"],
            "l1_bytes": r["l1tex__t_bytes.sum"],
            "l2_bytes": r["lts__t_bytes.sum"],
            "dram_bytes": r["dram__bytes.sum"],
            "phase": "optimizer",
            "source": CSV.name,
        })
    return from_records(rows)


def v100_machine() -> Machine:
    """V100 SXM2 (Cori GPU) ceilings from ERT: L1 14336, L2 2996.77, HBM 828.758 GB/s (1e9 B/s), FP64 FMA 7068.86 GFLOP/s.

    FP32 and tensor FP16 are NOT in the ERT file: they are derived here from the FP64
    ceiling by the V100 datasheet ratios (FP32 = 2 x FP64, tensor = 8 x FP32), for the
    charts of an FP32 application. No SM clock recorded (ERT does not print one).
    """
    fp64 = 7068.86e9
    return Machine(
        name="V100-SXM2 (Cori, ERT)", source="measured",
        memory={"l1": 14336e9, "l2": 2996.77e9, "hbm": 828.758e9},
        compute={"fp64": fp64, "fp32": 2 * fp64, "tensor_fp16": 16 * fp64},
        metadata={"note": "fp32 and tensor_fp16 derived from fp64 by datasheet ratios"},
    )

"""Test data for the guidance tests: real ncu rows read with pandas, and analysis frames.

Not a test module. ``b200_table()`` reads the B200 raw-page fixture (real metrics per
launch) into a KernelTable with pandas, as the reader will; ``FrameAnalysis`` holds an
analysis frame with the declared analysis columns, for tests that run before (or
without) ``roofline.analysis.analyze``.
"""

from __future__ import annotations

import io
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from roofline.kernels import KernelTable, from_records
from roofline.units import si_factor

DATA = Path(__file__).parent / "data"
B200 = DATA / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
DEEPCAM_AUTHORS = DATA / "ncu" / "deepcam_authors" / "processed_by_authors_fp32-O1-LAMB-opt.csv"


@lru_cache(maxsize=4)
def _read_raw_page_cached(path: Path) -> pd.DataFrame:
    return _read_raw_page(path)


def read_raw_page(path: Path) -> pd.DataFrame:
    """One row per launch, SI values for numeric metrics (the units row applied); a fresh copy."""
    return _read_raw_page_cached(path).copy()


def _read_raw_page(path: Path) -> pd.DataFrame:
    """One row per launch, SI values for numeric metrics (the units row applied)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    raw = pd.read_csv(io.StringIO("\n".join(lines[start:])), dtype=str)
    units, rows = raw.iloc[0], raw.iloc[1:].reset_index(drop=True)
    out = {}
    for col in rows.columns:
        num = pd.to_numeric(rows[col].str.replace(",", ""), errors="coerce")
        if num.notna().any():
            unit = units[col] if isinstance(units[col], str) else ""
            out[col] = num * si_factor(unit)
        else:
            out[col] = rows[col]
    return pd.DataFrame(out)


def b200_table() -> KernelTable:
    """The B200 flash-attention profile: 16 launches of two kernels, real ncu metrics."""
    raw = read_raw_page(B200)
    frame = from_records(
        {"launch_id": int(r["ID"]), "kernel_name": r["Kernel Name"], "time_s": float(r["gpu__time_duration.sum"]),
         "launches": 1}
        for _, r in raw.iterrows()
    )
    metrics = raw.drop(columns=["ID", "Kernel Name"])
    metrics.index = frame.index
    return KernelTable(frame=frame, metrics=metrics, sources=(str(B200),))


@dataclass
class FrameAnalysis:
    """An analysis result as the guidance reads it: ``frame`` with the declared columns."""

    frame: pd.DataFrame
    machine: Any = None
    levels: list[str] = field(default_factory=lambda: ["l1", "l2", "dram"])
    by: str = "name"


def analysis_row(**values: Any) -> dict[str, Any]:
    """A row with every analysis column the rules read; unknown where not given."""
    row: dict[str, Any] = {
        "kernel_name": "k", "phase": pd.NA, "launches": 1, "time_s": np.nan, "flops": np.nan,
        "fp64_flops": np.nan, "fp32_flops": np.nan, "fp16_flops": np.nan, "tensor_flops": np.nan,
        "flop_rate": np.nan, "compute_peak": np.nan, "compute_use": np.nan, "roofline_time_s": np.nan,
        "pct_of_roofline": np.nan, "savable_time_s": np.nan, "bound": pd.NA, "region": pd.NA, "bw_use": np.nan,
        "locality": pd.NA, "time_share": np.nan,
    }
    # instruction-roofline counts and columns (roofline.analysis.patterns): unknown unless given
    for name in ("warp_inst", "global_inst", "shared_inst", "l1_transactions", "shared_transactions", "inst_rate",
                 "ii_l1", "ii_shared", "ii_l2", "ii_dram", "global_ii", "shared_ii"):
        row[name] = np.nan
    row["global_pattern"] = row["shared_pattern"] = pd.NA
    for level in ("l1", "l2", "dram"):
        row[f"ai_{level}"] = np.nan
        row[f"bw_{level}"] = np.nan
        row[f"bw_use_{level}"] = np.nan
    row.update(values)
    return row


def analysis_of(rows: list[dict[str, Any]], by: str = "name") -> FrameAnalysis:
    return FrameAnalysis(frame=pd.DataFrame([analysis_row(**r) for r in rows]), by=by)


def b200_by_name(table: KernelTable) -> FrameAnalysis:
    """The B200 table grouped by name, with the kernel-table columns (roofline columns unknown)."""
    f = table.frame
    g = f.groupby("kernel_name", sort=False).agg(time_s=("time_s", "sum"), launches=("launches", "sum")).reset_index()
    g["time_share"] = g["time_s"] / g["time_s"].sum()
    return analysis_of(g.to_dict("records"), by="name")

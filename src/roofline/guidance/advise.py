"""What to work on: kernels ranked by the time they could save, with what limits them.

``advise(analysis, table)`` returns a DataFrame (one row per analysis row, best
opportunity first); ``advice_table(advice)`` renders it for the terminal with rich.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.guidance.diagnose import Diagnoses, diagnose
from roofline.kernels import KernelTable, has_runs
from roofline.units import format_time
from roofline.kernels.labels import short_names

#: Columns of the frame :func:`advise` returns.
ADVICE_COLUMNS = (
    "rank", "kernel_name", "label", "phase", "launches", "time_s", "time_share", "savable_time_s", "pct_of_roofline",
    "bound", "limiter", "limiter_label", "reason", "helps", "advice",
)


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series(np.nan, index=frame.index)


def _labels(analysis: Any) -> list[str]:
    """Short kernel names, as every view of an :class:`Analysis` gives them (its labels, made once; any other
    object with a ``frame`` of kernels: made over its rows alike); with several runs, each prefixed by its
    run (``b: gemm``)."""
    frame = analysis.frame
    if isinstance(analysis, Analysis):
        names = analysis.kernel_labels(frame["kernel_name"])
    else:
        names = short_names([str(n) for n in frame["kernel_name"]])
    if not has_runs(frame):
        return names
    runs = frame["run"].astype("string").fillna("-").tolist()
    return [f"{run}: {name}" for run, name in zip(runs, names)]


def advise(analysis: Any, table: KernelTable | pd.DataFrame | None = None, *, diagnoses: Diagnoses | None = None,
           top: int | None = None) -> pd.DataFrame:
    """Rank the analysis rows by ``savable_time_s`` (s), largest first, with one sentence of advice each.

    Rows whose savable time is unknown come last, ordered by time. ``diagnoses`` may be
    passed when already computed (else :func:`diagnose` runs on ``analysis`` and ``table``).
    ``top`` keeps the first rows only. Columns: :data:`ADVICE_COLUMNS` (``label`` is the
    short kernel name, distinct for distinct kernels, after its run when the table holds several).
    """
    frame = analysis.frame
    out = pd.DataFrame({
        "kernel_name": frame["kernel_name"].astype("string"),
        "label": _labels(analysis),
        "phase": _col(frame, "phase").astype("string"),
        "launches": _col(frame, "launches"),
        "time_s": _col(frame, "time_s").astype(float),
        "time_share": _col(frame, "time_share").astype(float),
        "savable_time_s": _col(frame, "savable_time_s").astype(float),
        "pct_of_roofline": _col(frame, "pct_of_roofline").astype(float),
        "bound": _col(frame, "bound").astype("string"),
    }, index=frame.index)
    out = out.sort_values(["savable_time_s", "time_s"], ascending=[False, False], na_position="last", kind="stable")
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    if top is not None:
        out = out.head(top)
    # the diagnoses of the rows kept only (a profile of 1e6 launches has hundreds of kernels)
    diag = diagnoses if diagnoses is not None else diagnose(analysis, table, rows=None if top is None else out.index)
    by_index = {k.index: k for k in diag.kernels}
    kept = [by_index.get(i) for i in out.index]
    out["limiter"] = pd.array([k.limiter if k is not None else None for k in kept], dtype="string")
    out["limiter_label"] = [k.limiter_label if k is not None else "unknown" for k in kept]
    out["reason"] = [k.reason if k is not None else "" for k in kept]
    infos = [k.limiter_info if k is not None else None for k in kept]
    out["helps"] = [(k.sentence if k is not None and k.limiter == "inconsistent" else info.helps)
                    if info is not None else "" for k, info in zip(kept, infos)]
    out["advice"] = [k.sentence if k is not None else "" for k in kept]
    out.index.name = "row"
    return out.reset_index()


def limiter_shares(advice: pd.DataFrame) -> pd.Series:
    """Share of the total time per limiter label (0..1), largest first."""
    t = advice["time_s"].astype(float)
    total = t.sum(min_count=1)
    if not np.isfinite(total) or total <= 0:
        return pd.Series(dtype=float)
    return (t.groupby(advice["limiter_label"]).sum() / total).sort_values(ascending=False)


def advice_table(advice: pd.DataFrame, *, top: int | None = 10, title: str | None = "What to work on") -> Any:
    """A rich Table of the ranked advice (rank, kernel, time, savable, limiter, what usually helps)."""
    from rich.table import Table
    from rich.text import Text

    rows = advice if top is None else advice.head(top)
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("kernel", overflow="fold", max_width=48)
    table.add_column("time", justify="right")
    table.add_column("share", justify="right")
    table.add_column("savable", justify="right")
    table.add_column("limited by")
    table.add_column("what usually helps", overflow="fold", max_width=60)
    from roofline.guidance.rules import LIMITERS

    for _, r in rows.iterrows():
        name = str(r["label"])
        if isinstance(r["phase"], str) and r["phase"]:
            name = f"[{r['phase']}] {name}"
        share = r["time_share"]
        helps = r["helps"] if isinstance(r["limiter"], str) and r["limiter"] in LIMITERS else "-"
        table.add_row(str(r["rank"]), Text(name), format_time(r["time_s"]),
                      f"{share:.1%}" if np.isfinite(share) else "-", format_time(r["savable_time_s"]),
                      Text(str(r["limiter_label"])), Text(helps))
    return table


def advice_renderable(analysis: Any, table: KernelTable | pd.DataFrame | None = None, *, top: int = 5,
                      diagnoses: Diagnoses | None = None) -> Any:
    """The terminal's "what to work on" table for ``roofline analyze`` (rich renderable)."""
    return advice_table(advise(analysis, table, diagnoses=diagnoses, top=top), top=top)

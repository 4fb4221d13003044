"""Production time against Nsight Compute's replay time (:class:`~roofline.analysis.replay.ReplayTimes`), for
people (a terminal table) and for JSON (plain data)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from roofline.analysis.replay import ReplayTimes
from roofline.kernels.labels import label_map, short_name
from roofline.units import format_time

#: Kernels listed under the classes.
KERNELS_SHOWN = 10


def _ratio(value: float) -> str:
    return f"{value:.2f}x" if math.isfinite(value) else "-"


def replay_renderable(replay: ReplayTimes, *, top: int = KERNELS_SHOWN, labels: Mapping[str, str] | None = None) -> Table:
    """The table: every class of kernel (what bounds it), then the ``top`` longest kernels, each with its
    launches, production and replay seconds and their ratio; the caption says what the ratio means and
    how many launches had no replay time. ``labels``: kernel name -> label, the analysis's own
    (:attr:`~roofline.analysis.result.Analysis.labels`), so that a kernel is named as in its other tables."""
    table = Table(title="Production time against Nsight Compute's replay (launches with both)", title_justify="left")
    for header in ("kernels", "launches", "production", "replay", "production / replay"):
        table.add_column(header, justify="left" if header == "kernels" else "right")
    table.add_row("all", str(replay.launches), format_time(replay.time_s), format_time(replay.replay_time_s),
                  _ratio(replay.ratio))
    for r in replay.classes.itertuples(index=False):
        table.add_row(f"bound {r.bound}", str(r.launches), format_time(r.time_s), format_time(r.replay_time_s),
                      _ratio(r.ratio))
    table.add_section()
    kernels = replay.kernels.head(top)
    labels = labels if labels is not None else label_map(str(n) for n in replay.kernels["kernel_name"])
    runs = "run" in kernels.columns
    for r in kernels.to_dict("records"):
        name = labels.get(str(r["kernel_name"])) or short_name(str(r["kernel_name"]))
        table.add_row(f"{r['run']}: {name}" if runs else name, str(r["launches"]), format_time(r["time_s"]),
                      format_time(r["replay_time_s"]), _ratio(r["ratio"]))
    left = f"; {replay.left_out} launch{'es' if replay.left_out != 1 else ''} without a replay time (unmatched) left out" \
        if replay.left_out else ""
    table.caption = ("production: the timeline's time; replay: the counting run's (each kernel alone, caches flushed); "
                     f"above 1x the kernel ran slower in the program than in the replay{left}")
    table.caption_justify = "left"
    return table


def replay_dict(replay: ReplayTimes) -> dict[str, Any]:
    """``{"launches", "time_s", "replay_time_s", "ratio", "left_out", "classes": [{"bound", ...}], "kernels":
    [{"run"?, "name", ...}]}`` (seconds; the ratio production / replay, None when unknown); docs/json-schema.md."""
    def rows(frame: Any, keys: dict[str, str]) -> list[dict[str, Any]]:
        return [{**{name: r[k] for k, name in keys.items()}, "launches": int(r["launches"]), "time_s": float(r["time_s"]),
                 "replay_time_s": float(r["replay_time_s"]),
                 "ratio": float(r["ratio"]) if math.isfinite(r["ratio"]) else None}
                for r in frame.to_dict("records")]

    kernel_keys = {k: name for k, name in (("run", "run"), ("kernel_name", "name")) if k in replay.kernels.columns}
    return {"launches": replay.launches, "time_s": replay.time_s, "replay_time_s": replay.replay_time_s,
            "ratio": replay.ratio if math.isfinite(replay.ratio) else None, "left_out": replay.left_out,
            "classes": rows(replay.classes, {"bound": "bound"}), "kernels": rows(replay.kernels, kernel_keys)}

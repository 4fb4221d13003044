"""Where a job's time went across its ranks, for people: the terminal table of a
:class:`~roofline.analysis.rank_breakdown.RankBreakdown` and its plain data for JSON (``breakdown_ranks``)."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from roofline.analysis.breakdown import CAUSES
from roofline.analysis.rank_breakdown import IDLE, RankBreakdown, RankWindow, Spread
from roofline.units import format_time
from roofline.views.time_breakdown import CAUSE_LEGEND, WINDOW_WORDS

#: The JSON document's schema name (docs/json-schema.md).
SCHEMA = "roofline.breakdown/1"


def _spread(s: Spread) -> str:
    return f"{format_time(s.mean_s)}\n{format_time(s.min_s)} .. {format_time(s.max_s)}"


def _straggler(w: RankWindow) -> str:
    ratio = w.straggler_ratio
    times = f" (x{ratio:.2f})" if math.isfinite(ratio) else ""
    return (f"{w.straggler_rank} GPU {w.straggler_device}\n+{format_time(w.straggler_excess_s)} vs median"
            f"{times}")


def _idle(w: RankWindow) -> str:
    parts = w.parts.get(IDLE, {})
    return "\n".join(f"{cause} {format_time(parts[cause])}" for cause in CAUSES if cause in parts) or "-"


def shown_windows(split: RankBreakdown, top: int | None) -> list[RankWindow]:
    """The windows a view shows: the ``top`` whose straggler is furthest above the median (all when
    None), in order."""
    if top is None or len(split.windows) <= top:
        return list(split.windows)
    keep = set(sorted(range(len(split.windows)), key=lambda i: -split.windows[i].straggler_excess_s)[:top])
    return [w for i, w in enumerate(split.windows) if i in keep]


def rank_breakdown_renderable(split: RankBreakdown, top: int | None = 10, notes: bool = True) -> Group:
    """The terminal table: per window across the ranks, the GPUs that have it, the mean and the range
    (smallest .. largest) of wall, kernel, exposed communication and idle time, the straggler against
    the median, and idle by cause summed over the GPUs; ``top``: windows shown (the largest
    stragglers). Notes follow unless ``notes`` is false."""
    table = Table(title=f"Where the time went across {len(split.ranks)} ranks: "
                        f"{WINDOW_WORDS.get(split.window, split.window)} (mean, then min .. max over the GPUs)",
                  title_justify="left", show_lines=True)
    for name, justify in (("window", "left"), ("GPUs", "right"), ("wall", "right"), ("kernels", "right"),
                          ("communication\n(exposed)", "right"), ("idle", "right"),
                          ("straggler (longest wall)", "left"), ("idle by cause\n(summed)", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    windows = shown_windows(split, top)
    for w in windows:
        table.add_row(w.name, str(w.members), _spread(w.wall), _spread(w.kernel), _spread(w.communication),
                      _spread(w.idle), _straggler(w), _idle(w))
    lines: list[Any] = [table, Text(CAUSE_LEGEND)]
    left = len(split.windows) - len(windows)
    if left:
        lines.append(Text(f"{left} window{'s' if left != 1 else ''} with smaller stragglers not shown "
                          "(--top, or --json for all)"))
    lines.append(Text(f"combined by {split.engine}"))
    if notes:
        lines += [Text(f"note: {n}") for n in split.notes]
    return Group(*lines)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def rank_breakdown_dict(split: RankBreakdown) -> dict[str, Any]:
    """The breakdown across ranks as plain data (SI units; JSON's ``breakdown_ranks``, docs/json-schema.md),
    each rank's own windows included."""
    per_rank: dict[str, dict[tuple[int, str, int], dict[str, Any]]] = {}
    for r in split.rows.itertuples(index=False):
        window = per_rank.setdefault(str(r.rank), {}).setdefault(
            (int(r.device), str(r.name), int(r.start_ns)),
            {"device": int(r.device), "key": str(r.key), "name": str(r.name), "start_ns": int(r.start_ns),
             "wall_s": None, "kernel_s": {}, "communication_s": {}, "idle_s": {}, "overlap_s": None,
             "hidden_communication_s": None})
        field = {"wall": "wall_s", "overlap": "overlap_s", "hidden communication": "hidden_communication_s"}
        if r.category in field:
            window[field[str(r.category)]] = float(r.seconds)
        else:
            window[f"{r.category}_s"][str(r.part)] = float(r.seconds)
    return {
        "window": split.window,
        "engine": split.engine,
        "ranks": [{"rank": rank, "windows": list(per_rank.get(rank, {}).values())} for rank in split.ranks],
        "windows": [{
            "key": w.key, "name": w.name, "members": w.members,
            **{q: {"mean_s": s.mean_s, "min_s": s.min_s, "max_s": s.max_s}
               for q, s in (("wall", w.wall), ("kernel", w.kernel), ("communication", w.communication),
                            ("idle", w.idle))},
            "median_wall_s": w.median_wall_s,
            "straggler": {"rank": w.straggler_rank, "device": w.straggler_device, "wall_s": w.wall.max_s,
                          "excess_s": w.straggler_excess_s, "ratio": _finite(w.straggler_ratio)},
            "kernel_s": dict(w.parts.get("kernel", {})), "communication_s": dict(w.parts.get("communication", {})),
            "idle_s": dict(w.parts.get(IDLE, {})),
        } for w in split.windows],
        "notes": list(split.notes),
    }


def rank_breakdown_json(split: RankBreakdown) -> str:
    """The JSON document of ``roofline analyze RANK_FILES... --breakdown WINDOW --json`` (:data:`SCHEMA`)."""
    import json

    return json.dumps({"schema": SCHEMA, "breakdown_ranks": rank_breakdown_dict(split)}, indent=2,
                      allow_nan=False) + "\n"

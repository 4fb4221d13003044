"""Where a timeline's time went, for people: the terminal table of a
:class:`~roofline.analysis.breakdown.Breakdown` and its rows as plain data for JSON and charts."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from roofline.analysis.breakdown import Breakdown, Window
from roofline.kernels.labels import short_names
from roofline.units import format_time

#: What each window kind is called in captions.
WINDOW_WORDS = {"run": "the whole run", "phase": "each NVTX phase", "step": "each step"}
#: What each idle cause means, said under the table.
CAUSE_LEGEND = ("idle causes: synchronization = a host synchronization returned in the gap; launch-bound = the GPU "
                "waited for the host to issue the next work; other = the work was issued already (a dependency, or "
                "the launch latency); unknown = its launching call is not in the file")
#: Savable items shown per window.
SAVABLE_SHOWN = 3


def _share(seconds: float, wall: float) -> str:
    return f"{seconds / wall:.1%}" if wall > 0 else "-"


def _parts(parts: dict[str, float], counts: dict[str, int] | None = None) -> list[str]:
    lines = []
    for key, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        n = f", {counts[key]} gap{'s' if counts[key] != 1 else ''}" if counts and key in counts else ""
        lines.append(f"  {key.replace(' (no counters)', '')} {format_time(seconds)}{n}")
    return lines


def _cell(total: float, wall: float, lines: list[str]) -> str:
    return "\n".join([f"{format_time(total)} ({_share(total, wall)})", *lines])


def _savable(window: Window) -> str:
    shown = window.savable[:SAVABLE_SHOWN]
    names = short_names([s.what for s in shown]) if shown else []
    return "\n".join(f"{format_time(s.seconds)} {name}" for s, name in zip(shown, names)) or "-"


def shown_windows(breakdown: Breakdown, top: int | None) -> list[Window]:
    """The windows a view shows: the ``top`` longest per device (all when None), in time order."""
    out: list[Window] = []
    for device in sorted({w.device for w in breakdown.windows}):
        mine = [w for w in breakdown.windows if w.device == device]
        keep = sorted(mine, key=lambda w: -w.wall_s)[:top] if top is not None else mine
        out += sorted(keep, key=lambda w: (w.start_ns, w.name))
    return out


def breakdown_renderable(breakdown: Breakdown, top: int | None = 10, notes: bool = True) -> Group:
    """The terminal table: per device and window, wall time, kernel time by bound, exposed communication
    and copies by kind, idle by cause (with the number of gaps), overlap, and the largest savable times;
    ``top``: windows per device (the longest). Notes follow unless ``notes`` is false."""
    table = Table(title=f"Where the time went: {WINDOW_WORDS.get(breakdown.window, breakdown.window)}, per device",
                  title_justify="left", show_lines=True)
    for name, justify in (("device", "right"), ("window", "left"), ("wall", "right"), ("kernels", "left"),
                          ("communication & copies\n(exposed)", "left"), ("idle", "left"),
                          ("overlap", "right"), ("savable (upper bounds)", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    windows = shown_windows(breakdown, top)
    for w in windows:
        wall = w.wall_s
        overlap = format_time(w.overlap_s) + (f"\n{format_time(w.hidden_communication_s)} comm hidden"
                                              if w.hidden_communication_s > 0 else "")
        table.add_row(str(w.device), w.name, format_time(wall),
                      _cell(w.kernel_total_s, wall, _parts(dict(w.kernel_s))),
                      _cell(w.communication_total_s, wall, _parts(dict(w.communication_s))),
                      _cell(w.idle_total_s, wall, _parts(dict(w.idle_s), dict(w.gaps))),
                      overlap, _savable(w))
    lines: list[Any] = [table, Text(CAUSE_LEGEND)]
    left = len(breakdown.windows) - len(windows)
    if left:
        lines.append(Text(f"{left} shorter window{'s' if left != 1 else ''} not shown (--top, or --json for all)"))
    if notes:
        lines += [Text(f"note: {n}") for n in breakdown.notes]
    return Group(*lines)


def breakdown_dict(breakdown: Breakdown) -> dict[str, Any]:
    """The breakdown as plain data (SI units; JSON's ``breakdown``, docs/json-schema.md)."""
    return {
        "window": breakdown.window,
        "bounds_known": breakdown.bounds_known,
        "windows": [{
            "device": w.device, "name": w.name, "start_ns": w.start_ns, "end_ns": w.end_ns, "wall_s": w.wall_s,
            "kernel_s": dict(w.kernel_s), "communication_s": dict(w.communication_s), "idle_s": dict(w.idle_s),
            "gaps": dict(w.gaps), "overlap_s": w.overlap_s, "hidden_communication_s": w.hidden_communication_s,
            "savable": [{"what": s.what, "kind": s.kind, "seconds": s.seconds} for s in w.savable],
        } for w in breakdown.windows],
        "notes": list(breakdown.notes),
    }

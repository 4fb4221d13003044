"""Terminal tables of a projection (rich): the kernels that get faster there, those that get slower, and the phases.

Also the few texts every view of a projection shares (the HTML page and the charts use them):
a speed-up (``4.04x``), its range (``3.25–4.39x``; ``0–4.39x`` when the time there may be
unbounded, ``≥ 3.25x`` when it may fall to nothing), a time range (``888 µs–1.2 ms``, or
``888 µs–unbounded``), the coverage, what gets slower (``42 kernels, 88.7% of the time, get slower
there: +1.98 ms``) and the chart title. Views take a :class:`~roofline.projection.Projection` and
return data; the CLI prints.

Kernels that get slower there are a section of their own, never ranked below the gainers: a program
whose every kernel gains a little while a few lose a lot would otherwise show only gainers under a
``top`` cut. Each section gets its own ``top``, and what a cut leaves out is a row with its count and
times.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from rich.table import Table
from rich.text import Text

from roofline.errors import InputError
from roofline.projection import Projection
from roofline.projection.model import slower_mask
from roofline.units import counted, format_number, format_time
from roofline.kernels.labels import short_names
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords, bound_words

UNKNOWN = "-"
#: Orders of :func:`projection_table`, in each section: ``gain``, by the change of time there, largest first
#: (the most time saved among the kernels that get faster, the most time lost among those that get slower);
#: ``time``, by today's time.
SORTS = ("gain", "time")


def _finite(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def speedup_text(value: Any) -> str:
    """``4.04x`` (three significant digits, never an exponent), ``-`` when unknown."""
    v = _finite(value)
    if v is None:
        return UNKNOWN
    return "∞" if math.isinf(v) else f"{format_number(v)}x"


def speedup_range_text(low: Any, high: Any) -> str:
    """The speed-up's range: ``3.25–4.39x``; a low end of 0 (the time there may be unbounded) stays
    ``0–4.39x``; an infinite high end (the time there may fall to nothing) gives ``≥ 3.25x``."""
    lo, hi = _finite(low), _finite(high)
    if lo is None or hi is None:
        return UNKNOWN
    if math.isinf(hi):
        return "unbounded" if lo <= 0 else f"≥ {format_number(lo)}x"
    return f"{format_number(lo)}–{format_number(hi)}x"


def time_range_text(low: Any, high: Any) -> str:
    """``888 µs–1.2 ms``; an infinite high end is ``unbounded``."""
    lo, hi = _finite(low), _finite(high)
    if lo is None or hi is None:
        return UNKNOWN
    return f"{format_time(lo)}–{'unbounded' if math.isinf(hi) else format_time(hi)}"


def share_text(value: Any) -> str:
    """A share of the time: ``100%`` when whole, else one decimal (``99.6%``), ``-`` when unknown."""
    v = _finite(value)
    if v is None:
        return UNKNOWN
    return "100%" if v == 1.0 else f"{v:.1%}"


def coverage_text(proj: Projection) -> str:
    """``5 of 5 kernels, 100% of the time projected``."""
    tot = proj.totals
    n = int(tot["kernels"]) + int(tot["unprojected"])
    return f"{int(tot['kernels'])} of {counted(n, 'kernel')}, {share_text(tot['coverage'])} of the time projected"


def slower_text(totals: dict[str, float]) -> str:
    """What gets slower there, from :attr:`~roofline.projection.Projection.totals` (or a phase's):
    ``42 kernels, 88.7% of the time, get slower there: +1.98 ms`` (the share of the time of all kernels,
    the time they add there), or ``no kernel gets slower there``."""
    n = int(totals["slower"])
    if not n:
        return "no kernel gets slower there"
    return (f"{counted(n, 'kernel')}, {share_text(totals['slower_share'])} of the time, "
            f"{'gets' if n == 1 else 'get'} slower there: +{format_time(totals['slower_added_s'])}")


def projection_title(proj: Projection, sep: str = " ") -> str:
    """``V100-SXM2 → H100 SXM5 80GB: 3.9 ms → 965 µs projected (4.04x, range 3.25–4.39x)``; the time
    is that of the projected kernels, their share added when some could not be projected, and what
    gets slower there when any kernel does (:func:`slower_text`). ``sep`` goes between the machines and
    the times, and before what gets slower (a newline for a narrow chart)."""
    tot = proj.totals
    text = (f"{proj.source.name} → {proj.target.name}:{sep}{format_time(tot['time_s'])} → "
            f"{format_time(tot['projected_time_s'])} projected ({speedup_text(tot['speedup'])}, "
            f"range {speedup_range_text(tot['speedup_low'], tot['speedup_high'])})")
    if tot["unprojected"]:
        text += f", {share_text(tot['coverage'])} of the time"
    if tot["slower"]:
        text += f"{';' if sep == ' ' else ''}{sep}{slower_text(tot)}"
    return text


def side_words(proj: Projection) -> tuple[VendorWords, VendorWords]:
    """The words of each side: the profile's vendor here, the target's there (an AMD GPU's: HBM, Matrix FP16)."""
    return proj.source_analysis.words, proj.target_analysis.words


def limiter_text(bound: Any, bound_target: Any,
                 words: tuple[VendorWords, VendorWords] = (NVIDIA_WORDS, NVIDIA_WORDS)) -> str:
    """``dram → tensor_fp16``: the limiter here, then there (``-`` for one unknown), each in its side's
    ``words`` (:func:`side_words`: ``dram → Matrix FP16`` onto an AMD GPU)."""
    def one(v: Any, side: VendorWords) -> str:
        unknown = v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
        return UNKNOWN if unknown else bound_words(str(v), side)

    return f"{one(bound, words[0])} → {one(bound_target, words[1])}"


def sections(proj: Projection, sort: str = "gain") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The projected kernels that get faster there or stay the same, those that get slower (``gain_s`` <
    0), each ordered by ``sort`` (:data:`SORTS`), and the unprojected ones by time."""
    if sort not in SORTS:
        raise InputError(f"unknown sort {sort!r} for a projection; choose one of {', '.join(SORTS)}")
    f = proj.frame
    ok = f["projected"].to_numpy(dtype=bool)
    slow = slower_mask(f)
    if sort == "gain":
        faster = f[ok & ~slow].sort_values("gain_s", ascending=False, kind="stable")
        slower = f[slow].sort_values("gain_s", ascending=True, kind="stable")
    else:
        faster = f[ok & ~slow].sort_values("time_s", ascending=False, kind="stable", na_position="last")
        slower = f[slow].sort_values("time_s", ascending=False, kind="stable", na_position="last")
    left = f[~ok].sort_values("time_s", ascending=False, kind="stable", na_position="last")
    return faster, slower, left


def section_title(rows: pd.DataFrame, slower: bool, n: int | None = None) -> str:
    """``get slower``; for the others ``get faster``, ``stay the same`` (projected at today's time) or
    ``get faster or stay the same``; with ``n`` 1, the verbs agree with one kernel (``gets slower``)."""
    if slower:
        text = "get slower"
    else:
        same = int((rows["gain_s"].to_numpy(dtype=float) == 0).sum())
        text = "get faster" if not same else ("stay the same" if same == len(rows) else "get faster or stay the same")
    return text.replace("get ", "gets ").replace("stay ", "stays ") if n == 1 else text


def kernel_labels(proj: Projection, rows: pd.DataFrame) -> list[str]:
    """Short kernel names, ``[phase] name`` when the projection is by phase and the kernel has one."""
    names = short_names([str(n) for n in rows["kernel_name"]])
    if "phase" not in proj.keys:
        return names
    return [f"[{p}] {n}" if isinstance(p, str) else n for p, n in zip(rows["phase"], names)]


def _sum_cells(rows: pd.DataFrame) -> list[str]:
    """Today's time and the time there of ``rows``, and their speed-up (the columns after ``kernel``)."""
    here, there = float(rows["time_s"].sum()), float(rows["projected_time_s"].sum())
    return [format_time(here), "", format_time(there), "", speedup_text(here / there if there > 0 else math.nan), ""]


def projection_table(proj: Projection, *, top: int | None = 20, sort: str = "gain") -> Table:
    """The kernels that get faster there ranked by projected gain, then those that get slower ranked by
    the time they lose (``sort="time"``: each by today's time), the ``top`` of each; then the kernels that
    could not be projected with why (the ``top`` longest). When some kernel gets slower, each section opens
    with a row of its count and summed times, and a cut section ends with a row of what it left out. A
    footer row with the program's totals and what gets slower there (:func:`slower_text`); a caption with
    the coverage. ``top=None``: every kernel."""
    faster, slower, left = sections(proj, sort)
    tot = proj.totals
    words = side_words(proj)
    caption = coverage_text(proj)
    if top is not None and (len(faster) > top or len(slower) > top):
        caption += f"; top {top} by {sort} shown"
    t = Table(title=f"Projection: {proj.source.name} → {proj.target.name}", title_justify="left", show_footer=True,
              caption=caption, caption_justify="left")
    t.add_column("kernel", overflow="fold", max_width=44, footer="program")
    t.add_column("time here", justify="right", no_wrap=True, footer=format_time(tot["time_s"]))
    t.add_column("best there", justify="right", no_wrap=True, footer=format_time(tot["best_time_s"]))
    t.add_column("projected there", justify="right", no_wrap=True, footer=format_time(tot["projected_time_s"]))
    t.add_column("range there", justify="right", no_wrap=True,
                 footer=time_range_text(tot["low_time_s"], tot["high_time_s"]))
    t.add_column("speed-up", justify="right", no_wrap=True, footer=speedup_text(tot["speedup"]))
    t.add_column("speed-up range", justify="right", no_wrap=True,
                 footer=speedup_range_text(tot["speedup_low"], tot["speedup_high"]))
    t.add_column("limiter", no_wrap=True)
    t.add_column("notes", overflow="fold", max_width=36, footer=slower_text(tot))
    cut = [(rows, rows if top is None else rows.head(top), is_slow)
           for rows, is_slow in ((faster, False), (slower, True)) if len(rows)]
    rest = left if top is None else left.head(top)
    # one set of labels: names that collide get told apart
    labels = kernel_labels(proj, pd.concat([shown for _, shown, _ in cut] + [rest]))
    at = 0
    headed = len(slower) > 0
    for i, (rows, shown, is_slow) in enumerate(cut):
        color = "red" if is_slow else "green"
        if i:
            t.add_section()
        if headed:
            t.add_row(Text(f"{section_title(rows, is_slow)} there ({len(rows)})", style=f"bold {color}"),
                      *_sum_cells(rows), "", "")
        for label, (_, r) in zip(labels[at:], shown.iterrows()):
            speedup = _finite(r["speedup"])
            style = "green" if speedup is not None and speedup > 1 else ("red" if speedup is not None and speedup < 1
                                                                          else "")
            t.add_row(Text(label), format_time(r["time_s"]), format_time(r["best_time_s"]),
                      format_time(r["projected_time_s"]), time_range_text(r["low_time_s"], r["high_time_s"]),
                      Text(speedup_text(r["speedup"]), style=style),
                      speedup_range_text(r["speedup_low"], r["speedup_high"]),
                      limiter_text(r["bound"], r["bound_target"], words), ", ".join(r["notes"]) or UNKNOWN)
        at += len(shown)
        if len(shown) < len(rows):
            more = rows.iloc[len(shown):]
            t.add_row(Text(f"… {len(more)} more {section_title(more, is_slow, len(more))} there", style="dim"),
                      *_sum_cells(more), "", "")
    if len(rest):
        t.add_section()
        for label, (_, r) in zip(labels[at:], rest.iterrows()):
            t.add_row(Text(label, style="dim"), format_time(r["time_s"]), *[UNKNOWN] * 5,
                      limiter_text(r["bound"], r["bound_target"], words), Text(f"not projected: {r['why']}", style="dim"))
        if len(rest) < len(left):
            t.add_row(Text(f"… {len(left) - len(rest)} more not projected", style="dim"), *[""] * 8)
    return t


#: Headers of the per-phase tables (terminal and HTML), after ``phase``.
PHASE_HEADERS = ("time here", "projected there", "range there", "speed-up", "speed-up range", "kernels projected",
                 "slower there")


def phase_cells(r: pd.Series) -> list[str]:
    """A row of :meth:`~roofline.projection.Projection.phase_totals` as :data:`PHASE_HEADERS` texts: the
    times and speed-up of its projected kernels (``-`` when none could be), then ``2 of 3, 75.0%``, then
    what gets slower there: ``2 kernels, 12.0%: +35 µs`` (``none``)."""
    n = int(r["kernels"]) + int(r["unprojected"])
    coverage = f"{int(r['kernels'])} of {n}, {share_text(r['coverage'])}"
    slow = int(r["slower"])
    slower = (f"{counted(slow, 'kernel')}, {share_text(r['slower_share'])}: +{format_time(r['slower_added_s'])}"
              if slow else "none")
    if not int(r["kernels"]):
        return [UNKNOWN] * 5 + [coverage, slower]
    return [format_time(r["time_s"]), format_time(r["projected_time_s"]),
            time_range_text(r["low_time_s"], r["high_time_s"]), speedup_text(r["speedup"]),
            speedup_range_text(r["speedup_low"], r["speedup_high"]), coverage, slower]


def phase_table(proj: Projection) -> Table | None:
    """The program per phase (its projected kernels: time here, projected there, range, speed-up,
    coverage, what gets slower there); None when the projection is not by phase."""
    if "phase" not in proj.keys:
        return None
    t = Table(title="Per phase (the projected kernels)", title_justify="left")
    t.add_column("phase", overflow="fold", max_width=32)
    for header in PHASE_HEADERS:
        t.add_column(header, justify="right", no_wrap=True)
    for _, r in proj.phase_totals().iterrows():
        t.add_row(Text(str(r["phase"])), *phase_cells(r))
    return t

"""The projection as one self-contained, offline HTML page.

Summary (the two machines and their ceilings side by side, clocks, the program's projected time
with its range and speed-up, what gets slower there, the phases), the interactive chart (each kernel
here with an arrow to there), the kernels that get faster there ranked by projected gain, those that
get slower ranked by the time they lose (a section of their own, always present, so that no cut of the
gainers hides them), each kernel's notes, what the note codes mean, the projection's own notes and the
kernels that could not be projected. plotly.js is inlined; nothing
is fetched from the network. The look is the analysis report's (:data:`~roofline.views.report.assets.CSS`).

Kernel names and notes are untrusted text (C++ templates full of ``<``, ``>`` and ``&``): every one
goes through :func:`html.escape`; the chart's JSON comes from plotly, which writes ``<`` and ``>``
as ``\\u003c`` / ``\\u003e`` escapes.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from roofline.projection import NOTE_CODES, Projection
from roofline.units import counted, format_si, format_time
from roofline.views.projection.chart import projection_plotly
from roofline.views.projection.table import (
    PHASE_HEADERS,
    UNKNOWN,
    coverage_text,
    kernel_labels,
    limiter_text,
    phase_cells,
    section_title,
    sections,
    side_words,
    slower_text,
    speedup_range_text,
    speedup_text,
    time_range_text,
)
from roofline.views.report.assets import CSS
from roofline.views.chart.style import compute_label, compute_unit, level_label

#: Element id of the chart (fixed, so that the page is the same for the same projection).
CHART_ID = "projection-chart"
#: Element ids of the two kernel tables: those that get faster there (styled as the report's ``#kernels``)
#: and those that get slower.
FASTER_ID, SLOWER_ID = "kernels", "slower-kernels"
#: The report's look of ``#kernels`` for the second kernel table.
EXTRA_CSS = (f"#{SLOWER_ID} td.name {{ min-width: 160px; }} #{SLOWER_ID} th, #{SLOWER_ID} td {{ padding: 4px 5px; }} "
             f"#{SLOWER_ID} th.num {{ white-space: normal; }}")


def _e(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _ratio(there: Any, here: Any) -> str:
    try:
        r = float(there) / float(here)
    except (TypeError, ValueError, ZeroDivisionError):
        return UNKNOWN
    return f"{r:.3g}x" if math.isfinite(r) else UNKNOWN


def _table(headers: list[tuple[str, bool]], rows: list[list[tuple[str, str]]], table_id: str = "") -> str:
    """An HTML table: ``headers`` (text, numeric); each cell (escaped text, CSS class). Texts are
    escaped here; a class of ``name`` marks a kernel name."""
    ident = f" id='{table_id}'" if table_id else ""
    head = "".join(f"<th{' class=num' if num else ''}>{_e(h)}</th>" for h, num in headers)
    body = "".join("<tr>" + "".join(f"<td class='{cls}'>{text}</td>" if cls else f"<td>{text}</td>"
                                    for text, cls in row) + "</tr>" for row in rows)
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cards(proj: Projection) -> str:
    tot = proj.totals
    cards = [
        ("here (measured)", proj.source.name),
        ("there (projected)", proj.target.name),
        ("time here", format_time(tot["time_s"])),
        ("projected there", format_time(tot["projected_time_s"])),
        ("range there", time_range_text(tot["low_time_s"], tot["high_time_s"])),
        ("speed-up", f"{speedup_text(tot['speedup'])} ({speedup_range_text(tot['speedup_low'], tot['speedup_high'])})"),
        ("projected", coverage_text(proj)),
        ("slowdowns", slower_text(tot)),
    ]
    inner = "".join(f"<div class='card'><div class='k'>{_e(k)}</div><div class='v'>{_e(v)}</div></div>"
                    for k, v in cards)
    return f"<div class='cards'>{inner}</div>"


def _machines(proj: Projection) -> str:
    """The two machines' ceilings side by side, with the ratio there / here."""
    src, tgt = proj.source, proj.target
    here_words, there_words = side_words(proj)

    def both(a: str, b: str) -> str:  # one name when the two vendors' agree: 'DRAM', else 'DRAM / HBM'
        return a if a == b else f"{a} / {b}"

    rows = [[(_e(both(here_words.clock, there_words.clock)), ""), (_e(format_si(src.sm_clock_hz, "Hz")), "num"),
             (_e(format_si(tgt.sm_clock_hz, "Hz")), "num"), (_e(_ratio(tgt.sm_clock_hz, src.sm_clock_hz)), "num")]]
    for lv in proj.levels:
        here, there = src.memory.get(lv), tgt.memory.get(lv)
        name = both(level_label(lv, here_words.levels), level_label(lv, there_words.levels))
        rows.append([(_e(f"{name} bandwidth"), ""), (_e(format_si(here, "B/s")), "num"),
                     (_e(format_si(there, "B/s")), "num"), (_e(_ratio(there, here)), "num")])
    for key in sorted(src.compute, key=lambda k: -src.compute[k]):  # the ceilings the kernels had here
        here, there = src.compute.get(key), tgt.compute.get(key)
        name = both(compute_label(key, here_words), compute_label(key, there_words))
        rows.append([(_e(name), ""), (_e(format_si(here, compute_unit(key))), "num"),
                     (_e(format_si(there, compute_unit(key))), "num"), (_e(_ratio(there, here)), "num")])
    only_there = [compute_label(k, there_words) for k in sorted(tgt.compute, key=lambda k: -tgt.compute[k])
                  if k not in src.compute]
    note = ("Here: the ceilings at the kernels' own clock; there: at the target's clock, a substitute ceiling "
            "standing in for a precision it lacks (see the notes).")
    if only_there:
        note += f" Only there: {', '.join(only_there)}."
    headers = [("ceiling", False), (f"here: {src.name}", True), (f"there: {tgt.name}", True), ("there / here", True)]
    return f"<p class='notes'>{_e(note)}</p>" + _table(headers, rows)


def _phases(proj: Projection) -> str:
    if "phase" not in proj.keys:
        return "<p class='notes'>Projected by kernel name: no per-phase totals.</p>"
    rows = [[(_e(r["phase"]), ""), *[(_e(text), "num") for text in phase_cells(r)]]
            for _, r in proj.phase_totals().iterrows()]
    return _table([("phase", False), *[(h, True) for h in PHASE_HEADERS]], rows)


def _name_cell(label: str, full: Any) -> tuple[str, str]:
    return f"<span title='{_e(full)}'>{_e(label)}</span>", "name"


def _kernels(proj: Projection, rows: pd.DataFrame, table_id: str) -> str:
    words = side_words(proj)
    out = []
    for i, (label, (_, r)) in enumerate(zip(kernel_labels(proj, rows), rows.iterrows()), start=1):
        codes = "".join(f"<span class='pill' title='{_e(NOTE_CODES.get(c, ''))}'>{_e(c)}</span> " for c in r["notes"])
        pct = r["pct_of_roofline"]
        out.append([(str(i), "num"), _name_cell(label, r["kernel_name"]), (_e(format_time(r["time_s"])), "num"),
                    (_e(f"{pct:.1%}" if math.isfinite(pct) else UNKNOWN), "num"),
                    (_e(format_time(r["best_time_s"])), "num"), (_e(format_time(r["projected_time_s"])), "num"),
                    (_e(time_range_text(r["low_time_s"], r["high_time_s"])), "num"),
                    (_e(speedup_text(r["speedup"])), "num"),
                    (_e(speedup_range_text(r["speedup_low"], r["speedup_high"])), "num"),
                    (_e(format_time(r["gain_s"])), "num"), (_e(limiter_text(r["bound"], r["bound_target"], words)), ""),
                    (codes or _e(UNKNOWN), "")])
    return _table([("#", True), ("kernel", False), ("time here", True), ("% of roofline here", True),
                   ("best there", True), ("projected there", True), ("range there", True), ("speed-up", True),
                   ("speed-up range", True), ("gain", True), ("limiter here → there", False), ("notes", False)],
                  out, table_id=table_id)


def _kernel_notes(proj: Projection, rows: pd.DataFrame) -> str:
    noted = rows[[bool(t) for t in rows["note_text"]]]
    if not len(noted):
        return "<p class='notes'>No kernel carries a note: the projection's assumptions held for every one.</p>"
    out = [[(_e(r["phase"]) if "phase" in proj.keys and isinstance(r["phase"], str) else "", ""),
            (_e(r["kernel_name"]), "name"), (_e(", ".join(r["notes"])), ""), (_e(r["note_text"]), "why")]
           for _, r in noted.iterrows()]
    headers = [("phase", False)] if "phase" in proj.keys else []
    if not headers:
        out = [row[1:] for row in out]
    return _table([*headers, ("kernel", False), ("codes", False), ("what the projection cannot know", False)], out)


def _codes(proj: Projection) -> str:
    used = {c for codes in proj.frame["notes"] for c in codes}
    rows = [[(f"<span class='pill'>{_e(c)}</span>", ""), (_e(text), "why")]
            for c, text in NOTE_CODES.items() if c in used]
    if not rows:
        return ""
    return "<h3>What the codes mean</h3>" + _table([("code", False), ("meaning", False)], rows)


def _unprojected(proj: Projection, left: pd.DataFrame) -> str:
    if not len(left):
        return "<p class='notes'>Every kernel was projected.</p>"
    rows = [[_name_cell(label, r["kernel_name"]), (_e(format_time(r["time_s"])), "num"), (_e(r["why"]), "why"),
             (_e(r["note_text"] or UNKNOWN), "why")]
            for label, (_, r) in zip(kernel_labels(proj, left), left.iterrows())]
    return _table([("kernel", False), ("time here", True), ("why", False), ("notes", False)], rows)


def _section(proj: Projection, rows: pd.DataFrame, top: int, slower: bool) -> str:
    """The kernels that get faster (or slower) there: the ``top`` of them, then how many more and their times."""
    if not len(rows):
        return f"<p class='notes'>No kernel {'gets slower' if slower else 'gets faster'} there.</p>"
    shown = rows.head(top)
    out = [_kernels(proj, shown, SLOWER_ID if slower else FASTER_ID)]
    if len(shown) < len(rows):
        more = rows.iloc[len(shown):]
        out.append(f"<p class='notes'>{_e(counted(len(more), 'more kernel'))} {_e(section_title(more, slower, len(more)))} "
                   f"there, not shown: {_e(format_time(more['time_s'].sum()))} here, "
                   f"{_e(format_time(more['projected_time_s'].sum()))} there.</p>")
    return "".join(out)


def projection_html(proj: Projection, *, title: str | None = None, top: int = 30) -> str:
    """The projection as one HTML document (a str): summary, chart (the ``top`` kernels by the change of
    their time), the kernels that get faster there (the ``top`` by projected gain), those that get slower
    (the ``top`` by time lost; always a section, saying so when none does), notes per kernel, the
    projection's notes and the kernels not projected."""
    title = title or f"Projection: {proj.source.name} → {proj.target.name}"
    faster, slower, left = sections(proj, "gain")
    chart = projection_plotly(proj, top=top).to_html(full_html=False, include_plotlyjs=True, div_id=CHART_ID,
                                                     config={"displaylogo": False})
    sub = (f"{counted(len(proj.frame), 'kernel')} by {'phase and name' if 'phase' in proj.keys else 'name'}; "
           "each kernel keeps the fraction of its roofline it reaches here; the range is the best case there "
           "to the slowest the notes allow")
    notes = "".join(f"<li>{_e(n)}</li>" for n in proj.notes) or "<li>none</li>"
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{CSS}{EXTRA_CSS}</style>", "</head><body><main>",
        f"<h1>{_e(title)}</h1><p class='sub'>{_e(sub)}</p>",
        "<section id='summary'><h2>Summary</h2>", _cards(proj),
        "<h3>Machines</h3>", _machines(proj), "<h3>Per phase</h3>", _phases(proj), "</section>",
        "<section id='chart'><h2>Here and there</h2>",
        f"<figure><div class='chart'>{chart}</div><figcaption class='notes'>Each kernel here (hollow) with an "
        f"arrow to its projected place there (filled), one point per memory level: the "
        f"{counted(min(top, len(proj.frame)), 'kernel')} whose time changes most, faster or slower. "
        "Kernels without FLOPs cannot sit on a log-log chart.</figcaption></figure></section>",
        "<section id='faster'><h2>Kernels that get faster there, by projected gain</h2>",
        _section(proj, faster, top, slower=False), "</section>",
        "<section id='slower'><h2>Kernels that get slower there, by time lost</h2>",
        f"<p class='notes'>{_e(slower_text(proj.totals)[:1].upper() + slower_text(proj.totals)[1:])}.</p>"
        if len(slower) else "", _section(proj, slower, top, slower=True), "</section>",
        "<section id='kernel-notes'><h2>Notes per kernel</h2>", _kernel_notes(proj, pd.concat([faster, slower])),
        _codes(proj), "</section>",
        f"<section id='notes'><h2>Notes</h2><ul class='notes'>{notes}</ul></section>",
        "<section id='unprojected'><h2>Not projected</h2>", _unprojected(proj, left), "</section>",
        "</main></body></html>",
    ])

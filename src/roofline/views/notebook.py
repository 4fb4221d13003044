"""Notebook display: a compact HTML summary of an Analysis.

The analysis knows no view: this module registers :func:`analysis_html` with IPython's HTML formatter
for :class:`~roofline.analysis.result.Analysis` (:func:`register`). :func:`roofline.analyze` does so when
it runs inside IPython or Jupyter; ``%load_ext roofline.views.notebook`` does it by hand.

The headers carry the analysis' work and its units (FLOP/s and FLOP/B, OP/s and OP/B, or warp
instructions/s and instructions per transaction). Every kernel name and note is escaped: C++
templates are full of ``<``, ``>`` and ``&``.
"""

from __future__ import annotations

import html
import math
import sys
from typing import Any

import pandas as pd

from roofline.analysis.result import Analysis
from roofline.units import counted, format_number, format_si
from roofline.views.work_words import work_labels
from roofline.views.chart.style import bound_text, level_label

#: The HTML formatter's MIME type in IPython.
HTML_MIME = "text/html"


def register(shell: Any) -> None:
    """Show every :class:`~roofline.analysis.result.Analysis` in ``shell`` (an IPython shell) as
    :func:`analysis_html`; registering again is harmless."""
    formatter = shell.display_formatter.formatters[HTML_MIME]
    formatter.for_type_by_name("roofline.analysis.result", "Analysis", analysis_html)


def register_if_interactive() -> None:
    """:func:`register` with the running IPython shell, if this process runs one (Jupyter, IPython);
    nothing otherwise, and IPython is never imported here."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and getattr(shell, "display_formatter", None) is not None:
        register(shell)


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext roofline.views.notebook``."""
    register(shell)


#: Kernels the chart cannot place that the display names (the rest are counted).
UNDRAWN_NAMED = 5


def _cell(value: float, unit: str = "", digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return html.escape(format_si(value, unit, digits))


def _pct(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def _intensity(value: float) -> str:
    """A plain decimal; '∞' for work over no traffic at the level; '-' when unknown."""
    if value is not None and isinstance(value, float) and math.isinf(value) and value > 0:
        return "∞"
    return format_number(value)


def _text(value: object) -> str:
    """Escaped text, or '-' when missing (None, NaN or <NA>)."""
    return "-" if value is None or bool(pd.isna(value)) else html.escape(str(value))


def _undrawn(analysis: Analysis, roofline: str) -> str:
    """'<p>Not on the FLOP roofline: cleanup 0.4% (0 FLOPs: ...)</p>', or '' when every kernel is placed."""
    from roofline.views.chart.rows import undrawn_kernels

    undrawn = undrawn_kernels(analysis)
    if not undrawn:
        return ""
    names = [u.label for u in undrawn[:UNDRAWN_NAMED]]
    items = "".join(f"<li>{html.escape(n)} {_pct(u.time_share)}: {html.escape(u.reason)}</li>"
                    for n, u in zip(names, undrawn))
    more = len(undrawn) - UNDRAWN_NAMED
    return (f"<p>Not on the {html.escape(roofline)}: {counted(len(undrawn), 'kernel')}</p><ul>{items}"
            + (f"<li>and {counted(more, 'more kernel')}</li>" if more > 0 else "") + "</ul>")


def analysis_html(analysis: Analysis, *, top: int = 15) -> str:
    """The summary line (with the work and its units), the notes and the top kernels as one HTML fragment;
    levels and bounds in the vendor's words (``analysis.words``)."""
    totals = analysis.totals
    words = analysis.words
    machine = analysis.machine
    labels = work_labels(analysis.work_spec)
    where = (f"{html.escape(machine.name)} ({html.escape(machine.source)})" if machine is not None
             else "no machine (no ceilings)")
    rows = analysis.ranked.head(top)
    names = analysis.kernel_labels(rows["kernel_name"].astype(str))
    head = ["kernel", "launches", "time", "share", labels.rate,
            *[f"{labels.intensity} {level_label(level, words.levels)}" for level in analysis.levels], "bound", "region",
            "% of roofline"]
    body = []
    for (_, r), name in zip(rows.iterrows(), names):
        partial = "*" if labels.partial and r.get(labels.partial) is True else ""
        cells = [
            f'<td title="{html.escape(str(r["kernel_name"]), quote=True)}">{html.escape(name)}{partial}</td>',
            f"<td>{int(r['launches']) if r['launches'] == r['launches'] else '-'}</td>",
            f"<td>{_cell(r['time_s'], 's')}</td>",
            f"<td>{_pct(r['time_share'])}</td>",
            f"<td>{_cell(r['flop_rate'], labels.rate_unit)}</td>",
            *[f"<td>{_intensity(r.get(f'ai_{level}', math.nan))}</td>" for level in analysis.levels],
            f"<td>{_text(r['bound'] if pd.isna(r['bound']) else bound_text(str(r['bound']), words))}</td>",
            f"<td>{_text(r['region'])}</td>",
            f"<td>{_pct(r['pct_of_roofline'])}</td>",
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in analysis.notes)
    work = (f"{html.escape(labels.counted)} ({html.escape(labels.rate)} against "
            f"{html.escape(labels.intensity_unit)})")
    lower = (f"* {html.escape(labels.counted)} are a lower bound (a counter was not collected). "
             if labels.partial else "")
    return (
        f"<div><p><b>{html.escape(labels.roofline[:1].upper() + labels.roofline[1:])}</b>: {counted(len(analysis), 'kernel')}, "
        f"{_cell(totals['time_s'], 's')} in {counted(totals['launches'], 'launch', 'launches')}; "
        f"work: {work}; ceilings: {where}</p>"
        "<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead>"
        "<tbody>" + "".join(body) + "</tbody></table>"
        + _undrawn(analysis, labels.roofline)
        + (f"<ul>{notes}</ul>" if notes else "")
        + f"<p><small>{lower}roofline.plot(analysis) draws the chart.</small></p></div>"
    )

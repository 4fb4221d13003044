"""Notebook display: a compact HTML summary of an Analysis (Jupyter calls ``_repr_html_``).

Every kernel name and note is escaped: C++ templates are full of ``<``, ``>`` and ``&``.
"""

from __future__ import annotations

import html
import math

from roofline.analysis.result import Analysis
from roofline.units import counted, format_number, format_si
from roofline.views.names import short_names


def _cell(value: float, unit: str = "", digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return html.escape(format_si(value, unit, digits))


def _pct(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def _intensity(value: float) -> str:
    return format_number(value)


def analysis_html(analysis: Analysis, *, top: int = 15) -> str:
    """The summary line, the notes and the top kernels as one HTML fragment."""
    totals = analysis.totals
    machine = analysis.machine
    where = (f"{html.escape(machine.name)} ({html.escape(machine.source)})" if machine is not None
             else "no machine (no ceilings)")
    rows = analysis.ranked.head(top)
    names = short_names(list(rows["kernel_name"].astype(str)))
    head = ["kernel", "launches", "time", "share", "FLOP/s",
            *[f"AI {level.upper()}" for level in analysis.levels], "bound", "region", "% of roofline"]
    body = []
    for (_, r), name in zip(rows.iterrows(), names):
        partial = "*" if bool(r.get("flops_partial", False)) else ""
        cells = [
            f'<td title="{html.escape(str(r["kernel_name"]), quote=True)}">{html.escape(name)}{partial}</td>',
            f"<td>{int(r['launches']) if r['launches'] == r['launches'] else '-'}</td>",
            f"<td>{_cell(r['time_s'], 's')}</td>",
            f"<td>{_pct(r['time_share'])}</td>",
            f"<td>{_cell(r['flop_rate'], 'FLOP/s')}</td>",
            *[f"<td>{_intensity(r.get(f'ai_{level}', math.nan))}</td>" for level in analysis.levels],
            f"<td>{html.escape(str(r['bound'])) if r['bound'] is not None and r['bound'] == r['bound'] else '-'}</td>",
            f"<td>{html.escape(str(r['region']))}</td>",
            f"<td>{_pct(r['pct_of_roofline'])}</td>",
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in analysis.notes)
    return (
        f"<div><p><b>Roofline</b>: {counted(len(analysis), 'kernel')}, {_cell(totals['time_s'], 's')} in "
        f"{counted(totals['launches'], 'launch', 'launches')}; ceilings: {where}</p>"
        "<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead>"
        "<tbody>" + "".join(body) + "</tbody></table>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "<p><small>* FLOPs are a lower bound (a FLOP counter was not collected). "
        "roofline.plot(analysis) draws the chart.</small></p></div>"
    )

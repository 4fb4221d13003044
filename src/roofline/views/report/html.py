"""The HTML report: one self-contained, offline file.

Summary (device, ceilings, total time, time per phase, share of time per limiter),
what to work on first, the interactive hierarchical roofline of the analysis' work (FLOPs or
operations) and, whenever the table has warp-instruction counts, the instruction roofline beside
it (Ding and Williams, PMBS 2019: warp instructions/s against instructions per transaction, and the
memory-access walls), the kernels a chart cannot place with why, a sortable and filterable kernel
table (with the global and shared access patterns where counted) and each kernel's diagnosis.
plotly.js is inlined; nothing is fetched from the network.

Kernel names are untrusted text (C++ templates full of ``<``, ``>`` and ``&``):
HTML text and attributes go through :func:`html.escape`; JSON embedded in
``<script>`` has ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes (so no
``</script>`` or ``<!--`` can appear); the table is built with ``textContent``. The escaping and
cell values are in :mod:`roofline.views.report.cells`, the kernel table's columns and rows in
:mod:`roofline.views.report.kernel_table`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.analysis.work import INSTRUCTIONS, work_for
from roofline.errors import InputError
from roofline.guidance.advise import advise, limiter_shares
from roofline.guidance.diagnose import Diagnoses, KernelDiagnosis, diagnose
from roofline.kernels import KernelTable
from roofline.kernels.vendor import NVIDIA_WORDS
from roofline.units import counted, format_si, format_time
from roofline.views.chart.rows import UndrawnKernel, undrawn_kernels
from roofline.views.work_words import work_labels
from roofline.views.report.assets import CSS, JS
from roofline.views.report.cells import escape as _e
from roofline.views.report.cells import number as _num
from roofline.views.report.cells import percent as _pct
from roofline.views.report.cells import script_json
from roofline.views.report.cells import text as _str
from roofline.views.report.kernel_table import has_instructions, has_patterns, kernel_rows, kernel_table, table_columns
from roofline.views.chart.style import SOURCE_WORDS, ceiling_source, compute_label, compute_unit, level_label

#: Kernels listed under "what to work on".
TOP_ADVICE = 10
#: Kernels whose full diagnosis is shown (by savable time); the rest are in the table only.
MAX_DIAGNOSES = 100


# -- sections -------------------------------------------------------------------------------
#: What one transaction is at each level of the instruction roofline.
TRANSACTION_NOUNS = {"shared": "wavefronts"}


def _memory_ceiling(machine: Any, level: str, bandwidth: float, transactions: bool) -> str:
    """'25.6 TB/s', or with the instruction roofline drawn '25.6 TB/s = 800 G sectors/s' (bandwidth over
    the level's transaction size: 32 B sectors, 128 B shared-memory wavefronts)."""
    text = format_si(bandwidth, "B/s")
    rate = INSTRUCTIONS.level_ceiling(machine, level) if transactions else None
    if rate is not None:
        text += f" = {format_si(rate, '')} {TRANSACTION_NOUNS.get(level, 'sectors')}/s"
    return text


def _summary(analysis: Any, advice: pd.DataFrame, transactions: bool = False) -> str:
    machine = getattr(analysis, "machine", None)
    words = getattr(analysis, "words", NVIDIA_WORDS)
    frame = analysis.frame
    total = float(np.nansum(frame["time_s"].to_numpy(dtype=float)))
    savable = frame["savable_time_s"].to_numpy(dtype=float) if "savable_time_s" in frame else np.array([np.nan])
    known_savable = savable[np.isfinite(savable)]
    launches = pd.to_numeric(frame.get("launches", pd.Series(dtype=float)), errors="coerce").sum()
    cards = [
        ("device", machine.name if machine is not None else "no machine (no ceilings)"),
        ("total GPU time", format_time(total)),
        ("kernels", f"{len(frame):,} ({counted(int(launches), 'launch', 'launches')})"),
        ("savable at the roofline", format_time(float(known_savable.sum())) if known_savable.size else "-"),
    ]
    out = ['<div class="cards">']
    for k, v in cards:
        out.append(f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{_e(v)}</div></div>')
    out.append("</div>")

    out.append('<div class="cols">')
    # ceilings
    out.append("<div><h3>Ceilings</h3>")
    if machine is None:
        out.append('<p class="notes">No machine given: no ceilings, so no roofline distances.</p>')
    else:
        clock = f" at {format_si(machine.sm_clock_hz, 'Hz')} {words.clock}" if machine.sm_clock_hz else ""
        beside = getattr(analysis, "peaks_beside", None)
        out.append(f'<p class="notes">{_e(machine.name)}{_e(clock)}</p><table>')
        if beside is not None:
            out.append("<tr><th>ceiling</th><th>used</th><th>from</th><th>profile's peak metric</th></tr>")
        rows = [(f"{level_label(level, words.levels)} bandwidth", _memory_ceiling(machine, level, bw, transactions), level,
                 beside.memory.get(level) if beside is not None else None, "B/s")
                for level, bw in machine.memory.items()]
        rows += [(compute_label(key, words), format_si(peak, compute_unit(key)), key,
                  beside.compute.get(key) if beside is not None else None, compute_unit(key))
                 for key, peak in sorted(machine.compute.items(), key=lambda kv: -kv[1])]
        for name, value, key, peak, unit in rows:
            source = ceiling_source(machine, key)
            other = (f"<td class='num'>{_e(format_si(peak, unit) if peak is not None else '-')}</td>"
                     if beside is not None else "")
            out.append(f"<tr><td>{_e(name)}</td><td class='num'>{_e(value)}</td>"
                       f"<td class='src'>{_e(SOURCE_WORDS.get(source, source))}</td>{other}</tr>")
        out.append("</table>")
    out.append("</div>")
    # time per phase
    out.append("<div><h3>Time per phase</h3>")
    phase_times = dict(getattr(analysis, "phase_times", {}) or {})
    if not phase_times and "phase" in frame and getattr(analysis, "by", "name") != "name":
        phase_times = frame.groupby(frame["phase"].astype("string").fillna("unknown"))["time_s"].sum().to_dict()
    if phase_times and not (len(phase_times) == 1 and "unknown" in phase_times):
        out.append(_bars({str(k): float(v) for k, v in phase_times.items()}, total, time_values=True))
    else:
        out.append(f'<p class="notes">No phases: the profile has no {_e(words.ranges)} ranges.</p>')
    out.append("</div>")
    # share of time per limiter
    out.append("<div><h3>Share of time per limiter</h3>")
    shares = limiter_shares(advice)
    if len(shares):
        out.append(_bars({str(k): float(v) * total for k, v in shares.items()}, total, time_values=True))
    else:
        out.append('<p class="notes">No kernel times.</p>')
    out.append("</div></div>")
    return "\n".join(out)


def _bars(values: dict[str, float], total: float, *, time_values: bool) -> str:
    rows = ["<table>"]
    for k, v in sorted(values.items(), key=lambda kv: -kv[1]):
        share = v / total if total > 0 else 0.0
        width = max(0.0, min(100.0, 100.0 * share))
        rows.append(f"<tr><td>{_e(k)}</td><td class='num'>{_e(format_time(v) if time_values else v)}</td>"
                    f"<td class='num'>{share:.1%}</td><td style='width:35%'><div class='bar'>"
                    f"<span style='width:{width:.1f}%'></span></div></td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _advice_section(advice: pd.DataFrame, anchors: dict[Any, str]) -> str:
    top = advice.head(TOP_ADVICE)
    out = ["<table><thead><tr><th class='num'>#</th><th>kernel</th><th class='num'>time</th>"
           "<th class='num'>% of roofline</th><th class='num'>savable</th><th>limited by</th><th>evidence</th>"
           "<th>what usually helps</th></tr></thead><tbody>"]
    for _, r in top.iterrows():
        anchor = anchors.get(r["row"])
        name = _e(r["label"])
        link = f"<a href='#{anchor}' title='{_e(r['kernel_name'])}'>{name}</a>" if anchor else name
        phase = f" <span class='pill'>{_e(r['phase'])}</span>" if _str(r["phase"]) else ""
        out.append(f"<tr><td class='num'>{int(r['rank'])}</td><td class='name'>{link}{phase}</td>"
                   f"<td class='num'>{_e(format_time(r['time_s']))}</td>"
                   f"<td class='num'>{_e(_pct(r['pct_of_roofline']))}</td>"
                   f"<td class='num'>{_e(format_time(r['savable_time_s']))}</td>"
                   f"<td><b>{_e(r['limiter_label'])}</b></td><td class='why'>{_e(r['reason'] or '-')}</td>"
                   f"<td class='why'>{_e(r['helps'] or '-')}</td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _fmt_finding_value(key: str, value: float) -> str:
    from roofline.guidance.explain import _fmt_value

    return _fmt_value(key, value)


#: How a fired finding's severity reads in the report.
SEVERITY_WORD = {"high": "problem", "medium": "warning", "info": "note"}
SEVERITY_ORDER = {"high": 0, "medium": 1, "info": 2}


def _diagnosis(d: KernelDiagnosis, rank: int, label: str, row: pd.Series, anchor: str) -> str:
    phase = f" <span class='pill'>{_e(d.phase)}</span>" if d.phase else ""
    head = (f"<summary><b>#{rank}</b> <span class='name'>{_e(label)}</span>{phase} "
            f"<span class='pill'>{_e(d.limiter_label)}</span> "
            f"time {_e(format_time(_num(row.get('time_s'))))}, savable {_e(format_time(_num(row.get('savable_time_s'))))}"
            f"</summary>")
    body = [f"<p class='name'>{_e(d.kernel_name)}</p>", f"<p class='advice'>{_e(d.sentence)}</p>",
            "<table><thead><tr><th>rule</th><th>status</th><th>finding</th></tr></thead><tbody>"]
    order = {"fired": 0, "ok": 1}
    ran = sorted((f for f in d.findings if f.status != "missing"),
                 key=lambda f: (order.get(f.status, 2), SEVERITY_ORDER.get(f.severity, 3)))
    for f in ran:
        cls = f"status-{f.status}" + (f" sev-{f.severity}" if f.status == "fired" else "")
        status = SEVERITY_WORD.get(f.severity, f.severity) if f.status == "fired" else f.status
        body.append(f"<tr><td>{_e(f.title)}</td><td class='{_e(cls)}'>{_e(status)}</td>"
                    f"<td>{_e(f.message)}<div class='src'>{_e(f.source)}</div></td></tr>")
    body.append("</tbody></table>")
    missing = [f.title for f in d.findings if f.status == "missing"]
    if missing:
        body.append(f"<p class='notes'>Not evaluated for lack of metrics: {_e(', '.join(missing))} "
                    f"(see Notes for the {_e(d.words.profiler)} metrics that enable them).</p>")
    return f"<details id='{_e(anchor)}'>{head}{''.join(body)}</details>"


def instruction_analysis(analysis: Any, instructions: Any = None) -> Analysis | None:
    """The analysis the instruction roofline is drawn from: ``analysis`` itself under
    ``work="instructions"``, else ``instructions`` (the same table and machine analysed with
    ``work="instructions"``) when some kernel in it has warp-instruction counts; else None."""
    candidate = analysis if getattr(analysis, "work", "flops") == "instructions" else instructions
    if not isinstance(candidate, Analysis) or not has_instructions(candidate.frame):
        return None
    return candidate


def _default_figures(analysis: Any, instructions: Analysis | None) -> list[tuple[str, Any]]:
    """The hierarchical roofline of the analysis' work (unless that work is instructions: the
    instruction figure's first panel is that chart), then the instruction roofline when given."""
    figs: list[tuple[str, Any]] = []
    if getattr(analysis, "work", "flops") != "instructions":
        from roofline.views.chart.interactive import roofline_plotly

        labels = work_labels(work_for(getattr(analysis, "work", "flops")))
        what = "arithmetic intensity" if labels.kind == "flops" else f"intensity ({labels.intensity_unit})"
        figs.append((f"The {labels.roofline}. Hover a point for the kernel; click a legend entry to hide or show a "
                     f"level. Each kernel appears once per memory level, at that level's {what}.",
                     roofline_plotly(analysis)))
    if instructions is not None:
        from roofline.views.chart.instructions_interactive import instruction_plotly

        try:
            instruction_chart = instruction_plotly(instructions)
        except InputError:  # no kernel drawable: the list of kernels off the charts says why
            return figs
        figs.append(("The instruction roofline (Ding and Williams, PMBS 2019): warp instructions per second "
                     "against warp instructions per transaction (32 B sectors at L1, L2 and DRAM; 128 B "
                     "wavefronts in shared memory), one marker per level per kernel; and the memory-access "
                     "walls: global loads and stores per sector at 1 (stride-0), 1/4 (unit stride) and 1/32 "
                     "(random), shared ones per wavefront at 1 (no bank conflict) and 1/32 (32-way).",
                     instruction_chart))
    return figs


#: Kernels listed per chart under "not on the charts"; the rest are counted.
UNDRAWN_LISTED = 20


def _undrawn_section(charts: Sequence[tuple[str, list[UndrawnKernel]]]) -> str:
    """The kernels each chart cannot place, longest first, with their share of the time and why."""
    charts = [(name, undrawn) for name, undrawn in charts if undrawn]
    if not charts:
        return "<p class='notes'>Every kernel is on the charts.</p>"
    out = ["<h3>Not on the charts</h3>", "<table id='undrawn'><thead><tr><th>chart</th><th>kernel</th>"
           "<th class='num'>share</th><th>why</th></tr></thead><tbody>"]
    for chart, undrawn in charts:
        names = [u.label for u in undrawn[:UNDRAWN_LISTED]]
        for name, u in zip(names, undrawn):
            phase = f" <span class='pill'>{_e(u.phase)}</span>" if u.phase else ""
            out.append(f"<tr><td>{_e(chart)}</td><td class='name' title='{_e(u.kernel)}'>{_e(name)}{phase}</td>"
                       f"<td class='num'>{_e(_pct(u.time_share))}</td><td class='why'>{_e(u.reason)}</td></tr>")
        if len(undrawn) > UNDRAWN_LISTED:
            rest = undrawn[UNDRAWN_LISTED:]
            share = sum(u.time_share for u in rest if u.time_share == u.time_share)
            out.append(f"<tr><td>{_e(chart)}</td><td colspan='3' class='notes'>and "
                       f"{_e(counted(len(rest), 'more kernel'))} ({share:.1%} of time)</td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _undrawn_charts(analysis: Any, instructions: Analysis | None) -> list[tuple[str, list[UndrawnKernel]]]:
    charts: list[tuple[str, list[UndrawnKernel]]] = []
    if isinstance(analysis, Analysis) and analysis.work != "instructions":
        charts.append((work_labels(analysis.work_spec).roofline, undrawn_kernels(analysis)))
    if instructions is not None:
        charts.append(("instruction roofline", undrawn_kernels(instructions)))
        charts.append(("memory-access walls", undrawn_kernels(instructions, chart="patterns")))
    return charts


def _modules_section(analysis: Any, launches: Any, estimates: Any, figure_index: int) -> tuple[str, list[tuple[str, Any]]]:
    """The "By module" section (the drill-down tree and the per-module roofline) and its figures,
    or ``("", [])`` when the launches name no module or operator."""
    from roofline.views.report import drilldown as drill

    if not drill.has_attribution(launches):
        return "", []
    machine = getattr(analysis, "machine", None)
    work = getattr(analysis, "work", "flops")
    tree = drill.build_tree(launches, machine, work=work, estimates=estimates,
                            levels=tuple(getattr(analysis, "levels", ()) or ()))
    parts = ["<section id='modules'><h2>By module</h2>", f"<p class='notes'>{_e(drill.drilldown_caption(tree))}</p>",
             drill.drilldown_html(tree)]
    figs: list[tuple[str, Any]] = []
    per_module = drill.module_analysis(launches, machine, work=tree.work)
    if not per_module.frame.empty:
        from roofline.views.chart.interactive import roofline_plotly
        from roofline.views.chart.rows import select_rows

        if len(select_rows(per_module).shown):
            figs.append((f"The {work_labels(work_for(tree.work)).roofline} per module, module paths cut to "
                         f"{drill.CHART_DEPTH} components (a shorter path: the launches in that module itself, "
                         f"not in a sub-module). Hover a point for the module.", roofline_plotly(per_module)))
    for i, (caption, _) in enumerate(figs, start=figure_index):
        parts.append(f"<figure><div id='figure-{i}' class='chart'></div><figcaption class='notes'>{_e(caption)}"
                     f"</figcaption></figure>")
    parts.append("</section>")
    return "\n".join(parts), figs


def report_html(analysis: Any, diagnoses: Diagnoses | Any = None, *, title: str | None = None,
                figures: Sequence[tuple[str, Any]] | None = None, instructions: Analysis | None = None,
                launches: Any = None, estimates: Any = None, breakdown: Any = None) -> str:
    """The report as one HTML document (a str).

    ``analysis`` is a ``roofline.analysis.Analysis`` (any work). ``diagnoses`` is a :class:`Diagnoses`,
    or the KernelTable the analysis came from (diagnosed here), or None (only the roofline rules run).
    ``instructions``: the same table and machine analysed with ``work="instructions"``
    (``roofline.analysis.analyze(table, machine, by=analysis.by, work="instructions")``); when it (or
    ``analysis`` itself) has warp-instruction counts, the instruction roofline is drawn beside the
    hierarchical one and the ceilings panel gives each level's transaction rate. ``figures`` are
    (caption, plotly Figure) pairs replacing the default charts: the interactive hierarchical roofline
    of :mod:`roofline.views.chart.interactive` (its phase buttons give the roofline per phase) and the
    instruction roofline. ``launches``: the per-launch kernel table (a KernelTable or DataFrame; by default
    ``diagnoses`` when it is a KernelTable); when its launches name their PyTorch module or operator,
    a "By module" section drills from each module to its operators and kernels
    (:mod:`roofline.views.report.drilldown`) and draws the roofline per module. ``estimates``: the
    counter-free estimate of the same program (its per-launch table), adding measured over estimated
    work per module and operator. ``breakdown``: where a timeline's time went
    (``roofline.analysis.breakdown.Breakdown``), drawn as stacked bars beside the roofline.
    """
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    diag = diagnoses if isinstance(diagnoses, Diagnoses) else diagnose(analysis, diagnoses)
    advice = advise(analysis, diagnoses=diag)
    levels = list(getattr(analysis, "levels", []) or [])
    machine = getattr(analysis, "machine", None)
    title = title or "Roofline report" + (f": {machine.name}" if machine is not None else "")
    instr = instruction_analysis(analysis, instructions)
    figs = list(figures) if figures is not None else _default_figures(analysis, instr)
    if breakdown is not None:
        from roofline.views.chart.breakdown_chart import breakdown_plotly

        figs.append((f"Where the time went, per device ({breakdown.window}): kernel time by bound, exposed communication "
                     "and copies, idle gaps by cause (docs/timeline.md). " + " ".join(breakdown.notes),
                     breakdown_plotly(breakdown)))
    labels = work_labels(work_for(getattr(analysis, "work", "flops")))

    anchors: dict[Any, str] = {}
    diag_html = []
    for _, r in advice.head(MAX_DIAGNOSES).iterrows():
        anchor = f"k-{int(r['rank'])}"
        anchors[r["row"]] = anchor
        diag_html.append(_diagnosis(diag.for_index(r["row"]), int(r["rank"]), str(r["label"]),
                                    analysis.frame.loc[r["row"]], anchor))
    more = len(advice) - len(diag_html)

    frame = analysis.frame
    columns = table_columns(levels, labels, inst_rate=labels.kind != "instructions" and has_instructions(frame),
                             patterns=has_patterns(frame), words=getattr(analysis, "words", NVIDIA_WORDS))
    data = {"columns": columns, "rows": kernel_rows(analysis, advice, levels, labels)}

    if launches is None and isinstance(diagnoses, KernelTable):
        launches = diagnoses
    modules_html, module_figs = _modules_section(analysis, launches, estimates, len(figs))

    fig_divs, fig_scripts = [], []
    for i, (caption, fig) in enumerate([*figs, *module_figs]):
        div = f"figure-{i}"
        if i < len(figs):
            fig_divs.append(f"<figure><div id='{div}' class='chart'></div><figcaption class='notes'>{_e(caption)}"
                            f"</figcaption></figure>")
        fig_scripts.append(f"<script type='application/json' data-figure='{div}'>"
                           f"{script_json(json.loads(pio.to_json(fig, validate=False)))}</script>")

    notes = list(getattr(analysis, "notes", ()) or ()) + list(diag.warnings)
    notes_html = "".join(f"<li>{_e(n)}</li>" for n in notes) or "<li>none</li>"
    sub = f"{counted(len(analysis.frame), 'kernel')}, grouped by {getattr(analysis, 'by', 'name')}"
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{CSS}</style>",
        f"<script>{get_plotlyjs()}</script>",
        "</head><body><main>",
        f"<h1>{_e(title)}</h1><p class='sub'>{_e(sub)}</p>",
        "<section id='summary'><h2>Summary</h2>", _summary(analysis, advice, transactions=instr is not None),
        "</section>",
        "<section id='advice'><h2>What to work on</h2>",
        "<p class='notes'>Kernels ranked by the time they would save running at their roofline.</p>",
        _advice_section(advice, anchors), "</section>",
        f"<section id='chart'><h2>{'Hierarchical roofline' if len(figs) <= 1 else 'Roofline charts'}</h2>", *fig_divs,
        _undrawn_section(_undrawn_charts(analysis, instr)), "</section>", modules_html,
        "<section id='table'><h2>Kernels</h2>", kernel_table(columns), "</section>",
        "<section id='diagnoses'><h2>Diagnosis per kernel</h2>", *diag_html,
        (f"<p class='notes'>{more} more kernels are in the table above.</p>" if more > 0 else ""), "</section>",
        f"<section id='notes'><h2>Notes</h2><ul class='notes'>{notes_html}</ul></section>",
        "</main>",
        f"<script type='application/json' id='kernel-data'>{script_json(data)}</script>",
        *fig_scripts,
        f"<script>{JS}</script>",
        "</body></html>",
    ])

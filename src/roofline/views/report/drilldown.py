"""The HTML report's drill-down: module -> sub-modules and operators -> kernels.

From the per-launch kernel table (columns ``module``, ``op``, ``phase``, ``kernel_name``;
:mod:`roofline.attribution` says how they are filled) this builds a tree of :class:`Node`:

- a **module** node per module path at each depth (``DeepCamMini``, ``DeepCamMini.enc1``,
  ``DeepCamMini.enc1.0``), holding every launch inside it (sub-modules included);
- under it its sub-modules, then the **operators** that ran in the module itself (not in a
  sub-module), one node per operator and phase (``aten::addmm`` in forward, ``aten::addmm`` in
  backward: a backward launch carries the forward operator that caused it);
- under each operator its **kernels** (one node per kernel name, launches summed).

Launches outside every module form one top-level node (:data:`OUTSIDE`), launches whose operator
is unknown one operator node (:data:`UNKNOWN_OP`). Each node is a roofline analysis of its group
of launches (:func:`roofline.analysis.analyze` on the launches relabelled by group): time (s) and
share of the total time, work (FLOPs, or OPs under ``work="ops"``), traffic and intensity at one
memory level (DRAM where analysed) and % of roofline (time at the roofline over time). With an
estimate table (the counter-free estimate of the same program), module and operator nodes also get
estimated over measured FLOPs (:func:`roofline.analysis.estimate.measured_vs_estimated`).

:func:`drilldown_html` renders the tree as nested ``<details>`` (no script needed); every text goes
through :func:`html.escape`.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from roofline.analysis import analyze
from roofline.analysis.estimate import measured_vs_estimated
from roofline.analysis.result import Analysis
from roofline.analysis.work import work_for
from roofline.kernels import NO_OPERATOR, OUTSIDE_MODULES, KernelTable, encoded_text, has_runs, text_codes, validate
from roofline.machine.model import Machine
from roofline.units import format_number, format_si, format_time
from roofline.kernels.labels import short_names
from roofline.views.work_words import work_labels
from roofline.kernels.vendor import table_words
from roofline.views.chart.style import level_label

#: Label of the node holding the launches outside every module.
OUTSIDE = OUTSIDE_MODULES
#: Label of the operator node of launches whose operator is unknown.
UNKNOWN_OP = NO_OPERATOR
#: Depth of the per-module roofline chart (``Model.block``).
CHART_DEPTH = 2


@dataclass
class Node:
    """One row of the drill-down: a module, an operator (in one phase) or a kernel.

    ``kind``: ``"module"``, ``"outside"``, ``"op"`` or ``"kernel"``. ``key``: the module path,
    operator or full kernel name (None for the unknowns). ``label``: what is shown. ``time_s`` (s),
    ``share`` (of the profile's total time), ``work`` (FLOP or OP), ``traffic`` (B at ``level``),
    ``intensity`` (work per byte at ``level``), ``pct_of_roofline`` (roofline time over time),
    ``estimated_over_measured`` (the estimate's FLOPs over the measured FLOPs; None when no estimate):
    None where unknown.
    """

    kind: str
    key: str | None
    label: str
    phase: str | None = None
    launches: float | None = None
    time_s: float | None = None
    share: float | None = None
    work: float | None = None
    traffic: float | None = None
    intensity: float | None = None
    pct_of_roofline: float | None = None
    estimated_over_measured: float | None = None
    children: list[Node] = field(default_factory=list)


@dataclass(frozen=True)
class Tree:
    """The drill-down: top-level ``nodes``, the ``work`` counted, the memory ``level`` of the
    traffic and intensity columns, the profile's ``total_time_s``, and ``estimated`` (whether a
    estimated-over-measured column is filled); ``level_name``: the level in the vendor's words ('HBM' on
    an AMD GPU; :func:`~roofline.views.chart.style.level_label`'s by default)."""

    nodes: list[Node]
    work: str
    level: str
    total_time_s: float
    estimated: bool = False
    level_name: str = ""

    @property
    def level_text(self) -> str:
        return self.level_name or level_label(self.level)


def _frame(table: KernelTable | pd.DataFrame) -> pd.DataFrame:
    return table.frame if isinstance(table, KernelTable) else validate(table)


def has_attribution(table: KernelTable | pd.DataFrame | None) -> bool:
    """True when some launch of ``table`` names its module or operator."""
    if table is None:
        return False
    frame = table.frame if isinstance(table, KernelTable) else table
    return any(c in frame and bool(frame[c].notna().any()) for c in ("module", "op"))


def _value(v: Any) -> str | None:
    """A key value as a str, None when missing."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return str(v)


def _num(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def grouped(frame: pd.DataFrame, machine: Machine | None, keys: Sequence[str], *, work: str = "flops",
            depth: int | None = None) -> Analysis:
    """The roofline analysis of the launches grouped by ``keys`` (``module`` cut to ``depth``
    components): :func:`roofline.analysis.analyze` with ``by=keys``, runs merged (a module's launches
    on every rank of a DDP run are one group). The machine is scaled to the clock of all launches,
    as for the report's own analysis."""
    if has_runs(frame):
        frame = frame.assign(run=pd.array([pd.NA] * len(frame), dtype="string"))
    return analyze(frame, machine, by=tuple(keys), depth=depth, work=work)


#: The columns of a grouped analysis a node shows (with the work and traffic columns of its work).
NODE_COLUMNS = ("launches", "time_s", "pct_of_roofline")


def _rows(analysis: Analysis, keys: Sequence[str], columns: Sequence[str]) -> dict[tuple[str | None, ...], dict[str, Any]]:
    """The ``columns`` of each row of a :func:`grouped` analysis, by the row's key values (None where missing)."""
    frame = analysis.frame
    key_values = zip(*(frame[k].to_numpy(dtype=object) for k in keys))
    present = [c for c in dict.fromkeys(columns) if c in frame.columns]
    values = zip(*(frame[c].to_numpy(dtype=float, na_value=np.nan) for c in present))
    return {tuple(_value(v) for v in key): dict(zip(present, row)) for key, row in zip(key_values, values)}


def _depth(path: str | None) -> int:
    return 0 if path is None else len(path.split("."))


#: Joins a module path and a phase into one key, and stands for a missing one (in no name).
_JOIN, _NONE = "\0", "\1"


def _module_in_phase(table: KernelTable) -> KernelTable:
    """``table`` with each launch's phase replaced by ``module`` + :data:`_JOIN` + ``phase``: the
    comparison by operator and phase is then one by module, operator and phase (both sides alike)."""
    frame = table.frame
    modules, module_codes = text_codes(frame["module"])  # distinct texts and codes (-1: missing):
    phases, phase_codes = text_codes(frame["phase"])     # the pairs are made per distinct pair, not per launch
    width = len(phases) + 1
    codes, pairs = pd.factorize((np.asarray(module_codes, dtype=np.int64) + 1) * width
                                + np.asarray(phase_codes, dtype=np.int64) + 1)
    named = [(modules[m - 1] if m else _NONE, phases[p - 1] if p else _NONE)
             for m, p in (divmod(int(pair), width) for pair in pairs.tolist())]
    out = frame.copy(deep=False)  # copy-on-write: only phase is new
    out["phase"] = encoded_text([f"{m}{_JOIN}{p}" for m, p in named], codes)
    return replace(table, frame=out)


def estimate_ratios(measured: KernelTable, estimates: KernelTable, depths: Sequence[int]
                    ) -> tuple[dict[int, dict[str | None, float]], dict[tuple[str | None, ...], float]]:
    """Estimated over measured FLOPs (:func:`roofline.analysis.estimate.measured_vs_estimated`):
    per depth, per module path cut to it; and per (module, operator, phase) of the launches in the
    module itself (the comparison by operator within each module). NaN where a side is unknown."""
    modules = {d: {_value(m): float(r) for m, r in zip(table["module"], table["flops_ratio"])}
               for d in depths for table in [measured_vs_estimated(measured, estimates, by="module", depth=d)]}
    ops: dict[tuple[str | None, ...], float] = {}
    table = measured_vs_estimated(_module_in_phase(measured), _module_in_phase(estimates), by="op")
    for op, joined, ratio in zip(table["op"], table["phase"], table["flops_ratio"]):
        module, phase = (None if v == _NONE else v for v in str(joined).split(_JOIN, 1))
        ops[(module, _value(op), phase)] = float(ratio)
    return modules, ops


def build_tree(table: KernelTable | pd.DataFrame, machine: Machine | None, *, work: str = "flops",
               estimates: KernelTable | pd.DataFrame | None = None, levels: Sequence[str] = ()) -> Tree:
    """The drill-down of the per-launch ``table`` held to ``machine`` (see the module docstring).

    ``work``: ``"flops"`` or ``"ops"`` (``"instructions"`` counts FLOPs here: the tree is about the
    program's arithmetic). ``estimates``: the counter-free estimate of the same program (per-launch
    rows with ``module``, ``op``, ``phase``), giving estimated over measured FLOPs per module and
    per operator within its module. ``levels``: the memory levels the report analysed (innermost first); the traffic
    and intensity columns are DRAM's when analysed, else the outermost analysed level's."""
    frame = _frame(table)
    kind = work if work in ("flops", "ops") else "flops"
    spec = work_for(kind)
    level = "dram" if "dram" in levels or not levels else levels[-1]
    traffic_col = spec.traffic.get(level, f"{level}_bytes")
    total = float(np.nansum(frame["time_s"].to_numpy(dtype=float)))

    columns = (*NODE_COLUMNS, spec.total, traffic_col, f"ai_{level}")

    def node(kind_: str, key: str | None, label: str, row: dict[str, Any], ratio: float | None = None,
             phase: str | None = None) -> Node:
        t = _num(row.get("time_s"))
        w = _num(row.get(spec.total))
        return Node(kind=kind_, key=key, label=label, phase=phase, launches=_num(row.get("launches")), time_s=t,
                    share=(t / total if t is not None and total > 0 else None), work=w,
                    traffic=_num(row.get(traffic_col)), intensity=_num(row.get(f"ai_{level}")),
                    pct_of_roofline=_num(row.get("pct_of_roofline")), estimated_over_measured=_num(ratio))

    paths = sorted({p for p in map(_value, frame["module"]) if p is not None})
    max_depth = max((_depth(p) for p in paths), default=0)
    by_depth: dict[int, dict[tuple[str | None, ...], dict[str, Any]]] = {}
    for d in range(1, max(max_depth, 1) + 1):
        by_depth[d] = _rows(grouped(frame, machine, ("module",), work=kind, depth=d), ("module",), columns)
    op_keys = ("module", "op", "phase")
    ops = grouped(frame, machine, op_keys, work=kind)
    est_depth: dict[int, dict[str | None, float]] = {}
    est_ops: dict[tuple[str | None, ...], float] = {}
    if estimates is not None:
        measured = table if isinstance(table, KernelTable) else KernelTable(frame=frame)
        estimate = estimates if isinstance(estimates, KernelTable) else KernelTable(frame=validate(estimates))
        est_depth, est_ops = estimate_ratios(measured, estimate, list(by_depth))
    kernel_keys = ("module", "op", "phase", "kernel_name")
    kernels = grouped(frame, machine, kernel_keys, work=kind)

    kernel_children: dict[tuple[str | None, ...], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for key, row in _rows(kernels, kernel_keys, columns).items():
        kernel_children[key[:3]].append((key[3] or "?", row))
    op_children: dict[str | None, list[Node]] = defaultdict(list)
    for key, row in _rows(ops, op_keys, columns).items():
        module, op, phase = key
        op_node = node("op", op, op or UNKNOWN_OP, row, est_ops.get(key), phase)
        launched = sorted(kernel_children[key], key=lambda kr: -(_num(kr[1].get("time_s")) or 0.0))
        labels = short_names([name for name, _ in launched])
        op_node.children = [node("kernel", name, label, r) for (name, r), label in zip(launched, labels)]
        op_children[module].append(op_node)

    def module_node(path: str, d: int) -> Node:
        row = by_depth[d][(path,)]
        m = node("module", path, path, row, est_depth.get(d, {}).get(path))
        subs = [p for (p,) in by_depth.get(d + 1, {}) if p is not None and _depth(p) == d + 1
                and p.startswith(path + ".")]
        m.children = _by_time([module_node(p, d + 1) for p in subs]) + _by_time(op_children.get(path, []))
        return m

    nodes = _by_time([module_node(p, 1) for (p,) in by_depth[1] if p is not None])
    if (None,) in by_depth[1]:
        outside = node("outside", None, OUTSIDE, by_depth[1][(None,)], est_depth.get(1, {}).get(None))
        outside.children = _by_time(op_children.get(None, []))
        nodes.append(outside)
    return Tree(nodes=nodes, work=kind, level=level, total_time_s=total, estimated=estimates is not None,
                level_name=level_label(level, table_words(frame).levels))


def _by_time(nodes: list[Node]) -> list[Node]:
    return sorted(nodes, key=lambda n: -(n.time_s if n.time_s is not None else -1.0))


def module_analysis(table: KernelTable | pd.DataFrame, machine: Machine | None, *, depth: int = CHART_DEPTH,
                    work: str = "flops") -> Analysis:
    """The per-module analysis the module chart draws: one row per module path cut to ``depth``
    components (``kernel_name`` is the path; launches outside modules are one row, :data:`OUTSIDE`)."""
    return grouped(_frame(table), machine, ("module",), work=work, depth=depth)


# -- HTML -----------------------------------------------------------------------------------------

def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _columns(tree: Tree) -> list[str]:
    labels = work_labels(work_for(tree.work))
    cols = ["launches", "time", "share", labels.counted, f"{tree.level_text} bytes",
            f"{labels.intensity_unit} ({tree.level_text})", "% of roofline"]
    if tree.estimated:
        cols.append("estimated / measured FLOPs")
    return cols


def _cells(n: Node, tree: Tree) -> list[str]:
    labels = work_labels(work_for(tree.work))
    cells = ["-" if n.launches is None else f"{n.launches:,.0f}", format_time(n.time_s), _pct(n.share),
             format_si(n.work, labels.unit), format_si(n.traffic, "B"), format_number(n.intensity),
             _pct(n.pct_of_roofline)]
    if tree.estimated:
        ratio = n.estimated_over_measured
        cells.append("" if n.kind == "kernel" else "-" if ratio is None else f"{format_number(ratio)}x")
    return cells


def _name(n: Node, depth: int) -> str:
    """The name cell: indented by depth; a module's parent path muted, its own component bold."""
    pad = f" style='padding-left:{1.1 * depth:.1f}em'"
    if n.kind == "module" and n.key is not None and "." in n.key:
        parent, own = n.key.rsplit(".", 1)
        text = f"<span class='parent'>{_e(parent)}.</span><b>{_e(own)}</b>"
    elif n.kind in ("module", "outside"):
        text = f"<b>{_e(n.label)}</b>"
    else:
        text = _e(n.label)
    phase = f" <span class='pill'>{_e(n.phase)}</span>" if n.phase else ""
    kind = {"op": " <span class='kind'>op</span>", "kernel": " <span class='kind'>kernel</span>"}.get(n.kind, "")
    title = f" title='{_e(n.key)}'" if n.key is not None else ""
    return f"<span class='tn name'{pad}{title}>{text}{kind}{phase}</span>"


def _node_html(n: Node, tree: Tree, depth: int, out: list[str]) -> None:
    cells = "".join(f"<span class='num'>{_e(c)}</span>" for c in _cells(n, tree))
    attrs = f" data-kind='{_e(n.kind)}'" + (f" data-key='{_e(n.key)}'" if n.key is not None else "")
    if not n.children:
        out.append(f"<div class='tr leaf'{attrs}>{_name(n, depth)}{cells}</div>")
        return
    is_open = " open" if depth == 0 else ""
    out.append(f"<details class='tnode'{attrs}{is_open}><summary class='tr'>{_name(n, depth)}{cells}</summary>")
    for child in n.children:
        _node_html(child, tree, depth + 1, out)
    out.append("</details>")


def drilldown_html(tree: Tree) -> str:
    """The tree as HTML: a header row, then nested ``<details>`` (top level open)."""
    cols = _columns(tree)
    cls = "tree with-ratio" if tree.estimated else "tree"
    out = [f"<div class='{cls}' id='module-tree'>",
           "<div class='tr head'><span>module / operator / kernel</span>"
           + "".join(f"<span class='num'>{_e(c)}</span>" for c in cols) + "</div>"]
    for n in tree.nodes:
        _node_html(n, tree, 0, out)
    out.append("</div>")
    return "\n".join(out)


def drilldown_caption(tree: Tree) -> str:
    """What the tree's columns mean, one paragraph of plain text."""
    labels = work_labels(work_for(tree.work))
    lv = tree.level_text
    text = (f"Each module holds every launch inside it (its sub-modules included): time and share of the total "
            f"{format_time(tree.total_time_s)}, {labels.counted}, {lv} bytes and {labels.intensity_unit} at {lv}, and "
            f"% of roofline (the group's time at its roofline over its time). Under a module: its sub-modules, then "
            f"the operators that ran in the module itself, per phase (a backward launch counts under the forward "
            f"operator and module that caused it), then their kernels.")
    if tree.estimated:
        text += (" Estimated / measured FLOPs: the counter-free estimate's FLOPs (analytic, per operator) over the "
                 "measured FLOPs of the same module, or of the same operator and phase in the module; above 1 the "
                 "analytic model counts more than the GPU did.")
    return text

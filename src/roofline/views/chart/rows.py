"""Which kernels a chart can draw, and for each one it cannot, why: no kernel is left off silently.

A hierarchical roofline puts a kernel at (work per unit of traffic, work per second) on log axes, so
it needs a positive work count, a positive time and traffic at one of the levels drawn. A kernel
that lacks one is listed (:func:`undrawn_kernels`) with its share of the time and a reason that
says what would place it: another work (``--work ops``, ``--work instructions``) or the metrics to
collect (the analysis's :attr:`~roofline.analysis.Analysis.metric_hints`, from the kernel table's
reader). Charts write the list as a note (:func:`not_shown_note`); the terminal and the report can
print it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from roofline.analysis.result import Analysis
from roofline.analysis.roofline import nothing_recorded
from roofline.analysis.work import Work, lower_bound_rows, work_for
from roofline.errors import InputError
from roofline.kernels.labels import short_name
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords

#: Reason categories, in the order notes list them.
ZERO, UNCOUNTED, NO_TIME, NO_TRAFFIC = "zero", "uncounted", "no-time", "no-traffic"
#: Categories of the memory-access panel: no global or shared loads/stores; their counts unknown.
NO_LDST, NO_ACCESSES = "no-ldst", "no-accesses"
#: Undrawn in the pattern panel: its load/store figures break a physical limit (analysis.limits).
BEYOND_LIMITS = "inconsistent"
#: ... and the kernels whose only memory instructions' traffic cannot be paired with them (TMA).
UNPAIRED = "unpaired"

#: Per work: the phrase after "N kernels" for kernels that do none of it, and the reason in full.
_ZERO = {
    "flops": ("without FLOPs", "0 FLOPs: integer/data movement, see --work ops or --work instructions"),
    "ops": ("without operations", "0 operations: data movement only, see --work instructions"),
    "instructions": ("without warp instructions", "0 warp instructions counted"),
}
#: The same reasons on an AMD profile: no instruction roofline there (it reads NVIDIA's warp-instruction counters).
AMD_ZERO = {"flops": "0 FLOPs: integer/data movement, see --work ops", "ops": "0 operations: data movement only"}
#: How the reason of a 0 that is a lower bound says so.
LOWER_BOUND = "as a lower bound"
#: The reason for a kernel with no time, work or traffic at all: no metric to collect would place it.
NOTHING_RECORDED = "nothing recorded (no time, work or traffic): its profiling failed or was cut short; profile it again"
#: Per work: the phrase for kernels whose work was not counted, and the start of the reason.
_UNCOUNTED = {
    "flops": ("with FLOPs not counted", "FLOPs not counted"),
    "ops": ("with operations not counted", "operations not counted"),
    "instructions": ("without instruction counts", "no instruction counts"),
}


@dataclass(frozen=True)
class UndrawnKernel:
    """A kernel (row of the analysis) a chart cannot draw.

    ``kernel``: its full name; ``phase``: its phase (None when by name or unknown); ``time_s``:
    seconds (NaN unknown); ``time_share``: fraction of the analysis's total time (NaN unknown);
    ``reason``: why, in words, with what would place it; ``category``: one of ZERO, UNCOUNTED,
    NO_TIME, NO_TRAFFIC (the roofline) or NO_TIME, NO_LDST, NO_ACCESSES, UNPAIRED (the access-pattern panel);
    ``label``: its short name as every view of the analysis gives it (:attr:`Analysis.labels`).
    """

    kernel: str
    phase: str | None
    time_s: float
    time_share: float
    reason: str
    category: str
    label: str = ""


@dataclass(frozen=True)
class ChartRows:
    """The rows a chart draws (``shown``, longest first) and those it cannot (``undrawn``: the
    analysis rows with ``reason`` and ``category`` columns added), and the total time (s). Both
    carry ``rank``, the row's place in :attr:`Analysis.ranked`. ``hints``: what to collect, per column
    (:attr:`Analysis.metric_hints`); ``amd``: the profile is AMD's (no pointer to ncu or to the instruction
    roofline, which reads NVIDIA's warp-instruction counters)."""

    shown: pd.DataFrame
    undrawn: pd.DataFrame
    total_time_s: float
    work: str = "flops"
    levels: tuple[str, ...] = field(default=())
    hints: Mapping[str, str] = field(default_factory=dict)
    amd: bool = False
    #: Each kernel name's short label (:attr:`Analysis.labels`: made over all the analysis's rows).
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, name: str) -> str:
        """The short label of kernel ``name`` (shortened alone when :attr:`labels` lacks it)."""
        return self.labels.get(name) or short_name(name)

    @property
    def zero_flop(self) -> pd.DataFrame:
        """Rows known to do none of the work (0 FLOPs under the FLOP roofline)."""
        return self.undrawn[self.undrawn["category"] == ZERO].reset_index(drop=True)

    @property
    def unknown(self) -> pd.DataFrame:
        """Rows not drawn for another reason (work or time unknown, no traffic)."""
        return self.undrawn[self.undrawn["category"] != ZERO].reset_index(drop=True)


def _ranked(analysis: Analysis) -> pd.DataFrame:
    """The analysis rows longest first, with ``rank``: the row's place in that order (0 first), so
    that two panels of one chart can number a kernel alike."""
    frame = analysis.ranked
    frame["rank"] = np.arange(len(frame))
    return frame


def _hint(hints: Mapping[str, str], *keys: str) -> str:
    """'collect METRICS' for the columns ``keys`` (:mod:`roofline.counting.hints`), from ``hints``;
    empty when the table names none."""
    named = [hints[k] for k in keys if k in hints]
    return f"collect {', '.join(named)}" if named else ""


def _with(text: str, hint: str) -> str:
    """``text (hint)``, or ``text`` alone when there is no hint."""
    return f"{text} ({hint})" if hint else text


def _traffic_reason(work: Work, levels: Sequence[str], hints: Mapping[str, str],
                    words: VendorWords = NVIDIA_WORDS) -> str:
    what = "transaction" if work.transaction_bytes else "byte"
    names = ", ".join(words.level(lv) if words.is_amd else "shared memory" if lv == "shared" else lv.upper()
                      for lv in levels) or "any level"
    return _with(f"no {what} counts at {names}", _hint(hints, *(work.traffic.get(lv, "") for lv in levels)))


def _lower_bound_zeros(undrawn: pd.DataFrame, work: Work) -> np.ndarray:
    """The rows of category ZERO whose 0 is only a lower bound (a part of the work unknown)."""
    return (undrawn["category"] == ZERO).to_numpy() & lower_bound_rows(undrawn, work)


def _partial_zero_reasons(undrawn: pd.DataFrame, work: Work, amd: bool = False) -> None:
    """A 0 that is a lower bound (a part of the work unknown) is no proof of no work: such a row's
    reason says which parts are unknown instead of "data movement only"."""
    zero = _lower_bound_zeros(undrawn, work)
    if not zero.any():
        return
    columns = [c for c, _ in work.parts if c in undrawn]
    zero_text = AMD_ZERO.get(work.kind, _ZERO[work.kind][1]) if amd else _ZERO[work.kind][1]
    pointer = "see " + zero_text.split(", see ")[1] if amd is False or ", see " in zero_text else ""
    # one reason per (unknown parts, previous reason) pattern: a by-launch table has few patterns, many rows
    unknown = np.column_stack([undrawn[c].isna().to_numpy()[zero] for c in columns])
    previous = undrawn["reason"].to_numpy(dtype=object)[zero]
    keys = pd.MultiIndex.from_arrays([*unknown.T, previous])
    codes, patterns = pd.factorize(keys)
    texts = []
    for *missing, reason in patterns:
        tail = reason.split("; ", 1)[1] if "; " in reason else pointer  # keeps a pointer to --work instructions
        parts = ", ".join(c for c, m in zip(columns, missing) if m)
        texts.append(f"0 {work.unit}s counted, {LOWER_BOUND}: {parts} unknown" + (f"; {tail}" if tail else ""))
    reasons = undrawn["reason"].to_numpy(dtype=object).copy()
    reasons[zero] = np.array(texts, dtype=object)[codes]
    undrawn["reason"] = reasons


def select_rows(analysis: Analysis, phase: str | None = None, levels: Sequence[str] | None = None) -> ChartRows:
    """Split the analysis rows (optionally one phase) into drawn and not drawn, longest first.

    Drawn: a positive work count and time (a finite rate in ``flop_rate``) and a finite, positive
    intensity at one of ``levels`` (default: the analysed levels).
    """
    work = analysis.work_spec
    frame = _ranked(analysis)
    if phase is not None:
        if analysis.sums_phases:
            raise ValueError(f"phase= needs an analysis by 'phase', 'op' or 'launch' (by {analysis.by!r} sums over phases)")
        frame = frame[frame["phase"].astype("string").fillna("") == phase].reset_index(drop=True)
    lv = list(analysis.levels if levels is None else levels)
    amount = frame[work.total].to_numpy(dtype=float) if work.total in frame else np.full(len(frame), np.nan)
    time = frame["time_s"].to_numpy(dtype=float)
    rate = frame["flop_rate"].to_numpy(dtype=float)
    placed = np.zeros(len(frame), dtype=bool)
    for level in lv:
        ai = frame[f"ai_{level}"].to_numpy(dtype=float) if f"ai_{level}" in frame else np.full(len(frame), np.nan)
        placed |= np.isfinite(ai) & (ai > 0)
    no_time = ~(np.isfinite(time) & (time > 0))
    category = np.select(
        [amount == 0, np.isnan(amount), no_time, ~(np.isfinite(rate) & (rate > 0)), ~placed],
        [ZERO, UNCOUNTED, NO_TIME, NO_TIME, NO_TRAFFIC], default="")
    words = analysis.words
    zero_reason = AMD_ZERO.get(work.kind, _ZERO[work.kind][1]) if words.is_amd else _ZERO[work.kind][1]
    hints = analysis.metric_hints
    reasons = {ZERO: zero_reason, UNCOUNTED: _with(_UNCOUNTED[work.kind][1], _hint(hints, work.total)),
               NO_TIME: _with("time unknown", _hint(hints, "time_s")),
               NO_TRAFFIC: _traffic_reason(work, lv, hints, words)}
    undrawn = frame[category != ""].copy()
    undrawn["category"] = category[category != ""]
    undrawn["reason"] = [reasons[c] for c in undrawn["category"]]
    undrawn.loc[nothing_recorded(undrawn, work), "reason"] = NOTHING_RECORDED
    if work.kind in ("flops", "ops") and "warp_inst" in undrawn.columns and not words.is_amd:  # a pointer only
        # where it leads somewhere
        estimated = undrawn["estimated"].to_numpy(dtype=bool, na_value=False) if "estimated" in undrawn else False
        uncounted = (undrawn["category"] == ZERO).to_numpy() & undrawn["warp_inst"].isna().to_numpy() & ~estimated
        undrawn.loc[uncounted, "reason"] = (zero_reason.split(", see ")[0] + "; its instructions were not counted "
                                            "(roofline profile counts them, for --work instructions)")
        undrawn.loc[(undrawn["category"] == ZERO).to_numpy() & estimated, "reason"] = (
            "0 FLOPs by the operator's formula (it moves or creates data; estimated, no counters)")
    _partial_zero_reasons(undrawn, work, words.is_amd)
    return ChartRows(shown=frame[category == ""].reset_index(drop=True), undrawn=undrawn.reset_index(drop=True),
                     total_time_s=float(np.nansum(time)), work=work.kind, levels=tuple(lv), hints=hints,
                     amd=words.is_amd, labels=analysis.labels)


def pattern_rows(analysis: Analysis) -> ChartRows:
    """Rows for the memory-access-pattern panel: kernels with a known time and ``global_ii`` or
    ``shared_ii``; the others with why (no load/store instruction or transaction counts)."""
    frame = _ranked(analysis).copy()
    time = frame["time_s"].to_numpy(dtype=float)
    g = frame["global_ii"].to_numpy(dtype=float, copy=True)
    s = frame["shared_ii"].to_numpy(dtype=float, copy=True)
    measured = (np.isfinite(g) & (g > 0)) | (np.isfinite(s) & (s > 0))
    for name, ii in (("global", g), ("shared", s)):  # a point past the walls is not drawn (analysis.limits)
        beyond = (frame[f"{name}_pattern"] == BEYOND_LIMITS).to_numpy(dtype=bool, na_value=False)
        ii[beyond] = np.nan
        frame[f"{name}_ii"] = ii
    known = (np.isfinite(g) & (g > 0)) | (np.isfinite(s) & (s > 0))
    no_time = ~(np.isfinite(time) & (time > 0))
    gi = frame["global_inst"].to_numpy(dtype=float) if "global_inst" in frame else np.full(len(frame), np.nan)
    si = frame["shared_inst"].to_numpy(dtype=float) if "shared_inst" in frame else np.full(len(frame), np.nan)
    none = (gi == 0) & (si == 0)
    tma = frame["tma_inst"].to_numpy(dtype=float) if "tma_inst" in frame else np.full(len(frame), np.nan)
    unpaired = (tma > 0) & (gi == 0)  # a shared figure withheld (analysis.patterns), and no global one
    category = np.select([no_time, known, measured, none, unpaired], [NO_TIME, "", BEYOND_LIMITS, NO_LDST, UNPAIRED],
                         default=NO_ACCESSES)
    hints = analysis.metric_hints
    reasons = {NO_TIME: _with("time unknown", _hint(hints, "time_s")), NO_LDST: "no global or shared loads/stores",
               BEYOND_LIMITS: "inconsistent counters: its load/store figures are beyond the walls (see its "
               "'inconsistent' column)",
               NO_ACCESSES: _with("load/store instructions or transactions not counted",
                                  _hint(hints, "ldst_inst", "l1_transactions", "shared_transactions")),
               UNPAIRED: "TMA traffic off the walls (TMA moves shared memory without LD/ST instructions, so the shared "
                         "wavefronts are not those of the LD/ST instructions alone)"}
    undrawn = frame[category != ""].copy()
    undrawn["category"] = category[category != ""]
    undrawn["reason"] = [reasons[c] for c in undrawn["category"]]
    return ChartRows(shown=frame[category == ""].reset_index(drop=True), undrawn=undrawn.reset_index(drop=True),
                     total_time_s=float(np.nansum(time)), work="instructions", hints=hints, labels=analysis.labels)


def _undrawn_list(rows: ChartRows) -> list[UndrawnKernel]:
    f = rows.undrawn
    out = []
    for name, phase, t, reason, cat in zip(f["kernel_name"].astype(str), f["phase"], f["time_s"].to_numpy(dtype=float),
                                           f["reason"], f["category"]):
        share = t / rows.total_time_s if rows.total_time_s > 0 and np.isfinite(t) else float("nan")
        shown_phase = None if pd.isna(phase) or name.endswith(f"[{phase}]") else str(phase)  # op rows name it
        out.append(UndrawnKernel(name, shown_phase, float(t), float(share), str(reason), str(cat), rows.label(name)))
    return out


def undrawn_kernels(analysis: Analysis, *, phase: str | None = None, levels: Sequence[str] | None = None,
                    chart: str = "roofline") -> list[UndrawnKernel]:
    """The kernels a chart of ``analysis`` cannot draw, longest first, each with its share of the
    time and the reason (see :class:`UndrawnKernel`).

    ``chart``: ``"roofline"`` (the hierarchical chart of the analysis's work, also panel (a) of the
    instruction chart) or ``"patterns"`` (panel (b), the memory-access walls). ``phase`` and
    ``levels`` select as the chart does.
    """
    if chart == "roofline":
        return _undrawn_list(select_rows(analysis, phase, levels))
    if chart == "patterns":
        return _undrawn_list(pattern_rows(analysis))
    raise ValueError(f"chart must be 'roofline' or 'patterns', not {chart!r}")


#: How many of the kernels not drawn the note names per reason (longest first).
NOT_SHOWN_NAMED = 3


def _share(t: float, total: float) -> str:
    return f"{100 * t / total:.1f}%" if total > 0 and np.isfinite(t) else "time unknown"


def _phrase(rows: ChartRows, category: str) -> tuple[str, str]:
    """(what the kernels lack, the reason's tail after the names) for one category of a note."""
    if category == ZERO and rows.work in _ZERO:
        phrase, reason = _ZERO[rows.work]
        reason = AMD_ZERO.get(rows.work, reason) if rows.amd else reason  # no instruction roofline on AMD
        tail = reason.split(": ", 1)[1] if ": " in reason else ""
        lower = int(_lower_bound_zeros(rows.undrawn, work_for(rows.work)).sum())
        if lower:  # 0 only as a lower bound: no claim of data movement for those
            every = lower == int((rows.undrawn["category"] == ZERO).sum())
            if every:  # none is known to do no work: "with 0 FLOPs counted", not "without FLOPs"
                phrase = phrase.replace("without ", "with 0 ", 1) + " counted"
            pointer = "" if rows.amd and "see " not in tail else f"; see {tail.split('see ', 1)[-1]}"
            tail = (f"{'all' if every else f'{lower} of them'} 0 only {LOWER_BOUND}, a part of the work not "
                    f"collected{pointer}")
        return phrase, tail
    if category == UNCOUNTED:
        return _UNCOUNTED[rows.work][0], _hint(rows.hints, work_for(rows.work).total)
    if category == NO_TIME:
        return "with unknown time", _hint(rows.hints, "time_s")
    reason = str(rows.undrawn.loc[rows.undrawn["category"] == category, "reason"].iloc[0])
    head, _, tail = reason.partition(" (")
    return head.replace("no ", "without ", 1) if head.startswith("no ") else f"with {head}", tail.rstrip(")")


def not_shown_note(rows: ChartRows, names: Sequence[str] | None = None) -> str:
    """e.g. '1 kernel without FLOPs (0.4% of time) not shown: cleanup 0.4% (integer/data movement, see
    --work ops or --work instructions)'; empty when every kernel is drawn.

    One clause per reason; the longest few kernels of each are named with their share of the time.
    ``names`` (optional): display names for the ``undrawn`` rows, in order.
    """
    f = rows.undrawn
    if not len(f):
        return ""
    labels = list(names) if names is not None else [rows.label(n) for n in f["kernel_name"].astype(str)]
    times = f["time_s"].to_numpy(dtype=float)
    parts = []
    for category in (ZERO, UNCOUNTED, NO_TIME, NO_TRAFFIC, NO_LDST, NO_ACCESSES, UNPAIRED):
        idx = np.flatnonzero((f["category"] == category).to_numpy())
        if not idx.size:
            continue
        t = float(np.nansum(times[idx]))
        share = f"{_share(t, rows.total_time_s)} of time" if rows.total_time_s > 0 else "time unknown"
        noun = "kernel" if idx.size == 1 else "kernels"
        order = sorted(idx, key=lambda i: -np.nan_to_num(times[i], nan=-1.0))
        named = ", ".join(f"{labels[i]} {_share(times[i], rows.total_time_s)}" if np.isfinite(times[i])
                          else f"{labels[i]} (time unknown)" for i in order[:NOT_SHOWN_NAMED])
        more = f", {idx.size - NOT_SHOWN_NAMED} more" if idx.size > NOT_SHOWN_NAMED else ""
        phrase, tail = _phrase(rows, category)
        parts.append(f"{idx.size} {noun} {phrase} ({share}) not shown: {named}{more}" + (f" ({tail})" if tail else ""))
    return "; ".join(parts)


def require_drawable(rows: ChartRows) -> None:
    """Raise InputError when no row can be drawn, naming what to collect."""
    if len(rows.shown):
        return
    n = len(rows.undrawn)
    what = {"flops": "counted FLOPs", "ops": "counted operations", "instructions": "counted warp instructions"}
    counted_work = what.get(rows.work, "counted work")
    head = ((f"none of the {n} kernels has" if n > 1 else "the kernel has no") + f" {counted_work} and a time"
            if n else "the analysis has no kernels")
    reasons = list(dict.fromkeys(rows.undrawn["reason"])) if n else []
    hints = rows.hints
    total = work_for(rows.work).total
    if rows.amd:  # the reader's counters (rocprof), never ncu's
        collect = (f"collect {', '.join(dict.fromkeys(hints[k] for k in ('time_s', total) if k in hints))}"
                   if {"time_s", total} & hints.keys() else
                   f"give a table with the kernels' times and {what.get(rows.work, 'counted work')}")
    elif rows.work == "flops" and {"fp32_time_flops", "tensor_flops"} <= hints.keys():
        collect = ("profile with the FLOP and time metrics, e.g. ncu --metrics " + hints["fp32_time_flops"]
                   + " (and the dadd/dmul/dfma, hadd/hmul/hfma variants for FP64 and FP16, "
                   f"{hints['tensor_flops']} for tensor cores), or ncu --set full")
    elif {"time_s", total} <= hints.keys():
        collect = f"profile with {hints['time_s']} and {hints[total]}, or ncu --set full"
    else:  # a table whose reader names no metrics
        collect = f"give a table with the kernels' times and {what.get(rows.work, 'counted work')}"
    raise InputError(f"nothing to draw on a roofline chart: {head}",
                     hint="; ".join([*reasons, collect]))

"""Words for each kind of work a roofline counts (FLOPs, operations, warp instructions), for headers and
sentences of the terminal table and the report."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.analysis.work import Work


@dataclass(frozen=True)
class WorkLabels:
    """Words for one kind of work in table headers and sentences.

    ``rate``: header of the achieved-rate column (``FLOP/s``, ``OP/s``, ``warp inst/s``);
    ``rate_unit``: the unit a rate is formatted in (``format_si(rate, rate_unit)``);
    ``intensity``: prefix of the per-level intensity headers (``AI`` arithmetic intensity, or ``II``
    instruction intensity); ``intensity_unit``: ``FLOP/B``, ``OP/B``, ``inst/transaction``;
    ``counted``: the work's count, plural (``FLOPs``, ``OPs``, ``warp instructions``), and ``unit`` its
    unit for formatting a total (``FLOP``, ``OP``, ``inst``); ``roofline``: the chart's name;
    ``partial``: the kernel-table column flagging a lower bound (``flops_partial``, ``ops_partial``; ``""``
    for warp instructions, one counter).
    """

    kind: str
    rate: str
    rate_unit: str
    intensity: str
    intensity_unit: str
    counted: str
    unit: str
    roofline: str
    partial: str


def work_labels(work: Work) -> WorkLabels:
    """The :class:`WorkLabels` of ``work`` (``analysis.work_spec``)."""
    if work.kind == "instructions":
        return WorkLabels(work.kind, "warp inst/s", work.rate_unit, "II", work.intensity_unit, "warp instructions",
                          work.unit, "instruction roofline", work.partial)
    counted_words = {"flops": "FLOPs", "ops": "OPs"}.get(work.kind, f"{work.unit}s")
    roofline = {"flops": "FLOP roofline", "ops": "operation roofline"}.get(work.kind, f"{work.kind} roofline")
    return WorkLabels(work.kind, work.rate_unit, work.rate_unit, "AI", work.intensity_unit, counted_words, work.unit,
                      roofline, work.partial)

"""The files side of the API: what is read (never to be written over) and what is written.

An analysis's files (JSON, CSV, HTML report, chart as PNG/SVG/PDF, the kernel table as Parquet) are
written by :func:`save` from an :class:`OutputRequest` checked first by :func:`check_targets`, so a
refused overwrite leaves nothing half written (:mod:`roofline.writing.analysis_files`); single files
by :func:`write_text` / :func:`write_bytes` (:mod:`roofline.writing.safe`): no target may be an input,
nor exist without ``force``; ``-`` is standard output.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import pandas as pd

from roofline.analysis.result import Analysis
from roofline.kernels import KernelTable
from roofline.readers.dispatch import PROFILE_PATTERNS
from roofline.readers.machines.files import split_pick
from roofline.readers.stream import is_stdio
from roofline.writing.analysis_files import (OutputRequest, check_drawable, check_files, check_targets, figure_bytes,
                                             save_outputs, write_all)
from roofline.writing.record import check_replaceable, record_text
from roofline.writing.safe import check_not_input, check_writable, write_bytes, write_text

if TYPE_CHECKING:  # a timeline's breakdown and replay times: only when the analysis has them
    from roofline.analysis.breakdown import Breakdown
    from roofline.analysis.replay import ReplayTimes

__all__ = [
    "OutputRequest", "check_drawable", "check_files", "check_not_input", "check_replaceable", "check_targets",
    "check_writable", "figure_bytes", "input_files", "is_stdio", "record_text", "save", "write_all", "write_bytes",
    "write_text",
]


def save(analysis: Analysis, request: OutputRequest, *, diagnoses: KernelTable | pd.DataFrame | None = None,
         stdout: BinaryIO | None = None, instructions: Analysis | None = None, table: KernelTable | None = None,
         estimates: KernelTable | None = None, comparison: pd.DataFrame | None = None,
         breakdown: Breakdown | None = None, replay: ReplayTimes | None = None) -> list[Path]:
    """Write the files ``request`` asks for of ``analysis``; returns the paths written (not ``-``).

    ``diagnoses``: the KernelTable analysed, or its raw metrics (they feed the report's advice);
    ``instructions``: the same kernels analysed with ``work="instructions"``, drawn beside in the HTML
    report; ``table``: the per-launch KernelTable (Parquet; the report's module drill-down);
    ``estimates`` and ``comparison``: a counter-free estimate and its comparison with the measurement
    (:func:`roofline.api.measured_vs_estimated`); ``breakdown``: where a timeline's time went
    (:func:`roofline.api.breakdown`), in the JSON and the HTML report; ``replay``: a joined timeline's
    production time against Nsight Compute's replay (:func:`roofline.api.replay_times`), in the JSON. See
    :func:`roofline.writing.analysis_files.save_outputs`.
    """
    return save_outputs(analysis, request, diagnoses=diagnoses, stdout=stdout, instructions=instructions,
                        table=table, estimates=estimates, comparison=comparison, breakdown=breakdown,
                        replay=replay)


def input_files(files: Sequence[str | PathLike[str]], machine: Sequence[str] | None = None) -> tuple[Path, ...]:
    """Every file read (profiles, inside folders too, and machine files, ``FILE#ENTRY`` without its
    entry): never to be written over. ``-`` stays: the file standard input reads, when it is one, is
    an input too (:func:`roofline.writing.safe.check_not_input`)."""
    out: list[Path] = []
    for f in [*files, *(split_pick(m)[0] for m in machine or ())]:
        p = Path(f)
        if is_stdio(f):
            out.append(p)
            continue
        if p.is_dir():
            out += [q for pattern in PROFILE_PATTERNS for q in p.glob(pattern)]
        elif p.exists():
            out.append(p)
    return tuple(out)

"""Write an analysis to files: JSON, CSV, interactive HTML, static chart (PNG/SVG/PDF), and the
per-launch kernel table it came from as Parquet (:mod:`roofline.readers.kernel_parquet`).

Shared by ``roofline analyze``, ``roofline demo`` and ``roofline profile``. Every target is
checked before anything is written, so a refused overwrite never leaves half the outputs:
no target may be an input (not even with ``force``), exist (without ``force``) or repeat;
``-`` writes standard output (one target at most, and neither a chart nor Parquet); missing
folders are created; a chart is refused when no kernel can be drawn on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from roofline.errors import RooflineError
from roofline.writing.safe import check_writable, is_stdout, write_bytes

FIGURE_FORMATS = (".png", ".svg", ".pdf")


@dataclass(frozen=True)
class OutputRequest:
    """Which files to write. Paths are None when not wanted; ``-`` is standard output.

    ``ceilings``: the chart's compute ceilings, ``"used"`` or ``"all"``. ``inputs``: the files
    read, never to be written over. ``parquet``: the per-launch kernel table (not the analysis).
    """

    json: Path | None = None
    csv: Path | None = None
    html: Path | None = None
    png: Path | None = None  # any of FIGURE_FORMATS, by suffix
    parquet: Path | None = None
    force: bool = False
    top: int = 8
    ceilings: str = "used"
    inputs: Sequence[Path] = ()

    def targets(self) -> list[Path]:
        return [p for p in (self.json, self.csv, self.html, self.png, self.parquet) if p is not None]

    @property
    def to_stdout(self) -> bool:
        """True when one output goes to standard output (then the tables must not)."""
        return any(is_stdout(p) for p in self.targets())


def check_targets(request: OutputRequest) -> None:
    """Raise before any work if a target is an input, exists (without force), repeats, or has a bad suffix."""
    if is_stdout(request.parquet):
        raise RooflineError("a Parquet file cannot go to standard output (-)",
                            hint="give a file name, e.g. --parquet launches.parquet")
    check_files([(p, p is request.png) for p in request.targets()], force=request.force, inputs=request.inputs)


def check_files(targets: Sequence[tuple[Path, bool]], *, force: bool, inputs: Sequence[Path] = ()) -> None:
    """The checks of :func:`check_targets` on ``(path, is_chart)`` pairs (used by ``roofline compare`` too)."""
    if sum(is_stdout(p) for p, _ in targets) > 1:
        raise RooflineError("only one output can go to standard output (-)")
    files = [(p, chart) for p, chart in targets if not is_stdout(p)]
    if len({p.resolve() for p, _ in files}) != len(files):
        raise RooflineError("two outputs name the same file")
    for p, chart in targets:
        if chart and is_stdout(p):
            raise RooflineError("a chart cannot go to standard output", hint="give a file name ending in .png, .svg or .pdf")
        if chart and p.suffix.lower() not in FIGURE_FORMATS:
            raise RooflineError(f"unknown chart format {p.suffix!r}", path=p, hint="use a .png, .svg or .pdf file name")
    for p, _ in files:
        check_writable(p, force=force, inputs=inputs)


def check_drawable(analysis: Any) -> None:
    """Raise :class:`~roofline.errors.InputError` when no kernel of ``analysis`` can be drawn on a
    roofline chart (no counted FLOPs and time), naming the metrics to collect."""
    from roofline.views.chart.style import require_drawable, select_rows

    require_drawable(select_rows(analysis))


def figure_bytes(fig: Any, suffix: str, dpi: int = 200) -> bytes:
    """The figure as PNG, SVG (text kept as editable text) or PDF (TrueType) bytes."""
    from roofline.writing.figures import figure_bytes as _figure_bytes

    return _figure_bytes(fig, suffix, dpi=dpi)


def save_outputs(analysis: Any, request: OutputRequest, *, diagnoses: Any = None,
                 stdout: BinaryIO | None = None, instructions: Any = None, table: Any = None,
                 estimates: Any = None, comparison: Any = None, breakdown: Any = None, replay: Any = None) -> list[Path]:
    """Write the requested files for ``analysis``; returns the paths written (not ``-``).

    ``stdout``: where ``-`` goes (default: the process's standard output). ``instructions``: the
    same kernels analysed with ``work="instructions"``, drawn in the HTML report beside ``analysis``
    (:func:`roofline.api.instruction_analysis`). ``table``: the per-launch KernelTable the analysis
    came from (default: ``diagnoses`` when it is one); when its launches name PyTorch modules or
    operators the HTML report drills down from modules to operators to kernels. ``estimates``: the
    counter-free estimate of the same program (a KernelTable), compared per module and operator.
    ``comparison``: the measured-vs-estimated table (:func:`roofline.analysis.estimate.measured_vs_estimated`)
    written into the JSON as its ``estimate`` block. The Parquet file (``request.parquet``) holds
    ``table`` (or ``diagnoses`` when that is a KernelTable), every launch with its raw metrics. ``breakdown``:
    where a timeline's time went (:func:`roofline.analysis.breakdown.breakdown`), in the JSON and the report.
    ``replay``: a joined timeline's production time against its replay time
    (:func:`roofline.analysis.replay.replay_times`), in the JSON."""
    check_targets(request)
    if request.png is not None:
        check_drawable(analysis)  # before anything is written
    from roofline.kernels import KernelTable  # here: `import roofline.writing.analysis_files` stays free of pandas

    launches = table if table is not None else diagnoses
    if request.parquet is not None and not isinstance(launches, KernelTable):
        raise RooflineError("no per-launch kernel table to write as Parquet", path=request.parquet)
    outputs: list[tuple[Path, Any]] = []
    if request.json is not None:
        from roofline.views.json_out import analysis_to_dict

        outputs.append((request.json, lambda: json.dumps(analysis_to_dict(analysis, comparison, breakdown, replay),
                                                         indent=2, allow_nan=False) + "\n"))
    if request.csv is not None:
        outputs.append((request.csv, lambda: analysis.frame.to_csv(index=False)))
    if request.html is not None:
        outputs.append((request.html, lambda: html_report(analysis, diagnoses, instructions, table=table,
                                                          estimates=estimates, breakdown=breakdown)))
    if request.png is not None:
        png = request.png
        outputs.append((png, lambda: figure_bytes(chart(analysis, request), png.suffix)))
    if request.parquet is not None:
        from roofline.readers.kernel_parquet import to_bytes

        outputs.append((request.parquet, lambda: to_bytes(launches)))
    return write_all(outputs, force=request.force, inputs=request.inputs, stdout=stdout)


def chart(analysis: Any, request: OutputRequest) -> Any:
    """The static chart of ``analysis``: the instruction roofline with its memory-pattern walls
    under ``work="instructions"``, else the hierarchical roofline (of FLOPs or of operations)."""
    if getattr(analysis, "work", "flops") == "instructions":
        from roofline.views.chart.instructions import instruction_figure

        return instruction_figure(analysis, top=request.top, ceilings=request.ceilings)
    from roofline.views.chart.static import roofline_figure

    return roofline_figure(analysis, top=request.top, ceilings=request.ceilings)


def write_all(outputs: Sequence[tuple[Path, Any]], *, force: bool, inputs: Sequence[Path] = (),
              stdout: BinaryIO | None = None) -> list[Path]:
    """Make each output (a callable returning text or bytes) and write it to its file or, for ``-``,
    to ``stdout``; returns the files written."""
    import sys

    written: list[Path] = []
    for path, make in outputs:
        content = make()
        data = content.encode("utf-8") if isinstance(content, str) else content
        if is_stdout(path):
            out = stdout if stdout is not None else sys.stdout.buffer
            sys.stdout.flush()
            out.write(data)
            out.flush()
        else:
            written.append(write_bytes(path, data, force=force, inputs=inputs))
    return written


def html_report(analysis: Any, diagnoses: Any = None, instructions: Any = None, *, table: Any = None,
                estimates: Any = None, breakdown: Any = None) -> str:
    """The HTML file: the full report when the guidance views are available, else the interactive chart.
    ``table``, ``estimates`` and ``breakdown``: as for :func:`save_outputs`."""
    try:
        from roofline.views.report.html import report_html
    except ImportError:
        from roofline.views.chart.interactive import roofline_html

        return roofline_html(analysis)
    return report_html(analysis, diagnoses, instructions=instructions, launches=table, estimates=estimates,
                       breakdown=breakdown)

"""Write an analysis to files: JSON, CSV, interactive HTML, static chart (PNG/SVG/PDF).

Shared by ``roofline analyze``, ``roofline demo`` and ``roofline profile``. Every target is
checked before anything is written, so a refused overwrite never leaves half the outputs.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofline.errors import RooflineError
from roofline.io import check_writable, write_bytes, write_text

FIGURE_FORMATS = (".png", ".svg", ".pdf")


@dataclass(frozen=True)
class OutputRequest:
    """Which files to write. Paths are None when not wanted."""

    json: Path | None = None
    csv: Path | None = None
    html: Path | None = None
    png: Path | None = None  # any of FIGURE_FORMATS, by suffix
    force: bool = False
    top: int = 8

    def targets(self) -> list[Path]:
        return [p for p in (self.json, self.csv, self.html, self.png) if p is not None]


def check_targets(request: OutputRequest) -> None:
    """Raise before any work if a target exists (without force), repeats, or has a bad suffix."""
    targets = request.targets()
    if len({p.resolve() for p in targets}) != len(targets):
        raise RooflineError("two outputs name the same file")
    if request.png is not None and request.png.suffix.lower() not in FIGURE_FORMATS:
        raise RooflineError(
            f"unknown chart format {request.png.suffix!r}", path=request.png,
            hint="use a .png, .svg or .pdf file name",
        )
    for p in targets:
        check_writable(p, force=request.force)


def figure_bytes(fig: Any, suffix: str, dpi: int = 200) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=suffix.lstrip(".").lower(), dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def save_outputs(analysis: Any, request: OutputRequest, *, diagnoses: Any = None) -> list[Path]:
    """Write the requested files for ``analysis``; returns the paths written."""
    check_targets(request)
    written: list[Path] = []
    if request.json is not None:
        from roofline.views.json_out import analysis_to_dict

        text = json.dumps(analysis_to_dict(analysis), indent=2, allow_nan=False)
        written.append(write_text(request.json, text + "\n", force=request.force))
    if request.csv is not None:
        written.append(write_text(request.csv, analysis.frame.to_csv(index=False), force=request.force))
    if request.html is not None:
        written.append(write_text(request.html, html_report(analysis, diagnoses), force=request.force))
    if request.png is not None:
        from roofline.views.chart_static import roofline_figure

        fig = roofline_figure(analysis, top=request.top)
        written.append(write_bytes(request.png, figure_bytes(fig, request.png.suffix), force=request.force))
    return written


def html_report(analysis: Any, diagnoses: Any = None) -> str:
    """The HTML file: the full report when the guidance views are available, else the interactive chart."""
    try:
        from roofline.views.report_html import report_html
    except ImportError:
        from roofline.views.chart_interactive import roofline_html

        return roofline_html(analysis)
    return report_html(analysis, diagnoses)

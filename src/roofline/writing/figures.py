"""Save a matplotlib Figure so that its text stays text: editable SVG, TrueType in PDF.

SVG text is written as ``<text>`` elements (``svg.fonttype = "none"``), not paths, so the
labels can be edited and searched; PDF and PS embed TrueType (Type 42) fonts, which
journals accept. The settings apply to this save only (``rc_context``), never globally.
"""

from __future__ import annotations

import io
from typing import IO, Any

import matplotlib

#: rcParams for a publication file: editable text, embedded TrueType fonts.
SAVE_RC: dict[str, Any] = {"svg.fonttype": "none", "pdf.fonttype": 42, "ps.fonttype": 42}
FORMATS = ("png", "svg", "pdf")


def save_figure(fig: Any, target: str | IO[bytes] | Any, fmt: str | None = None, *, dpi: int = 200) -> None:
    """Save ``fig`` to a path or binary buffer as PNG, SVG or PDF (``fmt`` or the path's suffix)."""
    fmt = (fmt or str(target).rsplit(".", 1)[-1]).lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}: use one of {', '.join(FORMATS)}")
    with matplotlib.rc_context(SAVE_RC):  # type: ignore[arg-type]
        fig.savefig(target, format=fmt, dpi=dpi, bbox_inches="tight")


def figure_bytes(fig: Any, fmt: str, dpi: int = 200) -> bytes:
    """The file's bytes (``fmt``: 'png', '.svg', 'pdf'...), saved as :func:`save_figure` does."""
    buf = io.BytesIO()
    save_figure(fig, buf, fmt, dpi=dpi)
    return buf.getvalue()

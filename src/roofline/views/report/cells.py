"""The HTML report's cells: escaping for HTML text and attributes, JSON safe inside ``<script>``, and
the values a cell shows (finite numbers or None, text or None, fractions as percentages).

Used by :mod:`roofline.views.report.html` and :mod:`roofline.views.report.kernel_table`.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

import numpy as np
import pandas as pd


def escape(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def script_json(obj: Any) -> str:
    """JSON safe to embed in a ``<script>`` element: no ``<``, ``>``, ``&`` or line separators raw."""
    text = json.dumps(obj, allow_nan=False, ensure_ascii=False, default=_json_default)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None (missing, NaN, infinite or not a number)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def text(value: Any) -> str | None:
    """``value`` as text, or None where it is missing (None, <NA>, NaN)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def percent(value: Any) -> str:
    """A fraction as a percentage with one decimal ('12.5%'), '-' where it is missing."""
    v = number(value)
    return "-" if v is None else f"{v:.1%}"

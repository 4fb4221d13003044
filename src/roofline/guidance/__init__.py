"""Guidance: what limits each kernel, what usually helps, and which kernel to work on first.

- :mod:`roofline.guidance.rules`: the rules as data (metrics, thresholds, sources) plus small checks.
- :mod:`roofline.guidance.metrics`: the ncu metrics they read and how launches combine.
- :mod:`roofline.guidance.headline`: which fired rule names a kernel's limiter: the claim its own rows
  support most, contradicted claims set aside.
- :mod:`roofline.guidance.vendor_rules`: which rules hold on an AMD profile, and the limiters in AMD's words.
- :func:`diagnose` runs the rules on an analysis; :func:`advise` ranks kernels by the
  time they could save; :func:`explain` renders one kernel's full diagnosis.
"""

from __future__ import annotations

from roofline.guidance.advise import advice_renderable, advice_table, advise, limiter_shares
from roofline.guidance.diagnose import Diagnoses, KernelDiagnosis, diagnose
from roofline.guidance.explain import explain, explain_renderable, explain_text, find_kernel
from roofline.guidance.rules import LIMITERS, RULES, Finding, Rule

__all__ = [
    "Diagnoses", "Finding", "KernelDiagnosis", "LIMITERS", "RULES", "Rule",
    "advice_renderable", "advice_table", "explain_renderable", "advise", "diagnose", "explain", "explain_text", "find_kernel", "limiter_shares",
]

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.guidance.<module>`` after ``import roofline``).
_SUBMODULES = ("advise", "diagnose", "explain", "headline", "metrics", "rules", "vendor_rules")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=__all__)

"""Profiling programs: Nsight Compute in one run (``ncu_runner``), the counter-free
PyTorch mode (``counter_free``), metric sets per architecture (``metricsets``) and
per-rank output naming (``ranks``). Nothing here imports a GPU library at import time.
"""

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.profiling.<module>`` after ``import roofline``).
_SUBMODULES = ("counter_free", "rank_tables", "metricsets", "ncu_output", "ncu_runner", "ranks", "session", "settings")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=())

"""Profiling programs: Nsight Compute in one run (``ncu_runner``), the counter-free
PyTorch mode (``counter_free``), metric sets per architecture (``metricsets``) and
per-rank output naming (``ranks``). Nothing here imports a GPU library at import time.
"""

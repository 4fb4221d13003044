"""What a guidance rule is made of: its thresholds, the row it reads, the finding it returns, and
the limiter it may name. The rules themselves are in :mod:`roofline.guidance.rules` and
:mod:`roofline.guidance.memory_patterns`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords

# -- the sources rules cite ----------------------------------------------------------------------------
NCU_SOL = "Nsight Compute Kernel Profiling Guide, Speed Of Light section; ncu rule SOLBottleneck"
NCU_MEMORY_TABLES = ("Nsight Compute Kernel Profiling Guide, Memory Workload Analysis tables; "
                     "ncu rule MemoryCacheAccessPattern")
NCU_UNCOALESCED = "Nsight Compute Source Counters section; ncu rule UncoalescedGlobalAccess"
BPG_COALESCING = "CUDA C++ Best Practices Guide, Coalesced Access to Global Memory"
BPG_BANDWIDTH = "CUDA C++ Best Practices Guide, Effective Bandwidth Calculation"
PAPER = "Yang, Wang, Farrell, Kurth, Williams: Hierarchical Roofline Analysis (arXiv 2009.05257)"
HEURISTIC = "roofline's own heuristic (threshold chosen by us, not by NVIDIA)"
IRM = ("Ding and Williams: An Instruction Roofline Model for GPUs (PMBS 2019), memory-pattern walls "
       "(stride-0, unit stride, random; shared-memory bank conflicts)")
NCU_SHARED_CONFLICTS = ("Nsight Compute Kernel Profiling Guide, Memory Workload Analysis (shared-memory wavefronts "
                        "and bank conflicts); ncu rules SharedMemoryConflicts and UncoalescedSharedAccess")
BPG_BANKS = "CUDA C++ Best Practices Guide, Shared Memory and Memory Banks"
CPG_CONSTANT = ("CUDA C++ Programming Guide, Device Memory Accesses, Constant Memory (a warp's request is split "
                "per distinct address: one address is one broadcast)")
NCU_ISSUE = ("Nsight Compute Kernel Profiling Guide, Compute Workload Analysis (executed IPC) and Scheduler "
             "Statistics; ncu rule IssueSlotUtilization")


@dataclass(frozen=True)
class Threshold:
    """A named threshold: its value, unit and what crossing it means."""

    value: float
    unit: str
    meaning: str


@dataclass(frozen=True)
class Finding:
    """What one rule says about one kernel.

    ``status`` is ``"fired"`` (the rule found something), ``"ok"`` (it ran and found
    nothing to fix) or ``"missing"`` (it could not run; ``missing`` names the metrics
    that would enable it). ``limiter`` is a key of :data:`LIMITERS` or None; ``brief``
    is the evidence in a few words, for tables.
    """

    rule: str
    title: str
    status: str
    message: str
    severity: str = "info"
    limiter: str | None = None
    values: Mapping[str, float] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    source: str = ""
    brief: str = ""


@dataclass(frozen=True)
class RowValues:
    """One row as a rule sees it: analysis columns and ncu metrics by name, plus the levels, and the
    vendor's ``words`` for what a finding names (levels, matrix units)."""

    values: Mapping[str, Any]
    levels: tuple[str, ...]
    words: VendorWords = NVIDIA_WORDS

    def level_name(self, level: str) -> str:
        """A level as a finding names it: 'L1', 'SHARED', 'DRAM' (NVIDIA's keys in upper case, as ever);
        'vL1D', 'LDS', 'HBM' on AMD."""
        return self.words.level(level) if self.words.is_amd else level.upper()

    def get(self, name: str) -> float:
        """The value as a float; NaN when absent or not a number."""
        v = self.values.get(name)
        try:
            return float(v) if v is not None else math.nan
        except (TypeError, ValueError):
            return math.nan

    def text(self, name: str) -> str | None:
        v = self.values.get(name)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        try:
            if pd.isna(v):
                return None
        except (TypeError, ValueError):
            pass
        return str(v)


Check = Callable[[RowValues, "Rule"], Finding]


@dataclass(frozen=True)
class Rule:
    """A guidance rule: id, title, source, the metrics it needs, thresholds and its check.

    ``needs`` lists alternative sets of names: the rule runs when every name of at least
    one set has a value (the first set is the preferred one, named when all are missing).
    """

    id: str
    title: str
    source: str
    needs: tuple[tuple[str, ...], ...]
    thresholds: Mapping[str, Threshold]
    check: Check

    def t(self, name: str) -> float:
        return self.thresholds[name].value

    def finding(self, status: str, message: str, **kw: Any) -> Finding:
        return Finding(rule=self.id, title=self.title, status=status, message=message, source=self.source, **kw)


@dataclass(frozen=True)
class Limiter:
    """What limits a kernel, in words, and what usually helps."""

    label: str
    limits: str
    helps: str

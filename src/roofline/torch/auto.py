"""Attribution without changing the user's code: what ``roofline profile --torch`` switches on.

The generated ``sitecustomize`` of ``roofline profile`` calls :func:`activate_from_env` at
interpreter startup; with ``ROOFLINE_TORCH=1`` it runs :func:`activate` and
:func:`enable_operator_ranges`:

- phases: forward is the inside of any root module's forward (a module called outside any
  other), backward the process-wide range opened by a gradient hook on the roots' outputs,
  optimizer the inside of every optimizer's ``step()`` (PyTorch's global step hooks);
- module ranges around every module's forward and the autograd nodes it created
  (:mod:`roofline.torch.modules`);
- operator ranges: ``torch.autograd.profiler.emit_nvtx`` for the rest of the process, when
  PyTorch has CUDA and NVTX (under Nsight Compute).

:func:`inferred_phase` is the phase of an operator when no phase range is open (the counter-free
recorder's fallback).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from roofline import attribution
from roofline.torch import modules, optim
from roofline.torch.env import ENV_TORCH

logger = logging.getLogger(__name__)



@dataclass
class Activation:
    """What :func:`activate` installed; :meth:`remove` takes it out (tests; a profiled process keeps it)."""

    handles: list[Any]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def activate() -> Activation:
    """Phase and module ranges for every module and optimizer of the process (see the module docstring)."""
    return Activation([modules.tracker().track_all(phases=True), optim.track_steps(phases=True)])


_operator_ranges: Any = None  # the emit_nvtx context kept open for the rest of the process


def operator_ranges_unavailable() -> str | None:
    """Why :func:`enable_operator_ranges` would do nothing here, or None when it would work."""
    if not hasattr(torch._C, "_nvtx"):
        return f"PyTorch {torch.__version__} is built without NVTX"
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA device"
    return None


def enable_operator_ranges() -> bool:
    """Open ``torch.autograd.profiler.emit_nvtx(record_shapes=False)`` for the rest of the process:
    an NVTX range per operator (``aten::addmm, seq = 12``) and per autograd node. True when on (or
    already on); False, with the reason logged, where PyTorch has no CUDA or no NVTX."""
    global _operator_ranges
    if _operator_ranges is not None:
        return True
    reason = operator_ranges_unavailable()
    if reason is not None:
        logger.warning("no operator ranges: %s", reason)
        return False
    context = torch.autograd.profiler.emit_nvtx(record_shapes=False)
    context.__enter__()
    _operator_ranges = context
    return True


def activate_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """:func:`activate` and :func:`enable_operator_ranges` when ``ROOFLINE_TORCH`` is "1"; True when activated."""
    environ = os.environ if environ is None else environ
    global _activation
    if environ.get(ENV_TORCH) != "1":
        return False
    if _activation is None:
        _activation = activate()
    enable_operator_ranges()
    return True


_activation: Activation | None = None  # what activate_from_env installed (kept for the process)


def inferred_phase() -> str | None:
    """The phase of an operator running now, from PyTorch's own state: backward while autograd runs
    a graph task on this thread, optimizer inside ``optimizer.step()`` (needs
    :func:`roofline.torch.optim.track_steps`), forward inside a tracked module; else None."""
    if torch._C._current_graph_task_id() != -1:
        return attribution.BACKWARD
    if optim.in_optimizer_step():
        return attribution.OPTIMIZER
    if modules.tracker().in_forward():
        return attribution.FORWARD
    return None

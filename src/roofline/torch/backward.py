"""The backward phase: one process-wide NVTX range per backward pass.

Autograd runs the backward pass of CUDA tensors on its own device threads, and NVTX push/pop
ranges belong to one thread, so a range pushed by the caller of ``loss.backward()`` would not
cover backward kernels. :func:`watch` puts a gradient hook on a root module's outputs; the first
one autograd runs (on the thread doing the backward work) opens a process-wide (start/end)
range, and a callback autograd runs when the whole backward pass has finished closes it. One
range per phase name at a time, however many roots or outputs are watched.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from roofline import phases
from roofline.torch.tensors import output_tensors


@dataclass
class _BackwardRange:
    """The range open now for one phase name, if any."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    handle: phases.RangeHandle | None = None

    def begin(self, name: str, grad: Any) -> None:
        with self.lock:
            if self.handle is not None:
                return
            self.handle = phases.start_range(name)
        torch.autograd.Variable._execution_engine.queue_callback(self.end)

    def end(self) -> None:
        with self.lock:
            handle, self.handle = self.handle, None
        if handle is not None:
            phases.end_range(handle)


_ranges: dict[str, _BackwardRange] = {}
_ranges_lock = threading.Lock()


def _range(name: str) -> _BackwardRange:
    with _ranges_lock:
        return _ranges.setdefault(name, _BackwardRange())


def watch(output: Any, name: str) -> None:
    """Open the ``name`` range when autograd first computes a gradient of a tensor in ``output``."""
    if not torch.is_grad_enabled():
        return
    begin = functools.partial(_range(name).begin, name)
    for t in output_tensors(output):
        if t.requires_grad:
            t.register_hook(begin)

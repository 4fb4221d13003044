"""PyTorch helpers: mark the forward, backward and optimizer phases of a training step.

    model = ...; optimizer = ...
    roofline.torch.annotate(model, optimizer)     # once, before training

After this, every kernel (or, in the counter-free mode, every operator) carries
the phase it ran in: ``forward``, ``backward`` or ``optimizer``.

Why not just ``with roofline.phase("backward"): loss.backward()``? Autograd runs the
backward pass of CUDA tensors on its own device threads, and NVTX push/pop ranges
belong to one thread, so a range pushed by the caller does not cover backward
kernels. Here the backward range is opened by a gradient hook on the model's
outputs, which autograd runs on the thread doing the backward work, as a
process-wide (start/end) NVTX range, and closed by a callback autograd runs when
the whole backward pass has finished.

This module is named ``torch`` inside our package: it imports PyTorch absolutely.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from roofline import phases


@dataclass
class _BackwardState:
    """The backward range currently open for one annotated model, if any."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    handle: phases.RangeHandle | None = None


@dataclass
class Annotation:
    """What :func:`annotate` installed; :meth:`remove` takes it all out again."""

    handles: list[Any] = field(default_factory=list)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles.clear()


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def annotate(model: Any, optimizer: Any = None, *, names: tuple[str, str, str] = ("forward", "backward", "optimizer")) -> Annotation:
    """Mark forward, backward and optimizer phases of ``model`` (a ``torch.nn.Module``).

    - forward: a push/pop range from the model's forward pre-hook to its forward hook
      (closed even when forward raises);
    - backward: a process-wide range opened when autograd computes the gradient of
      any model output (on autograd's thread) and closed when that backward pass ends;
    - optimizer: a push/pop range around ``optimizer.step()`` (step pre/post hooks).

    Returns an :class:`Annotation` whose ``remove()`` undoes it.
    """
    import torch

    forward_name, backward_name, optimizer_name = names
    ann = Annotation()
    state = _BackwardState()

    def end_backward() -> None:
        with state.lock:
            handle, state.handle = state.handle, None
        if handle is not None:
            phases.end_range(handle)

    def begin_backward(grad: Any) -> Any:
        # Runs on the autograd thread, once per output per backward pass.
        with state.lock:
            if state.handle is not None:
                return grad
            state.handle = phases.start_range(backward_name)
        torch.autograd.Variable._execution_engine.queue_callback(end_backward)
        return None

    def pre_forward(module: Any, args: Any) -> None:
        phases.push_phase(forward_name)

    def post_forward(module: Any, args: Any, output: Any) -> None:
        phases.pop_phase()
        if torch.is_grad_enabled():
            for t in _tensors(output):
                if t.requires_grad:
                    t.register_hook(begin_backward)

    ann.handles.append(model.register_forward_pre_hook(pre_forward))
    ann.handles.append(model.register_forward_hook(post_forward, always_call=True))
    if optimizer is not None:
        ann.handles.append(optimizer.register_step_pre_hook(lambda opt, a, k: phases.push_phase(optimizer_name)))
        ann.handles.append(optimizer.register_step_post_hook(lambda opt, a, k: phases.pop_phase()))
    return ann

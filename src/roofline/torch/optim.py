"""The optimizer phase: which thread is inside ``optimizer.step()``, and its NVTX range.

- :func:`annotate_optimizer`: a push/pop phase range around one optimizer's ``step()`` (its own
  step pre/post hooks), for ``roofline.torch.annotate``;
- :func:`track_steps`: PyTorch's global step hooks, around every optimizer's ``step()``: they
  count, per thread, the steps running (:func:`in_optimizer_step`), and with ``phases=True``
  open the optimizer phase for optimizers no ``annotate`` already covers (``roofline profile
  --torch``, where the user's code is unchanged).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from roofline import attribution, phases


class _Steps:
    """Global optimizer step hooks, installed while anyone asks for them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.local = threading.local()
        self.users = 0
        self.phase_users = 0
        self.handles: list[Any] = []
        self.annotated: weakref.WeakSet[Any] = weakref.WeakSet()

    def depth(self) -> list[int]:
        """This thread's running steps, innermost last: 1 where the step opened the optimizer phase."""
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        return stack

    def pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        opened = self.phase_users > 0 and optimizer not in self.annotated
        if opened:
            phases.push_phase(attribution.OPTIMIZER)
        self.depth().append(int(opened))

    def post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        stack = self.depth()
        if stack and stack.pop():
            phases.pop_phase()


_STEPS = _Steps()


class _Use:
    def __init__(self, phases: bool):
        self._phases: bool | None = phases

    def remove(self) -> None:
        if self._phases is None:
            return
        with _STEPS.lock:
            _STEPS.users -= 1
            _STEPS.phase_users -= int(self._phases)
            if _STEPS.users == 0:
                for handle in _STEPS.handles:
                    handle.remove()
                _STEPS.handles = []
        self._phases = None


def track_steps(*, phases: bool = False) -> _Use:
    """Install the global step hooks (once per process); ``remove()`` on the result undoes this call."""
    with _STEPS.lock:
        _STEPS.users += 1
        _STEPS.phase_users += int(phases)
        if not _STEPS.handles:
            _STEPS.handles = [register_optimizer_step_pre_hook(_STEPS.pre),
                              register_optimizer_step_post_hook(_STEPS.post)]
    return _Use(phases)


def in_optimizer_step() -> bool:
    """True on a thread inside ``optimizer.step()`` (needs :func:`track_steps`)."""
    return bool(_STEPS.depth())


def annotate_optimizer(optimizer: Any, name: str = attribution.OPTIMIZER) -> list[Any]:
    """A ``name`` phase range around ``optimizer.step()``; returns the removable hook handles.
    The global hooks of :func:`track_steps` then leave this optimizer's phase to these."""
    _STEPS.annotated.add(optimizer)
    return [optimizer.register_step_pre_hook(lambda opt, args, kwargs: phases.push_phase(name)),
            optimizer.register_step_post_hook(lambda opt, args, kwargs: phases.pop_phase()),
            _Forget(optimizer)]


class _Forget:
    """A handle that forgets an annotated optimizer when removed."""

    def __init__(self, optimizer: Any):
        self._ref = weakref.ref(optimizer)

    def remove(self) -> None:
        optimizer = self._ref()
        if optimizer is not None:
            _STEPS.annotated.discard(optimizer)

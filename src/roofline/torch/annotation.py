"""``roofline.torch.annotate(model, optimizer)``: phases and module paths of one model's training step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roofline import attribution


@dataclass
class Annotation:
    """What :func:`annotate` installed; :meth:`remove` takes it all out again."""

    handles: list[Any] = field(default_factory=list)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles.clear()


def annotate(model: Any, optimizer: Any = None, *, name: str | None = None,
             names: tuple[str, str, str] = (attribution.FORWARD, attribution.BACKWARD, attribution.OPTIMIZER),
             ) -> Annotation:
    """Mark the phases and module paths of ``model`` (a ``torch.nn.Module``, possibly wrapped later
    by DDP or ``torch.compile``).

    - forward: a push/pop phase range from the model's forward pre-hook to its forward hook
      (closed even when forward raises), and inside it a range ``roofline.module:<path>`` per
      module (:mod:`roofline.torch.modules`); the root of the paths is ``name``, else the model's
      class name;
    - backward: a process-wide phase range opened when autograd computes the gradient of any
      model output (on autograd's thread) and closed when that backward pass ends; each autograd
      node a module's forward created runs inside that module's range;
    - optimizer: a push/pop phase range around ``optimizer.step()``.

    ``names``: the forward, backward and optimizer phase names. Returns an :class:`Annotation`
    whose ``remove()`` undoes it.
    """
    if name is not None and (not isinstance(name, str) or not name or "." in name):
        raise ValueError(f"a model's name is a non-empty string without dots, not {name!r}")
    forward_name, backward_name, optimizer_name = names
    from roofline.torch import modules, optim  # PyTorch, imported when annotate is called, not when named

    spec = modules.RootSpec(label=name, phases=(forward_name, backward_name))
    ann = Annotation([modules.tracker().register_root(model, spec)])
    if optimizer is not None:
        ann.handles.extend(optim.annotate_optimizer(optimizer, optimizer_name))
    return ann

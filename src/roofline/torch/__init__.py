"""PyTorch helpers: phases and module paths of a training step, for every kernel.

    model = ...; optimizer = ...
    roofline.torch.annotate(model, optimizer)     # once, before training

After this, every kernel (or, in the counter-free mode, every operator) carries the phase it ran
in (``forward``, ``backward`` or ``optimizer``) and the module whose forward caused it
(``DeepCamMini.enc1.0``; for a backward kernel, the module whose forward created the autograd
node). ``roofline profile --torch`` does the same for every model of a program left unchanged
(:mod:`roofline.torch.auto`).

- :mod:`.annotation`: :func:`annotate` and what it returns;
- :mod:`.modules`: module paths, module NVTX ranges, :func:`current_module`;
- :mod:`.backward`: the process-wide backward range; :mod:`.optim`: the optimizer phase;
- :mod:`.auto`: process-wide activation, operator ranges (``emit_nvtx``), inferred phases.

This package is named ``torch`` inside ours: its modules import PyTorch absolutely. Importing it
imports nothing; PyTorch is imported when one of its names is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofline._lazy import attach

_NAMES = {
    "annotate": "roofline.torch.annotation",
    "Annotation": "roofline.torch.annotation",
    "current_module": "roofline.torch.modules",
}
_SUBMODULES = ("annotation", "auto", "backward", "modules", "optim", "tensors")

__getattr__, __dir__ = attach(__name__, _NAMES, _SUBMODULES)

__all__ = ["Annotation", "annotate", "current_module"]

if TYPE_CHECKING:
    from roofline.torch.annotation import Annotation, annotate
    from roofline.torch.modules import current_module

"""The tensors a module returns, wherever they sit in its output."""

from __future__ import annotations

from typing import Any

import torch


def output_tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in ``value``: a tensor, or tensors nested in lists, tuples and dicts (Hugging Face's
    ``ModelOutput`` is a dict)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in output_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in output_tensors(v)]
    return []

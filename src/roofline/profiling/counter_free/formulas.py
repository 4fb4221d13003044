"""FLOPs and bytes of one PyTorch operator call, from its arguments and result.

FLOPs: ``torch.utils.flop_counter.flop_registry`` (matmul, convolution and their
backward, attention) first; then our table of FLOPs per element (:data:`PER_ELEMENT`)
for element-wise, reduction, normalization, loss and optimizer (``_foreach_*``) ops;
ops that only move data (:data:`DATA_MOVEMENT`) have 0 FLOPs. Any other op has
unknown FLOPs (None), never 0.

The per-element counts are estimates: one FLOP per add, multiply, divide, comparison,
square root or transcendental function of each output (or input, for reductions)
element. They are written here so a reader can check them.

Bytes: every distinct element of every tensor argument is read once (broadcast,
stride-0 dimensions count once) and every element of every result is written once:
``a + b`` moves 3 x numel x itemsize bytes. The ``out=`` argument is written, not read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

#: FLOPs per element, by op name (the overload packet name, without "aten.").
#: "in" counts per element of the largest input, "out" per element of the result.
PER_ELEMENT: dict[str, tuple[float, str]] = {
    # element-wise arithmetic and comparisons: one operation per result element
    **{op: (1.0, "out") for op in (
        "add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "neg", "neg_",
        "reciprocal", "reciprocal_", "sqrt", "sqrt_", "rsqrt", "rsqrt_", "exp", "exp_", "log", "log_",
        "abs", "abs_", "pow", "pow_", "maximum", "minimum", "clamp", "clamp_", "clamp_min", "clamp_min_",
        "clamp_max", "relu", "relu_", "threshold", "threshold_", "threshold_backward", "eq", "ne", "lt",
        "le", "gt", "ge", "sign", "where", "square",
        "_foreach_add", "_foreach_add_", "_foreach_sub", "_foreach_sub_", "_foreach_mul", "_foreach_mul_",
        "_foreach_div", "_foreach_div_", "_foreach_sqrt", "_foreach_sqrt_", "_foreach_neg", "_foreach_neg_",
        "_foreach_reciprocal_", "_foreach_maximum_",
    )},
    # fused multiply-adds of optimizers: out = a + v * b * c, a + w * (b - a), ...
    **{op: (3.0, "out") for op in (
        "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp", "lerp_",
        "_foreach_addcmul", "_foreach_addcmul_", "_foreach_addcdiv", "_foreach_addcdiv_",
        "_foreach_lerp", "_foreach_lerp_",
    )},
    # activations
    "sigmoid": (4.0, "out"), "sigmoid_": (4.0, "out"), "sigmoid_backward": (3.0, "out"),
    "tanh": (6.0, "out"), "tanh_": (6.0, "out"), "tanh_backward": (3.0, "out"),
    "silu": (5.0, "out"), "silu_": (5.0, "out"), "silu_backward": (8.0, "out"),
    "gelu": (8.0, "out"), "gelu_backward": (12.0, "out"),
    "leaky_relu": (2.0, "out"), "leaky_relu_": (2.0, "out"), "leaky_relu_backward": (2.0, "out"),
    "hardtanh": (2.0, "out"), "hardtanh_": (2.0, "out"), "hardtanh_backward": (2.0, "out"),
    # reductions: one operation per input element
    **{op: (1.0, "in") for op in ("sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod")},
    "norm": (2.0, "in"), "linalg_vector_norm": (2.0, "in"), "_foreach_norm": (2.0, "in"),
    "var": (3.0, "in"), "std": (3.0, "in"), "var_mean": (3.0, "in"),
    # softmax family: max, subtract, exp, sum, divide
    "_softmax": (5.0, "out"), "_log_softmax": (5.0, "out"),
    "_softmax_backward_data": (4.0, "out"), "_log_softmax_backward_data": (4.0, "out"),
    # losses
    "nll_loss_forward": (1.0, "out"), "nll_loss_backward": (1.0, "out"),
    "nll_loss2d_forward": (1.0, "in"), "nll_loss2d_backward": (1.0, "out"),
    "mse_loss": (3.0, "in"), "mse_loss_backward": (3.0, "out"),
    # pooling: one comparison or add per input element
    "max_pool2d_with_indices": (1.0, "in"), "max_pool2d_with_indices_backward": (1.0, "out"),
    "avg_pool2d": (1.0, "in"), "avg_pool2d_backward": (1.0, "out"), "_adaptive_avg_pool2d": (1.0, "in"),
    "upsample_nearest2d": (0.0, "out"), "upsample_bilinear2d": (8.0, "out"),
}

#: Normalizations: FLOPs per element of the input. Training batch norm computes
#: statistics (sum x, sum x^2: 3) and normalizes ((x - mean) * invstd * w + b: 4).
NORMALIZATION: dict[str, float] = {
    "native_batch_norm": 7.0, "_native_batch_norm_legit": 7.0, "_native_batch_norm_legit_no_training": 4.0,
    "_native_batch_norm_legit_functional": 7.0, "native_batch_norm_backward": 10.0,
    "cudnn_batch_norm": 7.0, "cudnn_batch_norm_backward": 10.0,
    "miopen_batch_norm": 7.0, "miopen_batch_norm_backward": 10.0,
    "native_layer_norm": 7.0, "native_layer_norm_backward": 10.0,
    "native_group_norm": 7.0, "native_group_norm_backward": 10.0,
}

#: Ops that move or create data without arithmetic: 0 FLOPs, bytes counted.
DATA_MOVEMENT = frozenset({
    "copy_", "_to_copy", "clone", "contiguous", "cat", "stack", "fill_", "zero_", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "scalar_tensor",
    "index", "index_select", "gather", "scatter", "scatter_add", "scatter_add_", "index_put_", "masked_fill_",
    "masked_fill", "constant_pad_nd", "repeat", "flip", "roll", "arange", "_foreach_copy_", "_foreach_zero_",
    "embedding", "embedding_dense_backward", "_unsafe_index", "max_unpool2d", "fill", "bernoulli_",
    "uniform_", "normal_", "randn", "rand", "randint", "native_dropout", "native_dropout_backward",
    "_local_scalar_dense", "detach_", "_foreach_clamp_max_", "_foreach_clamp_min_",
})

#: Ops that allocate or alias without touching data: not recorded at all.
SKIPPED = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_", "resize_",
    "record_stream", "_to_dense", "is_same_size", "_unsafe_view", "view", "_reshape_alias", "alias",
    "detach", "lift_fresh", "_record_function_enter", "_record_function_enter_new", "_record_function_exit", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset",
})


#: Ops whose ``alpha`` argument, when not 1, adds a multiply per element.
_SCALED = frozenset({"add", "add_", "sub", "sub_", "_foreach_add", "_foreach_add_", "_foreach_sub", "_foreach_sub_"})


def _is_tensor(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def flatten_tensors(value: Any) -> list[Any]:
    """Every tensor in a (nested) argument or result."""
    if _is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flatten_tensors(v)]
    return []


def distinct_elements(t: Any) -> int:
    """Elements of ``t`` stored in memory: broadcast (stride 0) dimensions count once."""
    return math.prod(n for n, s in zip(t.shape, t.stride()) if s != 0) if t.dim() else 1


def tensor_bytes(tensors: Iterable[Any]) -> int:
    """Bytes of the distinct elements of the tensors (B)."""
    return sum(distinct_elements(t) * t.element_size() for t in tensors)


def op_bytes(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int:
    """Bytes read (every tensor argument but ``out=``) plus bytes written (the result) (B)."""
    reads = flatten_tensors(args) + flatten_tensors({k: v for k, v in kwargs.items() if k != "out"})
    return tensor_bytes(reads) + tensor_bytes(flatten_tensors(out))


def _largest_numel(tensors: list[Any]) -> int:
    return max((t.numel() for t in tensors), default=0)


def op_flops(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float | None:
    """FLOPs of one call of ``func`` (an ``OpOverload``), or None when we have no formula."""
    from torch.utils.flop_counter import flop_registry

    packet = func._overloadpacket
    if packet in flop_registry:
        return float(flop_registry[packet](*args, **kwargs, out_val=out))
    name = packet.__name__
    if name in DATA_MOVEMENT:
        return 0.0
    if name in NORMALIZATION:
        return NORMALIZATION[name] * _largest_numel(flatten_tensors(args[:1]))
    if name in PER_ELEMENT:
        per, basis = PER_ELEMENT[name]
        if name in _SCALED and kwargs.get("alpha", 1) != 1:  # a + alpha * b: a multiply more
            per += 1.0
        if basis == "in":
            return per * sum(t.numel() for t in flatten_tensors(args[:1]))
        outs = flatten_tensors(out)
        if not outs and name.endswith("_"):  # in-place foreach ops return None: count self
            outs = flatten_tensors(args[:1])
        return per * sum(t.numel() for t in outs)
    return None

"""FLOPs and bytes of one PyTorch operator call, from its arguments and result.

FLOPs: our own formulas (:data:`FORMULAS`) first, for ops the registry lacks (CPU attention,
losses, embedding backward, fused optimizers, grouped, scaled and integer matrix products) or
miscounts (packed FP4); then ``torch.utils.flop_counter.flop_registry`` (matmul, convolution and
their backward, CUDA attention); then our table of FLOPs per element (:data:`PER_ELEMENT`) for
element-wise, reduction, normalization and optimizer (``_foreach_*``) ops; ops that only move data
(:data:`DATA_MOVEMENT`) have 0 FLOPs. Any other op has unknown FLOPs (None), never 0.

Matmul-like ops (registry and ours) count 2 FLOPs per multiply-add: ``mm`` of (m, k)
by (k, n) is 2mnk, ``addmm`` does not count its bias add, a convolution is
2 x N x Cout x Hout x Wout x Cin/groups x Kh x Kw (padding included, bias not), its
backward the same per gradient it computes (input, weight). Attention is its two
matmuls, Q K^T and P V: 2 x B x H x Sq x Sk x (Dqk + Dv) forward, five backward
(recomputed Q K^T, dO V^T, P^T dO, dS K, dS^T Q): 2 x B x H x Sq x Sk x (3 Dqk + 2 Dv),
2.5x the forward when Dqk = Dv, as the registry counts CUDA flash attention; the
softmax is not counted and a causal mask is not subtracted (a causal kernel that skips
masked blocks does about half). Sources: torch/utils/flop_counter.py (PyTorch 2.13:
``sdpa_flop_count``, ``sdpa_backward_flop_count``, ``conv_flop_count``); the
Megatron-LM FLOP count (Narayanan et al., SC21: 24 B S d^2 + 4 B S^2 d per transformer
layer forward).

The per-element counts are estimates: one FLOP per add, multiply, divide, comparison,
square root or transcendental function of each output (or input, for reductions)
element. They are written here so a reader can check them.

Bytes: every distinct element of every tensor argument is read once (broadcast,
stride-0 dimensions count once) and every element of every result is written once:
``a + b`` moves 3 x numel x itemsize bytes. The ``out=`` argument is written, not read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
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
        "sin", "sin_", "cos", "cos_", "erf", "erf_", "exp2", "expm1", "log1p", "log2", "log10",
        "floor", "ceil", "round", "trunc", "remainder", "fmod", "logical_not", "logical_and", "logical_or",
        "bitwise_not", "bitwise_and", "bitwise_or", "isnan", "isinf",
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
    **{op: (1.0, "in") for op in (
        "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "any", "all", "cumsum",
    )},
    "logsumexp": (4.0, "in"),  # max, subtract, exp, sum
    "norm": (2.0, "in"), "linalg_vector_norm": (2.0, "in"), "_foreach_norm": (2.0, "in"),
    "var": (3.0, "in"), "std": (3.0, "in"), "var_mean": (3.0, "in"),
    # softmax family: max, subtract, exp, sum, divide
    "_softmax": (5.0, "out"), "_log_softmax": (5.0, "out"),
    "_softmax_backward_data": (4.0, "out"), "_log_softmax_backward_data": (4.0, "out"),
    # losses
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
    "embedding", "_unsafe_index", "tril", "triu", "tril_", "triu_", "masked_scatter", "max_unpool2d", "fill",
    "bernoulli_",
    "uniform_", "normal_", "randn", "rand", "randint", "native_dropout", "native_dropout_backward",
    "_local_scalar_dense", "detach_", "_foreach_clamp_max_", "_foreach_clamp_min_",
})

#: Ops that allocate or alias without touching data: not recorded at all.
SKIPPED = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_", "resize_",
    "record_stream", "_to_dense", "is_same_size", "_unsafe_view", "view", "_reshape_alias", "alias",
    "detach", "lift_fresh", "_record_function_enter", "_record_function_enter_new", "_record_function_exit", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset",
})


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    """Argument ``name`` of an op call, given positionally at ``index`` or by keyword."""
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def attention_flops(q: Any, k: Any, v: Any) -> float:
    """Q K^T and P V of (B, Hq, Sq, Dqk), (B, Hkv, Sk, Dqk), (B, Hkv, Sk, Dv) tensors:
    2 x B x Hq x Sq x Sk x (Dqk + Dv). All of the query's leading dimensions count
    (grouped-query attention broadcasts the key/value heads to the query's Hq)."""
    *lead, sq, dqk = q.shape
    sk, dv = k.shape[-2], v.shape[-1]
    return 2.0 * math.prod(lead) * sq * sk * (dqk + dv)


def attention_backward_flops(q: Any, k: Any, v: Any) -> float:
    """The five backward matmuls (Q K^T recomputed, dO V^T, P^T dO, dS K, dS^T Q):
    2 x B x Hq x Sq x Sk x (3 Dqk + 2 Dv)."""
    *lead, sq, dqk = q.shape
    sk, dv = k.shape[-2], v.shape[-1]
    return 2.0 * math.prod(lead) * sq * sk * (3 * dqk + 2 * dv)


def _attention(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    return attention_flops(args[0], args[1], args[2])


def _attention_backward(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    return attention_backward_flops(args[1], args[2], args[3])


def matmul_flops(a: Any, b: Any, out: Any) -> float:
    """A matrix product's 2 x M x N x K, for one product or a group of them (PyTorch's scaled, grouped
    and integer products): 2 x (result elements) x K, where K is the last dimension of ``a``, twice
    that for packed FP4 (``float4_e2m1fn_x2``: two values per element). Grouped along K (``a`` (M, K)
    and ``b`` (K, N) holding every group's K, result (groups, M, N)), each result element sums over
    its group's part of K only: 2 x M x N x K. Rows of a grouped result past the last offset (padding)
    are counted: reading the offsets would make the GPU wait."""
    k = a.shape[-1] * (2 if str(a.dtype) == "torch.float4_e2m1fn_x2" else 1)
    elements = out.numel()
    if a.dim() == 2 and b.dim() == 2 and out.dim() == 3:  # groups along K
        elements //= max(out.shape[0], 1)
    return 2.0 * elements * k


def _matmul(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    return matmul_flops(_arg(args, kwargs, 0, "self"), _arg(args, kwargs, 1, "mat2"), out)


def _nll_loss(target_index: int) -> Callable[[tuple[Any, ...], dict[str, Any], Any], float]:
    """Negative log-likelihood forward or backward: one operation per target (the picked
    log-probability summed, or its gradient written), one more with class weights."""
    weight_index = target_index + 1

    def flops(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
        weighted = _arg(args, kwargs, weight_index, "weight") is not None
        return float(_arg(args, kwargs, target_index, "target").numel() * (2 if weighted else 1))

    return flops


def _embedding_backward(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    """Each element of the output gradient is added into its token's row: one add each."""
    return float(args[0].numel())


def _param_elements(args: tuple[Any, ...]) -> int:
    return sum(t.numel() for t in flatten_tensors(args[:1]))


def _fused_adam(decoupled: bool) -> Callable[[tuple[Any, ...], dict[str, Any], Any], float]:
    """Fused Adam / AdamW: the per-element FLOPs of the unfused (single-tensor) update,
    summed from :data:`PER_ELEMENT`: lerp_ m (3), mul_ + addcmul_ v (4), sqrt, div, add_
    eps (3), addcdiv_ p (3) = 13; weight decay adds p *= 1 - lr wd (AdamW, 1) or
    g += wd p (Adam, 2); amsgrad a maximum (1); a grad scale an unscaling divide (1)."""

    def flops(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
        per = 13.0
        if kwargs.get("weight_decay", 0.0):
            per += 1.0 if decoupled else 2.0
        per += 1.0 if kwargs.get("amsgrad", False) else 0.0
        per += 1.0 if kwargs.get("grad_scale") is not None else 0.0
        return per * _param_elements(args)

    return flops


def _fused_sgd(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> float:
    """Fused SGD, as the unfused update: p += -lr g (2); weight decay g += wd p (2);
    momentum after the first step buf = m buf + (1 - dampening) g (2, 3 with dampening);
    Nesterov g += m buf (2)."""
    per = 2.0
    if kwargs.get("weight_decay", 0.0):
        per += 2.0
    if kwargs.get("momentum", 0.0):
        if not kwargs.get("is_first_step", False):
            per += 3.0 if kwargs.get("dampening", 0.0) else 2.0
        if kwargs.get("nesterov", False):
            per += 2.0
    if kwargs.get("grad_scale") is not None:
        per += 1.0
    return per * _param_elements(args)


#: Our formulas, by op name: ``f(args, kwargs, out) -> FLOPs``; asked before the registry. For ops
#: that ``torch.utils.flop_counter`` does not register (PyTorch 2.13): CPU SDPA dispatches to
#: ``_scaled_dot_product_flash_attention_for_cpu`` (and its ``_backward``), absent there; the grouped,
#: integer and second scaled products. And ``_scaled_mm``, which the registry counts from the operands'
#: shapes: half the FLOPs of a packed FP4 product.
FORMULAS: dict[str, Callable[[tuple[Any, ...], dict[str, Any], Any], float]] = {
    **{name: _matmul for name in ("_scaled_mm", "_scaled_mm_v2", "_grouped_mm", "_scaled_grouped_mm", "_int_mm")},
    "_scaled_dot_product_flash_attention_for_cpu": _attention,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _attention_backward,
    "_scaled_dot_product_fused_attention_overrideable": _attention,
    "_scaled_dot_product_fused_attention_overrideable_backward": _attention_backward,
    "_scaled_dot_product_attention_math_for_mps": _attention,
    "nll_loss_forward": _nll_loss(1), "nll_loss2d_forward": _nll_loss(1),
    "nll_loss_backward": _nll_loss(2), "nll_loss2d_backward": _nll_loss(2),
    "embedding_dense_backward": _embedding_backward,
    "_fused_adam_": _fused_adam(decoupled=False), "_fused_adamw_": _fused_adam(decoupled=True),
    "_fused_sgd_": _fused_sgd,
}


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
    name = packet.__name__
    if name in FORMULAS:
        return FORMULAS[name](args, kwargs, out)
    if packet in flop_registry:
        return float(flop_registry[packet](*args, **kwargs, out_val=out))
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

"""The counter-free estimate's FLOPs against hand counts: conv, linear, matmul, CPU attention,
normalization, activations, losses, a Hugging Face-style transformer block, the DeepCAM
miniature, and where autocast bf16 puts them.

Each count is recorded through a TorchDispatchMode of this file that calls
``formulas.op_flops`` on every ATen operator (as the Recorder does), so it checks the
formulas and which ATen ops PyTorch 2.13 dispatches to on the CPU, not the timing.
Matmul-like counts are 2 FLOPs per multiply-add (see formulas.py).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import needs

torch = needs.torch()

from torch.nn import functional as F  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils.flop_counter import flop_registry  # noqa: E402

from roofline.profiling.counter_free import formulas  # noqa: E402
from roofline.profiling.counter_free.recorder import Recorder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_roofline_example_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Count(TorchDispatchMode):
    """Every recorded ATen call as (op name, FLOPs or None), through ``formulas.op_flops``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, float | None]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func._overloadpacket.__name__
        if not (func.is_view or name in formulas.SKIPPED):
            self.calls.append((name, formulas.op_flops(func, args, kwargs, out)))
        return out

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]

    def flops(self, *names: str) -> float:
        """Summed FLOPs of the calls of ``names`` (each must be known and called)."""
        found = [(n, f) for n, f in self.calls if n in names]
        assert found, (names, self.names())
        assert all(f is not None for _, f in found), found
        return sum(f for _, f in found if f is not None)

    def total(self) -> float:
        assert not self.unknown(), self.unknown()
        return sum(f for _, f in self.calls if f is not None)

    def unknown(self) -> set[str]:
        return {n for n, f in self.calls if f is None}


def _count(fn: Any, grad: bool = False) -> _Count:
    mode = _Count()
    with torch.set_grad_enabled(grad), mode:
        fn()
    return mode


def _forward_backward(fn: Any) -> tuple[_Count, _Count]:
    """FLOPs of ``fn()`` (forward) and of ``loss.backward()`` for ``loss = fn().sum()``."""
    forward = _count(fn, grad=True)
    loss = fn().sum()
    backward = _count(loss.backward, grad=True)
    return forward, backward


def test_conv2d_forward_and_backward_are_2_n_cout_hout_wout_cin_k_k_per_pass() -> None:
    n, cin, cout, h, w, k = 2, 3, 5, 12, 10, 3
    x = torch.randn(n, cin, h, w, requires_grad=True)
    wt = torch.randn(cout, cin, k, k, requires_grad=True)
    fwd, bwd = _forward_backward(lambda: F.conv2d(x, wt, padding=1))
    per_pass = 2 * n * cout * h * w * cin * k * k  # 2*2*5*12*10*3*9 = 64,800 (padding 1: Hout = H)
    assert fwd.flops("convolution") == per_pass == 64_800
    assert bwd.flops("convolution_backward") == 2 * per_pass  # grad input + grad weight
    x_const = torch.randn(n, cin, h, w)  # an input that needs no gradient: grad weight only
    _, bwd = _forward_backward(lambda: F.conv2d(x_const, wt, padding=1))
    assert bwd.flops("convolution_backward") == per_pass


def test_conv_transpose2d_is_2_n_cin_hin_win_cout_k_k() -> None:
    n, cin, cout, h, w, k = 2, 6, 4, 5, 7, 2
    x, wt = torch.randn(n, cin, h, w), torch.randn(cin, cout, k, k)
    fwd = _count(lambda: F.conv_transpose2d(x, wt, stride=2))
    assert fwd.flops("convolution") == 2 * n * cin * h * w * cout * k * k == 13_440  # every input pixel, K*K taps


def test_linear_forward_and_backward() -> None:
    b, fin, fout = 7, 11, 5
    lin = torch.nn.Linear(fin, fout)
    x = torch.randn(b, fin, requires_grad=True)
    fwd, bwd = _forward_backward(lambda: lin(x))
    assert fwd.flops("addmm") == 2 * b * fin * fout == 770  # the bias add is not counted
    # backward: grad x = gy W (2*b*out*in), grad W = gy^T x (2*out*b*in), grad bias = sum over b (b*out)
    assert bwd.flops("mm") == 2 * (2 * b * fin * fout) == 1540
    assert bwd.flops("sum") == b * fout == 35


def test_matmul_and_bmm_are_2_batch_m_k_n() -> None:
    a, b = torch.randn(4, 6, 8), torch.randn(4, 8, 3)
    assert _count(lambda: torch.bmm(a, b)).flops("bmm") == 2 * 4 * 6 * 8 * 3 == 1152
    a4, b4 = torch.randn(2, 3, 6, 8), torch.randn(2, 3, 8, 5)  # 4-d matmul runs as one bmm over 2*3
    assert _count(lambda: torch.matmul(a4, b4)).flops("bmm") == 2 * 6 * 6 * 8 * 5 == 2880
    m1, m2 = torch.randn(9, 4), torch.randn(4, 7)
    assert _count(lambda: m1 @ m2).flops("mm") == 2 * 9 * 4 * 7 == 504


def test_cpu_sdpa_dispatches_to_flash_for_cpu_which_the_flop_registry_lacks_and_ours_counts() -> None:
    bsz, h, sq, sk, d = 2, 3, 5, 7, 8
    q = torch.randn(bsz, h, sq, d, requires_grad=True)
    k, v = torch.randn(bsz, h, sk, d, requires_grad=True), torch.randn(bsz, h, sk, d, requires_grad=True)
    fwd, bwd = _forward_backward(lambda: F.scaled_dot_product_attention(q, k, v))
    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    assert op in fwd.names() or op.__name__ in fwd.names()
    assert op not in flop_registry
    assert torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward not in flop_registry
    forward = 4 * bsz * h * sq * sk * d  # QK^T and PV: 2*B*H*Sq*Sk*D each = 4*2*3*5*7*8 = 6720
    assert fwd.flops("_scaled_dot_product_flash_attention_for_cpu") == forward == 6720
    # backward: QK^T recomputed, dO V^T, P^T dO, dS K, dS^T Q: five matmuls, 2.5x the forward
    assert bwd.flops("_scaled_dot_product_flash_attention_for_cpu_backward") == 2.5 * forward == 16_800
    # the same numbers as the registry's formulas for CUDA flash attention on these shapes
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    shape = [bsz, h, sq, d], [bsz, h, sk, d], [bsz, h, sk, d]
    assert forward == sdpa_flop_count(*shape)
    assert 2.5 * forward == sdpa_backward_flop_count([bsz, h, sq, d], *shape)
    causal = _count(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert causal.flops("_scaled_dot_product_flash_attention_for_cpu") == forward  # the mask is not subtracted


def test_grouped_query_attention_counts_the_query_heads() -> None:
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)
    fwd = _count(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    assert fwd.flops("_scaled_dot_product_flash_attention_for_cpu") == 4 * 2 * 4 * 5 * 7 * 8 == 8960


def test_attention_formulas_take_any_leading_dimensions() -> None:
    q, k, v = torch.randn(3, 5, 8), torch.randn(3, 7, 8), torch.randn(3, 7, 4)  # no head dimension, Dv != Dqk
    assert formulas.attention_flops(q, k, v) == 2 * 3 * 5 * 7 * (8 + 4) == 2520
    assert formulas.attention_backward_flops(q, k, v) == 2 * 3 * 5 * 7 * (3 * 8 + 2 * 4) == 6720


def test_layer_norm_gelu_softmax_per_element_counts() -> None:
    x = torch.randn(6, 10, requires_grad=True)
    ln = torch.nn.LayerNorm(10)
    fwd, bwd = _forward_backward(lambda: ln(x))
    assert fwd.flops("native_layer_norm") == 7 * 60  # sum x, sum x^2 (3) + (x - mean) * invstd * w + b (4)
    assert bwd.flops("native_layer_norm_backward") == 10 * 60
    fwd, bwd = _forward_backward(lambda: F.gelu(x))
    assert fwd.flops("gelu") == 8 * 60 and bwd.flops("gelu_backward") == 12 * 60
    fwd, bwd = _forward_backward(lambda: F.softmax(x, dim=-1))
    assert fwd.flops("_softmax") == 5 * 60  # max, subtract, exp, sum, divide
    assert bwd.flops("_softmax_backward_data") == 4 * 60


def test_cross_entropy_is_log_softmax_plus_one_operation_per_target() -> None:
    n, c = 8, 5
    logits = torch.randn(n, c, requires_grad=True)
    target = torch.randint(0, c, (n,))
    fwd = _count(lambda: F.cross_entropy(logits, target), grad=True)
    assert fwd.flops("_log_softmax") == 5 * n * c == 200
    assert fwd.flops("nll_loss_forward") == n == 8  # was 2 (per output scalar) before
    loss = F.cross_entropy(logits, target)
    bwd = _count(lambda: loss.backward(), grad=True)
    assert bwd.flops("nll_loss_backward") == n  # was n*c (per element of the gradient, mostly zeros)
    assert bwd.flops("_log_softmax_backward_data") == 4 * n * c
    weighted = _count(lambda: F.cross_entropy(logits, target, weight=torch.rand(c)))
    assert weighted.flops("nll_loss_forward") == 2 * n  # a class-weight multiply per target
    img, tgt = torch.randn(2, c, 4, 3), torch.randint(0, c, (2, 4, 3))  # per-pixel: nll_loss2d
    assert _count(lambda: F.cross_entropy(img, tgt)).flops("nll_loss2d_forward") == 2 * 4 * 3


def test_transformer_block_forward_is_24_b_s_d2_plus_4_b_s2_d_within_1_percent() -> None:
    tb = _example("transformer_block")
    bsz, s, d, heads = 1, 64, 256, 4
    torch.manual_seed(0)
    block = tb.Block(d, heads)
    x = torch.randn(bsz, s, d)
    fwd = _count(lambda: block(x))
    assert fwd.unknown() == set()
    # matmul terms: q/k/v/o 4 * 2*B*S*d^2, fc1 and fc2 2 * 2*B*S*4d*d, QK^T + PV 2 * 2*B*S^2*d
    standard = 24 * bsz * s * d**2 + 4 * bsz * s**2 * d  # 100,663,296 + 4,194,304 = 104,857,600
    assert fwd.flops("addmm") == 24 * bsz * s * d**2
    assert fwd.flops("_scaled_dot_product_flash_attention_for_cpu") == 4 * bsz * s**2 * d
    # everything else: 2 layer norms 2*7*B*S*d, GELU on 4d 8*4*B*S*d, 2 residual adds 2*B*S*d = 48*B*S*d
    assert fwd.total() == standard + 48 * bsz * s * d  # 104,857,600 + 786,432
    assert abs(fwd.total() / standard - 1) < 0.01  # 0.75 %: the standard count is matmuls only


def test_transformer_training_step_matmuls_are_3x_forward_and_every_op_is_counted() -> None:
    tb = _example("transformer_block")
    bsz, s, d, heads, layers, vocab = 2, 16, 32, 2, 2, 64
    step = _count(lambda: tb.train(batch=bsz, seq=s, dim=d, heads=heads, layers=layers, steps=1, vocab=vocab),
                  grad=True)
    assert step.unknown() == set()  # CPU SDPA, nll_loss, embedding backward all have formulas now
    linear = layers * 24 * bsz * s * d**2 + 2 * bsz * s * d * vocab  # blocks + LM head, forward
    attention = layers * 4 * bsz * s**2 * d
    # forward + backward: each linear 1 + 2 (grad input, grad weight); attention 1 + 2.5
    assert step.flops("addmm", "mm") == 3 * linear  # 3 * (786,432 + 131,072) = 2,752,512
    assert step.flops("_scaled_dot_product_flash_attention_for_cpu",
                      "_scaled_dot_product_flash_attention_for_cpu_backward") == 3.5 * attention
    params = sum(p.numel() for p in tb.TinyLM(vocab, d, heads, layers, max_seq=s).parameters())
    # AdamW per element: mul_ decay 1, lerp_ 3, mul_ + addcmul_ 4, sqrt + div + add_ 3, addcdiv_ 3 = 14
    assert step.flops("lerp_", "addcmul_", "sqrt", "div", "addcdiv_") == (3 + 3 + 1 + 1 + 3) * params


def _deepcam_convs(n: int, channels: int, width: int, classes: int, size: int) -> tuple[int, int]:
    """Hand count of DeepCamMini's forward conv FLOPs, and that of its first conv (enc1)."""
    w = width

    def conv(cin: int, cout: int, hw: int, k: int = 3) -> int:  # 2*N*Cout*Hout*Wout*Cin*K*K
        return 2 * n * cout * hw * hw * cin * k * k

    def up(cin: int, cout: int, hw_in: int) -> int:  # transposed 2x2 stride 2: 2*N*Cin*Hin*Win*Cout*4
        return 2 * n * cin * hw_in * hw_in * cout * 4

    s = size
    enc1 = conv(channels, w, s)
    total = (enc1 + conv(w, 2 * w, s // 2) + conv(2 * w, 4 * w, s // 4) + conv(4 * w, 8 * w, s // 8)
             + up(8 * w, 4 * w, s // 8) + conv(8 * w, 4 * w, s // 4)
             + up(4 * w, 2 * w, s // 4) + conv(4 * w, 2 * w, s // 2)
             + up(2 * w, w, s // 2) + conv(2 * w, w, s) + conv(w, classes, s, k=1))
    return total, enc1


def test_deepcam_mini_conv_flops_match_the_hand_count() -> None:
    dc = _example("deepcam_mini")
    n, channels, width, classes, size = 2, 4, 8, 3, 32
    total, enc1 = _deepcam_convs(n, channels, width, classes, size)
    # enc1, enc2, enc3, bottleneck: 1,179,648 each (2*2*8*32*32*4*9, 2*2*16*16*16*8*9, ...);
    # dec3, dec2, dec1: 4,718,592 each (2*2*32*8*8*64*9, ...); up3, up2, up1: 524,288 each
    # (2*2*64*4*4*32*4, ...); head 1x1: 2*2*3*32*32*8 = 98,304
    assert (total, enc1) == (4 * 1_179_648 + 3 * 4_718_592 + 3 * 524_288 + 98_304, 1_179_648) == (20_545_536, 1_179_648)
    torch.manual_seed(0)
    model = dc.DeepCamMini(channels, classes, width)
    x = torch.randn(n, channels, size, size)
    y = torch.randint(0, classes, (n, size, size))
    fwd = _count(lambda: model(x), grad=True)
    assert fwd.flops("convolution") == total
    loss = F.cross_entropy(model(x), y)
    bwd = _count(lambda: loss.backward(), grad=True)
    assert bwd.unknown() == set()
    # every conv computes grad input and grad weight, except enc1 (its input x needs no gradient)
    assert bwd.flops("convolution_backward") == 2 * total - enc1


def test_autocast_bf16_on_cpu_puts_matmul_flops_in_fp16_flops_and_keeps_the_counts() -> None:
    tb = _example("transformer_block")
    kw: dict[str, Any] = dict(batch=1, seq=8, dim=16, heads=2, layers=1, steps=1, vocab=32)

    def by_op(rows: list[dict[str, Any]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for r in rows:
            flops = sum(r[c] for c in ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops"))
            out[r["kernel_name"]] = out.get(r["kernel_name"], 0.0) + flops
        return out

    with Recorder() as rec32:
        tb.train(**kw)
    with Recorder() as rec16:
        tb.train(autocast="bf16", **kw)
    rows32, rows16 = rec32.rows(), rec16.rows()
    # autocast changes dtypes, not FLOPs; its casts (_to_copy, absent in fp32) do none
    assert by_op(rows16) == {**by_op(rows32), "aten::_to_copy": 0.0}
    for name in ("aten::addmm", "aten::mm", "aten::_scaled_dot_product_flash_attention_for_cpu",
                 "aten::_scaled_dot_product_flash_attention_for_cpu_backward", "aten::gelu"):
        rows = [r for r in rows16 if r["kernel_name"] == name]
        assert rows and all(r["dtype"] == "bfloat16" for r in rows), name
        # bf16 lands in fp16_flops on the CPU: tensor_flops is for GPU tensor cores only
        assert all(r["fp16_flops"] > 0 and r["fp32_flops"] == 0 and r["tensor_flops"] == 0 for r in rows), name
    for name in ("aten::native_layer_norm", "aten::_log_softmax", "aten::addcdiv_"):  # autocast keeps fp32
        rows = [r for r in rows16 if r["kernel_name"] == name]
        assert rows and all(r["fp32_flops"] > 0 and r["fp16_flops"] == 0 for r in rows), name
    casts = [r for r in rows16 if r["kernel_name"] == "aten::_to_copy"]
    assert casts and all(r["fp16_flops"] == 0 and r["fp32_flops"] == 0 for r in casts)
    assert math.isclose(sum(by_op(rows16).values()), sum(by_op(rows32).values()))


def test_fused_optimizers_count_as_their_unfused_update() -> None:
    lin = torch.nn.Linear(8, 4)  # 36 parameters
    lin(torch.randn(2, 8)).sum().backward()
    per_kind = {}
    for cls, extra in ((torch.optim.AdamW, {}), (torch.optim.Adam, {}), (torch.optim.SGD, {"momentum": 0.9})):
        fused = cls(lin.parameters(), lr=1e-3, fused=True, **extra)
        fused.step()  # SGD's first step only copies the gradient into the momentum buffer
        per_kind[cls.__name__] = _count(fused.step).total() / 36
    # AdamW: 13 + 1 decoupled decay (weight_decay 0.01); Adam: 13 (weight_decay 0);
    # SGD momentum: buf = 0.9 buf + g (2), p += -lr buf (2); plus 1 for the step counter
    # (_foreach_add_ of 1 on a one-element tensor per parameter: 2 tensors / 36 elements)
    assert per_kind == {"AdamW": 14 + 2 / 36, "Adam": 13 + 2 / 36, "SGD": 4}

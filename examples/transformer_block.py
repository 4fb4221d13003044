"""A small Hugging Face-style transformer language model and a training step, from random weights.

Pre-LayerNorm decoder blocks named as Hugging Face models name them (GPT-2's ``ln_1``/``ln_2``,
Llama/OPT's ``attn.q_proj``/``k_proj``/``v_proj``/``o_proj``, CLIP's ``mlp.fc1``/``fc2`` with
GELU), causal attention through ``torch.nn.functional.scaled_dot_product_attention``, a token
embedding, a final LayerNorm and an LM head; trained with AdamW on random tokens (next-token
cross-entropy). Nothing is downloaded.

Forward matmul FLOPs per block (B batch, S sequence, d width, MLP width 4d):
Q, K, V, O projections 4 x 2BSd^2, fc1 and fc2 2 x 2BS(4d)d, QK^T and PV 2 x 2BS^2d:
24BSd^2 + 4BS^2d (the usual count; SDPA's causal mask is not subtracted).

    python examples/transformer_block.py                       # CPU, about a second
    python examples/transformer_block.py --autocast bf16 --annotate
    python examples/transformer_block.py --device cuda --batch 8 --seq 1024 --dim 768 --heads 12 --layers 4
    roofline profile --no-counters -o tblock -- python examples/transformer_block.py --annotate
"""

from __future__ import annotations

import argparse
import contextlib
import time

import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    """Multi-head causal self-attention: q/k/v projections, SDPA, output projection."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} is not a multiple of heads {heads}")
        self.heads = heads
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape

        def split(t: torch.Tensor) -> torch.Tensor:  # (B, S, d) -> (B, H, S, d/H)
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    """fc1 (d -> 4d), GELU, fc2 (4d -> d)."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    """Pre-LayerNorm block: x + attn(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.ln_2, self.mlp = nn.LayerNorm(dim), MLP(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyLM(nn.Module):
    """Token embedding, ``layers`` blocks, final LayerNorm, LM head (no bias)."""

    def __init__(self, vocab: int = 256, dim: int = 64, heads: int = 4, layers: int = 2, max_seq: int = 1024):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.embed_positions = nn.Embedding(max_seq, dim)
        self.layers = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed_tokens(tokens) + self.embed_positions(positions)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.ln_f(x))


def train(device: str = "cpu", batch: int = 2, seq: int = 64, dim: int = 64, heads: int = 4, layers: int = 2,
          steps: int = 2, vocab: int = 256, compile: bool = False, autocast: str | None = None,
          annotate: bool = False, seed: int = 0) -> float:
    """Run ``steps`` AdamW training steps on random tokens; returns the last loss.

    ``autocast`` is None or ``"bf16"`` (``torch.autocast`` on ``device``); ``compile``
    wraps the model in ``torch.compile``; ``annotate`` calls ``roofline.torch.annotate``.
    """
    torch.manual_seed(seed)
    model: nn.Module = TinyLM(vocab, dim, heads, layers, max_seq=seq).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    if annotate:
        import roofline.torch

        roofline.torch.annotate(model, optimizer)
    if compile:
        model = torch.compile(model)  # type: ignore[assignment]
    tokens = torch.randint(0, vocab, (batch, seq + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    device_type = torch.device(device).type
    loss = torch.zeros(())
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        amp = (torch.autocast(device_type, dtype=torch.bfloat16) if autocast == "bf16"
               else contextlib.nullcontext())
        with amp:
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, vocab).float(), targets.reshape(-1))
        loss.backward()
        optimizer.step()
    if device_type == "cuda":
        torch.cuda.synchronize()
    return float(loss.detach())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--autocast", choices=["bf16"], default=None, help="torch.autocast to bfloat16")
    p.add_argument("--annotate", action="store_true", help="roofline.torch.annotate(model, optimizer)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    loss = train(a.device, a.batch, a.seq, a.dim, a.heads, a.layers, a.steps, a.vocab, a.compile, a.autocast,
                 a.annotate)
    print(f"transformer_block: {a.steps} steps on {a.device}, last loss {loss:.4f}, "
          f"{time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()

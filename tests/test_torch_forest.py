"""The timeline's attribution over a forest of NVTX ranges (roofline.readers.torch_forest) against the
reference: each launch's stack read as a list (read_stack, attribute), as Nsight Compute's readers do.

Random forests of the ranges PyTorch and roofline.torch open (emit_nvtx operator ranges with and
without ``seq`` / ``op_id``, autograd nodes and ``evaluate_function`` wrappers, module, optimizer
and phase ranges, ranges of other domains, the forms that are cut and those that are not), on two
processes with few sequence numbers (so that they clash), launched from random ranges, some Triton
kernels, some start/end phases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from roofline.readers.torch_forest import attribute_forest, classify_texts
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, attribute, classify, start_end_phase

OPS = ["aten::linear", "aten::addmm", "aten::mm", "aten::add_", "aten::t"]
NODES = ["AddmmBackward0", "MmBackward0", "TBackward0", "AddBackward0"]


def _text(rng: np.random.Generator, k: int) -> str:
    """One range name of the kinds a PyTorch program opens (``k``: a fresh number, as op_id is)."""
    seq = int(rng.integers(0, 6))
    op, node = OPS[rng.integers(len(OPS))], NODES[rng.integers(len(NODES))]
    return str(rng.choice([
        f"{op}, seq = {seq}, op_id = {k}", f"{op}, seq = {seq}", f"{op}, op_id = {k}", op,
        f"{op}, seq = -1, op_id = {k}", f"{op}, stashed seq = {seq}",
        f"{op}, seq = {seq}, op_id = {k}, sizes = [[2, 3]]",
        f"{node}, seq = {seq}", node, f"autograd::engine::evaluate_function: {node}", "torch::autograd::AccumulateGrad",
        f"roofline.module:Net.layer{seq}", f"roofline.module:Net.fc, seq = {seq}, op_id = {k}",
        "Optimizer.step#Adam.step", "Optimizer.zero_grad#Adam.zero_grad",
        "train_step", "forward", "backward", f"FSDP::pre_forward (blocks.{seq}), op_id = {k}",
        f"AllToAll4D, seq = {seq}, op_id = {k}", "ProfilerStep#3", "## Call CompiledFxGraph", "nccl:all_reduce",
        f"step {seq}, of 3", "aten::mm, something else",
    ]))


def _forest(rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """``m`` ranges in trees (parents before children), their domain, text and process."""
    parent = np.full(m, -1, dtype=np.int64)
    process = np.zeros(m, dtype=np.int64)
    for r in range(m):
        if r and rng.random() < 0.85:  # a child of a recent range: deep chains and siblings
            parent[r] = int(rng.integers(max(0, r - 6), r))
            process[r] = process[parent[r]]
        else:
            process[r] = int(rng.integers(1, 3))
    default = rng.random(m) < 0.9
    numbers = rng.integers(0, max(2, m // 4), m) if rng.random() < 0.5 else np.arange(m)  # op_ids repeated or not
    return parent, default, [_text(rng, int(k)) for k in numbers], process


def _chain(r: int, parent: np.ndarray, default: np.ndarray, texts: list[str]) -> list[tuple[str, str]]:
    out = []
    while r >= 0:
        out.append((DEFAULT_DOMAIN if default[r] else "NCCL", texts[r]))
        r = int(parent[r])
    return out[::-1]


@pytest.mark.parametrize("seed", range(40))
def test_the_forest_attributes_each_launch_as_its_stack_read_as_a_list(seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 120)), int(rng.integers(1, 200))
    parent, default, texts, range_process = _forest(rng, m)
    innermost = np.where(rng.random(n) < 0.9, rng.integers(0, m, n), -1)
    process = pd.Series(np.where(innermost >= 0, range_process[np.maximum(innermost, 0)], rng.integers(1, 3, n)),
                        dtype="Int64")
    names = pd.Series(pd.Categorical(rng.choice(["triton_poi_fused_add_0", "gemm", "triton_red_1"], n)))
    start_ends = [[(DEFAULT_DOMAIN, "eval")], [("NCCL", "backward"), (DEFAULT_DOMAIN, "aten::mm, seq = 1")], []]
    se_codes = rng.integers(-1, len(start_ends), n)
    want = attribute(innermost, [_chain(r, parent, default, texts) for r in range(m)], start_end_codes=se_codes,
                     start_ends=start_ends, process=process, kernel_names=names)
    table, found = attribute_forest(parent, default, texts, innermost, start_end_codes=se_codes,
                                    start_end_phases=[start_end_phase(s) for s in start_ends], process=process,
                                    kernel_names=names)
    for column in ("phase", "module", "op", "op_stack"):
        got = table.objects(found[column]).tolist()
        expected = [None if pd.isna(v) else v for v in want[column].tolist()]
        assert got == expected, column
    assert want["phase"].notna().any() and want["op"].notna().any()  # the draw says something


@pytest.mark.parametrize("seed", range(10))
def test_texts_are_classified_as_one_by_one(seed):
    """Each text's class and sequence number, cut and classified per form, equal its own classification,
    also where the forms' marks occur in the texts themselves (then nothing is cut)."""
    rng = np.random.default_rng(seed)
    texts = [_text(rng, int(k)) for k in rng.integers(0, 30, 300)]  # the same text at times
    if seed % 3 == 0:
        texts.append("aten::mm\x1f, seq = 4")
    classes, codes, seq = classify_texts(texts)
    for i, text in enumerate(texts):
        kind, value, number = classify(text)
        assert classes[codes[i]] == (kind, value), text
        assert seq[i] == (-1 if number is None else number), text

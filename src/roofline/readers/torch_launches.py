"""From what each launch's stack says to its phase, module and operator: the per-launch rules of
:mod:`roofline.readers.torch_ranges` (steps 3-5 of ``phase``, backward launches' operator by
sequence number, Triton kernels), stated once over codes.

Both attributions end here: :func:`roofline.readers.torch_ranges.attribute` (stacks given as lists,
Nsight Compute) and :func:`roofline.readers.torch_forest.attribute_forest` (a timeline's forest of
ranges, a stack per range). Text is held as codes into one :class:`Texts` (-1: none), so a million
launches are arrays, not strings, until the caller writes them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.attribution import FORWARD, forward_op_of_node

#: Kernel names of Triton kernels (torch.compile / Inductor names them by their fused graph).
TRITON_PREFIX = "triton_"
#: ``(row, seq, depth, op, op_stack)``: for each row of the stacks asked about, the operator ranges of
#: its stack that print a sequence number (their depth among its operator ranges; texts as codes).
SeqOpRows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Texts:
    """Distinct strings by code, each added once."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._code: dict[str, int] = {}

    def code(self, text: str | None) -> int:
        """The code of ``text`` (added when new); -1 for None."""
        if text is None:
            return -1
        found = self._code.get(text)
        if found is None:
            found = self._code[text] = len(self.values)
            self.values.append(text)
        return found

    def codes(self, texts: Sequence[str | None]) -> np.ndarray:
        return np.fromiter((self.code(t) for t in texts), dtype=np.int64, count=len(texts))

    def objects(self, codes: np.ndarray) -> np.ndarray:
        """The texts of ``codes`` as an object array, None for -1."""
        table = np.empty(len(self.values) + 1, dtype=object)
        table[: len(self.values)] = self.values
        table[-1] = None
        return table[codes]


@dataclass(frozen=True)
class Stacks:
    """What each stack says on its own (one row per stack), text as codes into ``texts``: ``phase``
    (the stack's own, -1: undecided), ``module``, forward ``op`` / ``op_stack``, the outermost
    autograd ``node`` and its ``node_seq`` (-1: none), ``in_module``, ``kernel_names_op``;
    ``seq_ops(stacks)``: the rows of :data:`SeqOpRows` for those stacks."""

    texts: Texts
    phase: np.ndarray
    module: np.ndarray
    op: np.ndarray
    op_stack: np.ndarray
    node: np.ndarray
    node_seq: np.ndarray
    in_module: np.ndarray
    kernel_names_op: np.ndarray
    seq_ops: Callable[[np.ndarray], SeqOpRows]


def launch_columns(codes: np.ndarray, stacks: Stacks, *, start_end_codes: np.ndarray | None = None,
                   start_end_phases: Sequence[str | None] = (), process: pd.Series | None = None,
                   kernel_names: pd.Series | None = None) -> dict[str, np.ndarray]:
    """Codes into ``stacks.texts`` per launch for ``phase``, ``module``, ``op``, ``op_stack``.

    ``codes[i]``: launch i's stack (-1: none); ``start_end_codes[i]`` indexes the phase its start/end
    ranges give in ``start_end_phases``; ``process``: its process (<NA>: one unknown process);
    ``kernel_names``: for Triton kernels."""
    texts = stacks.texts
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    has = codes >= 0
    at = np.where(has, codes, 0)

    def per_launch(values: np.ndarray, none: int | bool = -1) -> np.ndarray:
        return np.where(has, values[at], none) if len(values) else np.full(n, none)

    phase = per_launch(stacks.phase)
    if start_end_codes is not None and len(start_end_phases):
        se_table = np.append(texts.codes(start_end_phases), -1)
        undecided = phase < 0
        phase[undecided] = se_table[np.asarray(start_end_codes, dtype=np.int64)][undecided]
    undecided = (phase < 0) & per_launch(stacks.in_module, False).astype(bool)
    phase[undecided] = texts.code(FORWARD)
    module, op, op_stack = per_launch(stacks.module), per_launch(stacks.op), per_launch(stacks.op_stack)
    if bool((stacks.node >= 0).any()):
        _resolve_backward(codes, stacks, process, module, op, op_stack)
    if kernel_names is not None and n:
        own = per_launch(stacks.kernel_names_op, True).astype(bool)
        names = kernel_names.reset_index(drop=True).array
        if isinstance(names, pd.Categorical):  # encoded: the distinct names tested, spread by their codes
            categories = [str(t) for t in names.categories.tolist()]
            prefixed = np.append([t.startswith(TRITON_PREFIX) for t in categories], False)
            triton = prefixed[names.codes] & own
            if triton.any():
                named = np.full(len(categories) + 1, -1, dtype=np.int64)
                named[np.flatnonzero(prefixed)] = texts.codes([categories[i] for i in np.flatnonzero(prefixed)])
                op[triton] = op_stack[triton] = named[names.codes[triton]]
        else:
            triton = pd.Series(names).astype("string").str.startswith(TRITON_PREFIX).fillna(False) \
                .to_numpy(dtype=bool) & own
            if triton.any():  # only the Triton launches' names as text
                own_names = names[triton].astype("string").to_numpy(dtype=object).tolist()
                op[triton] = op_stack[triton] = texts.codes(own_names)
    return {"phase": phase, "module": module, "op": op, "op_stack": op_stack}


def _resolve_backward(codes: np.ndarray, stacks: Stacks, process: pd.Series | None,
                      module: np.ndarray, op: np.ndarray, op_stack: np.ndarray) -> None:
    """Fill op, op_stack (and module where no module range is open) of backward launches, in place.

    Each backward stack's node sequence number is looked up among the forward stacks launched in the
    same process: of the operator ranges printing it, the deepest among its stack's operator ranges,
    the first seen (launch order of the (process, stack) pairs) among equally deep ones; its module is
    that of the stack it was seen in. A number no forward launch shows: the node's name says
    (:func:`roofline.attribution.forward_op_of_node`)."""
    n = len(codes)
    if process is None:
        proc = np.zeros(n, dtype=np.int64)
    else:
        proc = pd.factorize(pd.Series(process).reset_index(drop=True), use_na_sentinel=True)[0].astype(np.int64) + 1
    width = len(stacks.node) + 1
    pair_codes, pairs = pd.factorize(proc * width + (codes + 1))  # distinct (process, stack) pairs, first seen first
    pair_codes = np.asarray(pair_codes, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64)
    pair_proc, pair_stack = pairs // width, pairs % width - 1
    known = pair_stack >= 0
    node = np.full(len(pairs), -1, dtype=np.int64)
    node[known] = stacks.node[pair_stack[known]]
    forward = np.flatnonzero(known & (node < 0))
    row, seq, depth, f_op, f_stack = stacks.seq_ops(pair_stack[forward])
    pair = forward[row]
    backward = np.flatnonzero(node >= 0)
    b_seq = stacks.node_seq[pair_stack[backward]]
    # one dense code per (process, seq) over both sides, then the winner per code: deepest, then first pair
    both_seq = pd.factorize(np.concatenate([seq, b_seq]))[0].astype(np.int64)
    both_proc = np.concatenate([pair_proc[pair], pair_proc[backward]])
    key = pd.factorize(both_proc * (int(both_seq.max(initial=0)) + 1) + both_seq)[0].astype(np.int64)
    f_key, b_key = key[: len(pair)], key[len(pair):]
    order = np.lexsort((pair, -depth, f_key))
    first = order[np.r_[True, f_key[order][1:] != f_key[order][:-1]]] if len(order) else order
    winner = np.full(int(key.max()) + 1 if len(key) else 0, -1, dtype=np.int64)
    winner[f_key[first]] = first
    found = np.where(b_seq >= 0, winner[b_key] if len(winner) else -1, -1)
    texts = stacks.texts
    fallback = np.array([texts.code(forward_op_of_node(texts.values[c])) for c in node[backward].tolist()],
                        dtype=np.int64)
    hit = found >= 0
    pair_op = np.full(len(pairs), -1, dtype=np.int64)
    pair_stack_text = np.full(len(pairs), -1, dtype=np.int64)
    pair_module = np.full(len(pairs), -1, dtype=np.int64)
    pair_op[backward] = np.where(hit, f_op[np.where(hit, found, 0)] if len(f_op) else -1, fallback)
    pair_stack_text[backward] = np.where(hit, f_stack[np.where(hit, found, 0)] if len(f_stack) else -1, fallback)
    seen_module = stacks.module[pair_stack[pair]] if len(pair) else np.zeros(0, dtype=np.int64)
    pair_module[backward] = np.where(hit, seen_module[np.where(hit, found, 0)] if len(pair) else -1, -1)
    is_backward = np.zeros(len(pairs), dtype=bool)
    is_backward[backward] = True
    mine = is_backward[pair_codes]
    op[mine] = pair_op[pair_codes][mine]
    op_stack[mine] = pair_stack_text[pair_codes][mine]
    no_module = mine & (module < 0)
    module[no_module] = pair_module[pair_codes][no_module]

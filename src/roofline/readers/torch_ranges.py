"""Phase, module and PyTorch operator of each kernel launch, from the NVTX ranges it ran in.

Input: per launch, its push/pop stack (the ranges open on the launching thread, outermost
first, each ``(domain, name)``) and the process-wide start/end ranges open at launch; the
process id and the kernel name. The range names are those :mod:`roofline.attribution`
defines (module ranges, emit_nvtx operator and autograd-node ranges, optimizer ranges).
PyTorch's ranges are read from NVTX's default domain only (``<default domain>``: emit_nvtx
and roofline.torch push there); phases from any domain.

Output per launch (strings, <NA> when unknown):

``phase``
    In this order:

    1. a **marker** in the stack, when no phase range is nested inside it: an autograd-node
       range (``AddmmBackward0, seq = 12``) gives ``backward``; an optimizer range
       (``Optimizer.step#AdamW.step``) gives ``optimizer`` (the innermost marker decides);
    2. the innermost **phase range** of the stack (:func:`roofline.attribution.is_phase_range`),
       the default domain's first, else the innermost one of the other domains;
    3. the last start/end phase range (``roofline.torch.annotate``'s ``backward``);
    4. ``forward`` when the stack holds a module range;
    5. else <NA>.

    Why the markers win over a phase range that encloses them: a phase range around a
    whole training step (a user's ``train_step``) would otherwise hide the step's backward
    and optimizer launches; a phase range opened INSIDE a node or optimizer step is the more
    specific word and wins. Ranges of other domains and start/end ranges cannot be placed
    in the stack's nesting, and are taken as enclosing it. A module range does not override a
    phase range around it: ``prefill`` / ``decode`` / ``validation`` around a model's forward
    are the user's names for forward work and are kept.
``module``
    The innermost ``roofline.module:`` range's path. roofline.torch opens the module range
    around each autograd node too, so a backward launch names the module whose forward
    created its node; a backward launch with no module range takes the module of the
    forward launch its node's sequence number points to.
``op``
    Forward launches: the innermost operator range. Backward launches (a node range in the
    stack): the forward operator that created the OUTERMOST node range: among the forward
    launches of the same process, the innermost operator range printing the node's
    sequence number; when no forward launch shows it (the forward operator launched no
    kernel: ``aten::expand``, ``aten::t``), :func:`roofline.attribution.forward_op_of_node`.
    A Triton kernel (``triton_...``, torch.compile's fused graphs) with no operator range
    innermost to it is its own operator: the kernel name names the fused graph.
``op_stack``
    The operator ranges outermost first (``aten::linear/aten::addmm``); for a backward
    launch, the forward operator's stack when it was seen, else the fallback operator alone.

Cost: linear in launches; parsing and attribution run once per distinct stack (and per
distinct (process, stack) pair for the sequence-number join), never per launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from roofline.attribution import (
    BACKWARD,
    FORWARD,
    OPTIMIZER,
    OpRange,
    forward_op_of_node,
    is_optimizer_range,
    is_phase_range,
    module_from_range,
    parse_op_range,
    phase_name,
)

#: How ncu names NVTX's default (NULL) domain.
DEFAULT_DOMAIN = "<default domain>"
#: A range as ``(domain, name)``.
Range = tuple[str, str]
#: Kernel names of Triton kernels (torch.compile / Inductor names them by their fused graph).
TRITON_PREFIX = "triton_"
#: Columns :func:`attribute` returns.
COLUMNS = ("phase", "module", "op", "op_stack")

_MODULE, _OP, _NODE, _OPTIMIZER, _PHASE, _OTHER = range(6)


@dataclass(frozen=True)
class StackAttribution:
    """What one push/pop stack says on its own (see the module docstring).

    ``phase``: decided by the stack (steps 1-2), else None; ``in_module``: a module range is
    open (step 4); ``module``: innermost module path; ``op`` / ``op_stack``: forward launches'
    operator (None for backward ones, resolved by :func:`attribute`); ``node`` / ``node_seq``:
    the outermost autograd node and its sequence number (None outside backward);
    ``seq_ops``: per sequence number printed by an operator range of a forward stack,
    ``(seq, depth, op, op_stack)`` of the innermost range printing it; ``kernel_names_op``:
    no operator range is innermost (none, or a node is), so a Triton kernel names itself."""

    phase: str | None
    in_module: bool
    module: str | None
    op: str | None
    op_stack: str | None
    node: str | None
    node_seq: int | None
    seq_ops: tuple[tuple[int, int, str, str], ...]
    kernel_names_op: bool


def _classify(name: str, cache: dict[str, tuple[int, object]]) -> tuple[int, object]:
    kind: tuple[int, object]
    module = module_from_range(name)
    if module is not None:
        kind = (_MODULE, module)
    elif (op := parse_op_range(name)) is not None:
        kind = (_NODE if op.backward else _OP, op)
    elif is_optimizer_range(name):
        kind = (_OPTIMIZER, None)
    elif is_phase_range(name):
        kind = (_PHASE, phase_name(name))
    else:
        kind = (_OTHER, None)
    cache[name] = kind
    return kind


def read_stack(ranges: Sequence[Range], cache: dict[str, tuple[int, object]] | None = None) -> StackAttribution:
    """Attribute one push/pop stack (``(domain, name)`` pairs, outermost first). ``cache``
    keeps range classifications between calls (a dict the caller owns)."""
    cache = {} if cache is None else cache
    phase_at = marker_at = -1
    phase: str | None = None
    other_phase: str | None = None
    marker: str | None = None
    module: str | None = None
    ops: list[OpRange] = []
    nodes: list[OpRange] = []
    innermost_op = innermost_node = -1
    for depth, (domain, name) in enumerate(ranges):
        kind, value = cache.get(name) or _classify(name, cache)
        if domain != DEFAULT_DOMAIN:
            if kind == _PHASE:
                other_phase = cast(str, value)
            continue
        if kind == _OP:
            ops.append(cast(OpRange, value))
            innermost_op = depth
        elif kind == _MODULE:
            module = cast(str, value)
        elif kind == _PHASE:
            phase_at, phase = depth, cast(str, value)
        elif kind == _NODE:
            nodes.append(cast(OpRange, value))
            marker_at, marker, innermost_node = depth, BACKWARD, depth
        elif kind == _OPTIMIZER:
            marker_at, marker = depth, OPTIMIZER
    decided = marker if marker is not None and phase_at < marker_at else (phase if phase is not None else other_phase)
    kernel_names_op = innermost_op < innermost_node or innermost_op < 0
    if nodes:
        node = nodes[0]
        seq = node.seq
        if seq is None:  # "autograd::engine::evaluate_function: X" around "X, seq = N"
            seq = next((n.seq for n in nodes if n.name == node.name and n.seq is not None), None)
        return StackAttribution(decided, module is not None, module, None, None, node.name, seq, (), kernel_names_op)
    if not ops:
        return StackAttribution(decided, module is not None, module, None, None, None, None, (), kernel_names_op)
    names = [op.name for op in ops]
    seq_ops: dict[int, tuple[int, int, str, str]] = {}
    for i, op in enumerate(ops):
        if op.seq is not None:  # inner ranges overwrite outer ones printing the same number
            seq_ops[op.seq] = (op.seq, i, op.name, "/".join(names[: i + 1]))
    return StackAttribution(decided, module is not None, module, names[-1], "/".join(names), None, None,
                            tuple(seq_ops.values()), kernel_names_op)


def start_end_phase(ranges: Sequence[Range]) -> str | None:
    """The phase start/end ranges give: the last phase range of the default domain, else of any."""
    phases = [(d, phase_name(name)) for d, name in ranges if is_phase_range(name)]
    default = [name for d, name in phases if d == DEFAULT_DOMAIN]
    return default[-1] if default else (phases[-1][1] if phases else None)


def _lookup(values: list[object], codes: np.ndarray) -> np.ndarray:
    """``values[code]`` per launch, None where code is -1 (an object array)."""
    table = np.empty(len(values) + 1, dtype=object)
    table[: len(values)] = values
    table[-1] = None
    return table[codes]


def _strings(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    return pd.array(values, dtype="string")


def attribute(stack_codes: np.ndarray, stacks: Sequence[Sequence[Range]], *,
              start_end_codes: np.ndarray | None = None, start_ends: Sequence[Sequence[Range]] = (),
              process: pd.Series | None = None, kernel_names: pd.Series | None = None) -> pd.DataFrame:
    """Phase, module, op and op_stack per launch (the :data:`COLUMNS`, ``string`` dtype).

    ``stack_codes[i]`` indexes launch i's push/pop stack in ``stacks`` (-1: none);
    ``start_end_codes`` likewise into ``start_ends``; ``process``: the launch's process id
    (<NA>: one unknown process); ``kernel_names``: for Triton kernels."""
    codes = np.asarray(stack_codes, dtype=np.int64)
    n = len(codes)
    cache: dict[str, tuple[int, object]] = {}
    infos = [read_stack(s, cache) for s in stacks]
    # phase: the stack's own, else the start/end ranges', else forward inside a module
    phase = _lookup([i.phase for i in infos], codes)
    if start_end_codes is not None and len(start_ends):
        undecided = pd.isna(phase)
        se = _lookup([start_end_phase(s) for s in start_ends], np.asarray(start_end_codes, dtype=np.int64))
        phase[undecided] = se[undecided]
    undecided = pd.isna(phase)
    in_module = _lookup([FORWARD if i.in_module else None for i in infos], codes)
    phase[undecided] = in_module[undecided]
    module = _lookup([i.module for i in infos], codes)
    op = _lookup([i.op for i in infos], codes)
    op_stack = _lookup([i.op_stack for i in infos], codes)
    if any(i.node is not None for i in infos):
        _resolve_backward(codes, infos, process, module, op, op_stack)
    if kernel_names is not None and n:
        own = np.asarray(_lookup([i.kernel_names_op for i in infos], codes), dtype=object)
        own[codes < 0] = True
        names = kernel_names.reset_index(drop=True).array
        if isinstance(names, pd.Categorical):  # encoded: the distinct names tested, spread by their codes
            prefixed = np.append([str(t).startswith(TRITON_PREFIX) for t in names.categories.tolist()], False)
            triton = prefixed[names.codes] & own.astype(bool)
        else:
            triton = pd.Series(names).astype("string").str.startswith(TRITON_PREFIX).fillna(False) \
                .to_numpy(dtype=bool) & own.astype(bool)
        if triton.any():  # only the Triton launches' names as text
            op[triton] = op_stack[triton] = np.asarray(names[triton].astype("string").to_numpy(dtype=object), dtype=object)
    return pd.DataFrame({"phase": _strings(phase), "module": _strings(module), "op": _strings(op),
                         "op_stack": _strings(op_stack)})


def _resolve_backward(codes: np.ndarray, infos: list[StackAttribution], process: pd.Series | None,
                      module: np.ndarray, op: np.ndarray, op_stack: np.ndarray) -> None:
    """Fill op, op_stack (and module where no module range is open) of backward launches, in place:
    each node's sequence number is looked up among the forward stacks of the same process."""
    n = len(codes)
    if process is None:
        proc = np.zeros(n, dtype=np.int64)
    else:
        proc = pd.factorize(pd.Series(process).reset_index(drop=True), use_na_sentinel=True)[0].astype(np.int64) + 1
    pair = proc * (len(infos) + 1) + (codes + 1)  # distinct (process, stack) pairs
    pair_codes, pairs = pd.factorize(pair)
    pair_proc, pair_stack = pairs // (len(infos) + 1), pairs % (len(infos) + 1) - 1
    forward: dict[tuple[int, int], tuple[int, str, str, str | None]] = {}
    for p, s in zip(pair_proc.tolist(), pair_stack.tolist()):  # first seen wins among equally deep ranges
        if s < 0:
            continue
        info = infos[s]
        for seq, depth, name, stack in info.seq_ops:
            known = forward.get((p, seq))
            if known is None or depth > known[0]:
                forward[(p, seq)] = (depth, name, stack, info.module)
    k = len(pairs)
    pair_op = np.full(k, None, dtype=object)
    pair_stack_text = np.full(k, None, dtype=object)
    pair_module = np.full(k, None, dtype=object)
    backward = np.zeros(k, dtype=bool)
    for j, (p, s) in enumerate(zip(pair_proc.tolist(), pair_stack.tolist())):
        if s < 0 or infos[s].node is None:
            continue
        info = infos[s]
        backward[j] = True
        found = forward.get((p, info.node_seq)) if info.node_seq is not None else None
        if found is not None:
            pair_op[j], pair_stack_text[j], pair_module[j] = found[1], found[2], found[3]
        else:
            pair_op[j] = pair_stack_text[j] = forward_op_of_node(str(info.node))
    is_backward = backward[pair_codes]
    op[is_backward] = pair_op[pair_codes][is_backward]
    op_stack[is_backward] = pair_stack_text[pair_codes][is_backward]
    no_module = is_backward & pd.isna(module)
    module[no_module] = pair_module[pair_codes][no_module]

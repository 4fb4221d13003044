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
distinct (process, stack) pair for the sequence-number join), never per launch. The stack rules
are stated once, as a fold step (:func:`step`) that :func:`read_stack` runs over a list; a
timeline, whose stacks come as a forest of ranges (about one distinct stack per launch under
emit_nvtx), folds the same step down the forest in numpy (:mod:`roofline.readers.torch_forest`).
The per-launch rules are :mod:`roofline.readers.torch_launches`, for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import numpy as np
import pandas as pd

from roofline.attribution import (
    BACKWARD,
    OPTIMIZER,
    is_optimizer_range,
    is_phase_range,
    module_from_range,
    parse_op_range,
    phase_name,
)
from roofline.readers.torch_launches import TRITON_PREFIX as TRITON_PREFIX  # where it was named before
from roofline.readers.torch_launches import SeqOpRows, Stacks, Texts, launch_columns

#: How ncu names NVTX's default (NULL) domain.
DEFAULT_DOMAIN = "<default domain>"
#: A range as ``(domain, name)``.
Range = tuple[str, str]
#: Columns :func:`attribute` returns.
COLUMNS = ("phase", "module", "op", "op_stack")

#: The kinds of range :func:`classify` tells apart.
KIND_MODULE, KIND_OP, KIND_NODE, KIND_OPTIMIZER, KIND_PHASE, KIND_OTHER = range(6)
#: What a range's sequence number does to its stack (:func:`step`): nothing, names the stack's
#: autograd node, or is printed by a forward operator range (the stack's ``seq_ops``).
NO_SEQ, NODE_SEQ, OP_SEQ = range(3)
#: A range's class without its sequence number: ``(kind, value)``; for an operator or node the value
#: is ``(name, prints a sequence number)``.
RangeClass = tuple[int, object]


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


class StackState(NamedTuple):
    """A stack read from its outermost range down to some depth (:func:`step`), its sequence numbers
    aside: the same state for every stack that differs only in them. ``depth``: ranges read;
    ``phase_at`` / ``marker_at``: depth of the innermost default-domain phase range / marker (-1:
    none); ``ops``: the operator ranges' names, outermost first; ``innermost_op`` / ``innermost_node``:
    their depths; ``node``: the outermost autograd node; ``node_seq_known``: its sequence number is
    known (printed by it, or by a node of the same name inside it)."""

    depth: int = 0
    phase_at: int = -1
    phase: str | None = None
    other_phase: str | None = None
    marker_at: int = -1
    marker: str | None = None
    module: str | None = None
    ops: tuple[str, ...] = ()
    innermost_op: int = -1
    innermost_node: int = -1
    node: str | None = None
    node_seq_known: bool = False


def classify(name: str) -> tuple[int, object, int | None]:
    """A range name's kind, its value without the sequence number (:data:`RangeClass`), and the number."""
    module = module_from_range(name)
    if module is not None:
        return KIND_MODULE, module, None
    op = parse_op_range(name)
    if op is not None:
        return (KIND_NODE if op.backward else KIND_OP), (op.name, op.seq is not None), op.seq
    if is_optimizer_range(name):
        return KIND_OPTIMIZER, None, None
    if is_phase_range(name):
        return KIND_PHASE, phase_name(name), None
    return KIND_OTHER, None, None


def step(state: StackState, default_domain: bool, kind: int, value: object) -> tuple[StackState, int]:
    """The stack one range deeper (a range of class ``(kind, value)``, in NVTX's default domain or
    not), and what the range's sequence number does (:data:`NO_SEQ`, :data:`NODE_SEQ`, :data:`OP_SEQ`).
    The one statement of the stack rules: :func:`read_stack` folds it over a stack, the timeline over
    a forest of ranges (:mod:`roofline.readers.torch_forest`)."""
    depth = state.depth
    if not default_domain:  # other domains: only their phases count, taken as enclosing the stack
        other = cast(str, value) if kind == KIND_PHASE else state.other_phase
        return state._replace(depth=depth + 1, other_phase=other), NO_SEQ
    if kind == KIND_OP:
        name, has_seq = cast(tuple[str, bool], value)
        role = OP_SEQ if has_seq else NO_SEQ
        return state._replace(depth=depth + 1, ops=state.ops + (name,), innermost_op=depth), role
    if kind == KIND_MODULE:
        return state._replace(depth=depth + 1, module=cast(str, value)), NO_SEQ
    if kind == KIND_PHASE:
        return state._replace(depth=depth + 1, phase_at=depth, phase=cast(str, value)), NO_SEQ
    if kind == KIND_NODE:  # the outermost node's number, else that of the first node of its name printing one
        name, has_seq = cast(tuple[str, bool], value)
        marked = state._replace(depth=depth + 1, marker_at=depth, marker=BACKWARD, innermost_node=depth)
        if state.node is None:
            return marked._replace(node=name, node_seq_known=has_seq), NODE_SEQ if has_seq else NO_SEQ
        if has_seq and not state.node_seq_known and name == state.node:
            return marked._replace(node_seq_known=True), NODE_SEQ
        return marked, NO_SEQ
    if kind == KIND_OPTIMIZER:
        return state._replace(depth=depth + 1, marker_at=depth, marker=OPTIMIZER), NO_SEQ
    return state._replace(depth=depth + 1), NO_SEQ


def seq_op(state: StackState) -> tuple[int, str, str]:
    """``(depth among the operator ranges, op, op_stack)`` of the innermost operator range of ``state``."""
    return len(state.ops) - 1, state.ops[-1], "/".join(state.ops)


def finish(state: StackState, node_seq: int | None = None,
           seq_ops: tuple[tuple[int, int, str, str], ...] = ()) -> StackAttribution:
    """What a whole stack says (its last state, the node's sequence number, its ``seq_ops``)."""
    decided = state.marker if state.marker is not None and state.phase_at < state.marker_at else (
        state.phase if state.phase is not None else state.other_phase)
    kernel_names_op = state.innermost_op < state.innermost_node or state.innermost_op < 0
    in_module = state.module is not None
    if state.node is not None:
        return StackAttribution(decided, in_module, state.module, None, None, state.node, node_seq, (), kernel_names_op)
    if not state.ops:
        return StackAttribution(decided, in_module, state.module, None, None, None, None, (), kernel_names_op)
    return StackAttribution(decided, in_module, state.module, state.ops[-1], "/".join(state.ops), None, None,
                            seq_ops, kernel_names_op)


def read_stack(ranges: Sequence[Range],
               cache: dict[str, tuple[int, object, int | None]] | None = None) -> StackAttribution:
    """Attribute one push/pop stack (``(domain, name)`` pairs, outermost first). ``cache``
    keeps range classifications between calls (a dict the caller owns)."""
    cache = {} if cache is None else cache
    state = StackState()
    node_seq: int | None = None
    seq_ops: dict[int, tuple[int, int, str, str]] = {}
    for domain, name in ranges:
        known = cache.get(name)
        if known is None:
            known = cache[name] = classify(name)
        kind, value, seq = known
        state, role = step(state, domain == DEFAULT_DOMAIN, kind, value)
        if role == NODE_SEQ:
            node_seq = seq
        elif role == OP_SEQ:  # inner ranges overwrite outer ones printing the same number
            seq_ops[cast(int, seq)] = (cast(int, seq), *seq_op(state))
    return finish(state, node_seq, tuple(seq_ops.values()))


def start_end_phase(ranges: Sequence[Range]) -> str | None:
    """The phase start/end ranges give: the last phase range of the default domain, else of any."""
    phases = [(d, phase_name(name)) for d, name in ranges if is_phase_range(name)]
    default = [name for d, name in phases if d == DEFAULT_DOMAIN]
    return default[-1] if default else (phases[-1][1] if phases else None)


def attribute(stack_codes: np.ndarray, stacks: Sequence[Sequence[Range]], *,
              start_end_codes: np.ndarray | None = None, start_ends: Sequence[Sequence[Range]] = (),
              process: pd.Series | None = None, kernel_names: pd.Series | None = None) -> pd.DataFrame:
    """Phase, module, op and op_stack per launch (the :data:`COLUMNS`, ``string`` dtype).

    ``stack_codes[i]`` indexes launch i's push/pop stack in ``stacks`` (-1: none);
    ``start_end_codes`` likewise into ``start_ends``; ``process``: the launch's process id
    (<NA>: one unknown process); ``kernel_names``: for Triton kernels."""
    cache: dict[str, tuple[int, object, int | None]] = {}
    infos = [read_stack(s, cache) for s in stacks]
    table = stacks_of(infos)
    found = launch_columns(np.asarray(stack_codes, dtype=np.int64), table, start_end_codes=start_end_codes,
                           start_end_phases=[start_end_phase(s) for s in start_ends], process=process,
                           kernel_names=kernel_names)
    return pd.DataFrame({c: pd.array(table.texts.objects(found[c]), dtype="string") for c in COLUMNS})


def stacks_of(infos: Sequence[StackAttribution]) -> Stacks:
    """The :class:`~roofline.readers.torch_launches.Stacks` of stacks read one by one."""
    texts = Texts()
    seq_ops = [[(seq, depth, texts.code(op), texts.code(stack)) for seq, depth, op, stack in i.seq_ops]
               for i in infos]

    def rows(which: np.ndarray) -> SeqOpRows:
        found = [(j, *entry) for j, s in enumerate(which.tolist()) for entry in seq_ops[s]]
        columns = np.array(found, dtype=np.int64).reshape(-1, 5).T
        return columns[0], columns[1], columns[2], columns[3], columns[4]

    return Stacks(texts=texts, phase=texts.codes([i.phase for i in infos]),
                  module=texts.codes([i.module for i in infos]),
                  op=texts.codes([i.op for i in infos]), op_stack=texts.codes([i.op_stack for i in infos]),
                  node=texts.codes([i.node for i in infos]),
                  node_seq=np.array([-1 if i.node_seq is None else i.node_seq for i in infos], dtype=np.int64),
                  in_module=np.array([i.in_module for i in infos], dtype=bool),
                  kernel_names_op=np.array([i.kernel_names_op for i in infos], dtype=bool), seq_ops=rows)

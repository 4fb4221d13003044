"""PyTorch attribution over a forest of NVTX ranges: a timeline's million launches in numpy.

A timeline (:mod:`roofline.readers.nsys`) gives its push/pop ranges as a forest (each range's parent:
the innermost range open when it was pushed), and each launch's innermost range. Every range is
then a stack (itself and its ancestors), and PyTorch makes about one per launch: emit_nvtx names
every call apart (``aten::addmm, seq = 12, op_id = 40``), so reading each stack as a list
(:func:`roofline.readers.torch_ranges.read_stack`) costs a Python call per launch. Here instead:

1. **Texts, classified once per distinct form.** The per-call suffix (``, seq = N`` with or without
   ``, op_id = N``; or ``, op_id = N`` alone) is cut off every text at once; each distinct rest is
   classified once (:func:`roofline.readers.torch_ranges.classify`) on a real text of its form, and
   the sequence numbers kept as an int array. A form is taken as one class only when its first and
   last texts classify alike and each's number is the one cut off; else its texts are classified one
   by one.
2. **The stack rules, folded down the forest** a nesting level at a time: a range's state is
   :func:`roofline.readers.torch_ranges.step` of its parent's state and its class, computed once per
   distinct (state, class) pair; the states leave sequence numbers out, so there are few. The numbers
   travel beside them as arrays (the outermost node's, the nearest operator range printing one).
3. **The per-launch rules** as for lists of stacks: :func:`roofline.readers.torch_launches.launch_columns`.

The result equals :func:`roofline.readers.torch_ranges.attribute` over the launches' stacks as lists
(tests/test_torch_forest.py checks it on random forests).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from roofline.readers.torch_launches import SeqOpRows, Stacks, Texts, launch_columns
from roofline.readers.torch_ranges import (
    KIND_MODULE,
    KIND_NODE,
    KIND_OP,
    NODE_SEQ,
    OP_SEQ,
    RangeClass,
    StackState,
    classify,
    finish,
    seq_op,
    step,
)

#: Between texts joined to be cut at once; forms with a sequence number / an op_id alone are marked.
_SEP, _SEQ_FORM, _OP_ID_FORM = "\x1e", "\x1f", "\x1d"
_SEQ_SUFFIX = re.compile(r", seq = (\d+)(?:, op_id = \d+)?(?=\x1e|\Z)")
_OP_ID_SUFFIX = re.compile(r", op_id = \d+(?=\x1e|\Z)")


def classify_texts(texts: Sequence[str]) -> tuple[list[RangeClass], np.ndarray, np.ndarray]:
    """The distinct classes of ``texts``, each text's class code and its sequence number (-1: none)."""
    n = len(texts)
    joined = _SEP.join(texts)
    cut = not any(c in joined for c in (_SEQ_FORM, _OP_ID_FORM)) and joined.count(_SEP) == max(n - 1, 0)
    if cut:
        numbers = _SEQ_SUFFIX.findall(joined)
        keys = _OP_ID_SUFFIX.sub(_OP_ID_FORM, _SEQ_SUFFIX.sub(_SEQ_FORM, joined)).split(_SEP) if n else []
    else:  # texts holding the marks: every distinct text on its own
        numbers, keys = [], list(texts)
    key_codes, distinct = pd.factorize(np.asarray(keys, dtype=object))
    key_codes = np.asarray(key_codes, dtype=np.int64)
    distinct_keys = [str(k) for k in distinct]
    with_seq = np.array([cut and k.endswith(_SEQ_FORM) for k in distinct_keys] + [False], dtype=bool)
    seq = np.full(n, -1, dtype=np.int64)
    seq[with_seq[key_codes]] = np.asarray(numbers, dtype=np.int64)
    classes: list[RangeClass] = []
    class_code: dict[RangeClass, int] = {}

    def code_of(kind: int, value: object) -> int:
        cls = (kind, value)
        found = class_code.get(cls)
        if found is None:
            found = class_code[cls] = len(classes)
            classes.append(cls)
        return found

    codes = np.full(n, -1, dtype=np.int64)
    order = np.argsort(key_codes, kind="stable")
    bounds = np.searchsorted(key_codes[order], np.arange(len(distinct_keys) + 1))
    for k, key in enumerate(distinct_keys):
        rows = order[bounds[k]:bounds[k + 1]]
        if not (cut and key.endswith((_SEQ_FORM, _OP_ID_FORM))):  # a text of its own: classified as it is
            kind, value, number = classify(key)
            codes[rows] = code_of(kind, value)
            seq[rows] = -1 if number is None else number
            continue
        ends = [int(rows[0]), int(rows[-1])]
        read = [classify(texts[i]) for i in ends]
        expect = [int(seq[i]) if read[0][0] in (KIND_OP, KIND_NODE) and key.endswith(_SEQ_FORM) else None for i in ends]
        if read[0][0] != KIND_MODULE and read[0][:2] == read[1][:2] and [r[2] for r in read] == expect:
            codes[rows] = code_of(read[0][0], read[0][1])
            if expect[0] is None:
                seq[rows] = -1
            continue
        for i in rows.tolist():  # a form that is not one class: its texts one by one
            kind, value, number = classify(texts[i])
            codes[i] = code_of(kind, value)
            seq[i] = -1 if number is None else number
    return classes, codes, seq


def attribute_forest(parent: np.ndarray, default_domain: np.ndarray, texts: Sequence[str], innermost: np.ndarray, *,
                     start_end_codes: np.ndarray | None = None, start_end_phases: Sequence[str | None] = (),
                     process: pd.Series | None = None,
                     kernel_names: pd.Series | None = None) -> tuple[Texts, dict[str, np.ndarray]]:
    """Phase, module, op and op_stack per launch, as codes into the returned :class:`Texts` (-1: none).

    ``parent``: per range, its parent range (-1: a root; parents before their children);
    ``default_domain``: the range is in NVTX's default domain; ``texts``: its name; ``innermost``: per
    launch, the innermost range open at its call (-1: none); the rest as for
    :func:`roofline.readers.torch_ranges.attribute`."""
    classes, class_codes, seq = classify_texts(texts)
    stacks = _fold(np.asarray(parent, dtype=np.int64), np.asarray(default_domain, dtype=bool), classes,
                   class_codes, seq)
    return stacks.texts, launch_columns(innermost, stacks, start_end_codes=start_end_codes,
                                        start_end_phases=start_end_phases, process=process, kernel_names=kernel_names)


def _levels(parent: np.ndarray) -> list[np.ndarray]:
    """The ranges by nesting level (roots first), each level in range order."""
    depth = np.zeros(len(parent), dtype=np.int64)
    above = parent.copy()
    while True:
        deeper = np.flatnonzero(above >= 0)
        if not len(deeper):
            break
        depth[deeper] += 1
        above[deeper] = parent[above[deeper]]
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=-1)) + 2))
    return [order[bounds[d]:bounds[d + 1]] for d in range(len(bounds) - 1)]


def _fold(parent: np.ndarray, default_domain: np.ndarray, classes: list[RangeClass], class_codes: np.ndarray,
          seq: np.ndarray) -> Stacks:
    """What the stack of each range says (:class:`Stacks`, one row per range)."""
    m = len(parent)
    states: list[StackState] = [StackState()]
    state_code: dict[StackState, int] = {states[0]: 0}
    done: dict[tuple[int, int], tuple[int, int]] = {}
    state = np.zeros(m, dtype=np.int64)
    node_seq = np.full(m, -1, dtype=np.int64)
    seq_range = np.full(m, -1, dtype=np.int64)  # the nearest operator range printing a number, itself or above
    step_class = class_codes * 2 + default_domain
    for rows in _levels(parent):
        up = parent[rows]
        has_up = up >= 0
        up_at = np.where(has_up, up, 0)
        pairs, distinct = pd.factorize(np.where(has_up, state[up_at], 0) * (2 * len(classes)) + step_class[rows])
        distinct = np.asarray(distinct, dtype=np.int64)
        next_state = np.empty(len(distinct), dtype=np.int64)
        role = np.empty(len(distinct), dtype=np.int64)
        for j, key in enumerate(distinct.tolist()):
            before, cls = divmod(key, 2 * len(classes))
            found = done.get((before, cls))
            if found is None:
                kind, value = classes[cls // 2]
                after, what = step(states[before], bool(cls % 2), kind, value)
                code = state_code.get(after)
                if code is None:
                    code = state_code[after] = len(states)
                    states.append(after)
                found = done[(before, cls)] = (code, what)
            next_state[j], role[j] = found
        state[rows] = next_state[pairs]
        what = role[pairs]
        node_seq[rows] = np.where(what == NODE_SEQ, seq[rows], np.where(has_up, node_seq[up_at], -1))
        seq_range[rows] = np.where(what == OP_SEQ, rows, np.where(has_up, seq_range[up_at], -1))
    return _stacks(states, state, node_seq, seq_range, parent, seq)


def _stacks(states: list[StackState], state: np.ndarray, node_seq: np.ndarray, seq_range: np.ndarray,
            parent: np.ndarray, seq: np.ndarray) -> Stacks:
    """The :class:`Stacks` of the ranges from their states (what each state says, taken per range)."""
    texts = Texts()
    said = [finish(s) for s in states]
    by_state = {
        "phase": texts.codes([a.phase for a in said]), "module": texts.codes([a.module for a in said]),
        "op": texts.codes([a.op for a in said]), "op_stack": texts.codes([a.op_stack for a in said]),
        "node": texts.codes([a.node for a in said]),
    }
    ops = [seq_op(s) if s.ops else (-1, None, None) for s in states]
    op_depth = np.array([o[0] for o in ops], dtype=np.int64)
    op_name, op_stack = texts.codes([o[1] for o in ops]), texts.codes([o[2] for o in ops])

    def rows(which: np.ndarray) -> SeqOpRows:
        out: list[list[np.ndarray]] = [[], [], [], [], []]
        row = np.arange(len(which), dtype=np.int64)
        at = seq_range[which] if len(which) else np.zeros(0, dtype=np.int64)
        while len(at):
            live = at >= 0
            row, at = row[live], at[live]
            if not len(at):
                break
            s = state[at]
            for column, values in zip(out, (row, seq[at], op_depth[s], op_name[s], op_stack[s])):
                column.append(values)
            up = parent[at]
            at = np.where(up >= 0, seq_range[np.maximum(up, 0)], -1)
        found = [np.concatenate(c) if c else np.zeros(0, dtype=np.int64) for c in out]
        return found[0], found[1], found[2], found[3], found[4]

    return Stacks(texts=texts, phase=by_state["phase"][state], module=by_state["module"][state],
                  op=by_state["op"][state], op_stack=by_state["op_stack"][state], node=by_state["node"][state],
                  node_seq=node_seq, in_module=np.array([a.in_module for a in said], dtype=bool)[state],
                  kernel_names_op=np.array([a.kernel_names_op for a in said], dtype=bool)[state], seq_ops=rows)

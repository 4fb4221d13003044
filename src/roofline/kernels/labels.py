"""Readable labels: C++ kernel names (the words for what a roofline counts are a view's:
:mod:`roofline.views.work_words`).

Demangled CUDA kernel names carry a return type, namespaces, template arguments
and parameter lists (``void at::native::modern::vectorized_elementwise_kernel<4,
...>(int, ...)``). Views label kernels with the bare function name, adding the most
telling template argument only where names would otherwise collide.

"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


_OPEN = {"<": ">", "(": ")", "{": "}", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}
#: Function names too generic to label a kernel alone: their first template argument is kept.
GENERIC_NAMES = frozenset({"Kernel", "Kernel2", "kernel", "device_kernel", "global_kernel", "kernel_entry"})
#: Labels longer than this are cut with an ellipsis.
MAX_LABEL = 48


@dataclass(frozen=True)
class _Parsed:
    name: str
    template_args: tuple[str, ...]


def _normalise(name: str) -> str:
    return name.strip().replace("(anonymous namespace)", "anon")


def _parse(name: str) -> _Parsed:
    """Split a demangled name into its last identifier and that identifier's template arguments."""
    text = _normalise(name)
    top: list[str] = []          # characters at nesting depth 0
    stack: list[str] = []
    groups: list[tuple[int, str, str]] = []   # (position in top, opener, content) of depth-0 groups
    current: list[str] = []
    for i, ch in enumerate(text):
        if ch in _OPEN and not (ch == "<" and text.startswith("<<", i)):
            if not stack:
                current = []
            else:
                current.append(ch)
            stack.append(ch)
            continue
        if ch in _CLOSE and stack and stack[-1] == _CLOSE[ch]:
            stack.pop()
            if not stack:
                groups.append((len(top), _CLOSE[ch], "".join(current)))
                if _CLOSE[ch] == "(" and "".join(top).strip():
                    break  # the parameter list: the name ends here (ignore e.g. a trailing 'const')
            else:
                current.append(ch)
            continue
        if stack:
            current.append(ch)
        else:
            top.append(ch)
    head = "".join(top).strip()
    # drop a return type and qualifiers: the name is the last space-separated token
    token = head.split()[-1] if head.split() else head
    ident = token.split("::")[-1] or token
    # template arguments: the last '<...>' group before the parameter list
    args: tuple[str, ...] = ()
    for _pos, opener, content in reversed(groups):
        if opener == "<":
            args = tuple(_split_top(content))
            break
    return _Parsed(ident, args)


def _split_top(text: str) -> list[str]:
    """Split on commas that are not nested in brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _short_arg(arg: str) -> str:
    """A template argument without namespaces or its own template arguments: 'L2NormFunctor<float>' -> 'L2NormFunctor'."""
    parsed = _parse(arg)
    return parsed.name or arg


def _cut(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


#: A row of an analysis by operator: ``aten::addmm``, ``aten::addmm [backward]``.
_OP_LABEL = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_][\w.]*(?: \[[^\]]*\])?$")
#: A row of an analysis by module: a dotted path, root label first (``DeepCamMini.enc1.0``).
_MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.\w+)+$")
#: Labels of rows with no operator or outside every module (roofline.kernels), and of drill-downs.
_GROUP_LABEL = re.compile(r"^\((?:no operator|outside modules|no phase)\)| / ")


def is_row_label(name: str) -> bool:
    """True for the label of an operator, module or drill-down row (:func:`roofline.kernels.aggregate`),
    as opposed to a kernel name: such labels are not parsed as C++."""
    return bool(_OP_LABEL.match(name) or _MODULE_PATH.match(name) or _GROUP_LABEL.search(name))


def short_module(path: str) -> str:
    """A module path without its root label (``DeepCamMini.enc1.0`` -> ``enc1.0``; the root alone stays),
    cut from the left with an ellipsis when long (the innermost components tell most)."""
    parts = path.split(".")
    label = ".".join(parts[1:]) if len(parts) > 1 else path
    return label if len(label) <= MAX_LABEL else "…" + label[-(MAX_LABEL - 1):]


def row_label(name: str) -> str:
    """A chart label for a row label: operators whole, module paths short (:func:`short_module`),
    others cut to :data:`MAX_LABEL`."""
    if _MODULE_PATH.match(name) and not _OP_LABEL.match(name):
        return short_module(name)
    return _cut(name)


def short_name(kernel_name: str) -> str:
    """The bare function name of a demangled kernel name.

    >>> short_name("void at::native::modern::vectorized_elementwise_kernel<4, at::native::fill_kernel_cuda(at::TensorIterator&)>(int)")
    'vectorized_elementwise_kernel'
    >>> short_name("cleanup(float*, float*, bool, int)")
    'cleanup'

    Too generic names (``cutlass::Kernel<...>``) keep their first template argument.
    Mangled names (``_Z...``) and names that cannot be parsed are returned cut short. Labels of
    operator and module rows (:func:`is_row_label`) are kept (operators) or shortened as paths
    (:func:`row_label`).
    """
    if not isinstance(kernel_name, str) or not kernel_name.strip():
        return "?"
    if is_row_label(kernel_name.strip()):
        return row_label(kernel_name.strip())
    if kernel_name.startswith("_Z"):
        return _cut(kernel_name)
    parsed = _parse(kernel_name)
    if not parsed.name:
        return _cut(kernel_name.strip())
    if parsed.name in GENERIC_NAMES and parsed.template_args:
        return _cut(f"{parsed.name}<{_short_arg(parsed.template_args[0])}>")
    return _cut(parsed.name)


def short_names(kernel_names: Sequence[str]) -> list[str]:
    """Labels for several kernels, distinct where the full names are distinct.

    Colliding short names get the first template argument that tells them apart
    (``multi_tensor_apply_kernel<L2NormFunctor>``), else a number (``name #2``).
    """
    labels = [short_name(n) for n in kernel_names]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, (label, full) in enumerate(zip(labels, kernel_names)):
        groups[label].append(i)
    for label, idx in groups.items():
        fulls = {kernel_names[i] for i in idx}
        if len(fulls) < 2:
            continue
        if any(is_row_label(kernel_names[i]) for i in idx):  # e.g. A.enc and B.enc: the whole paths
            for i in idx:
                labels[i] = _cut(kernel_names[i])
            continue
        parsed = [_parse(kernel_names[i]) for i in idx]
        width = max(len(p.template_args) for p in parsed)
        for k in range(width):
            cand = [_short_arg(p.template_args[k]) if k < len(p.template_args) else "" for p in parsed]
            distinct_full = {kernel_names[i]: c for i, c in zip(idx, cand)}
            if len(set(distinct_full.values())) == len(distinct_full):
                for i, c in zip(idx, cand):
                    labels[i] = _cut(f"{label}<{c}>")
                break
        else:
            seen: dict[str, int] = {}
            for i in idx:
                number = seen.setdefault(kernel_names[i], len(seen) + 1)
                labels[i] = _cut(f"{label} #{number}")
    return labels


def label_map(kernel_names: Iterable[str]) -> dict[str, str]:
    """Each distinct name's label (:func:`short_names`), made over all of them in the order given:
    views that show some of the rows label each kernel as a view of all of them does
    (``elementwise_kernel #1`` in a table of the top 3 as in the advice on every kernel)."""
    distinct = list(dict.fromkeys(kernel_names))
    return dict(zip(distinct, short_names(distinct)))


"""Which module of a PyTorch model runs now, on every thread, and NVTX ranges that say so.

A module's *path* is its root's label, then its ``named_modules`` name: ``DeepCamMini.enc1.0``.
The root label is the root's class name, or the name given to ``roofline.torch.annotate``.
Wrappers (``DistributedDataParallel``, ``DataParallel``, FSDP, ``torch.compile``'s
``OptimizedModule``) are transparent: a wrapper and the module it wraps share one path, so
``module.`` and ``_orig_mod.`` never appear, and a wrapped root is labelled by the wrapped class.
A module that is not a registered child of the root it runs in gets its parent's path, a dot and
its class name.

One process-wide :class:`ModuleTracker` (:func:`tracker`) follows either the roots registered
with :meth:`~ModuleTracker.register_root` (``annotate``) or, after
:meth:`~ModuleTracker.track_all`, every module called outside any other (``roofline profile
--torch`` and the counter-free recorder: the user's code is unchanged). It installs PyTorch's
global module hooks:

- forward: the pre-hook pushes a frame on this thread's stack and an NVTX range
  ``roofline.module:<path>`` (:func:`roofline.attribution.module_range_name`); the post-hook pops
  both (it runs even when forward raises);
- backward: the post-hook tags the autograd nodes this forward created (sequence numbers
  between the pre-hook's and the post-hook's, reached from the outputs' ``grad_fn``), children
  first, so a parent tags only what its children left: ``node.metadata["roofline.module"]``
  and a node pre-hook and hook that push and pop the module's frame and range on the thread
  autograd runs the node on. Backward kernels thus sit in the module that caused them.

While ``torch.compile`` traces (``torch.compiler.is_compiling()``) the hooks do nothing, so
they cause no graph break: a compiled region belongs to the module that called it.

:func:`current_module` answers on any thread, in forward and in backward.
"""

from __future__ import annotations

import bisect
import itertools
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from roofline import attribution, phases
from roofline.torch import backward
from roofline.torch.tensors import output_tensors

#: The key of ``node.metadata`` that holds the module path of an autograd node.
NODE_KEY = "roofline.module"

_MAX_SEQ = 2**64  # above every sequence number

#: Wrapper classes (by name, so that none of them is imported) -> the attribute holding the wrapped module.
WRAPPERS = {
    "DistributedDataParallel": "module",
    "DataParallel": "module",
    "FullyShardedDataParallel": "_fsdp_wrapped_module",
    "OptimizedModule": "_orig_mod",
}


def wrapped(module: Any) -> Any:
    """The module a wrapper wraps (DDP, DataParallel, FSDP, ``torch.compile``), else None."""
    attr = WRAPPERS.get(type(module).__name__)
    inner = getattr(module, attr, None) if attr else None
    return inner if isinstance(inner, torch.nn.Module) else None


def unwrapped(module: Any) -> Any:
    """``module`` with every wrapper taken off (``DDP(compile(model))`` -> ``model``)."""
    while (inner := wrapped(module)) is not None:
        module = inner
    return module


def _compiled_graph(module: Any) -> bool:
    """True for a ``torch.fx.GraphModule`` (what compiler backends run), without importing torch.fx."""
    fx = sys.modules.get("torch.fx")
    return fx is not None and isinstance(module, fx.GraphModule)


def module_paths(root: Any, label: str) -> dict[int, tuple[weakref.ref[Any], str]]:
    """``id(module) -> (weak reference, path)`` for ``root`` and every registered descendant.

    A module registered under two names keeps the first (``named_modules`` order); a wrapper's
    wrapped module shares the wrapper's path."""
    paths: dict[int, tuple[weakref.ref[Any], str]] = {}
    todo = [(root, label)]
    while todo:
        module, path = todo.pop()
        if id(module) in paths:
            continue
        paths[id(module)] = (weakref.ref(module), path)
        inner = wrapped(module)
        children = [(c, path if c is inner else f"{path}.{n}") for n, c in module.named_children() if c is not None]
        todo.extend(reversed(children))
    return paths


#: The (forward, backward) phase names a root opens by default.
DEFAULT_PHASES = (attribution.FORWARD, attribution.BACKWARD)


@dataclass(frozen=True)
class RootSpec:
    """How a registered root is labelled and which phase ranges its forward opens.

    ``label``: the first component of its paths; ``phases``: (forward, backward) phase names,
    or None for module tracking alone."""

    label: str | None = None
    phases: tuple[str, str] | None = None


@dataclass
class _Frame:
    """One entry of a thread's module stack: a module's forward, or an autograd node it created."""

    path: str
    root: Any  # the root module whose paths apply inside this frame
    label: str | None  # the root's label (None: its class name)
    call: int  # the number of the root call this frame runs in
    module_id: int | None  # the module running forward; None for an autograd node's frame
    seq: int  # the thread's autograd sequence counter when the forward began (-1 for nodes)
    nvtx: phases.NvtxBackend | None  # the backend that pushed this frame's range; None: none pushed
    phase: tuple[str, str] | None = None  # the root's phases, when this frame opened the forward phase
    done: list[tuple[int, int]] = field(default_factory=list)  # children's sequence ranges, already tagged
    frontier: list[Any] = field(default_factory=list)  # nodes where the children's walks stopped


@dataclass
class _RootPaths:
    """A root's paths, built during the root's call number ``built_in``."""

    paths: dict[int, tuple[weakref.ref[Any], str]]
    built_in: int

    def path(self, module: Any) -> str | None:
        ref, path = self.paths.get(id(module), (None, None))
        return path if ref is not None and ref() is module else None


class _Use:
    """A removable registration (a root or a track-all request)."""

    def __init__(self, undo: Callable[[], None]):
        self._undo: Callable[[], None] | None = undo

    def remove(self) -> None:
        if self._undo is not None:
            undo, self._undo = self._undo, None
            undo()


class ModuleTracker:
    """Process-wide module tracking (use :func:`tracker`); see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._local = threading.local()
        self._roots: weakref.WeakKeyDictionary[Any, RootSpec] = weakref.WeakKeyDictionary()
        self._paths: weakref.WeakKeyDictionary[Any, _RootPaths] = weakref.WeakKeyDictionary()
        self._all = 0  # track-all requests
        self._all_phases = 0  # of which asked for forward/backward phase ranges
        self._handles: list[Any] = []
        self._backend: phases.NvtxBackend | None = None
        self._calls = itertools.count()  # root calls, numbered

    # -- registration ---------------------------------------------------------------------------
    def register_root(self, model: Any, spec: RootSpec) -> _Use:
        """Track ``model`` (a ``torch.nn.Module``) as a root; ``remove()`` stops it."""
        with self._lock:
            self._roots[model] = spec
            self._paths.pop(model, None)
            self._install()

        def undo() -> None:
            with self._lock:
                self._roots.pop(model, None)
                self._paths.pop(model, None)
                self._uninstall_if_unused()

        return _Use(undo)

    def track_all(self, *, phases: bool = False) -> _Use:
        """Track every module: one called outside any other is a root labelled by its class name.
        ``phases``: its forward opens the forward phase and its outputs' gradients the backward one."""
        with self._lock:
            self._all += 1
            self._all_phases += int(phases)
            self._install()

        def undo() -> None:
            with self._lock:
                self._all -= 1
                self._all_phases -= int(phases)
                self._uninstall_if_unused()

        return _Use(undo)

    @property
    def active(self) -> bool:
        return bool(self._handles)

    def _install(self) -> None:
        if self._handles:
            return
        # torch.compile(module) warns that global hooks fire again for its OptimizedModule: the
        # wrapper shares its module's path here, so that is expected (filters are set once, here).
        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        hooks = torch.nn.modules.module
        self._handles = [hooks.register_module_forward_pre_hook(self._pre_forward),
                         hooks.register_module_forward_hook(self._post_forward, always_call=True)]

    def _uninstall_if_unused(self) -> None:
        if self._all == 0 and len(self._roots) == 0:
            for handle in self._handles:
                handle.remove()
            self._handles = []

    # -- NVTX -----------------------------------------------------------------------------------
    def set_nvtx_backend(self, backend: phases.NvtxBackend | None) -> phases.NvtxBackend | None:
        """Open module ranges with ``backend`` (None: roofline.phases' choice); returns the previous one."""
        previous, self._backend = self._backend, backend
        return previous

    def _nvtx(self) -> phases.NvtxBackend:
        return self._backend if self._backend is not None else phases.nvtx_backend()

    # -- per-thread stack -----------------------------------------------------------------------
    def stack(self) -> list[_Frame]:
        """This thread's frames, outermost first."""
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _push(self, frame: _Frame, same_range: bool) -> None:
        if not same_range:
            frame.nvtx = self._nvtx()
            frame.nvtx.push(attribution.module_range_name(frame.path))
        self.stack().append(frame)

    def _pop(self) -> _Frame:
        frame = self.stack().pop()
        if frame.nvtx is not None:
            frame.nvtx.pop()
        return frame

    # -- paths ----------------------------------------------------------------------------------
    def _root_of(self, module: Any) -> tuple[Any, RootSpec] | None:
        """The root a module called outside any other starts, or None when it is not tracked."""
        inner = unwrapped(module)
        for candidate in (module, inner):
            spec = self._roots.get(candidate)
            if spec is not None:
                return module, spec
        if self._all:
            return module, RootSpec(None, DEFAULT_PHASES if self._all_phases else None)
        return None

    def _path_in(self, frame: _Frame, module: Any) -> str | None:
        """``module``'s registered path under ``frame``'s root, or None when it is not a descendant.
        The paths are built at the root's first call, and again (once per root call) when a module
        is not found: one registered since, or one made on the fly."""
        if frame.root is None:  # a node's frame whose root module is gone
            return None
        with self._lock:
            known = self._paths.get(frame.root)
            if known is None or (known.path(module) is None and known.built_in != frame.call):
                label = frame.label or type(unwrapped(frame.root)).__name__
                known = self._paths[frame.root] = _RootPaths(module_paths(frame.root, label), frame.call)
            return known.path(module)

    # -- module hooks ---------------------------------------------------------------------------
    def _pre_forward(self, module: Any, args: Any) -> None:
        if torch.compiler.is_compiling():
            return
        stack = self.stack()
        seq = torch._C._autograd._get_sequence_nr()
        if not stack:
            found = self._root_of(module)
            if found is None:
                return
            root, spec = found
            frame = _Frame("", root, spec.label, next(self._calls), id(module), seq, None, spec.phases)
            path = self._path_in(frame, module)
            assert path is not None  # the root is its own first entry
            frame.path = path
            if spec.phases is not None:
                phases.push_phase(spec.phases[0])
            self._push(frame, same_range=False)
            return
        parent = stack[-1]
        path = self._path_in(parent, module)
        if path is None:
            if _compiled_graph(module):
                return  # torch.compile's own graph (aot_eager, cudagraphs): part of the compiled region
            path = f"{parent.path}.{type(module).__name__}"
        frame = _Frame(path, parent.root, parent.label, parent.call, id(module), seq, None)
        self._push(frame, same_range=path == parent.path)

    def _post_forward(self, module: Any, args: Any, output: Any) -> None:
        if torch.compiler.is_compiling():
            return
        stack = self.stack()
        if not stack or stack[-1].module_id != id(module):
            return  # not tracked (its pre-hook pushed nothing)
        frame = self._pop()
        if frame.phase is not None:
            phases.pop_phase()
        if not torch.is_grad_enabled():
            return
        end = torch._C._autograd._get_sequence_nr()
        if end > frame.seq:
            frontier = self._tag(output_tensors(output), frame, end)
            if stack and stack[-1].module_id is not None:  # hand the parent what lies beyond this module
                parent = stack[-1]
                parent.done.append((frame.seq, end))
                parent.frontier.extend(frontier)
        if frame.phase is not None:
            backward.watch(output, frame.phase[1])

    # -- autograd nodes -------------------------------------------------------------------------
    def _tag(self, outputs: list[torch.Tensor], frame: _Frame, end: int) -> list[Any]:
        """Tag the nodes this forward created (sequence numbers in [frame.seq, end)) that are
        reachable from ``outputs`` and that no child tagged; returns the nodes where the walk left
        this forward's range (created before it: the inputs' history).

        A child's nodes are not walked again: the walk jumps to the child's own frontier, so a
        module's walk costs its own nodes, not its whole subtree's."""
        lo = frame.seq
        done = sorted(frame.done)
        todo: list[Any] = [t.grad_fn for t in outputs if t.grad_fn is not None] + frame.frontier
        seen: set[Any] = set()
        frontier: list[Any] = []
        hooks: tuple[Callable[[Any], None], Callable[[Any, Any], None]] | None = None  # shared by this walk's nodes
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            seq = node._sequence_nr()
            if seq < lo:
                frontier.append(node)
                continue
            if seq >= end:
                continue  # not made by a forward (a parameter's AccumulateGrad)
            i = bisect.bisect_right(done, (seq, _MAX_SEQ)) - 1
            if i >= 0 and done[i][0] <= seq < done[i][1]:
                continue  # a child's node: the child handed over its frontier
            metadata = node.metadata
            if NODE_KEY not in metadata:
                metadata[NODE_KEY] = frame.path
                hooks = hooks or (self._node_enter(frame), self._node_exit(frame.path))
                node.register_prehook(hooks[0])
                node.register_hook(hooks[1])
            todo.extend(n for n, _ in node.next_functions if n is not None)
        frame.done.clear()
        frame.frontier.clear()
        return frontier

    def _node_enter(self, forward: _Frame) -> Callable[[Any], None]:
        path, label, call, root_ref = forward.path, forward.label, forward.call, weakref.ref(forward.root)

        def enter(grad_outputs: Any) -> None:
            if self.active:
                self._push(_Frame(path, root_ref(), label, call, None, -1, None), same_range=False)

        return enter

    def _node_exit(self, path: str) -> Callable[[Any, Any], None]:
        def leave(grad_inputs: Any, grad_outputs: Any) -> None:
            stack = self.stack()
            if stack and stack[-1].module_id is None and stack[-1].path == path:
                self._pop()

        return leave

    # -- questions ------------------------------------------------------------------------------
    def current_module(self) -> str | None:
        """The path of the module running on this thread (forward or backward), or None."""
        stack = self.stack()
        if stack:
            return stack[-1].path
        node: Any = torch._C._current_autograd_node()
        if node is not None:
            path = node.metadata.get(NODE_KEY)
            return path if isinstance(path, str) else None
        return None

    def in_forward(self) -> bool:
        """True inside a tracked module's forward on this thread."""
        return any(frame.module_id is not None for frame in self.stack())


_TRACKER = ModuleTracker()


def tracker() -> ModuleTracker:
    """The process-wide module tracker."""
    return _TRACKER


def current_module() -> str | None:
    """The module path running on this thread now (forward, or the autograd node backward runs),
    or None outside tracked modules."""
    return _TRACKER.current_module()


@contextmanager
def nvtx_backend(backend: phases.NvtxBackend) -> Iterator[phases.NvtxBackend]:
    """Open module ranges with ``backend`` inside the block (tests record the push/pop sequence)."""
    previous = _TRACKER.set_nvtx_backend(backend)
    try:
        yield backend
    finally:
        _TRACKER.set_nvtx_backend(previous)

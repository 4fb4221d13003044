"""Which PyTorch operator, module and phase a kernel launch belongs to: the names both sides agree on.

The program side (:mod:`roofline.torch`, the counter-free recorder) writes these names;
the readers (NVTX columns of Nsight Compute, our kernel tables) parse them. Pure string
functions: no PyTorch, no pandas.

Ranges a PyTorch program opens under ``roofline profile --torch`` (all in NVTX's default
domain, push/pop, on the thread that launches the kernels):

- **module ranges** ``roofline.module:<path>``, opened by our module hooks around each
  module's forward, and around each autograd node that forward created when autograd runs
  it (on autograd's own thread), so backward kernels sit in the module that caused them.
  ``<path>`` is the root label (the model's class name, or the name given to
  ``roofline.torch.annotate``) then the ``named_modules`` path: ``DeepCamMini.enc1.0``,
  ``Block.attn.qkv``. Wrappers (DDP's ``module``, ``torch.compile``'s ``_orig_mod``) are
  left out of paths.
- **operator ranges** of ``torch.autograd.profiler.emit_nvtx`` (PyTorch's
  ``torch/csrc/profiler/util.cpp``, ``getNvtxStr``): ``aten::addmm, seq = 12``, with
  ``, op_id = N``, ``, sizes = [[...]]`` and ``, input_op_ids = ...`` when recorded. Ops that
  record no sequence number print the name alone.
- **backward node ranges**: ``AddmmBackward0, seq = 12`` around each autograd node's work,
  also ``autograd::engine::evaluate_function: AddmmBackward0``. The node's sequence number is
  the one its forward operator printed (the innermost forward op range with ``seq = 12``),
  which is how a backward kernel finds the forward operator that caused it.
- **optimizer ranges** (``torch.optim.Optimizer``'s own ``record_function``):
  ``Optimizer.step#Adam.step``, ``Optimizer.zero_grad#Adam.zero_grad``.
- other PyTorch ranges (:data:`TORCH_RANGE_PREFIXES`): not phases, not operators.

Everything else is the program's own range: the phase (``roofline.phase``,
``roofline.torch.annotate``'s forward / backward / optimizer, a user's ``train_step``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: Prefix of the NVTX ranges that carry a module path.
MODULE_RANGE_PREFIX = "roofline.module:"

#: The phases roofline.torch names, and what a launch gets when no phase range says otherwise.
FORWARD, BACKWARD, OPTIMIZER = "forward", "backward", "optimizer"

#: emit_nvtx's range text: name, then optional ", seq = N", ", op_id = N", ", sizes = ...",
#: ", input_op_ids = ..." in that order (getNvtxStr). Names hold no ",": the name ends at the first
#: comma, and this is what must follow it.
_OP_RANGE_REST = re.compile(r"(?:, (?:stashed )?seq ?= ?(?P<seq>-?\d+))?(?:, op_id = \d+)?"
                            r"(?:, (?:sizes|input_op_ids) = .*)?$")  # sizes may be followed by input_op_ids
#: An operator: a namespace and a name (aten::addmm, c10d::allreduce_, torchvision::nms).
_OPERATOR = re.compile(r"^[A-Za-z_][\w]*::[A-Za-z_][\w.]*$")
#: An autograd node: AddmmBackward0, CompiledFunctionBackward, torch::autograd::AccumulateGrad.
_NODE = re.compile(r"^(?:autograd::engine::evaluate_function: )?(?P<node>(?:[\w:]+::)?\w*Backward\w*|"
                   r"torch::autograd::AccumulateGrad|torch::autograd::GraphRoot|torch::autograd::CopySlices)$")
_OPTIMIZER = re.compile(r"^Optimizer\.(?:step|zero_grad)#")

#: Ranges PyTorch opens for itself that are neither operators nor phases.
TORCH_RANGE_PREFIXES = (
    "## Call CompiledFxGraph", "## ", "CompiledFunction", "Torch-Compiled Region", "ProfilerStep#",
    "enumerate(DataLoader)#", "DataParallel.forward", "DistributedDataParallel.forward", "nccl:", "c10d::",
    "record_param_comms", "cudaStreamSynchronize", "cudaDeviceSynchronize", "Lazy Compilation",
    "TorchDynamo Cache Lookup", "Optimizer.", "PythonDispatchMode",
)


@dataclass(frozen=True)
class OpRange:
    """One operator or autograd-node range: ``name`` (``aten::addmm`` or ``AddmmBackward0``),
    ``seq`` (its sequence number, None when not printed), ``backward`` (an autograd node)."""

    name: str
    seq: int | None
    backward: bool


def module_range_name(path: str) -> str:
    """The NVTX range name of a module path."""
    return MODULE_RANGE_PREFIX + path


def module_from_range(name: str) -> str | None:
    """The module path a range names, or None when it is not a module range."""
    return name[len(MODULE_RANGE_PREFIX):] if name.startswith(MODULE_RANGE_PREFIX) else None


def parse_op_range(name: str) -> OpRange | None:
    """An emit_nvtx operator or autograd-node range, or None for any other range."""
    text = name.strip()
    comma = text.find(",")
    base = text if comma < 0 else text[:comma]
    kind = _op_or_node(base.strip()) if base.strip() else None
    if kind is None:
        return None
    seq: str | None = None
    if comma >= 0:
        m = _OP_RANGE_REST.match(text, comma)
        if m is None:
            return None
        seq = m.group("seq")
    number = int(seq) if seq is not None and int(seq) >= 0 else None
    return OpRange(kind[0], number, kind[1])


@functools.lru_cache(maxsize=8192)
def _op_or_node(base: str) -> tuple[str, bool] | None:
    """``(name, is a node)`` for an operator or autograd-node name (without its ``, seq = ...``)."""
    node = _NODE.match(base)
    if node is not None:
        return node.group("node"), True
    if _OPERATOR.match(base) and not base.startswith(("autograd::", "torch::autograd::")):
        return base, False
    return None


def is_optimizer_range(name: str) -> bool:
    """``Optimizer.step#Adam.step`` and ``Optimizer.zero_grad#...``: PyTorch's optimizer ranges."""
    return bool(_OPTIMIZER.match(name))


#: What emit_nvtx appends to a range of the program's own (``record_function``): ", seq = N" and/or
#: ", op_id = N", then sizes or input op ids. Unique per call: a phase is named without it.
EMIT_NVTX_SUFFIX = re.compile(r", (?:(?:stashed )?seq ?= ?-?\d+(?:, op_id = \d+)?|op_id = \d+)"
                               r"(?:, (?:sizes|input_op_ids) = .*)?$")


def phase_name(name: str) -> str:
    """A phase range's name without emit_nvtx's per-call suffix: ``FSDP::pre_forward (blocks.3), op_id = 990878``
    -> ``FSDP::pre_forward (blocks.3)``; other names as they are (stripped)."""
    text = name.strip()
    m = EMIT_NVTX_SUFFIX.search(text)
    return text[:m.start()] if m is not None and m.start() > 0 else text


def is_phase_range(name: str) -> bool:
    """True for a program's own range (a phase); False for module, operator, node and PyTorch ranges."""
    text = name.strip()
    if not text or text.startswith(MODULE_RANGE_PREFIX) or parse_op_range(text) is not None:
        return False
    return not text.startswith(TORCH_RANGE_PREFIXES)


def forward_op_of_node(node: str) -> str:
    """The forward operator an autograd node's name points to, when no sequence number says:
    ``AddmmBackward0`` -> ``aten::addmm``, ``NativeLayerNormBackward0`` -> ``aten::native_layer_norm``.
    Nodes that are not operators keep their name (``torch::autograd::AccumulateGrad``)."""
    m = re.match(r"^(?:[\w:]+::)?(?P<op>\w+?)Backward\d*$", node)
    if m is None or not m.group("op"):
        return node
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", m.group("op")).lower()
    return f"aten::{snake}"


def module_at_depth(path: str, depth: int | None) -> str:
    """``path`` cut to its first ``depth`` dotted components (None: the whole path).
    ``DeepCamMini.enc1.0`` at depth 2 is ``DeepCamMini.enc1``."""
    if depth is None:
        return path
    if depth < 1:
        raise ValueError("depth must be at least 1")
    return ".".join(path.split(".")[:depth])

"""Record every PyTorch operator a program runs: its FLOPs, bytes, phase and time.

A :class:`Recorder` is a ``TorchDispatchMode`` (it sees each ATen operator after
autograd, with real tensors) plus a ``torch.profiler`` session. Each recorded call
runs inside a ``record_function("roofline.op#N")`` range, which ties the profiler's
times to our counts: on a GPU the durations of the CUDA kernels (and copies) launched
inside the range, summed (CUPTI times), on the CPU the operator's own time.
``Recorder(timed=False)`` records without the profiler (times NaN): inside an Nsight
Compute run, which owns CUPTI.

Each row names its operator (``op``), module (``module``) and phase (``phase``):

- ``op``: the dispatched operator (``aten::addmm``); for an operator autograd runs in backward,
  the FORWARD operator that created the running node. Autograd creates an operator's node
  (taking the thread's next sequence number) just before dispatching the operator down to us,
  so a forward call that finds the thread's sequence counter advanced since the last one is
  the node's operator: its number is the counter minus one. In backward the running node's
  ``_sequence_nr()`` finds it again (else :func:`roofline.attribution.forward_op_of_node`);
- ``module``: :func:`roofline.torch.modules.current_module` (the recorder tracks every module
  of the process while it runs: the user's code is unchanged);
- ``phase``: the innermost open phase range, else the phase PyTorch's state implies
  (:func:`roofline.torch.auto.inferred_phase`).

This module imports only PyTorch, the standard library and our PyTorch-side modules: it runs
inside the user's program, whose Python may lack pandas.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from typing import Any

import torch

from roofline import attribution, phases
from roofline.profiling.counter_free import formulas
from roofline.torch import auto, modules, optim

LABEL = "roofline.op#"

#: 8-bit and 4-bit floating types (PyTorch's names) and their tensor-core input type.
_LOW_PRECISION = {"float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8",
                  "float4_e2m1fn_x2": "fp4"}
#: Our FLOP column for each floating dtype name (non-tensor work). PyTorch's kernels do the arithmetic
#: of 8-bit and 4-bit floats in FP32 (they convert each value first): their FLOPs are FP32 FLOPs.
_DTYPE_COLUMN = {"float64": "fp64_flops", "float32": "fp32_flops", "float16": "fp16_flops", "bfloat16": "fp16_flops",
                 **{name: "fp32_flops" for name in _LOW_PRECISION}}
#: Ops whose FLOPs run on tensor cores on a GPU when the dtype allows it.
_TENSOR_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "_scaled_mm_v2", "_grouped_mm", "_scaled_grouped_mm", "_int_mm",
    "convolution", "_convolution", "cudnn_convolution",
    "convolution_backward", "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention_backward", "_scaled_dot_product_cudnn_attention_backward",
    "_flash_attention_forward", "_efficient_attention_forward", "_flash_attention_backward",
    "_efficient_attention_backward",
})


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def operand_dtype(name: str, inputs: list[Any], tensors: list[Any]) -> str:
    """The dtype name a row of op ``name`` is recorded under: for a tensor-core op, its largest input
    (an FP8 ``_scaled_mm`` writes BF16 from FP8 operands; its small FP32 scales are not the operands);
    for any other op the first floating tensor of its result then inputs (``tensors``), else the first."""
    if name in _TENSOR_OPS and inputs:
        return _dtype_name(max(inputs, key=lambda t: t.numel()).dtype)
    floating = [t for t in tensors if t.is_floating_point()]
    return _dtype_name((floating or tensors)[0].dtype) if tensors else "none"


def _tensor_precision(name: str, dtype: str) -> str | None:
    """The tensor-core input type a GPU op of this dtype most likely used, or None."""
    if name not in _TENSOR_OPS:
        return None
    if dtype in ("float16", "bfloat16"):
        return {"float16": "fp16", "bfloat16": "bf16"}[dtype]
    if dtype in _LOW_PRECISION or dtype == "int8":
        return _LOW_PRECISION.get(dtype, dtype)
    if dtype == "float32":
        conv = "conv" in name
        allowed = torch.backends.cudnn.allow_tf32 if conv else torch.backends.cuda.matmul.allow_tf32
        return "tf32" if allowed else None
    return None


def flop_columns(name: str, dtype: str, device_type: str, flops: float | None) -> dict[str, Any]:
    """Spread one op's FLOPs over the kernel-table columns (unknown FLOPs stay unknown). An INT8
    matrix product (``_int_mm``) does integer operations: ``tensor_int_ops`` on a GPU, ``int_ops``
    elsewhere, and no FLOPs."""
    cols: dict[str, Any] = {"fp64_flops": 0.0, "fp32_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0}
    if flops is None:
        return {k: None for k in cols}
    precision = _tensor_precision(name, dtype) if device_type == "cuda" else None
    if dtype == "int8" and name in _TENSOR_OPS:
        if precision is None:
            return cols | {"int_ops": flops}
        return cols | {"tensor_int_ops": flops, "tensor_precision": precision}
    if dtype not in _DTYPE_COLUMN:  # integer and boolean ops do no floating-point work
        return cols
    if precision is not None:
        cols["tensor_flops"] = flops
        cols["tensor_precision"] = precision
    else:
        cols[_DTYPE_COLUMN[dtype]] = flops
    return cols


class Recorder:
    """Record operators while active: ``with Recorder() as rec: ...; rows = rec.rows()``.

    ``rows()`` gives one dict per operator call with kernel-table column names
    (``time_s`` in s, FLOP columns, ``dram_bytes`` in B, ``op``, ``module``, ``phase``...) plus
    ``overload`` (the ATen overload, ``aten.addmm.default``) and ``shapes`` (input shapes).
    ``timed=False``: no PyTorch profiler, every ``time_s`` NaN.
    """

    def __init__(self, *, timed: bool = True) -> None:
        self.timed = timed
        self._compiled_calls = 0
        self._calls: dict[int, dict[str, Any]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._mode: Any = None
        self._prof: Any = None
        self._events: Any = None
        self._tracking: list[Any] = []
        #: autograd sequence number -> the forward operator whose node has it
        self._forward_ops: dict[int, str] = {}
        #: thread -> its sequence counter at its last forward call
        self._counters: dict[int, int] = {}

    def _operator(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """The row's ``op``; records which forward operator created a new autograd node."""
        op = str(func._schema.name)
        if torch._C._current_graph_task_id() != -1:  # autograd is running a node on this thread
            node: Any = torch._C._current_autograd_node()
            if node is not None:
                return self._forward_ops.get(node._sequence_nr()) or attribution.forward_op_of_node(node.name())
            return op
        if torch.is_grad_enabled():
            counter = torch._C._autograd._get_sequence_nr()
            thread = threading.get_ident()
            if counter != self._counters.get(thread) and counter > 0 and any(
                    t.requires_grad for t in formulas.flatten_tensors((args, kwargs))):
                self._forward_ops[counter - 1] = op
            self._counters[thread] = counter
        return op

    def _on_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = func._overloadpacket.__name__
        op = self._operator(func, args, kwargs)
        if func.is_view or name in formulas.SKIPPED:
            return func(*args, **kwargs)
        idx = next(self._ids)
        if self.timed:
            with torch.profiler.record_function(f"{LABEL}{idx}"):
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        ins = formulas.flatten_tensors(args)
        tensors = formulas.flatten_tensors(out) + ins
        dtype = operand_dtype(name, ins, tensors)
        device = tensors[0].device if tensors else torch.device("cpu")
        try:
            flops = formulas.op_flops(func, args, kwargs, out)
        except Exception:  # a formula that cannot handle these arguments: unknown, not zero
            flops = None
        row = {
            "overload": str(func),
            "kernel_name": f"aten::{name}",
            "op": op,
            "module": modules.current_module(),
            "phase": phases.current_phase() or auto.inferred_phase(),
            "shapes": [list(t.shape) for t in ins],
            "dtype": dtype,
            "device_type": device.type,
            "device": device.index if device.type == "cuda" else None,
            "dram_bytes": float(formulas.op_bytes(args, kwargs, out)),
            **flop_columns(name, dtype, device.type, flops),
        }
        with self._lock:
            self._calls[idx] = row
        return out

    def start(self) -> Recorder:
        from torch.utils._python_dispatch import TorchDispatchMode

        recorder = self

        class _Mode(TorchDispatchMode):
            @classmethod
            def ignore_compile_internals(cls) -> bool:
                # Inside an ncu run (untimed) the program must run as it would: compiled code runs,
                # and the mode sees only the operators it calls (matrix products, attention), not
                # the fused kernels. Timed (counter-free), torch.compile falls back to eager so that
                # every operator is seen and timed (compiled_frames() tells the user).
                return not recorder.timed

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                return recorder._on_call(func, args, kwargs or {})

        def count_compiled(module: Any, args: Any) -> None:
            if type(module).__name__ == "OptimizedModule":  # torch.compile(model)
                self._compiled_calls += 1

        from torch.nn.modules.module import register_module_forward_pre_hook

        self._tracking = [modules.tracker().track_all(), optim.track_steps(),
                          register_module_forward_pre_hook(count_compiled)]
        if self.timed:
            activities = [torch.profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available():
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            self._prof = torch.profiler.profile(activities=activities)
            self._prof.start()
        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def stop(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if self._prof is not None:
            self._prof.stop()
            self._events = self._prof.events()
            self._prof = None
        for handle in self._tracking:
            handle.remove()
        self._tracking = []

    def __enter__(self) -> Recorder:
        return self.start()

    def compiled_frames(self) -> int:
        """Calls of torch.compile'd modules, plus frames Dynamo compiled, while recording (0: none)."""
        import sys

        frames = 0
        if "torch._dynamo" in sys.modules:
            from torch._dynamo.utils import counters

            frames = int(counters["frames"].get("total", 0))
        return self._compiled_calls + frames

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def rows(self) -> list[dict[str, Any]]:
        """One dict per recorded call that the profiler timed (untimed: every call, time NaN), in call order."""
        times: dict[int, float] = {}
        cc = None
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            cc = f"{major}.{minor}"
        for ev in self._events or ():
            # On a GPU each range is listed twice: the CPU range, and the profiler's copy of it on the GPU
            # (Kineto's gpu_user_annotation, device type CUDA), which spans from the start of its first kernel
            # to the end of its last, with the GPU's idle gaps between them: on an operator's first call the
            # CPU loads cuDNN engines and kernels between its launches (ms, where its kernels take µs).
            if ev.device_type != torch.autograd.DeviceType.CPU or not ev.name.startswith(LABEL):
                continue
            idx = int(ev.name[len(LABEL):])
            row = self._calls.get(idx)
            if row is None:
                continue
            if row["device_type"] == "cuda":
                us = ev.device_time_total  # CUPTI: the durations of the kernels launched inside the range
            else:
                children = [c for c in ev.cpu_children if not c.name.startswith(LABEL)]
                us = sum(c.cpu_time_total for c in children) if children else ev.cpu_time_total
            times[idx] = us * 1e-6
        if not self.timed:
            times = dict.fromkeys(self._calls, math.nan)
        out = []
        pid = os.getpid()
        for idx in sorted(times):
            row = dict(self._calls[idx])
            row.update(time_s=times[idx], process_id=pid, estimated=True, launch_id=idx)
            if row["device_type"] == "cuda":
                row["compute_capability"] = cc
            out.append(row)
        return out

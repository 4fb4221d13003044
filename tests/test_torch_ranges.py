"""PyTorch attribution (phase, module, op, op_stack) from the NVTX columns of Nsight Compute exports.

The CSVs are synthetic raw pages in ncu's real NVTX column format: the header strings of the
ncu 2024.1.1 binary and the cell form public readers of these exports parse (provenance in
tests/test_names.py, next to ``_nvtx_csv``): the launching thread's id, then every open push/pop
range in double quotes, outermost first, each ``domain:name`` + six attribute fields; start/end
ranges ``id:domain:name`` + six fields. Range names are those PyTorch 2.13's emit_nvtx prints
(``aten::addmm, seq = 1, op_id = 5, sizes = [[2, 3], [3, 4]]``, ``AddmmBackward0, seq = 1``) and
roofline.torch's module ranges (``roofline.module:TwoLayer.fc1``).
"""

from __future__ import annotations

import csv
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from roofline.readers import read_profile
from roofline.readers.ncu import rep as ncu_rep
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, attribute, read_stack, start_end_phase

PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_END = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
HEADER = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, START_END, "Kernel Name", "Context",
          "Stream", "Block Size", "Grid Size", "Device", "CC", "gpu__time_duration.sum"]
NONE6 = ":none:none:none:none:none:none"
D = DEFAULT_DOMAIN


def _stack(thread: int, *ranges: str) -> str:
    """A push/pop cell: ranges are names (default domain) or 'Domain@name'."""
    cells = []
    for r in ranges:
        domain, name = r.split("@", 1) if "@" in r else (D, r)
        cells.append(f'"{domain}:{name}{NONE6}"')
    return f"{thread}  " + "  ".join(cells)


def _start_end(*names: str) -> str:
    return "  ".join(f'"{i + 1}:{D}:{n}{NONE6}"' for i, n in enumerate(names))


def _csv(tmp_path, rows):  # type: ignore[no-untyped-def]
    """rows: (process id, push/pop cell, start/end cell, kernel name)."""
    p = tmp_path / "torch_raw.csv"
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(HEADER)
        w.writerow([""] * (len(HEADER) - 1) + ["nsecond"])
        for i, (pid, push_pop, start_end, kernel) in enumerate(rows):
            w.writerow([i, pid, "python3", "127.0.0.1", push_pop, start_end, kernel, 1, 7, "(256, 1, 1)",
                        "(80, 1, 1)", 0, "9.0", 1000])
    return p


M = "roofline.module:"
A, B = 4242, 5151  # two processes of one file, with clashing sequence numbers
MAIN, AUTOGRAD = 4242, 4250  # process A's main thread and autograd's device thread
ADDMM1 = "aten::addmm, seq = 1, op_id = 5, sizes = [[2, 3], [3, 4]], input_op_ids = [(3, 0), (4, 0)]"

ROWS = [
    # 0: forward of fc1 under annotate's forward and a user's train_step: linear(0) > addmm(1)
    (A, _stack(MAIN, "train_step", "forward", M + "TwoLayer", M + "TwoLayer.fc1", "aten::linear, seq = 0",
               ADDMM1), "", "ampere_sgemm_32x32_nn"),
    # 1: relu's kernel runs in clamp_min (no seq: below autograd)
    (A, _stack(MAIN, "train_step", "forward", M + "TwoLayer", "aten::relu, seq = 2", "aten::clamp_min"), "",
     "vectorized_elementwise_kernel"),
    # 2: fc2: linear(3) > addmm(4); aten::expand, seq = 7 ran too, but launched no kernel (a view)
    (A, _stack(MAIN, "train_step", "forward", M + "TwoLayer", M + "TwoLayer.fc2", "aten::linear, seq = 3",
               "aten::addmm, seq = 4"), "", "ampere_sgemm_32x32_nn"),
    # 3: the loss, outside every module
    (A, _stack(MAIN, "train_step", "forward", "aten::sum, seq = 8"), "", "reduce_kernel"),
    # 4: backward on autograd's thread, fc2's node inside fc2's module range (as roofline.torch writes it)
    (A, _stack(AUTOGRAD, M + "TwoLayer.fc2", "AddmmBackward0, seq = 4", "aten::mm"), _start_end("backward"),
     "ampere_sgemm_32x32_nt"),
    # 5: fc1's node in the order autograd opens them: the engine's evaluate_function range (no seq),
    # then the module range (pushed by the node's pre-hook), then the node's own range
    (A, _stack(AUTOGRAD, "autograd::engine::evaluate_function: AddmmBackward0", M + "TwoLayer.fc1",
               "AddmmBackward0, seq = 1", "aten::mm"), "", "ampere_sgemm_32x32_tn"),
    # 6: a node whose forward op launched nothing: seq 7 is in no forward launch; a user start/end epoch
    (A, _stack(AUTOGRAD, M + "TwoLayer.fc2", "ExpandBackward0, seq = 7", "aten::sum"), _start_end("epoch"),
     "reduce_kernel"),
    # 7: a node with no module range around it: the module of the forward launch with seq 4
    (A, _stack(AUTOGRAD, "AddmmBackward0, seq = 4", "aten::sum, sizes = [[2, 4]]"), "", "reduce_kernel"),
    # 8: optimizer inside the user's train_step: the optimizer range is nested in train_step
    (A, _stack(MAIN, "train_step", "Optimizer.step#AdamW.step", "aten::_foreach_add_"), "",
     "multi_tensor_apply_kernel"),
    # 9: a user's range inside the optimizer step: the more specific word wins
    (A, _stack(MAIN, "train_step", "Optimizer.step#AdamW.step", "clip_grads", "aten::mul_"), "",
     "vectorized_elementwise_kernel"),
    # 10: torch.compile'd forward: a Triton kernel under CompiledFunction (a PyTorch range, not an op)
    (A, _stack(MAIN, "train_step", "forward", M + "TwoLayer", "CompiledFunction"), "", "triton_poi_fused_gelu_0"),
    # 11: its backward: CompiledFunctionBackward node, a Triton kernel names itself
    (A, _stack(AUTOGRAD, M + "TwoLayer", "CompiledFunctionBackward, seq = 9"), _start_end("backward"),
     "triton_red_fused_sum_1"),
    # 12: a named domain: its phase loses to the default domain's; its op ranges are not PyTorch's
    (A, _stack(MAIN, "train_step", "NCCL@AllReduce", "MyLib@aten::mm, seq = 99"), "", "nccl_kernel"),
    # 13: a named domain only
    (A, _stack(MAIN, "MyApp@warmup"), "", "warmup_kernel"),
    # 14: process B, no phase ranges (forward inferred from the module range); its seq 1 is a convolution
    (B, _stack(B, M + "Net", M + "Net.conv", "aten::conv2d, seq = 0", "aten::convolution, seq = 1",
               "aten::_convolution", "aten::cudnn_convolution"), "", "implicit_gemm"),
    # 15: process B's backward: seq 1 is B's convolution, not A's addmm
    (B, _stack(B + 1, M + "Net.conv", "ConvolutionBackward0, seq = 1", "aten::convolution_backward"), "",
     "implicit_gemm_dgrad"),
    # 16: nothing open
    (A, "4242", "", "init_kernel"),
]

NA = None
# (phase, module, op, op_stack) per row, by hand from the rules in roofline.readers.torch_ranges
EXPECTED = [
    ("forward", "TwoLayer.fc1", "aten::addmm", "aten::linear/aten::addmm"),  # innermost phase range: forward
    ("forward", "TwoLayer", "aten::clamp_min", "aten::relu/aten::clamp_min"),
    ("forward", "TwoLayer.fc2", "aten::addmm", "aten::linear/aten::addmm"),
    ("forward", NA, "aten::sum", "aten::sum"),
    ("backward", "TwoLayer.fc2", "aten::addmm", "aten::linear/aten::addmm"),  # seq 4 -> row 2's addmm
    ("backward", "TwoLayer.fc1", "aten::addmm", "aten::linear/aten::addmm"),  # seq 1 -> row 0's addmm
    ("backward", "TwoLayer.fc2", "aten::expand", "aten::expand"),  # node marker beats start/end epoch
    ("backward", "TwoLayer.fc2", "aten::addmm", "aten::linear/aten::addmm"),  # module from row 2
    ("optimizer", NA, "aten::_foreach_add_", "aten::_foreach_add_"),  # marker inside train_step
    ("clip_grads", NA, "aten::mul_", "aten::mul_"),  # phase range inside the marker
    ("forward", "TwoLayer", "triton_poi_fused_gelu_0", "triton_poi_fused_gelu_0"),
    ("backward", "TwoLayer", "triton_red_fused_sum_1", "triton_red_fused_sum_1"),
    ("train_step", NA, NA, NA),  # AllReduce (NCCL domain) loses to the default domain's train_step
    ("warmup", NA, NA, NA),
    ("forward", "Net.conv", "aten::cudnn_convolution", "aten::conv2d/aten::convolution/aten::_convolution/"
     "aten::cudnn_convolution"),
    ("backward", "Net.conv", "aten::convolution", "aten::conv2d/aten::convolution"),
    (NA, NA, NA, NA),
]


def _rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple[object, ...]]:
    return [tuple(None if pd.isna(v) else v for v in row) for row in frame[columns].itertuples(index=False)]


def test_ncu_csv_phase_module_op_per_launch(tmp_path):
    t = read_profile(_csv(tmp_path, ROWS))
    table = t.frame.assign(op_stack=t.metrics["op_stack"])
    got = _rows(table, ["phase", "module", "op", "op_stack"])
    for i, (g, e) in enumerate(zip(got, EXPECTED)):
        assert g == e, f"launch {i}: {g} != {e}"
    assert len(got) == len(EXPECTED)
    assert t.frame["time_s"].tolist() == pytest.approx([1e-6] * len(ROWS))  # 1000 ns each: the NVTX columns did not shift values


def test_order_of_launches_does_not_matter(tmp_path):
    # the backward launches first, the forward ones after: the seq join is over the whole file
    order = [4, 5, 7, 15, 0, 1, 2, 3, 6, 8, 9, 10, 11, 12, 13, 14, 16]
    t = read_profile(_csv(tmp_path, [ROWS[i] for i in order]))
    got = _rows(t.frame.assign(op_stack=t.metrics["op_stack"]), ["phase", "module", "op", "op_stack"])
    assert got == [EXPECTED[i] for i in order]


def test_details_page_gets_the_same_attribution(tmp_path):
    p = tmp_path / "details.csv"
    head = HEADER[:-1] + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(head)
        for i in (2, 4):  # fc2's forward addmm and its backward mm
            pid, push_pop, start_end, kernel = ROWS[i]
            w.writerow([i, pid, "python3", "127.0.0.1", push_pop, start_end, kernel, 1, 7, "(1, 1, 1)",
                        "(1, 1, 1)", 0, "9.0", "Command line profiler metrics", "gpu__time_duration.sum",
                        "usecond", "2"])
    t = read_profile(p)
    assert _rows(t.frame.assign(op_stack=t.metrics["op_stack"]), ["phase", "module", "op", "op_stack"]) == [
        EXPECTED[2], EXPECTED[4]]


# -- the stack function alone (no ncu file) ------------------------------------------------------------

def test_read_stack_forward():
    s = read_stack([(D, "train_step"), (D, M + "TwoLayer"), (D, M + "TwoLayer.fc1"), (D, "aten::linear, seq = 0"),
                    (D, "aten::t, seq = 0"), (D, ADDMM1)])
    assert (s.phase, s.in_module, s.module, s.op, s.op_stack) == (
        "train_step", True, "TwoLayer.fc1", "aten::addmm", "aten::linear/aten::t/aten::addmm")
    assert s.node is None and not s.kernel_names_op
    # seq 0 is printed by linear and by t inside it: the innermost (t, depth 1) is kept; seq 1: addmm
    assert sorted(s.seq_ops) == [(0, 1, "aten::t", "aten::linear/aten::t"),
                                 (1, 2, "aten::addmm", "aten::linear/aten::t/aten::addmm")]


def test_read_stack_backward_and_markers():
    s = read_stack([(D, "train_step"), (D, M + "Block.attn"), (D, "autograd::engine::evaluate_function: MmBackward0"),
                    (D, "MmBackward0, seq = 12"), (D, "aten::mm")])
    assert (s.phase, s.module, s.node, s.node_seq, s.op) == ("backward", "Block.attn", "MmBackward0", 12, None)
    assert s.seq_ops == ()  # a backward stack's ops are not forward operators
    # a phase range OUTSIDE the marker loses, one INSIDE wins
    assert read_stack([(D, "step"), (D, "Optimizer.zero_grad#SGD.zero_grad")]).phase == "optimizer"
    assert read_stack([(D, "Optimizer.step#SGD.step"), (D, "my_phase")]).phase == "my_phase"
    # PyTorch's own ranges are not phases; a module range alone decides nothing until start/end ranges are seen
    s = read_stack([(D, "ProfilerStep#3"), (D, M + "Net"), (D, "aten::add, seq = 5")])
    assert (s.phase, s.in_module, s.op) == (None, True, "aten::add")
    assert read_stack([]).phase is None and read_stack([]).kernel_names_op


def test_start_end_phase():
    assert start_end_phase([(D, "epoch"), (D, "backward")]) == "backward"
    assert start_end_phase([(D, "backward"), ("NVTX", "other")]) == "backward"  # default domain first
    assert start_end_phase([("NVTX", "other"), (D, "aten::mm, seq = 1")]) == "other"
    assert start_end_phase([]) is None


def test_attribute_with_codes():
    # 5 launches over 3 distinct stacks, one start/end range; process 2's seq 3 must not find process 1's
    stacks = [[(D, M + "Net.fc"), (D, "aten::linear, seq = 3"), (D, "aten::addmm, seq = 4")],
              [(D, M + "Net.fc"), (D, "AddmmBackward0, seq = 4"), (D, "aten::mm")],
              [(D, "LinearBackward0, seq = 3"), (D, "aten::mm")]]
    codes = np.array([0, 1, 2, -1, 2])
    out = attribute(codes, stacks, start_end_codes=np.array([-1, -1, -1, 0, -1]), start_ends=[[(D, "eval")]],
                    process=pd.Series([1, 1, 1, 1, 2], dtype="Int64"))
    assert _rows(out, ["phase", "module", "op", "op_stack"]) == [
        ("forward", "Net.fc", "aten::addmm", "aten::linear/aten::addmm"),
        ("backward", "Net.fc", "aten::addmm", "aten::linear/aten::addmm"),
        ("backward", "Net.fc", "aten::linear", "aten::linear"),  # seq 3 in process 1: linear; module from it
        ("eval", None, None, None),  # only a start/end range
        ("backward", None, "aten::linear", "aten::linear"),  # process 2 never showed seq 3: the node's name
    ]
    assert all(str(out[c].dtype) == "string" for c in out.columns)


# -- .ncu-rep through ncu_report (a stand-in following NVIDIA's documented INvtxDomainInfo API) -----------

class _Domain:
    def __init__(self, name, push_pop, start_end=()):
        self._name, self._push_pop, self._start_end = name, push_pop, start_end

    def name(self):
        return self._name

    def push_pop_ranges(self):
        return list(self._push_pop)

    def start_end_ranges(self):
        return list(self._start_end)


class _Metric:
    def __init__(self, value, unit=""):
        self._value, self._unit = value, unit

    def value(self):
        return self._value

    def unit(self):
        return self._unit


def _action(name, domains):  # type: ignore[no-untyped-def]
    state = SimpleNamespace(domains=lambda: list(range(len(domains))), domain_by_id=lambda i: domains[i])
    metrics = {"gpu__time_duration.sum": _Metric(1.0, "usecond")}
    return SimpleNamespace(name=lambda base=None: name, metric_names=lambda: list(metrics),
                           metric_by_name=lambda m: metrics[m], nvtx_state=lambda: state)


def test_ncu_rep_module_path_attribution(tmp_path):
    actions = [
        _action("gemm", [_Domain("", ["train_step", M + "TwoLayer.fc2", "aten::linear, seq = 3",
                                      "aten::addmm, seq = 4"]), _Domain("NCCL", ["AllReduce"])]),
        _action("gemm_nt", [_Domain("", [M + "TwoLayer.fc2", "AddmmBackward0, seq = 4", "aten::mm"])]),
        _action("triton_poi_fused_add_0", [_Domain("", [], ["backward"])]),
    ]
    rng = SimpleNamespace(num_actions=lambda: len(actions), action_by_idx=lambda i: actions[i])
    module = SimpleNamespace(load_report=lambda p: SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng))
    profile = ncu_rep.read_with_module(tmp_path / "x.ncu-rep", module)
    ids = profile.ids.assign(op_stack=profile.metrics["op_stack"])
    assert _rows(ids, ["phase", "module", "op", "op_stack"]) == [
        ("train_step", "TwoLayer.fc2", "aten::addmm", "aten::linear/aten::addmm"),
        ("backward", "TwoLayer.fc2", "aten::addmm", "aten::linear/aten::addmm"),
        ("backward", None, "triton_poi_fused_add_0", "triton_poi_fused_add_0"),  # start/end backward
    ]


def test_each_distinct_stack_is_read_once(tmp_path, monkeypatch):
    from roofline.readers import torch_ranges

    calls: list[int] = []
    real = torch_ranges.read_stack
    monkeypatch.setattr(torch_ranges, "read_stack", lambda ranges, cache=None: calls.append(1) or real(ranges, cache))
    t = read_profile(_csv(tmp_path, ROWS * 3))  # 51 launches, 17 distinct push/pop cells
    assert len(calls) == 17
    got = _rows(t.frame.assign(op_stack=t.metrics["op_stack"]), ["phase", "module", "op", "op_stack"])
    assert got == EXPECTED * 3


def test_parse_op_range_forms():
    from roofline.attribution import OpRange, parse_op_range

    assert parse_op_range(ADDMM1) == OpRange("aten::addmm", 1, False)  # sizes, then input_op_ids
    assert parse_op_range("aten::cat, sizes = [[1, 2], [3]]") == OpRange("aten::cat", None, False)
    assert parse_op_range("aten::add_, stashed seq = 5") == OpRange("aten::add_", 5, False)
    assert parse_op_range("autograd::engine::evaluate_function: AddmmBackward0") == OpRange("AddmmBackward0", None, True)
    assert parse_op_range("aten::mm, seq = -1") == OpRange("aten::mm", None, False)  # no sequence number
    assert parse_op_range("aten::mm, something else") is None  # not emit_nvtx's form
    assert parse_op_range("step 3, warmup") is None and parse_op_range("forward") is None


def test_phases_are_named_without_emit_nvtxs_per_call_suffix():
    """PyTorch's emit_nvtx appends ", seq = N" and ", op_id = N" to record_function ranges (seen in the
    public 2-GPU timeline of tests/data/nsys/nsysai_mfu_before): each call would be a phase of its own."""
    from roofline.attribution import phase_name

    assert phase_name("FSDP::pre_forward (blocks.3._checkpoint_wrapped_module), op_id = 990878") == \
        "FSDP::pre_forward (blocks.3._checkpoint_wrapped_module)"
    assert phase_name("AllToAll4D, seq = 45440, op_id = 990760") == "AllToAll4D"
    assert phase_name("FlashAttnFunc, seq = 7, op_id = 1, sizes = [[2, 3]]") == "FlashAttnFunc"
    assert phase_name(" forward ") == "forward"
    assert phase_name("step 1, of 3") == "step 1, of 3"  # a comma of the program's own stays
    assert phase_name(", op_id = 3") == ", op_id = 3"  # nothing left: the text as it is

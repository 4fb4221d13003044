"""roofline.torch on CPU PyTorch: module paths, module NVTX ranges in forward and backward,
wrappers (DDP, torch.compile) left out of paths, phases without annotate, and operator, module
and phase of each counter-free row."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import needs

torch = needs.torch()

from roofline import attribution, phases  # noqa: E402
from roofline.profiling.counter_free.recorder import Recorder  # noqa: E402
from roofline.torch import annotate, auto, modules  # noqa: E402

nn = torch.nn


class FakeNvtx:
    """An NVTX backend that records (call, range name, thread) for each push and pop."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, int]] = []
        self.lock = threading.Lock()

    def push(self, name: str) -> None:
        with self.lock:
            self.calls.append(("push", name, threading.get_ident()))

    def pop(self) -> None:
        with self.lock:
            self.calls.append(("pop", None, threading.get_ident()))

    def start(self, name: str) -> Any:
        return None

    def end(self, handle: Any) -> None:
        pass

    def pushed(self) -> list[str]:
        return [attribution.module_from_range(n) or n for c, n, _ in self.calls if c == "push" and n]

    def balanced(self) -> bool:
        """Every thread pops what it pushed, never below zero."""
        depth: dict[int, int] = {}
        for call, _, thread in self.calls:
            depth[thread] = depth.get(thread, 0) + (1 if call == "push" else -1)
            if depth[thread] < 0:
                return False
        return all(d == 0 for d in depth.values())


@pytest.fixture
def nvtx() -> Iterator[FakeNvtx]:
    fake = FakeNvtx()
    with modules.nvtx_backend(fake):
        yield fake


@pytest.fixture
def track_all() -> Iterator[None]:
    use = modules.tracker().track_all()
    yield
    use.remove()
    assert not modules.tracker().active


class Net(nn.Module):
    """a = Linear(3, 4) + ReLU, b = Linear(4, 2), then * 2 in Net's own forward."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.b = nn.Linear(4, 2)

    def forward(self, x: Any) -> Any:
        return self.b(self.a(x)) * 2


def _node_modules(out: Any) -> list[tuple[str, str | None]]:
    """(node name, its module tag) for every node reachable from ``out``, sorted."""
    found: dict[Any, tuple[str, str | None]] = {}
    todo = [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in found:
            continue
        found[node] = (node.name(), node.metadata.get(modules.NODE_KEY))
        todo.extend(n for n, _ in node.next_functions)
    return sorted(found.values(), key=str)


def test_autograd_creates_an_ops_node_just_before_dispatching_it_down() -> None:
    """The recorder's rule on torch 2.13: at dispatch, the op's node has sequence number counter - 1."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: dict[str, int] = {}

    class Peek(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen[str(func._schema.name)] = torch._C._autograd._get_sequence_nr() - 1
            return func(*args, **(kwargs or {}))

    lin, conv = nn.Linear(3, 2), nn.Conv2d(2, 2, 3)
    with Peek():
        y = lin(torch.randn(4, 3))
        z = conv(torch.randn(1, 2, 5, 5))
    assert y.grad_fn.name() == "AddmmBackward0" and seen["aten::addmm"] == y.grad_fn._sequence_nr()
    assert z.grad_fn.name() == "ConvolutionBackward0" and seen["aten::convolution"] == z.grad_fn._sequence_nr()
    # linear = t (TBackward0) then addmm: consecutive numbers, t's first
    t_node = [n for n, _ in y.grad_fn.next_functions if n is not None and n.name() == "TBackward0"][0]
    assert seen["aten::t"] == t_node._sequence_nr() == y.grad_fn._sequence_nr() - 1


def test_nested_paths_and_nvtx_ranges_in_forward_and_backward(nvtx: FakeNvtx, track_all: None) -> None:
    net = Net()
    out = net(torch.randn(5, 3))
    # forward: each module's range inside its parent's, in call order, all on this thread
    assert nvtx.pushed() == ["Net", "Net.a", "Net.a.0", "Net.a.1", "Net.b"]
    assert nvtx.balanced() and {t for _, _, t in nvtx.calls} == {threading.get_ident()}
    # children tag first; the parent (Net) tags only its own multiplication
    assert _node_modules(out) == sorted([
        ("MulBackward0", "Net"), ("AddmmBackward0", "Net.b"), ("TBackward0", "Net.b"), ("ReluBackward0", "Net.a.1"),
        ("AddmmBackward0", "Net.a.0"), ("TBackward0", "Net.a.0"),
        *[("torch::autograd::AccumulateGrad", None)] * 4], key=str)  # parameters' nodes come from no forward
    nvtx.calls.clear()
    done: list[int] = []

    def run() -> None:  # backward on another thread: its ranges are that thread's
        out.sum().backward()
        done.append(threading.get_ident())

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    # CPU autograd runs nodes by decreasing sequence number: Mul(5) Addmm(4) T(3) Relu(2) Addmm(1) T(0)
    assert nvtx.pushed() == ["Net", "Net.b", "Net.b", "Net.a.1", "Net.a.0", "Net.a.0"]
    assert [c for c, _, _ in nvtx.calls] == ["push", "pop"] * 6  # each node's range closes before the next
    assert {t for _, _, t in nvtx.calls} == set(done) == {worker.ident}
    assert modules.current_module() is None


def test_a_parents_own_nodes_behind_its_children_are_its_own_and_the_inputs_history_nobodys(track_all: None) -> None:
    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid())

        def forward(self, x: Any) -> Any:
            return self.inner(x * 3)  # Outer's MulBackward0 lies behind inner's nodes

    x = torch.randn(2, 3, requires_grad=True)
    before = x.exp()  # history made before the model ran: no module's
    out = Outer()(before)
    assert _node_modules(out) == sorted([
        ("SigmoidBackward0", "Outer.inner.1"), ("AddmmBackward0", "Outer.inner.0"), ("TBackward0", "Outer.inner.0"),
        ("MulBackward0", "Outer"), ("ExpBackward0", None), *[("torch::autograd::AccumulateGrad", None)] * 3], key=str)


def test_repeated_submodules_a_module_used_twice_and_unregistered_modules(nvtx: FakeNvtx, track_all: None) -> None:
    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
            self.shared = nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            for layer in self.layers:
                x = layer(x)
            x = self.shared(self.shared(x))  # one module, two calls
            return nn.Tanh()(x)  # made on the fly: not a registered child

    model = Model()
    out = model(torch.randn(2, 4))
    assert nvtx.pushed() == ["Model", "Model.layers.0", "Model.layers.1", "Model.shared", "Model.shared",
                             "Model.Tanh"]
    nvtx.calls.clear()
    out.sum().backward()
    # the tanh's node, then each Linear's AddmmBackward0 and TBackward0, last call first
    assert nvtx.pushed() == ["Model.Tanh"] + [p for p in ["Model.shared"] * 2 + ["Model.layers.1", "Model.layers.0"]
                                              for _ in range(2)]
    assert nvtx.balanced()
    # the second forward of the same module: its own nodes, its own ranges, no hook registered twice
    nvtx.calls.clear()
    model(torch.randn(2, 4)).sum().backward()
    assert nvtx.pushed().count("Model.shared") == 2 + 4  # 2 forward calls + 2 x (Addmm, T) nodes


def test_annotate_names_the_root_and_remove_takes_everything_out(nvtx: FakeNvtx) -> None:
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    ann = annotate(net, optimizer, name="net")
    seen: list[tuple[str | None, str | None]] = []
    out = net(torch.randn(2, 3))
    out.grad_fn.register_prehook(lambda g: seen.append((phases.current_phase(), modules.current_module())))
    out.sum().backward()
    assert nvtx.pushed()[:2] == ["net", "net.a"]
    assert seen == [("backward", "net")]  # Net's own multiplication, seen from inside backward
    unrelated = nn.Linear(2, 2)
    nvtx.calls.clear()
    unrelated(torch.randn(1, 2))
    assert nvtx.calls == []  # annotate tracks its model only
    ann.remove()
    assert not modules.tracker().active
    net(torch.randn(2, 3)).sum().backward()
    assert nvtx.calls == [] and phases.current_phase() is None
    with pytest.raises(ValueError):
        annotate(net, name="a.b")


def test_distributed_data_parallel_is_transparent(nvtx: FakeNvtx, track_all: None) -> None:
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("this PyTorch is built without torch.distributed")
    # PyTorch's own fake process group: the real DistributedDataParallel and its reducer, without
    # Gloo's sockets and threads in the test process (an in-process Gloo group hung CI for 80 min once).
    # A real two-rank Gloo run is tests/profiling/test_torch_profile.py's torchrun test, in its own process.
    try:
        from torch.testing._internal.distributed.fake_pg import FakeStore
    except ImportError as e:
        pytest.skip(f"this PyTorch has no fake process group ({e})")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=1)
    try:
        ddp = nn.parallel.DistributedDataParallel(Net())

        def one_rank_allreduce(state, bucket):  # type: ignore[no-untyped-def]  # DDP inspects real annotations
            done: torch.futures.Future = torch.futures.Future()
            done.set_result(bucket.buffer())  # the sum over one rank is the rank's own gradient
            return done

        ddp.register_comm_hook(None, one_rank_allreduce)
        out = ddp(torch.randn(2, 3))
        assert nvtx.pushed() == ["Net", "Net.a", "Net.a.0", "Net.a.1", "Net.b"]  # no "module." anywhere
        nvtx.calls.clear()
        out.sum().backward()
        assert nvtx.pushed() == ["Net", "Net.b", "Net.b", "Net.a.1", "Net.a.0", "Net.a.0"]
        assert all(p.grad is not None for p in ddp.parameters())
    finally:
        dist.destroy_process_group()


def test_torch_compile_is_transparent_and_breaks_no_graph(nvtx: FakeNvtx, track_all: None) -> None:
    # aot_eager: the real torch.compile wrapper and compiled autograd function, without the 13 s
    # inductor takes to build C++ on this 2-core CPU; fullgraph=True fails on any graph break
    # (our hooks do nothing while dynamo traces).
    compiled = torch.compile(Net(), backend="aot_eager", fullgraph=True)
    assert type(compiled).__name__ == "OptimizedModule"
    out = compiled(torch.randn(2, 3))
    assert nvtx.pushed() == ["Net"]  # the compiled region belongs to the module that called it
    assert out.grad_fn.name() == "CompiledFunctionBackward" and out.grad_fn.metadata[modules.NODE_KEY] == "Net"
    nvtx.calls.clear()
    out.sum().backward()
    assert nvtx.pushed() == ["Net"] and nvtx.balanced()


def test_compiled_submodule_keeps_its_registered_path(nvtx: FakeNvtx, track_all: None) -> None:
    net = Net()
    net.b = torch.compile(net.b, backend="aot_eager", fullgraph=True)  # registered as b, wrapping _orig_mod
    net(torch.randn(2, 3))
    assert nvtx.pushed() == ["Net", "Net.a", "Net.a.0", "Net.a.1", "Net.b"]


def test_phases_without_annotate() -> None:
    activation = auto.activate()
    try:
        net = Net()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        seen: list[tuple[str, str | None]] = []
        net.b.register_forward_hook(lambda m, a, o: seen.append(("forward", phases.current_phase())))
        out = net(torch.randn(2, 3))
        out.grad_fn.register_prehook(lambda g: seen.append(("backward", phases.current_phase())))
        out.sum().backward()
        optimizer.register_step_post_hook(lambda o, a, k: seen.append(("step", phases.current_phase())))
        optimizer.step()
        assert seen == [("forward", "forward"), ("backward", "backward"), ("step", "optimizer")]
        assert phases.current_phase() is None
    finally:
        activation.remove()
    assert not modules.tracker().active


def test_operator_ranges_need_cuda_and_nvtx_and_say_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = auto.operator_ranges_unavailable()
    if reason is None:
        pytest.skip("this PyTorch has CUDA and NVTX")
    assert "NVTX" in reason or "CUDA" in reason
    assert auto.enable_operator_ranges() is False
    assert auto.activate_from_env({}) is False  # nothing asked
    assert not modules.tracker().active
    monkeypatch.setattr(auto, "_activation", None)
    assert auto.activate_from_env({"ROOFLINE_TORCH": "1"}) is True  # module and phase ranges all the same
    try:
        assert modules.tracker().active
        assert auto.activate_from_env({"ROOFLINE_TORCH": "1"}) is True  # twice: installed once
        assert auto._activation is not None and len(auto._activation.handles) == 2
    finally:
        assert auto._activation is not None
        auto._activation.remove()
    assert not modules.tracker().active


def test_backward_rows_of_a_linear_name_its_module_and_addmm() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(5, 3)
    with Recorder(timed=False) as rec:
        model(x).sum().backward()
    rows = rec.rows()
    backward = [r for r in rows if r["phase"] == "backward"]
    # Linear 2: mm (grad input), mm (grad weight), sum (grad bias); ReLU: threshold_backward;
    # Linear 0: mm (grad weight), sum (grad bias): its input needs no gradient
    assert [(r["kernel_name"], r["op"], r["module"]) for r in backward] == [
        ("aten::mm", "aten::addmm", "Sequential.2"), ("aten::mm", "aten::addmm", "Sequential.2"),
        ("aten::sum", "aten::addmm", "Sequential.2"), ("aten::threshold_backward", "aten::relu", "Sequential.1"),
        ("aten::mm", "aten::addmm", "Sequential.0"), ("aten::sum", "aten::addmm", "Sequential.0")]
    forward = [(r["op"], r["module"], r["phase"]) for r in rows if r["module"] and r["phase"] == "forward"]
    assert forward == [("aten::addmm", "Sequential.0", "forward"), ("aten::relu", "Sequential.1", "forward"),
                       ("aten::addmm", "Sequential.2", "forward")]
    assert [r["overload"] for r in rows if r["op"] == "aten::relu"] == ["aten.relu.default",
                                                                         "aten.threshold_backward.default"]
    assert all(r["time_s"] != r["time_s"] for r in rows)  # untimed: NaN
    assert not modules.tracker().active  # the recorder's tracking ends with it

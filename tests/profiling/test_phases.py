"""Phases: our range stack mirrors NVTX; annotate() assigns forward, backward and optimizer."""

from __future__ import annotations

import threading

import pytest

import needs

import roofline
from roofline import phases


def test_phase_context_manager_and_decorator_nest() -> None:
    assert phases.current_phase() is None
    with roofline.phase("step"):
        assert phases.current_phase() == "step"
        with phases.phase("forward"):
            assert phases.current_phase() == "forward"
        assert phases.current_phase() == "step"

    @roofline.phase("decorated")
    def f() -> str | None:
        return phases.current_phase()

    assert f() == "decorated"
    assert phases.current_phase() is None


def test_phase_is_closed_when_the_body_raises() -> None:
    with pytest.raises(RuntimeError):
        with phases.phase("boom"):
            raise RuntimeError
    assert phases.current_phase() is None


def test_push_pop_ranges_belong_to_their_thread_and_process_ranges_to_all() -> None:
    seen: dict[str, str | None] = {}
    with phases.phase("main-only"):
        t = threading.Thread(target=lambda: seen.setdefault("thread", phases.current_phase()))
        t.start()
        t.join()
    assert seen["thread"] is None

    handle = phases.start_range("backward")
    t = threading.Thread(target=lambda: seen.setdefault("other", phases.current_phase()))
    t.start()
    t.join()
    assert seen["other"] == "backward"
    # ended from another thread, as autograd's callback may do
    t = threading.Thread(target=phases.end_range, args=(handle,))
    t.start()
    t.join()
    assert phases.current_phase() is None


def test_innermost_is_the_most_recently_opened() -> None:
    with phases.phase("step"):
        with phases.process_range("backward"):
            assert phases.current_phase() == "backward"
            with phases.phase("inner"):
                assert phases.current_phase() == "inner"
        assert phases.current_phase() == "step"


def test_empty_name_is_refused() -> None:
    with pytest.raises(ValueError):
        phases.phase("")


def test_nvtx_backend_is_one_of_the_known() -> None:
    assert phases.nvtx_backend().name in ("nvtx", "torch.cuda.nvtx", "none")


class _Calls(list):  # type: ignore[type-arg]
    def __getattr__(self, fn: str):  # type: ignore[no-untyped-def]
        def record(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.append((fn, args, kwargs))
            return len(self)

        return record


def _fake_torch(calls: _Calls):  # type: ignore[no-untyped-def]
    import types

    torch = types.ModuleType("torch")
    torch._C = types.SimpleNamespace(_nvtx=object())  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(nvtx=calls)  # type: ignore[attr-defined]
    return torch


def test_ranges_go_to_the_default_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    """ncu --nvtx-include forward/ matches ranges of NVTX's default domain: torch.cuda.nvtx's, or the
    nvtx package's opened with domain=None (its NULL domain handle; see roofline.phases)."""
    import sys

    package = _Calls()
    monkeypatch.setitem(sys.modules, "nvtx", package)
    monkeypatch.setattr(phases, "_nvtx_package_installed", lambda: True)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert phases.nvtx_backend().name == "nvtx"
    with phases.phase("forward"):
        handle = phases.start_range("backward")
        phases.end_range(handle)
    assert [(fn, args, kw) for fn, args, kw in package] == [
        ("push_range", ("forward",), {"domain": None}), ("start_range", ("backward",), {"domain": None}),
        ("end_range", (2,), {}), ("pop_range", (), {"domain": None})]

    torch_calls = _Calls()
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(torch_calls))
    assert phases.nvtx_backend().name == "torch.cuda.nvtx"  # preferred once PyTorch is imported
    package.clear()
    with phases.phase("optimizer"):
        pass
    assert [fn for fn, _, _ in torch_calls] == ["range_push", "range_pop"] and package == []


def test_a_range_is_closed_by_the_backend_that_opened_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    package, torch_calls = _Calls(), _Calls()
    monkeypatch.setitem(sys.modules, "nvtx", package)
    monkeypatch.setattr(phases, "_nvtx_package_installed", lambda: True)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    phases.push_phase("forward")
    handle = phases.start_range("backward")
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(torch_calls))  # PyTorch imported meanwhile
    phases.end_range(handle)
    phases.pop_phase()
    assert [fn for fn, _, _ in package] == ["push_range", "start_range", "end_range", "pop_range"]
    assert torch_calls == []
    assert phases.current_phase() is None


def _train_step(model, optimizer, x, y, record):  # type: ignore[no-untyped-def]
    import torch

    out = model(x)
    loss = torch.nn.functional.mse_loss(out, y)
    loss.backward()
    optimizer.step()


def test_annotate_assigns_forward_backward_optimizer_to_operators() -> None:
    torch = needs.torch()
    from roofline.profiling.counter_free.recorder import Recorder
    from roofline.torch import annotate

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ann = annotate(model, optimizer)
    x, y = torch.randn(5, 8), torch.randn(5, 4)
    with Recorder() as rec, phases.phase("step"):  # a user phase around the step must not hide backward
        _train_step(model, optimizer, x, y, rec)
    rows = rec.rows()
    by_name: dict[str, set] = {}
    for r in rows:
        by_name.setdefault(r["kernel_name"], set()).add(r["phase"])
    assert by_name["aten::addmm"] == {"forward"}
    assert "backward" in by_name["aten::mm"]  # weight and input gradients of the Linear layers
    assert by_name["aten::threshold_backward"] == {"backward"}
    assert {r["phase"] for r in rows if r["kernel_name"] in ("aten::add_", "aten::_foreach_add_")} == {"optimizer"}
    assert phases.current_phase() is None
    ann.remove()
    seen: list = []
    hook = model.register_forward_hook(lambda m, a, o: seen.append(phases.current_phase()))
    model(x)
    hook.remove()
    assert seen == [None]  # annotate's forward range is gone with remove()
    with Recorder() as rec2:
        model(x)
    assert {r["phase"] for r in rec2.rows()} == {"forward"}  # the recorder infers it: inside a root module


def test_backward_range_is_opened_on_the_thread_running_backward() -> None:
    torch = needs.torch()
    from roofline.torch import annotate

    model = torch.nn.Linear(3, 3)
    annotate(model)
    seen: list[tuple[str | None, int]] = []
    out = model(torch.randn(2, 3))
    out.register_hook(lambda g: seen.append((phases.current_phase(), threading.get_ident())))
    done = threading.Event()

    def run_backward() -> None:  # backward from another thread, like autograd's device threads
        out.sum().backward()
        done.set()

    t = threading.Thread(target=run_backward)
    t.start()
    t.join()
    assert done.is_set()
    assert seen and seen[0][0] == "backward" and seen[0][1] == t.ident
    assert phases.current_phase() is None  # closed when the backward pass ended

"""The tensor-core GEMM runner without a GPU: a stand-in ``torch`` module records every call."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from roofline.bench.gpu.gemm import GemmRunner, gemm_flops


class FakeTensor:
    """Shape, type and layout: ``t()`` is a view (row-major <-> column-major), ``contiguous()`` a row-major copy."""

    def __init__(self, shape: tuple[int, ...], dtype: str, column_major: bool = False) -> None:
        self.shape, self.dtype, self.column_major = shape, dtype, column_major

    def to(self, dtype: str) -> FakeTensor:
        return FakeTensor(self.shape, dtype, self.column_major)

    def t(self) -> FakeTensor:
        return FakeTensor(self.shape[::-1], self.dtype, not self.column_major)

    def contiguous(self) -> FakeTensor:
        return FakeTensor(self.shape, self.dtype)


class FakeEvent:
    """Every timed sample lasts 3 ms (CALLS_PER_SAMPLE GEMMs of 1 ms)."""

    def __init__(self, enable_timing: bool = False) -> None:
        pass

    def record(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, other: FakeEvent) -> float:
        return 1.0 * GemmRunner.CALLS_PER_SAMPLE  # milliseconds


class FakeTorch:
    """What GemmRunner uses of torch, with ``_scaled_mm`` recording its arguments."""

    float32, float16, bfloat16, float64, float8_e4m3fn = "float32", "float16", "bfloat16", "float64", "float8_e4m3fn"
    int8 = "int8"

    def __init__(self, fast_accum_keyword: bool = True) -> None:
        self.fast_accum_keyword = fast_accum_keyword
        self.scaled_mm_calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.int_mm_calls: list[tuple[FakeTensor, FakeTensor]] = []
        self.cuda = SimpleNamespace(is_available=lambda: True, Event=FakeEvent, empty_cache=lambda: None)

    def device(self, kind: str, index: int) -> str:
        return f"{kind}:{index}"

    def Generator(self, device: str) -> Any:  # noqa: N802 (torch's name)
        return SimpleNamespace(manual_seed=lambda seed: None)

    def randn(self, *shape: int, **kw: Any) -> FakeTensor:
        return FakeTensor(shape, kw["dtype"])

    def tensor(self, value: float, device: str) -> float:
        return value

    def randint(self, low: int, high: int, shape: tuple[int, ...], **kw: Any) -> FakeTensor:
        return FakeTensor(shape, kw["dtype"])

    def _int_mm(self, a: FakeTensor, b: FakeTensor) -> FakeTensor:
        self.int_mm_calls.append((a, b))
        return FakeTensor((a.shape[0], b.shape[1]), "int32")

    def _scaled_mm(self, a: FakeTensor, b: FakeTensor, **kw: Any) -> FakeTensor:
        if "use_fast_accum" in kw and not self.fast_accum_keyword:
            raise TypeError("_scaled_mm() got an unexpected keyword argument 'use_fast_accum'")
        self.scaled_mm_calls.append(((a, b), kw))
        return FakeTensor((a.shape[0], b.shape[1]), kw["out_dtype"])


def test_fp8_gemm_runs_with_fast_accumulation_at_2n3_flops(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    runner = GemmRunner(0)
    assert runner.torch is fake and runner.unsupported("tensor_fp8") is None
    seconds = runner.time("tensor_fp8", 64)
    assert seconds == pytest.approx(1e-3)  # 3 ms per sample of 3 GEMMs
    # one probe + 2 warm-ups + 3 timed calls, every one with fast accumulation and unit scales
    assert len(fake.scaled_mm_calls) == 6
    for (a, b), kw in fake.scaled_mm_calls:
        assert kw["use_fast_accum"] is True and kw["out_dtype"] == "bfloat16"
        assert kw["scale_a"] == kw["scale_b"] == 1.0
        assert a.shape == b.shape == (64, 64) and a.dtype == b.dtype == "float8_e4m3fn"
    # 64 x 64 x 64: 2 x 262,144 = 524,288 FLOPs, 524,288 / 1 ms = 524,288,000 FLOP/s
    assert gemm_flops(64) == 524_288 == 2 * 64**3
    assert gemm_flops(64) / seconds == pytest.approx(524_288_000)
    assert runner.library == "torch; tensor_fp8 with use_fast_accum=True"


def test_fp8_gemm_without_the_keyword_still_runs_and_says_so(monkeypatch):
    fake = FakeTorch(fast_accum_keyword=False)
    monkeypatch.setitem(sys.modules, "torch", fake)
    runner = GemmRunner(0)
    assert runner.time("tensor_fp8", 32) == pytest.approx(1e-3)
    assert fake.scaled_mm_calls and all("use_fast_accum" not in kw for _, kw in fake.scaled_mm_calls)
    assert runner.library.startswith("torch; tensor_fp8 WITHOUT fast accumulation (understated ceiling)")
    assert "unexpected keyword argument 'use_fast_accum'" in runner.library
    runner.time("tensor_fp8", 64)  # a second size: the note is not repeated
    assert runner.library.count("WITHOUT") == 1


def test_other_type_errors_are_not_taken_for_a_missing_keyword(monkeypatch):
    fake = FakeTorch()

    def broken(a: Any, b: Any, **kw: Any) -> Any:
        raise TypeError("expected a float8 tensor")

    fake._scaled_mm = broken  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "torch", fake)
    with pytest.raises(TypeError, match="float8"):
        GemmRunner(0).time("tensor_fp8", 16)


def test_int8_gemm_takes_b_column_major(monkeypatch):
    """cuBLASLt's INT8 GEMM wants B column-major: on an H100 torch._int_mm ran 8192^3 at 126 TOP/s with B
    row-major and 915 TOP/s with B column-major, the same product (benchmarks/results/h100-80gb-hbm3-2026-11-27/
    probe/probe.json), so a row-major B understated the INT8 ceiling 7.2 times."""
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    runner = GemmRunner(0)
    assert runner.time("tensor_int8", 64) == pytest.approx(1e-3)
    assert len(fake.int_mm_calls) == 5  # 2 warm-ups + 3 timed calls
    for a, b in fake.int_mm_calls:
        assert a.shape == b.shape == (64, 64) and a.dtype == b.dtype == "int8"
        assert not a.column_major and b.column_major

"""Counter-free mode on CPU PyTorch: FLOPs against analytic formulas, bytes from tensor sizes,
phases, and the whole path through a separate Python process (examples/deepcam_mini.py)."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import needs

torch = needs.torch()

from roofline.profiling.counter_free.collect import rows_to_table  # noqa: E402
from roofline.profiling.counter_free.recorder import Recorder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _record(fn):  # type: ignore[no-untyped-def]
    with torch.no_grad(), Recorder() as rec:
        fn()
    return rec.rows()


def _only(rows, name):  # type: ignore[no-untyped-def]
    found = [r for r in rows if r["kernel_name"] == name]
    assert len(found) == 1, [r["kernel_name"] for r in rows]
    return found[0]


def test_conv2d_flops_are_2_n_cout_hout_wout_cin_kh_kw() -> None:
    n, cin, cout, h, w, k = 2, 3, 5, 17, 13, 3
    x, wt = torch.randn(n, cin, h, w), torch.randn(cout, cin, k, k)
    rows = _record(lambda: torch.nn.functional.conv2d(x, wt, stride=2, padding=1))
    hout, wout = (h + 2 - k) // 2 + 1, (w + 2 - k) // 2 + 1
    row = _only(rows, "aten::convolution")
    assert row["fp32_flops"] == 2 * n * cout * hout * wout * cin * k * k
    assert row["fp64_flops"] == 0.0 and row["tensor_flops"] == 0.0
    assert row["time_s"] > 0 and row["phase"] is None


def test_linear_flops_are_2_batch_in_out_and_bytes_count_every_tensor_once() -> None:
    b, fin, fout = 7, 11, 5
    lin = torch.nn.Linear(fin, fout).double()
    x = torch.randn(b, fin, dtype=torch.float64)
    row = _only(_record(lambda: lin(x)), "aten::addmm")
    assert row["fp64_flops"] == 2 * b * fin * fout
    assert row["dram_bytes"] == 8 * (b * fin + fout * fin + fout + b * fout)


def test_elementwise_add_moves_three_times_numel_itemsize() -> None:
    a, b = torch.randn(1000), torch.randn(1000)
    row = _only(_record(lambda: a + b), "aten::add")
    assert row["dram_bytes"] == 3 * 1000 * 4
    assert row["fp32_flops"] == 1000
    c = torch.randn(1000)
    inplace = _only(_record(lambda: c.add_(a)), "aten::add_")
    assert inplace["dram_bytes"] == 3 * 1000 * 4  # read c, read a, write c
    bias = torch.randn(1, 50)
    m = torch.randn(20, 50)
    bcast = _only(_record(lambda: m + bias.expand(20, 50)), "aten::add")
    assert bcast["dram_bytes"] == 4 * (20 * 50 + 50 + 20 * 50)  # a broadcast row is read once


def test_batch_norm_and_optimizer_ops_have_our_formulas_and_unknown_ops_stay_unknown() -> None:
    bn = torch.nn.BatchNorm2d(4).train()
    x = torch.randn(2, 4, 8, 8)
    row = _only(_record(lambda: bn(x)), "aten::native_batch_norm")
    assert row["fp32_flops"] == 7 * x.numel()
    p, g, v = torch.randn(100), torch.randn(100), torch.randn(100)
    row = _only(_record(lambda: p.addcdiv_(g, v, value=-0.1)), "aten::addcdiv_")
    assert row["fp32_flops"] == 3 * 100
    mat = torch.randn(6, 6)
    row = _only(_record(lambda: torch.linalg.cholesky(mat @ mat.T + 6 * torch.eye(6))), "aten::linalg_cholesky_ex")
    assert row["fp32_flops"] is None  # no formula: unknown, never zero
    table = rows_to_table([row], source="test")
    assert np.isnan(table.frame["flops"].iloc[0])
    assert bool(table.frame["estimated"].iloc[0])
    assert any("linalg_cholesky_ex" in w for w in table.warnings)
    ints = _only(_record(lambda: torch.arange(10) * 3), "aten::mul")
    assert ints["fp32_flops"] == 0.0 and ints["dtype"] == "int64"  # integer work is no floating-point work


def test_untimed_recording_is_asked_for_by_environment() -> None:
    from roofline.profiling.counter_free.hook import timed_from_env

    assert timed_from_env({}) is True and timed_from_env({"ROOFLINE_COUNTER_FREE_TIMED": "1"}) is True
    assert timed_from_env({"ROOFLINE_COUNTER_FREE_TIMED": "0"}) is False
    a, b = torch.randn(10), torch.randn(10)
    with torch.no_grad(), Recorder(timed=False) as rec:
        a + b
    (row,) = rec.rows()
    assert row["kernel_name"] == "aten::add" and math.isnan(row["time_s"]) and row["fp32_flops"] == 10


def test_views_are_not_recorded_but_copies_are() -> None:
    x = torch.randn(4, 6)
    assert _record(lambda: x.view(6, 4).t()[1:3]) == []
    rows = _record(lambda: x.view(6, 4).t().reshape(24))  # not contiguous: reshape copies
    assert [r["kernel_name"] for r in rows] == ["aten::clone"]
    assert rows[0]["dram_bytes"] == 2 * 24 * 4 and rows[0]["fp32_flops"] == 0.0


#: DeepCamMini's convolutions in forward order (ConvTranspose2d too: aten::convolution).
DEEPCAM_CONVS = ["DeepCamMini.enc1.0", "DeepCamMini.enc2.0", "DeepCamMini.enc3.0", "DeepCamMini.bottleneck.0",
                 "DeepCamMini.up3", "DeepCamMini.dec3.0", "DeepCamMini.up2", "DeepCamMini.dec2.0", "DeepCamMini.up1",
                 "DeepCamMini.dec1.0", "DeepCamMini.head"]


def _deepcam_module():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("deepcam_mini", ROOT / "examples" / "deepcam_mini.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_deepcam_mini_backward_convolutions_belong_to_their_forward_modules() -> None:
    """Every convolution_backward row names aten::convolution and the module of its forward convolution.

    At width 4 every convolution has its own weight shape (enc1 (4, 4, 3, 3), enc2 (8, 4, 3, 3) ...
    head (3, 4, 1, 1)), so a backward row's weight shape says which forward convolution it belongs to."""
    deepcam = _deepcam_module()
    torch.manual_seed(0)
    model = deepcam.DeepCamMini(channels=4, classes=3, width=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(2, 4, 16, 16), torch.randint(0, 3, (2, 16, 16))
    with Recorder(timed=False) as rec:  # no annotate: the recorder tracks modules and infers phases itself
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    rows = rec.rows()
    forward = [r for r in rows if r["kernel_name"] == "aten::convolution"]
    assert [(r["module"], r["op"], r["phase"]) for r in forward] == [(m, "aten::convolution", "forward")
                                                                     for m in DEEPCAM_CONVS]
    weight_of = {r["module"]: r["shapes"][1] for r in forward}
    assert len({tuple(w) for w in weight_of.values()}) == 11  # all distinct: the check below can fail
    backward = [r for r in rows if r["kernel_name"] == "aten::convolution_backward"]
    assert len(backward) == 11
    for r in backward:
        assert r["op"] == "aten::convolution" and r["phase"] == "backward"
        assert r["shapes"][2] == weight_of[r["module"]], r["module"]  # (grad_output, input, weight, ...)
    assert sorted(r["module"] for r in backward) == sorted(DEEPCAM_CONVS)
    bn_backward = [r for r in rows if r["kernel_name"] == "aten::native_batch_norm_backward"]
    assert sorted(r["module"] for r in bn_backward) == sorted(m[:-1] + "1" for m in DEEPCAM_CONVS if m.endswith(".0"))
    assert {r["op"] for r in bn_backward} == {"aten::native_batch_norm"}
    adam = [r for r in rows if r["kernel_name"] in ("aten::addcdiv_", "aten::_foreach_addcdiv_")]  # Adam's update
    assert adam and {(r["phase"], r["module"]) for r in adam} == {("optimizer", None)}


def _conv_expected(shapes: list[list[int]], out_hw: tuple[int, int]) -> float:
    (n, cin, _, _), (cout, cin_w, kh, kw) = shapes[0], shapes[1]
    return 2 * n * cout * out_hw[0] * out_hw[1] * cin_w * kh * kw


def test_deepcam_mini_through_a_separate_process(tmp_path: Path) -> None:
    """`roofline profile --no-counters -- python examples/deepcam_mini.py` without the CLI around it."""
    from roofline.profiling.session import EXIT_OK, profile
    from roofline.profiling.settings import ProfileSettings

    size, batch = 16, 2
    settings = ProfileSettings(
        command=(sys.executable, str(ROOT / "examples" / "deepcam_mini.py"), "--size", str(size),
                 "--batch", str(batch), "--steps", "1", "--width", "4"),
        output=tmp_path / "cam", counters=False,
    )
    lines: list[str] = []
    outcome = profile(settings, on_line=lambda line, is_ncu: lines.append(line))
    assert outcome.exit_code == EXIT_OK and outcome.mode == "counter-free"
    assert any("deepcam_mini: 1 steps on cpu" in line for line in lines)
    assert (tmp_path / "cam.kernels.json").exists()
    frame, metrics = outcome.table.frame, outcome.table.metrics
    assert frame["estimated"].all()
    convs = frame["kernel_name"] == "aten::convolution"
    assert convs.sum() == 8 + 3  # 8 conv layers + 3 transposed convs, all aten::convolution
    checked = 0
    for i in np.flatnonzero(convs.to_numpy()):
        shapes = metrics["shapes"].iloc[i]
        n, cin, h, w = shapes[0]
        wshape = shapes[1]
        if len(wshape) == 4 and wshape[2] == 3:  # 3x3 conv, padding 1: same size
            expected = 2 * n * wshape[0] * h * w * wshape[1] * 9
        elif wshape[2] == 1:  # 1x1 head
            expected = 2 * n * wshape[0] * h * w * wshape[1]
        else:  # 2x2 stride-2 transposed conv: weight is (Cin, Cout, 2, 2), output 2h x 2w
            expected = 2 * n * wshape[0] * h * w * wshape[1] * 4
        assert frame["fp32_flops"].iloc[i] == expected
        assert frame["phase"].iloc[i] == "forward"
        checked += 1
    assert checked == 11
    phases = set(frame["phase"].dropna())
    assert {"forward", "backward", "optimizer"} <= phases
    assert set(frame.loc[frame["kernel_name"] == "aten::convolution_backward", "phase"]) == {"backward"}
    conv_backward = frame[frame["kernel_name"] == "aten::convolution_backward"]
    assert set(conv_backward["op"]) == {"aten::convolution"}
    assert sorted(conv_backward["module"]) == sorted(DEEPCAM_CONVS)  # width 4: the modules of the 11 convolutions
    assert (frame["time_s"] > 0).all()
    assert math.isclose(float(frame["time_s"].sum()), float(frame["time_s"].sum()))  # finite


def test_program_failure_keeps_what_was_recorded(tmp_path: Path) -> None:
    from roofline.profiling.session import EXIT_PROGRAM_FAILED, profile
    from roofline.profiling.settings import ProfileSettings

    script = tmp_path / "fails.py"
    script.write_text("import torch\nx = torch.randn(64)\ny = x + x\nraise SystemExit(5)\n")
    outcome = profile(ProfileSettings(command=(sys.executable, str(script)), output=tmp_path / "f", counters=False))
    assert outcome.exit_code == EXIT_PROGRAM_FAILED and outcome.program_returncode == 5
    assert "aten::add" in set(outcome.table.frame["kernel_name"])


def test_a_program_without_torch_operators_is_an_input_error(tmp_path: Path) -> None:
    from roofline.errors import InputError
    from roofline.profiling.session import profile
    from roofline.profiling.settings import ProfileSettings

    with pytest.raises(InputError, match="no PyTorch operator"):
        profile(ProfileSettings(command=(sys.executable, "-c", "print(1)"), output=tmp_path / "n", counters=False))


def test_saxpy_example_is_2_flops_and_12_bytes_per_element() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import saxpy
    finally:
        sys.path.pop(0)
    n = 100_000
    with Recorder() as rec:
        result = saxpy.run(n, backend="torch", repeat=2)
    adds = [r for r in rec.rows() if r["kernel_name"] == "aten::add_"]
    assert len(adds) == 2
    assert all(r["fp32_flops"] == 2 * n and r["dram_bytes"] == 12 * n for r in adds)
    assert result["bytes"] == 12 * n and result["flops"] == 2 * n


def test_interrupt_keeps_the_operators_recorded_so_far(tmp_path: Path) -> None:
    from roofline.profiling.session import EXIT_INTERRUPTED, profile
    from roofline.profiling.settings import ProfileSettings

    script = tmp_path / "long.py"
    script.write_text("import time, torch\nx = torch.randn(128)\ny = x * x\nprint('ready', flush=True)\n"
                      "time.sleep(60)\n")

    def ctrl_c(line: str, is_ncu: bool) -> None:
        if line.startswith("ready"):
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C now

    outcome = profile(ProfileSettings(command=(sys.executable, str(script)), output=tmp_path / "i", counters=False),
                      on_line=ctrl_c)
    assert outcome.exit_code == EXIT_INTERRUPTED and outcome.status == "interrupted"
    mul = outcome.table.frame[outcome.table.frame["kernel_name"] == "aten::mul"]
    assert len(mul) == 1 and mul["fp32_flops"].iloc[0] == 128


def test_a_gpu_operator_takes_its_kernels_summed_not_the_gpu_copy_of_its_range() -> None:
    """On a GPU the profiler lists each range twice: on the CPU, where its operators carry their kernels, and on
    the GPU (Kineto's gpu_user_annotation, device type CUDA), from its first kernel's start to its last one's end,
    the GPU's idle time between them included. The events are PyTorch's own, built as the profiler builds them
    (start order), with the real values of the first convolution backward of DeepCAM-mini on an H100
    (benchmarks/results/h100-80gb-hbm3-2026-11-27/profile; the 1x1 head with bias, 8 -> 3 channels at 64x64):
    its 7 kernels, launches 58-64 of deepcam.kernels.json (a GEMM, two layout changes, a CUTLASS weight gradient,
    its split-K reduction, a layout change, the bias gradient), and the time the counter-free run gave the
    operator, 48740.814 us (launch 160 of deepcam_cf.kernels.json): its range's span on the GPU."""
    from torch.autograd import DeviceType
    from torch.autograd.profiler_util import EventList, FunctionEvent

    kernels_us = [5.184, 3.520, 3.456, 9.952, 5.024, 3.328, 6.944]  # 37.408 us in all
    span_us = 48740.814
    opened = FunctionEvent(id=11, name="roofline.op#0", thread=1, start_us=0.0, end_us=48_800.0, use_device="cuda")
    op = FunctionEvent(id=12, name="aten::convolution_backward", thread=1, start_us=1.0, end_us=48_790.0,
                       use_device="cuda")
    for i, us in enumerate(kernels_us):
        op.append_kernel(f"kernel {58 + i}", 0, us)
    opened.append_cpu_child(op)
    op.set_cpu_parent(opened)
    on_gpu = FunctionEvent(id=11, name="roofline.op#0", thread=7, start_us=20.0, end_us=20.0 + span_us,
                           use_device="cuda", device_type=DeviceType.CUDA)
    assert on_gpu.device_time_total == pytest.approx(span_us) and opened.device_time_total == pytest.approx(37.408)
    rec = Recorder()
    rec._calls[0] = {"kernel_name": "aten::convolution_backward", "device_type": "cuda", "device": 0}
    rec._events = EventList([opened, op, on_gpu], use_device="cuda")
    (row,) = rec.rows()
    assert row["time_s"] == pytest.approx(37.408e-6, rel=1e-9)


@pytest.mark.gpu
def test_on_a_gpu_the_rows_add_up_to_the_kernels_each_counted_once() -> None:
    """What the test above builds, on a real GPU: a 1x1 convolution's first backward (cuDNN loads its engines
    between launches). The CUDA rows' times add up to the durations of every kernel, copy and set the profiler
    saw, each once, and no row is longer than its range's span on the GPU."""
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    from torch.autograd import DeviceType

    from roofline.profiling.counter_free.recorder import LABEL

    conv = torch.nn.Conv2d(8, 3, 1).cuda()
    x = torch.randn(2, 8, 64, 64, device="cuda", requires_grad=True)
    with Recorder() as rec:
        conv(x).sum().backward()
        torch.cuda.synchronize()
    rows = [r for r in rec.rows() if r["device_type"] == "cuda"]
    on_gpu = [e for e in rec._events if e.device_type != DeviceType.CPU]
    kernels_us = sum(e.device_time_total for e in on_gpu if not e.name.startswith(LABEL))
    assert any(r["kernel_name"] == "aten::convolution_backward" for r in rows)
    assert sum(r["time_s"] for r in rows) == pytest.approx(kernels_us * 1e-6, rel=1e-6)
    span_us: dict[int, float] = {}  # one span per range and stream
    for e in on_gpu:
        if e.name.startswith(LABEL):
            span_us[int(e.name[len(LABEL):])] = span_us.get(int(e.name[len(LABEL):]), 0.0) + e.device_time_total
    assert all(r["time_s"] <= span_us[r["launch_id"]] * 1e-6 + 1e-9 for r in rows if r["launch_id"] in span_us)


def test_gpu_matmul_flops_go_to_tensor_cores_by_dtype() -> None:
    from roofline.profiling.counter_free.recorder import flop_columns

    half = flop_columns("mm", "float16", "cuda", 100.0)
    assert half["tensor_flops"] == 100.0 and half["tensor_precision"] == "fp16" and half["fp16_flops"] == 0.0
    assert flop_columns("convolution", "bfloat16", "cuda", 8.0)["tensor_precision"] == "bf16"
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        assert flop_columns("mm", "float32", "cuda", 5.0)["fp32_flops"] == 5.0
        torch.backends.cuda.matmul.allow_tf32 = True
        assert flop_columns("mm", "float32", "cuda", 5.0)["tensor_precision"] == "tf32"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    assert flop_columns("add", "float16", "cuda", 3.0)["fp16_flops"] == 3.0  # element-wise: no tensor cores
    assert flop_columns("mm", "float16", "cpu", 3.0)["fp16_flops"] == 3.0
    assert all(v is None for v in flop_columns("mystery", "float32", "cuda", None).values())


def test_scaled_integer_and_grouped_products_count_2mnk_from_their_operands() -> None:
    """FP8 _scaled_mm, INT8 _int_mm and BF16 _grouped_mm (MoE experts) run on the CPU here: each row is
    recorded under its operands' type (not the FP8 product's BF16 result), FLOPs 2MNK by hand."""
    m, k, n = 32, 64, 48
    a8 = torch.randn(m, k).to(torch.float8_e4m3fn)
    b8 = torch.randn(n, k).to(torch.float8_e5m2).t()  # column-major, as _scaled_mm wants
    one = torch.tensor(1.0)
    ai = torch.randint(-8, 8, (m, k), dtype=torch.int8)
    bi = torch.randint(-8, 8, (k, n), dtype=torch.int8)
    tokens = torch.randn(64, 32, dtype=torch.bfloat16)  # 64 token rows, K = 32
    experts = torch.randn(4, 32, 16, dtype=torch.bfloat16)  # 4 experts of 32 x 16
    grads, acts = torch.randn(16, 64, dtype=torch.bfloat16), torch.randn(64, 24, dtype=torch.bfloat16)

    def run() -> None:
        torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16)
        torch._int_mm(ai, bi)
        torch._grouped_mm(tokens, experts, offs=torch.tensor([16, 32, 48, 64], dtype=torch.int32))
        torch._grouped_mm(grads, acts, offs=torch.tensor([16, 40, 64], dtype=torch.int32))  # 3 groups along K

    scaled, integer, experts_row, k_grouped = _record(run)
    assert scaled["kernel_name"] == "aten::_scaled_mm" and scaled["dtype"] == "float8_e5m2"  # B, the larger operand
    assert scaled["fp32_flops"] == 2 * 32 * 48 * 64 == 196_608  # on a CPU the FP8 product is FP32 arithmetic
    assert scaled["dram_bytes"] == 32 * 64 + 48 * 64 + 4 + 4 + 32 * 48 * 2  # FP8 A, B; FP32 scales; BF16 C
    assert integer["dtype"] == "int8" and integer["int_ops"] == 196_608
    assert integer["fp32_flops"] == integer["tensor_flops"] == 0.0
    assert experts_row["fp16_flops"] == 2 * 64 * 16 * 32 == 65_536  # each token row through one expert
    assert k_grouped["fp16_flops"] == 2 * 16 * 24 * 64 == 49_152  # 3 results of 16 x 24, K summing to 64
    table = rows_to_table([scaled, integer], "ops.1.json").frame
    assert table["flops"].tolist() == [196_608, 0] and table["int_ops"].iloc[1] == 196_608


def test_a_packed_fp4_product_counts_both_values_of_each_element() -> None:
    """NVFP4 operands hold two values per byte (float4_e2m1fn_x2): A (32, 32) is 32 x 64 values.
    PyTorch's own registry counts the storage, half the work."""
    from torch.utils.flop_counter import flop_registry

    from roofline.profiling.counter_free import formulas

    a = torch.empty(32, 32, dtype=torch.float4_e2m1fn_x2, device="meta")
    b = torch.empty(48, 32, dtype=torch.float4_e2m1fn_x2, device="meta").t()
    out = torch.empty(32, 48, dtype=torch.bfloat16, device="meta")
    scale = torch.empty(1, device="meta")
    mm = torch.ops.aten._scaled_mm.default
    assert formulas.op_flops(mm, (a, b, scale, scale), {"out_dtype": torch.bfloat16}, out) == 2 * 32 * 48 * 64
    assert flop_registry[mm._overloadpacket](a.shape, b.shape, (1,), (1,), out_val=out) == 32 * 48 * 64
    assert formulas.op_bytes((a, b, scale, scale), {}, out) == 32 * 32 + 48 * 32 + 4 + 4 + 32 * 48 * 2


def test_gpu_low_precision_products_are_held_to_their_tensor_ceiling() -> None:
    """On a GPU an FP8 product is tensor work of type fp8, an NVFP4 one fp4, an INT8 one tensor integer
    operations; an FP8 element-wise op (PyTorch computes in FP32) stays FP32 work. An FP8 GEMM of
    8192^3 at an assumed 1 ms on the H100 SXM spec: 1.0995 PFLOP/s, 55.6 % of its 1979 TFLOP/s FP8."""
    from roofline.analysis import analyze
    from roofline.machine.specs import get_spec
    from roofline.machine.theoretical import theoretical_from_spec
    from roofline.profiling.counter_free.recorder import flop_columns

    for dtype, precision in (("float8_e4m3fn", "fp8"), ("float8_e5m2", "fp8"), ("float8_e4m3fnuz", "fp8"),
                             ("float4_e2m1fn_x2", "fp4")):
        cols = flop_columns("_scaled_mm", dtype, "cuda", 10.0)
        assert cols["tensor_flops"] == 10.0 and cols["tensor_precision"] == precision and cols["fp32_flops"] == 0.0
    assert flop_columns("_scaled_grouped_mm", "float8_e4m3fn", "cuda", 4.0)["tensor_precision"] == "fp8"
    assert flop_columns("_grouped_mm", "bfloat16", "cuda", 4.0)["tensor_precision"] == "bf16"
    integer = flop_columns("_int_mm", "int8", "cuda", 6.0)
    assert integer["tensor_int_ops"] == 6.0 and integer["tensor_precision"] == "int8" and integer["tensor_flops"] == 0.0
    assert flop_columns("abs", "float8_e4m3fn", "cuda", 3.0)["fp32_flops"] == 3.0
    assert flop_columns("add", "int8", "cuda", 3.0) == {"fp64_flops": 0.0, "fp32_flops": 0.0, "fp16_flops": 0.0,
                                                         "tensor_flops": 0.0}

    flops = 2.0 * 8192**3
    row = {"kernel_name": "aten::_scaled_mm", "time_s": 1e-3, "dram_bytes": 2 * 8192**2 + 2 * 8192**2,
           **flop_columns("_scaled_mm", "float8_e4m3fn", "cuda", flops)}
    h100 = theoretical_from_spec(get_spec("h100-sxm"))
    r = analyze(rows_to_table([row], "ops.1.json"), h100).frame.iloc[0]
    assert r["bound"] == "tensor_fp8" and h100.compute["tensor_fp8"] == pytest.approx(1.979e15, rel=1e-3)
    assert r["pct_of_roofline"] == pytest.approx(flops / 1e-3 / 1.97885952e15, rel=1e-9)
    assert 0.555 < r["pct_of_roofline"] < 0.556


def test_a_sitecustomize_already_on_the_path_still_runs(tmp_path: Path, monkeypatch) -> None:
    from roofline.profiling.session import profile
    from roofline.profiling.settings import ProfileSettings

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    marker = tmp_path / "marker"
    (theirs / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(theirs), os.environ.get("PYTHONPATH", "")]))
    script = tmp_path / "p.py"
    script.write_text("import torch\ntorch.ones(8).sum()\n")
    outcome = profile(ProfileSettings(command=(sys.executable, str(script)), output=tmp_path / "s", counters=False))
    assert marker.read_text() == "ran"
    assert "aten::sum" in set(outcome.table.frame["kernel_name"])

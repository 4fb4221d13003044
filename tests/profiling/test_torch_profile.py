"""`roofline profile --torch` end to end on this CPU (no GPU: the counter-free estimate, with a note):
rows per operator and per module whose FLOPs match hand counts within 1 %, backward attributed to the
forward module and operator (issue 12's "done when")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import needs

from roofline.cli.app import main

ROOT = Path(__file__).resolve().parents[2]
needs.torch()


def _profile(tmp_path: Path, name: str, program: list[str], *options: str) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    code = main(["profile", "--torch", "-o", str(tmp_path / name), "--json", str(out), *options, "--",
                 sys.executable, *program])
    assert code == 0
    return json.loads(out.read_text())


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["name"]: k for k in report["kernels"]}


def _launches(tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    from roofline.readers import read_profile

    return read_profile([tmp_path / f"{name}.kernels.json"]).frame


# deepcam_mini --size 16 (batch 2, width 8, 4 channels, 3 classes): forward convolution FLOPs,
# 2 x N x Cout x Hout x Wout x Cin x K^2 (transposed: per input pixel; biases not counted):
#   enc1 4->8 at 16x16: 2*2*8*256*4*9 = 294,912; enc2 8->16 at 8x8, enc3 16->32 at 4x4 and the
#   bottleneck 32->64 at 2x2 the same 294,912 each; up3 64->32 (2x2 input, k2) 2*2*64*4*32*4 = 131,072,
#   up2 32->16 (4x4) and up1 16->8 (8x8) the same; dec3 64->32 at 4x4 2*2*32*16*64*9 = 1,179,648,
#   dec2 32->16 at 8x8 and dec1 16->8 at 16x16 the same; head 8->3 1x1 at 16x16 2*2*3*256*8 = 24,576.
DEEPCAM_FORWARD_CONV = 4 * 294_912 + 3 * 131_072 + 3 * 1_179_648 + 24_576  # 5,136,384
# DeepCamMini.dec3 (conv 64->32 at 4x4 + batch norm + ReLU on 2*32*4*4 = 1,024 elements), all phases:
# conv forward 1,179,648 + backward 2 x 1,179,648 (grad input, grad weight); batch norm 7 + 10 per
# element (7,168 + 10,240); ReLU and its backward 1 each (1,024 + 1,024).
DEEPCAM_DEC3 = 3 * 1_179_648 + 7_168 + 10_240 + 2 * 1_024  # 3,558,400


def test_deepcam_by_operator_and_module_match_hand_counts(tmp_path: Path, capsys) -> None:
    program = [str(ROOT / "examples" / "deepcam_mini.py"), "--steps", "1", "--size", "16"]
    by_op = _profile(tmp_path, "cam", program, "--by", "op")
    assert "--torch continued without counters" in capsys.readouterr().err  # no GPU here: said, not silent
    rows = _rows(by_op)
    assert rows["aten::convolution [forward]"]["flops"]["total"] == pytest.approx(DEEPCAM_FORWARD_CONV, rel=0.01)
    assert {"forward", "backward", "optimizer"} <= {k["phase"] for k in by_op["kernels"]}

    by_module = _rows(_profile(tmp_path, "cam2", program, "--by", "module", "--depth", "2"))
    assert by_module["DeepCamMini.dec3"]["flops"]["total"] == pytest.approx(DEEPCAM_DEC3, rel=0.01)

    launches = _launches(tmp_path, "cam2")
    conv = launches[launches["op"] == "aten::convolution"]
    forward_modules = set(conv.loc[conv["phase"] == "forward", "module"])
    backward = conv[conv["phase"] == "backward"]
    assert len(forward_modules) == 11 and len(backward) == 11  # enc1 needs no grad input: still one row
    assert set(backward["module"]) == forward_modules  # each backward convolution in its forward's module


# transformer_block defaults: batch 2, sequence 64, width 64, 4 heads, 2 layers, vocabulary 256.
B, S, D, LAYERS = 2, 64, 64, 2
# Forward addmm: per layer Q, K, V, O 4 x 2BSd^2 and fc1, fc2 2 x 2BS(4d)d: 24BSd^2 = 12,582,912.
TBLOCK_FORWARD_ADDMM = LAYERS * 24 * B * S * D * D  # 25,165,824
# layers.0.attn, all phases: projections 4 x 2BSd^2 = 4,194,304 forward, twice that backward
# (grad input, grad weight) plus the bias gradients 4 x B*S*d = 32,768; SDPA 4BS^2d = 2,097,152
# forward and 2.5 x that backward (5,242,880).
TBLOCK_ATTN = 3 * 4_194_304 + 32_768 + 3.5 * 2_097_152  # 19,955,712


def test_transformer_block_by_operator_and_module_match_hand_counts(tmp_path: Path) -> None:
    program = [str(ROOT / "examples" / "transformer_block.py"), "--steps", "1"]
    rows = _rows(_profile(tmp_path, "tb", program, "--by", "op"))
    assert rows["aten::addmm [forward]"]["flops"]["total"] == pytest.approx(TBLOCK_FORWARD_ADDMM, rel=0.01)

    by_module = _rows(_profile(tmp_path, "tb3", program, "--by", "module", "--depth", "4"))
    assert by_module["TinyLM.layers.0.attn"]["flops"]["total"] == pytest.approx(TBLOCK_ATTN, rel=0.01)

    launches = _launches(tmp_path, "tb3")
    sdpa = launches[launches["op"].astype("string").str.contains("scaled_dot_product", na=False)]
    assert set(sdpa["phase"]) == {"forward", "backward"}
    # every attention launch, forward or backward, in its layer's attention module
    assert set(sdpa["module"]) == {"TinyLM.layers.0.attn", "TinyLM.layers.1.attn"}
    mm_backward = launches[(launches["phase"] == "backward") & (launches["op"] == "aten::addmm")]
    assert mm_backward["module"].notna().all() and len(mm_backward) >= 2 * 6 * LAYERS  # two mm per linear


def test_torch_under_ncu_records_the_estimate_beside_the_measured_run(tmp_path: Path, fake_ncu: Path) -> None:
    # The fake ncu runs the program for real with our environment (the sitecustomize that opens the
    # attribution ranges and records the untimed estimate) and "measures" a recorded B200 export.
    program = ["-c", "import torch; m = torch.nn.Linear(8, 4); m(torch.randn(3, 8)).sum().backward()"]
    report = _profile(tmp_path, "run", program, "--arch", "9.0", "--by", "op")
    argv = json.loads(fake_ncu.read_text())
    assert "--nvtx" in argv
    from roofline.readers import read_profile

    estimate = read_profile([tmp_path / "run.estimate.kernels.json"]).frame
    assert estimate["time_s"].isna().all()  # CUPTI is ncu's: the estimate has no times
    addmm = estimate[(estimate["op"] == "aten::addmm") & (estimate["phase"] == "forward")]
    assert list(addmm["module"]) == ["Linear"]
    assert addmm["fp32_flops"].iloc[0] == 2 * 3 * 8 * 4  # 2 x batch x in x out = 192
    # backward: the weight gradient mm (2 x 8 x 3 x 4 = 192; the input needs none) and the bias sum,
    # attributed to the forward addmm and its module
    backward = estimate[(estimate["phase"] == "backward") & (estimate["op"] == "aten::addmm")]
    assert set(backward["module"]) == {"Linear"} and backward["fp32_flops"].sum() >= 192
    block = report["estimate"]  # the JSON carries measured vs estimated per operator
    forward = [r for r in block["rows"] if r["op"] == "aten::addmm" and r["phase"] == "forward"]
    assert forward and forward[0]["flops"]["estimated"] == 192 and forward[0]["flops"]["measured"] is None


def test_compiled_models_run_compiled_inside_ncu_and_eagerly_in_the_counter_free_mode() -> None:
    import torch
    from torch._dynamo.utils import counters

    from roofline.profiling.counter_free.collect import _compiled_note
    from roofline.profiling.counter_free.recorder import Recorder

    def graphs() -> int:
        return int(counters["stats"].get("unique_graphs", 0))

    # Dynamo remembers a frame it skipped (under the timed recorder) for the rest of the process:
    # start and end from a clean cache so that no other test's compile is affected.
    torch._dynamo.reset()
    try:
        model = torch.compile(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()), backend="aot_eager")
        before = graphs()
        with Recorder(timed=False) as untimed:  # as inside an ncu run: the program must run as it would
            model(torch.randn(4, 8))
        assert graphs() == before + 1  # Dynamo compiled the graph under the recorder
        assert untimed.compiled_frames() >= 1
        # (aot_eager's compiled graph still calls aten::gelu; Inductor's would call a fused kernel instead)
        assert "aten::addmm" in {r["kernel_name"] for r in untimed.rows()}
        torch._dynamo.reset()
        before = graphs()
        with Recorder() as timed:  # counter-free: eager, so that every operator is seen and timed
            model(torch.randn(4, 8))
        assert graphs() == before  # nothing compiled under the timed recorder
        assert {"aten::addmm", "aten::gelu"} <= {r["kernel_name"] for r in timed.rows()}
        assert timed.compiled_frames() >= 1 and "eager" in _compiled_note(True)
    finally:
        torch._dynamo.reset()


DDP_SCRIPT = """
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(8, 16)).square().mean()
loss.backward()
opt.step()
dist.destroy_process_group()
"""


def test_ddp_under_torchrun_gives_each_rank_its_modules(tmp_path: Path) -> None:
    script = tmp_path / "ddp_step.py"
    script.write_text(DDP_SCRIPT)
    report = _profile(tmp_path, "ddp", ["-m", "torch.distributed.run", "--nproc_per_node", "2",
                                        "--master_port", "29533", str(script)], "--by", "launch")
    from roofline.readers import read_profile

    table = read_profile([tmp_path / "ddp.kernels.json"])
    assert sorted(table.metrics["rank"].dropna().unique().tolist()) == [0, 1]
    f = table.frame
    addmm = f[(f["op"] == "aten::addmm") & (f["phase"] == "forward")]
    # DDP is transparent: the paths are the wrapped Sequential's, on both ranks
    assert sorted(addmm["module"]) == ["Sequential.0", "Sequential.0", "Sequential.2", "Sequential.2"]
    # forward FLOPs per rank: 2*8*16*32 + 2*8*32*4 = 8,192 + 2,048
    assert addmm["fp32_flops"].sum() == 2 * (8_192 + 2_048)
    backward = f[(f["phase"] == "backward") & f["op"].isin(["aten::addmm"])]
    assert set(backward["module"]) == {"Sequential.0", "Sequential.2"}
    assert report["kernels"]

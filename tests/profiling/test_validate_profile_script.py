"""benchmarks/validate_profile_gpu.py imports, answers --help, and reads the kernel tables it asks for
(the checks themselves need a GPU: see benchmarks/README-profile.md)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import needs
from needs import needs_ncu

from roofline import kernels
from roofline.readers import kernel_json

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "validate_profile_gpu.py"


@pytest.fixture
def script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("validate_profile_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_help_runs_in_a_process_of_its_own() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--parts" in out.stdout and "--ncu" in out.stdout


def test_unknown_part_is_a_usage_error(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as err:
        script.main([str(tmp_path / "out"), "--parts", "nonsense"])
    assert err.value.code == 2


def test_table_reads_the_kernel_table_file_profile_writes(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = kernels.from_records([{"kernel_name": "saxpy", "time_s": 2e-6, "fp32_flops": 2048.0, "dram_bytes": 12288.0}])
    (tmp_path / "saxpy.kernels.json").write_text(kernel_json.to_json(kernels.KernelTable(frame=frame)))
    table = script._table(tmp_path, "saxpy")
    assert table.frame["kernel_name"].tolist() == ["saxpy"]
    assert script._sum(table.frame, "dram_bytes") == 12288.0


# -- the dry run: a perfect H100's reports through the real `roofline profile` ----------------------------

N_SAXPY, MNK = 1 << 28, 4096 ** 3  # the sizes validate_profile_gpu.TARGETS profiles


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """One dry run of every part but pair and torch (2 of the paper's 15 runs), in a process of its own."""
    out = tmp_path_factory.mktemp("dry") / "out"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--dry-run", "--paper-metrics", "2", "--parts",
                           "env,targets,deepcam,paper,cf,examples"], capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / "summary.json").read_text()), out


def test_dry_run_targets_pass_with_the_analytic_counts(dry_run) -> None:  # type: ignore[no-untyped-def]
    summary, _ = dry_run
    checks = summary["checks"]
    assert summary["dry_run"] is True
    assert checks["saxpy"]["verdict"] == "PASS" and checks["saxpy"]["measured_dram_bytes"] == 12 * N_SAXPY
    assert checks["gemm_fp32"]["verdict"] == "PASS" and checks["gemm_fp32"]["measured_fp32_flops"] == 2 * MNK
    for dtype in ("tf32", "fp16", "bf16"):
        c = checks[f"gemm_{dtype}"]
        assert c["verdict"] == "PASS" and c["measured_tensor_flops"] == 2 * MNK and c["precisions"] == [dtype]
        assert c["phases"] == ["target"]
    # __hfma2: 4 FLOPs per HFMA instruction (ncu's convention); scalar __hfma: 2 (the paper's)
    assert checks["hfma2"]["matches"] == ["ncu"] and checks["hfma2"]["ratio_to_known"]["paper"] == 0.5
    assert checks["hfma"]["matches"] == ["paper"] and checks["hfma"]["hfma_inst"] == (1 << 20) * 256
    assert checks["fp16_convention"]["supported_default"] == "ncu"
    assert checks["fp16_convention"]["verdict"].startswith("the measurement supports --fp16 ncu")


def test_dry_run_deepcam_phases_figures_paper_and_estimate(dry_run) -> None:  # type: ignore[no-untyped-def]
    needs.torch()  # the dry run still runs examples/deepcam_mini.py (on the CPU), and the cf part
    summary, out = dry_run
    deepcam = summary["checks"]["deepcam"]
    assert deepcam["verdict"] == "PASS"
    # profile_dry_run.DEEPCAM_LAUNCHES summed by hand: forward 4e9 tensor + 1e7 FP32 FLOPs, 2e7 + 1e7 bytes, 50 us
    assert deepcam["per_phase"]["forward"] == {"launches": 2, "time_s": pytest.approx(50e-6), "flops": 4.01e9,
                                               "dram_bytes": 3e7}
    assert deepcam["per_phase"]["backward"]["flops"] == 8.02e9 and deepcam["per_phase"]["optimizer"]["launches"] == 1
    for name in ("deepcam_forward.png", "deepcam_backward.png", "deepcam_optimizer.png", "deepcam_step.png",
                 "deepcam.analysis.json"):
        assert deepcam["figures"][name] == 0 and (out / name).stat().st_size > 0
    timing = summary["timing"]
    assert list(timing["paper_run_rc"].values()) == [0, 0]
    # the script divides its unrounded total by our rounded time: within the two roundings (0.005 each)
    ours = timing["roofline_profile_s"]
    assert timing["ratio_paper_over_ours"] == pytest.approx(timing["paper_per_metric_s"] / ours,
                                                            abs=0.005 + 0.005 / ours + 1e-9)
    forward = summary["cf_per_phase"]["forward"]
    assert forward["measured_flops"] == 4.01e9 and forward["estimated_flops"] > 0
    assert forward["flops_ratio"] == pytest.approx(forward["estimated_flops"] / 4.01e9)
    assert summary["cf_per_phase"]["(none)"]["measured_flops"] is None  # unknown, not 0
    assert "| forward |" in (out / "summary.md").read_text().split("Counter-free estimate")[1]
    files = summary["checks"]["examples"]["files"]
    for name in ("example_saxpy", "example_deepcam"):
        assert all(size and size > 0 for size in files[name]["bytes"].values())
        assert (out / f"{name}.details.csv").exists() and (out / f"{name}.ncu-rep").exists()


# -- pieces that decide verdicts, by hand --------------------------------------------------------------------

def test_fp16_verdict_says_which_default_the_half2_kernel_supports(script) -> None:  # type: ignore[no-untyped-def]
    assert script.fp16_verdict({"hfma2": {"matches": ["paper"]}, "hfma": {"matches": []}})["verdict"] == (
        "the measurement supports --fp16 paper: change the default from ncu; scalar __hfma matches no convention")
    assert script.fp16_verdict({"hfma2": {"matches": []}})["verdict"] == "NOT SETTLED (hfma2 matches no convention)"
    assert script.fp16_verdict({})["verdict"].startswith("NOT SETTLED")


def test_fp16_check_without_an_hadd_counter_is_unknown_not_zero(script) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd

    metrics = pd.DataFrame({"sm__sass_thread_inst_executed_op_hfma_pred_on.sum": [100.0],
                            "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": [0.0]})
    entry = script._fp16_check("hfma2", metrics, {"flops": 400})
    assert entry["verdict"] == "NO COUNTER (hadd)" and "matches" not in entry


def test_compare_phases_keeps_unknown_and_zero_measured_as_none(script) -> None:  # type: ignore[no-untyped-def]
    measured = {"forward": {"launches": 2, "time_s": 1e-3, "flops": 0.0, "dram_bytes": None}}
    estimated = {"forward": {"launches": 5, "time_s": 2e-3, "flops": 10.0, "dram_bytes": 8.0}, "x": {"flops": 1.0}}
    rows = script.compare_phases(measured, estimated)
    assert rows["forward"]["time_s_ratio"] == 2.0
    assert rows["forward"]["flops_ratio"] is None and rows["forward"]["dram_bytes_ratio"] is None
    assert rows["x"]["measured_flops"] is None and rows["x"]["flops_ratio"] is None


def test_paper_ratio_only_when_every_run_succeeded(script, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    failing = script.PAPER_METRICS[3]
    monkeypatch.setattr(script, "sh", lambda cmd, log, summary, **kw: (1 if failing in cmd else 0, 2.0, ""))
    summary: dict = {"timing": {"roofline_profile_s": 4.0}}
    script.part_paper(tmp_path, summary)
    assert summary["timing"]["paper_run_rc"][failing] == 1
    assert summary["timing"]["ratio_paper_over_ours"] == f"not computed: 1 run(s) failed: {failing}"
    monkeypatch.setattr(script, "sh", lambda cmd, log, summary, **kw: (0, 2.0, ""))
    script.part_paper(tmp_path, summary)
    assert summary["timing"]["ratio_paper_over_ours"] == round(2.0 * len(script.PAPER_METRICS) / 4.0, 2)


def test_dry_run_names_are_the_ones_roofline_profile_requests_on_sm90() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    import profile_dry_run

    from roofline.profiling.metricsets import metric_set

    names = profile_dry_run.sm90_names()
    assert names["tensor_bf16"] == "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
    assert names["dram_bytes"] == "dram__bytes.sum" and set(names.values()) <= set(metric_set("9.0"))


@needs_ncu
def test_gemm_targets_on_hopper_add_per_kind_tensor_counters_the_real_ncu_knows(script) -> None:  # type: ignore[no-untyped-def]
    """On sm_90 each tensor GEMM target collects the metric set plus its type's HGMMA and HMMA counters, in
    one run; every name exists on gh100 (the real ncu 2024.1.1, no GPU). Elsewhere: the default set."""
    from test_metricsets import _ncu_names

    from roofline.profiling.metricsets import metric_set

    args = script.per_kind_metrics("gemm_bf16", "9.0")
    assert args[0] == "--metrics"
    names = args[1].split(",")
    assert names[: len(metric_set("9.0"))] == metric_set("9.0")
    assert names[len(metric_set("9.0")):] == ["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
                                              "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum"]
    extra = [f"sm__ops_path_tensor_{k}" for kinds in script.PER_KIND.values() for k in kinds]
    assert {f"{n}.sum" for n in extra} <= _ncu_names("gh100", extra)
    assert script.per_kind_metrics("gemm_fp32", "9.0") == [] and script.per_kind_metrics("gemm_bf16", "8.0") == []


def test_paper_runs_stop_at_the_deadline_and_the_rest_is_projected_not_measured(script, tmp_path: Path,
                                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each run takes 2 s of a fake clock; the deadline is 7 s away: runs start at 0, 2 and 4 s (each expected to end
    by 7 s), not at 6 s. 3 runs, 6 s; projected 2 s x 15 = 30 s, over one 4 s roofline profile run: 7.5."""
    clock = [0.0]

    def run(cmd, log, summary, **kw):  # type: ignore[no-untyped-def]
        clock[0] += 2.0
        return 0, 2.0, ""

    monkeypatch.setattr(script, "sh", run)
    monkeypatch.setattr(script.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(script, "DEADLINE", 7.0)
    summary: dict = {"timing": {"roofline_profile_s": 4.0}}
    script.part_paper(tmp_path, summary)
    timing = summary["timing"]
    assert timing["paper_runs"] == 3 and timing["paper_per_metric_s"] == 6.0 and timing["paper_runs_planned"] == 15
    assert timing["paper_stopped"] == "deadline: 3 of 15 runs made"
    assert timing["ratio_paper_over_ours"] == "not measured: 3 of 15 runs made (deadline)"
    assert timing["paper_projected_s"] == 30.0 and timing["ratio_projected_paper_over_ours"] == 7.5
    assert timing["projection"].startswith("PROJECTED, not measured")
    monkeypatch.setattr(script, "DEADLINE", None)  # no deadline: all 15, measured, no projection left over
    script.part_paper(tmp_path, summary)
    assert summary["timing"]["ratio_paper_over_ours"] == round(2.0 * 15 / 4.0, 2)
    assert not {"paper_projected_s", "projection", "paper_stopped"} & set(summary["timing"])


def test_counter_free_part_compares_the_gpu_rows_and_counts_the_host_rows_apart(script, tmp_path: Path,
                                                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The H100 session's two DeepCAM-mini tables (benchmarks/results/h100-80gb-hbm3-2026-11-27/profile). The
    counter-free one has 124 rows of operators on CPU tensors, no device: the model built on the CPU before
    .to("cuda") (64 rows) and the loss's torch.zeros(()) outside every phase, and in the optimizer 58
    _local_scalar_dense and one _foreach_add_ on Adam's CPU step counts, 1.455 ms of host time that Nsight
    Compute never sees. Outside every phase the GPU's rows are 54: 50 copies of parameters to the GPU, randn,
    randint, ones_like and the last loss.item(), 56.771 us, where with the host's 65 rows it was 1.339 ms."""
    results = Path(__file__).parents[2] / "benchmarks" / "results" / "h100-80gb-hbm3-2026-11-27" / "profile"
    for name in ("deepcam", "deepcam_cf"):
        shutil.copy(results / f"{name}.kernels.json", tmp_path / f"{name}.kernels.json")
    monkeypatch.setattr(script, "_profile", lambda *args, **kwargs: (0, 15.66, ""))
    summary: dict = {}
    script.part_cf(tmp_path, summary)
    entry = summary["checks"]["deepcam_counter_free"]
    assert entry["rows"] == 316 and entry["host_rows"] == 124
    assert entry["host_time_s"] == pytest.approx(1.455139e-3, rel=1e-6)
    outside, optimizer = summary["cf_per_phase"]["(none)"], summary["cf_per_phase"]["optimizer"]
    assert outside["estimated_launches"] == 54 and outside["estimated_time_s"] == pytest.approx(56.771e-6, rel=1e-6)
    assert optimizer["estimated_launches"] == optimizer["measured_launches"] == 65


def test_each_part_leaves_what_the_parts_after_it_reserve(script, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 33's call: torch, pair, cf under one deadline; a torch run may take the time to the deadline less
    pair's 50 s and cf's 30 s, and a run with under 15 s is not started, and said so."""
    now = [1000.0]
    monkeypatch.setattr(script.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(script, "DEADLINE", 1300.0)
    monkeypatch.setattr(script, "PARTS_ASKED", ["env", "torch", "pair", "cf"])
    assert script.slot("torch") == 300 - 50 - 30 and script.slot("pair") == 300 - 30 and script.slot("cf") == 300
    summary: dict = {}
    now[0] = 1300 - 80 - 14
    assert script.not_started("torch", summary, "tblock_torch")
    assert not script.not_started("pair", summary, "saxpy")
    assert summary["not_started"] == ["torch: tblock_torch (14 s left before the deadline)"]
    monkeypatch.setattr(script, "DEADLINE", None)
    assert script.slot("torch") == 580.0


def test_a_run_past_its_time_is_killed_with_what_it_started(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """As ncu's profiled program: a grandchild still running at the time-out goes too, so the next run finds the
    GPU free."""
    import os
    import time

    pidfile = tmp_path / "child.pid"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\nprint('started', flush=True)\ntime.sleep(60)\n")
    rc, seconds, text = script.sh([sys.executable, "-c", code], tmp_path / "log", {}, timeout=6)
    assert rc == 124 and seconds < 30 and "killed with its children" in text and "started" in text
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"process {child} outlived its run")

"""Metric sets per architecture: contents, and (where ncu is installed) availability per chip."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from roofline.errors import InputError
from roofline.profiling import metricsets
from roofline.profiling.metricsets import ARCHITECTURES, architecture, metric_set, normalize_cc

def _guidance_needed() -> list[str]:
    """Every raw ncu metric a guidance rule reads, from the rules themselves (one source of truth).

    For each rule, the first alternative made only of ncu metrics; rules that read only analysis
    columns, or only Source Counters (collected by ``--section SourceCounters``, not ``--metrics``),
    add nothing.
    """
    from roofline.guidance.rules import RULES

    needed: list[str] = []
    for rule in RULES:
        for alternative in rule.needs:
            raw = all("__" in name for name in alternative)
            source_counters = any(name.startswith(("derived__", "memory_")) for name in alternative)
            if raw and not source_counters:
                needed.extend(alternative)
                break
    assert needed, "the guidance rules read no ncu metric: the derivation above is broken"
    return needed


GUIDANCE_NEEDED = _guidance_needed()


@pytest.mark.parametrize("cc", list(ARCHITECTURES))
def test_every_set_has_the_roofline_and_guidance_metrics(cc: str) -> None:
    names = metric_set(cc)
    assert len(names) == len(set(names))
    for needed in ("gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "dram__bytes.sum",
                   "lts__t_bytes.sum", "l1tex__t_bytes.sum", "sm__inst_executed_pipe_tensor.sum",
                   "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                   "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
                   "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
                   "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", *GUIDANCE_NEEDED):
        assert needed in names, (cc, needed)


def test_tensor_operation_counters_only_from_ampere_on() -> None:
    assert not [m for m in metric_set("7.0") if m.startswith("sm__ops_path_tensor")]
    assert not [m for m in metric_set("7.5") if m.startswith("sm__ops_path_tensor")]
    for cc in ("8.0", "8.6", "8.9", "9.0", "10.0", "12.0"):
        names = metric_set(cc)
        for src in ("fp16_dst_fp32", "bf16_dst_fp32", "tf32_dst_fp32"):
            assert f"sm__ops_path_tensor_src_{src}.sum" in names


def test_hopper_has_warpgroup_mma_paths_and_others_do_not() -> None:
    hgmma = [m for m in metric_set("9.0") if "_op_hgmma_" in m]
    assert "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum" in hgmma
    assert "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum" in hgmma
    assert "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum" in hgmma
    for cc in ("8.0", "8.6", "8.9", "10.0"):
        assert not [m for m in metric_set(cc) if "gmma" in m]


def test_our_fp64_tensor_path_only_on_datacenter_chips() -> None:
    # (the formula table may still request it elsewhere: see required_metrics)
    have = {cc for cc, a in ARCHITECTURES.items() if "sm__ops_path_tensor_src_fp64.sum" in a.tensor}
    assert have == {"8.0", "9.0", "10.0"}


def test_compute_capability_spellings() -> None:
    assert normalize_cc("sm_90") == "9.0"
    assert normalize_cc("86") == "8.6"
    assert normalize_cc(7) == "7.0"
    assert normalize_cc((12, 0)) == "12.0"
    assert architecture("8.7").compute_capability == "8.6"  # Orin: nearest lower minor
    with pytest.raises(InputError):
        architecture("6.0")
    with pytest.raises(InputError):
        normalize_cc("volta")


def test_required_metrics_of_the_formula_table_are_collected() -> None:
    from roofline import counting

    covered = 0
    for cc in ARCHITECTURES:
        try:
            required = counting.required_metrics(cc)
        except InputError:  # an architecture the formula table does not cover yet
            continue
        covered += 1
        missing = [m for m in required if m not in metric_set(cc)]
        assert not missing, (cc, missing)
    assert covered >= 7


@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs Nsight Compute's ncu (no GPU needed)")
@pytest.mark.parametrize("cc", list(ARCHITECTURES))
def test_ncu_knows_every_metric_for_the_chip(cc: str) -> None:
    chip = ARCHITECTURES[cc].chip
    out = subprocess.run(["ncu", "--query-metrics", "--chip", chip, "--query-metrics-mode", "suffix",
                          "--csv"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    listing = out.stdout
    for name in metric_set(cc):
        base = name.split(".")[0]
        assert base in listing, f"{chip} lacks {base}"
    assert metricsets.UNVERIFIED  # keep the list honest: shrink it when this test has run

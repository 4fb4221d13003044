"""Metric sets per architecture: contents, and (where ncu is installed) availability per chip."""

from __future__ import annotations

import csv
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from needs import needs_ncu

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


#: What the instruction roofline, the operations and the shared level read (roofline.counting.instructions),
#: and their ceilings' peaks (roofline.readers.ncu.peaks): one run collects them with the FLOP roofline's.
BEYOND_FLOPS = (
    "sm__sass_thread_inst_executed_op_integer_pred_on.sum", "sm__sass_thread_inst_executed_op_conversion_pred_on.sum",
    "smsp__thread_inst_executed_pipe_xu_pred_on.sum", "smsp__inst_executed.sum",
    *(f"smsp__sass_inst_executed_op_{s}_{o}.sum" for s in ("global", "local", "shared") for o in ("ld", "st")),
    *(f"l1tex__t_sectors_pipe_lsu_mem_{s}_op_{o}.sum" for s in ("global", "local") for o in ("ld", "st")),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum", "lts__t_sectors.sum", "dram__sectors_read.sum",
    "dram__sectors_write.sum", "sm__inst_executed.sum.peak_sustained",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_integer_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_conversion_pred_on.sum.peak_sustained",
    "sm__thread_inst_executed_pipe_xu_pred_on.sum.peak_sustained", "device__attribute_multiprocessor_count",
)


@pytest.mark.parametrize("cc", list(ARCHITECTURES))
def test_every_set_has_what_the_work_beyond_flops_needs(cc: str) -> None:
    names = metric_set(cc)
    missing = [m for m in BEYOND_FLOPS if m not in names]
    assert not missing, (cc, missing)
    int_tensor = {m for m in names if m.startswith("sm__ops_path_tensor_src_int") and m.endswith(".sum")}
    expected = {"7.0": set(), "7.5": {"int8", "int4"}, "8.0": {"int8", "int4"}, "8.6": {"int8", "int4"},
                "8.9": {"int8", "int4"}}.get(cc, {"int8"})  # gh100 (and the Blackwell sets' Hopper names): no int4
    assert int_tensor == {f"sm__ops_path_tensor_src_{t}.sum" for t in expected}


#: The memory instruction classes beyond LD/ST the instruction roofline pairs with their traffic
#: (roofline.counting.instructions), each with the first SM that has it (the PTX ISA's target notes).
MEMORY_CLASSES = {
    "smsp__sass_inst_executed_op_ldsm.sum": "7.5",
    "smsp__sass_inst_executed_op_ldgsts.sum": "8.0",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum": "8.0",
    "smsp__sass_inst_executed_op_shared_stsm.sum": "9.0",
    "smsp__sass_inst_executed_op_tma.sum": "9.0",
    "smsp__sass_inst_executed_op_shared_gmma.sum": "9.0",
    "smsp__sass_inst_executed_op_global_atom.sum": "7.0", "smsp__sass_inst_executed_op_global_red.sum": "7.0",
    "smsp__sass_inst_executed_op_shared_atom.sum": "7.0",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum": "7.0", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum": "7.0",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum": "7.0",
}


@pytest.mark.parametrize("cc", ["7.0", "7.5", "8.0", "8.6", "8.9", "9.0"])
def test_the_instruction_roofline_collects_every_memory_instruction_class_the_sm_has(cc: str) -> None:
    """cp.async, ldmatrix, stmatrix, TMA, wgmma, atomics and reductions with their traffic, where the SM has
    them, and never a class it lacks (ncu would refuse the name; test_ncu_knows_every_metric_for_the_chip)."""
    names = set(metric_set(cc))
    for name, since in MEMORY_CLASSES.items():
        assert (name in names) == (float(cc) >= float(since)), (cc, name)


def test_tensor_operation_counters_only_from_turing_on() -> None:
    assert not [m for m in metric_set("7.0") if m.startswith("sm__ops_path_tensor")]
    for cc in ("8.0", "8.6", "8.9"):
        names = metric_set(cc)
        for src in ("fp16_dst_fp32", "fp16_dst_fp16", "bf16_dst_fp32", "tf32_dst_fp32"):
            assert f"sm__ops_path_tensor_src_{src}.sum" in names


def test_hopper_fp16_total_and_dense_peaks() -> None:
    """gh100 has no sm__ops_path_tensor_src_fp16_dst_fp16/_dst_fp32 and no src_int4 (ncu 2024.1.1):
    its FP16 total is src_fp16; its dense ceilings are the HGMMA sparsity-off peaks."""
    names = metric_set("9.0")
    assert "sm__ops_path_tensor_src_fp16.sum" in names
    assert not [m for m in names if "fp16_dst" in m or "int4" in m or "int1" in m]
    assert "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained" in names
    for cc in ("8.0", "8.6", "8.9"):
        assert not [m for m in metric_set(cc) if "gmma" in m]


def test_fp64_and_fp8_tensor_paths_only_where_the_chip_has_them() -> None:
    have = {cc for cc in ARCHITECTURES if "sm__ops_path_tensor_src_fp64.sum" in metric_set(cc)}
    assert have == {"8.0", "9.0", "10.0", "11.0", "12.0"}  # Blackwell: asked, and the GPU's catalog decides
    fp8 = {cc for cc in ARCHITECTURES if "sm__ops_path_tensor_src_fp8.sum" in metric_set(cc)}
    assert fp8 == {"8.9", "9.0"}
    # Blackwell: the 8-bit datapath (FP8, FP6, FP4 inputs) and the FP4 one, with both accumulators
    blackwell = {cc for cc in ARCHITECTURES if {"sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum",
                 "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp16.sum", "sm__ops_path_tensor_src_fp4_dst_fp32.sum"}
                 <= set(metric_set(cc))}
    assert blackwell == {"10.0", "11.0", "12.0"}


def test_jetson_thor_is_a_tcgen05_blackwell_under_both_of_its_numbers() -> None:
    """Jetson Thor reports SM 11.0 from CUDA 13 on (10.1 before): both get a set, with the tcgen05 pipe
    and the tcgen05 kinds' dense peaks of SM 10.x; not the packed FP32 counters, which only SM 10.0 and
    10.3 are known to have; SM 12.x (no tcgen05) gets neither the pipe nor the tcgen05 peaks."""
    assert architecture("sm_110").compute_capability == "11.0"
    assert architecture("10.1").compute_capability == "10.0"
    thor = set(metric_set("11.0"))
    assert {"sm__inst_executed_pipe_tc.sum", "sm__ops_path_tensor_src_fp4_dst_fp32.sum",
            "sm__ops_path_tensor_op_utcomma_src_fp4_dst_fp32_sparsity_off.sum.peak_sustained"} <= thor
    assert not [m for m in thor if "ffma2" in m or "gmma" in m]
    assert "sm__inst_executed_pipe_tc.sum" not in metric_set("12.0")


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


def _ncu_names(chip: str, bases: list[str]) -> set[str]:
    """Every metric name (suffixes included) the real ncu knows for ``bases`` on ``chip``."""
    out = subprocess.run(["ncu", "--query-metrics", "--chip", chip, "--query-metrics-mode", "suffix",
                          "--metrics", ",".join(sorted(set(bases))), "--csv"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = list(csv.reader(out.stdout.splitlines()))
    assert rows and rows[0][0] == "Metric name", out.stdout[:500]
    return {r[0] for r in rows[1:] if r}


#: Launch and device attributes: ncu --query-metrics does not list them; they must be columns of a
#: real ncu export (the B200 raw page, ncu 2025.x, has them).
B200 = Path(__file__).parents[1] / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"


@needs_ncu
@pytest.mark.parametrize("cc", [cc for cc, a in ARCHITECTURES.items() if a.chip in metricsets.CHECKED_CHIPS])
def test_ncu_knows_every_metric_for_the_chip(cc: str) -> None:
    """Every name `roofline profile` requests on this chip exists there, exactly (suffix included)."""
    chip = ARCHITECTURES[cc].chip
    names = metric_set(cc)
    counters = [n for n in names if not n.startswith(("launch__", "device__"))]
    known = _ncu_names(chip, [n.split(".")[0] for n in counters])
    missing = [n for n in counters if n not in known]
    assert not missing, f"{chip} lacks {missing}"
    header = next(line for line in B200.read_text().splitlines() if line.startswith('"ID"'))
    columns = set(next(csv.reader([header])))
    attributes = [n for n in names if n.startswith(("launch__", "device__"))]
    assert attributes and all(n in columns for n in attributes), attributes


def _hinted(out) -> set[str]:
    """Every metric the warnings' "collect with: ncu --metrics A,B" hints and the missing-column hints name."""
    names = {n for w in out.warnings for hint in re.findall(r"ncu --metrics (\S+)", w) for n in hint.rstrip(";),").split(",")}
    return names | {n for hinted in out.missing_hints.values() for n in hinted}


@needs_ncu
@pytest.mark.parametrize("cc", [cc for cc, a in ARCHITECTURES.items() if a.chip in metricsets.CHECKED_CHIPS])
def test_every_counter_a_hint_names_exists_on_the_chip(cc: str) -> None:
    """A hint names only counters the launch's chip has: ncu refuses a name its chip does not list, and
    an FP4 or INT4 tensor counter on Hopper, FP8 on an A40 (SM 8.6) or any ops counter on a V100 sent
    the user a command that cannot run. Profiles that lack every counter, hold only tensor instruction
    counts, count FP16 tensor work alone, or ran tensor instructions no collected type counts."""
    from roofline import counting

    time = {"gpu__time_duration.sum": [1e3]}
    fp16 = {n: [0.0] for n in counting.tensor.hint_for(["fp16"], cc)}
    profiles = [time, time | {"sm__inst_executed_pipe_tensor.sum": [5.0]},
                time | {n: [10.0] for n in fp16}, time | fp16 | {"sm__inst_executed_pipe_tensor.sum": [5.0]}]
    names: set[str] = set()
    for profile in profiles:
        names |= _hinted(counting.count(pd.DataFrame(profile), pd.Series([cc], dtype="string")))
    assert len(names) > 30  # the scalar FLOP, byte, instruction and clock counters at least
    chip = ARCHITECTURES[cc].chip
    assert sorted(names - _ncu_names(chip, [n.split(".")[0] for n in names])) == [], chip


@needs_ncu
@pytest.mark.parametrize("cc", ["7.5", "8.0", "8.6"])
def test_the_tensor_kinds_are_every_kind_the_chip_has(cc: str) -> None:
    """An idle kind proves its side's work 0 only if the table's kinds are all the tensor pipe's kinds
    on the chip (sub-kinds such as ga100's op_hmma_type_hfma2 aside), and every form read exists."""
    from roofline.counting.tensor import TENSOR_KINDS

    chip = ARCHITECTURES[cc].chip
    counters = [k for side in TENSOR_KINDS[cc].values() for k in side]
    names = [n for k in counters for n in (*k.names, *k.idle)]
    known = _ncu_names(chip, [n.split(".")[0] for n in names])
    assert [n for n in names if n not in known] == []
    stem = "sm__inst_executed_pipe_tensor_op_"
    listed = {line.split(",")[0].strip('"').split(".")[0] for line in subprocess.run(
        ["ncu", "--query-metrics", "--chip", chip, "--csv"], capture_output=True, text=True, timeout=300).stdout.splitlines()}
    kinds = {n[len(stem):] for n in listed if n.startswith(stem)}
    ours = {k.name[len(stem):].split(".")[0] for k in counters}
    assert {k for k in kinds if not any(k.startswith(f"{o}_type_") for o in ours)} == ours, chip


@needs_ncu
def test_the_name_check_can_fail() -> None:
    """The old Hopper set asked for src_fp16_dst_fp16/_dst_fp32 and src_int4: the real ncu has none on gh100."""
    wrong = ["sm__ops_path_tensor_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_src_int4.sum"]
    known = _ncu_names("gh100", [n.split(".")[0] for n in wrong] + ["sm__ops_path_tensor_src_fp16"])
    assert not [n for n in wrong if n in known]
    assert "sm__ops_path_tensor_src_fp16.sum" in known
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in _ncu_names("ga100", ["sm__ops_path_tensor_src_fp16_dst_fp32"])


@needs_ncu
def test_no_chip_before_blackwell_has_packed_fp32_or_tc_pipe_counters() -> None:
    """Packed FP32 (FADD2, FMUL2, FFMA2) is counted as 0 on SM < 10 when not collected, and its counters
    and the tcgen05 pipe's are requested on SM 10.0 only: the real ncu lists them for no checked chip,
    where FFMA and the tensor pipe exist."""
    packed = [f"{u}__sass_thread_inst_executed_op_{op}_pred_on" for u in ("sm", "smsp") for op in ("fadd2", "fmul2", "ffma2")]
    for chip in metricsets.CHECKED_CHIPS:
        known = _ncu_names(chip, [*packed, "sm__sass_thread_inst_executed_op_ffma_pred_on", "sm__inst_executed_pipe_tc",
                                  "sm__inst_executed_pipe_tensor"])
        assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in known, chip
        assert "sm__inst_executed_pipe_tensor.sum" in known, chip
        assert not [n for n in known if "2_pred_on" in n or "pipe_tc." in n], chip  # nor a tcgen05 pipe


@needs_ncu
def test_the_catalog_check_reads_the_real_ncu() -> None:
    """`roofline profile` keeps what the GPU's catalog lists: read here from the real ncu for named chips
    (the per-chip "1" columns), exact to the suffix, attributes kept, Blackwell-only names dropped on gh100."""
    from roofline.profiling.ncu_runner import listed_metrics

    names = ["sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_fp16.sum.peak_sustained",
             "sm__ops_path_tensor_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
             "sm__ops_path_tensor_src_fp16.sum.made_up_suffix", "sm__inst_executed_pipe_tc.sum",
             "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum", "launch__grid_size", "device__attribute_display_name",
             "dram__bytes.sum"]
    assert listed_metrics("ncu", names, chips=("gh100",)) == {
        "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_fp16.sum.peak_sustained",
        "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", "launch__grid_size", "device__attribute_display_name",
        "dram__bytes.sum"}
    # both chips must list a name: ga100 has the destination split, gh100 the total
    assert listed_metrics("ncu", names, chips=("ga100", "gh100")) == {
        "launch__grid_size", "device__attribute_display_name", "dram__bytes.sum"}
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in (listed_metrics("ncu", names, chips=("ga100",)) or ())
    # a catalog that lists none of the counters asked for is no answer: the refusal loop decides
    assert listed_metrics("ncu", ["sm__made_up.sum", "launch__grid_size"], chips=("gh100",)) is None

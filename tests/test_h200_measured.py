"""Our H200 run of 2026-11-29 (issue 33, benchmarks/results/h200-2026-11-29): the machine file roofline ships for
it, the kernels recorded on it under ncu against that file, the --torch attribution of a real GPU run, the
sweeps of the fixed partitioned kernel, and the FP16 pipes' SASS. Truths are worked out from the raw files by
other means than the code under test (the CSV's NVTX cells by string, the SASS by line, the raw run's JSON).

Files: tests/data/ncu/h200_examples (PROVENANCE.md there) and the results folder's call1-call3.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api
from roofline.machine.model import Machine

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data" / "ncu" / "h200_examples"
RESULTS = ROOT / "benchmarks" / "results" / "h200-2026-11-29"
SHIPPED = ROOT / "src" / "roofline" / "data" / "machines" / "nvidia-h200.json"
COMMITTED = ROOT / "benchmarks" / "results" / "h200" / "machine.json"
RAW = RESULTS / "call3" / "machine" / "machine.json"
H100 = ROOT / "tests" / "data" / "ncu" / "h100_80gb_hbm3_examples"
SMS, CLOCK = 132, 1.98e9


def test_shipped_h200_file_is_the_whole_run_less_what_a_kernel_beat():
    assert SHIPPED.read_text() == COMMITTED.read_text()
    m, raw = Machine.load(SHIPPED), json.loads(RAW.read_text())
    assert m.source == "measured" and m.name == "NVIDIA H200"
    probe = json.loads((RESULTS / "call2" / "gemms" / "probe.json").read_text())["part"]
    one_wave = probe["l2 16 MiB: roofline bw_read_part (__ldcg, unroll 4, 8 blocks/SM)"]
    for kind in ("memory", "compute"):
        for key, value in raw[kind].items():
            if key in m.metadata["removed"]:
                assert key not in getattr(m, kind) and "removed 2026-11-29" in m.metadata["removed"][key]
            elif key == "l2":  # the probe's one-wave run of the same fixed kernel, at its clock, above the 4-wave one
                assert m.memory["l2"] == one_wave["bandwidth"] > value and m.clock_of("l2") == one_wave["clock_hz"]
                assert "probe" in m.metadata["ceiling_sources"]["l2"]
            else:
                assert getattr(m, kind)[key] == value  # as measured, to the bit
    assert sorted(m.metadata["removed"]) == ["tensor_bf16", "tensor_fp16", "tensor_tf32"]
    # the paired-FMA kernel with __half2 constants: 0.92 of 512 FLOP/clk/SM, 1.94x the FP32 kernel
    assert m.compute["fp16"] / (SMS * CLOCK) == pytest.approx(469.2, abs=0.5)
    assert m.compute["fp16"] / m.compute["fp32"] == pytest.approx(1.938, abs=2e-3)
    # L2: 4664 B/clk at 1965 MHz, above the 4049 the TF32 GEMM moved on the H100
    assert m.memory["l2"] / m.clock_of("l2") == pytest.approx(4664.2, abs=1)


@pytest.mark.parametrize("name", ["deepcam_torch.ncu.csv.gz", "tblock_torch.ncu.csv.gz", "saxpy_67108864.ncu.csv"])
def test_recorded_h200_kernels_are_within_the_shipped_ceilings(name):
    a = api.analyze(DATA / name)
    assert a.machine.name == "NVIDIA H200" and a.machine.sources["memory.dram"] == "measured"
    assert (a.frame["region"] != "inconsistent").all()
    assert (a.frame["compute_use"].dropna() <= 1.0).all() and (a.frame["bw_use"].dropna() <= 1.0).all()


@pytest.mark.parametrize("name", ["target_gemm_bf16", "target_gemm_tf32", "target_gemm_fp16", "target_gemm_fp32",
                                  "target_hfma2", "target_hfma"])
def test_h100_kernels_fit_under_the_h200_compute_ceilings(name):
    """The same GH100 SM at the same maximum clock: every kernel recorded on the H100 stays under the H200 file's
    compute ceilings, scaled to its clock (why the tensor TF32/FP16/BF16 figures were left out)."""
    a = api.analyze(H100 / f"{name}.ncu.csv", SHIPPED)
    assert (a.frame["compute_use"].dropna() <= 1.0).all(), a.frame["compute_use"].tolist()


def _nvtx_cells(path: Path) -> tuple[list[str], list[str]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    header = rows[0]
    thread = header.index(next(c for c in header if c.startswith("thread Domain:Push/Pop_Range")))
    start_end = header.index(next(c for c in header if "Start/Stop_Range" in c))
    return [r[thread] for r in rows[2:]], [r[start_end] for r in rows[2:]]


def test_torch_run_phases_ignore_the_dispatch_mode_range():
    """roofline profile --torch on the H200: its counter-free recorder's TorchDispatchMode shows under emit_nvtx as
    'PythonDispatchMode, op_id = N' ranges, outermost on many launches. By the cells: backward is the process-wide
    start/end range (autograd's thread pushes no phase), forward and optimizer the pushed ranges."""
    path = DATA / "deepcam_torch.ncu.csv.gz"
    stacks, start_end = _nvtx_cells(path)
    truth = ["backward" if ":backward:" in se else "forward" if '<default domain>:forward:' in st else
             "optimizer" if '<default domain>:optimizer:' in st else None for st, se in zip(stacks, start_end)]
    assert sum("PythonDispatchMode" in s for s in stacks) == 199  # on every launch
    frame = api.read(path).frame.sort_values("launch_id")
    got = [None if pd.isna(p) else p for p in frame["phase"]]
    assert got == truth
    assert {p: truth.count(p) for p in ("forward", "backward", "optimizer", None)} == {
        "forward": 52, "backward": 79, "optimizer": 65, None: 3}


@pytest.mark.parametrize(("name", "module_share", "launches"), [("deepcam_torch.ncu.csv.gz", 0.9844, 199),
                                                                  ("tblock_torch.ncu.csv.gz", 0.9780, 229)])
def test_torch_run_attributes_forward_and_backward_time_to_modules(name, module_share, launches):
    """Issue 33's target (>= 95 % of GPU time to an operator and a module), met over forward and backward;
    optimizer launches belong to no module (one foreach kernel updates many modules' parameters)."""
    stacks, _ = _nvtx_cells(DATA / name)
    f = api.read(DATA / name).frame
    assert len(f) == launches == len(stacks)
    # a module by the cells: a roofline.module range on the launching thread's stack
    assert int(f["module"].notna().sum()) == sum("roofline.module:" in s for s in stacks)
    assert float(f.loc[f["op"].notna(), "time_s"].sum() / f["time_s"].sum()) == 1.0
    fb = f[f["phase"].isin(["forward", "backward"])]
    assert float(fb.loc[fb["module"].notna(), "time_s"].sum() / fb["time_s"].sum()) == pytest.approx(module_share,
                                                                                                     abs=1e-4)
    assert f.loc[f["phase"] == "optimizer", "module"].isna().all()


def test_fixed_partitioned_kernel_names_l2_and_dram_from_the_sweep():
    """The sweeps of call 3 (4 waves, each pass turned a quarter of the threads on): no point past twice the 60 MB
    L2 reads above the 4.8 TB/s datasheet (call 1, before the turn: 9.1 TB/s at 268 MB), and the ceilings named
    from them are the file's."""
    from roofline.bench.gpu.measure import _memory_ceilings

    sweeps = pd.read_csv(DATA / "machine_sweeps.csv")
    part = sweeps[(sweeps["sweep"] == "read") & (sweeps["mapping"] == "partitioned")]
    assert (part.loc[part["size_bytes"] > 2 * 62914560, "bandwidth"] < 4.8e12).all()
    memory, _, _ = _memory_ceilings({k: g.drop(columns="sweep") for k, g in sweeps.groupby("sweep")},
                                    {"l1": 256 * 1024, "l2": 62914560})
    raw = json.loads(RAW.read_text())["memory"]
    for level in ("l2", "dram"):
        assert memory[level] == pytest.approx(raw[level], rel=1e-12)


def test_fp16_pipes_sass_of_the_recorded_cubins():
    """probe_fp16_pipes: CuPy's cached cubin is one byte short of its ELF size (padded back), and its SASS counts
    by line: roofline's kernel with float constants, every HFMA2 on the FMA pipe; with __half2 ones, 68 of 136 on
    the tensor pipe, and 1.86x the rate."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import probe_fp16_pipes as probe

    text = (RESULTS / "call3" / "fp16" / "sass_fp16_pipes.txt").read_text()
    blocks = dict(re.findall(r"==== (fp16 form \S+) \(.*?\)\n(.*?)(?=\n==== |\Z)", text, re.S))
    for form, mma in (("fp16 form fma_fp16_c8_u16_float", 1), ("fp16 form fma_fp16_c8_u16_paired", 69)):
        lines = blocks[form].splitlines()
        assert sum(bool(re.search(r"\bHFMA2\.MMA\b", ln)) for ln in lines) == mma
        counts = probe.sass_counts(blocks[form])
        assert counts["HFMA2.MMA (all forms)"] == mma and counts["HFMA2 (all forms)"] == 136
    rates = json.loads((RESULTS / "call3" / "fp16" / "fp16_pipes.json").read_text())["kernels"]
    ratio = (rates["fp16 form fma_fp16_c8_u16_paired"]["flops_per_clk_per_sm"]
             / rates["fp16 form fma_fp16_c8_u16_float"]["flops_per_clk_per_sm"])
    assert ratio == pytest.approx(1.862, abs=1e-3)
    cubin = (RESULTS / "call3" / "fp16" / "cubins" / "fma_fp16_c8_u16_paired_1.cubin").read_bytes()
    import struct

    ph_off, sh_off = struct.unpack_from("<QQ", cubin, 0x20)
    assert len(cubin) == ph_off + 56 * struct.unpack_from("<H", cubin, 0x38)[0]  # padded to its declared end

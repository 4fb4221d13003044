"""Real Nsight Compute 2025.3.1 outputs recorded on an NVIDIA H100 80GB HBM3 (SM 9.0), read through the
public readers and held to the analytic work of the programs that made them (PROVENANCE.md beside
the files gives each file's command).

Every truth is computed here by hand from the program's known work (the arithmetic is in the
comments), never from the tool's own output; the CSV cells are read with plain ``csv``/``gzip`` code
to check that the package reads what the file says.
"""

from __future__ import annotations

import csv
import gzip
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline.readers import read_profile

DATA = Path(__file__).parent / "data" / "ncu" / "h100_80gb_hbm3_examples"

#: ncu's printed units -> SI factor (written out here, not taken from the package).
UNIT = {"": 1.0, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "inst": 1.0,
        "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

#: gemm M = N = K = 4096 (benchmarks/gpu_targets.py gemm --m 4096 --n 4096 --k 4096):
#: 2MNK = 2 x 4096^3 = 2 x 68,719,476,736 = 137,438,953,472 FLOPs.
M = N = K = 4096
GEMM_FLOPS = 2 * M * N * K
assert GEMM_FLOPS == 137_438_953_472

#: The six tensor types Hopper's catalog has (ncu asks for these six, and only these, on SM 9.0).
OPS = "sm__ops_path_tensor_src_"
OPS_TYPES = {"fp16": f"{OPS}fp16.sum", "bf16": f"{OPS}bf16_dst_fp32.sum", "tf32": f"{OPS}tf32_dst_fp32.sum",
             "fp64": f"{OPS}fp64.sum", "fp8": f"{OPS}fp8.sum", "int8": f"{OPS}int8.sum"}
#: Hopper's per-instruction-kind counters of each GEMM type: warpgroup (HGMMA) and warp (HMMA) MMAs.
KINDS = {"tf32": ("hgmma_src_tf32_dst_fp32", "hmma_src_tf32_dst_fp32"),
         "fp16": ("hgmma_src_fp16", "hmma_src_fp16"),
         "bf16": ("hgmma_src_bf16_dst_fp32", "hmma_src_bf16_dst_fp32")}


def _open(path: Path):
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else path.open(newline="")


def raw_page(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    """A ``--page raw`` export: header, units row, data rows."""
    with _open(path) as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1], rows[2:]


def raw_cells(path: Path, metric: str) -> list[float]:
    """The column ``metric`` of a raw page, in SI units (its printed value x its printed unit)."""
    header, units, rows = raw_page(path)
    i = header.index(metric)
    return [float(r[i]) * UNIT[units[i]] for r in rows]


def details_cells(path: Path, metric: str) -> dict[int, float]:
    """``metric`` per launch ID of a ``--page details`` export (a unit per row)."""
    with _open(path) as fh:
        rows = list(csv.reader(fh))
    h = rows[0]
    i_id, i_name, i_unit, i_value = (h.index(c) for c in ("ID", "Metric Name", "Metric Unit", "Metric Value"))
    return {int(r[i_id]): float(r[i_value].replace(",", "")) * UNIT[r[i_unit]] for r in rows[1:] if r[i_name] == metric}


def only(path: Path, **kw):
    """The one launch of a target's file (each target's measured work is one kernel in NVTX ``target``)."""
    t = read_profile(path, **kw)
    assert len(t.frame) == 1, t.frame
    return t, t.frame.iloc[0]


# -- saxpy target -------------------------------------------------------------------------------------


def test_target_saxpy_dram_bytes_are_12n():
    """benchmarks/gpu_targets.py saxpy --n 2^28: y.add_(x, alpha=2) reads x and y and writes y, 4 B
    each: 12 N = 12 x 268,435,456 = 3,221,225,472 B; one FMA per element: 2N = 536,870,912 FLOPs."""
    n = 2**28
    path = DATA / "target_saxpy.ncu.csv"
    t, row = only(path)
    (cell,) = raw_cells(path, "dram__bytes.sum")
    assert cell == pytest.approx(3_201_285_000, rel=1e-15)  # printed as 3.201285 Gbyte
    assert row["dram_bytes"] == pytest.approx(cell, rel=1e-12)
    assert row["dram_bytes"] / (12 * n) == pytest.approx(1, rel=0.02)  # 0.99381: 0.6 % short
    # reads are all there (8N = 2,147,483,648; printed 2.147501 Gbyte), writes 1.9 % short of 4N:
    # y's last lines still dirty in the 50 MB L2 when the kernel ends
    (read,) = raw_cells(path, "dram__bytes_read.sum")
    (write,) = raw_cells(path, "dram__bytes_write.sum")
    assert read / (8 * n) == pytest.approx(1, abs=1e-4) and 0.97 < write / (4 * n) < 1
    assert row["fp32_flops"] == 2 * n and row["tensor_flops"] == 0
    assert not row["flops_partial"] and t.warnings == ()


# -- GEMMs --------------------------------------------------------------------------------------------


def test_target_gemm_fp32_runs_2mnk_on_cuda_cores_and_no_tensor_flops():
    """cuBLAS's FFMA SGEMM (sm80_xmma_gemm_f32f32..._ffma): 2MNK FP32 FLOPs within 1 % (the file:
    MNK + MN FFMAs, one more per output element, presumably the alpha/beta epilogue: 1.000244 x 2MNK),
    and no tensor work: all six tensor types of SM 9.0 were collected and count 0. The tensor pipe
    ran 4,096 warp instructions all the same, as many as the kernel's HFMAs (131,072 thread
    instructions: one per thread of its 512 blocks of 256); they are no MMA, and the launch must read
    0 tensor FLOPs with its FLOPs complete (it read unknown, and its FLOPs a lower bound, before)."""
    path = DATA / "target_gemm_fp32.ncu.csv"
    t, row = only(path)
    (ffma,) = raw_cells(path, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum")
    assert ffma == M * N * K + M * N == 68_736_253_952
    assert row["fp32_flops"] == 2 * ffma  # fadd and fmul cells are 0
    assert row["fp32_flops"] / GEMM_FLOPS == pytest.approx(1, rel=0.01)  # 1.000244
    assert [raw_cells(path, c)[0] for c in OPS_TYPES.values()] == [0.0] * 6
    assert raw_cells(path, "sm__inst_executed_pipe_tensor.sum") == [4096.0]
    assert raw_cells(path, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum") == [131_072.0]
    assert row["tensor_flops"] == 0.0 and row["tensor_int_ops"] == 0.0
    assert pd.isna(row["tensor_precision"])
    assert not row["flops_partial"] and not row["ops_partial"]
    assert not [w for w in t.warnings if "tensor" in w], t.warnings


TENSOR_GEMMS = [("target_gemm_tf32.ncu.csv", "tf32"), ("target_gemm_fp16.ncu.csv", "fp16"),
                ("target_gemm_bf16.ncu.csv", "bf16"), ("target_gemm_bf16.ncu-rep", "bf16")]


def _rep_cells(path: Path, names: list[str]) -> dict[str, float]:
    """Metric values a .ncu-rep stores for its one launch, through NVIDIA's ncu_report module."""
    ncu_report = pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    action = ncu_report.load_report(str(path)).range_by_idx(0).action_by_idx(0)
    return {n: float(action.metric_by_name(n).as_double()) for n in names}


@pytest.mark.parametrize("name, precision", TENSOR_GEMMS, ids=[n for n, _ in TENSOR_GEMMS])
def test_tensor_gemm_is_exactly_2mnk_in_its_precision(name, precision):
    """torch a @ b, 4096^3, on the tensor cores (cuBLAS nvjet/sm90 HGMMA kernels): the tensor FLOPs are
    2MNK exactly, in the GEMM's type; the per-type total and Hopper's per-kind counters (HGMMA +
    HMMA) in the file each say 2MNK too, so the package must count one of them, not both (4MNK)."""
    path = DATA / name
    if path.suffix == ".ncu-rep":
        pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    t, row = only(path)
    assert row["tensor_flops"] == GEMM_FLOPS
    assert row["tensor_precision"] == precision
    assert row["tensor_int_ops"] == 0 and not row["flops_partial"]
    kinds = [f"sm__ops_path_tensor_op_{k}.sum" for k in KINDS[precision]]
    names = [*OPS_TYPES.values(), *kinds]
    cells = (_rep_cells(path, names) if path.suffix == ".ncu-rep"
             else {c: raw_cells(path, c)[0] for c in names})
    assert sum(cells[k] for k in kinds) == GEMM_FLOPS  # HGMMA 2MNK, HMMA 0
    assert cells[OPS_TYPES[precision]] == GEMM_FLOPS
    assert sum(cells[OPS_TYPES[p]] for p in OPS_TYPES if p != precision) == 0
    assert t.warnings == ()


@pytest.mark.parametrize("precision", ["tf32", "fp16", "bf16"])
def test_hopper_per_kind_counters_alone_count_2mnk(tmp_path, precision):
    """The same export without the per-type total (``sm__ops_path_tensor_src_<type>``, all its
    .avg/.min/.max/.sum): the tensor FLOPs come from the HGMMA + HMMA kind counters, still 2MNK."""
    header, units, rows = raw_page(DATA / f"target_gemm_{precision}.ncu.csv")
    total = OPS_TYPES[precision].removesuffix(".sum")
    keep = [i for i, h in enumerate(header) if not (h == total or h.startswith(total + "."))]
    assert len(keep) == len(header) - 4
    out = tmp_path / f"gemm_{precision}_kinds_only.ncu.csv"
    with out.open("w", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
            [[r[i] for i in keep] for r in (header, units, *rows)])
    t, row = only(out)
    assert row["tensor_flops"] == GEMM_FLOPS and row["tensor_precision"] == precision
    assert t.warnings == ()


def test_bf16_gemm_report_and_its_export_are_one_launch():
    pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    f = read_profile([DATA / "target_gemm_bf16.ncu-rep", DATA / "target_gemm_bf16.ncu.csv"]).frame
    assert len(f) == 1 and f["tensor_flops"].tolist() == [GEMM_FLOPS]
    # gpu__time_duration.sum: 177.408 us, printed with all its digits (ns resolution)
    assert f["time_s"].tolist() == [pytest.approx(raw_cells(DATA / "target_gemm_bf16.ncu.csv",
                                                            "gpu__time_duration.sum")[0], rel=1e-12)]


# -- FP16 FMA chains: the two FP16 conventions ---------------------------------------------------------

#: gpu_targets.py hfma2/hfma --threads 1048576 --iters 256: 2^20 threads x 2^8 iterations
#: = 2^28 = 268,435,456 FMA thread instructions each.
HFMA_INST = 2**20 * 2**8
#: __hfma2: 2 lanes x (mul + add) = 4 FLOPs -> 2^30; scalar __hfma: mul + add = 2 FLOPs -> 2^29.
HFMA2_FLOPS, HFMA_FLOPS = 4 * HFMA_INST, 2 * HFMA_INST
assert (HFMA_INST, HFMA2_FLOPS, HFMA_FLOPS) == (268_435_456, 1_073_741_824, 536_870_912)


@pytest.mark.parametrize("name", ["target_hfma2.ncu.csv", "target_hfma2.ncu-rep", "target_hfma.ncu.csv"])
def test_hfma_chains_show_2_28_hfma_thread_instructions(name):
    """Both kernels show the same 2^28 hfma thread instructions: ncu does not tell HFMA2 from HFMA."""
    path = DATA / name
    if path.suffix == ".ncu-rep":
        cell = _rep_cells(path, ["sm__sass_thread_inst_executed_op_hfma_pred_on.sum"])
        assert list(cell.values()) == [HFMA_INST]
    else:
        assert raw_cells(path, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum") == [HFMA_INST]


@pytest.mark.parametrize("name", ["target_hfma2.ncu.csv", "target_hfma2.ncu-rep"])
def test_hfma2_reads_2_30_flops_under_the_default_ncu_convention(name):
    """``fp16="ncu"`` (the default, ``--fp16 ncu``): 4 FLOPs per hfma instruction, exact for HFMA2;
    ``fp16="paper"`` reads half of it. No tensor work: half the HFMA2s (2^22 of 2^23 warp
    instructions) ran on the tensor pipe, but all six tensor types count 0 (0 tensor FLOPs, not unknown)."""
    path = DATA / name
    if path.suffix == ".ncu-rep":
        pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    t, row = only(path)
    assert t.fp16_convention == "ncu"
    assert row["fp16_flops"] == HFMA2_FLOPS and row["fp32_flops"] == 0 and row["flops"] == HFMA2_FLOPS
    assert row["tensor_flops"] == 0.0 and not row["flops_partial"]
    assert t.warnings == ()
    _, paper = only(path, fp16="paper")
    assert paper["fp16_flops"] == HFMA2_FLOPS // 2


def test_scalar_hfma_reads_twice_its_work_by_default_and_exactly_under_the_paper_convention():
    """The scalar __hfma kernel does 2^29 FLOPs; its 2^28 hfma instructions read 2^30 under ``ncu``
    (2x) and 2^29 under ``paper`` (exact)."""
    path = DATA / "target_hfma.ncu.csv"
    t, row = only(path)
    assert row["fp16_flops"] == 2 * HFMA_FLOPS == HFMA2_FLOPS
    assert raw_cells(path, "sm__inst_executed_pipe_tensor.sum") == [0.0]  # scalar HFMAs: not on the tensor pipe
    t, row = only(path, fp16="paper")
    assert t.fp16_convention == "paper"
    assert row["fp16_flops"] == HFMA_FLOPS and row["tensor_flops"] == 0.0


def test_hfma2_report_and_its_export_are_one_launch():
    pytest.importorskip("ncu_report", reason="the ncu-report wheel reads .ncu-rep in Python")
    f = read_profile([DATA / "target_hfma2.ncu-rep", DATA / "target_hfma2.ncu.csv"]).frame
    assert len(f) == 1 and f["fp16_flops"].tolist() == [HFMA2_FLOPS] and f["phase"].tolist() == ["target"]


# -- examples/saxpy.py, raw page and details page --------------------------------------------------------

SAXPY_RAW = DATA / "example_saxpy.ncu.csv"
SAXPY_DETAILS = DATA / "example_saxpy.details.csv"


@pytest.mark.parametrize("files", [[SAXPY_RAW], [SAXPY_DETAILS], [SAXPY_RAW, SAXPY_DETAILS],
                                   [SAXPY_DETAILS, SAXPY_RAW]], ids=["raw", "details", "raw+details", "details+raw"])
def test_example_saxpy_launches_once_each_and_dram_per_saxpy_is_12n(files):
    """examples/saxpy.py --backend torch --n 2^26 --repeat 3: torch.ones (x) and torch.full (y) fill
    kernels, then 3 y.add_(x, alpha) launches (no warm-up). 5 launches from either page or both (one
    run, nothing counted twice). Per add: 12 N = 12 x 67,108,864 = 805,306,368 B, of which the reads
    8N = 536,870,912 B are all there; the file shows 2.5 % less in all (785.4-785.6 MB): about 20 MB
    of y's writes are still dirty in the 50 MB L2 when each launch ends (as for the fills: 4N = 268 MB
    written, 246 MB counted)."""
    n = 2**26
    t = read_profile(files)
    f = t.frame.sort_values("launch_id")
    assert len(f) == 5 and f["run"].nunique(dropna=False) == 1
    assert f["launch_id"].tolist() == [0, 1, 2, 3, 4]
    names = f["kernel_name"].tolist()
    assert ["FillFunctor" in k for k in names] == [True, True, False, False, False]
    assert all("CUDAFunctor_add<float>" in k for k in names[2:])
    add = f.iloc[2:]
    assert add["fp32_flops"].tolist() == [2 * n] * 3  # 2N = 134,217,728 (N FFMAs)
    assert (f.iloc[:2]["fp32_flops"] == 0).all()
    # the bytes are the cells of the page with the most digits given (raw: 6 decimals of Mbyte)
    printed = (raw_cells(SAXPY_RAW, "dram__bytes.sum") if SAXPY_RAW in files
               else list(details_cells(SAXPY_DETAILS, "dram__bytes.sum").values()))
    np.testing.assert_allclose(f["dram_bytes"], printed, rtol=1e-12)
    ratio = add["dram_bytes"].to_numpy() / (12 * n)
    assert ((0.97 < ratio) & (ratio < 1.0)).all(), ratio  # 0.9753-0.9756
    reads = raw_cells(SAXPY_RAW, "dram__bytes_read.sum")
    np.testing.assert_allclose(np.array(reads[2:]) / (8 * n), 1, atol=1e-4)  # 536.885-536.886 MB
    fills = f.iloc[:2]["dram_bytes"].to_numpy() / (4 * n)
    assert ((0.9 < fills) & (fills < 1.0)).all(), fills  # 0.917
    assert t.warnings == ()


# -- examples/deepcam_mini.py: one training step with NVTX phases ------------------------------------------

DEEPCAM_RAW = DATA / "example_deepcam.ncu.csv.gz"
DEEPCAM_DETAILS = DATA / "example_deepcam.details.csv.gz"
PHASES = ("forward", "backward", "optimizer")
#: counted from the export's two NVTX columns (the test below recounts them): 199 launches.
DEEPCAM_LAUNCHES = {"forward": 47, "backward": 76, "optimizer": 65, None: 11}


def _phase_of(push_pop: str, start_end: str) -> str | None:
    """The phase an export's NVTX cells name: forward and optimizer are push/pop ranges of the main
    thread (``TID  "<default domain>:forward:none:..."  "...:roofline.module:..."``), backward a
    start/end range (`` "0:<default domain>:backward:none:..."``), since autograd runs it on another thread."""
    found = set(re.findall(r'"<default domain>:(forward|backward|optimizer):', push_pop))
    found |= set(re.findall(r'"\d+:<default domain>:(forward|backward|optimizer):', start_end))
    assert len(found) <= 1, (push_pop, start_end)
    return found.pop() if found else None


def deepcam_launches(path: Path) -> dict[int, tuple[str | None, float]]:
    """Per launch ID: its phase and its gpu__time_duration.sum (s), from either page, plain csv."""
    with _open(path) as fh:
        rows = list(csv.reader(fh))
    h = rows[0]
    pp = next(i for i, c in enumerate(h) if "Push/Pop_Range" in c)
    se = next(i for i, c in enumerate(h) if "Start/Stop_Range" in c)
    if "Metric Name" in h:  # details page: a row per metric
        times = details_cells(path, "gpu__time_duration.sum")
        phases = {int(r[0]): _phase_of(r[pp], r[se]) for r in rows[1:]}
        return {i: (phases[i], times[i]) for i in phases}
    units, data = rows[1], rows[2:]
    t = h.index("gpu__time_duration.sum")
    return {int(r[0]): (_phase_of(r[pp], r[se]), float(r[t]) * UNIT[units[t]]) for r in data}


@pytest.mark.parametrize("files", [[DEEPCAM_RAW], [DEEPCAM_DETAILS], [DEEPCAM_RAW, DEEPCAM_DETAILS]],
                         ids=["raw", "details", "raw+details"])
def test_deepcam_launches_and_time_per_phase_are_the_exports(files):
    """199 launches; per phase the launch count and the time are those of the export's own cells
    (the raw page's where it is given: its six decimals win over the details page's two)."""
    truth = deepcam_launches(files[0])
    assert len(truth) == 199
    assert Counter(p for p, _ in truth.values()) == DEEPCAM_LAUNCHES
    if len(files) == 2:  # the two pages are one run: the same launches in the same phases
        other = deepcam_launches(files[1])
        assert {i: p for i, (p, _) in other.items()} == {i: p for i, (p, _) in truth.items()}
        np.testing.assert_allclose([other[i][1] for i in truth], [truth[i][1] for i in truth], atol=5e-9)

    t = read_profile(files)
    f = t.frame
    assert len(f) == 199 and f["run"].nunique(dropna=False) == 1
    got = dict(zip(f["launch_id"].astype(int), f["phase"].astype(object).where(f["phase"].notna(), None)))
    assert got == {i: p for i, (p, _) in truth.items()}
    for phase in (*PHASES, None):
        mine = [s for p, s in truth.values() if p == phase]
        rows = f[f["phase"].eq(phase).fillna(False)] if phase else f[f["phase"].isna()]
        assert len(rows) == DEEPCAM_LAUNCHES[phase]
        assert rows["time_s"].sum() == pytest.approx(sum(mine), rel=1e-9)
    assert t.warnings == ()


def test_deepcam_tensor_work_is_the_sum_of_its_tensor_cells():
    """Per launch, tensor FLOPs = the five floating-point tensor types' cells and integer tensor
    operations = the INT8 cell. 73 of the 199 launches (FP32 elementwise, reduction, FFMA
    convolution kernels) ran instructions on the tensor pipe with every type's count 0: 0 tensor
    FLOPs, not unknown (they read NaN, and their FLOPs a lower bound, before)."""
    t = read_profile(DEEPCAM_RAW)
    f = t.frame.set_index(t.frame["launch_id"].astype(int)).sort_index()
    floats = sum(np.array(raw_cells(DEEPCAM_RAW, OPS_TYPES[p])) for p in ("fp16", "bf16", "tf32", "fp64", "fp8"))
    np.testing.assert_array_equal(f["tensor_flops"].to_numpy(), floats)
    np.testing.assert_array_equal(f["tensor_int_ops"].to_numpy(), raw_cells(DEEPCAM_RAW, OPS_TYPES["int8"]))
    pipe = np.array(raw_cells(DEEPCAM_RAW, "sm__inst_executed_pipe_tensor.sum"))
    assert int(((pipe > 0) & (floats == 0)).sum()) == 73
    assert not f["flops_partial"].any()

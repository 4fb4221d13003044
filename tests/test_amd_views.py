"""Every view speaks AMD where the profile is AMD (issue 36, item 4): vL1D, LDS, L2 and HBM (HBM+MALL (EA)
on MI300), 'Matrix FP16', the engine clock, no NVIDIA-only diagnosis; and NVIDIA's output as it was.

The AMD kernels are real dispatches of ROCm/omniperf's test workloads (tests/data/amd/*/PROVENANCE.md),
their figures taken by hand from the files' cells and the programs' known work:

* mixbench on an MI210 (gfx90a), dispatch 2, ``benchmark_func<float, 256, 8u, 0u>``: grid 4,194,304
  threads; SQ_INSTS_VALU_FMA_F32 = 262,144 wave instructions, so 64 x 2 x 262,144 = 33,554,432 FLOP
  (= mixbench's 2 x threads x (4 + 8 x 0 compute iterations)); End - Start = 14234011757320 -
  14234011664520 = 92,800 ns; every thread reads 8 floats: 4,194,304 x 32 B = 134,217,728 B through the
  vL1D and the L2 (TCP_TCC_READ_REQ_sum 2,097,152 x 64 B lines), and TCC_EA_RDREQ_sum 2,097,346 reads of
  64 B (TCC_EA_RDREQ_32B_sum = 0) = 134,230,144 B from HBM; no writes, no LDS.
* vcopy on an MI300X (gfx942): ``c[id] = a[id]`` over 1,048,576 doubles, 8,388,608 B read and as many
  written (TCP_TCC_READ_REQ_sum 65,536 x 128 B, TCP_TCC_WRITE_REQ_sum 131,072 x 64 B); no FLOPs; its
  timestamps (8.1097E+14) round every duration to 0, so its time is unknown.

The MI210 machine: sysinfo.csv's 104 CUs at 1700 MHz and HBM 1638.4 GB/s; per CU and clock 128 FP32 FLOP
(64 lanes x FMA) and 1024 FP16 MFMA FLOP (AMD CDNA2 white paper; 104 x 1.7 GHz x 128 = 22.6 TFLOP/s and
x 1024 = 181 TFLOP/s, the MI210 data sheet's vector FP32 and matrix FP16 peaks); vL1D 64 B per CU and clock
(11.3 TB/s), L2 128 B per channel and clock over sysinfo's 32 L2 channels (6.96 TB/s).
"""

from __future__ import annotations

import io
import json
import pickle
import re

import pandas as pd
import pytest
from rich.console import Console

from roofline.analysis import analyze
from roofline.guidance import advise, diagnose
from roofline.guidance.vendor_rules import VENDOR_NEUTRAL
from roofline.kernels import from_records
from roofline.kernels.vendor import (
    machine_vendor,
    table_arch,
    table_vendor,
    vendor_of,
    words_for,
)
from roofline.machine.model import Machine
from roofline.views.chart.interactive import roofline_plotly
from roofline.views.chart.static import roofline_figure
from roofline.views.json_out import analysis_to_dict
from roofline.views.notebook import analysis_html
from roofline.views.report.html import report_html
from roofline.views.terminal import kernel_table_renderable, summary_renderable

MIXBENCH = "void benchmark_func<float, 256, 8u, 0u>(float, float*) [clone .kd]"
MIX_FLOPS = 64 * 2 * 262_144            # 33,554,432
MIX_TIME = (14234011757320 - 14234011664520) * 1e-9   # 92.8 µs
MIX_L2 = 4_194_304 * 8 * 4              # 134,217,728 B
MIX_HBM = 2_097_346 * 64                # 134,230,144 B
MI210_CLOCK = 1700e6
MI210_FP32 = 104 * MI210_CLOCK * 128    # 22.6 TFLOP/s
MI210_MFMA_FP16 = 104 * MI210_CLOCK * 1024  # 181 TFLOP/s
MI210_HBM = 1638.4e9

VCOPY = "vecCopy(double*, double*, double*, int, int) (.kd)"
VCOPY_BYTES = 2 * 1_048_576 * 8         # 16,777,216 B: read and written once


def mixbench(cc: str = "gfx90a") -> pd.DataFrame:
    return from_records([{"kernel_name": MIXBENCH, "compute_capability": cc, "time_s": MIX_TIME, "launches": 1,
                          "fp32_flops": float(MIX_FLOPS), "fp64_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0,
                          "l1_bytes": float(MIX_L2), "shared_bytes": 0.0, "l2_bytes": float(MIX_L2),
                          "dram_bytes": float(MIX_HBM)}])


def vcopy() -> pd.DataFrame:
    return from_records([{"kernel_name": VCOPY, "compute_capability": "gfx942", "launches": 1, "fp32_flops": 0.0,
                          "fp64_flops": 0.0, "fp16_flops": 0.0, "tensor_flops": 0.0,
                          "l1_bytes": float(VCOPY_BYTES), "l2_bytes": float(VCOPY_BYTES),
                          "dram_bytes": float(VCOPY_BYTES)}])


def mi210() -> Machine:
    return Machine("MI210", "theoretical", memory={"dram": MI210_HBM, "l2": 6.9632e12, "l1": 11.3152e12},
                   compute={"fp32": MI210_FP32, "tensor_fp16": MI210_MFMA_FP16}, sm_clock_hz=MI210_CLOCK)


@pytest.fixture(scope="module")
def amd():
    return analyze(mixbench(), mi210())


@pytest.fixture(scope="module")
def nvidia():
    return analyze(mixbench("8.0"), mi210())


def text_of(renderable, width: int = 220) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def figure_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text")) if t.get_text()]


# -- the vendor module ----------------------------------------------------------------------------

def test_vendor_of_reads_gfx_targets_and_compute_capabilities():
    assert [vendor_of(a) for a in ("gfx90a", "gfx942", "gfx950", "gfx908", "gfx942:sramecc+:xnack-")] == ["amd"] * 5
    assert [vendor_of(a) for a in ("9.0", "7.0", "10.3", "sm_90")] == ["nvidia"] * 4
    assert [vendor_of(a) for a in (None, "", "Hopper", "gfx")] == [None] * 4


def test_table_vendor_is_the_one_vendor_or_none():
    assert (table_vendor(mixbench()), table_arch(mixbench())) == ("amd", "gfx90a")
    mixed = pd.concat([mixbench(), mixbench("9.0")], ignore_index=True)
    assert table_vendor(mixed) is None and table_arch(mixed) is None
    both_amd = pd.concat([mixbench(), vcopy()], ignore_index=True)
    assert (table_vendor(both_amd), table_arch(both_amd)) == ("amd", None)
    encoded = mixbench().assign(compute_capability=pd.Categorical(["gfx942"]))
    assert (table_vendor(encoded), table_arch(encoded)) == ("amd", "gfx942")
    assert table_vendor(mixbench().drop(columns="compute_capability")) is None
    assert table_vendor(mixbench().assign(compute_capability=pd.NA)) is None


def test_the_words_say_what_each_level_is():
    assert dict(words_for("amd", "gfx90a").levels) == {"l1": "vL1D", "shared": "LDS", "l2": "L2", "l3": "L3",
                                                       "dram": "HBM"}
    assert [words_for("amd", a).level("dram") for a in ("gfx908", "gfx940", "gfx942", "gfx950")] == [
        "HBM", "HBM+MALL (EA)", "HBM+MALL (EA)", "HBM+MALL (EA)"]
    nv, am = words_for("nvidia"), words_for("amd", "gfx942")
    assert (nv.compute_unit, nv.thread_group, nv.thread_group_size) == ("SM", "warp", 32)
    assert (am.compute_unit, am.thread_group, am.thread_group_size) == ("CU", "wavefront", 64)
    assert (nv.compute("tensor_fp16"), am.compute("tensor_fp16"), am.compute("tensor_tf32")) == (
        "Tensor FP16", "Matrix FP16", "Matrix XF32")
    assert words_for(None) is nv  # an unknown vendor reads as every table did before AMD


def test_machine_vendor_from_metadata_or_product_name():
    assert machine_vendor("MI300X") == ("amd", "gfx942")
    assert machine_vendor("AMD Instinct MI210") == ("amd", "gfx90a")
    assert machine_vendor("x", {"gpu_arch": "gfx950"}) == ("amd", "gfx950")
    assert machine_vendor("H100-SXM", {"architecture": "Hopper GH100"}) == ("nvidia", None)
    assert machine_vendor("device0") == (None, None)


# -- the analysis carries it -------------------------------------------------------------------------

def test_analysis_carries_the_vendor_through_pickle(amd, nvidia):
    assert (amd.vendor, amd.arch, nvidia.vendor, nvidia.arch) == ("amd", "gfx90a", "nvidia", "8.0")
    again = pickle.loads(pickle.dumps(amd))
    assert (again.vendor, again.arch, again.words.level("dram")) == ("amd", "gfx90a", "HBM")
    assert analyze(mixbench().assign(compute_capability=pd.NA), mi210()).vendor is None


def test_analysis_notes_name_the_engine_clock_and_hbm():
    a = analyze(mixbench().assign(sm_clock_hz=MI210_CLOCK), mi210())
    assert any("time-weighted mean engine clock 1.7 GHz (HBM bandwidth not scaled)" in n for n in a.notes)
    n = analyze(mixbench("8.0").assign(sm_clock_hz=MI210_CLOCK), mi210())
    assert any("time-weighted mean SM clock 1.7 GHz (DRAM bandwidth not scaled)" in x for x in n.notes)


# -- terminal -----------------------------------------------------------------------------------

def test_terminal_table_in_amd_words(amd, nvidia):
    text = text_of(kernel_table_renderable(amd))
    # the HBM intensity by hand: 33,554,432 FLOP / 134,230,144 B = 0.24998 FLOP/B; vL1D and L2: 0.25
    assert re.search(r"AI vL1D\s+┃\s+AI L2\s+┃\s+AI HBM\s+┃", text)
    row = next(line for line in text.splitlines() if "benchmark_func" in line)
    assert re.search(r"│\s+0\.25\s+│\s+0\.25\s+│\s+0\.25\s+│\s+HBM\s+│", row)
    assert "ceilings: MI210 at 1.7 GHz" in text
    assert "DRAM" not in text and "AI L1" not in text
    summary = text_of(summary_renderable(amd))
    assert "time by bound: HBM 100.0%" in summary
    nv = text_of(kernel_table_renderable(nvidia))
    assert re.search(r"AI L1\s+┃\s+AI L2\s+┃\s+AI DRAM\s+┃", nv) and "│ dram " in nv
    assert "vL1D" not in nv and "HBM" not in nv


def test_terminal_on_mi300_names_the_mall():
    text = text_of(kernel_table_renderable(analyze(vcopy())))
    assert re.search(r"AI vL1D\s+┃\s+AI L2\s+┃\s+AI HBM\+MALL \(EA\)", text)


# -- charts -------------------------------------------------------------------------------------

def test_static_chart_legend_and_ceilings_in_amd_words(amd, nvidia):
    fig = roofline_figure(amd)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["vL1D", "L2", "HBM"]
    texts = figure_texts(fig)
    assert "HBM 1.64 TB/s" in texts and "FP32 22.6 TFLOP/s" in texts
    assert not [t for t in texts if "DRAM" in t or "Tensor" in t]
    caption = next(t for t in texts if t.startswith("marker area"))
    assert "ceilings: MI210 at 1.7 GHz, all theoretical" in caption
    nv = roofline_figure(nvidia)
    assert [t.get_text() for t in nv.legends[0].get_texts()] == ["L1", "L2", "DRAM"]
    assert "DRAM 1.64 TB/s" in figure_texts(nv)


def test_static_chart_names_the_matrix_ceiling():
    all_ceilings = roofline_figure(analyze(mixbench(), mi210()), ceilings="all")
    assert "Matrix FP16 181 TFLOP/s" in figure_texts(all_ceilings)
    nv = roofline_figure(analyze(mixbench("8.0"), mi210()), ceilings="all")
    assert "Tensor FP16 181 TFLOP/s" in figure_texts(nv)


def test_level_labels_given_still_win(amd):
    fig = roofline_figure(amd, level_labels={"dram": "HBM2e"})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["vL1D", "L2", "HBM2e"]


def test_interactive_chart_in_amd_words(amd):
    fig = roofline_plotly(amd, ceilings="all")
    names = [t.name for t in fig.data]
    assert names[:3] == ["vL1D", "L2", "HBM"]
    assert "HBM 1.64 TB/s" in names and "Matrix FP16 181 TFLOP/s" in names
    assert "bound: HBM;" in fig.data[0].hovertext[0]


# -- the report, the notebook and the JSON ----------------------------------------------------------

def test_report_in_amd_words(amd):
    page = report_html(amd)
    for words in ("HBM bandwidth", "vL1D bandwidth", "Matrix FP16", "at 1.7 GHz engine clock", "AI HBM",
                  "no ROCTx ranges", "memory bandwidth (HBM)"):
        assert words in page, words
    for words in ("DRAM", "Tensor FP16", "SM clock", "ncu --metrics", "CUDA Graph", "warps", "sectors per request"):
        assert words not in page, words
    # the NVIDIA-only diagnoses named once, in one note, not per kernel
    assert page.count("diagnoses need Nsight Compute counters of NVIDIA GPUs and were not run") == 1
    assert page.count("Speed of Light") == 1 and page.count("Shared-memory bank conflicts") == 1


def test_notebook_in_amd_words(amd):
    page = analysis_html(amd)
    assert "<th>AI HBM</th>" in page and "<td>HBM</td>" in page and "DRAM" not in page


def test_json_says_the_vendor_and_nvidia_json_is_unchanged(amd, nvidia):
    out = analysis_to_dict(amd)
    assert out["vendor"] == {"name": "amd", "arch": "gfx90a", "compute_unit": "CU", "thread_group": "wavefront",
                             "thread_group_size": 64,
                             "level_names": {"l1": "vL1D", "shared": "LDS", "l2": "L2", "dram": "HBM"}}
    assert out["kernels"][0]["bound"] == "dram"  # the data keeps the model's keys
    json.dumps(out, allow_nan=False)
    assert "vendor" not in analysis_to_dict(nvidia)


# -- guidance -----------------------------------------------------------------------------------

def test_guidance_runs_only_the_rules_that_hold_on_amd(amd, nvidia):
    diag = diagnose(amd)
    kernel = diag.kernels[0]
    assert {f.rule for f in kernel.findings} == set(VENDOR_NEUTRAL)
    assert not [f for f in kernel.findings if f.status == "missing"]
    # bandwidth by hand: 134,230,144 B / 92.8 µs = 1.446 TB/s, 88% of 1.6384 TB/s: HBM-bound
    bw = kernel.finding("bandwidth")
    assert bw.status == "fired" and "HBM runs at 88% of its ceiling" in bw.message
    assert kernel.limiter_label == "memory bandwidth (HBM)"
    assert kernel.finding("tensor-cores").title == "Matrix cores (MFMA)"
    assert len(diag.warnings) == 1 and "Speed of Light" in diag.warnings[0]
    advice = advise(amd, diagnoses=diag)
    assert "LDS (tiling)" in advice["helps"][0]
    nv = diagnose(nvidia)
    assert len(nv.kernels[0].findings) > len(VENDOR_NEUTRAL)
    assert nv.kernels[0].limiter_label == "memory bandwidth (DRAM)"
    assert not [w for w in nv.warnings if "AMD" in w]


# -- across vendors -------------------------------------------------------------------------------

def test_projection_from_amd_onto_nvidia_names_each_side_in_its_words():
    from roofline.machine.theoretical import theoretical
    from roofline.projection import project
    from roofline.views.projection import projection_html, projection_table, projection_to_dict

    proj = project(mixbench(), theoretical("a100-80gb-sxm"), mi210())
    assert (proj.source_analysis.vendor, proj.target_analysis.vendor) == ("amd", "nvidia")
    page = projection_html(proj)
    assert "HBM / DRAM bandwidth" in page and "engine clock / SM clock" in page
    assert "HBM → dram" in text_of(projection_table(proj))
    vendors = projection_to_dict(proj)["vendors"]
    assert vendors["source"]["level_names"]["dram"] == "HBM" and vendors["target"] is None
    back = project(mixbench("8.0"), mi210(), theoretical("a100-80gb-sxm"))
    assert back.target_analysis.vendor == "amd" and back.target_analysis.arch == "gfx90a"
    assert "DRAM / HBM bandwidth" in projection_html(back)


# -- real workloads through the reader ------------------------------------------------------------

def test_real_mi300x_workload_names_the_mall():
    """omniperf_vcopy_mi300x_gfx942 through roofline.api.analyze: its EA traffic is labelled for what it is."""
    from pathlib import Path

    from roofline import api

    a = api.analyze(Path(__file__).parent / "data" / "amd" / "omniperf_vcopy_mi300x_gfx942")
    assert (a.vendor, a.arch) == ("amd", "gfx942")
    text = text_of(kernel_table_renderable(a))
    assert "AI HBM+MALL (EA)" in text and "DRAM" not in text
    assert re.search(r"vecCopy\s+│\s+3\s+│.*│\s+HBM\+MALL \(EA\)\s+│", text)
    out = analysis_to_dict(a)
    assert out["vendor"]["arch"] == "gfx942" and out["vendor"]["level_names"]["dram"] == "HBM+MALL (EA)"
    # vcopy's known work, three launches: 3 x (8,388,608 B read + 8,388,608 B written) through the EA at least
    assert out["kernels"][0]["bytes"]["dram"] >= 3 * VCOPY_BYTES
    assert not [n for n in a.notes if re.search(r"\b(l1|l2|DRAM|SM clock)\b", n)]


def test_real_mi210_workload_chart_in_amd_words():
    """mixbench on an MI210 through roofline.api.analyze, with its workload's measured ceilings: the chart,
    its notes and the summary in AMD's words."""
    from pathlib import Path

    from roofline import api

    a = api.analyze(Path(__file__).parent / "data" / "amd" / "omniperf_mixbench_mi200_gfx90a")
    assert (a.vendor, a.arch) == ("amd", "gfx90a")
    fig = roofline_figure(a)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:3] == ["vL1D", "L2", "HBM"]
    texts = figure_texts(fig)
    assert any(t.startswith("HBM ") and t.endswith("TB/s") for t in texts)
    assert any(t.startswith("Matrix ") for t in texts) and not any("Tensor" in t or "DRAM" in t for t in texts)
    assert not any("--work instructions" in t for t in texts)  # no instruction roofline on AMD
    summary = text_of(summary_renderable(a))
    assert "HBM" in summary and "DRAM" not in summary and "SHARED" not in summary and "Tensor" not in summary


def test_mi300_ea_traffic_above_hbm_bandwidth_is_explained_by_the_mall() -> None:
    """The stencil on an MI300A (real, tests/data/amd) with its times halved and halved again: its EA
    traffic then outruns HBM, which MALL hits can do on MI300; the reason says so, not 'counters off'."""
    import dataclasses
    from pathlib import Path

    from roofline import api

    table = api.read(Path(__file__).resolve().parent / "data" / "amd" / "omniperf_stencil_mi300a_gfx942")
    frame = table.frame.copy()
    frame["time_s"] = frame["time_s"] / 4
    faster = dataclasses.replace(table, frame=frame)
    result = api.analyze(faster, by="launch")
    hbm = result.machine.memory["dram"]
    fast = (frame["dram_bytes"] / frame["time_s"]) > 1.05 * hbm
    assert fast.sum() >= 2  # by hand: 5.1 GB in 1.48 ms / 4 is 13.8 TB/s against 5.32 TB/s
    reasons = result.frame.set_index("launch_id").loc[frame.loc[fast, "launch_id"], "inconsistent"].astype(str)
    assert all("HBM+MALL (EA) traffic" in r and "Infinity Cache (MALL) hits" in r for r in reasons)

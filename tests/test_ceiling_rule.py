"""Which ceilings a profile is held to with no --machine (roofline.machine.resolve), the clock they are scaled
to, and the shipped H100 machine file: truths worked out by hand from the real files' own cells.

Files: tests/data/ncu/h100_80gb_hbm3_examples (our H100 80GB HBM3 run, PROVENANCE.md there) and
tests/data/ncu/h200_setfull_sglang_moe_fa3 (a public H200 --set full export, PROVENANCE.md there).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

from roofline import api
from roofline.cli.app import main
from roofline.machine.model import Machine
from roofline.machine.theoretical import theoretical

DATA = Path(__file__).parent / "data" / "ncu"
H100 = DATA / "h100_80gb_hbm3_examples"
DEEPCAM = H100 / "example_deepcam.ncu.csv.gz"
H200 = DATA / "h200_setfull_sglang_moe_fa3" / "short_decode.raw.csv.gz"
SHIPPED = Path(__file__).parents[1] / "src" / "roofline" / "data" / "machines" / "nvidia-h100-80gb-hbm3.json"
COMMITTED = Path(__file__).parents[1] / "benchmarks" / "results" / "h100" / "machine.json"
RAW_RUN = Path(__file__).parents[1] / "benchmarks" / "results" / "h100-80gb-hbm3-2026-11-27" / "machine" / "machine.json"
SMS = 132
MAX_CLOCK = 1.98e9  # device__attribute_max_gpu_frequency_khz = 1,980,000 in both files


def _raw_page(path: Path) -> tuple[list[str], list[list[str]]]:
    """A raw-page export's header and rows (the units row dropped), read with the csv module alone."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    return rows[0], rows[2:]


def _column(header: list[str], rows: list[list[str]], name: str) -> np.ndarray:
    i = header.index(name)
    return np.array([float(r[i].replace(",", "")) for r in rows])


def _capped_mean_clock(path: Path, clock_metric: str) -> float:
    """The time-weighted mean of the launches' clocks, each taken as at most the device's maximum."""
    header, rows = _raw_page(path)
    t = _column(header, rows, "gpu__time_duration.sum")  # us: a common unit cancels
    clk = _column(header, rows, clock_metric) * 1e9  # GHz in the units row
    assert set(_column(header, rows, "device__attribute_max_gpu_frequency_khz")) == {MAX_CLOCK / 1e3}
    return float(np.sum(t * np.minimum(clk, MAX_CLOCK)) / np.sum(t))


def test_deepcam_h100_default_ceilings_are_what_the_hardware_delivers():
    """No --machine: the shipped measured H100 file (L1 from the fixed load kernel, 103.9 B/clk/SM), the
    H100 spec's L2 (5120 B/clk), never the profile's L1 tag-stage peak (512 B/clk/SM), at a clock capped
    at the 1.98 GHz maximum; the profile's peaks are kept beside."""
    clock = _capped_mean_clock(DEEPCAM, "sm__cycles_elapsed.avg.per_second")
    header, rows = _raw_page(DEEPCAM)
    raw_clock = _column(header, rows, "sm__cycles_elapsed.avg.per_second")
    t = _column(header, rows, "gpu__time_duration.sum")
    assert np.sum(t * raw_clock) / np.sum(t) * 1e9 > MAX_CLOCK  # 2.03 GHz: what the ceilings were scaled to before
    a = api.analyze(DEEPCAM)
    m = a.machine
    assert m.sm_clock_hz == pytest.approx(clock, rel=1e-9) and m.sm_clock_hz <= MAX_CLOCK
    # L1: the probe's 27,150,688,923,427 B/s at 1.98 GHz, scaled; at most 128 B/clk/SM
    assert m.memory["l1"] == pytest.approx(27150688923427.195 * clock / MAX_CLOCK, rel=1e-9)
    assert m.memory["l1"] <= 128 * SMS * clock
    assert m.source_of("l1") == "measured"
    # L2: the spec's 5120 B/clk (the measured 7.14 TB/s was removed: a recorded GEMM moved more)
    assert m.memory["l2"] == pytest.approx(5120 * clock, rel=1e-9) and m.source_of("l2") == "theoretical"
    # measured, not clock-scaled: the probe's 4-wave kernel (the whole run's one-wave 2.97 TB/s was below what
    # example_saxpy recorded on this GPU, 3.04 TB/s)
    probe = json.loads((RAW_RUN.parents[1] / "probe" / "probe.json").read_text())
    assert m.memory["dram"] == probe["part"]["hbm 2048 MiB: __ldcg, unroll 4, 32 blocks/SM (4 waves)"]["bandwidth"]
    # the profile's own peaks, at the same clock: L1 tag stage 512 B/clk/SM, beside, not used
    beside = a.peaks_beside
    assert beside.memory["l1"] == pytest.approx(512 * SMS * clock, rel=1e-9)
    assert any("read an SM clock above the device's maximum" in n and n.startswith("162 launches") for n in a.notes)
    assert any("ceilings chosen by roofline's rule" in n for n in a.notes)


def test_json_and_report_show_the_profiles_peaks_beside(tmp_path, capsys):
    out = tmp_path / "a.json"
    html = tmp_path / "a.html"
    assert main(["analyze", str(DEEPCAM), "--json", str(out), "--html", str(html), "-q"]) == 0
    d = json.loads(out.read_text())
    clock = d["machine"]["sm_clock_hz"]
    assert d["profile_peaks"]["sm_clock_hz"] == pytest.approx(clock)
    assert d["profile_peaks"]["memory"]["l1"] == pytest.approx(512 * SMS * clock, rel=1e-9)
    assert d["machine"]["sources"]["memory.l1"] == "measured"
    text = html.read_text()
    assert "profile&#x27;s peak metric" in text or "profile's peak metric" in text


def test_machine_profile_draws_the_tag_stage_peak_and_says_what_it_is(capsys):
    assert main(["analyze", str(DEEPCAM), "-m", "profile", "--json", "-", "-q"]) == 0
    d = json.loads(capsys.readouterr().out)
    clock = d["machine"]["sm_clock_hz"]
    assert clock <= MAX_CLOCK
    assert d["machine"]["memory"]["l1"] == pytest.approx(512 * SMS * clock, rel=1e-9)
    assert any("tag stage" in n and "512 B/clk/SM" in n for n in d["notes"])


def test_h200_clock_from_the_gpc_rate_stable_on_short_kernels():
    """The public H200 export: the SM rate reads 1.51-2.88 GHz on launches under 5 us, the GPC rate
    1.93-1.98; the kernel table takes the GPC rate, and the ceilings are scaled to its time-weighted mean."""
    header, rows = _raw_page(H200)
    sm = _column(header, rows, "sm__cycles_elapsed.avg.per_second") * 1e9
    gpc = _column(header, rows, "gpc__cycles_elapsed.avg.per_second") * 1e9
    t = _column(header, rows, "gpu__time_duration.sum")
    short = t < 5.0
    assert sm[short].max() == pytest.approx(2.883429e9) and sm[short].min() == pytest.approx(1.512910e9)
    assert 1.928e9 < gpc[short].min() and gpc[short].max() < MAX_CLOCK
    table = api.read(H200)
    assert np.sort(table.frame["sm_clock_hz"].to_numpy()) == pytest.approx(np.sort(gpc))
    a = api.analyze(table)
    assert a.machine.sm_clock_hz == pytest.approx(float(np.sum(t * gpc) / np.sum(t)), rel=1e-9)
    # our measured H200 file (tests/test_h200_measured.py) where it holds a ceiling, the spec elsewhere
    assert a.machine.name == "NVIDIA H200" and set(a.machine.sources.values()) == {"measured", "theoretical"}
    assert a.machine.sources["memory.dram"] == "measured" and a.machine.sources["compute.tensor_bf16"] == "theoretical"


def test_spec_figures_scale_from_the_clock_they_hold_at():
    """H100 SXM: 989.4 TFLOP/s dense FP16 tensor is 132 SMs x 4096 FLOP/clk at the 1830 MHz
    low-precision tensor clock, so at 1.9 GHz it is 132 x 4096 x 1.9e9, not 989.4 x 1.9 / 1.98."""
    spec = theoretical("h100-sxm")
    assert spec.compute["tensor_fp16"] == pytest.approx(989.4e12, rel=1e-3)
    assert spec.clock_of("tensor_fp16") == pytest.approx(1.83e9)
    at = spec.scaled_to_clock(1.9e9)
    assert at.compute["tensor_fp16"] == pytest.approx(SMS * 4096 * 1.9e9, rel=1e-9)
    assert at.compute["fp32"] == pytest.approx(SMS * 256 * 1.9e9, rel=1e-9)


def test_shipped_h100_file_marks_what_was_wrong():
    assert SHIPPED.read_text() == COMMITTED.read_text()  # one file, two places: a new run replaces both
    m = Machine.load(SHIPPED)
    raw = Machine.load(RAW_RUN)
    # L1 and INT8 replaced by the probe's fixed kernels, each saying so
    probe = json.loads((RAW_RUN.parents[1] / "probe" / "probe.json").read_text())
    assert m.memory["l1"] == probe["l1"]["int4, __ldca, 32-bit index, unroll 8"]["bandwidth"]
    assert m.compute["tensor_int8"] == probe["int8"]["B column-major"]["ops_per_s"]
    saxpy = api.read(H100 / "example_saxpy.ncu.csv").frame
    assert raw.memory["dram"] < float((saxpy["dram_bytes"] / saxpy["time_s"]).max()) < m.memory["dram"]
    assert raw.memory["l1"] == pytest.approx(16.59e12, rel=1e-3) and raw.compute["tensor_int8"] < 130e12
    sources = m.metadata["ceiling_sources"]
    assert "probe" in sources["l1"] and "known low" in sources["l1"] and "column-major" in sources["tensor_int8"]
    # known wrong and no replacement: removed, with the reason
    for key, kind in (("l2", "memory"), ("tensor_bf16", "compute"), ("tensor_tf32", "compute"), ("fp16", "compute"),
                      ("bf16", "compute")):
        assert key not in getattr(m, kind) and key in getattr(raw, kind)
        assert "removed" in m.metadata["removed"][key]
    # FP16 / BF16: the kernel ran at the FP32 rate (its HFMA2s all on the FMA pipe), 0.54 of what the same SM did on
    # the H200 with the fixed kernel (benchmarks/results/h200-2026-11-29/call3)
    assert raw.compute["fp16"] / raw.compute["fp32"] == pytest.approx(1.044, abs=1e-3)
    assert "H200" in m.metadata["removed"]["fp16"] and "1.84x" in m.metadata["removed"]["fp16"]
    # FP16 tensor measured while the clock sat at 1485 MHz: recorded at that clock
    assert m.clock_of("tensor_fp16") == 1.485e9 and m.clock_of("fp32") == 1.98e9
    assert m.scaled_to_clock(1.98e9).compute["tensor_fp16"] == pytest.approx(raw.compute["tensor_fp16"] * 1.98 / 1.485)


def test_recorded_h100_kernels_are_within_the_default_ceilings():
    """Every kernel recorded on the H100 runs at or below the ceilings chosen for it (5 % slack): the
    shipped file holds nothing a real kernel beat."""
    for name in ("target_gemm_bf16", "target_gemm_tf32", "target_gemm_fp16", "target_gemm_fp32", "target_saxpy",
                 "target_hfma2", "target_hfma"):
        a = api.analyze(H100 / f"{name}.ncu.csv")
        assert (a.frame["region"] != "inconsistent").all(), (name, a.frame["inconsistent"].tolist())
        assert (a.frame["compute_use"].dropna() <= 1.05).all() and (a.frame["bw_use"].dropna() <= 1.05).all()


def test_raw_run_file_is_flagged_where_a_recorded_kernel_beat_it():
    """The whole run's own file, as measured: the recorded TF32 GEMM ran 1.14x its TF32 tensor ceiling
    and moved 1.12x its L2 ceiling (per clock): inconsistent, with the measured ceiling named as the
    likely cause, and no diagnosis."""
    a = api.analyze(H100 / "target_gemm_tf32.ncu.csv", RAW_RUN)
    (row,) = [r for r in a.frame.itertuples() if r.time_share > 0.5]
    assert row.region == "inconsistent"
    assert "Tensor TF32 ceiling" in row.inconsistent and "measured ceiling" in row.inconsistent
    assert "L2 traffic is 1.1" in row.inconsistent
    assert row.compute_use == pytest.approx(395.22e12 / (397e12 * 1.663107 / 1.905), rel=2e-3)


def test_default_rule_never_takes_the_tag_stage_peak_for_l1():
    """A GPU with no spec and no measured file (the DeepCAM profile's cells, under a name we do not know):
    the default ceilings (the profile's own peaks, as delivered) take no L1 from the profile's only L1 peak, l1tex__t_bytes.sum.peak_sustained (the tag stage,
    512 B/clk/SM, four times what loads deliver), and say so. (A second, shorter L1_TAG_STAGE name in
    readers/ncu/peaks.py once rebound the first, and the tag stage was taken.)"""
    import dataclasses

    table = api.read(DEEPCAM)
    metrics = table.metrics.copy()
    metrics["device__attribute_display_name"] = "NVIDIA Unknown GPU"
    table = dataclasses.replace(table, metrics=metrics)
    a = api.analyze(table)
    assert a.peaks_beside.memory["l1"] == pytest.approx(512 * SMS * a.peaks_beside.sm_clock_hz, rel=1e-9)
    assert "l1" not in a.machine.memory
    assert any("no L1 ceiling" in n and "tag-stage" in n for n in a.notes)

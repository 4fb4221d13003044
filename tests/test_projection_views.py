"""Views of a projection: the terminal tables, the charts, the HTML page and the JSON.

Two data sets. The bundled DeepCAM V100 example (api.example_files) projected onto the H100 SXM and the
T4 specs: every kernel is DRAM-bound on both sides, so each is projected at today's time x the ratio of
the DRAM bandwidths, 828.758 GB/s here over 3349.76 GB/s (H100: 4.0419x faster) or 320 GB/s (T4:
0.38612x). And a synthetic table on the toy machines of tests/projection_data.py (SRC at 1 GHz: L1 8,
L2 4, DRAM 1 TB/s, FP32 2 TFLOP/s; TGT: L1 16, L2 8, DRAM 2 TB/s, FP32 8 TFLOP/s), with a C++ name
full of '<' and a kernel that cannot be projected:

- ``void stream<float>(float const*, float*)``, forward, 2 ms, 1 GFLOP FP32, 1 GB at each level:
  here DRAM 1 ms (50% of its roofline); there best 0.5 ms, projected 1 ms, range 0.5..1.5 ms
  (1 + (2 - 1) = 1.5), speed-up 2x (range 2/1.5 = 1.33 .. 2/0.5 = 4), gain 1 ms;
- ``gemm``, forward, 1 ms, 1 GFLOP FP32, 0.1 GB at each level: here FP32 0.5 ms; there best
  0.125 ms, projected 0.25 ms, range 0.125..0.625 ms, speed-up 4x (1.6 .. 8), gain 0.75 ms;
- ``half``, backward, 1 ms, 1 GFLOP non-tensor FP16, 1 MB DRAM: SRC has no FP16 ceiling, so its
  roofline here is unknown: not projected.

Program: 3 ms -> 1.25 ms (2.4x), range 0.625..2.125 ms (3/2.125 = 1.41x .. 3/0.625 = 4.8x);
2 of 3 kernels, 3 ms of 4 ms = 75.0% of the time projected.
"""

from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pytest

from projection_data import kernel, machine, src, table, tgt
from roofline import api
from roofline.comparison import compare
from roofline.errors import InputError
from roofline.projection import NOTE_CODES, TOTAL_KEYS, project
from roofline.units import format_time
from roofline.views.chart.compare import comparison_figure, comparison_plotly
from roofline.views.projection.table import coverage_text, speedup_range_text, speedup_text, time_range_text
from roofline.views.projection import (
    phase_table,
    projection_figure,
    projection_html,
    projection_plotly,
    projection_table,
    projection_title,
    projection_to_dict,
)

approx = pytest.approx
STREAM_NAME = "void stream<float>(float const*, float*)"
STREAM = dict(fp32=1e9, l1_bytes=1e9, l2_bytes=1e9, dram_bytes=1e9)
GEMM = dict(fp32=1e9, l1_bytes=1e8, l2_bytes=1e8, dram_bytes=1e8)
#: Bandwidth ratios of the DeepCAM example, there over here (all its kernels are DRAM-bound on both sides).
H100_SPEEDUP = 3349.76e9 / 828.758e9   # 4.0419
T4_SPEEDUP = 320e9 / 828.758e9         # 0.38612


def synthetic(target_name: str = "tgt-toy"):
    t = table(kernel(STREAM_NAME, 2e-3, phase="forward", **STREAM), kernel("gemm", 1e-3, phase="forward", **GEMM),
              kernel("half", 1e-3, fp16=1e9, dram_bytes=1e6, phase="backward"))
    return project(t, tgt(name=target_name), src(), by="phase")


@pytest.fixture(scope="module")
def deepcam():
    files, mfile = api.example_files()
    profile = api.read(files)
    source = api.load_machine(mfile)
    return {name: project(profile, api.load_machine(name), source, by="phase") for name in ("h100-sxm", "t4")}


def cells(t) -> list[list[str]]:
    """The table's body as text, one list per column."""
    return [[str(c) for c in col._cells] for col in t.columns]


def rows(t) -> list[list[str]]:
    return [list(r) for r in zip(*cells(t))]


# -- formatting --------------------------------------------------------------------------------------
def test_speedup_and_range_texts():
    assert speedup_text(4.0419) == "4.04x" and speedup_text(0.38612) == "0.386x" and speedup_text(130.48) == "130x"
    assert speedup_text(float("nan")) == "-"
    assert speedup_range_text(3 / 2.125, 4.8) == "1.41–4.8x"
    assert speedup_range_text(0.0, 4.8) == "0–4.8x"            # the time there may be unbounded
    assert speedup_range_text(1.6, math.inf) == "≥ 1.6x"       # the time there may fall to nothing
    assert time_range_text(0.625e-3, 2.2e-3) == "625 µs–2.2 ms"
    assert time_range_text(0.2e-3, math.inf) == "200 µs–unbounded"


# -- terminal table -------------------------------------------------------------------------------------
def test_table_ranks_by_gain_with_totals_footer_and_unprojected_last():
    p = synthetic()
    t = projection_table(p)
    body = rows(t)
    # gain: stream 1 ms, gemm 0.75 ms; then half (not projected)
    assert [r[0] for r in body] == ["[forward] stream", "[forward] gemm", "[backward] half"]
    assert body[0][1:8] == ["2 ms", "500 µs", "1 ms", "500 µs–1.5 ms", "2x", "1.33–4x", "dram → dram"]
    assert body[1][1:8] == ["1 ms", "125 µs", "250 µs", "125 µs–625 µs", "4x", "1.6–8x", "fp32 → fp32"]
    assert body[2][1:7] == ["1 ms", "-", "-", "-", "-", "-"]
    assert body[2][8] == ("not projected: its roofline here is unknown (a ceiling it uses is missing on the source "
                          "machine)")
    footer = [col.footer for col in t.columns]
    assert footer[:7] == ["program", "3 ms", "625 µs", "1.25 ms", "625 µs–2.12 ms", "2.4x", "1.41–4.8x"]
    assert footer[8] == "no kernel gets slower there"
    assert t.caption == "2 of 3 kernels, 75.0% of the time projected"
    # by today's time the gemm still follows the stream (2 ms, 1 ms); top=1 keeps one projected row and
    # says what it left out: the gemm, 1 ms here, 250 µs there (4x)
    body = rows(projection_table(p, sort="time", top=1))
    assert [r[0] for r in body] == ["[forward] stream", "… 1 more gets faster there", "[backward] half"]
    assert body[1][1:7] == ["1 ms", "", "250 µs", "", "4x", ""]
    assert projection_table(p, top=1).caption.endswith("; top 1 by gain shown")
    with pytest.raises(InputError):
        projection_table(p, sort="savable")


def test_table_caps_the_unprojected_kernels_at_top():
    blank = dict(fp64=None, fp32=None, fp16=None, tensor=None)   # no FLOP or byte counts: not projected
    p = project(table(kernel("gemm", 1e-3, **GEMM), kernel("a", 3e-3, **blank), kernel("b", 2e-3, **blank),
                      kernel("c", 1e-4, **blank)), tgt(), src())
    body = rows(projection_table(p, top=2))
    assert [r[0] for r in body] == ["gemm", "a", "b", "… 1 more not projected"]   # a, b: the longest
    assert body[1][8] == "not projected: no FLOP or byte counts"
    assert projection_table(p, top=2).caption == "1 of 4 kernels, 16.4% of the time projected"  # 1 of 6.1 ms


def test_table_on_deepcam_orders_by_gain_and_footer_is_the_totals(deepcam):
    h100, t4 = deepcam["h100-sxm"], deepcam["t4"]
    # H100: gain = time x (1 - 1/4.04) > 0, the longest kernel gains most
    body = rows(projection_table(h100))
    assert [r[1] for r in body] == ["2.08 ms", "921 µs", "867 µs", "15.4 µs", "15.2 µs"]
    assert all(r[5] == "4.04x" for r in body)
    gains = h100.frame["gain_s"].to_numpy()
    assert np.all(np.diff(gains) <= 0) and gains == approx(h100.frame["time_s"].to_numpy() * (1 - 1 / H100_SPEEDUP))
    # T4: gain = time x (1 - 1/0.386) < 0: every kernel gets slower, in that section, the longest (which
    # loses most) first, under the section's row: 3.9 ms here, 10.1 ms there
    body = rows(projection_table(t4))
    assert [r[0] for r in body][0] == "get slower there (5)" and body[0][1:6] == ["3.9 ms", "", "10.1 ms", "", "0.386x"]
    assert [r[1] for r in body[1:]] == ["2.08 ms", "921 µs", "867 µs", "15.4 µs", "15.2 µs"]
    assert all(r[5] == "0.386x" for r in body)
    assert [col.footer for col in projection_table(t4).columns][8] == \
        "5 kernels, 100% of the time, get slower there: +6.2 ms"   # 3.9004 ms x (1 / 0.38612 - 1)
    for p, speedup in ((h100, H100_SPEEDUP), (t4, T4_SPEEDUP)):
        tot = p.totals
        assert tot["speedup"] == approx(speedup)
        footer = [col.footer for col in projection_table(p).columns]
        assert footer[1:7] == [format_time(tot["time_s"]), format_time(tot["best_time_s"]),
                               format_time(tot["projected_time_s"]),
                               time_range_text(tot["low_time_s"], tot["high_time_s"]), speedup_text(tot["speedup"]),
                               speedup_range_text(tot["speedup_low"], tot["speedup_high"])]
        assert footer[1] == "3.9 ms"
    assert [col.footer for col in projection_table(h100).columns][3] == "965 µs"   # 3.9004 ms / 4.0419
    assert [col.footer for col in projection_table(t4).columns][3] == "10.1 ms"    # 3.9004 ms / 0.38612
    assert coverage_text(h100) == "5 of 5 kernels, 100% of the time projected"


def test_phase_table():
    body = rows(phase_table(synthetic()))
    assert body[0] == ["forward", "3 ms", "1.25 ms", "625 µs–2.12 ms", "2.4x", "1.41–4.8x", "2 of 2, 100%", "none"]
    assert body[1] == ["backward", "-", "-", "-", "-", "-", "0 of 1, 0.0%", "none"]   # half: not projected
    by_name = project(table(kernel("gemm", 1e-3, **GEMM)), tgt(), src())
    assert phase_table(by_name) is None


# -- charts -----------------------------------------------------------------------------------------------
def _arrows(fig) -> int:
    return sum(1 for t in fig.axes[0].texts if getattr(t, "arrow_patch", None) is not None)


def test_chart_title_and_one_arrow_per_projected_kernel_and_level(deepcam):
    h100, t4 = deepcam["h100-sxm"], deepcam["t4"]
    assert projection_title(h100).startswith("V100-SXM2 (NERSC Cori GPU) → H100 SXM5 80GB: 3.9 ms → 965 µs "
                                             "projected (4.04x, range ")
    fig = projection_figure(h100)
    assert fig.axes[0].get_title() == projection_title(h100, sep="\n")
    # 4 kernels with FLOPs (the fill kernel does none: no place on a log-log chart) x L1, L2, DRAM
    assert _arrows(fig) == 4 * 3
    assert _arrows(projection_figure(t4)) == 4 * 1   # the T4 spec has no L1 or L2 ceiling: DRAM only
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["here: V100-SXM2 (NERSC Cori GPU)", "there: H100 SXM5 80GB"]
    assert legend[-2:] == ["here", "there"]
    renderer = fig.canvas.get_renderer()
    assert fig.axes[0].get_legend().get_window_extent(renderer).x1 <= fig.bbox.x1  # long names: two rows, inside
    pf = projection_plotly(h100)
    assert pf.layout.title.text == projection_title(h100)
    assert len([t for t in pf.data if t.mode == "lines+markers"]) == 4 * 3
    hover = " ".join(h for t in pf.data if t.hovertext is not None for h in t.hovertext)
    assert "<br>here (DRAM)" in hover and "<br>there (DRAM)" in hover


def test_chart_draws_unprojected_kernels_here_only():
    p = synthetic()
    fig = projection_figure(p)
    ax = fig.axes[0]
    assert ax.get_title() == ("src-toy → tgt-toy:\n3 ms → 1.25 ms projected (2.4x, range 1.41–4.8x), "
                              "75.0% of the time")
    assert _arrows(fig) == 2 * 3                      # stream and gemm, 3 levels; half has no time there
    points = {c.get_gid(): len(c.get_offsets()) for c in ax.collections if c.get_gid()}
    assert points["before:dram"] == 3 and points["after:dram"] == 2
    assert points["before:l1"] == 2                   # half has DRAM bytes only
    pf = projection_plotly(p)
    half = [t for t in pf.data if t.hovertext is not None and "half" in t.hovertext[0]]
    assert len(half) == 1 and half[0].mode == "markers" and list(half[0].marker.symbol) == ["circle-open"]


def test_compare_keeps_its_default_words():
    p = synthetic()
    comp = compare(p.source_analysis, p.target_analysis)
    fig = comparison_figure(comp)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["before: src-toy", "after: tgt-toy"] and legend[-2:] == ["before", "after"]
    assert fig.axes[0].get_title().startswith("Before → after: 4 ms → 1.25 ms")
    pf = comparison_plotly(comp)
    assert pf.layout.title.text.startswith("Before → after: ")
    assert {t.name for t in pf.data if t.mode == "lines+markers"} == {"L1 (before -> after)", "L2 (before -> after)",
                                                                     "DRAM (before -> after)"}
    hover = " ".join(h for t in pf.data if t.hovertext is not None for h in t.hovertext)
    assert "<br>before (DRAM)" in hover and "<br>after (DRAM)" in hover
    worded = comparison_plotly(comp, sides=("here", "there"))
    assert worded.layout.title.text.startswith("Here → there: ")


# -- HTML -------------------------------------------------------------------------------------------------
def test_html_escapes_names_and_inlines_plotly():
    p = synthetic(target_name="tgt <b>&")
    page = projection_html(p)
    assert "stream<float>" not in page and "tgt <b>&" not in page
    assert "void stream&lt;float&gt;(float const*, float*)" in page     # the full name, escaped
    assert "tgt &lt;b&gt;&amp;" in page
    assert not re.search(r"<script[^>]*\bsrc=", page)                    # nothing fetched
    assert "plotly.js v" in page and "id=\"projection-chart\"" in page    # the library inline, the chart's div
    assert "<title>Projection: src-toy → tgt &lt;b&gt;&amp;</title>" in page
    ranked = page.split("<section id='faster'>")[1].split("</section>")[0]
    assert ranked.count("<tr>") == 1 + 2                                 # header + the 2 projected kernels
    assert ranked.index("[forward] stream") < ranked.index("[forward] gemm")
    slower = page.split("<section id='slower'>")[1].split("</section>")[0]
    assert "<table" not in slower and "No kernel gets slower there." in slower
    assert ">2.4x (1.41–4.8x)<" in page and ">2 of 3 kernels, 75.0% of the time projected<" in page
    unprojected = page.split("<section id='unprojected'>")[1]
    assert "[backward] half" in unprojected and "its roofline here is unknown" in unprojected
    phases = page.split("<h3>Per phase</h3>")[1].split("</table>")[0]
    assert "forward" in phases and "backward" in phases and "0 of 1, 0.0%" in phases

    # a kernel the target has no ceiling for: not projected, its note (the memory roof there) listed with it
    nofp64 = tgt(name="nofp64", memory={"l1": 16e12, "l2": 8e12, "dram": 0.5e12}, fp32=8e12, tensor_fp16=16e12)
    other = projection_html(project(table(kernel("dgemm", 2e-3, fp64=1e9, dram_bytes=1e8),
                                          kernel("gemm", 1e-3, **GEMM)), nofp64, src()))
    unprojected = other.split("<section id='unprojected'>")[1]
    # 1e8 B / 0.5e12 B/s = 200 µs
    assert "the target has no fp64 ceiling" in unprojected and "at least 200 µs, unbounded above" in unprojected


def test_html_notes_per_kernel_and_codes(deepcam):
    p = deepcam["t4"]
    page = projection_html(p)
    notes = page.split("<section id='kernel-notes'>")[1].split("</section>")[0]
    assert notes.count("unknown-flops") >= 5 and "short-launch" in notes
    assert html.escape(NOTE_CODES["short-launch"]) in notes and "limiter-change" not in notes  # the codes used
    assert "void at::native::modern::vectorized_elementwise_kernel&lt;4," in notes
    for n in p.notes:
        assert f"<li>{html.escape(n)}</li>" in page
    assert "<p class='notes'>Every kernel was projected.</p>" in page


# -- JSON -------------------------------------------------------------------------------------------------
def test_json_round_trips_strict_with_totals(deepcam):
    for p in (synthetic(), deepcam["h100-sxm"]):
        d = json.loads(json.dumps(projection_to_dict(p), allow_nan=False))
        assert d["schema"] == "roofline.projection/1"
        assert d["keys"] == ["phase", "kernel_name"] and d["levels"] == list(p.levels)
        assert d["source"]["name"] == p.source.name and d["target"]["name"] == p.target.name
        assert set(d["totals"]) == set(TOTAL_KEYS)
        for k, v in p.totals.items():
            assert d["totals"][k] == approx(v)
        assert [k["kernel_name"] for k in d["kernels"]] == list(p.frame["kernel_name"])
        assert d["notes"] == list(p.notes) and d["note_codes"] == dict(NOTE_CODES)
    d = projection_to_dict(synthetic())
    assert d["totals"]["projected_time_s"] == approx(1.25e-3) and d["totals"]["coverage"] == approx(0.75)
    assert d["totals"]["kernels"] == 2 and d["totals"]["unprojected"] == 1
    stream, gemm, half = d["kernels"]
    assert stream["kernel_name"] == STREAM_NAME and stream["phase"] == "forward" and stream["launches"] == 1
    assert (stream["projected_time_s"], stream["low_time_s"], stream["high_time_s"]) == approx((1e-3, 0.5e-3, 1.5e-3))
    assert stream["bound"] == stream["bound_target"] == "dram" and stream["projected"] is True
    assert stream["notes"] == [] and stream["why"] is None and gemm["gain_s"] == approx(0.75e-3)
    assert half["projected"] is False and half["projected_time_s"] is None and half["speedup"] is None
    assert half["why"].startswith("its roofline here is unknown")
    assert [ph["phase"] for ph in d["phases"]] == ["forward", "backward"]
    assert d["phases"][0]["speedup"] == approx(2.4) and d["phases"][1]["kernels"] == 0


def test_json_unbounded_high_end_is_null_and_notes_carry_codes():
    # FP64 uncounted, neither machine has an FP64 ceiling: the high end is unbounded (tests/test_projection.py)
    nofp64_src = machine("src-toy", {"dram": 1e12}, {"fp32": 2e12})
    p = project(table(kernel("partial", 2e-3, fp64=None, fp32=1e9, dram_bytes=1e9)),
                tgt(memory={"dram": 2e12}, fp32=8e12), nofp64_src)
    d = json.loads(json.dumps(projection_to_dict(p), allow_nan=False))
    (k,) = d["kernels"]
    assert k["projected"] is True and k["high_time_s"] is None          # null and projected: unbounded
    assert k["projected_time_s"] == approx(1e-3) and k["speedup_low"] == 0.0
    assert d["totals"]["high_time_s"] is None and d["phases"] == [] and d["keys"] == ["kernel_name"]
    assert k["notes"] == [{"code": "unknown-flops", "text": "a FLOP component not counted (collect "
                                  "sm__sass_thread_inst_executed_op_d{add,mul,fma}_pred_on.sum), and no ceiling they "
                                  "could use is known on both machines: unbounded above"}]
    assert set(d["note_codes"]) == set(NOTE_CODES)
    assert "unbounded above" in k["note_text"]
    assert rows(projection_table(p))[0][4] == "500 µs–unbounded"        # best 1e9 / 2e12 = 0.5 ms


def test_json_doc_example_is_what_the_code_writes():
    """The example in docs/json-schema.md is the JSON of :func:`synthetic` (fields shown; '...' elides)."""
    from doc_examples import SCHEMA_DOC, assert_shown_as_written, doc_example

    text = SCHEMA_DOC.read_text()
    example = doc_example("Projection example")
    written = json.loads(json.dumps(projection_to_dict(synthetic()), allow_nan=False))
    assert_shown_as_written(example, written)
    documented = re.findall(r"^\| `([a-z_]+)`", text.split("# JSON output: schema `roofline.projection/1`")[1], re.M)
    assert set(written) | set(written["totals"]) | set(written["kernels"][0]) <= set(documented)

"""The HTML report as text: self-contained, every name escaped, sections present."""

from __future__ import annotations

import re

import pytest

from report_data import HOSTILE, deepcam_analysis, minimal_figure as make_figure
from roofline.views.report.html import report_html, script_json


def _report() -> str:
    a = deepcam_analysis()
    return report_html(a, None, figures=[("test chart", make_figure(a))])


def test_script_json_cannot_close_the_script():
    text = script_json({"n": "</script><!-- & \u2028"})
    assert "</" not in text and "<!--" not in text and "&" not in text and "\u2028" not in text
    assert text == '{"n": "\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}'


def test_report_is_self_contained():
    html = _report()
    from plotly.offline import get_plotlyjs

    assert html.count(get_plotlyjs()) == 1  # plotly.js inlined once
    ours = html.replace(get_plotlyjs(), "")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", ours), "no external resources"
    assert "cdn.plot.ly" not in ours
    assert "<link" not in ours
    assert ours.count("<script") == 4  # plotly.js, kernel data, one figure, the table script, and no other
    assert len(html) > 4_000_000  # plotly.js inlined


def test_hostile_names_are_escaped_everywhere():
    html = _report()
    assert HOSTILE not in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # in the advice table and diagnoses
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html  # in embedded JSON
    assert "float, &scale>" not in html and "float, &amp;scale&gt;" in html


def test_report_sections_and_numbers():
    html = _report()
    for section in ("summary", "advice", "chart", "table", "diagnoses", "notes"):
        assert f"<section id='{section}'>" in html
    assert "V100-SXM2 (ERT)" in html and "829 GB/s" in html and "15.7 TFLOP/s" in html
    # total time: the authors' 5 kernels plus two added = 2.4 ms + 0.65 ms
    assert "No phases" in html
    assert html.count("<details") == 7


def test_ceilings_panel_names_each_ceiling_and_where_it_came_from():
    """The demo machine: L1, L2, DRAM and FP64 measured (ERT), FP32 and Tensor FP16 datasheet figures."""
    from roofline import api

    profiles, machine = api.example_files()
    text = report_html(api.analyze(api.read(profiles, fp16="paper"), machine), None)
    panel = text.split("<h3>Ceilings</h3>", 1)[1].split("</table>", 1)[0]
    cells = re.findall(r"<tr><td>([^<]+)</td><td class='num'>([^<]+)</td><td class='src'>([^<]+)</td></tr>", panel)
    got = {name: src for name, _, src in cells}
    assert got == {"L1 bandwidth": "measured", "L2 bandwidth": "measured", "DRAM bandwidth": "measured",
                   "Tensor FP16": "theoretical (datasheet)", "FP32": "theoretical (datasheet)", "FP64": "measured"}
    assert "tensor_fp16" not in panel and "(measured)" not in panel


# -- the instruction roofline in the report -------------------------------------------------------------

def _kernel_data(html: str) -> dict:
    import json

    return json.loads(re.search(r"<script type='application/json' id='kernel-data'>(.*?)</script>", html, re.S)
                      .group(1))


def _h100_set_full():
    """The real H100 PCIe --set full report (3 launches of silu_kernel_vector) and the H100 PCIe spec."""
    from pathlib import Path

    import shutil

    from roofline import api
    from roofline.analysis import analyze
    from roofline.readers import read_profile
    from roofline.readers.ncu.rep import _import_ncu_report

    if _import_ncu_report() is None and shutil.which("ncu") is None:
        pytest.skip("reading a .ncu-rep needs the ncu-report module or ncu on PATH")

    table = read_profile(Path(__file__).parent / "data" / "ncu" / "h100pcie_setfull_rep_silu_vector"
                         / "2025-04-21-vector-based.ncu-rep")
    machine = api.load_machine("H100-PCIe")
    return analyze(table, machine), analyze(table, machine, work="instructions"), table


def test_report_instruction_figures_h100_set_full():
    """Ceilings panel and kernel table of the real H100 PCIe report against the H100 PCIe spec, by hand.

    The ceilings are scaled to the launches' time-weighted mean SM clock: (284,704 ns x 1.100024 GHz +
    284,320 x 1.094604 + 284,576 x 1.105305) / 853,600 ns = 1.099986 GHz. L1 and shared: 114 SMs x
    128 B x 1.099986 GHz = 16.05 TB/s = 501.6 G sectors (32 B)/s = 125.4 G wavefronts (128 B)/s;
    DRAM (not scaled) 2 TB/s / 32 B = 62.5 G sectors/s; warp instructions 114 x 4 x 1.099986 GHz = 501.6 G/s.
    """
    flops, instructions, table = _h100_set_full()
    html = report_html(flops, table, instructions=instructions, figures=[("test chart", make_figure(flops))])
    panel = html.split("<h3>Ceilings</h3>", 1)[1].split("</table>", 1)[0]
    cells = dict(re.findall(r"<tr><td>([^<]+)</td><td class='num'>([^<]+)</td>", panel))
    assert cells["L1 bandwidth"] == "16.1 TB/s = 502 G sectors/s"
    assert cells["Shared bandwidth"] == "16.1 TB/s = 125 G wavefronts/s"
    assert cells["DRAM bandwidth"] == "2 TB/s = 62.5 G sectors/s"
    assert cells["Warp instructions"] == "502 Ginst/s"
    data = _kernel_data(html)
    labels = [c["label"] for c in data["columns"]]
    assert labels[6:] == ["FLOP/s", "AI Shared", "AI L2", "AI DRAM", "warp inst/s", "global pattern",
                          "shared pattern", "bound", "limited by", "% of roofline", "savable"]
    (row,) = data["rows"]
    # 3 x 53,477,446 warp instructions in 853,600 ns
    assert row["inst_rate"] == pytest.approx(3 * 53_477_446 / 853_600e-9, rel=1e-9)
    assert row["inst_rate__text"] == "188 Ginst/s"
    # 3 x (524,288 + 2,097,152) global LD/ST over 41,940,196 + 41,939,960 + 41,944,104 L1 sectors: 1/16
    assert row["global_ii"] == pytest.approx(3 * 2_621_440 / 125_824_260, rel=1e-12)
    assert row["global_ii__text"] == "strided (0.0625)"
    assert row["shared_ii"] is None and row["shared_ii__text"] == "-"  # no shared loads or stores
    assert "Every kernel is on the charts." in html


def test_report_instruction_roofline_table_and_kernels_off_the_charts():
    """tests/report_data.instruction_table: the pattern columns and the kernels each chart cannot place."""
    from report_data import H100_LIKE, instruction_table
    from roofline.analysis import analyze

    table = instruction_table()
    flops = analyze(table, H100_LIKE)
    html = report_html(flops, None, instructions=analyze(table, H100_LIKE, work="instructions"),
                       figures=[("test chart", make_figure(flops))])
    rows = {r["display_name"]: r for r in _kernel_data(html)["rows"]}
    assert rows["gather"]["global_ii__text"] == "random (0.0312)"  # 1e5 LD/ST over 3.2e6 sectors
    assert rows["gather"]["shared_ii__text"] == "4-way conflicts (0.25)"  # 1e5 over 4e5 wavefronts
    assert rows["coalesced"]["global_ii__text"] == "unit-stride (0.25)"  # 2e5 over 8e5
    assert rows["broadcast"]["global_ii__text"] == "stride-0 (1)"  # 1e5 over 1e5
    assert rows["broadcast"]["ai_shared__text"] == "0"  # 0 FLOPs over 0 bytes is 0 FLOP/B
    assert rows["gather"]["inst_rate__text"] == "750 Minst/s"  # 3e6 / 4 ms
    off = html.split("<h3>Not on the charts</h3>", 1)[1].split("</table>", 1)[0]
    listed = re.findall(r"<tr><td>([^<]+)</td><td class='name' title='[^']*'>([^<]+)</td>"
                        r"<td class='num'>([^<]+)</td><td class='why'>([^<]+)</td></tr>", off)
    # shares of 7.5 ms: gather 4 ms, broadcast 1 ms, legacy_copy 0.5 ms
    assert [(c, n, s) for c, n, s, _ in listed] == [
        ("FLOP roofline", "gather", "53.3%"), ("FLOP roofline", "broadcast", "13.3%"),
        ("FLOP roofline", "legacy_copy", "6.7%"), ("instruction roofline", "legacy_copy", "6.7%"),
        ("memory-access walls", "legacy_copy", "6.7%")]
    assert listed[0][3] == "0 FLOPs: integer/data movement, see --work ops or --work instructions"
    assert listed[3][3] == "no instruction counts (collect smsp__inst_executed.sum)"


def test_report_under_work_instructions_names_its_units():
    from report_data import H100_LIKE, instruction_table
    from roofline.analysis import analyze

    a = analyze(instruction_table(), H100_LIKE, work="instructions")
    html = report_html(a, None, figures=[("test chart", make_figure(a))])
    labels = [c["label"] for c in _kernel_data(html)["columns"]]
    # the work's rate is warp inst/s already: no second warp inst/s column
    assert labels[6:13] == ["warp inst/s", "II L1", "II Shared", "II L2", "II DRAM", "global pattern", "shared pattern"]
    rows = {r["display_name"]: r for r in _kernel_data(html)["rows"]}
    assert rows["gather"]["flop_rate__text"] == "750 Minst/s" and rows["gather"]["ai_l1__text"] == "0.938"
    assert rows["broadcast"]["ai_shared__text"] == "∞"  # 2e6 warp instructions over 0 wavefronts
    assert "= 200 G wavefronts/s" in html  # 25.60896 TB/s / 128 B


def test_report_draws_the_instruction_roofline_beside_the_flop_roofline():
    """Default charts: the FLOP roofline, then the instruction roofline when the table counts warp
    instructions; under work="instructions" the instruction chart alone (its panel (a) is that roofline)."""
    import json

    from report_data import V100
    from roofline.analysis import analyze

    flops, instructions, table = _h100_set_full()

    def figure_titles(html: str) -> list[list[str]]:
        figs = re.findall(r"<script type='application/json' data-figure='figure-\d'>(.*?)</script>", html, re.S)
        return [[a.get("text", "") for a in json.loads(f)["layout"].get("annotations", [])] +
                [json.loads(f)["layout"].get("title", {}).get("text", "")] for f in figs]

    both = report_html(flops, table, instructions=instructions)
    titles = figure_titles(both)
    assert len(titles) == 2 and both.count("<script") == 5  # plotly.js, kernel data, 2 figures, the table script
    assert not any("(a)" in t for t in titles[0]) and any("(b)" in t for t in titles[1])
    assert "<h2>Roofline charts</h2>" in both and "The instruction roofline (Ding and Williams" in both
    alone = report_html(instructions, table)
    assert len(figure_titles(alone)) == 1 and any("(b)" in t for t in figure_titles(alone)[0])
    assert "<h2>Hierarchical roofline</h2>" in alone
    # an instruction analysis without any warp-instruction count draws nothing more
    from roofline.kernels import KernelTable
    from deepcam_data import deepcam_table

    deepcam = KernelTable(frame=deepcam_table())
    none = report_html(analyze(deepcam, V100), deepcam, instructions=analyze(deepcam, V100, work="instructions"))
    assert len(figure_titles(none)) == 1 and not any("(b)" in t for t in figure_titles(none)[0])
    assert "instruction roofline" not in none.split("<section id='chart'>", 1)[1].split("</section>", 1)[0]

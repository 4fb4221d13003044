"""The HTML report as text: self-contained, every name escaped, sections present."""

from __future__ import annotations

import re

from report_data import HOSTILE, deepcam_analysis, minimal_figure as make_figure
from roofline.views.report_html import report_html, script_json


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

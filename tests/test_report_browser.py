"""The HTML report in a real headless browser: Debian's Chromium driven by Playwright.

Checks: no console errors and no network requests, the chart draws (plotly's SVG with
points), sorting by a header click, filtering, and a kernel named
``<img src=x onerror=alert(1)>`` shown as text with no dialog fired.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium``) and ``pip install
playwright`` (never ``playwright install``: we launch the system Chromium).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from report_data import HOSTILE, deepcam_analysis, minimal_figure
from roofline.views.report.html import report_html

CHROMIUM = os.environ.get("ROOFLINE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)")
if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page_report(tmp_path_factory, browser):
    a = deepcam_analysis()
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(report_html(a, None, figures=[("test chart", minimal_figure(a))]), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    events = {"console": [], "dialogs": [], "errors": [], "requests": []}
    page.on("console", lambda m: events["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: events["errors"].append(str(e)))
    page.on("request", lambda r: events["requests"].append(r.url))

    def on_dialog(d):
        events["dialogs"].append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    page.goto(path.as_uri())
    page.wait_for_selector("#figure-0 .main-svg")
    yield page, events, a
    page.close()


def _names(page) -> list[str]:
    return page.eval_on_selector_all("#kernels tbody tr td.name a", "els => els.map(e => e.title)")


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all(f"#kernels tbody tr td:nth-child({index})", "els => els.map(e => e.textContent)")


def test_loads_without_errors_or_network(page_report):
    page, events, _ = page_report
    assert events["errors"] == []
    assert [c for c in events["console"] if c[0] == "error"] == []
    external = [u for u in events["requests"] if not u.startswith(("file:", "data:", "blob:"))]
    assert external == []


def test_chart_draws_points(page_report):
    page, _, a = page_report
    points = page.eval_on_selector_all("#figure-0 .scatterlayer .point", "els => els.length")
    # three levels, one point per kernel with a finite intensity at that level
    expected = sum(int((a.frame[f"ai_{lv}"] > 0).sum()) for lv in ("l1", "l2", "dram"))
    assert points == expected and points > 0


def test_default_order_is_savable_time_and_sorting_works(page_report):
    page, _, a = page_report
    expected = list(a.frame.sort_values("savable_time_s", ascending=False)["kernel_name"])
    assert _names(page) == expected
    page.click("#kernels th[data-key='time_s'] button")
    assert page.get_attribute("#kernels th[data-key='time_s']", "aria-sort") == "descending"
    assert _names(page) == list(a.frame.sort_values("time_s", ascending=False)["kernel_name"])
    page.click("#kernels th[data-key='time_s'] button")
    assert _names(page) == list(a.frame.sort_values("time_s", ascending=True)["kernel_name"])
    page.click("#kernels th[data-key='kernel_name'] button")
    assert _names(page) == sorted(a.frame["kernel_name"], key=lambda s: s)  # localeCompare agrees on these


def _reset(page) -> None:
    page.fill("#filter-text", "")
    page.select_option("#filter-limiter", "")


def test_filtering(page_report):
    page, _, a = page_report
    _reset(page)
    page.fill("#filter-text", "multi_tensor")
    names = _names(page)
    assert names and all("multi_tensor" in n for n in names)
    assert len(names) == int(a.frame["kernel_name"].str.contains("multi_tensor").sum())
    assert page.text_content("#shown") == f"{len(names)} of {len(a.frame)} kernels"
    page.fill("#filter-text", "")
    assert len(_names(page)) == len(a.frame)
    page.select_option("#filter-limiter", "launch overhead")
    limited = _column(page, 12)  # the 'limited by' column
    assert limited and set(limited) == {"launch overhead"}
    page.select_option("#filter-limiter", "")


def test_hostile_name_is_text_and_no_dialog(page_report):
    page, events, _ = page_report
    _reset(page)
    assert events["dialogs"] == []
    assert page.eval_on_selector_all("main img", "els => els.length") == 0
    page.fill("#filter-text", "onerror")
    cell = page.locator("#kernels tbody tr td.name a")
    assert cell.count() == 1 and cell.text_content() == HOSTILE
    page.fill("#filter-text", "")
    summary = page.locator("#diagnoses summary", has_text="onerror")
    assert HOSTILE in summary.text_content()
    summary.click()
    assert page.locator("#diagnoses details[open] p.name").first.text_content() == HOSTILE
    # hover text in the chart: plotly shows the escaped name as text, not markup
    assert events["dialogs"] == [] and events["errors"] == []


def test_hostile_name_in_chart_hover_is_text(page_report):
    page, events, a = page_report
    _reset(page)
    row = int(a.frame.index[a.frame["kernel_name"] == HOSTILE][0])
    point = page.locator("#figure-0 .scatterlayer .trace").first.locator(".point").nth(row)
    point.hover(force=True)
    page.wait_for_selector("#figure-0 .hoverlayer .hovertext")
    assert page.text_content("#figure-0 .hoverlayer .hovertext") == HOSTILE
    assert events["dialogs"] == []


def test_report_on_a_real_analysis_with_the_real_chart(tmp_path, browser):
    from report_data import real_analysis

    analysis, table = real_analysis()
    path = tmp_path / "real.html"
    path.write_text(report_html(analysis, table), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems, dialogs = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_selector("#figure-0 .main-svg")
    assert page.eval_on_selector_all("#figure-0 .scatterlayer .point", "els => els.length") > 0
    page.select_option("#filter-phase", "forward")
    assert page.eval_on_selector_all("#kernels tbody tr td.name a", "els => els.map(e => e.title)") == [HOSTILE]
    assert "forward" in page.text_content("#summary")
    assert problems == [] and dialogs == []
    page.close()


def test_module_drilldown_expands(tmp_path, browser):
    """The 'By module' tree of tests/test_report_drilldown.py's table: the model open, a click on a module
    shows its sub-module and operator, a click on the operator its kernels; the per-module chart draws."""
    from test_report_drilldown import TOY, _table

    from roofline.analysis import analyze

    table = _table()
    path = tmp_path / "modules.html"
    path.write_text(report_html(analyze(table, TOY), table), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems, dialogs = [], []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_selector("#figure-1 .main-svg")
    assert page.eval_on_selector_all("#figure-1 .scatterlayer .point", "els => els.length") == 3  # Net's own copy: 0 FLOP
    conv = page.locator("#module-tree details[data-key='Net.enc.conv'] > summary")
    assert conv.is_hidden()  # Net is open, Net.enc closed
    page.locator("#module-tree details[data-key='Net.enc'] > summary").click()
    assert conv.is_visible()
    relu = page.locator("#module-tree details[data-key='Net.enc'] > details[data-kind='op'] > summary")
    assert relu.is_visible() and "aten::relu" in relu.text_content() and "forward" in relu.text_content()
    kernel = page.locator("#module-tree [data-key='relu_kernel']")
    assert kernel.is_hidden()
    relu.click()
    assert kernel.is_visible()
    cells = kernel.locator(".num").all_text_contents()
    assert cells == ["1", "1 ms", "7.1%", "100 MFLOP", "500 MB", "0.2", "50.0%"]  # 1 ms of 14 ms; 0.5 ms at DRAM
    assert problems == [] and dialogs == []
    page.close()

"""The HTML report's drill-down (module -> operators -> kernels) on a synthetic per-launch table.

The table: model ``Net`` with ``Net.enc`` (holding ``Net.enc.conv``) and ``Net.head``; a convolution
in forward and backward, a relu in ``Net.enc`` itself, two launches of one GEMM, a launch in ``Net``
with no operator and an optimizer launch outside every module. FP32 FLOPs and DRAM bytes only,
held to a toy machine: DRAM 1 TB/s, FP32 10 TFLOP/s (no clocks: no scaling). Every number below is
worked out by hand; % of roofline = max(FLOPs / 10e12, bytes / 1e12) / time.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from report_data import HOSTILE
from roofline.analysis import analyze
from roofline.kernels import KernelTable, from_records
from roofline.machine.model import Machine
from roofline.views.report.drilldown import OUTSIDE, UNKNOWN_OP, build_tree, drilldown_html, module_analysis
from roofline.views.report.html import report_html

TOY = Machine(name="toy", source="measured", memory={"dram": 1e12}, compute={"fp32": 10e12})


def _launch(i, module, op, phase, kernel, time_s, flops, dram):
    return dict(launch_id=i, module=module, op=op, phase=phase, kernel_name=kernel, time_s=time_s,
                fp32_flops=flops, dram_bytes=dram)


LAUNCHES = [
    _launch(1, "Net.enc.conv", "aten::convolution", "forward", "conv_fwd", 4e-3, 8e9, 1e9),
    _launch(2, "Net.enc.conv", "aten::convolution", "backward", "conv_bwd_data", 3e-3, 8e9, 2e9),
    _launch(3, "Net.enc.conv", "aten::convolution", "backward", HOSTILE, 2e-3, 8e9, 1e9),
    _launch(4, "Net.enc", "aten::relu", "forward", "relu_kernel", 1e-3, 1e8, 0.5e9),
    _launch(5, "Net.head", "aten::addmm", "forward", "gemm", 1e-3, 4e9, 0.5e9),
    _launch(6, "Net.head", "aten::addmm", "forward", "gemm", 1e-3, 4e9, 0.5e9),
    _launch(7, "Net", None, "forward", "copy_kernel", 0.5e-3, 0.0, 0.25e9),
    _launch(8, None, "aten::_foreach_add_", "optimizer", "adam_kernel", 1.5e-3, 1e9, 1e9),
]
#: 4 + 3 + 2 + 1 + 1 + 1 + 0.5 + 1.5 ms
TOTAL = 14e-3


def _table() -> KernelTable:
    return KernelTable(frame=from_records(LAUNCHES))


def _flat(nodes, depth=0):
    for n in nodes:
        yield depth, n
        yield from _flat(n.children, depth + 1)


def test_tree_structure():
    tree = build_tree(_table(), TOY)
    shape = [(d, n.kind, n.label, n.phase) for d, n in _flat(tree.nodes)]
    assert shape == [
        (0, "module", "Net", None),
        (1, "module", "Net.enc", None),  # sub-modules first, longest first
        (2, "module", "Net.enc.conv", None),
        (3, "op", "aten::convolution", "backward"),  # 5 ms before forward's 4 ms
        (4, "kernel", "conv_bwd_data", None),
        (4, "kernel", HOSTILE, None),  # no C++ name to shorten: kept whole (escaped in HTML)
        (3, "op", "aten::convolution", "forward"),
        (4, "kernel", "conv_fwd", None),
        (2, "op", "aten::relu", "forward"),  # Net.enc's own operator, after its sub-module
        (3, "kernel", "relu_kernel", None),
        (1, "module", "Net.head", None),
        (2, "op", "aten::addmm", "forward"),
        (3, "kernel", "gemm", None),
        (1, "op", UNKNOWN_OP, "forward"),  # in Net itself, operator unknown
        (2, "kernel", "copy_kernel", None),
        (0, "outside", OUTSIDE, None),
        (1, "op", "aten::_foreach_add_", "optimizer"),
        (2, "kernel", "adam_kernel", None),
    ]
    assert tree.level == "dram" and tree.work == "flops" and tree.total_time_s == pytest.approx(TOTAL)


def test_tree_numbers_by_hand():
    nodes = {(n.kind, n.label, n.phase): n for _, n in _flat(build_tree(_table(), TOY).nodes)}

    def check(key, launches, time_s, flops, dram, pct):
        n = nodes[key]
        assert n.launches == launches and n.time_s == pytest.approx(time_s)
        assert n.share == pytest.approx(time_s / TOTAL)
        assert n.work == pytest.approx(flops) and n.traffic == pytest.approx(dram)
        assert n.intensity == pytest.approx(flops / dram)
        assert n.pct_of_roofline == pytest.approx(pct)
        assert n.estimated_over_measured is None

    # Net: all but the optimizer launch: 12.5 ms; 8+8+8+0.1+4+4+0 = 32.1 GFLOP; 1+2+1+0.5+0.5+0.5+0.25 = 5.75 GB;
    # roofline max(3.21 ms, 5.75 ms) = 5.75 ms over 12.5 ms = 46 %
    check(("module", "Net", None), 7, 12.5e-3, 32.1e9, 5.75e9, 0.46)
    # Net.enc: conv and relu: 10 ms, 24.1 GFLOP, 4.5 GB; max(2.41, 4.5) ms / 10 ms = 45 %
    check(("module", "Net.enc", None), 4, 10e-3, 24.1e9, 4.5e9, 0.45)
    # Net.enc.conv: 9 ms, 24 GFLOP, 4 GB; max(2.4, 4) ms / 9 ms = 44.4 %
    check(("module", "Net.enc.conv", None), 3, 9e-3, 24e9, 4e9, 4 / 9)
    # its backward convolution: 5 ms, 16 GFLOP, 3 GB; max(1.6, 3) / 5 = 60 %
    check(("op", "aten::convolution", "backward"), 2, 5e-3, 16e9, 3e9, 0.6)
    # forward: 4 ms, 8 GFLOP, 1 GB; max(0.8, 1) / 4 = 25 %
    check(("op", "aten::convolution", "forward"), 1, 4e-3, 8e9, 1e9, 0.25)
    # GEMM, two launches summed: 2 ms, 8 GFLOP, 1 GB; max(0.8, 1) / 2 = 50 %
    check(("kernel", "gemm", None), 2, 2e-3, 8e9, 1e9, 0.5)
    check(("module", "Net.head", None), 2, 2e-3, 8e9, 1e9, 0.5)
    # outside modules: 1.5 ms, 1 GFLOP, 1 GB; max(0.1, 1) / 1.5 = 66.7 %
    check(("outside", OUTSIDE, None), 1, 1.5e-3, 1e9, 1e9, 1 / 1.5)
    # no operator: 0 FLOP (intensity 0), 0.25 GB in 0.5 ms: 0.25 / 0.5 = 50 %
    check(("op", UNKNOWN_OP, "forward"), 1, 0.5e-3, 0.0, 0.25e9, 0.5)
    # the children of a module sum to it: Net = Net.enc + Net.head + its own copy
    assert sum(c.time_s for c in nodes[("module", "Net", None)].children) == pytest.approx(12.5e-3)


def test_estimated_over_measured():
    """The counter-free estimate (every launch an operator call) beside the measured launches."""
    estimate = KernelTable(frame=from_records([
        dict(module="Net.enc.conv", op="aten::convolution", phase="forward", kernel_name="aten::convolution",
             fp32_flops=8e9, dram_bytes=1e9, estimated=True),
        dict(module="Net.enc.conv", op="aten::convolution", phase="backward", kernel_name="aten::convolution",
             fp32_flops=16e9, dram_bytes=1e9, estimated=True),
        dict(module="Net.head", op="aten::addmm", phase="forward", kernel_name="aten::addmm", fp32_flops=12e9,
             dram_bytes=1e9, estimated=True),
    ]))
    tree = build_tree(_table(), TOY, estimates=estimate)
    nodes = {(n.kind, n.label, n.phase): n for _, n in _flat(tree.nodes)}
    ratio = {k: n.estimated_over_measured for k, n in nodes.items()}
    assert ratio[("module", "Net", None)] == pytest.approx(36e9 / 32.1e9)  # 8 + 16 + 12 estimated
    assert ratio[("module", "Net.enc", None)] == pytest.approx(24e9 / 24.1e9)  # the relu has no estimate
    assert ratio[("module", "Net.head", None)] == pytest.approx(1.5)  # 12 / 8
    assert ratio[("op", "aten::addmm", "forward")] == pytest.approx(1.5)
    assert ratio[("op", "aten::convolution", "backward")] == pytest.approx(1.0)  # 16 / 16
    assert ratio[("op", "aten::relu", "forward")] is None  # measured only
    assert ratio[("kernel", "gemm", None)] is None
    html = drilldown_html(tree)
    assert "estimated / measured FLOPs" in html and "1.5x" in html and "class='tree with-ratio'" in html


def test_module_chart_rows_are_module_paths():
    """analyze(by='module', depth=2): the rows the per-module chart draws, labelled by path."""
    a = module_analysis(_table(), TOY)
    got = {str(n): t for n, t in zip(a.frame["kernel_name"], a.frame["time_s"])}
    # Net.enc: 10 ms; Net.head: 2 ms; Net's own copy kernel: 0.5 ms; outside: 1.5 ms
    assert got == pytest.approx({"Net.enc": 10e-3, "Net.head": 2e-3, "Net": 0.5e-3, OUTSIDE: 1.5e-3})
    same = analyze(_table(), TOY, by="module", depth=2)
    assert list(same.frame["kernel_name"]) == list(a.frame["kernel_name"])


class _Balance(HTMLParser):
    """Checks that every element opened is closed in order (void elements aside)."""

    VOID = {"meta", "br", "input", "img", "hr", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def _report() -> str:
    table = _table()
    return report_html(analyze(table, TOY), table)


def test_report_section_is_valid_and_escaped():
    html = _report()
    section = re.search(r"<section id='modules'>.*?</section>", html, re.S).group(0)
    parser = _Balance()
    parser.feed(section)
    assert parser.errors == [] and parser.stack == []
    # modules and operators are <details>: Net, Net.enc, Net.enc.conv, 2 convolutions, relu, Net.head, addmm,
    # no operator, outside, foreach: 11; the 7 kernel rows (GEMM's 2 launches are one) are leaves
    assert section.count("<details") == 11 and section.count("class='tr leaf'") == 7
    assert HOSTILE not in html and "<img" not in html
    assert "title='&lt;img src=x onerror=alert(1)&gt;'" in section
    for text in ("12.5 ms", "89.3%", "32.1 GFLOP", "5.75 GB", "46.0%", "66.7%", "(outside modules)"):
        assert f"<span class='num'>{text}</span>" in section or text in section
    assert html.count("<script") == 5  # plotly.js, kernel data, the FLOP chart, the module chart, the table script
    assert "<div id='figure-1' class='chart'>" in section  # the module chart sits in the section


def test_report_without_attribution_has_no_module_section():
    from report_data import deepcam_analysis, minimal_figure

    a = deepcam_analysis()
    html = report_html(a, None, figures=[("test chart", minimal_figure(a))])
    assert "id='modules'" not in html and "module-tree" not in html.split("<style>")[0]

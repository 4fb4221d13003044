"""One label per kernel in every view of one analysis (Analysis.labels), whichever rows a view shows.

A label used to be made over the rows a view showed: the kernel table of the top 3 called a kernel
``elementwise_kernel`` while the advice beside it, made over every kernel, said ``elementwise_kernel #1``;
and in the H100 saxpy example the chart's key and its "not shown" note gave two different kernels the
same name. Real exports (tests/data/ncu/h100_80gb_hbm3_examples, PROVENANCE.md there): the saxpy program's
two kernels are ``vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, ...>`` (the saxpy, FLOPs) and
``vectorized_elementwise_kernel<4, FillFunctor<float>, ...>`` (the fill, 0 FLOPs: not on the chart).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline import api
from roofline.guidance.advise import advise
from roofline.views.chart.rows import not_shown_note, select_rows, undrawn_kernels
from roofline.views.chart.static import key_names
from roofline.views.notebook import analysis_html
from roofline.views.terminal import kernel_table_renderable, undrawn_lines

H100 = Path(__file__).parent / "data" / "ncu" / "h100_80gb_hbm3_examples"
ADD = "void vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char *, 3>>(int, T2, T3)"
FILL = "void vectorized_elementwise_kernel<4, FillFunctor<float>, array<char *, 1>>(int, T2, T3)"


def _names(table) -> list[str]:  # type: ignore[no-untyped-def]
    """The kernel column of a rendered kernel table (the column after '#')."""
    column = next(c for c in table.columns if c.header == "kernel")
    return [str(cell).rstrip("*~ ") for cell in column.cells]


def test_saxpy_kernels_of_one_function_are_told_apart_in_every_view() -> None:
    analysis = api.analyze(api.read(H100 / "example_saxpy.ncu.csv"))
    assert list(analysis.frame["kernel_name"]) == [ADD, FILL]  # the saxpy is the longer
    assert dict(analysis.labels) == {ADD: "vectorized_elementwise_kernel<CUDAFunctor_add>",
                                     FILL: "vectorized_elementwise_kernel<FillFunctor>"}
    # the table of the top 1 shows the saxpy alone, yet names it as the full table does
    assert _names(kernel_table_renderable(analysis, top=1)) == ["vectorized_elementwise_kernel<CUDAFunctor_add>"]
    rows = select_rows(analysis)
    assert key_names(rows.shown, analysis.by, rows.labels) == ["vectorized_elementwise_kernel<CUDAFunctor_add>"]
    assert "not shown: vectorized_elementwise_kernel<FillFunctor> 17.4%" in not_shown_note(rows)
    assert any("vectorized_elementwise_kernel<FillFunctor> 17.4%" in str(line) for line in undrawn_lines(analysis))
    assert "vectorized_elementwise_kernel&lt;CUDAFunctor_add&gt;" in analysis_html(analysis, top=1)


@pytest.mark.parametrize("top", [1, 3, 6, 10, None])
def test_deepcam_table_of_any_length_names_kernels_as_the_advice(top: int | None) -> None:
    analysis = api.analyze(api.read(H100 / "example_deepcam.ncu.csv.gz"))
    whole = _names(kernel_table_renderable(analysis, top=None))
    assert len(whole) == len(analysis.frame) and len(set(whole)) == analysis.frame["kernel_name"].nunique()
    shown = _names(kernel_table_renderable(analysis, top=top))
    assert shown == whole[:len(shown)]
    advice = advise(analysis)
    by_name = dict(zip(advice["kernel_name"].astype(str), advice["label"]))
    assert [by_name[str(n)] for n in analysis.frame["kernel_name"]] == whole
    # the case that was wrong: one of several kernels of a name, shown alone
    assert "elementwise_kernel #1" in whole and "elementwise_kernel" not in whole


def test_labels_number_by_time_over_every_row() -> None:
    """``#N`` counts the kernels of a name by time, longest first, over every row; the kernels not on
    the chart keep their numbers in the list of them."""
    analysis = api.analyze(api.read(H100 / "example_deepcam.ncu.csv.gz"))
    numbered = [label for label in analysis.labels.values() if label.startswith("elementwise_kernel #")]
    assert numbered == [f"elementwise_kernel #{i}" for i in range(1, len(numbered) + 1)] and len(numbered) >= 2
    undrawn = undrawn_kernels(analysis)
    assert undrawn and [u.label for u in undrawn] == [analysis.labels[u.kernel] for u in undrawn]
    listed = [line.plain for line in undrawn_lines(analysis)][1:]
    assert [line.startswith(f"  {u.label} ") for line, u in zip(listed, undrawn)] == [True] * min(len(listed), len(undrawn))


def test_a_chart_of_several_runs_names_each_kernels_run() -> None:
    """Two programs' exports side by side (two runs): the saxpy kernel of each, one name, is told apart in the
    chart's key by its run, as the advice tells them apart; a chart of one run names none."""
    analysis = api.analyze(api.read([H100 / "example_saxpy.ncu.csv", H100 / "target_saxpy.ncu.csv"]))
    assert list(analysis.frame["run"].astype(str)) == ["target_saxpy", "example_saxpy", "example_saxpy"]
    rows = select_rows(analysis)
    saxpy = "vectorized_elementwise_kernel<CUDAFunctor_add>"
    # (their order is the analysis's, by what each could save: it moves with the ceilings)
    both = sorted([f"target_saxpy: {saxpy}", f"example_saxpy: {saxpy}"])
    assert sorted(key_names(rows.shown, analysis.by, rows.labels, runs=True)) == both
    assert sorted(advise(analysis)["label"][:2]) == both
    from roofline.views.chart.static import roofline_figure

    key = [t.get_text() for t in roofline_figure(analysis).texts if t.get_text()[:1].isdigit()]
    assert any(f"target_saxpy: {saxpy}" in k for k in key) and any(f"example_saxpy: {saxpy}" in k for k in key)
    one = api.analyze(api.read(H100 / "example_saxpy.ncu.csv"))
    key = [t.get_text() for t in roofline_figure(one).texts if t.get_text()[:1].isdigit()]
    assert key and not any("example_saxpy:" in k for k in key)


def test_the_interactive_charts_hover_names_kernels_as_the_table() -> None:
    """The plotly chart's hover text opens with the kernel's label of the analysis (two saxpy-like kernels of
    one function, told apart by their functor), then its full name."""
    from roofline.views.chart.interactive import roofline_plotly

    analysis = api.analyze(api.read([H100 / "example_saxpy.ncu.csv", H100 / "target_saxpy.ncu.csv"]))
    hovers = [str(h) for trace in roofline_plotly(analysis).data
              for h in (trace.hovertext if trace.hovertext is not None else ())
              if "; launches:" in str(h)]  # the kernels' markers (the ceilings have hover text of their own)
    assert len(hovers) >= 2
    assert all(h.startswith("<b>vectorized_elementwise_kernel&lt;CUDAFunctor_add&gt;</b><br>void ") for h in hovers)

"""`roofline compare BEFORE AFTER`: two profiles on one roofline, a table of changes, a CI gate.

Exit status: 0 when done; 1 (:data:`roofline.api.EXIT_SLOWER`) when
``--fail-if-slower PCT`` is given and the total kernel time grew by more than PCT
percent; 2 on bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Optional

import click

from roofline.cli.console import Messages, messages_for, results_console
from roofline.cli.options import (PATH, Ceilings, Fp16, Sort, allow_other_machine_option, ceilings_option,
                                  filter_option, finite, force_option, fp16_named_option, nvtx_option, quiet_option,
                                  sort_option)
from roofline.errors import InputError


class MatchBy(str, Enum):
    auto = "auto"
    name = "name"
    phase = "phase"


def register(app: click.Group) -> None:
    @app.command()
    @click.argument("before", type=PATH, help=(
        "Profile before the change (ncu CSV or .ncu-rep, or a folder of them; - reads standard input)."))
    @click.argument("after", type=PATH, help="Profile after the change (or on the other GPU).")
    @click.option("--machine", "-m", help="Ceilings for both runs (machine JSON, ERT file or GPU spec name).")
    @click.option("--machine-before", help="Ceilings of the BEFORE run (overrides --machine).")
    @click.option("--machine-after", help="Ceilings of the AFTER run (overrides --machine).")
    @allow_other_machine_option
    @click.option("--by", type=click.Choice(MatchBy), default=MatchBy.auto, help=(
        "Match kernels by 'name', by 'phase' and name, or 'auto' (phase when both profiles have phases)."))
    @click.option("--top", type=click.IntRange(min=1), default=15, help="Kernels to show in the table and chart.")
    @sort_option
    @filter_option
    @nvtx_option
    @fp16_named_option
    @click.option("--png", "png_out", type=PATH, help="Write the before/after roofline chart (.png, .svg or .pdf).")
    @click.option("--html", "html_out", type=PATH,
                  help="Write the interactive before/after chart (self-contained HTML).")
    @click.option("--json", "json_out", type=PATH,
                  help="Write the comparison as JSON (schema roofline.comparison/1); - writes standard output.")
    @ceilings_option
    @click.option("--fail-if-slower", type=click.FloatRange(min=0), callback=finite, help=(
        "Exit with status 1 when the total kernel time grew by more than this many percent (for CI)."))
    @force_option
    @quiet_option
    @click.pass_context
    def compare(
        ctx: click.Context,
        before: Path,
        after: Path,
        machine: Optional[str],
        machine_before: Optional[str],
        machine_after: Optional[str],
        allow_other_machine: bool,
        by: MatchBy,
        top: int,
        sort: Sort,
        kernel_filter: Optional[str],
        nvtx: Optional[str],
        fp16: Fp16,
        png_out: Optional[Path],
        html_out: Optional[Path],
        json_out: Optional[Path],
        ceilings: Ceilings,
        fail_if_slower: Optional[float],
        force: bool,
        quiet: bool,
    ) -> None:
        """Compare two profiles: both runs on one roofline with arrows, a table of changes, totals."""
        import json

        from roofline import api

        messages = messages_for(ctx, quiet)
        if api.is_stdio(before) and api.is_stdio(after):
            raise InputError("standard input (-) can be BEFORE or AFTER, not both", hint="it can be read once only")
        machines = [m for m in (machine, machine_before, machine_after) if m]
        inputs = api.input_files([before, after], machines)
        targets = [(p, p is png_out) for p in (png_out, html_out, json_out) if p is not None]
        api.check_files(targets, force=force, inputs=inputs)  # refuse before reading anything
        comp = api.compare(before, after, machine or None, machine_before=machine_before or None,
                           machine_after=machine_after or None, by=by.value, fp16=fp16.value,
                           kernels=kernel_filter, nvtx=nvtx, allow_other_machine=allow_other_machine)
        analysis_b, analysis_a = comp.before, comp.after
        if png_out is not None:
            api.check_drawable(analysis_b)
            api.check_drawable(analysis_a)

        to_stdout = any(api.is_stdio(p) for p, _ in targets)
        results_console(to_stderr=to_stdout).print(api.changes_table(comp, top=top, sort=sort.value))
        _notes(messages, analysis_b.notes, analysis_a.notes)
        outputs: list[tuple[Path, Callable[[], str | bytes]]] = []
        if json_out is not None:
            outputs.append((json_out, lambda: json.dumps(api.comparison_to_dict(comp), indent=2, allow_nan=False) + "\n"))
        if png_out is not None:
            from roofline.views.chart.compare import comparison_figure

            outputs.append((png_out, lambda: api.figure_bytes(comparison_figure(comp, top=top, ceilings=ceilings.value),
                                                          png_out.suffix)))
        if html_out is not None:
            from roofline.views.chart.compare import comparison_plotly

            outputs.append((html_out, lambda: comparison_plotly(comp, top=top, ceilings=ceilings.value).to_html(
                full_html=True, include_plotlyjs=True, config={"displaylogo": False})))
        for path in api.write_all(outputs, force=force, inputs=inputs):
            messages.wrote(path)
        if fail_if_slower is not None and comp.slower_than(fail_if_slower):
            pct = comp.totals["time_change_pct"]
            click.echo(f"roofline: total kernel time grew by {pct:.1f}% (more than {fail_if_slower:g}%)", err=True)
            ctx.exit(api.EXIT_SLOWER)


def _notes(messages: Messages, before: tuple[str, ...], after: tuple[str, ...]) -> None:
    """Each note once: said of both runs when both have it, else of the run that has it."""
    for note in dict.fromkeys([*before, *after]):
        side = "before and after" if note in before and note in after else ("before" if note in before else "after")
        messages.note(f"({side}) {note}")

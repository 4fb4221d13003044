"""`roofline project PROFILE... --to MACHINE [--from MACHINE]`: what the program would take on another machine.

Prints the kernels that get faster there ranked by projected gain and, in a section of their own, those
that get slower ranked by the time they lose (today's time, the best case at 100% of the target's
roofline, the projection keeping today's fraction of the roofline, its range and the speed-up), the
totals per phase and for the program with how many kernels and how much of today's time get slower,
and the notes on what the model cannot know; writes the chart (the kernels whose time changes most,
each point here with an arrow to its projected point there), an HTML page and JSON (schema
``roofline.projection/1``) on request.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Optional

import click

from roofline.cli.console import messages_for, results_console
from roofline.cli.options import (PATH, Ceilings, Fp16, allow_other_machine_option, ceilings_option,
                                  filter_option, finite, force_option, fp16_named_option, nvtx_option, quiet_option)


class ProjectBy(str, Enum):
    auto = "auto"
    name = "name"
    phase = "phase"


class ProjectSort(str, Enum):
    gain = "gain"
    time = "time"


def register(app: click.Group) -> None:
    @app.command()
    @click.argument("files", nargs=-1, required=True, type=PATH, help=(
        "Profile(s) measured on the source machine (ncu CSV, .ncu-rep, kernel JSON, or folders of them; - reads "
        "standard input)."))
    @click.option("--to", "-t", multiple=True, required=True, help=(
        "The target's ceilings: a GPU spec name (roofline machine --list-specs), a machine JSON (roofline machine "
        "-o) or an ERT file. Repeat to combine (first wins)."))
    @click.option("--from", "-f", "source", multiple=True, help=(
        "Ceilings of the machine the profile was measured on: a GPU spec name, a machine file, or 'profile' (its "
        "own peak metrics). Default: like with like, the spec of the GPU the profile names when --to is a spec, "
        "else the profile's peak metrics completed by that spec. Repeat to combine."))
    @allow_other_machine_option
    @click.option("--target-clock", type=click.FloatRange(min=1e6), callback=finite, help=(
        "SM clock of the target in Hz (e.g. 1.755e9 to compare with a run at that clock); default: the target "
        "machine's own."))
    @click.option("--by", type=click.Choice(ProjectBy), default=ProjectBy.auto, help=(
        "One row per kernel 'name', per 'phase' and name (totals per phase), or 'auto' (phase when the profile has "
        "phases)."))
    @click.option("--top", type=click.IntRange(min=1), default=20, help=(
        "Kernels to show in each section of the table (those that get faster there, those that get slower: a cut "
        "never hides the slower ones) and in the chart (those whose time changes most)."))
    @click.option("--sort", type=click.Choice(ProjectSort), default=ProjectSort.gain, help=(
        "Order of each section of the table: gain (the change of time there, largest first: most time saved, most "
        "time lost) or time (today's time)."))
    @filter_option
    @nvtx_option
    @fp16_named_option
    @click.option("--png", "png_out", type=PATH,
                  help="Write the chart: kernels here with arrows to there (.png, .svg or .pdf).")
    @click.option("--html", "html_out", type=PATH, help="Write the projection as one self-contained HTML page.")
    @click.option("--json", "json_out", type=PATH,
                  help="Write the projection as JSON (schema roofline.projection/1); - writes standard output.")
    @ceilings_option
    @force_option
    @quiet_option
    @click.pass_context
    def project(
        ctx: click.Context,
        files: tuple[Path, ...],
        to: tuple[str, ...],
        source: tuple[str, ...],
        allow_other_machine: bool,
        target_clock: Optional[float],
        by: ProjectBy,
        top: int,
        sort: ProjectSort,
        kernel_filter: Optional[str],
        nvtx: Optional[str],
        fp16: Fp16,
        png_out: Optional[Path],
        html_out: Optional[Path],
        json_out: Optional[Path],
        ceilings: Ceilings,
        force: bool,
        quiet: bool,
    ) -> None:
        """Project a measured profile onto another machine: per kernel, per phase and for the program."""
        import json

        from roofline import api
        from roofline.views.projection.json_out import projection_to_dict
        from roofline.views.projection import phase_table, projection_table

        messages = messages_for(ctx, quiet)
        machines = [*to, *(m for m in source or [] if m != "profile")]
        inputs = api.input_files(files, machines)
        targets = [(p, p is png_out) for p in (png_out, html_out, json_out) if p is not None]
        api.check_files(targets, force=force, inputs=inputs)  # refuse before reading anything
        src = source[0] if source == ("profile",) else (list(source) or None)
        proj = api.project(files, to, source=src, by=by.value, fp16=fp16.value, kernels=kernel_filter,
                           nvtx=nvtx, target_clock_hz=target_clock, allow_other_machine=allow_other_machine)
        to_stdout = any(api.is_stdio(p) for p, _ in targets)
        console = results_console(to_stderr=to_stdout)
        console.print(projection_table(proj, top=top, sort=sort.value))
        phases = phase_table(proj)
        if phases is not None:
            console.print(phases)
        for note in proj.notes:
            messages.note(note)
        outputs: list[tuple[Path, Callable[[], str | bytes]]] = []
        if json_out is not None:
            outputs.append((json_out, lambda: json.dumps(projection_to_dict(proj), indent=2, allow_nan=False) + "\n"))
        if png_out is not None:
            from roofline.views.projection import projection_figure

            outputs.append((png_out, lambda: api.figure_bytes(projection_figure(proj, top=top, ceilings=ceilings.value),
                                                          png_out.suffix)))
        if html_out is not None:
            from roofline.views.projection import projection_html

            outputs.append((html_out, lambda: projection_html(proj, top=max(top, 30))))
        for path in api.write_all(outputs, force=force, inputs=inputs):
            messages.wrote(path)

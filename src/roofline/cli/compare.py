"""`roofline compare BEFORE AFTER`: two profiles on one roofline, a table of changes, a CI gate.

Exit status: 0 when done; 1 (:data:`roofline.compare.EXIT_SLOWER`) when
``--fail-if-slower PCT`` is given and the total kernel time grew by more than PCT
percent; 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from roofline.cli.console import stdout_console

#: Files taken from a folder given as BEFORE or AFTER.
PROFILE_PATTERNS = ("*.csv", "*.ncu-rep", "*.ncu-repz", "out.*")


def profile_files(path: Path) -> list[Path]:
    """The profile files a BEFORE/AFTER argument names: the file, or the profiles inside a folder."""
    from roofline.errors import InputError

    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if not path.is_dir():
        return [path]
    files = sorted({p for pattern in PROFILE_PATTERNS for p in path.glob(pattern) if p.is_file()})
    if not files:
        raise InputError("the folder holds no profiles", path=path,
                         hint="give ncu CSV exports (*.csv), reports (*.ncu-rep) or per-metric files (out.*)")
    return files


def _has_phases(table) -> bool:  # type: ignore[no-untyped-def]
    return bool(table.frame["phase"].notna().any())


def register(app: typer.Typer) -> None:
    @app.command()
    def compare(
        before: Annotated[Path, typer.Argument(help="Profile before the change (ncu CSV or .ncu-rep, or a folder of them).")],
        after: Annotated[Path, typer.Argument(help="Profile after the change (or on the other GPU).")],
        machine: Annotated[Optional[str], typer.Option("--machine", "-m", help="Ceilings for both runs (machine JSON, ERT file or GPU spec name).")] = None,
        machine_before: Annotated[Optional[str], typer.Option(help="Ceilings of the BEFORE run (overrides --machine).")] = None,
        machine_after: Annotated[Optional[str], typer.Option(help="Ceilings of the AFTER run (overrides --machine).")] = None,
        by: Annotated[str, typer.Option(help="Match kernels by 'name', by 'phase' and name, or 'auto' (phase when both profiles have phases).")] = "auto",
        top: Annotated[int, typer.Option(help="Kernels to show in the table and chart.")] = 15,
        fp16: Annotated[str, typer.Option(help="FP16 FLOP convention: ncu or paper.")] = "ncu",
        png_out: Annotated[Optional[Path], typer.Option("--png", help="Write the before/after roofline chart (.png, .svg or .pdf).")] = None,
        html_out: Annotated[Optional[Path], typer.Option("--html", help="Write the interactive before/after chart (self-contained HTML).")] = None,
        json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the comparison as JSON (schema roofline.comparison/1).")] = None,
        fail_if_slower: Annotated[Optional[float], typer.Option(help="Exit with status 1 when the total kernel time grew by more than this many percent (for CI).")] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing output files.")] = False,
    ) -> None:
        """Compare two profiles: both runs on one roofline with arrows, a table of changes, totals."""
        import json

        from roofline.compare import EXIT_SLOWER, changes_table, compare as compare_analyses, comparison_to_dict
        from roofline.errors import InputError
        from roofline.io import write_bytes, write_text
        from roofline.outputs import FIGURE_FORMATS, figure_bytes

        if by not in ("auto", "name", "phase"):
            raise InputError(f"--by must be auto, name or phase, not {by!r}")
        if png_out is not None and png_out.suffix.lower() not in FIGURE_FORMATS:
            raise InputError(f"unknown chart format {png_out.suffix!r}", path=png_out, hint="use .png, .svg or .pdf")
        from roofline.io import check_writable

        for target in (png_out, html_out, json_out):
            if target is not None:
                check_writable(target, force=force)
        from roofline import api

        table_b = api.read(profile_files(before), fp16=fp16)
        table_a = api.read(profile_files(after), fp16=fp16)
        group = by if by != "auto" else ("phase" if _has_phases(table_b) and _has_phases(table_a) else "name")
        mb, ma = machine_before or machine, machine_after or machine
        analysis_b = api.analyze(table_b, mb if mb else None, by=group)
        analysis_a = api.analyze(table_a, ma if ma else None, by=group)
        comp = compare_analyses(analysis_b, analysis_a)


        # Wide enough for the table in CI logs (not a terminal); a terminal keeps its own width.
        stdout_console().print(changes_table(comp, top=top))
        for side, table in (("before", table_b), ("after", table_a)):
            for w in table.warnings:
                typer.echo(f"warning ({side}): {w}", err=True)
        if json_out is not None:
            text = json.dumps(comparison_to_dict(comp), indent=2, allow_nan=False)
            typer.echo(f"wrote {write_text(json_out, text + chr(10), force=force)}")
        if png_out is not None:
            from roofline.views.compare_chart import comparison_figure

            data = figure_bytes(comparison_figure(comp, top=top), png_out.suffix)
            typer.echo(f"wrote {write_bytes(png_out, data, force=force)}")
        if html_out is not None:
            from roofline.views.compare_chart import comparison_plotly

            page = comparison_plotly(comp, top=top).to_html(full_html=True, include_plotlyjs=True,
                                                            config={"displaylogo": False})
            typer.echo(f"wrote {write_text(html_out, page, force=force)}")
        if fail_if_slower is not None and comp.slower_than(fail_if_slower):
            pct = comp.totals["time_change_pct"]
            typer.echo(f"roofline: total kernel time grew by {pct:.1f}% (more than {fail_if_slower:g}%)", err=True)
            raise typer.Exit(EXIT_SLOWER)

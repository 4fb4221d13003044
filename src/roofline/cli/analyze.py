"""`roofline analyze FILE...` and `roofline demo`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from roofline.cli.console import stdout_console

from roofline.outputs import OutputRequest, check_targets, save_outputs


class By(str, Enum):
    name = "name"
    launch = "launch"
    phase = "phase"


class Fp16(str, Enum):
    ncu = "ncu"
    paper = "paper"


def print_analysis(analysis, *, top: int, explain: str | None = None, metrics=None) -> None:
    """Print the summary and the ranked table (and one kernel's diagnosis) to the terminal."""
    from roofline.views.terminal import kernel_table_renderable, summary_renderable

    console = stdout_console()
    console.print(summary_renderable(analysis))
    console.print(kernel_table_renderable(analysis, top=top))
    try:
        from roofline.guidance import advice_renderable, explain_renderable
    except ImportError:
        advice_renderable = explain_renderable = None
    if advice_renderable is not None and explain is None:
        console.print(advice_renderable(analysis, metrics, top=min(top, 5)))
    if explain is not None:
        if explain_renderable is None:
            from roofline.errors import RooflineError

            raise RooflineError("--explain needs the guidance module, which is not installed")
        console.print(explain_renderable(analysis, metrics, explain))


def register(app: typer.Typer) -> None:
    @app.command()
    def analyze(
        files: Annotated[list[Path], typer.Argument(help="ncu CSV exports (raw or details page) or .ncu-rep reports; several files describing the same launches are merged.")],
        machine: Annotated[Optional[list[str]], typer.Option("--machine", "-m", help="Ceilings: our machine JSON, an ERT roofline.json/sum file, or a GPU spec name (roofline machine --list-specs). Repeat to combine (first wins). Default: the profile's own peak metrics.")] = None,
        by: Annotated[By, typer.Option(help="One row per kernel name, per launch, or per phase and name.")] = By.name,
        top: Annotated[int, typer.Option(help="Kernels to show and label.")] = 10,
        fp16: Annotated[Fp16, typer.Option(help="FP16 FLOP convention: ncu (2 hadd + 2 hmul + 4 hfma, paired half instructions) or paper (hadd + hmul + 2 hfma).")] = Fp16.ncu,
        json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the analysis as JSON (schema roofline.analysis/1).")] = None,
        csv_out: Annotated[Optional[Path], typer.Option("--csv", help="Write the per-kernel table as CSV.")] = None,
        html_out: Annotated[Optional[Path], typer.Option("--html", help="Write an interactive, self-contained HTML report.")] = None,
        png_out: Annotated[Optional[Path], typer.Option("--png", help="Write the hierarchical roofline chart (.png, .svg or .pdf).")] = None,
        explain: Annotated[Optional[str], typer.Option(help="Print the full diagnosis of one kernel (name or unique part of it).")] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing output files.")] = False,
    ) -> None:
        """Hierarchical roofline of profiled kernels: a ranked table, and charts and files on request."""
        from roofline import api

        request = OutputRequest(json=json_out, csv=csv_out, html=html_out, png=png_out, force=force, top=top)
        check_targets(request)  # refuse before reading anything
        table = api.read(files, fp16=fp16.value)
        analysis = api.analyze(table, machine if machine else None, by=by.value)
        print_analysis(analysis, top=top, explain=explain, metrics=table)
        for path in save_outputs(analysis, request, diagnoses=table):
            typer.echo(f"wrote {path}")

    @app.command()
    def demo(
        outdir: Annotated[Path, typer.Option("--outdir", "-o", help="Folder for the chart and report.")] = Path("."),
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing output files.")] = False,
    ) -> None:
        """Analyze the bundled example: the Hierarchical Roofline paper's DeepCAM LAMB-optimizer kernels on a V100 (no GPU needed)."""
        from roofline import api

        profiles, machine_file = api.example_files()
        request = OutputRequest(
            html=outdir / "roofline-demo.html", png=outdir / "roofline-demo.png",
            json=outdir / "roofline-demo.json", force=force, top=5,
        )
        check_targets(request)
        table = api.read(profiles, fp16="paper")
        analysis = api.analyze(table, machine_file, by="name")
        typer.echo("DeepCAM (PyTorch, FP32, LAMB optimizer step) on V100-SXM2, from the paper authors' ncu files\n")
        print_analysis(analysis, top=10, metrics=table)
        for path in save_outputs(analysis, request, diagnoses=table):
            typer.echo(f"wrote {path}")

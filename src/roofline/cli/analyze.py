"""`roofline analyze FILE...` and `roofline demo`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from roofline.cli.console import Messages, messages_for, results_console
from roofline.cli.options import (MACHINE_HELP, PARQUET_HELP, PATH, By, Ceilings, Fp16, Sort, Work,
                                  allow_other_machine_option, by_option, ceilings_option, depth_option, filter_option,
                                  force_option, fp16_option, nvtx_option, quiet_option, read_ahead_of, sort_option,
                                  work_option)
from roofline.errors import MachineError, RooflineError, ToolNotFoundError

if TYPE_CHECKING:
    import pandas as pd

    from roofline.api import Analysis, Breakdown, KernelTable, Machine, ReplayTimes


class Window(str, Enum):
    run = "run"
    phase = "phase"
    step = "step"
    none = "none"


BREAKDOWN_HELP = ("For an Nsight Systems timeline: where each device's time went (kernel time by bound, exposed "
                  "communication and copies, idle gaps by cause, overlap, savable time) over the whole run, each "
                  "NVTX phase, or each step (a repeating NVTX range, docs/timeline.md); none: not shown. Default: run for a "
                  "timeline (docs/timeline.md). Several timelines (one per rank, or a folder): each rank broken down "
                  "alone and combined across ranks by --engine (duckdb, or dask://HOST:PORT): mean, min and max per "
                  "window, the straggler against the median, idle by cause; --top: the windows with the largest "
                  "stragglers.")


ENGINE_HELP = ("What reads the files: pandas (in memory), duckdb (out of core, embedded) or dask://HOST:PORT (a "
               "Dask cluster; pip install 'roofline[cluster]'). Default: duckdb for several per-rank Parquet kernel "
               "tables (NAME.rankN.parquet), pandas otherwise. Out of core, the ranks are pooled as roofline merge "
               "does and --by launch, --depth, --filter, --nvtx, --parquet, --estimate and --explain are refused; "
               "per-rank timelines (with a counting profile) are joined and tabled one rank at a time for duckdb "
               "(docs/engines.md).")
ESTIMATE_HELP = ("A counter-free estimate of the same program (.kernels.json, e.g. roofline profile --torch's "
                 "PREFIX.estimate.kernels.json): print measured vs estimated time, FLOPs and DRAM bytes per "
                 "operator (or per module under --by module), with their ratios.")


def with_cpu_ceilings(table: KernelTable, machine: Sequence[str] | None, messages: Messages, *,
                      measure: bool = True) -> tuple[KernelTable, Sequence[str] | Machine | None]:
    """``(table, machine)``: with no ``--machine``, a table of CPU work that ran on this host's CPU is
    held to this CPU's measured ceilings, cached per host and CPU and measured on the first run
    (:func:`roofline.api.cpu_machine_for`, ``measure``: whether it may measure now), and the sentence
    saying where they came from, or why there are none, joins the table's notes (terminal and JSON)."""
    if machine:
        return table, machine
    from roofline import api

    try:
        found, said = api.cpu_machine_for(table, measure=measure, announce=messages.note)
    except (MachineError, ToolNotFoundError) as exc:
        found, said = None, f"no CPU ceilings: measuring this CPU failed ({exc.render()}); pass --machine"
    if said:
        table = dataclasses.replace(table, warnings=(*table.warnings, said))
    return table, found


def analyze_by(table: KernelTable, machine: Sequence[str] | Machine | None, by: str, depth: Optional[int], work: str,
               allow_other_machine: bool = False) -> Analysis:
    """``api.analyze`` of ``table`` (its module paths already cut to ``depth``: :func:`roofline.api.at_depth`) grouped
    ``by`` against ``machine`` (the ``--machine`` values, or a Machine), noting ``depth`` on the result."""
    from roofline import api

    return api.analyze(table, machine if machine else None, by=by, work=work, depth=depth,
                       allow_other_machine=allow_other_machine)


def comparison_for(table: KernelTable, estimated: KernelTable, by: str, depth: Optional[int]) -> pd.DataFrame:
    """Measured (``table``) vs the ``estimated`` KernelTable, per operator, or per module under ``by="module"``."""
    from roofline import api

    view = "module" if by == "module" else "op"
    return api.measured_vs_estimated(table, estimated, by=view, depth=depth if view == "module" else None)


def print_comparison(comparison: pd.DataFrame, *, by: str, top: int, to_stderr: bool = False) -> None:
    """Print the measured-vs-estimated table (results: stdout, stderr when stdout carries a file)."""
    from roofline.views.terminal import comparison_renderable

    results_console(to_stderr=to_stderr).print(
        comparison_renderable(comparison, by="module" if by == "module" else "op", top=top))


def print_breakdown(split: Breakdown, *, top: int, to_stderr: bool = False) -> None:
    """Print where each device's time went (:func:`roofline.api.breakdown`), notes included."""
    from roofline.views.time_breakdown import breakdown_renderable

    results_console(to_stderr=to_stderr).print(breakdown_renderable(split, top=top))


def print_replay(replay: ReplayTimes, *, top: int, labels: Mapping[str, str] | None = None,
                 to_stderr: bool = False) -> None:
    """Print a joined timeline's production time against Nsight Compute's replay (:func:`roofline.api.replay_times`),
    kernels named by ``labels`` (the analysis's)."""
    from roofline.views.replay_time import replay_renderable

    results_console(to_stderr=to_stderr).print(replay_renderable(replay, top=top, labels=labels))


def analyze_ranks(files: Sequence[Path], window: str, engine: Optional[str], request: Any, messages: Messages,
                  **refused: Any) -> None:
    """``roofline analyze RANK_TIMELINES... --breakdown WINDOW``: each rank's timeline broken down alone and
    combined across ranks (:func:`roofline.api.rank_breakdown`), printed, and written as JSON on request.
    ``refused``: option name -> value of the options that need one table in memory (None or False: not given)."""
    from roofline import api
    from roofline.views.rank_time import rank_breakdown_json, rank_breakdown_renderable

    given = [name for name, value in refused.items() if value not in (None, False)]
    if given:
        raise RooflineError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} one table of kernels; "
                            "several timelines with --breakdown are broken down one rank at a time",
                            hint="analyze one rank's timeline for those, or leave --breakdown out to stack the "
                                 "timelines in memory")
    split = api.rank_breakdown(files, window=window, engine=engine)
    results_console(to_stderr=request.to_stdout).print(rank_breakdown_renderable(split, top=request.top, notes=False))
    messages.notes(split.notes)
    if request.json is not None:
        for path in api.write_all([(request.json, lambda: rank_breakdown_json(split))], force=request.force,
                                  inputs=request.inputs):
            messages.wrote(path)


#: The file in `roofline demo`'s folder that lists what it wrote (:func:`roofline.api.record_text`).
DEMO_RECORD = ".roofline-demo.sha256"


def print_analysis(analysis: Analysis, *, top: int, explain: str | None = None,
                   metrics: KernelTable | pd.DataFrame | None = None,
                   sort: str = "time", to_stderr: bool = False, messages: Messages | None = None) -> None:
    """Print the summary, the ranked table and the advice, or, with ``explain``, only the diagnosis
    of the kernels it matches. Results go to stdout (stderr when stdout carries a file); the
    analysis's notes go to ``messages`` (stderr), or into the summary when there is none."""
    from roofline import api
    from roofline.views.terminal import kernel_table_renderable, summary_renderable

    console = results_console(to_stderr=to_stderr)
    if explain is not None:
        try:
            diagnosis = api.diagnosis(analysis, metrics, explain)
        except ImportError:
            raise RooflineError("--explain needs the guidance module, which is not installed") from None
        console.print(diagnosis)
        return
    console.print(summary_renderable(analysis, notes=messages is None))
    console.print(kernel_table_renderable(analysis, top=top, sort=sort))
    try:
        advice = api.advice(analysis, metrics, top=min(top, 5))
    except ImportError:  # the guidance views are optional: the table alone
        pass
    else:
        console.print(advice)
    if messages is not None:
        messages.notes(analysis.notes)


def register(app: click.Group) -> None:
    @app.command()
    @click.argument("files", nargs=-1, required=True, type=PATH, help=(
        "ncu CSV exports (raw or details page), .ncu-rep reports, Nsight Systems timelines (.sqlite exports, "
        ".nsys-rep), kernel tables (.kernels.json, .parquet), or folders of them; - reads standard input. Several "
        "files describing the same launches are merged."))
    @click.option("--machine", "-m", multiple=True, help=MACHINE_HELP + (
        " Repeat to combine (first wins). Default: a measured file of the same GPU shipped with roofline, else its "
        "spec, else the profile's peak metrics (docs/ceilings.md); for CPU work recorded on this host (roofline "
        "profile --torch without a GPU), this CPU's measured ceilings, cached."))
    @allow_other_machine_option
    @by_option
    @depth_option
    @click.option("--estimate", type=PATH, help=ESTIMATE_HELP)
    @click.option("--top", type=click.IntRange(min=1), default=10,
                  help="Kernels to show and label (and breakdown windows per device).")
    @click.option("--breakdown", type=click.Choice(Window), help=BREAKDOWN_HELP)
    @sort_option
    @work_option
    @filter_option
    @nvtx_option
    @fp16_option
    @click.option("--json", "json_out", type=PATH,
                  help="Write the analysis as JSON (schema roofline.analysis/1); - writes standard output.")
    @click.option("--csv", "csv_out", type=PATH, help="Write the per-kernel table as CSV; - writes standard output.")
    @click.option("--html", "html_out", type=PATH, help="Write an interactive, self-contained HTML report.")
    @click.option("--png", "png_out", type=PATH, help="Write the hierarchical roofline chart (.png, .svg or .pdf).")
    @click.option("--parquet", "parquet_out", type=PATH, help=PARQUET_HELP)
    @ceilings_option
    @click.option("--explain", help=("Print only the full diagnosis of the kernels whose name matches this regular "
                                     "expression (or exact name), longest first."))
    @click.option("--engine", help=ENGINE_HELP)
    @force_option
    @quiet_option
    @click.pass_context
    def analyze(
        ctx: click.Context,
        files: tuple[Path, ...],
        machine: tuple[str, ...],
        allow_other_machine: bool,
        by: By,
        depth: Optional[int],
        estimate: Optional[Path],
        top: int,
        breakdown: Optional[Window],
        sort: Sort,
        work: Work,
        kernel_filter: Optional[str],
        nvtx: Optional[str],
        fp16: Fp16,
        json_out: Optional[Path],
        csv_out: Optional[Path],
        html_out: Optional[Path],
        png_out: Optional[Path],
        parquet_out: Optional[Path],
        ceilings: Ceilings,
        explain: Optional[str],
        engine: Optional[str],
        force: bool,
        quiet: bool,
    ) -> None:
        """Hierarchical roofline of profiled kernels: a ranked table, and charts and files on request."""
        from roofline import api

        messages = messages_for(ctx, quiet)
        request = api.OutputRequest(json=json_out, csv=csv_out, html=html_out, png=png_out, parquet=parquet_out,
                                    force=force, top=top, ceilings=ceilings.value,
                                    inputs=api.input_files([*files, *([estimate] if estimate else [])], machine))
        api.check_targets(request)  # refuse before reading anything
        ranks = api.rank_timelines(files) if breakdown not in (None, Window.none) else None
        if ranks is not None:  # one timeline per rank: broken down one at a time, combined by the engine
            analyze_ranks(ranks, (breakdown or Window.run).value, engine, request, messages,
                          **{"--csv": csv_out, "--html": html_out, "--png": png_out, "--parquet": parquet_out,
                             "--estimate": estimate, "--explain": explain, "--filter": kernel_filter, "--nvtx": nvtx,
                             "--depth": depth, "--machine": machine or None, "--by": by.value != "name" or None,
                             "--work": work.value != "flops" or None})
            return
        reader = api.engine_for(files, engine)
        if reader.out_of_core:
            api.check_out_of_core(reader, **{"--by launch": by.value == "launch", "--depth": depth,
                                             "--filter": kernel_filter, "--nvtx": nvtx, "--parquet": parquet_out,
                                             "--estimate": estimate, "--explain": explain})
            analysis, grouped = api.analyze_out_of_core(files, machine or None, by=by.value, work=work.value,
                                                        engine=reader, allow_other_machine=allow_other_machine,
                                                        fp16=fp16.value)
            if png_out is not None:
                api.check_drawable(analysis)
            print_analysis(analysis, top=top, sort=sort.value, to_stderr=request.to_stdout, messages=messages)
            replay = api.replay_times(grouped, analysis) if analysis.match is not None else None
            if replay is not None and replay.launches:
                print_replay(replay, top=top, labels=analysis.labels, to_stderr=request.to_stdout)
            elif analysis.match is not None and by.value != "name":
                messages.note("production against replay time is summed per kernel out of core: analyze with --by "
                              "name (the default) for it")
            companion = None
            if html_out is not None and analysis.work != "instructions":
                companion = api.instruction_analysis(grouped, machine or None, by=by.value,
                                                     allow_other_machine=allow_other_machine)
            for path in api.save(analysis, request, instructions=companion, replay=replay):
                messages.wrote(path)
            return
        launches = api.select_launches(api.read(files, fp16=fp16.value, ahead=read_ahead_of(ctx)),
                                        kernels=kernel_filter, nvtx=nvtx)
        table, chosen = with_cpu_ceilings(api.at_depth(launches, depth), machine, messages)
        analysis = analyze_by(table, chosen, by.value, depth, work.value, allow_other_machine)
        split = None  # where the time went: a timeline's, unless told otherwise (refused before printing)
        if breakdown is not Window.none and (breakdown is not None or table.activity is not None):
            split = api.breakdown(table, analysis, window=(breakdown or Window.run).value)
        estimated = api.read(estimate) if estimate is not None else None
        if png_out is not None:
            api.check_drawable(analysis)  # before printing or writing anything
        print_analysis(analysis, top=top, explain=explain, metrics=table, sort=sort.value,
                       to_stderr=request.to_stdout, messages=messages)
        if split is not None:
            print_breakdown(split, top=top, to_stderr=request.to_stdout)
        replay = api.replay_times(table, analysis) if analysis.match is not None else None
        if replay is not None and replay.launches:
            print_replay(replay, top=top, labels=analysis.labels, to_stderr=request.to_stdout)
        comparison = None
        if estimated is not None:
            comparison = comparison_for(table, estimated, by.value, depth)
            print_comparison(comparison, by=by.value, top=top, to_stderr=request.to_stdout)
        companion = None
        if html_out is not None and analysis.work != "instructions":  # the report shows both rooflines
            companion = api.instruction_analysis(table, chosen if chosen else None, by=by.value,
                                                 allow_other_machine=allow_other_machine)
        for path in api.save(analysis, request, diagnoses=table, instructions=companion, table=launches,
                             estimates=estimated, comparison=comparison, breakdown=split, replay=replay):
            messages.wrote(path)

    @app.command()
    @click.option("--outdir", "-o", type=PATH, default=Path("."),
                  help="Folder for the chart and report (created if missing).")
    @ceilings_option
    @click.option("--force", is_flag=True,
                  help="Overwrite existing output files (a rerun replaces its own without it).")
    @quiet_option
    @click.pass_context
    def demo(ctx: click.Context, outdir: Path, ceilings: Ceilings, force: bool, quiet: bool) -> None:
        """Analyze the bundled example: the Hierarchical Roofline paper's DeepCAM LAMB-optimizer kernels on a V100 (no GPU needed).

        A rerun replaces the files an earlier run wrote (.roofline-demo.sha256 in the folder lists them
        with their SHA-256); any other file of those names is kept unless --force.
        """
        from roofline import api

        messages = messages_for(ctx, quiet)
        profiles, machine_file = api.example_files()
        html, png, json_path = (outdir / f"roofline-demo{suffix}" for suffix in (".html", ".png", ".json"))
        record = outdir / DEMO_RECORD
        inputs = (*profiles, machine_file)
        api.check_replaceable(record, (html, png, json_path), force=force)  # what exists is demo's own, or forced
        request = api.OutputRequest(html=html, png=png, json=json_path, force=True, top=5, ceilings=ceilings.value,
                                    inputs=inputs)
        api.check_targets(request)
        api.check_writable(record, force=True, inputs=inputs)
        table = api.read(profiles, fp16="paper")
        analysis = api.analyze(table, machine_file, by="name")
        console = results_console()
        console.print("DeepCAM (PyTorch, FP32, LAMB optimizer step) on V100-SXM2, from the paper authors' ncu files\n")
        print_analysis(analysis, top=10, metrics=table, messages=messages)
        written = api.save(analysis, request, diagnoses=table)
        api.write_text(record, api.record_text(written), force=True, inputs=inputs)
        for path in written:
            messages.wrote(path)

"""`roofline profile [options] -- CMD ARGS...` and `roofline merge FILES... -o OUT`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from roofline.cli.console import Messages, messages_for, results_console
from roofline.cli.options import (PARQUET_HELP, PATH, By, Ceilings, Fp16, Work, allow_other_machine_option,
                                  by_option, ceilings_option, depth_option, quiet_option, work_option)

if TYPE_CHECKING:
    from roofline.api import KernelTable, OutputRequest


def _live_printer(console, status):  # type: ignore[no-untyped-def]
    """Line and progress callbacks: the program's output goes through, ncu's progress becomes a live count."""

    def on_line(line: str, is_ncu: bool) -> None:
        text = line.rstrip("\n")
        if is_ncu and text.startswith(("==PROF== Profiling", "==PROF== Connected", "==PROF== Disconnected")):
            return
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    def on_progress(progress) -> None:  # type: ignore[no-untyped-def]
        last = f" - last: {progress.last_kernel[:60]}" if progress.last_kernel else ""
        status.update(f"ncu: {progress.kernels} kernel launches profiled{last}")

    return on_line, on_progress


def register(app: click.Group) -> None:
    @app.command(context_settings={"allow_interspersed_args": False})
    @click.argument("command", nargs=-1, required=True, help="The program and its arguments, after --.")
    @click.option("--output", "-o", type=PATH, default=Path("roofline-profile"), help=(
        "Prefix of the files written: PREFIX.ncu-rep, PREFIX.ncu.csv, PREFIX.kernels.json (PREFIX.rankN.* under "
        "torchrun, mpirun or srun)."))
    @click.option("--arch", help=(
        "Compute capability for the metric set (e.g. 9.0), or an AMD GPU's gfx target (e.g. gfx942: profiles with "
        "rocprofv3); default: detected with nvidia-smi or NVML, else an AMD GPU's with rocprofv3."))
    @click.option("--metrics", help="Comma-separated ncu metrics to collect instead of the architecture's roofline set.")
    @click.option("--clock-control", default="none", help=(
        "ncu --clock-control: none (default: the clocks the program would get), base (lock base clocks) or reset."))
    @click.option("--kernel-name", help="ncu --kernel-name filter (name, or regex:...).")
    @click.option("--launch-skip", type=click.IntRange(min=0), help="ncu --launch-skip: launches to skip before profiling.")
    @click.option("--launch-count", type=click.IntRange(min=1), help="ncu --launch-count: launches to profile.")
    @click.option("--nvtx-include", multiple=True, help="ncu --nvtx-include range filter (repeatable), e.g. 'forward/'.")
    @click.option("--torch", is_flag=True, help=(
        "PyTorch programs: attribute every kernel to its operator (aten::...), module (DeepCamMini.enc1.0) and "
        "phase, backward kernels to the forward operator and module that caused them, with no change to the "
        "program; records the counter-free estimate of the same operators beside the measured values. Without a "
        "GPU or ncu: the estimate alone."))
    @click.option("--no-estimate", is_flag=True,
                  help="With --torch under ncu: do not record the counter-free estimate beside the measured values.")
    @click.option("--no-counters", is_flag=True, help=(
        "Estimate without hardware counters (PyTorch programs): times from the PyTorch profiler, FLOPs from "
        "formulas, bytes from tensor sizes."))
    @click.option("--no-fallback", is_flag=True, help=(
        "After a counter permission error (ERR_NVGPUCTRPERM), stop instead of continuing without counters."))
    @click.option("--ncu", default="ncu", help="The ncu executable.")
    @click.option("--rocprofv3", default="rocprofv3", help=(
        "The rocprofv3 executable (AMD GPUs: outputs in PREFIX.rocprofv3/, one run of the program per counter pass; "
        "not yet run on AMD hardware)."))
    @click.option("--timeline", is_flag=True, help=(
        "Production times: run the whole program under Nsight Systems (PREFIX.nsys-rep, PREFIX.sqlite), count a "
        "sample of it under Nsight Compute, and give every launch of the timeline the counts of its kernel "
        "(docs/timeline.md); the overheads against the bare program are printed."))
    @click.option("--sample", help=(
        "With --timeline: what Nsight Compute counts, NAME[:N] (the N-th occurrence of the NVTX range NAME; default "
        "N=2) or 'all'; default: the second occurrence of the outermost repeated NVTX range (the second training "
        "step)."))
    @click.option("--nsys", default="nsys", help="The nsys executable (--timeline).")
    @click.option("--osrt", is_flag=True, help="With --timeline: trace OS runtime calls too (nsys -t osrt).")
    @click.option("--qdstrm-importer", "importer", help=(
        "With --timeline: the QdstrmImporter that turns the capture of a target-only nsys (PREFIX.qdstrm) into "
        "PREFIX.nsys-rep; default: one beside nsys, in Nsight Compute's host folders or on PATH."))
    @click.option("--machine", "-m", multiple=True, help=(
        "Ceilings (as for roofline analyze); default: a measured file of the same GPU shipped with roofline, else "
        "its spec, else the profile's peak metrics; for a program run on the CPU, this CPU's measured ceilings "
        "(measured once, about 10 s, and cached per host and CPU)."))
    @allow_other_machine_option
    @by_option
    @depth_option
    @click.option("--top", type=click.IntRange(min=1), default=10, help="Kernels to show and label.")
    @click.option("--fp16", type=click.Choice(Fp16), default=Fp16.ncu, help="FP16 FLOP convention (see roofline analyze).")
    @click.option("--json", "json_out", type=PATH, help="Write the analysis as JSON.")
    @click.option("--csv", "csv_out", type=PATH, help="Write the per-kernel table as CSV.")
    @click.option("--html", "html_out", type=PATH, help="Write an interactive HTML report.")
    @click.option("--png", "png_out", type=PATH, help="Write the roofline chart (.png, .svg or .pdf).")
    @click.option("--parquet", "parquet_out", type=PATH,
                  help=PARQUET_HELP + " Under a launcher: NAME.rankN.parquet, for roofline merge.")
    @ceilings_option
    @work_option
    @click.option("--force", is_flag=True,
                  help="Overwrite existing output files (never the program or its inputs).")
    @quiet_option
    @click.pass_context
    def profile(
        ctx: click.Context,
        command: tuple[str, ...],
        output: Path,
        arch: Optional[str],
        metrics: Optional[str],
        clock_control: str,
        kernel_name: Optional[str],
        launch_skip: Optional[int],
        launch_count: Optional[int],
        nvtx_include: tuple[str, ...],
        torch: bool,
        no_estimate: bool,
        no_counters: bool,
        no_fallback: bool,
        ncu: str,
        rocprofv3: str,
        timeline: bool,
        sample: Optional[str],
        nsys: str,
        osrt: bool,
        importer: Optional[str],
        machine: tuple[str, ...],
        allow_other_machine: bool,
        by: By,
        depth: Optional[int],
        top: int,
        fp16: Fp16,
        json_out: Optional[Path],
        csv_out: Optional[Path],
        html_out: Optional[Path],
        png_out: Optional[Path],
        parquet_out: Optional[Path],
        ceilings: Ceilings,
        work: Work,
        force: bool,
        quiet: bool,
    ) -> None:
        """Profile a program with Nsight Compute in one run (or without counters) and analyze it.

        Exit status: 0 profiled; 2 bad input (no ncu, no GPU, program not found, output exists);
        3 the program failed (what was profiled is analyzed); 4 no permission for the GPU counters
        and --no-fallback; 130 interrupted (what was profiled is analyzed).
        """
        from roofline import api

        messages = messages_for(ctx, quiet)
        rank = api.rank(os.environ)
        inputs = _command_files(command)
        for suffix in (".ncu-rep", ".ncu.csv", ".kernels.json", ".nsys-rep", ".sqlite", ".qdstrm", ".rocprofv3"):  # written next to PREFIX
            api.check_not_input(Path(f"{output}{suffix}"), inputs)
        settings = api.ProfileSettings(
            command=tuple(command), output=output, arch=arch,
            metrics=tuple(m.strip() for m in metrics.split(",") if m.strip()) if metrics else None,
            clock_control=clock_control, kernel_name=kernel_name, launch_skip=launch_skip,
            launch_count=launch_count, nvtx_include=tuple(nvtx_include or ()), counters=not no_counters,
            fallback=not no_fallback, ncu=ncu, rocprofv3=rocprofv3, force=force, rank=rank, fp16=fp16.value,
            torch=torch, estimate=not no_estimate, timeline=timeline, nsys=nsys, sample=sample, osrt=osrt,
            importer=importer,
        )
        request = api.OutputRequest(json=_ranked(json_out, rank), csv=_ranked(csv_out, rank),
                                    html=_ranked(html_out, rank), png=_ranked(png_out, rank),
                                    parquet=_ranked(parquet_out, rank), force=force, top=top, ceilings=ceilings.value,
                                    inputs=inputs)
        api.check_targets(request)
        console = results_console(to_stderr=request.to_stdout)  # stdout may carry --json -
        with console.status("starting the program") as status:
            on_line, on_progress = _live_printer(console, status)
            outcome = api.profile(settings, on_line=on_line, on_progress=on_progress)
        for note in outcome.notes:
            messages.note(note)
        if outcome.table is not None:
            _report(outcome.table, machine, by.value, top, request, messages, work=work.value, depth=depth,
                    estimated=outcome.estimate, allow_other_machine=allow_other_machine, measure_cpu=rank is None)
        for path in outcome.files:
            messages.wrote(path)
        ctx.exit(outcome.exit_code)

    @app.command()
    @click.argument("files", nargs=-1, required=True, type=PATH, help=(
        "Per-rank kernel tables (PREFIX.rankN.kernels.json, NAME.rankN.parquet) or profiles."))
    @click.option("--output", "-o", "out", type=PATH, required=True, help=(
        "The merged kernel table: X.parquet (streamed, the fast way for many ranks) or X.kernels.json; - writes "
        "JSON to standard output."))
    @click.option("--fp16", type=click.Choice(Fp16), default=Fp16.ncu,
                  help="FP16 FLOP convention for profiles that are not kernel tables.")
    @click.option("--force", is_flag=True, help="Overwrite an existing output file (never an input).")
    @quiet_option
    @click.pass_context
    def merge(ctx: click.Context, files: tuple[Path, ...], out: Path, fp16: Fp16, force: bool, quiet: bool) -> None:
        """Combine the per-rank kernel tables of a parallel run (torchrun, mpirun, srun) into one."""
        from roofline import api

        messages = messages_for(ctx, quiet)
        ranks, rows = api.merge_ranks(files, out, fp16=fp16.value, force=force)
        messages.info(f"merged {len(files)} files ({ranks} ranks, {rows} rows) into {out}")


def _ranked(path: Optional[Path], rank: Optional[int]) -> Optional[Path]:
    """Per-rank output names: report.html -> report.rank3.html."""
    if path is None or rank is None:
        return path
    return path.with_name(f"{path.stem}.rank{rank}{path.suffix}")


def _command_files(command: Sequence[str]) -> tuple[Path, ...]:
    """The existing files the profiled command names (the program, its scripts and data): never outputs."""
    import shutil

    out = []
    for i, arg in enumerate(command):
        candidates = [arg] + ([shutil.which(arg)] if i == 0 and shutil.which(arg) else [])
        out += [Path(c) for c in candidates if c and Path(c).is_file()]
    return tuple(out)


def _report(launches: KernelTable, machine: Sequence[str] | None, by: str, top: int, request: OutputRequest,
            messages: Messages, work: str = "flops", depth: Optional[int] = None, estimated: KernelTable | None = None,
            allow_other_machine: bool = False, measure_cpu: bool = True) -> None:
    """The one-screen summary, measured against estimated (``--torch``), and the requested files,
    as `roofline analyze` makes them; for a timeline joined with its counts (``--timeline``), also where the
    run's time went and production time against Nsight Compute's replay, as analyze gives them for the same
    files. A CPU program with no ``--machine`` is held to this CPU's
    measured ceilings, measured now when none are cached unless ``measure_cpu`` is false (under a
    launcher, whose ranks would all measure the same cores at once)."""
    from roofline import api
    from roofline.cli.analyze import (analyze_by, comparison_for, print_analysis, print_breakdown, print_comparison,
                                      print_replay, with_cpu_ceilings)

    table, chosen = with_cpu_ceilings(api.at_depth(launches, depth), machine, messages, measure=measure_cpu)
    analysis = analyze_by(table, chosen, by, depth, work, allow_other_machine)
    print_analysis(analysis, top=top, metrics=table.metrics, to_stderr=request.to_stdout, messages=messages)
    split = api.breakdown(table, analysis, window="run") if table.activity is not None else None
    if split is not None:
        print_breakdown(split, top=top, to_stderr=request.to_stdout)
    replay = api.replay_times(table, analysis) if analysis.match is not None else None
    if replay is not None and replay.launches:
        print_replay(replay, top=top, labels=analysis.labels, to_stderr=request.to_stdout)
    comparison = None
    if estimated is not None:
        comparison = comparison_for(table, estimated, by, depth)
        print_comparison(comparison, by=by, top=top, to_stderr=request.to_stdout)
    companion = None
    if request.html is not None and analysis.work != "instructions":  # the report shows both rooflines
        companion = api.instruction_analysis(table, chosen if chosen else None, by=by,
                                             allow_other_machine=allow_other_machine)
    for path in api.save(analysis, request, diagnoses=table.metrics, instructions=companion, table=launches,
                         estimates=estimated, comparison=comparison, breakdown=split, replay=replay):
        messages.wrote(path)

"""`roofline machine`: measure this machine's ceilings, or print a named GPU's theoretical ones.

    roofline machine [--gpu N | --cpu] [--quick | --thorough] [-o machine.json] [--png sweep.png]
                     [--ert-json roofline.json] [--force]
    roofline machine --spec h100-sxm [--clock-mhz 1755] [-o h100.json]
    roofline machine --list-specs

With no ``--gpu`` and no ``--cpu`` it measures GPU 0 when there is one, else the CPU. The
ceilings go to stdout; notes, "wrote FILE" and the warning when the figures look unreliable (the
load average before measuring, the spread of repeats: :mod:`roofline.bench.reliability`) go to
stderr, once each (``--quiet`` silences them).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

import click

from roofline.cli.console import Messages, messages_for, stdout_console
from roofline.cli.options import PATH, finite, quiet_option
from roofline.errors import InputError

if TYPE_CHECKING:
    from roofline.api import Machine, Measurement


def _console() -> Any:
    return stdout_console()


def _absent_notes(absent: dict[str, str]) -> list[tuple[list[str], str]]:
    """Absent ceilings grouped by their reason, in order: one note for int32, conversion and sfu alike."""
    grouped: dict[str, list[str]] = {}
    for key, why in absent.items():
        grouped.setdefault(why, []).append(key)
    return [(keys, why) for why, keys in grouped.items()]


def _check_outputs(paths: list[Optional[Path]], force: bool) -> None:
    from roofline import api

    for p in paths:
        if p is not None:
            api.check_writable(p, force=force)


def _measure(gpu: Optional[int], cpu: bool, mode: Literal["quick", "default", "thorough"],
             quiet: bool = False) -> Measurement:
    from roofline import api

    processor = api.processor_to_measure(gpu, cpu)  # refused before the progress bar shows
    return _with_progress(lambda progress: api.measure_machine(processor, mode=mode, progress=progress), quiet)


def _with_progress(run: Any, quiet: bool = False) -> Any:
    """``run(progress)`` with a progress bar on stderr when it is a terminal (and not ``quiet``)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if quiet or not console.is_terminal:
        return run(None)
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("measuring", total=1.0)

        def progress(label: str, fraction: float) -> None:
            bar.update(task, completed=fraction, description=label)

        return run(progress)


def print_measurement(measurement: Measurement, console: Any, messages: Messages | None = None) -> None:
    """Print a Measurement (GPU or CPU): ceilings and checks on ``console``; notes through
    ``messages`` (stderr) when given, else on ``console``."""
    from roofline.units import format_si  # numpy: not for `roofline --help`
    from roofline.views.machine_table import ceilings_table

    m = measurement.machine
    clock = f" at {format_si(m.sm_clock_hz, 'Hz')}" if m.sm_clock_hz else ""
    console.print(f"[bold]{m.name}[/bold]: measured ceilings{clock}")
    console.print(ceilings_table(m, measurement.theoretical, dict(measurement.clock_hz)))
    if measurement.checks:
        console.print("checks (same run): " + ", ".join(
            f"{k} = {v:.3g}" for k, v in measurement.checks.items() if math.isfinite(v)))
    floor = measurement.theoretical.metadata.get("floor") if measurement.theoretical is not None else None
    for note in (*measurement.notes, *([f"theoretical ceilings: {floor}"] if floor else [])):
        if messages is not None:
            messages.note(note)
        else:
            console.print(f"note: {note}")
    if math.isfinite(measurement.elapsed_s):
        console.print(f"measured in {measurement.elapsed_s:.1f} s")


def _clock_mhz(ctx: click.Context, param: click.Parameter, value: Optional[float]) -> Optional[float]:
    """A finite clock in MHz between 1 and 10000 (a range check would call NaN in range)."""
    value = finite(ctx, param, value)
    if value is not None and not 1 <= value <= 10000:
        hint = " (in MHz, not Hz)" if value > 10000 else ""
        raise click.BadParameter(f"{value:g} is not a clock between 1 and 10000 MHz{hint}", ctx=ctx, param=param)
    return value


def register(app: click.Group) -> None:
    @app.command()
    @click.option("--gpu", type=click.IntRange(min=0), help="Measure this GPU (CUDA index).")
    @click.option("--cpu", is_flag=True, help="Measure the CPU, even when there is a GPU.")
    @click.option("--quick", is_flag=True, help="A faster, coarser run.")
    @click.option("--thorough", is_flag=True, help="Longer sweeps, more repeats.")
    @click.option("--output", "-o", type=PATH, help="Write the ceilings as machine JSON (for roofline analyze --machine).")
    @click.option("--png", type=PATH, help="Plot the working-set sweep (bandwidth vs working set).")
    @click.option("--ert-json", type=PATH, help="Also write ERT's roofline.json layout.")
    @click.option("--spec", help="Theoretical ceilings of a named GPU (no GPU needed).")
    @click.option("--clock-mhz", type=float, callback=_clock_mhz,
                  help="With --spec: the SM clock to assume (MHz, 1 to 10000).")
    @click.option("--list-specs", is_flag=True, help="Name the GPUs --spec knows.")
    @click.option("--force", is_flag=True, help="Overwrite existing output files.")
    @quiet_option
    @click.pass_context
    def machine(
        ctx: click.Context,
        gpu: Optional[int],
        cpu: bool,
        quick: bool,
        thorough: bool,
        output: Optional[Path],
        png: Optional[Path],
        ert_json: Optional[Path],
        spec: Optional[str],
        clock_mhz: Optional[float],
        list_specs: bool,
        force: bool,
        quiet: bool,
    ) -> None:
        """Ceilings of this machine (measured, with theoretical alongside) or of a named GPU."""
        console = _console()
        messages = messages_for(ctx, quiet)
        from roofline import api

        if list_specs:
            from roofline.views.machine_table import specs_table

            console.print(specs_table(api.gpu_specs()))
            return
        if quick and thorough:
            raise InputError("--quick and --thorough exclude each other")
        if spec is not None:
            if gpu is not None or cpu or quick or thorough or png is not None:
                raise InputError("--spec gives theoretical ceilings only; it takes -o, --ert-json, --clock-mhz")
            _check_outputs([output, ert_json], force)
            from roofline.views.machine_table import ceilings_table

            theory = api.theoretical(spec, sm_clock_hz=clock_mhz * 1e6 if clock_mhz else None)
            console.print(f"[bold]{theory.name}[/bold]: theoretical ceilings (dense)")
            console.print(ceilings_table(None, theory))
            for keys, why in _absent_notes(theory.metadata.get("absent", {})):
                messages.note(f"{', '.join(keys)}: {why}")
            _write(theory, None, output, ert_json, force, messages)
            return
        if clock_mhz is not None:
            raise InputError("--clock-mhz goes with --spec")
        _check_outputs([output, png, ert_json], force)
        if ert_json is not None:
            api.check_ert_export()  # fail before measuring, not after
        mode: Literal["quick", "default", "thorough"] = "quick" if quick else "thorough" if thorough else "default"
        load = api.load_per_core()  # before measuring: our own threads would count otherwise
        measurement = _measure(gpu, cpu, mode, quiet)
        print_measurement(measurement, console, messages)
        warning = api.reliability_warning(measurement, load)
        if warning:
            messages.warning(warning)
        if png is not None:
            messages.wrote(api.save_sweep(measurement, png, force=force))
        machine = measurement.machine
        if load is not None:  # recorded with the figures it qualifies
            machine = replace(machine, metadata={**machine.metadata, "load_per_core_before": load,
                                                 "reliability_warning": warning})
        _write(machine, measurement, output, ert_json, force, messages)


def _write(machine: Machine, measurement: Measurement | None, output: Optional[Path], ert_json: Optional[Path],
           force: bool, messages: Messages) -> None:
    from roofline import api

    if output is not None:
        messages.wrote(machine.save(output, force=force))
    if ert_json is not None:
        doc = api.ert_document(machine, measurement)
        messages.wrote(api.write_text(ert_json, json.dumps(doc, indent=2) + chr(10), force=force))

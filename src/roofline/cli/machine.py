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

import io
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import typer

from roofline.cli.console import Messages, messages_for, stdout_console
from roofline.cli.options import Quiet, finite

from roofline.errors import InputError, ToolNotFoundError
from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, compute_unit
from roofline.units import format_si


def _console() -> Any:
    return stdout_console()


def _unit(key: str) -> str:
    if key in MEMORY_LEVELS or key not in COMPUTE_KEYS and not key.startswith(("fp", "bf", "tensor")):
        return "B/s"
    return compute_unit(key)


def ceilings_table(measured: Any | None, theory: Any | None, clock_hz: dict[str, float] | None = None) -> Any:
    """A rich Table: each ceiling measured (with spread and clock), theoretical, and their ratio."""
    from rich.table import Table

    from roofline.machine.model import COMPUTE_KEYS, level_order

    clock_hz = clock_hz or {}
    table = Table(title=None, header_style="bold")
    table.add_column("ceiling")
    if measured is not None:
        table.add_column("measured", justify="right")
        table.add_column("spread", justify="right")
        table.add_column("clock", justify="right")
    if theory is not None:
        table.add_column("theoretical", justify="right")
        table.add_column("clock assumed", justify="right")
    if measured is not None and theory is not None:
        table.add_column("measured / theoretical", justify="right")
    machines = [m for m in (measured, theory) if m is not None]
    mem = level_order(sorted({k for m in machines for k in m.memory}))
    comp_keys = {k for m in machines for k in m.compute}
    comp = [k for k in COMPUTE_KEYS if k in comp_keys] + sorted(comp_keys - set(COMPUTE_KEYS))
    assumed = dict(theory.metadata.get("clock_hz", {})) if theory is not None else {}
    for key in mem + comp:
        unit = _unit(key)
        group = "memory" if key in mem else "compute"
        row = [key]
        m_val = (measured.memory if group == "memory" else measured.compute).get(key) if measured else None
        t_val = (theory.memory if group == "memory" else theory.compute).get(key) if theory else None
        if measured is not None:
            spread = measured.spread.get(key)
            row += [format_si(m_val, unit),
                    "-" if spread is None or m_val is None else f"±{100 * spread:.1f}%",
                    format_si(clock_hz.get(key), "Hz") if m_val is not None else "-"]
        if theory is not None:
            clock = assumed.get(key)
            floor = "≥ " if theory.metadata.get("floor") and t_val else ""  # a floor: the CPU may run faster
            row += [floor + format_si(t_val, unit),
                    format_si(clock, "Hz") if clock else ("memory clock" if key == "dram" and t_val else "-")]
        if measured is not None and theory is not None:
            row.append(f"{m_val / t_val:.1%}" if m_val and t_val else "-")
        table.add_row(*row)
    return table


def _specs_table() -> Any:
    from rich.table import Table

    from roofline.machine.specs import SPECS, list_specs
    from roofline.machine.theoretical import theoretical_from_spec

    table = Table(header_style="bold")
    for col in ("spec", "GPU", "architecture", "SMs", "boost clock", "DRAM", "FP32", "dense BF16/FP16 tensor"):
        table.add_column(col)
    for key in list_specs():
        s = SPECS[key]
        m = theoretical_from_spec(s)
        tensor = m.compute.get("tensor_bf16", m.compute.get("tensor_fp16"))
        table.add_row(key, s.name, s.architecture.name, str(s.sms), format_si(s.boost_clock_hz, "Hz"),
                      format_si(m.memory["dram"], "B/s"), format_si(m.compute.get("fp32"), "FLOP/s"),
                      format_si(tensor, "FLOP/s"))
    return table


def _absent_notes(absent: dict[str, str]) -> list[tuple[list[str], str]]:
    """Absent ceilings grouped by their reason, in order: one note for int32, conversion and sfu alike."""
    grouped: dict[str, list[str]] = {}
    for key, why in absent.items():
        grouped.setdefault(why, []).append(key)
    return [(keys, why) for why, keys in grouped.items()]


def _check_outputs(paths: list[Optional[Path]], force: bool) -> None:
    from roofline.writing.safe import check_writable

    for p in paths:
        if p is not None:
            check_writable(p, force=force)


def _ert_exporter() -> Any:
    try:
        from roofline.writing.ert_json import to_ert_json
    except ImportError as exc:
        raise ToolNotFoundError(f"ERT export is not available in this build ({exc})") from None
    return to_ert_json


def _measure(gpu: Optional[int], cpu: bool, mode: Literal["quick", "default", "thorough"], quiet: bool = False) -> Any:
    from roofline.machine import gpu_device as gpu_info

    if cpu and gpu is not None:
        raise InputError("--cpu and --gpu exclude each other")
    if not cpu:
        n = gpu_info.gpu_count()
        if gpu is not None and n == 0:
            raise ToolNotFoundError(f"no NVIDIA GPU found (asked for --gpu {gpu}); --cpu measures the CPU")
        if gpu is not None and gpu >= n:
            raise ToolNotFoundError(f"no GPU {gpu}: this machine has {n} (0 to {n - 1})")
        if n == 0 and gpu is None:
            reason = gpu_info.undetected_gpu_reason()
            if reason:
                raise ToolNotFoundError(f"{reason}; install CuPy for your CUDA, or pass --cpu to measure the CPU")
        if n > 0:
            from roofline.bench.gpu.measure import measure_gpu

            return _with_progress(lambda progress: measure_gpu(device=gpu or 0, mode=mode, progress=progress), quiet)
    try:
        from roofline.bench.cpu.measure import measure_cpu
    except ImportError as exc:
        raise ToolNotFoundError(f"no GPU found and the CPU characterization is not available ({exc})") from None
    return _with_progress(lambda progress: measure_cpu(mode=mode, progress=progress), quiet)


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


def print_measurement(measurement: Any, console: Any, messages: Messages | None = None) -> None:
    """Print a Measurement (GPU or CPU): ceilings and checks on ``console``; notes through
    ``messages`` (stderr) when given, else on ``console``."""
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


def _save_png(measurement: Any, path: Path, force: bool) -> Path:
    from roofline.writing.safe import write_bytes
    from roofline.bench.sweep import plot_sweep

    if not measurement.sweeps:
        raise InputError("this measurement has no working-set sweep to plot", path=path)
    fig = plot_sweep(dict(measurement.sweeps), dict(measurement.cache_sizes) or None,
                     title=f"{measurement.machine.name}: bandwidth vs working set")
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", dpi=150)
    return write_bytes(path, buf.getvalue(), force=force)


def _clock_mhz(value: Optional[float]) -> Optional[float]:
    """A finite clock in MHz between 1 and 10000 (typer's own range check would call NaN out of range)."""
    value = finite(value)
    if value is not None and not 1 <= value <= 10000:
        hint = " (in MHz, not Hz)" if value > 10000 else ""
        raise typer.BadParameter(f"{value:g} is not a clock between 1 and 10000 MHz{hint}")
    return value


def reliability_warning(measurement: Any, load_per_core: float | None) -> str | None:
    """The warning for a measurement whose figures look unreliable, else None (see
    :func:`roofline.bench.reliability.assess`): ``metadata['repeat_ratio']`` per ceiling, the
    CPU benchmark's ``metadata['cpu_share']``, and the load per core read before measuring."""
    from roofline.bench.reliability import assess

    meta = measurement.machine.metadata
    return assess(dict(meta.get("repeat_ratio") or {}), load_per_core, meta.get("cpu_share")).warning


def register(app: typer.Typer) -> None:
    @app.command()
    def machine(
        ctx: typer.Context,
        gpu: Annotated[Optional[int], typer.Option("--gpu", min=0, help="Measure this GPU (CUDA index).")] = None,
        cpu: Annotated[bool, typer.Option("--cpu", help="Measure the CPU, even when there is a GPU.")] = False,
        quick: Annotated[bool, typer.Option("--quick", help="A faster, coarser run.")] = False,
        thorough: Annotated[bool, typer.Option("--thorough", help="Longer sweeps, more repeats.")] = False,
        output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the ceilings as machine JSON (for roofline analyze --machine).")] = None,
        png: Annotated[Optional[Path], typer.Option("--png", help="Plot the working-set sweep (bandwidth vs working set).")] = None,
        ert_json: Annotated[Optional[Path], typer.Option("--ert-json", help="Also write ERT's roofline.json layout.")] = None,
        spec: Annotated[Optional[str], typer.Option("--spec", help="Theoretical ceilings of a named GPU (no GPU needed).")] = None,
        clock_mhz: Annotated[Optional[float], typer.Option("--clock-mhz", callback=_clock_mhz, help="With --spec: the SM clock to assume (MHz, 1 to 10000).")] = None,
        list_specs: Annotated[bool, typer.Option("--list-specs", help="Name the GPUs --spec knows.")] = False,
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing output files.")] = False,
        quiet: Quiet = False,
    ) -> None:
        """Ceilings of this machine (measured, with theoretical alongside) or of a named GPU."""
        console = _console()
        messages = messages_for(ctx, quiet)
        if list_specs:
            console.print(_specs_table())
            return
        if quick and thorough:
            raise InputError("--quick and --thorough exclude each other")
        if spec is not None:
            if gpu is not None or cpu or quick or thorough or png is not None:
                raise InputError("--spec gives theoretical ceilings only; it takes -o, --ert-json, --clock-mhz")
            _check_outputs([output, ert_json], force)
            from roofline.machine.theoretical import theoretical

            theory = theoretical(spec, sm_clock_hz=clock_mhz * 1e6 if clock_mhz else None)
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
            _ert_exporter()  # fail before measuring, not after
        mode: Literal["quick", "default", "thorough"] = "quick" if quick else "thorough" if thorough else "default"
        from roofline.bench.reliability import load_per_core

        load = load_per_core()  # before measuring: our own threads would count otherwise
        measurement = _measure(gpu, cpu, mode, quiet)
        print_measurement(measurement, console, messages)
        warning = reliability_warning(measurement, load)
        if warning:
            messages.warning(warning)
        if png is not None:
            messages.wrote(_save_png(measurement, png, force))
        machine = measurement.machine
        if load is not None:  # recorded with the figures it qualifies
            from dataclasses import replace

            machine = replace(machine, metadata={**machine.metadata, "load_per_core_before": load,
                                                 "reliability_warning": warning})
        _write(machine, measurement, output, ert_json, force, messages)


def _write(machine: Any, measurement: Any, output: Optional[Path], ert_json: Optional[Path], force: bool,
           messages: Messages) -> None:
    if output is not None:
        messages.wrote(machine.save(output, force=force))
    if ert_json is not None:
        from roofline.writing.safe import write_text

        doc = _ert_exporter()(_flops_only(machine), measurement and replace(
            measurement, machine=_flops_only(measurement.machine),
            theoretical=measurement.theoretical and _flops_only(measurement.theoretical)))
        messages.wrote(write_text(ert_json, json.dumps(doc, indent=2) + chr(10), force=force))


def _flops_only(machine: Any) -> Any:
    """``machine`` with its FLOP/s compute ceilings alone: ERT's ``gflops`` holds GFLOP/s, and its readers
    (ours too) take a name without a precision for FP64, so 'INT32 GFLOPs' or 'WARP_INST GFLOPs' would
    come back as FP64."""
    compute = {k: v for k, v in machine.compute.items() if compute_unit(k) == "FLOP/s"}
    sources = {k: v for k, v in machine.sources.items() if not k.startswith("compute.") or k[8:] in compute}
    clocks = {k: v for k, v in machine.clocks.items() if not k.startswith("compute.") or k[8:] in compute}
    return replace(machine, compute=compute, sources=sources, clocks=clocks)

"""The analysis side of the API: read, analyze, plot, compare, project. Each takes profile paths,
a KernelTable, a pandas DataFrame of the kernel table's columns or (plot, compare) an Analysis alike.

    >>> import roofline
    >>> result = roofline.analyze("report.csv", machine="h100-sxm")   # doctest: +SKIP
    >>> result.frame.head()                                            # doctest: +SKIP
    >>> roofline.plot(result).savefig("roofline.png")                  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import pandas as pd

from roofline.analysis import analyze as _analyze
from roofline.analysis.result import Analysis
from roofline.analysis.select import select
from roofline.analysis.work import require_work
from roofline.api.engines import check_out_of_core, engine_for, is_paths
from roofline.comparison import Comparison, compare as _compare
from roofline.errors import InputError, MachineError
from roofline.kernels import KernelTable, cut_modules, validate
from roofline.machine.model import Machine
from roofline.machine.resolve import PROFILE, applied_machine, gpus, load_machine as _load, named_spec, resolve
from roofline.projection import Projection, profile_l2_bytes, project as _project
from roofline.readers import read_profile
from roofline.readers.ncu.ahead import ReadAhead

if TYPE_CHECKING:  # the figures' libraries load only when a chart is drawn
    from matplotlib.figure import Figure
    from plotly.graph_objects import Figure as PlotlyFigure

PathArg = str | PathLike[str]
MachineArg = Machine | PathArg | Sequence[Machine | PathArg]
#: What :func:`analyze`, :func:`compare` and :func:`project` read: a KernelTable, a DataFrame of its
#: columns, or profile paths.
Data: TypeAlias = KernelTable | pd.DataFrame | Sequence[PathArg] | PathArg


def read(paths: Sequence[PathArg] | PathArg, *, fp16: str = "ncu", ahead: ReadAhead | None = None) -> KernelTable:
    """Read profiler output(s) into one kernel table (see :func:`roofline.readers.read_profile`).
    ``ahead``: the parse of one of the files, started before (:func:`read_ahead`)."""
    return read_profile(paths, fp16=fp16, ahead=ahead)


def table_of(data: Data, *, fp16: str = "ncu") -> KernelTable:
    """``data`` as a KernelTable: as it is, a pandas DataFrame of the kernel table's columns checked
    (:func:`roofline.kernels.validate`: missing columns raise :class:`~roofline.errors.InputError`),
    or profile paths read (:func:`read`)."""
    if isinstance(data, KernelTable):
        return data
    if isinstance(data, pd.DataFrame):
        return KernelTable(validate(data, where="the DataFrame given"))
    return read(data, fp16=fp16)


def select_launches(table: KernelTable, *, kernels: str | None = None, nvtx: str | None = None) -> KernelTable:
    """The launches of ``table`` whose kernel name matches ``kernels`` (``re.search``) and that ran in
    the NVTX range ``nvtx`` (its name, else a regular expression): :func:`roofline.analysis.select.select`."""
    return select(table, kernels=kernels, nvtx=nvtx)


def at_depth(table: KernelTable, depth: int | None) -> KernelTable:
    """``table`` with its module paths cut to ``depth`` components (None: as it is), so that an analysis,
    its companion instruction analysis and the advice all see the same modules
    (:func:`roofline.kernels.cut_modules`)."""
    return table if depth is None else dataclasses.replace(table, frame=cut_modules(table.frame, depth))


def load_machine(spec: Machine | PathArg | Sequence[Machine | PathArg]) -> Machine:
    """A Machine from a Machine, a file (ours, ERT json/sum, NERSC txt) or a GPU spec name, or several
    combined (:func:`roofline.machine.resolve.load_machine`)."""
    return _load(spec)


def analyze(
    data: Data,
    machine: MachineArg | None = None,
    *,
    by: str = "name",
    fp16: str = "ncu",
    kernels: str | None = None,
    nvtx: str | None = None,
    work: str = "flops",
    depth: int | None = None,
    allow_other_machine: bool = False,
    engine: str | None = None,
) -> Analysis:
    """Analyze a kernel table (a KernelTable, a DataFrame of its columns, or files, read first: :func:`table_of`)
    against a machine's ceilings; returns an :class:`~roofline.analysis.result.Analysis`.

    ``by``: one row per kernel ``"name"``, per ``"launch"``, per ``"phase"`` and name, per PyTorch
    ``"op"`` and phase, or per ``"module"`` (paths cut to ``depth`` components; None: whole paths).

    ``work``: what the roofline counts: ``"flops"``, ``"ops"`` (FLOPs and integer, conversion and
    integer tensor operations) or ``"instructions"`` (the instruction roofline); a table that holds
    none of that work raises :class:`~roofline.errors.MissingMetricsError` naming the ncu metrics.

    Without ``machine``, each ceiling comes from roofline's rule (:mod:`roofline.machine.resolve`): a measured
    machine file of the same GPU shipped with roofline, else the GPU's spec, else the profile's own
    peak metrics; ``machine="profile"`` holds the kernels to the profile's peak metrics. The profile's
    peaks are kept beside the chosen ceilings (``result.peaks``). A CPU's machine for a GPU profile, or
    the reverse, raises :class:`~roofline.errors.MachineError` unless ``allow_other_machine``
    (:func:`roofline.machine.resolve.applied_machine`).
    ``kernels``: only kernels whose name matches this regular expression (``re.search``);
    ``nvtx``: only launches in this NVTX range (the ``phase``: exact name, else regex).
    Both select before the analysis (totals and shares are of the selection); a selection
    that keeps nothing raises :class:`~roofline.errors.InputError` naming what there is
    (:func:`roofline.analysis.select.select`). To order rows otherwise than by time, use
    :func:`roofline.analysis.select.sort_rows` on ``result.frame``.

    ``engine``: what reads files: ``"pandas"`` (in memory), ``"duckdb"`` (out of core, embedded) or
    ``"dask://HOST:PORT"`` (a Dask cluster); None: DuckDB for the per-rank Parquet tables of a job
    (several ``*.rankN.parquet``), pandas otherwise (:func:`roofline.api.engines.engine_for`). Out of
    core, ``kernels``, ``nvtx``, ``depth`` and ``by="launch"`` are refused (they need the launches in memory).
    """
    if is_paths(data):
        chosen_engine = engine_for(data, engine)  # type: ignore[arg-type]
        if chosen_engine.out_of_core:
            check_out_of_core(chosen_engine, kernels=kernels, nvtx=nvtx, depth=depth)
            from roofline.api.out_of_core import analyze_out_of_core  # DuckDB, pyarrow.parquet: out of core only

            return analyze_out_of_core(data, machine, by=by, work=work, engine=chosen_engine,  # type: ignore[arg-type]
                                       allow_other_machine=allow_other_machine)[0]
    elif engine is not None and engine_for([], engine).out_of_core:
        raise InputError(f"--engine {engine} reads files; this data is already in memory",
                         hint="pass the Parquet files, or leave engine out")
    table = select(table_of(data, fp16=fp16), kernels=kernels, nvtx=nvtx)
    require_work(table.frame, work, table.metric_hints)
    chosen = resolve(table, machine, allow_other_machine=allow_other_machine)
    if chosen.notes:
        table = dataclasses.replace(table, warnings=(*table.warnings, *chosen.notes))
    result = _analyze(table, chosen.machine, by=by, work=work, depth=depth)  # type: ignore[arg-type]
    if "IPython" in sys.modules:  # in Jupyter or IPython, an Analysis displays as the notebook view
        from roofline.views.notebook import register_if_interactive  # (a view: not loaded elsewhere, 15 ms)

        register_if_interactive()
    return dataclasses.replace(result, peaks=chosen.peaks)


def compare(
    before: Analysis | Data,
    after: Analysis | Data,
    machine: MachineArg | None = None,
    *,
    machine_before: MachineArg | None = None,
    machine_after: MachineArg | None = None,
    by: str = "auto",
    fp16: str = "ncu",
    kernels: str | None = None,
    nvtx: str | None = None,
    allow_other_machine: bool = False,
) -> Comparison:
    """Compare two runs (before and after a change, or one program on two GPUs); returns a
    :class:`roofline.comparison.Comparison` (:func:`roofline.comparison.compare`).

    ``before`` and ``after``: each an Analysis, or what :func:`analyze` takes (a KernelTable, a profile
    file, a folder, several files), read, selected (``kernels``, ``nvtx``) and analysed here against
    ``machine_before`` / ``machine_after`` (default ``machine``; None: as :func:`analyze`). ``by``:
    match kernels by ``"name"``, by ``"phase"`` and name, or ``"auto"`` (by phase when both runs have
    phases). An Analysis is compared as it is: giving it a machine or a selection raises
    :class:`~roofline.errors.InputError`, as would reading a per-launch analysis.
    ``allow_other_machine``: as for :func:`analyze`.
    """
    sides = (("before", before, machine if machine_before is None else machine_before),
             ("after", after, machine if machine_after is None else machine_after))
    tables: dict[str, KernelTable] = {}
    for side, data, side_machine in sides:
        if isinstance(data, Analysis):
            if side_machine is not None or kernels is not None or nvtx is not None:
                raise InputError(f"{side} is already an analysis: its machine and kernels are its own",
                                 hint="pass the KernelTable or the profile files to analyse them here")
            continue
        tables[side] = select(table_of(data, fp16=fp16), kernels=kernels, nvtx=nvtx)
    if by == "auto":
        def has_phases(side: str, data: Any) -> bool:
            if side in tables:
                return bool(tables[side].frame["phase"].notna().any())
            return bool(data.by == "phase")

        by = "phase" if all(has_phases(side, data) for side, data, _ in sides) else "name"
    analysed = [data if isinstance(data, Analysis) else
                analyze(tables[side], side_machine, by=by, allow_other_machine=allow_other_machine)
                for side, data, side_machine in sides]
    return _compare(*analysed)


def instruction_analysis(table: KernelTable, machine: MachineArg | None = None,
                         *, by: str = "name", allow_other_machine: bool = False) -> Analysis | None:
    """``table`` analysed with ``work="instructions"`` (the instruction roofline), for a report that
    shows it beside a FLOP or operations roofline; None when no kernel has warp-instruction counts."""
    if "warp_inst" not in table.frame.columns or not table.frame["warp_inst"].notna().any():
        return None
    return analyze(table, machine, by=by, work="instructions", allow_other_machine=allow_other_machine)


def machine_for(table: KernelTable) -> Machine | None:
    """The ceilings roofline's rule chooses for ``table`` with no machine named (:func:`roofline.machine.resolve.resolve`),
    or None (also when it names several GPUs)."""
    return resolve(table).machine


def project(
    data: Data,
    to: MachineArg,
    *,
    source: MachineArg | None = None,
    by: str = "auto",
    fp16: str = "ncu",
    kernels: str | None = None,
    nvtx: str | None = None,
    target_clock_hz: float | None = None,
    allow_other_machine: bool = False,
) -> Projection:
    """Project a measured profile onto another machine (:func:`roofline.projection.project`).

    ``to``: the target's ceilings (a GPU spec name such as ``"h200"``, a machine file, or several
    combined). ``source``: the ceilings of the machine the profile was measured on (``--from``);
    default: like with like, the spec of the GPU the profile names when the target is a spec, else
    the ceilings :func:`roofline.machine.resolve.resolve` chooses (measured file, spec, profile peaks; a note says
    which); ``"profile"``: its peak metrics (completed by the spec) whatever the target. ``by``:
    ``"name"``, ``"phase"`` (totals per phase too) or ``"auto"`` (phase when the profile has phases).
    ``kernels`` / ``nvtx`` select as in :func:`analyze`. ``target_clock_hz``: the SM clock the target
    runs at (default: its machine's own). ``allow_other_machine``: accept a CPU's ceilings (target or
    source) for a GPU profile, or the reverse (:func:`roofline.machine.resolve.applied_machine`; refused by
    default). Returns a :class:`roofline.projection.Projection`.
    """
    table = select(table_of(data, fp16=fp16), kernels=kernels, nvtx=nvtx)
    target, said = applied_machine(to, table, allow_other_machine=allow_other_machine, what="the target")

    if isinstance(source, str) and source == PROFILE:  # the profile's own peak metrics, as asked
        src = resolve(table, PROFILE).machine
    elif source is not None:
        src, notes = applied_machine(source, table, allow_other_machine=allow_other_machine, what="the source machine")
        said += notes
    else:
        src = resolve(table).machine
        spec = named_spec(table)
        if spec is not None and target.source == "theoretical":
            # like with like: the profile's peak metrics and a datasheet spec define some ceilings differently
            # (GH100's L2: ncu's peak of L2 sectors is about twice the whitepaper's 5120 B/clk)
            said.append(f"the source's ceilings from the {spec.name} spec, as the target's are from a spec (like with "
                        "like); --from profile to use its peak metrics instead")
            src = spec
    if src is None:
        named = gpus(table)
        raise MachineError(
            "the ceilings of the machine the profile was measured on are unknown"
            + (f" (it names {len(named)} GPUs: {', '.join(named)})" if len(named) > 1 else
               " (it has no peak metrics and names no GPU we know)"),
            hint="say which machine it ran on: --from a machine JSON or a GPU spec name (roofline machine --list-specs)")
    if by == "auto":
        by = "phase" if table.frame["phase"].notna().any() else "name"
    proj = _project(table, target, src, by=by, target_clock_hz=target_clock_hz,
                    source_l2_bytes=profile_l2_bytes(table))
    return dataclasses.replace(proj, notes=(*said, *proj.notes)) if said else proj


def plot(analysis: Analysis | Data, *, top: int = 8, phase: str | None = None, interactive: bool = False,
         ceilings: str = "used") -> Figure | PlotlyFigure:
    """The hierarchical roofline chart: a matplotlib Figure, or a plotly Figure if ``interactive``;
    for an analysis of ``work="instructions"``, the instruction roofline with its memory-pattern walls.

    ``analysis``: an Analysis, or what :func:`analyze` takes (a KernelTable, profile files), analysed
    first with :func:`analyze`'s defaults (call it yourself to choose the machine or grouping).
    ``ceilings``: ``"used"`` (the precisions the kernels use plus the highest) or ``"all"``.
    """
    if not isinstance(analysis, Analysis):
        analysis = analyze(analysis)
    if getattr(analysis, "work", "flops") == "instructions":
        if interactive:
            from roofline.views.chart.instructions_interactive import instruction_plotly

            return instruction_plotly(analysis)
        from roofline.views.chart.instructions import instruction_figure

        return instruction_figure(analysis, top=top, ceilings=ceilings)
    if interactive:
        from roofline.views.chart.interactive import roofline_plotly

        return roofline_plotly(analysis, ceilings=ceilings)
    from roofline.views.chart.static import roofline_figure

    return roofline_figure(analysis, top=top, phase=phase, ceilings=ceilings)


def example_files() -> tuple[list[Path], Path]:
    """The bundled DeepCAM V100 example: (the 12 per-metric ncu files, the machine JSON)."""
    root = Path(str(resources.files("roofline") / "data" / "examples" / "deepcam_v100"))
    profiles = sorted(root.glob("out.*"))
    return profiles, root / "v100_sxm2_demo_machine.json"

"""Which ceilings a profile is held to: the one place they are chosen.

With no machine named, each ceiling comes from the first of these that has it:

1. a **measured** machine file of the same GPU product that ships with roofline
   (:mod:`roofline.machine.shipped`: a whole ``roofline machine`` run, corrected where a ceiling was
   found wrong);
2. the GPU's **spec** (:mod:`roofline.machine.theoretical`: SMs x rate x clock, bus width x data rate);
3. the profile's own **peak metrics** (:func:`roofline.readers.ncu.peaks.machine_from_profile`: Nsight
   Compute's ``.peak_sustained`` x unit clock), but for the L1's tag-stage peak
   (:data:`roofline.readers.ncu.peaks.L1_TAG_STAGE`: 512 B/clk/SM on Hopper, four times what loads deliver).

Why this order: a measured ceiling is what the hardware delivers; a spec is an upper bound the
hardware approaches; Nsight Compute's peaks are per-unit issue rates, some of them above both (on an
H100, its L1 peak is 4x and its L2 peak 1.8x what the same GPU measured). The profile's peaks are
kept beside (:attr:`Resolved.peaks`) and shown in the JSON and the report, so a user sees both;
``machine="profile"`` holds the kernels to them instead.

A named machine (a file, a spec name, a :class:`Machine`, several combined) is used as given, after
:func:`applied_machine` checks it is of the same kind of processor as the profile. CPU work recorded
on this host (``roofline profile --torch`` without a GPU) is held to this CPU's measured ceilings,
cached per host and CPU: measuring and caching belong with the benchmarks
(:func:`roofline.bench.cpu.cache.cpu_machine_for`, called through :func:`roofline.api.cpu_machine_for`
by the command-line entry points, which decide whether measuring is allowed now).

The device's highest SM clock comes with the ceilings (``metadata.max_sm_clock_hz``): from the
profile's device attributes (:func:`roofline.readers.ncu.peaks.max_clock_hz`), else the measured
file's record of the GPU, else the spec's boost clock. The analysis never scales ceilings above it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import pandas as pd

from roofline.errors import MachineError
from roofline.kernels import KernelTable
from roofline.kernels.vendor import NVIDIA_WORDS, VendorWords, table_words
from roofline.machine.model import Machine, combine

PathArg = str | PathLike[str]
MachineArg = Machine | PathArg | Sequence[Machine | PathArg]

#: ``machine=PROFILE``: the profile's own peak metrics, L1 tag stage included.
PROFILE = "profile"


@dataclass(frozen=True)
class Resolved:
    """The ceilings chosen for a profile.

    ``machine``: the ceilings the analysis uses (None: none known). ``peaks``: the profile's own peak
    metrics, when it has them, for showing beside (never used when a better source has the ceiling).
    ``notes``: how the choice was made, as sentences for the analysis's notes.
    """

    machine: Machine | None
    peaks: Machine | None = None
    notes: tuple[str, ...] = ()


def load_machine(spec: MachineArg) -> Machine:
    """A Machine from a Machine, a file (ours, ERT json/sum, NERSC txt) or a GPU spec name.

    Several are combined, the first that has a ceiling winning (e.g. measured memory
    ceilings from ERT plus datasheet compute ceilings: ``[ert_file, "v100-sxm2"]``); each
    ceiling keeps its source (:attr:`Machine.sources`), and a file that records no clock
    (ERT) is taken at the clock of the first that does, so that the analysis scales them
    all to the kernels' clock alike (see :func:`roofline.machine.model.combine`).

    An ERT file holding several compute entries of one precision (scalar, vector, FMA) gives the
    highest as that precision's ceiling; ``"FILE#ENTRY"`` picks another by its name in the file
    (``"roofline.json#FP64 Scalar GFLOPs"``; several: ``FILE#A#B``), and every entry stays in the
    machine under its own key (:mod:`roofline.readers.machines.ert`).
    """
    if isinstance(spec, Machine):
        return spec
    if isinstance(spec, (list, tuple)):
        return combine([load_machine(s) for s in spec])
    from roofline.readers.machines.files import split_pick

    path, pick = split_pick(spec)  # type: ignore[arg-type]
    if path.exists():
        from roofline.readers import read_machine

        return read_machine(path, pick=pick)
    if pick or path.suffix or len(path.parts) > 1:  # meant as a file
        raise MachineError(
            "no such machine file", path=path,
            hint="give a machine JSON (roofline machine -o FILE), an ERT roofline.json or sum file, "
            "a GPU spec name (roofline machine --list-specs), or 'profile' for the profile's own peak metrics",
        )
    from roofline.machine.theoretical import theoretical

    return theoretical(str(spec))  # a GPU spec name; an unknown one raises with the known names


def applied_machine(spec: MachineArg, table: KernelTable, *, allow_other_machine: bool = False,
                    what: str = "the machine") -> tuple[Machine, list[str]]:
    """:func:`load_machine` of ``spec`` for ``table``, and the notes to give with it: the one place a
    machine given by the caller meets a profile.

    Each part of a combined machine is checked alone (:func:`roofline.machine.processor.check_processor`): a
    CPU's ceilings for a GPU profile, or the reverse, raise :class:`~roofline.errors.MachineError`
    unless ``allow_other_machine`` (then a note says so). The notes also say which of an ERT file's
    compute entries became each precision's ceiling where it had several.
    """
    from roofline.machine.processor import check_processor
    from roofline.readers.machines.files import split_pick

    parts = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    machines = [load_machine(s) for s in parts]
    notes: list[str] = []
    for part, m in zip(parts, machines):
        file = split_pick(part)[0] if isinstance(part, (str, PathLike)) else None
        note = check_processor(table, m, allow=allow_other_machine, what=what,
                               path=file if file is not None and file.exists() else None)
        choice = m.metadata.get("ert_choice_note")
        notes += [n for n in (note, choice if isinstance(choice, str) else None) if n]
    return combine(machines), notes


def gpus(table: KernelTable) -> list[str]:
    """The distinct GPUs the profile names, most launches first: Nsight Compute's device name, or an
    AMD tool's (:data:`roofline.readers.amd.DEVICE_NAME_COLUMN`)."""
    from roofline.readers.amd import DEVICE_NAME_COLUMN
    from roofline.readers.ncu.peaks import device_names

    if table.metrics is None or table.metrics.empty:
        return []
    named = device_names(table.metrics)
    if named or DEVICE_NAME_COLUMN not in table.metrics.columns:
        return named
    amd = table.metrics[DEVICE_NAME_COLUMN].dropna().astype(str)
    return [str(n) for n in amd[amd != ""].value_counts(sort=True).index]


def profile_peaks(table: KernelTable, *, l1_tag_stage: bool = True) -> Machine | None:
    """The profile's own peak metrics as a machine (not completed from a spec), or None (also when it
    names several GPUs)."""
    from roofline.readers.ncu.peaks import machine_from_profile

    if table.metrics is None or table.metrics.empty or len(gpus(table)) > 1:
        return None
    ccs = table.frame["compute_capability"].dropna().unique()
    cc = str(ccs[0]) if len(ccs) == 1 else None  # one architecture: its tensor ceiling can be known
    return machine_from_profile(table.metrics, compute_capability=cc, fp16=table.fp16_convention,
                                fill_from_spec=False, l1_tag_stage=l1_tag_stage)


def named_spec(table: KernelTable) -> Machine | None:
    """Theoretical ceilings (at the boost clock) of the one GPU the profile names, when we have its spec:
    an NVIDIA product, else an AMD Instinct one (at its peak engine clock, for the profile's CU count
    where its metrics record one: :data:`roofline.machine.amd_specs.CU_COUNT_COLUMNS`)."""
    from roofline.machine.specs import spec_for_device_name
    from roofline.machine.theoretical import theoretical_from_spec

    names = gpus(table)
    spec = spec_for_device_name(names[0]) if len(names) == 1 else None
    if spec is None:
        return _amd_named_spec(names[0], table) if len(names) == 1 else None
    machine = theoretical_from_spec(spec)
    meta = {**machine.metadata, "max_sm_clock_hz": spec.boost_clock_hz}
    return dataclasses.replace(machine, metadata=meta)


def _amd_named_spec(name: str, table: KernelTable) -> Machine | None:
    """:func:`named_spec` for an AMD device name: its spec's machine, for the device's CU count when the
    metrics record one (one value over all launches), else for the whole product."""
    from roofline.machine.amd_specs import CU_COUNT_COLUMNS
    from roofline.machine.amd_theory import amd_machine_for_device

    cus: int | None = None
    metrics = table.metrics
    for col in CU_COUNT_COLUMNS:
        if metrics is not None and col in metrics.columns:
            values = pd.to_numeric(metrics[col], errors="coerce").dropna().unique()
            if len(values) == 1 and values[0] > 0:
                cus = int(values[0])
                break
    return amd_machine_for_device(name, cus)


def profile_max_clock(table: KernelTable) -> float | None:
    """The device's highest SM clock (Hz) as the profile records it (the median over launches), or None."""
    from roofline.readers.ncu.peaks import max_clock_hz

    return max_clock_hz(table.metrics)


def resolve(table: KernelTable, machine: MachineArg | None = None, *, allow_other_machine: bool = False) -> Resolved:
    """The ceilings ``table`` is held to: ``machine`` as given, :data:`PROFILE` for the profile's peak
    metrics (completed by the GPU's spec), or with None the rule of this module (measured file > spec >
    the profile's peaks). A named machine goes through :func:`applied_machine` (CPU vs GPU check,
    ``allow_other_machine``)."""
    if isinstance(machine, (list, tuple)) and any(isinstance(m, str) and m == PROFILE for m in machine):
        if len(machine) == 1:
            return resolve(table, PROFILE)
        parts: list[Machine | None] = []
        notes: list[str] = []
        for m in machine:  # each in its place: the first that has a ceiling wins
            if isinstance(m, str) and m == PROFILE:
                own = resolve(table, PROFILE)
                parts.append(own.machine)
                notes += own.notes
            else:
                given, said = applied_machine(m, table, allow_other_machine=allow_other_machine)
                parts.append(given)
                notes += said
        merged = combine([p for p in parts if p is not None])
        return Resolved(_with_max_clock(merged, table, None), profile_peaks(table), tuple(notes))
    if isinstance(machine, str) and machine == PROFILE:
        peaks = profile_peaks(table)
        spec = named_spec(table)
        notes = []
        if peaks is not None and (tag_stage := _tag_stage_note(peaks)) is not None:
            notes.append(tag_stage)
        held = combine([m for m in (peaks, spec) if m is not None]) if peaks is not None else None
        if held is not None and spec is not None:
            notes.append(f"--machine profile: the profile's own peak metrics, completed by the {spec.name} spec")
        return Resolved(_with_max_clock(held, table, spec), peaks, tuple(notes))
    peaks = profile_peaks(table, l1_tag_stage=True)
    if machine is not None:
        given, notes = applied_machine(machine, table, allow_other_machine=allow_other_machine)
        return Resolved(_with_max_clock(given, table, None), peaks, tuple(notes))
    names = gpus(table)
    if len(names) > 1:
        note = (f"the profiles come from {len(names)} GPUs ({', '.join(names)}): no one set of ceilings fits them all; "
                "give a machine (-m), analyze each GPU's files alone, or use roofline compare")
        return Resolved(None, None, (note,))
    from roofline.machine.shipped import shipped_machine

    found = shipped_machine(names[0]) if names else None
    if found is None:
        found = _workload_machine(table)
    measured = found[0] if found is not None else None
    spec = named_spec(table)
    delivered = profile_peaks(table, l1_tag_stage=False)
    chosen = [m for m in (measured, spec, delivered) if m is not None]
    if not chosen:
        return Resolved(None, peaks)
    combined = combine(chosen)
    if names:
        combined = dataclasses.replace(combined, name=names[0])
    notes = [_rule_note(combined, found[1] if found is not None else None, spec, peaks, table_words(table.frame))]
    if peaks is not None and "l1" in peaks.memory and "l1" not in combined.memory:
        notes.append("no L1 ceiling: the profile's only L1 peak is Nsight Compute's tag-stage rate, "
                     "above what loads deliver; measure it (roofline machine) or draw it with --machine profile")
    return Resolved(_with_max_clock(combined, table, measured or spec), peaks, tuple(notes))


def _with_max_clock(machine: Machine | None, table: KernelTable, fallback: Machine | None) -> Machine | None:
    """``machine`` with the device's highest SM clock recorded: the profile's, else its own, else
    ``fallback``'s."""
    if machine is None:
        return None
    highest = profile_max_clock(table) or machine.max_sm_clock_hz or (fallback.max_sm_clock_hz if fallback else None)
    if highest is None or highest == machine.metadata.get("max_sm_clock_hz"):
        return machine
    return dataclasses.replace(machine, metadata={**machine.metadata, "max_sm_clock_hz": highest})


def _workload_machine(table: KernelTable) -> tuple[Machine, Path] | None:
    """The empirical peaks an AMD workload folder holds (its roofline.csv), for its own dispatches."""
    from roofline.readers.amd.kinds import has_roofline_csv

    if not has_roofline_csv(table.sources):  # (every NVIDIA table: no look at its launches, no reader loaded)
        return None
    from roofline.readers.amd.omniperf import workload_machine

    devices = sorted(int(d) for d in pd.unique(table.frame["device"].dropna())) if "device" in table.frame else []
    return workload_machine(table.sources, devices)


def _rule_note(machine: Machine, measured_file: Path | None, spec: Machine | None, peaks: Machine | None,
               words: VendorWords = NVIDIA_WORDS) -> str:
    """Which ceilings came from where, in words (the vendor's: an AMD GPU's vL1D, HBM, Matrix FP16), and how
    to choose otherwise."""
    from roofline.machine.model import sources_summary

    parts = []
    if measured_file is not None and measured_file.name == "roofline.csv":
        parts.append(f"measured ones from the workload's {measured_file} (rocm-amdgpu-bench's empirical peaks)")
    elif measured_file is not None:
        parts.append(f"measured ones from the {machine.name} file shipped with roofline ({measured_file.name})")
    if spec is not None:
        parts.append(f"the {spec.name} spec" + (" where not measured" if measured_file is not None else ""))
    if peaks is not None:
        parts.append("the profile's own peak metrics where " + ("neither has one" if measured_file is not None and spec
                     is not None else "it has none") + " (the profile's are shown beside)")
    summary = sources_summary(machine, words.levels, words.matrix) if words.is_amd else sources_summary(machine)
    return (f"ceilings chosen by roofline's rule ({'; '.join(parts)}): {summary}; "
            "give --machine FILE for your own measured machine, or --machine profile for the profile's peaks")


def _tag_stage_note(peaks: Machine) -> str | None:
    from roofline.readers.ncu.peaks import tag_stage_note

    return tag_stage_note(peaks)

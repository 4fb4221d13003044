"""Readers of Empirical Roofline Toolkit (ERT) results and the NERSC plotting input.

Formats:

- ERT ``roofline.json`` (ERT 1.1.0; the A64FX runs use the same layout): ceilings under
  ``empirical.gflops.data`` and ``empirical.gbytes.data`` as ``[name, value]`` pairs, e.g.
  ``["FP64 GFLOPs", 2772.78]``, ``["L1", 8259.44]``, ``["STREAM HBM", 840.6]``. ``spec`` (vendor
  figures, usually empty) is not read.
- ERT ``sum`` text: ``67.12 GFLOPs`` (newer ERT: ``67.12 DP GFLOPs``), ``7460.41 Weight`` (the
  area under the bandwidth curve, not a ceiling), then ``1068.01 L1`` ... ``47.71 DRAM`` lines,
  then ``META_DATA`` and ``KEY  value`` lines.
- NERSC hierarchical-roofline plotting input (``memroofs``/``mem_roof_names``/``comproofs``/
  ``comp_roof_names`` lines, GB/s and GFLOP/s), e.g. cyanguwa/nersc-roofline's
  ``Plotting/data_hierarchical.txt``; kernel points in the same file (``AI_*``, ``FLOPS``) are not
  ceilings and are not read.

Units. ERT's "GB/s" and "GFLOP/s" are decimal: ERT 1.1.0's ``Scripts/preprocess.py`` computes
``gbytes = bytes / GIGA`` and ``gflops = flops / GIGA`` with ``GIGA = 1000*1000*1000`` and the
time in seconds (the driver prints microseconds, divided by ``MEGA = 1000*1000``);
``Scripts/summary.py`` and ``Python/ert_core.py`` only pick and copy those numbers into the
``sum`` file and ``roofline.json``. (Source: the ERT 1.1.0 tree as mirrored in
ebugger/Empirical-Roofline-Toolkit @ 0f1f8bd03681 and uo-cdux/ert-mirror @ 0e13eb46f43a.) So
1 GB/s here is 1e9 B/s and 1 GFLOP/s is 1e9 FLOP/s. Binary giga (2**30) appears in some
hand-made roofline tables (e.g. the DeepCAM authors' GFLOP/s), never in ERT's output.

Level names map to ours: ``L1``/``L2``/``L3`` as they are, ``DRAM``/``HBM``/``MCDRAM``-like
main memories to ``dram`` (the last word of ``STREAM HBM`` decides), others kept lowercased
(``L4`` -> ``l4``). A bare ``GFLOPs`` (ERT 1.1.0's sum and json) takes the precision from the run's
``ERT_PRECISION`` setting when recorded, else FP64 (ERT's default kernel is double precision)
and the machine's metadata says it was assumed.

Several compute entries of one precision. A file may hold several FLOP ceilings per precision, e.g.
``"FP64 Vector GFLOPs FMA"`` 3499.9, ``"FP64 Vector GFLOPs"`` 1749.95, ``"FP64 Scalar GFLOPs FMA"``
218.75 and ``"FP64 Scalar GFLOPs"`` 109.375, or NERSC's ``'FMA'`` and ``'No-FMA'``. Every entry is
kept with its name: the precision's key (``fp64``) holds the highest entry (the FMA vector one),
unless the caller picks another (``pick``; on the command line ``--machine "FILE#FP64 Scalar GFLOPs"``);
each other entry gets a variant key made of its remaining words (``fp64_vector``, ``fp64_scalar_fma``,
``fp64_scalar``, ``fp64_no_fma``), which the analysis does not hold kernels to and the charts draw with
``--ceilings all``. ``metadata['ert_names']`` maps every key to its entry's name and
``metadata['ert_choice']`` says, per precision with several entries, which one is the ceiling and why.

CPU or GPU. ERT records how its kernels were built (``CONFIG``): ``ERT_GPU`` (CUDA) or ``ERT_HIP``
true is a GPU run; all of ``ERT_GPU``, ``ERT_HIP``, ``ERT_OCL`` and ``ERT_SYCL`` that are recorded
false (ERT 1.1.0 writes them all) is a CPU run, ``metadata['processor']`` ``"cpu"``; OpenCL and SYCL
can target either, so they leave it unknown, as does a file without ``CONFIG`` (NERSC input).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from roofline.errors import MachineError
from roofline.machine.model import MEMORY_ALIASES, Machine, base_compute_key, ceiling_label
from roofline.units import format_si

GIGA = 1e9
_PRECISIONS = {"fp64": "fp64", "dp": "fp64", "double": "fp64", "fp32": "fp32", "sp": "fp32", "single": "fp32",
               "fp16": "fp16", "hp": "fp16", "half": "fp16", "bf16": "bf16"}
_MAIN_MEMORY = {"dram", "hbm", "mcdram", "ddr", "mem", "memory", "gmem"}


def level_name(name: str) -> str:
    """Our memory level for an ERT/NERSC level name ('STREAM HBM' -> 'dram', 'L4' -> 'l4')."""
    words = re.split(r"[\s_]+", name.strip().lower())
    last = words[-1] if words and words[-1] else name.strip().lower()
    if last in _MAIN_MEMORY:
        return "dram"
    return MEMORY_ALIASES.get(last, last)


#: Words of a compute entry's name that say its unit, not which ceiling it is.
_UNIT_WORDS = {"gflops", "gflop", "gflop/s", "gflops/s", "flops", "flop", "flop/s", "tflops", "tflop/s", "peak"}


def compute_name(name: str, default_precision: str | None) -> tuple[str, bool]:
    """Our compute key for an ERT ceiling name and whether its precision was assumed.

    The precision, then the name's other words but the unit, as a variant: 'FP64 GFLOPs' -> ('fp64',
    False); 'DP GFLOPs' -> ('fp64', False); 'GFLOPs' -> (default, True); 'FP64 Vector GFLOPs FMA' ->
    ('fp64_vector_fma', False); 'Peak SP Scalar GFlops' -> ('fp32_scalar', False); NERSC's 'No-FMA' ->
    ('<precision>_no_fma', True). The entry that becomes a precision's ceiling is keyed by the precision
    alone (:func:`choose_compute`).
    """
    words = [w for w in re.split(r"[\s_]+", name.strip().lower()) if w]
    precision = next((_PRECISIONS[w] for w in words if w in _PRECISIONS), None)
    assumed = precision is None
    if precision is None:
        precision = default_precision or "fp64"
    rest = [re.sub(r"[^a-z0-9]+", "_", w).strip("_") for w in words if w not in _PRECISIONS and w not in _UNIT_WORDS]
    return "_".join([precision, *(w for w in rest if w)]), assumed


def _same_name(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def choose_compute(entries: Sequence[tuple[str, str, float]], pick: Sequence[str] = (), *,
                   path: str | Path = "<machine file>") -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """Compute ceilings from a file's entries ``(name, key from compute_name, FLOP/s)``, every one kept.

    Per precision the entry named in ``pick`` (its name, any case, or its key: 'fp64_scalar'), else the
    highest, is the precision's ceiling (key 'fp64'); the others keep their variant keys (a second entry
    of the same key gets '_2', ...). Returns (compute, key -> entry name, precision -> why that entry).
    Raises :class:`MachineError` for a pick that names no entry, or two picks of one precision.
    """
    chosen: dict[str, int] = {}
    for wanted in pick:
        found = [i for i, (name, key, _) in enumerate(entries)
                 if _same_name(name, wanted) or key == wanted.strip().lower()]
        if len(found) != 1:
            listed = ", ".join(repr(name) for name, _, _ in entries)
            raise MachineError(f"{'no' if not found else 'more than one'} compute entry named {wanted!r}; "
                               f"the file's entries: {listed}", path=path)
        precision = base_compute_key(entries[found[0]][1])
        if chosen.get(precision, found[0]) != found[0]:
            raise MachineError(f"two picks for {ceiling_label(precision)}: "
                               f"{entries[chosen[precision]][0]!r} and {entries[found[0]][0]!r}; pick one", path=path)
        chosen[precision] = found[0]
    groups: dict[str, list[int]] = {}
    for i, (_, key, _) in enumerate(entries):
        groups.setdefault(base_compute_key(key), []).append(i)
    compute: dict[str, float] = {}
    names: dict[str, str] = {}
    why: dict[str, str] = {}
    mains: set[int] = set()
    for precision, members in groups.items():
        main = chosen.get(precision, max(members, key=lambda i: entries[i][2]))
        mains.add(main)
        compute[precision], names[precision] = entries[main][2], entries[main][0]
        if len(members) > 1:
            others = ", ".join(f"{entries[i][0]!r} {format_si(entries[i][2], 'FLOP/s')}" for i in members if i != main)
            how = "as picked" if precision in chosen else f"the highest of the file's {len(members)} entries"
            why[precision] = (f"{ceiling_label(precision)} ceiling: {entries[main][0]!r} "
                              f"{format_si(entries[main][2], 'FLOP/s')}, {how} (also kept: {others})")
    for members in groups.values():
        for i in members:
            if i in mains:
                continue  # the precision's ceiling
            key, n = entries[i][1], 2
            while key in compute:
                key, n = f"{entries[i][1]}_{n}", n + 1
            compute[key], names[key] = entries[i][2], entries[i][0]
    return compute, names, why


def _choice_note(why: Mapping[str, str], path: str | Path) -> str:
    return ("; ".join(why.values()) + f"; pick another with --machine '{Path(str(path)).name}#ENTRY NAME' "
            "and draw them all with --ceilings all")


_FLAG = re.compile(r"ERT_(GPU|HIP|OCL|SYCL)['\"]?\s*[:=]?\s*\[?\s*['\"]?(true|false)\b", re.IGNORECASE)


def ert_processor(config: Any) -> tuple[str | None, str]:
    """('cpu' | 'gpu' | None, why) from an ERT CONFIG (a dict, or text holding one); see the module docstring."""
    text = json.dumps(config) if not isinstance(config, str) else config
    flags = {m.group(1).upper(): m.group(2).lower() == "true" for m in _FLAG.finditer(text)}
    if flags.get("GPU") or flags.get("HIP"):
        on = [f"ERT_{k}" for k in ("GPU", "HIP") if flags.get(k)]
        return "gpu", f"ERT run with {' and '.join(on)} true"
    if "GPU" in flags and not any(flags.values()):
        return "cpu", f"ERT run with {', '.join(f'ERT_{k}' for k in ('GPU', 'HIP', 'OCL', 'SYCL') if k in flags)} false"
    return None, ""


def _processor_meta(config: Any) -> dict[str, str]:
    kind, why = ert_processor(config)
    return {"processor": kind, "processor_evidence": why} if kind else {}


def _load_text(path: str | Path) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MachineError("no such file", path=p) from None
    except UnicodeDecodeError as exc:
        raise MachineError(f"not a text file ({exc})", path=p) from None


def _positive(value: Any, what: str, path: str | Path) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise MachineError(f"{what}: {value!r} is not a number", path=path) from None
    if not v > 0:
        raise MachineError(f"{what}: {value!r} is not a positive ceiling", path=path)
    return v


def _config_precision(meta: Any) -> str | None:
    """ERT_PRECISION from a roofline.json CONFIG dict or a stringified CONFIG line, if recorded."""
    text = json.dumps(meta) if not isinstance(meta, str) else meta
    m = re.search(r"ERT_PRECISION'?\"?\s*[:=]\s*\[?\s*['\"]?(FP64|FP32|FP16|DP|SP|HP)", text, re.IGNORECASE)
    return _PRECISIONS.get(m.group(1).lower()) if m else None


def _hostname(meta: Any) -> str | None:
    if isinstance(meta, Mapping):
        host = meta.get("HOSTNAME")
        if isinstance(host, list) and host:
            return str(host[0])
        if isinstance(host, str) and host:
            return host
    text = json.dumps(meta)
    m = re.search(r"HOSTNAME\s+\(\s*\\?['\"]([^'\"\\]+)", text)
    return m.group(1) if m else None


def from_ert_dict(d: Mapping[str, Any], *, path: str | Path = "<ert json>", pick: Sequence[str] = ()) -> Machine:
    """A Machine (source 'measured') from a parsed ERT ``roofline.json``; ``pick``: compute entries to use
    as their precision's ceiling instead of the highest (:func:`choose_compute`)."""
    emp = d.get("empirical")
    if not isinstance(emp, Mapping):
        raise MachineError("not an ERT roofline.json (no 'empirical' section)", path=path)
    gbytes = (emp.get("gbytes") or {}).get("data") or []
    gflops = (emp.get("gflops") or {}).get("data") or []
    if not gbytes and not gflops:
        raise MachineError("ERT roofline.json holds no empirical ceilings", path=path)
    precision = _config_precision(d)
    memory: dict[str, float] = {}
    names: dict[str, str] = {}
    assumed: list[str] = []
    for entry in gbytes:
        if not (isinstance(entry, list) and len(entry) == 2):
            raise MachineError(f"malformed gbytes entry {entry!r}", path=path)
        key = level_name(str(entry[0]))
        memory[key] = _positive(entry[1], f"bandwidth {entry[0]!r}", path) * GIGA
        names[key] = str(entry[0])
    entries: list[tuple[str, str, float]] = []
    for entry in gflops:
        if not (isinstance(entry, list) and len(entry) == 2):
            raise MachineError(f"malformed gflops entry {entry!r}", path=path)
        key, was_assumed = compute_name(str(entry[0]), precision)
        entries.append((str(entry[0]), key, _positive(entry[1], f"compute {entry[0]!r}", path) * GIGA))
        if was_assumed:
            assumed.append(f"{entry[0]!r} taken as {base_compute_key(key)}")
    compute, compute_names, why = choose_compute(entries, pick, path=path)
    host = _hostname(emp.get("metadata")) or _hostname(emp.get("gflops", {}).get("metadata")) or Path(str(path)).stem
    meta: dict[str, Any] = {"format": "ert-json", "ert_names": {**names, **compute_names},
                            "units": "ERT GB/s and GFLOP/s are 1e9", **_processor_meta(d)}
    version = (emp.get("metadata") or {}).get("ERT_VERSION") if isinstance(emp.get("metadata"), Mapping) else None
    if version:
        meta["ert_version"] = version
    if assumed:
        meta["assumed"] = assumed
    if why:
        meta["ert_choice"] = why
        meta["ert_choice_note"] = _choice_note(why, path)
    return Machine(name=str(host), source="measured", memory=memory, compute=compute, metadata=meta)


def read_ert_json(path: str | Path, *, pick: Sequence[str] = ()) -> Machine:
    """Read an ERT ``roofline.json`` (see the module docstring; ``pick`` as :func:`choose_compute`)."""
    try:
        d = json.loads(_load_text(path))
    except json.JSONDecodeError as exc:
        raise MachineError(f"not JSON ({exc})", path=path) from None
    if not isinstance(d, Mapping):
        raise MachineError("not an ERT roofline.json (JSON is not an object)", path=path)
    return from_ert_dict(d, path=path, pick=pick)


_SUM_LINE = re.compile(r"^\s*([0-9.eE+-]+)\s+(.+?)\s*$")


def read_ert_sum(path: str | Path, *, pick: Sequence[str] = ()) -> Machine:
    """Read an ERT ``sum`` text file (see the module docstring; ``pick`` as :func:`choose_compute`)."""
    text = _load_text(path)
    head, sep, meta_text = text.partition("META_DATA")
    if not sep:
        raise MachineError("not an ERT sum file (no META_DATA line)", path=path)
    precision = _config_precision(meta_text)
    memory: dict[str, float] = {}
    names: dict[str, str] = {}
    entries: list[tuple[str, str, float]] = []
    assumed: list[str] = []
    for line in head.splitlines():
        m = _SUM_LINE.match(line)
        if not m:
            continue
        value, label = m.groups()
        if label == "Weight":
            continue  # area under the bandwidth curve, not a ceiling
        if label.endswith("GFLOPs"):
            key, was_assumed = compute_name(label, precision)
            entries.append((label, key, _positive(value, f"compute {label!r}", path) * GIGA))
            if was_assumed:
                assumed.append(f"{label!r} taken as {base_compute_key(key)}")
        else:
            key = level_name(label)
            memory[key] = _positive(value, f"bandwidth {label!r}", path) * GIGA
            names[key] = label
    compute, compute_names, why = choose_compute(entries, pick, path=path)
    if not memory and not compute:
        raise MachineError("ERT sum file holds no ceilings", path=path)
    meta_lines = meta_text.splitlines()
    meta: dict[str, Any] = {"format": "ert-sum", "ert_names": {**names, **compute_names},
                            "units": "ERT GB/s and GFLOP/s are 1e9", **_processor_meta(meta_text)}
    if why:
        meta["ert_choice"] = why
        meta["ert_choice_note"] = _choice_note(why, path)
    for line in meta_lines:
        key, _, value = line.strip().partition(" ")
        if key in ("ERT_VERSION", "OPENMP_THREADS", "MPI_PROCS", "FLOPS"):
            meta[key.lower()] = value.strip()
    if assumed:
        meta["assumed"] = assumed
    host = None
    for line in meta_lines:
        if line.startswith("HOSTNAME"):
            try:
                parsed = ast.literal_eval(line.partition(" ")[2].strip())
                host = str(parsed[0] if isinstance(parsed, tuple) else parsed)
            except (ValueError, SyntaxError, IndexError):
                host = line.partition(" ")[2].strip()
    return Machine(name=host or Path(path).stem, source="measured", memory=memory, compute=compute, metadata=meta)


def read_nersc_txt(path: str | Path, *, precision: str = "fp64", pick: Sequence[str] = ()) -> Machine:
    """Read the NERSC hierarchical-roofline plotting input (``memroofs`` ... lines, GB/s and GFLOP/s).

    The file does not say the precision of ``comproofs``; ``precision`` (default FP64, as in the
    NERSC V100 example) names them and the metadata records the assumption unless a name says it.
    ``pick`` as :func:`choose_compute` (e.g. ``["No-FMA"]``).
    """
    fields: dict[str, list[str]] = {}
    for line in _load_text(path).splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and not parts[0].startswith("#"):
            fields[parts[0]] = [parts[1]]

    def numbers(key: str) -> list[float]:
        return [_positive(v, key, path) for v in fields.get(key, [""])[0].split()]

    def names(key: str) -> list[str]:
        return re.findall(r"'([^']*)'", fields.get(key, [""])[0])

    if "memroofs" not in fields and "comproofs" not in fields:
        raise MachineError("not a NERSC roofline plotting input (no memroofs or comproofs line)", path=path)
    mem_values, mem_names = numbers("memroofs"), names("mem_roof_names")
    comp_values, comp_names = numbers("comproofs"), names("comp_roof_names")
    if len(mem_values) != len(mem_names) or len(comp_values) != len(comp_names):
        raise MachineError("memroofs/comproofs and their names differ in length", path=path)
    memory = {level_name(n): v * GIGA for n, v in zip(mem_names, mem_values)}
    entries: list[tuple[str, str, float]] = []
    assumed = []
    for n, v in zip(comp_names, comp_values):
        key, was_assumed = compute_name(n, precision)
        entries.append((n, key, v * GIGA))
        if was_assumed:
            assumed.append(f"{n!r} taken as {base_compute_key(key)}")
    compute, compute_names, why = choose_compute(entries, pick, path=path)
    meta: dict[str, Any] = {"format": "nersc-txt",
                            "names": {**dict(zip(mem_names, memory)), **{n: k for k, n in compute_names.items()}},
                            "units": "GB/s and GFLOP/s taken as 1e9 (ERT's units)"}
    if assumed:
        meta["assumed"] = assumed
    if why:
        meta["ert_choice"] = why
        meta["ert_choice_note"] = _choice_note(why, path)
    return Machine(name=Path(path).stem, source="measured", memory=memory, compute=compute, metadata=meta)

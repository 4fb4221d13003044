"""The `Machine`: a named set of ceilings, the seam between benchmarks and analysis.

A machine has memory ceilings (bytes per second, one per level of the memory
hierarchy) and compute ceilings (FLOP/s, or OP/s for integer tensor cores), the
SM (or core) clock they apply at, and where they came from. What a machine lacks
is absent, never zero.

JSON layout (schema ``roofline.machine/1``)::

    {"schema": "roofline.machine/1", "name": "V100-SXM2", "source": "measured",
     "sm_clock_hz": 1.53e9,
     "memory":  {"l1": 1.4e13, "l2": 3.0e12, "dram": 8.3e11},
     "compute": {"fp64": 7.0e12, "fp32": 1.4e13, "tensor_fp16": 1.1e14},
     "spread":  {"dram": 0.004},            # optional: relative spread of repeats
     "clocks":  {"compute.tensor_fp16": 1.485e9},  # optional: the SM clock a ceiling was measured
                                            # at, where it is not sm_clock_hz (a GEMM that drew the
                                            # power limit); scaling starts from it
     "sources": {"memory.dram": "measured",  # optional: where each ceiling comes from
                 "compute.fp32": "theoretical", ...},
     "metadata": {...}}                      # optional, free form (GPU, driver, sizes)

``sources`` is optional (files written before it are read as they were): a ceiling it does
not name takes its origin from ``metadata.ceiling_sources`` when that description starts
with a source ("measured: ERT ..."), else the machine's ``source``. ``clocks`` is optional too:
a ceiling it does not name holds at ``sm_clock_hz``. ``metadata.max_sm_clock_hz`` (or
``metadata.device.max_sm_clock_hz``, what ``roofline machine`` records) is the device's highest SM
clock: the analysis never scales ceilings above it.

The level and compute-key vocabulary (``MEMORY_LEVELS``, ``COMPUTE_KEYS``, units) is in
:mod:`roofline.machine.keys`; it is importable from here too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from roofline.errors import MachineError
from roofline.kernels.vendor import NVIDIA_WORDS, machine_vendor, words_for
from roofline.machine.keys import (
    CLOCK_SCALED_MEMORY,
    COMPUTE_KEYS,
    FLOP_KEYS,
    INSTRUCTION_KEYS,
    MEMORY_ALIASES,
    MEMORY_LEVELS,
    OP_KEYS,
    SOURCES,
    TRANSACTION_BYTES,
    base_compute_key,
    ceiling_id,
    compute_unit,
    compute_variant,
    level_order,
    variant_words,
)

SCHEMA = "roofline.machine/1"

#: The model, and the vocabulary it is written in (:mod:`roofline.machine.keys`), importable from here.
__all__ = ["SCHEMA", "SOURCES", "MEMORY_LEVELS", "MEMORY_ALIASES", "COMPUTE_KEYS", "FLOP_KEYS", "OP_KEYS",
           "INSTRUCTION_KEYS", "TRANSACTION_BYTES", "CLOCK_SCALED_MEMORY", "compute_unit", "base_compute_key",
           "compute_variant", "variant_words", "ceiling_id", "level_order", "Machine", "combine",
           "sources_summary", "ceiling_label"]


def _frozen(d: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class Machine:
    """Ceilings of one machine, SI units (B/s, FLOP/s, Hz).

    ``source`` says where the machine as a whole comes from; ``sources`` says it per
    ceiling, keyed ``"memory.<level>"`` / ``"compute.<key>"`` (e.g. ``"memory.dram"``,
    ``"compute.tensor_fp16"``), each value one of :data:`SOURCES` (``measured``: a
    micro-benchmark such as ERT; ``theoretical``: datasheet/spec; ``from-profile``: the
    profile's own peak metrics). It names every ceiling: those not given take their origin
    from ``metadata['ceiling_sources']`` when its description starts with a source
    ("measured: ..."), else ``source``. :func:`combine` and :meth:`scaled_to_clock` keep
    each ceiling's source; :meth:`source_of` looks one up by a bare key ("dram", "fp32").
    """

    name: str
    source: str
    memory: Mapping[str, float]
    compute: Mapping[str, float]
    sm_clock_hz: float | None = None
    spread: Mapping[str, float] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    clocks: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise MachineError(f"machine source must be one of {', '.join(SOURCES)}, not {self.source!r}")
        memory = {MEMORY_ALIASES.get(k.lower(), k.lower()): float(v) for k, v in self.memory.items()}
        compute = {k.lower(): float(v) for k, v in self.compute.items()}
        for kind, values, unit in (("memory", memory, "B/s"), ("compute", compute, "FLOP/s")):
            for key, value in values.items():
                if not math.isfinite(value) or value <= 0:
                    raise MachineError(
                        f"machine {self.name!r}: {kind} ceiling {key!r} must be a positive {unit}, not {value!r}",
                        hint="leave a ceiling out when the machine lacks it; never write 0",
                    )
        if not memory and not compute:
            raise MachineError(f"machine {self.name!r} has no ceilings")
        if self.sm_clock_hz is not None and not (math.isfinite(self.sm_clock_hz) and self.sm_clock_hz > 0):
            raise MachineError(f"machine {self.name!r}: sm_clock_hz must be positive, not {self.sm_clock_hz!r}")
        object.__setattr__(self, "memory", _frozen({k: memory[k] for k in level_order(list(memory))}))
        object.__setattr__(self, "compute", _frozen(compute))
        object.__setattr__(self, "spread", _frozen({k: float(v) for k, v in self.spread.items()}))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        object.__setattr__(self, "sources", _frozen_sources(self))
        object.__setattr__(self, "clocks", _frozen_clocks(self))

    def __reduce__(self) -> tuple:
        """Pickle as plain dicts (the read-only mapping views themselves cannot be pickled)."""
        return (self.__class__, (self.name, self.source, dict(self.memory), dict(self.compute),
                                 self.sm_clock_hz, dict(self.spread), dict(self.metadata), dict(self.sources),
                                 dict(self.clocks)))

    # -- queries -----------------------------------------------------------------
    @property
    def levels(self) -> list[str]:
        """Memory levels, innermost first."""
        return list(self.memory)

    def source_of(self, key: str) -> str:
        """Where one ceiling comes from: 'measured', 'theoretical' or 'from-profile'.

        ``key``: 'memory.dram', 'compute.fp32', or a bare 'dram' / 'fp32'. KeyError for a
        ceiling the machine does not have.
        """
        kind, name = ceiling_id(key)
        return self.sources[f"{kind}.{name}"]

    def ceilings_by_source(self) -> dict[str, list[str]]:
        """Ceiling ids per source, memory levels innermost first then compute keys, e.g.
        ``{"measured": ["memory.l1", "memory.dram", "compute.fp64"], "theoretical": ["compute.fp32"]}``;
        sources in the order of :data:`SOURCES`."""
        out: dict[str, list[str]] = {}
        for source in SOURCES:
            ids = [k for k, v in self.sources.items() if v == source]
            if ids:
                out[source] = ids
        return out

    def clock_of(self, key: str) -> float | None:
        """The SM clock (Hz) one ceiling holds at: its own (:attr:`clocks`), else :attr:`sm_clock_hz`."""
        kind, name = ceiling_id(key)
        return self.clocks.get(f"{kind}.{name}", self.sm_clock_hz)

    @property
    def max_sm_clock_hz(self) -> float | None:
        """The device's highest SM clock (Hz), when the machine records it: ``metadata.max_sm_clock_hz``,
        else ``metadata.device.max_sm_clock_hz`` (``roofline machine``'s record of the GPU)."""
        device = self.metadata.get("device")
        for value in (self.metadata.get("max_sm_clock_hz"),
                      device.get("max_sm_clock_hz") if isinstance(device, Mapping) else None):
            if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
                return float(value)
        return None

    @property
    def peak_flops(self) -> float | None:
        """The highest non-tensor FLOP/s ceiling (FP32 where present), or None; variant keys
        (``fp64_scalar``: :func:`compute_variant`) are not peaks of their own."""
        scalar = {k: v for k, v in self.compute.items()
                  if not k.startswith("tensor") and compute_unit(k) == "FLOP/s" and not compute_variant(k)}
        if not scalar:
            return None
        return scalar.get("fp32", max(scalar.values()))

    def scaled_to_clock(self, sm_clock_hz: float) -> Machine:
        """Ceilings at another SM clock: compute and on-chip caches scale, DRAM does not.

        A machine without a recorded clock is returned unchanged.
        """
        if self.sm_clock_hz is None or sm_clock_hz is None or not math.isfinite(sm_clock_hz):
            return self
        memory = {k: (v * sm_clock_hz / self._clock(f"memory.{k}") if k in CLOCK_SCALED_MEMORY else v)
                  for k, v in self.memory.items()}
        compute = {k: v * sm_clock_hz / self._clock(f"compute.{k}") for k, v in self.compute.items()}
        meta = dict(self.metadata)
        meta["scaled_from_sm_clock_hz"] = self.sm_clock_hz
        if self.clocks:
            meta["scaled_from_clocks"] = dict(self.clocks)
        return replace(self, memory=memory, compute=compute, sm_clock_hz=sm_clock_hz, metadata=meta, clocks={})

    def _clock(self, cid: str) -> float:
        return float(self.clocks.get(cid, self.sm_clock_hz))  # type: ignore[arg-type]

    # -- JSON ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema": SCHEMA,
            "name": self.name,
            "source": self.source,
            "sm_clock_hz": self.sm_clock_hz,
            "memory": dict(self.memory),
            "compute": dict(self.compute),
        }
        d["sources"] = dict(self.sources)
        if self.clocks:
            d["clocks"] = dict(self.clocks)
        if self.spread:
            d["spread"] = dict(self.spread)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, path: str | Path | None = None) -> Machine:
        if d.get("schema") != SCHEMA:
            raise MachineError(
                f"not a roofline machine file (schema {d.get('schema')!r}, expected {SCHEMA!r})", path=path
            )
        try:
            return cls(
                name=str(d["name"]),
                source=str(d["source"]),
                memory=dict(d.get("memory") or {}),
                compute=dict(d.get("compute") or {}),
                sm_clock_hz=d.get("sm_clock_hz"),
                spread=dict(d.get("spread") or {}),
                metadata=dict(d.get("metadata") or {}),
                sources=dict(d.get("sources") or {}),
                clocks=dict(d.get("clocks") or _recorded_clocks(d)),
            )
        except KeyError as exc:
            raise MachineError(f"machine file lacks the key {exc.args[0]!r}", path=path) from None
        except MachineError as exc:
            raise MachineError(exc.message, path=path, hint=exc.hint) from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise MachineError(f"malformed machine file: {exc}", path=path) from None

    def save(self, path: str | Path, *, force: bool = False) -> Path:
        """Write the JSON; refuses to overwrite an existing file unless ``force``."""
        from roofline.writing.safe import write_text

        return write_text(path, self.to_json() + "\n", force=force)

    @classmethod
    def load(cls, path: str | Path) -> Machine:
        """Read our JSON (for ERT files use :func:`roofline.readers.read_machine`)."""
        p = Path(path)
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise MachineError("no such file", path=p) from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MachineError(f"not JSON ({exc})", path=p) from None
        if not isinstance(d, dict):
            raise MachineError("not a roofline machine file (JSON is not an object)", path=p)
        return cls.from_dict(d, path=p)


def combine(machines: list[Machine] | tuple[Machine, ...]) -> Machine:
    """Merge ceilings of several descriptions of one machine; the first that has a ceiling wins.

    E.g. measured memory ceilings from ERT plus datasheet compute ceilings it did not
    measure. Each ceiling keeps its source (:attr:`Machine.sources`) and its description
    (``metadata['ceiling_sources']``); name and source are the first machine's.

    Clocks: the result is at the first recorded clock among the machines; ceilings that
    scale with the clock (compute, L1-L3) of another machine with a clock are scaled to it
    (x reference / its clock). A machine recording no clock (ERT files do not say the clock
    they ran at) is taken to have run at the reference clock, as the bundled DeepCAM demo
    machine takes ERT to have run at the V100's 1530 MHz boost clock; that assumption is
    written in ``metadata['clock_assumed']``, which the analysis repeats in its notes.
    """
    if not machines:
        raise MachineError("no machine to combine")
    if len(machines) == 1:
        return machines[0]
    first = machines[0]
    reference = next((m for m in machines if m.sm_clock_hz), None)
    memory: dict[str, float] = {}
    compute: dict[str, float] = {}
    origins: dict[str, str] = {}
    sources: dict[str, str] = {}
    assumed: list[str] = []
    # the note names ceilings in the reference GPU's vendor's words (an AMD spec's: vL1D, LDS, HBM, Matrix)
    words = words_for(*machine_vendor(reference.name, reference.metadata)) if reference is not None else NVIDIA_WORDS
    labels, matrix = (dict(words.levels), words.matrix) if words.is_amd else (None, "Tensor")
    for m in machines:
        known = dict(m.metadata.get("ceiling_sources", {}))

        def clock_ratio(cid: str, m: Machine = m) -> float:
            own = m.clock_of(cid)
            return reference.sm_clock_hz / own if reference is not None and reference.sm_clock_hz and own else 1.0

        taken: list[str] = []
        for key, value in m.memory.items():
            if key not in memory:
                memory[key] = value * (clock_ratio(f"memory.{key}") if key in CLOCK_SCALED_MEMORY else 1.0)
                origins[key] = known.get(key, f"{m.source}: {m.name}")
                sources[f"memory.{key}"] = m.sources[f"memory.{key}"]
                if key in CLOCK_SCALED_MEMORY:
                    taken.append(f"memory.{key}")
        for key, value in m.compute.items():
            if key not in compute:
                compute[key] = value * clock_ratio(f"compute.{key}")
                origins[key] = known.get(key, f"{m.source}: {m.name}")
                sources[f"compute.{key}"] = m.sources[f"compute.{key}"]
                taken.append(f"compute.{key}")
        if reference is not None and not m.sm_clock_hz and taken:
            ert = str(m.metadata.get("format", "")).startswith(("ert", "nersc"))
            assumed.append(f"{m.name!r} ({', '.join(ceiling_label(t, labels, matrix) for t in taken)}"
                           f"{'; ERT' if ert else ''})")
    meta = dict(first.metadata)
    meta["ceiling_sources"] = origins
    highest = next((m.max_sm_clock_hz for m in machines if m.max_sm_clock_hz), None)
    if highest is not None:
        meta["max_sm_clock_hz"] = highest
    clock = reference.sm_clock_hz if reference is not None else None
    if assumed and reference is not None and clock is not None:
        meta["clock_assumed"] = (
            f"the clock-scaled ceilings of {' and '.join(assumed)} record no clock: taken as measured at "
            f"{clock / 1e9:.4g} GHz, the clock of {reference.name!r}, and scaled from there")
    return replace(first, memory=memory, compute=compute, sm_clock_hz=clock, metadata=meta, sources=sources,
                   clocks={})


def _recorded_clocks(d: Mapping[str, Any]) -> dict[str, float]:
    """Per-ceiling clocks of a ``roofline machine`` file written before ``clocks`` existed: its
    ``metadata.clock_hz`` (NVML's median SM clock over each ceiling's phase), for the clock-scaled
    ceilings whose clock differs from ``sm_clock_hz``."""
    meta = d.get("metadata") or {}
    recorded = meta.get("clock_hz") if isinstance(meta, Mapping) else None
    sm = d.get("sm_clock_hz")
    if d.get("source") != "measured" or not isinstance(recorded, Mapping) or not isinstance(sm, (int, float)) or sm <= 0:
        return {}
    out: dict[str, float] = {}
    for kind, keys in (("memory", CLOCK_SCALED_MEMORY), ("compute", tuple(d.get("compute") or {}))):
        for key in keys:
            clock = recorded.get(key)
            if key in (d.get(kind) or {}) and isinstance(clock, (int, float)) and clock > 0 and abs(clock / sm - 1) > 1e-3:
                out[f"{kind}.{key}"] = float(clock)
    return out


def _frozen_clocks(m: Machine) -> Mapping[str, float]:
    """``m.clocks`` keyed by ceiling id (``"compute.tensor_fp16"``), each a positive Hz of one of its
    ceilings; only with an ``sm_clock_hz`` (a machine with no clock scales nothing)."""
    out: dict[str, float] = {}
    for key, value in m.clocks.items():
        kind, name = ceiling_id(str(key))
        if name not in (m.memory if kind == "memory" else m.compute):
            raise MachineError(f"machine {m.name!r}: clocks names {key!r}, which is not one of its ceilings")
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise MachineError(f"machine {m.name!r}: the clock of {key!r} must be a positive Hz, not {value!r}")
        out[f"{kind}.{name}"] = float(value)
    if out and m.sm_clock_hz is None:
        raise MachineError(f"machine {m.name!r} gives clocks per ceiling but no sm_clock_hz")
    return MappingProxyType(out)


def _frozen_sources(m: Machine) -> Mapping[str, str]:
    """Every ceiling of ``m`` -> its source: given, else from metadata['ceiling_sources'], else m.source."""
    ids = [f"memory.{k}" for k in m.memory] + [f"compute.{k}" for k in m.compute]
    given: dict[str, str] = {}
    for key, value in m.sources.items():
        kind, name = ceiling_id(str(key))
        cid = f"{kind}.{name}"
        if cid not in ids:
            raise MachineError(f"machine {m.name!r}: sources names {key!r}, which is not one of its ceilings",
                               hint="sources keys are 'memory.<level>' or 'compute.<key>' of ceilings the machine has")
        if value not in SOURCES:
            raise MachineError(f"machine {m.name!r}: the source of {key!r} must be one of {', '.join(SOURCES)}, "
                               f"not {value!r}")
        given[cid] = str(value)
    described = m.metadata.get("ceiling_sources")
    described = described if isinstance(described, Mapping) else {}
    out: dict[str, str] = {}
    for cid in ids:
        if cid in given:
            out[cid] = given[cid]
            continue
        text = described.get(cid.partition(".")[2])
        head = text.split(":", 1)[0].strip().lower() if isinstance(text, str) else ""
        out[cid] = head if head in SOURCES else m.source
    return MappingProxyType(out)


def sources_summary(machine: Machine, labels: Mapping[str, str] | None = None, matrix: str = "Tensor") -> str:
    """Which ceilings are measured, theoretical or from the profile, in words.

    e.g. 'measured: L1, L2, DRAM, FP64; theoretical: FP32, Tensor FP16', or 'all measured'.
    ``labels`` overrides display names of memory levels (e.g. ``{"dram": "HBM"}``), ``matrix`` the name of
    the matrix units (``"Matrix"``: an AMD GPU's 'Matrix FP16').
    """
    groups = machine.ceilings_by_source()
    if len(groups) == 1:
        return f"all {next(iter(groups))}"
    return "; ".join(f"{src}: {', '.join(ceiling_label(c, labels, matrix) for c in ids)}"
                     for src, ids in groups.items())


def ceiling_label(key: str, labels: Mapping[str, str] | None = None, matrix: str = "Tensor") -> str:
    """Display name of a ceiling: 'memory.dram' -> 'DRAM', 'compute.tensor_fp16' -> 'Tensor FP16' (with
    ``matrix="Matrix"``, an AMD GPU's: 'Matrix FP16'), 'compute.fp64_no_fma' -> 'FP64 no-FMA',
    'fp64_scalar_fma' -> 'FP64 scalar FMA'."""
    kind, name = ceiling_id(key)
    if kind == "memory":
        return (labels or {}).get(name, name.upper())
    base, variant = base_compute_key(name), compute_variant(name)
    text = f"{matrix} " + base[len("tensor_"):].upper() if base.startswith("tensor_") else base.upper()
    return text + (f" {variant_words(variant)}" if variant else "")

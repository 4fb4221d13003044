"""Export ceilings in ERT's ``roofline.json`` layout, so ERT's plotting scripts can read our results.

``to_ert_json(machine, measurement=None) -> dict``: ``empirical.gflops.data`` holds
``["FP64 GFLOPs", value]`` pairs (FP64 first, as ERT's own runs), ``empirical.gbytes.data``
``["L1", value]`` ... ``["DRAM", value]`` innermost first, in ERT's decimal units (GFLOP/s =
1e9 FLOP/s, GB/s = 1e9 B/s; see :mod:`roofline.readers.machines.ert` for the evidence). With a
measurement, its theoretical ceilings go to ``spec`` (ERT's place for vendor figures) and its
checks and notes to the metadata. ``roofline.readers.read_machine`` reads the result back.
"""

from __future__ import annotations

from typing import Any

from roofline._version import __version__
from roofline.bench.evidence import Measurement
from roofline.machine.model import Machine

GIGA = 1e9


def _gflops(compute: Any, names: Any = None) -> list[list[Any]]:
    """``[name, GFLOP/s]`` pairs, FP64 first; a ceiling read from an ERT file keeps its name there
    (``names``: the machine's ``metadata['ert_names']``), so that its scalar, vector and FMA entries
    read back as they were."""
    names = names if isinstance(names, dict) else {}
    order = sorted(compute, key=lambda k: (k != "fp64", k != "fp32", k))
    return [[str(names.get(k) or f"{k.upper()} GFLOPs"), compute[k] / GIGA] for k in order]


def _gbytes(memory: Any) -> list[list[Any]]:
    return [[k.upper(), v / GIGA] for k, v in memory.items()]


def to_ert_json(machine: Machine, measurement: Measurement | None = None) -> dict[str, Any]:
    """ERT 1.1.0 ``roofline.json`` layout for ``machine`` (see the module docstring)."""
    meta: dict[str, Any] = {
        "HOSTNAME": [machine.name, [], []],
        "GENERATOR": f"roofline {__version__}",
        "SOURCE": machine.source,
        "UNITS": "GB/s = 1e9 B/s, GFLOP/s = 1e9 FLOP/s",
    }
    if machine.sm_clock_hz:
        meta["CLOCK_HZ"] = machine.sm_clock_hz
    if machine.spread:
        meta["SPREAD"] = dict(machine.spread)
    spec: dict[str, Any] = {"gflops": {"data": []}, "gbytes": {"data": []}}
    if measurement is not None:
        meta["CHECKS"] = dict(measurement.checks)
        meta["NOTES"] = list(measurement.notes)
        meta["CACHE_SIZES"] = dict(measurement.cache_sizes)
        if measurement.theoretical is not None:
            spec = {"gflops": {"data": _gflops(measurement.theoretical.compute)},
                    "gbytes": {"data": _gbytes(measurement.theoretical.memory)}}
    return {
        "empirical": {
            "metadata": meta,
            "gflops": {"data": _gflops(machine.compute, dict(machine.metadata.get("ert_names") or {})),
                       "metadata": {}},
            "gbytes": {"data": _gbytes(machine.memory), "metadata": {}},
        },
        "spec": spec,
    }

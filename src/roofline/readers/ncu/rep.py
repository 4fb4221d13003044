"""Nsight Compute reports (``.ncu-rep``) into a :class:`RawProfile`.

Two ways in, tried in this order:

1. NVIDIA's ``ncu_report`` Python module (PyPI ``ncu-report``; ``pip install 'roofline[ncu]'``),
   imported only when a report is read. Gives NVTX ranges too (``action.nvtx_state()``).
   Phase, module and PyTorch operator per launch: :mod:`roofline.readers.torch_ranges`.
2. The ``ncu`` command on PATH: ``ncu --import FILE --csv --page raw``, read by the CSV reader.

Neither available: :class:`ToolNotFoundError` saying how to get one.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from roofline.errors import InputError, ToolNotFoundError
from roofline.readers.ncu.names import demangle_names
from roofline.readers.ncu.csv_export import read_ncu_csv
from roofline.readers.ncu.numbers import c_numbers
from roofline.readers.ncu.raw_profile import IDENTITY, RawProfile
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, Range, attribute
from roofline.units import si_factor

log = logging.getLogger(__name__)

#: Launch metrics that identify a launch when a report has no identity columns.
_DIMS = {"grid": "launch__grid_dim_", "block": "launch__block_dim_"}


def _import_ncu_report() -> Any | None:
    try:
        import ncu_report  # type: ignore[import-not-found]
    except Exception as exc:  # ImportError, or its shared library failing to load
        log.debug("ncu_report not usable: %s", exc)
        return None
    return ncu_report


def read_ncu_rep(path: str | Path) -> RawProfile:
    """Read a ``.ncu-rep`` report (see the module docstring for how)."""
    p = Path(path)
    module = _import_ncu_report()
    if module is not None:
        return read_with_module(p, module)
    ncu = shutil.which("ncu")
    if ncu is not None:
        return read_with_cli(p, ncu)
    raise ToolNotFoundError(
        "reading a .ncu-rep report needs NVIDIA's ncu_report module or the ncu command", path=p,
        hint="pip install 'roofline[ncu]' (the ncu-report package), or put Nsight Compute's ncu on PATH; "
             "or export a CSV where ncu is installed: ncu --import FILE --csv --page raw > FILE.csv",
    )


def read_with_cli(path: Path, ncu: str) -> RawProfile:
    """``ncu --import FILE --csv --page raw`` (argument list, no shell; numbers written the C way
    whatever the user's locale), parsed by the CSV reader."""
    args = [ncu, "--import", str(path), "--csv", "--page", "raw"]
    try:
        out = subprocess.run(args, capture_output=True, timeout=3600, check=False, env=c_numbers())
    except OSError as exc:
        raise ToolNotFoundError(f"could not run {ncu}: {exc}", path=path) from None
    if out.returncode != 0:
        message = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"ncu could not read the report: {message[-1] if message else 'exit ' + str(out.returncode)}",
                         path=path)
    with tempfile.TemporaryDirectory(prefix="roofline-ncu-") as tmp:
        csv_path = Path(tmp) / (path.name + ".csv")
        csv_path.write_bytes(out.stdout)
        try:
            profile = read_ncu_csv(csv_path)
        except InputError as exc:
            raise InputError(f"ncu's CSV export of the report: {exc.message}", path=path, hint=exc.hint) from None
    return RawProfile(ids=profile.ids, metrics=profile.metrics, source=str(path), units=profile.units,
                      warnings=tuple(w.replace(csv_path.name, path.name) for w in profile.warnings))


def _metric_value(metric: Any) -> tuple[object, str]:
    unit = str(metric.unit() or "")
    value = metric.value()
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value) * si_factor(unit), unit
    return (None if value is None else str(value)), unit


def _nvtx_ranges(action: Any) -> tuple[tuple[Range, ...], tuple[Range, ...]]:
    """The launch's push/pop ranges and start/end ranges as ``(domain, name)``, domain by domain in
    the report's order, each domain's push/pop stack outermost first (``push_pop_ranges()``)."""
    state = action.nvtx_state()
    if state is None:
        return (), ()
    push_pop: list[Range] = []
    start_end: list[Range] = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        name = str(domain.name()).strip() if hasattr(domain, "name") else ""
        name = name if name and name not in ("default", "<default>") else DEFAULT_DOMAIN
        push_pop.extend((name, str(r)) for r in domain.push_pop_ranges())
        if hasattr(domain, "start_end_ranges"):
            start_end.extend((name, str(r)) for r in domain.start_end_ranges())
    return tuple(push_pop), tuple(start_end)


def _interned(values: list[tuple[Range, ...]]) -> tuple[np.ndarray, list[tuple[Range, ...]]]:
    """Codes of distinct range tuples (-1 for an empty one) and the distinct tuples."""
    index: dict[tuple[Range, ...], int] = {}
    codes = np.array([index.setdefault(v, len(index)) if v else -1 for v in values], dtype=np.int64)
    return codes, list(index)


def read_with_module(path: Path, module: Any) -> RawProfile:
    """Walk the report's ranges and actions with ``ncu_report``; one row per action (kernel launch)."""
    try:
        report = module.load_report(str(path))
    except Exception as exc:  # the module raises plain exceptions for unreadable reports
        raise InputError(f"ncu_report could not load the report ({exc})", path=path,
                         hint="the report may be from a newer Nsight Compute than the ncu-report package") from None
    rows: list[dict[str, object]] = []
    names: list[str] = []
    stacks: list[tuple[Range, ...]] = []
    start_ends: list[tuple[Range, ...]] = []
    units: dict[str, str] = {}
    demangled = getattr(getattr(module, "IAction", None), "NameBase_DEMANGLED", None)
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            names.append(str(action.name(demangled) if demangled is not None else action.name()))
            push_pop, start_end = _nvtx_ranges(action)
            stacks.append(push_pop)
            start_ends.append(start_end)
            row: dict[str, object] = {}
            for metric_name in action.metric_names():
                value, unit = _metric_value(action.metric_by_name(metric_name))
                row[str(metric_name)] = value
                units.setdefault(str(metric_name), unit)
            rows.append(row)
    if not rows:
        raise InputError("the report holds no kernel launches", path=path)
    metrics = pd.DataFrame(rows)
    for col in metrics.columns:
        numeric = pd.to_numeric(metrics[col], errors="coerce")
        if numeric.notna().sum() == metrics[col].notna().sum():
            metrics[col] = numeric.astype("float64")
        else:
            metrics[col] = metrics[col].astype("string")
    stack_codes, distinct_stacks = _interned(stacks)
    se_codes, distinct_se = _interned(start_ends)
    attribution = attribute(stack_codes, distinct_stacks, start_end_codes=se_codes, start_ends=distinct_se,
                            kernel_names=pd.Series(names, dtype="string"))
    ids = ids_from_metrics(metrics, names, attribution["phase"].tolist())
    ids["module"], ids["op"] = attribution["module"].array, attribution["op"].array
    if attribution["op_stack"].notna().any():
        metrics["op_stack"] = attribution["op_stack"].array
        units["op_stack"] = ""
    ids["kernel_name"], warnings = demangle_names(ids["kernel_name"])
    return RawProfile(ids=ids, metrics=metrics, source=str(path), units=units,
                      warnings=tuple(f"{path.name}: {w}" for w in warnings), printed=False)


def _int_column(metrics: pd.DataFrame, name: str) -> pd.Series:
    if name in metrics.columns and metrics[name].dtype.kind == "f":
        return metrics[name].round().astype("Int64")
    return pd.Series(pd.array([pd.NA] * len(metrics), dtype="Int64"))


def ids_from_metrics(metrics: pd.DataFrame, names: list[str], phases: list[str | None]) -> pd.DataFrame:
    """Identity columns from launch metrics (``launch__grid_dim_x``, ``device__attribute_*``...)."""
    n = len(metrics)
    ids = pd.DataFrame({"launch_id": pd.array(np.arange(n), dtype="Int64")})
    ids["kernel_name"] = pd.array(names, dtype="string")
    ids["phase"] = pd.array(phases, dtype="string")
    ids["process_id"] = pd.array([pd.NA] * n, dtype="Int64")
    ids["device"] = _int_column(metrics, "launch__device_id")
    major = _int_column(metrics, "device__attribute_compute_capability_major")
    minor = _int_column(metrics, "device__attribute_compute_capability_minor")
    cc = major.astype("string") + "." + minor.astype("string")
    ids["compute_capability"] = cc.astype("string")
    for col, prefix in _DIMS.items():
        parts = [_int_column(metrics, prefix + axis).astype("string") for axis in "xyz"]
        ids[col] = ("(" + parts[0] + ", " + parts[1] + ", " + parts[2] + ")").astype("string")
    ids["stream"] = _int_column(metrics, "launch__stream_id")
    return ids[list(IDENTITY)]

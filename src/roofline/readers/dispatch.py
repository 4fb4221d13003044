"""`read_profile`: any supported profiler output(s) -> one validated :class:`KernelTable`.

The format is detected by content (``.ncu-rep`` by its name, since it is a binary
container): Nsight Compute CSV (raw or details page) or an Nsight Compute report.
Several files are merged by launch (:mod:`roofline.readers.merge`), then counted
with the formula table (:mod:`roofline.counting`).
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike, fspath
from pathlib import Path

import numpy as np
import pandas as pd

from roofline import counting
from roofline.errors import InputError, MissingMetricsError
from roofline.kernels import FLOP_COLUMNS, FP16_CONVENTIONS, KernelTable, empty_frame, validate, with_total_flops
from roofline.readers.merge import merge_profiles
from roofline.readers.ncu_csv import read_ncu_csv
from roofline.readers.profile import RawProfile

REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")


def _check_path(p: Path) -> None:
    if not p.exists():
        raise InputError("no such file", path=p)
    if p.is_dir():
        raise InputError("is a directory, not a profile", path=p, hint="pass the CSV or .ncu-rep files inside it")
    if p.stat().st_size == 0:
        raise InputError("the file is empty", path=p, hint="re-run ncu; its output may have gone elsewhere")


def read_one(path: str | PathLike[str]) -> RawProfile:
    """Read one profiler output (format detected) into a :class:`RawProfile`."""
    p = Path(fspath(path))
    _check_path(p)
    if p.name.lower().endswith(REPORT_SUFFIXES):
        from roofline.readers.ncu_rep import read_ncu_rep

        return read_ncu_rep(p)
    return read_ncu_csv(p)


def _label(sources: Sequence[str]) -> str:
    return ", ".join(Path(s).name for s in sources)


def build_table(profile: RawProfile, *, fp16: str = "ncu", sources: Sequence[str] = ()) -> KernelTable:
    """Count a (merged) raw profile into a validated kernel table."""
    where = profile.source if len(sources) <= 1 else None
    label = _label(sources or [profile.source])
    try:
        counted = counting.count(profile.metrics, profile.ids["compute_capability"], fp16=fp16)
    except InputError as exc:
        raise InputError(exc.message, path=where, hint=exc.hint) from None
    n = len(profile)
    frame = empty_frame(n)
    for col in profile.ids.columns:
        frame[col] = profile.ids[col].to_numpy()
    for col, values in counted.columns.items():
        frame[col] = values
    frame["source"] = pd.array([label] * n, dtype="string")
    frame = with_total_flops(frame)
    known_time = not np.isnan(frame["time_s"].to_numpy()).all()
    known_flops = not frame[list(FLOP_COLUMNS)].isna().all().all()
    known_bytes = not frame[["l1_bytes", "l2_bytes", "dram_bytes"]].isna().all().all()
    if not (known_time or known_flops or known_bytes):
        needed = counting.required_metrics(_first_cc(profile) or "7.0")
        raise MissingMetricsError(
            "the profile has none of the metrics needed for a roofline (time, FLOP or byte counters)",
            path=where, hint=counting.ncu_hint(needed),
        )
    frame = validate(frame, where=where)
    metrics = profile.metrics.reset_index(drop=True)
    metrics.index = frame.index
    warnings = [f"{label}: {w}" for w in counted.warnings]
    return KernelTable(frame=frame, metrics=metrics, sources=tuple(sources or [profile.source]),
                       warnings=tuple(dict.fromkeys([*profile.warnings, *warnings])), fp16_convention=fp16)


def _first_cc(profile: RawProfile) -> str | None:
    cc = profile.ids["compute_capability"].dropna()
    return str(cc.iloc[0]) if len(cc) else None


def read_profile(paths: Sequence[str | PathLike[str]] | str | PathLike[str], *, fp16: str = "ncu") -> KernelTable:
    """Read one or more profiler outputs into one kernel table (see :func:`roofline.readers.read_profile`)."""
    if fp16 not in FP16_CONVENTIONS:
        raise InputError(f"unknown FP16 convention {fp16!r}; choose one of {', '.join(FP16_CONVENTIONS)}")
    if isinstance(paths, (str, PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise InputError("no profile given")
    profiles = [read_one(p) for p in paths]
    merged = merge_profiles(profiles)
    return build_table(merged, fp16=fp16, sources=[p.source for p in profiles])

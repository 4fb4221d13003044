"""Nsight Compute CSV (``ncu --csv``), both page layouts, into a :class:`RawProfile`.

* ``--page raw``: one row per launch, one column per metric, a units row under the header.
* ``--page details`` (and ``--metrics`` without ``--page``): one row per metric
  (``Metric Name``, ``Metric Unit``, ``Metric Value``), pivoted here to one row per launch.

What real files do, and how it is handled:

* Program output and ``==PROF==``/``==WARNING==`` lines before the header: the header
  is found by scanning lines as text; ``pandas.read_csv`` then starts at its byte offset.
* Encodings (:mod:`roofline.readers.stream`): a UTF-8 byte-order mark is stripped; UTF-16
  LE/BE with a BOM (PowerShell's ``>``) is transcoded to UTF-8 in memory first; bytes that are
  not UTF-8 (Latin-1 kernel names) are read as Latin-1.
* Pipes and standard input: read whole into memory once by the caller and passed as ``data``.
* Thousands separators (``"837,859,712"``) and ``.00`` decimals: parsed natively by
  ``read_csv(thousands=",")``. European files (``"1.234.567,89"``) are detected from the
  values themselves and read with swapped separators; a file whose values show both
  conventions is refused rather than guessed.
* ``n/a``: NaN. Units (``nsecond``, ``usecond``, ``Kbyte``, ``cycle/nsecond``, ...):
  converted to SI per column (raw) or per value (details) with :func:`roofline.units.si_factor`.
  Percentages stay as printed (0-100).
* No unit where a unit belongs (an ncu older than the report's GPU exports a blank units row and
  blank ``Metric Unit`` cells: ncu 2024.1 exporting a CC 12.0 report): the values are the ones
  ncu stores, in its base units, which are SI but for time: a ``gpu__time_*`` value without a
  unit is read in nanoseconds (:data:`STORED_UNITS`), with a note.
* ``Kernel Time`` (2020 releases) is a timestamp, not a duration: ignored.
  ``Rule *`` and ``Estimated Speedup*`` values: ignored.
* ``Rule``/``Estimated Speedup`` header columns that a details page's rows leave out (newer
  ncu): the rows are read without them.
* Section exports (``--section``/``--set``): details pages name values by their section labels
  ("Duration", "DRAM Throughput"); :mod:`roofline.readers.ncu.display` maps them to metrics.
* NVTX: ncu's own ``--nvtx`` columns (``thread Domain:Push/Pop_Range:PL_Type:...``,
  ``Id:Domain:Start/Stop_Range:...``, ``Range:...`` beside ``Domain``) and ``NVTX``/``nvtx``
  columns give the phase (the innermost push/pop phase range, else the last start/stop range),
  the PyTorch module and operator (``op_stack`` joins the metrics) (:mod:`roofline.readers.ncu.names`,
  :mod:`roofline.readers.torch_ranges`; the header strings are checked against the real ncu binary).
* ``--print-summary per-kernel`` exports (no launch IDs; per kernel ``Invocations`` and each metric's
  ``Average``): :mod:`roofline.readers.ncu.summary`.
* ``Process ID`` and ``Process Name`` tell runs of different programs apart
  (:mod:`roofline.readers.ncu.combine`).

Speed: the raw page (one row per launch: the large files) is read by pyarrow's multi-threaded
columnar parser in slabs (:mod:`roofline.readers.csv_arrow`), numbers made SI per column; the
details page (:mod:`roofline.readers.ncu.details`) and the header scan
(:mod:`roofline.readers.ncu.layout`) keep per-file costs small for the many small files of
one-metric-per-run exports.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from roofline.errors import InputError
from roofline.readers.ncu.ahead import ReadAhead
from roofline.readers.ncu.details import read_details
from roofline.readers.ncu.layout import CsvLayout, is_nvtx_column, sniff
from roofline.readers.ncu.raw import read_raw
from roofline.readers.ncu.summary import read_summary
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.units import si_factor

__all__ = ["CsvLayout", "is_nvtx_column", "metric_columns", "read_details", "read_ncu_csv", "read_raw", "sniff"]


def read_ncu_csv(path: str | Path, data: bytes | None = None, *, ahead: ReadAhead | None = None) -> RawProfile:
    """Read one ncu CSV export (raw or details page) into a :class:`RawProfile`.

    ``data``: its bytes, when already read into memory (standard input, a pipe); ``path`` then
    only names it in messages. ``ahead``: the file's parse, started before (:mod:`~roofline.readers.ncu.ahead`)."""
    p = Path(path)
    started = ahead.take() if ahead is not None and ahead.is_for(p) else None
    if started is not None:
        layout, parsed = started
        profile = read_raw(layout, parsed)
    else:
        try:
            layout = sniff(p, data)
        except InputError:
            summary = read_summary(p, data)  # a per-kernel summary has no launch IDs: not a page
            if summary is None:
                raise
            return _stored_units(summary, p)
        profile = read_raw(layout) if layout.layout == "raw" else read_details(layout)
    if profile.ids["launch_id"].array.isna().all():
        raise InputError("no launch IDs in the CSV", path=p)
    return _stored_units(profile, p)


#: Metrics whose values ncu stores in a unit that is not SI, by name: what one printed without a
#: unit is in (``ncu --query-metrics``: every ``gpu__time_*`` counter is in nanoseconds).
STORED_UNITS = ((re.compile(r"gpu__time_[a-z_]+\.(sum|avg|min|max)"), "nsecond", "nanoseconds"),)


def _stored_units(profile: RawProfile, path: Path) -> RawProfile:
    """``profile`` with the values printed without a unit that ncu stores in another than SI
    converted (see the module docstring), and a note naming them."""
    fixed: dict[str, str] = {}
    read_as: dict[str, str] = {}
    for name in profile.metrics.columns:
        if profile.units.get(name, "") or profile.metrics[name].dtype.kind not in "iuf":
            continue
        stored = next(((u, words) for pattern, u, words in STORED_UNITS if pattern.fullmatch(name)), None)
        if stored is not None:
            fixed[name], read_as[name] = stored
    if not fixed:
        return profile
    metrics = profile.metrics.copy()
    for name, unit in fixed.items():
        metrics[name] = metrics[name].astype("float64") * si_factor(unit)
    names = ", ".join(sorted(fixed))
    note = (f"{path.name}: no unit printed for {names}: read in {' and '.join(sorted(set(read_as.values())))}, "
            "the unit Nsight Compute stores them in (an ncu older than the report's GPU exports no units; an "
            "export by the ncu that took the report, or a newer one, prints them)")
    return replace(profile, metrics=metrics, units={**profile.units, **fixed}, warnings=(*profile.warnings, note))


def metric_columns(profile: RawProfile) -> list[str]:
    """Numeric metric names of a profile."""
    return [c for c in profile.metrics.columns if profile.metrics[c].dtype.kind in "iuf"]

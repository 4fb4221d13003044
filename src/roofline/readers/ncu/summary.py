"""ncu ``--csv --print-summary per-kernel`` exports: one row per kernel (name and launch shape) and
metric, with the kernel's ``Invocations`` and the metric's ``Minimum``, ``Maximum`` and
``Average`` over them; no launch IDs::

    "Process ID",...,"Kernel Name","Block Size","Grid Size","Device","CC","Invocations",
    "Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"

Such a file cannot be re-exported as a raw page (the report may be gone), and it holds each
kernel's time and traffic in full: the sum over its launches is ``Average x Invocations``. It is
read as a details page whose launches carry the averages: each kernel is written out as one
launch (``Metric Value`` = ``Average``, the text as printed, so numbers, units and section labels
are read as on any details page), then its row is repeated ``Invocations`` times. Sums over a
kernel's launches, and every total, are then the file's; what a launch row cannot show is said in
a note: the launches' order (kernels are numbered in the file's order) and their spread.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.readers.ncu.details import read_details
from roofline.readers.ncu.layout import MAX_PREAMBLE_LINES, sniff
from roofline.readers.ncu.raw_profile import RawProfile
from roofline.readers.stream import to_utf8
from roofline.units import counted

#: The columns that make a header a per-kernel summary's.
SUMMARY_COLUMNS = ("Kernel Name", "Invocations", "Metric Name", "Average")
#: The per-metric columns of a summary row; every other column names the kernel.
_PER_METRIC = ("Section Name", "Metric Name", "Metric Unit", "Minimum", "Maximum", "Average")


def _header(lines: list[str]) -> tuple[list[str], int] | None:
    """The summary's header and its line number, or None."""
    for i, line in enumerate(lines[:MAX_PREAMBLE_LINES]):
        if line.lstrip('\ufeff"').startswith(("Process ID", "Kernel Name")):
            fields = next(csv.reader([line.lstrip("\ufeff")]), [])
            if all(c in fields for c in SUMMARY_COLUMNS) and "ID" not in fields:
                return fields, i
    return None


def read_summary(path: Path, data: bytes | None = None) -> RawProfile | None:
    """Read a per-kernel summary export (see the module docstring); None when ``path`` (or ``data``)
    is not one."""
    raw = to_utf8(data if data is not None else path.read_bytes())
    if b"Invocations" not in raw:  # not a summary: no decoding of what may be a large file
        return None
    lines = raw.decode("utf-8", errors="replace").splitlines()
    found = _header(lines)
    if found is None:
        return None
    header, at = found
    kernel_cols = [c for c in header if c not in _PER_METRIC and c != "Invocations"]
    where = {c: header.index(c) for c in header}
    kernels: dict[tuple[str, ...], int] = {}
    invocations: list[int] = []
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["ID", *kernel_cols, "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    for row in csv.reader(lines[at + 1:]):
        if len(row) != len(header):
            continue  # ==PROF== lines, blank lines
        key = tuple(row[where[c]] for c in kernel_cols) + (row[where["Invocations"]],)
        if key not in kernels:
            kernels[key] = len(kernels)
            invocations.append(int(re.sub(r"\D", "", row[where["Invocations"]]) or 0))
        section = row[where["Section Name"]] if "Section Name" in where else ""
        unit = row[where["Metric Unit"]] if "Metric Unit" in where else ""
        writer.writerow([kernels[key], *(row[where[c]] for c in kernel_cols), section, row[where["Metric Name"]], unit,
                         row[where["Average"]]])
    profile = read_details(sniff(path, out.getvalue().encode("utf-8")))
    order = np.argsort(profile.ids["launch_id"].to_numpy(dtype=np.int64), kind="stable")
    counts = np.asarray(invocations, dtype=np.int64)[profile.ids["launch_id"].to_numpy(dtype=np.int64)[order]]
    rows = np.repeat(order, counts)
    ids = profile.ids.iloc[rows].reset_index(drop=True)
    ids["launch_id"] = pd.array(np.arange(len(rows)), dtype="Int64")
    metrics = profile.metrics.iloc[rows].reset_index(drop=True)
    note = (f"{path.name}: a per-kernel summary (ncu --print-summary per-kernel): "
            f"{counted(len(rows), 'launch', 'launches')} of {counted(len(kernels), 'kernel')}, each launch given "
            "its kernel's averages; sums per kernel and totals are the file's, the launches' order and spread "
            "(Minimum, Maximum) are not read")
    return RawProfile(ids=ids, metrics=metrics, source=str(path), units=profile.units,
                      warnings=(*profile.warnings, note), per_row_units=True)

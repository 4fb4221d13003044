"""One Nsight Systems timeline as a kernel table: :func:`read_timeline`.

Each kernel launch is a row: its time as the program ran it (end - start, ns -> s), device,
stream, process, grid and block, demangled name, and the phase, operator and module of the NVTX
ranges open around its launch (:mod:`roofline.readers.nsys.ranges`). FLOPs and bytes are unknown
(a timeline has no counters): the count columns are left out, a warning says so, and
``metric_hints`` name the Nsight Compute metrics that supply them. A ``.nsys-rep`` (or ``.qdrep``) report is
first exported to SQLite by the ``nsys`` on PATH, into a temporary folder (the report's own folder is never
written); a ``.qdstrm`` capture that a target-only nsys left is first imported, from a copy, by a
QdstrmImporter (:mod:`roofline.readers.nsys.capture`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from roofline.counting.hints import NCU_HINTS
from roofline.errors import InputError, ToolNotFoundError
from roofline.kernels import KernelTable, validate
from roofline.kernels.arrays import encoded_text, strings
from roofline.kernels.schema import empty_frame, lean
from roofline.readers.nsys import REPORT_SUFFIXES
from roofline.readers.nsys.capture import CAPTURE_SUFFIX, import_copy, importers, ordered, version_of
from roofline.readers.nsys.export import PUSH_POP, START_END, Export, NvtxRanges
from roofline.readers.nsys.gpu_activity import read_activity
from roofline.readers.nsys.ranges import push_pop_forest, start_end
from roofline.readers.torch_forest import attribute_forest
from roofline.readers.torch_launches import Texts
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, start_end_phase

#: What every timeline's table is told: its counts come from Nsight Compute (``metric_hints``: which metrics).
NO_COUNTERS = ("a timeline has kernel times but no counters: FLOPs and bytes come from an Nsight Compute "
               "profile of the same program (roofline profile -- CMD)")
#: Seconds ``nsys export`` may take.
EXPORT_TIMEOUT_S = 600


def read_timeline(path: Path) -> KernelTable:
    """The kernel table of an nsys SQLite export, or of a report exported through ``nsys`` first."""
    if path.name.lower().endswith(REPORT_SUFFIXES):
        with tempfile.TemporaryDirectory(prefix="roofline-nsys-") as folder:
            return _read_sqlite(_exported(path, Path(folder)), source=path)
    return _read_sqlite(path, source=path)


def _exported(report: Path, folder: Path) -> Path:
    nsys = shutil.which("nsys")
    if nsys is None:
        raise ToolNotFoundError("reading an Nsight Systems report needs nsys on PATH",
                                hint=f"export it where nsys is: nsys export --type sqlite {report.name}, "
                                     "then give the .sqlite file")
    source = report
    if report.name.lower().endswith(CAPTURE_SUFFIX):
        report = import_copy(report, folder, ordered(importers(nsys, "ncu"), version_of(nsys)))
    out = folder / (report.stem + ".sqlite")
    export_sqlite(report, out, nsys, force=True, source=source)
    return out


def export_sqlite(report: Path, out: Path, nsys: str, *, force: bool = False, source: Path | None = None) -> None:
    """Write ``out``, the SQLite export of ``report``, with ``nsys export``; InputError with nsys's reason, naming
    ``source`` (the user's file) when given, else the report."""
    cmd = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true" if force else "false", "--output", str(out),
           str(report)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InputError(f"nsys export took over {EXPORT_TIMEOUT_S} s", path=source or report,
                         hint=f"export it yourself: {' '.join(cmd[:-3])} {report.name}") from None
    if done.returncode != 0 or not out.is_file():
        said = (done.stderr or done.stdout).strip().splitlines()
        raise InputError(f"nsys export failed (exit {done.returncode}): {said[-1] if said else 'no output'}",
                         path=source or report, hint="open the report with the nsys version that wrote it, or a newer one")


def _read_sqlite(path: Path, *, source: Path) -> KernelTable:
    with Export(path, source) as export:
        kernels = export.kernels()
        label = str(source)
        if kernels.empty:
            raise InputError("the timeline holds no kernel launches", path=source,
                             hint="check that the capture range covers the GPU work (nsys profile -t cuda ...)")
        ranges = export.nvtx()
        ids, name_codes = np.unique(kernels["name_id"].to_numpy(dtype=np.int64), return_inverse=True)
        name_of = export.names(ids.tolist())
        frame, metrics, warnings = _kernel_table(kernels, ranges, ids, name_codes, name_of, label)
        activity = read_activity(export, kernels, frame["kernel_name"].array, frame["phase"].array,
                                 ranges.frame(PUSH_POP))
    return KernelTable(frame=frame, metrics=metrics, sources=(label,), warnings=warnings,
                       metric_hints=dict(NCU_HINTS), activity=activity)


def _kernel_table(kernels: pd.DataFrame, ranges: NvtxRanges, ids: np.ndarray, name_codes: np.ndarray,
                  name_of: dict[int, str], label: str) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...]]:
    """The kernel table's frame, metrics and warnings of an export's kernels and NVTX ranges."""
    source = label
    n = len(kernels)
    pid = kernels["pid"].to_numpy(dtype=np.int64)
    missing = [int(i) for i in ids if int(i) not in name_of]
    if missing:
        raise InputError(f"kernel names missing from StringIds (ids {', '.join(map(str, missing[:5]))})", path=source,
                         hint="export the report again: nsys export --type sqlite")
    names = encoded_text([name_of[int(i)] for i in ids], name_codes)
    texts, found = _attributed(ranges, kernels, pid, names)
    frame = empty_frame(n, counts=False)  # no count column: a timeline has no counters (time, flops, ops NaN)
    duration = kernels["end"].to_numpy(dtype=np.float64) - kernels["start"].to_numpy(dtype=np.float64)
    frame["time_s"] = duration * 1e-9
    frame["launch_id"] = pd.array(np.arange(n), dtype="Int64")
    frame["kernel_name"] = names
    frame["process_id"] = pd.array(pid, dtype="Int64")
    frame["device"] = pd.array(kernels["device"].to_numpy(dtype=np.int64), dtype="Int64")
    frame["stream"] = pd.array(kernels["stream"].to_numpy(dtype=np.int64), dtype="Int64")
    frame["grid"] = _dims(kernels, "grid")
    frame["block"] = _dims(kernels, "block")
    for c in ("phase", "module", "op"):
        frame[c] = _encoded(texts, found[c])
    frame["source"] = encoded_text([label], np.zeros(n, dtype=np.int64))
    frame = lean(validate(frame, where=label), copy=False)
    metrics = pd.DataFrame({"op_stack": _strings(texts, found["op_stack"]),
                            "start_ns": kernels["start"].to_numpy(dtype=np.int64),
                            "end_ns": kernels["end"].to_numpy(dtype=np.int64)}, index=frame.index)
    warnings = [f"{label}: {NO_COUNTERS}"]
    unlaunched = int(kernels["api_start"].isna().sum())
    if unlaunched and len(ranges):
        warnings.append(f"{label}: {unlaunched} of {n} kernels have no launching call in the file (the capture "
                        "began after it): no NVTX range is known for them")
    return frame, metrics, tuple(warnings)


def _attributed(ranges: NvtxRanges, kernels: pd.DataFrame, pid: np.ndarray,
                names: pd.Categorical) -> tuple[Texts, dict[str, np.ndarray]]:
    """Phase, module, op and op_stack of each launch from the NVTX ranges open at its call, as codes
    into the texts returned (:func:`roofline.readers.torch_forest.attribute_forest`)."""
    tid, at = kernels["tid"], kernels["api_start"]
    known = ~(tid.isna() | at.isna()).to_numpy()
    forest = push_pop_forest(ranges.kind, ranges.start, ranges.end, ranges.tid,
                             tid.to_numpy(dtype=np.int64, na_value=-1), at.to_numpy(dtype=np.int64, na_value=-1), known)
    se_codes, start_ends = start_end(ranges.frame(START_END), pid, at)
    default = np.array([d is None or d == DEFAULT_DOMAIN for d in ranges.domains.values()] + [False], dtype=bool)
    domain_index = {d: i for i, d in enumerate(ranges.domains)}
    in_default = default[[domain_index[d] for d in ranges.domain_id[forest.order].tolist()]] if len(forest.order) \
        else np.zeros(0, dtype=bool)
    texts = [ranges.text[i] for i in forest.order.tolist()]
    return attribute_forest(forest.parent, in_default, texts, forest.innermost, start_end_codes=se_codes,
                            start_end_phases=[start_end_phase(s) for s in start_ends], process=pd.Series(pid),
                            kernel_names=pd.Series(names))


def _encoded(texts: Texts, codes: np.ndarray) -> pd.Categorical:
    """An encoded identity column of codes into ``texts`` (-1: none): only the texts used are categories."""
    used = np.unique(codes[codes >= 0])
    remap = np.full(len(texts.values) + 1, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return encoded_text([texts.values[u] for u in used.tolist()], remap[codes])


def _strings(texts: Texts, codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Per launch text (``string`` dtype, <NA> for -1), each distinct text made once."""
    return strings(texts.objects(codes))


def _dims(kernels: pd.DataFrame, what: str) -> pd.Categorical:
    """``(x, y, z)`` of the grid or block, each distinct triple written once."""
    parts = [pd.factorize(kernels[f"{what}{a}"].to_numpy(dtype=np.int64), sort=True) for a in "XYZ"]
    (cx, ux), (cy, uy), (cz, uz) = parts
    key = (cx.astype(np.int64) * len(uy) + cy) * len(uz) + cz
    codes, distinct = pd.factorize(key)
    distinct = np.asarray(distinct, dtype=np.int64)
    x, y, z = ux[distinct // (len(uy) * len(uz))], uy[distinct // len(uz) % len(uy)], uz[distinct % len(uz)]
    return encoded_text([f"({a}, {b}, {c})" for a, b, c in zip(x.tolist(), y.tolist(), z.tolist())], codes)

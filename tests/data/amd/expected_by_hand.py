"""Hand ground truths for the AMD fixtures in this folder, from the CSV cells alone.

Standalone on purpose: the standard library only (csv, gzip, decimal), no pandas and no import from
roofline, so that the numbers the tests assert do not come from the code they test. Every formula
below is written out once, with its source, in EXPECTED.md.

    python tests/data/amd/expected_by_hand.py            # print the tables
    python tests/data/amd/expected_by_hand.py --write    # regenerate tests/amd_expected.py

Units: seconds, FLOP, bytes (decimal, never KiB except where a file states KiB and we convert).
None means unknown (the counter was not collected, or the time cannot be known), never zero.
"""

from __future__ import annotations

import csv
import gzip
import re
import statistics
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from pprint import pformat

HERE = Path(__file__).resolve().parent
OUT = HERE.parent.parent / "amd_expected.py"

#: vL1D (TCP) line and TCP->TCC request size per architecture, bytes (EXPECTED.md, "Lines").
LINE = {"gfx908": 64, "gfx90a": 64, "gfx942": 128, "gfx950": 128}


# ----------------------------------------------------------------------------------------- reading
def read_rows(path: Path) -> list[dict[str, str]]:
    """Every row of a CSV (plain or gzipped) as a dict of strings."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def number(cell: str | None) -> int | Decimal | None:
    """A cell as an exact number: int when integral, Decimal otherwise; None when absent."""
    if cell is None or cell.strip() == "":
        return None
    value = Decimal(cell.strip())
    return int(value) if value == value.to_integral_value() else value


def counter(row: dict[str, str], name: str) -> int | Decimal | None:
    """A counter's total: the `name` column, else the `name_sum` column, else the sum of `name[i]`."""
    for key in (name, name + "_sum"):
        if key in row:
            return number(row[key])
    parts = [number(v) for k, v in row.items() if re.fullmatch(re.escape(name) + r"\[\d+\]", k)]
    return sum(parts) if parts else None  # type: ignore[arg-type]


def duration_ns(start: str, end: str) -> int | Decimal | None:
    """End - Start in ns; None when the difference is not positive (e.g. both printed as 8.1097E+14)."""
    d = Decimal(end) - Decimal(start)
    if d <= 0:
        return None
    return int(d) if d == d.to_integral_value() else d


def seconds(ns: int | Decimal | None) -> float | None:
    return None if ns is None else float(Decimal(ns) / Decimal(10**9))


def plain(x):
    """Exact ints stay ints; Decimals become ints when integral, else floats."""
    if isinstance(x, Decimal):
        return int(x) if x == x.to_integral_value() else float(x)
    return x


# ------------------------------------------------------------------------------------- formulas
def _all(*xs):
    return all(x is not None for x in xs)


def vector_flops(row, precision: str):
    """64 x (ADD + MUL + TRANS + 2 x FMA) of SQ_INSTS_VALU_*_<precision>; None if any is missing."""
    add, mul, trans, fma = (counter(row, f"SQ_INSTS_VALU_{op}_{precision}") for op in ("ADD", "MUL", "TRANS", "FMA"))
    return 64 * (add + mul + trans + 2 * fma) if _all(add, mul, trans, fma) else None


def mfma_ops(row, kind: str):
    """512 x SQ_INSTS_VALU_MFMA_MOPS_<kind>; None if the counter is missing."""
    mops = counter(row, f"SQ_INSTS_VALU_MFMA_MOPS_{kind}")
    return None if mops is None else 512 * mops


def lds_bytes(row, banks: int = 32):
    """(SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT) x 4 B x banks."""
    active, conflict = counter(row, "SQ_LDS_IDX_ACTIVE"), counter(row, "SQ_LDS_BANK_CONFLICT")
    return (active - conflict) * 4 * banks if _all(active, conflict) else None


def l1_bytes(row, arch):
    """TCP_TOTAL_CACHE_ACCESSES x line."""
    acc = counter(row, "TCP_TOTAL_CACHE_ACCESSES")
    return None if acc is None else acc * LINE[arch]


def _l2_requests(row):
    return [counter(row, n) for n in ("TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ",
                                      "TCP_TCC_ATOMIC_WITH_RET_REQ", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ")]


def l2_bytes(row, arch):
    """(read + write + atomic with and without return requests) x line: the brief's formula."""
    r, w, a1, a2 = _l2_requests(row)
    return (r + w + a1 + a2) * LINE[arch] if _all(r, w, a1, a2) else None


def l2_bytes_split(row, arch):
    """128 x read + 64 x (write + atomics): rocprof-compute's own vL1D-L2 bandwidth on gfx94x/gfx950.

    On gfx90a/gfx908 every TCP->TCC request is 64 B, so this equals l2_bytes there."""
    r, w, a1, a2 = _l2_requests(row)
    return LINE[arch] * r + 64 * (w + a1 + a2) if _all(r, w, a1, a2) else None


def hbm_bytes_gfx90a(row):
    """32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B) + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B), TCC_EA_*."""
    rd, rd32, wr, wr64 = (counter(row, n) for n in ("TCC_EA_RDREQ", "TCC_EA_RDREQ_32B", "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B"))
    if not _all(rd, rd32, wr, wr64):
        return None, None
    return 32 * rd32 + 64 * (rd - rd32), 64 * wr64 + 32 * (wr - wr64)


def hbm_bytes_gfx942(row):
    """128 x BUBBLE + 32 x RDREQ_32B + 64 x (RDREQ - BUBBLE - RDREQ_32B) + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)."""
    bub, rd, rd32, wr, wr64 = (counter(row, n) for n in
                               ("TCC_BUBBLE", "TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B", "TCC_EA0_WRREQ", "TCC_EA0_WRREQ_64B"))
    if not _all(bub, rd, rd32, wr, wr64):
        return None, None
    return 128 * bub + 32 * rd32 + 64 * (rd - bub - rd32), 64 * wr64 + 32 * (wr - wr64)


def hbm_bytes_gfx950(row):
    """ROCm/rocm-systems PR 2501: 128 x RDREQ_128B + 32 x RDREQ_32B + 64 x (RDREQ - 128B - 32B) + the writes."""
    r128, rd, rd32, wr, wr64 = (counter(row, n) for n in
                                ("TCC_EA0_RDREQ_128B", "TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B", "TCC_EA0_WRREQ", "TCC_EA0_WRREQ_64B"))
    writes = 64 * wr64 + 32 * (wr - wr64) if _all(wr, wr64) else None
    if not _all(r128, rd, rd32):
        return None, writes
    return 128 * r128 + 32 * rd32 + 64 * (rd - r128 - rd32), writes


def _sum_or_none(a, b):
    return a + b if _all(a, b) else None


def counts(row, arch, banks=32):
    """Every count the roofline needs for one dispatch (one wide row), by the formulas above."""
    out = {
        "fp64_flops": vector_flops(row, "F64"),
        "fp32_flops": vector_flops(row, "F32"),
        "fp16_flops": vector_flops(row, "F16"),
        "mfma_f64_flops": mfma_ops(row, "F64"),
        "mfma_f32_flops": mfma_ops(row, "F32"),
        "mfma_f16_flops": mfma_ops(row, "F16"),
        "mfma_bf16_flops": mfma_ops(row, "BF16"),
        "mfma_f8_flops": mfma_ops(row, "F8"),
        "mfma_i8_ops": mfma_ops(row, "I8"),
        "lds_bytes": lds_bytes(row, banks),
        "l1_bytes": l1_bytes(row, arch),
        "l2_bytes": l2_bytes(row, arch),
        "l2_bytes_split": l2_bytes_split(row, arch),
    }
    if arch in ("gfx90a", "gfx908"):
        rd, wr = hbm_bytes_gfx90a(row)
        out.update(hbm_read_bytes=rd, hbm_write_bytes=wr, hbm_bytes=_sum_or_none(rd, wr))
    elif arch == "gfx942":
        rd, wr = hbm_bytes_gfx942(row)
        out.update(hbm_read_bytes=rd, hbm_write_bytes=wr, hbm_bytes=_sum_or_none(rd, wr))
    else:  # gfx950: the right formula needs TCC_EA0_RDREQ_128B; the gfx942 one is kept to show its error
        rd, wr = hbm_bytes_gfx950(row)
        old_rd, _ = hbm_bytes_gfx942(row)
        out.update(hbm_read_bytes=rd, hbm_write_bytes=wr, hbm_bytes=_sum_or_none(rd, wr),
                   hbm_read_bytes_gfx942_formula=old_rd,
                   hbm_bytes_gfx942_formula=_sum_or_none(old_rd, wr))
    return {k: plain(v) for k, v in out.items()}


# ------------------------------------------------------------------------------ wide folders
def lds_banks(folder: Path) -> int:
    """sysinfo.csv's lds_banks_per_cu; 32 where the (1.x) sysinfo has no such column (docs: 32 banks)."""
    row = read_rows(folder / "sysinfo.csv")[0]
    return int(row["lds_banks_per_cu"]) if row.get("lds_banks_per_cu") else 32


def wide_folder(name, arch, time_cols=("Start_Timestamp", "End_Timestamp")):
    folder = HERE / name
    banks = lds_banks(folder)
    path = folder / ("pmc_perf.csv.gz" if (folder / "pmc_perf.csv.gz").exists() else "pmc_perf.csv")
    dispatches = {}
    for row in read_rows(path):
        ns = duration_ns(row[time_cols[0]], row[time_cols[1]])
        grid = row.get("Grid_Size", row.get("grd"))
        dispatches[int(row["Dispatch_ID"])] = {
            "kernel": row["Kernel_Name"],
            "grid": int(grid),
            "time_ns": plain(ns),
            "time_s": seconds(ns),
            "waves": plain(counter(row, "SQ_WAVES")),
            **counts(row, arch, banks),
        }
    return dispatches


def totals(dispatches):
    keys = [k for k in next(iter(dispatches.values())) if k not in ("kernel", "grid")]
    out = {}
    for k in keys:
        vals = [d[k] for d in dispatches.values()]
        out[k] = None if any(v is None for v in vals) else plain(sum(Decimal(str(v)) for v in vals))
    return out


# --------------------------------------------------------------------- mixbench's known work
MIX = re.compile(r"benchmark_func<(?P<t>.+), 256, 8u, (?P<c>\d+)u>")
TYPES = {  # template type -> (short name, precision, lanes per element, bytes per element)
    "float": ("float", "fp32", 1, 4),
    "HIP_vector_type<float, 2u>": ("float2", "fp32", 2, 8),
    "double": ("double", "fp64", 1, 8),
    "__half2": ("half2", "fp16", 2, 4),
    "int": ("int", None, 1, 4),
    "short": ("short", None, 1, 2),
}


def mixbench_truth(kernel: str, grid: int):
    """FLOPs the source performs: per thread 8 x C FMAs on its 8 elements + 4 FMAs in the reduction,
    2 FLOP per FMA per lane; x2 lanes for float2/half2. Bytes: 8 elements read per thread, none written."""
    m = MIX.search(kernel)
    if not m:
        return None
    short, precision, lanes, size = TYPES[m["t"]]
    c = int(m["c"])
    work = grid * (16 * c + 8) * lanes
    return {"type": short, "compute_iterations": c, "precision": precision,
            "flops": work if precision else 0, "int_ops": 0 if precision else work,
            "bytes_read": grid * 8 * size, "bytes_written": 0}


# ------------------------------------------------------------------------------ long form (rocpd)
def long_folder(name, arch):
    """rocprof-compute 3.x with --format-rocprof-output rocpd: one row per counter per dispatch, each
    counter carrying the timestamps of the replay pass that collected it."""
    rows = read_rows(HERE / name / "pmc_perf.csv.gz")
    banks = lds_banks(HERE / name)
    wide = defaultdict(dict)
    passes = defaultdict(set)
    meta = {}
    for r in rows:
        d = int(r["Dispatch_ID"])
        wide[d][r["Counter_Name"]] = r["Counter_Value"]
        passes[d].add((int(r["Start_Timestamp"]), int(r["End_Timestamp"])))
        meta[d] = (r["Kernel_Name"], int(r["Grid_Size"]))
    out = {}
    for d in sorted(wide):
        spans = sorted(passes[d])
        durs = [e - s for s, e in spans]
        mean_ns = Decimal(sum(durs)) / len(durs)
        out[d] = {
            "kernel": meta[d][0], "grid": meta[d][1],
            "passes": len(spans),
            "pass_durations_ns": durs,
            "time_ns_mean_of_passes": plain(mean_ns),
            "time_s_mean_of_passes": seconds(mean_ns),
            "time_s_min_of_passes": seconds(min(durs)),
            "time_s_median_of_passes": seconds(Decimal(str(statistics.median(durs)))),
            "waves": plain(counter(wide[d], "SQ_WAVES")),
            **counts(wide[d], arch, banks),
        }
    return out


# ----------------------------------------------------------------------------------- roofline.csv
def roofline_csv(name):
    """Omniperf's measured peaks per device: *Bw columns in GB/s, *Flops/*Ops in GFLOP/s (GOP/s), decimal
    (rocm-amdgpu-bench prints mean = bytes / seconds / 1e9). Returned in SI: B/s, FLOP/s, OP/s."""
    out = {}
    for r in read_rows(HERE / name / "roofline.csv"):
        dev = int(r["device"])
        out[dev] = {k: float(Decimal(v) * 10**9) for k, v in r.items() if k != "device"}
    return out


# --------------------------------------------------------------------------------- rocprof v1
def rocprof_v1_laplacian(name):
    folder = HERE / name
    counters = {}
    for r in read_rows(folder / "data_movement.csv"):
        i = int(r["Index"])
        fetch_kib, write_kib = number(r["FETCH_SIZE"]), number(r["WRITE_SIZE"])
        acc = number(r["TCP_TOTAL_CACHE_ACCESSES_sum"])
        rd, wr = number(r["TCP_TCC_READ_REQ_sum"]), number(r["TCP_TCC_WRITE_REQ_sum"])
        counters[i] = {
            "kernel": r["KernelName"], "grid": int(r["grd"]),
            "time_s": None,  # this file has no timestamps (rocprof v1 without --timestamp on)
            "hbm_read_bytes": plain(fetch_kib * 1024), "hbm_write_bytes": plain(write_kib * 1024),
            "hbm_bytes": plain((fetch_kib + write_kib) * 1024),
            "l1_bytes": plain(acc * 64),
            "l2_read_write_bytes": plain((rd + wr) * 64),  # atomics were not collected
        }
    times = {}
    for r in read_rows(folder / "results.csv"):
        ns = duration_ns(r["BeginNs"], r["EndNs"])
        times[int(r["Index"])] = {"kernel": r["KernelName"], "time_ns": plain(ns), "time_s": seconds(ns),
                                  "duration_ns_column": int(r["DurationNs"])}
    return counters, times


# --------------------------------------------------------------------------------- rocprofv3
def rocprofv3_docs(name):
    folder = HERE / name
    cc = {}
    for r in read_rows(folder / "counter_collection.csv"):
        ns = duration_ns(r["Start_Timestamp"], r["End_Timestamp"])
        cc[int(r["Dispatch_Id"])] = {"kernel": r["Kernel_Name"], "grid": int(r["Grid_Size"]),
                                     r["Counter_Name"]: plain(number(r["Counter_Value"])),
                                     "time_ns": plain(ns), "time_s": seconds(ns)}
    kt = {}
    for r in read_rows(folder / "kernel_trace.csv"):
        ns = duration_ns(r["Start_Timestamp"], r["End_Timestamp"])
        grid = int(r["Grid_Size_X"]) * int(r["Grid_Size_Y"]) * int(r["Grid_Size_Z"])
        kt[int(r["Dispatch_Id"])] = {"kernel": r["Kernel_Name"], "grid": grid,
                                     "time_ns": plain(ns), "time_s": seconds(ns)}
    return cc, kt


# ----------------------------------------------------------------------------------------- all
VCOPY_FIXTURES = (("omniperf_vcopy_mi200_gfx90a", "gfx90a"), ("omniperf_vcopy_mi100_gfx908", "gfx908"),
                  ("omniperf_vcopy_mi300a_gfx942", "gfx942"), ("omniperf_vcopy_mi300x_gfx942", "gfx942"),
                  ("rocprofcompute_vcopy_mi350_gfx950", "gfx950"))

#: sample/vcopy.cpp: c[id] = a[id] over n = 1,048,576 doubles (-n 1048576 -b 256), per dispatch.
VCOPY_PROGRAM = {"flops": 0, "bytes_read": 1048576 * 8, "bytes_written": 1048576 * 8, "threads": 1048576}

#: problem.f90 (HPCTrainingExamples): the l41/l61 loops update half of the 512^3 interior (red-black),
#: 6 additions and 1 division by 7 per updated point; the l18 loops store i_rb to half of 514^3 points.
STENCIL_PROGRAM = {"updated_points_per_stencil_dispatch": 512**3 // 2,
                   "flops_per_updated_point": 7,
                   "flops_per_stencil_dispatch": 7 * (512**3 // 2),
                   "array_bytes": 514**3 * 8,
                   "init_points_per_dispatch": 514**3 // 2}

#: laplacian.cpp / kernel1.hpp (HPCTrainingExamples rocm-blogs-codes, nx = ny = nz = 512): 10 FLOP per
#: interior point; the blog's theoretical fetch (all points but 8 corners and 12 edges) and write sizes.
LAPLACIAN_PROGRAM = {"flops_per_dispatch": 10 * 510**3,
                     "theoretical_fetch_bytes": (512**3 - 8 - 4 * 510 * 3) * 8,
                     "theoretical_write_bytes": 510**3 * 8}


def compute():
    e = {}
    for name, arch in VCOPY_FIXTURES:
        per = wide_folder(name, arch)
        if arch == "gfx908":  # no per-precision VALU or MFMA counters on gfx908: FLOPs unknown
            assert all(d["fp32_flops"] is None and d["mfma_f16_flops"] is None for d in per.values())
        e[name] = {"arch": arch, "program_per_dispatch": VCOPY_PROGRAM, "dispatches": per, "totals": totals(per)}
    per = wide_folder("omniperf_stencil_mi300a_gfx942", "gfx942")
    e["omniperf_stencil_mi300a_gfx942"] = {"arch": "gfx942", "program": STENCIL_PROGRAM,
                                           "dispatches": per, "totals": totals(per)}
    per = long_folder("rocprofcompute_vcopy_mi300x_gfx942_rocpd", "gfx942")
    e["rocprofcompute_vcopy_mi300x_gfx942_rocpd"] = {"arch": "gfx942", "program_per_dispatch": VCOPY_PROGRAM,
                                                     "dispatches": per}
    mix = wide_folder("omniperf_mixbench_mi200_gfx90a", "gfx90a")
    e["omniperf_mixbench_mi200_gfx90a"] = {"arch": "gfx90a", "totals": totals(mix), "dispatches": mix}
    cnt, tim = rocprof_v1_laplacian("rocprofv1_laplacian_mi250x_gfx90a")
    e["rocprofv1_laplacian_mi250x_gfx90a"] = {"arch": "gfx90a", "program": LAPLACIAN_PROGRAM,
                                              "data_movement": cnt, "results": tim}
    cc, kt = rocprofv3_docs("rocprofv3_vectorops_sdkdocs")
    e["rocprofv3_vectorops_sdkdocs"] = {"arch": None, "counter_collection": cc, "kernel_trace": kt}
    return e


MIX_FIELDS = ("dispatch", "type", "compute_iterations", "grid", "time_ns", "fp64_flops", "fp32_flops",
              "fp16_flops", "l1_bytes", "l2_bytes", "hbm_read_bytes", "hbm_write_bytes",
              "source_flops", "source_int_ops", "source_bytes_read")


def mixbench_rows(mix):
    rows = []
    for i, d in sorted(mix.items()):
        t = mixbench_truth(d["kernel"], d["grid"])
        kind = t["type"] if t else d["kernel"]
        rows.append((i, kind, t["compute_iterations"] if t else None, d["grid"], d["time_ns"], d["fp64_flops"],
                     d["fp32_flops"], d["fp16_flops"], d["l1_bytes"], d["l2_bytes"], d["hbm_read_bytes"],
                     d["hbm_write_bytes"], t["flops"] if t else None, t["int_ops"] if t else None,
                     t["bytes_read"] if t else None))
    return rows


def mixbench_packing(mix):
    """Per type: (C, counter FLOPs, source FLOPs, ratio) over all compute-iteration settings."""
    out = defaultdict(list)
    for d in mix.values():
        t = mixbench_truth(d["kernel"], d["grid"])
        if not t or not t["precision"]:
            continue
        measured = d[f"{t['precision']}_flops"]
        out[t["type"]].append((t["compute_iterations"], measured, t["flops"], measured / t["flops"]))
    return dict(out)


def laplacian_summary(cnt, tim):
    """Named dispatches (the first three, the last) and sums per kernel name of both files."""
    def by_kernel(table, keys):
        out = defaultdict(lambda: defaultdict(int))
        for d in table.values():
            out[d["kernel"]]["dispatches"] += 1
            for k in keys:
                out[d["kernel"]][k] += d[k]
        return {k: dict(v) for k, v in out.items()}
    last = max(cnt)
    return {
        "named": {i: {"data_movement": cnt[i], "results": tim[i]} for i in (0, 1, 2, last)},
        "data_movement_by_kernel": by_kernel(cnt, ("hbm_read_bytes", "hbm_write_bytes", "hbm_bytes", "l1_bytes",
                                                   "l2_read_write_bytes")),
        "results_by_kernel": by_kernel(tim, ("time_ns", "duration_ns_column")),
    }


HEADER = '''"""Hand ground truths for tests/data/amd, generated by tests/data/amd/expected_by_hand.py (a
standalone standard-library script that reads the CSV cells; it imports nothing from roofline).
Formulas, their sources and the caveats are in tests/data/amd/EXPECTED.md.

Units: s, ns (time_ns), FLOP, B. None means unknown (not collected, or time not knowable), never 0.
Regenerate: python tests/data/amd/expected_by_hand.py --write
"""

# fmt: off
'''


def write(e):
    mix = e.pop("omniperf_mixbench_mi200_gfx90a")
    lap = e.pop("rocprofv1_laplacian_mi250x_gfx90a")
    docs = e.pop("rocprofv3_vectorops_sdkdocs")
    parts = [HEADER]
    parts.append("#: Omniperf / rocprof-compute workload folders, every dispatch (wide pmc_perf.csv or long rocpd form).\n")
    parts.append("WORKLOADS = " + pformat(e, width=110, sort_dicts=False) + "\n\n")
    parts.append("#: roofline.csv of the two MI200 folders (measured peaks, per device), in B/s, FLOP/s, OP/s.\n")
    parts.append("ROOFLINE_CSV = " + pformat({n: roofline_csv(n) for n in ("omniperf_mixbench_mi200_gfx90a",
                                                                        "omniperf_vcopy_mi200_gfx90a")},
                                             width=110, sort_dicts=False) + "\n\n")
    parts.append("#: mixbench on MI200 (gfx90a): totals over all 167 dispatches, and one row per dispatch.\n")
    parts.append("MIXBENCH_TOTALS = " + pformat(mix["totals"], width=110, sort_dicts=False) + "\n\n")
    parts.append("MIXBENCH_FIELDS = " + repr(MIX_FIELDS) + "\n\n")
    parts.append("MIXBENCH_ROWS = (\n" + "".join(f"    {r!r},\n" for r in mixbench_rows(mix["dispatches"])) + ")\n\n")
    parts.append("#: rocprof v1 (gfx90a, MI250X GCD): laplacian, counters in data_movement.csv, times in results.csv.\n")
    parts.append("LAPLACIAN_PROGRAM = " + pformat(lap["program"], width=110) + "\n\n")
    parts.append("LAPLACIAN = " + pformat(laplacian_summary(lap["data_movement"], lap["results"]), width=110,
                                          sort_dicts=False) + "\n\n")
    parts.append("#: rocprofv3 (rocprofiler-sdk docs data; GPU not named): counter_collection.csv and kernel_trace.csv.\n")
    parts.append("ROCPROFV3_DOCS = " + pformat(docs, width=110, sort_dicts=False) + "\n")
    OUT.write_text("".join(parts))


def main(argv):
    e = compute()
    if "--write" in argv:
        write(e)
        print(f"wrote {OUT}")
        return 0
    for name, fx in e.items():
        if "totals" in fx:
            print(f"\n== {name} ({fx['arch']})\n  totals:", fx["totals"])
    print("\n== mixbench: counter FLOPs / source FLOPs per type (C, counter, source, ratio)")
    for t, rows in mixbench_packing(e["omniperf_mixbench_mi200_gfx90a"]["dispatches"]).items():
        for r in rows:
            print(f"  {t:7s} C={r[0]:4d} counter={r[1]:>14d} source={r[2]:>14d} ratio={r[3]:.6f}")
    lap = e["rocprofv1_laplacian_mi250x_gfx90a"]
    print("\n== laplacian", pformat(laplacian_summary(lap["data_movement"], lap["results"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

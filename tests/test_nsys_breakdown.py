"""Where a timeline's time went (roofline.analysis.breakdown), on real Nsight Systems exports and on
small timelines made by hand. Every expected figure on the real files is computed here with SQL on the
export (window functions over the sorted intervals), never taken from the code under test; the
synthetic cases' answers are worked out by hand in their comments."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofline import api
from roofline.analysis.breakdown import BOUND_UNKNOWN, COLLECTIVES, breakdown
from roofline.cli.app import main
from roofline.errors import InputError
from roofline.kernels import KernelTable, from_records
from roofline.kernels.activity import COPY_KINDS, Activity, empty_host

DATA = Path(__file__).parent / "data" / "nsys"
SAXPY = DATA / "pipit_saxpy_mpi" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"  # nsys 2022.2, 1 GPU, memcpy
CLOVERLEAF = DATA / "pipit_cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite"  # nsys 2024.5, memcpy, no memset table
MFU = DATA / "nsysai_mfu_before" / "mfu_2gpu_before.sqlite"  # nsys 2026.2, 2 GPUs, NCCL, memcpy, memset

K, M, S = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"


def sql(path: Path, query: str, *args: object) -> list[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(query, args).fetchall()
    finally:
        db.close()


def intervals(path: Path, device: int, *, copies: bool = True, nccl: bool | None = None) -> str:
    """SQL of the device's intervals (start, end): kernels (only NCCL's, none of them, or all), and its copies."""
    name = {True: " AND s.value LIKE 'nccl%'", False: " AND s.value NOT LIKE 'nccl%'", None: ""}[nccl]
    parts = [f'SELECT k.start, k."end" FROM {K} k JOIN StringIds s ON s.id = k.demangledName WHERE k.deviceId = {device}{name}']
    tables = {t for (t,) in sql(path, "SELECT name FROM sqlite_master")}
    if copies:
        parts += [f'SELECT start, "end" FROM {t} WHERE deviceId = {device}' for t in (M, S) if t in tables]
    return " UNION ALL ".join(parts)


def union_ns(path: Path, what: str) -> tuple[int, int, int]:
    """(first start, last end, length of the union) of the intervals ``what``: the union is the span
    less the gaps, a gap being where an interval starts after every earlier one (by start) has ended."""
    (first, last, gaps), = sql(path, f"""
        WITH a AS ({what}),
        r AS (SELECT start, "end", MAX("end") OVER (ORDER BY start, "end" ROWS BETWEEN UNBOUNDED PRECEDING
                                                   AND 1 PRECEDING) AS before FROM a)
        SELECT MIN(start), MAX("end"), SUM(CASE WHEN start > before THEN start - before ELSE 0 END) FROM r""")
    return first, last, (last - first) - gaps


def overlap_ns(path: Path, device: int) -> int:
    """Time with two or more kernels running on the device: a running count of +1 at each start and -1
    at each end (ends first at a tie), each count held until the next event."""
    (total,), = sql(path, f"""
        WITH e AS (SELECT start AS t, 1 AS d FROM {K} WHERE deviceId = {device}
                   UNION ALL SELECT "end", -1 FROM {K} WHERE deviceId = {device}),
        s AS (SELECT t, SUM(d) OVER (ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS n,
                     LEAD(t) OVER (ORDER BY t, d) AS next FROM e)
        SELECT COALESCE(SUM(CASE WHEN n >= 2 THEN next - t ELSE 0 END), 0) FROM s""")
    return total


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


@pytest.mark.parametrize("path, device, wall, busy, compute, comm, overlap", [
    # figures from union_ns / overlap_ns above, printed once with these queries and checked by eye:
    (SAXPY, 0, 1_097_327_843, 373_273_080, 88_573_480, 284_699_600, 0),
    (CLOVERLEAF, 0, 342_407_810, 303_795_463, 294_404_540, 9_390_923, 0),
    (MFU, 0, 299_848_812, 273_817_787, 253_690_832, 20_126_955, 12_442),
    (MFU, 1, 298_661_551, 267_275_916, 256_095_624, 11_180_292, 0),
])
def test_whole_run_per_device_against_sql(path, device, wall, busy, compute, comm, overlap):
    first, last, all_busy = union_ns(path, intervals(path, device))
    assert (last - first, all_busy) == (wall, busy)
    # kernel time is the union of the compute (non-NCCL) kernels; exposed communication and copies the
    # rest of the busy time; idle what is left of the window
    assert union_ns(path, intervals(path, device, copies=False, nccl=False))[2] == compute
    assert busy - compute == comm
    assert overlap_ns(path, device) == overlap
    split = api.breakdown(api.read([path]))
    (w,) = [w for w in split.windows if w.device == device]
    assert (w.name, w.end_ns - w.start_ns, w.start_ns) == ("run", wall, first)
    assert ns(w.kernel_total_s) == compute and set(w.kernel_s) == {BOUND_UNKNOWN}
    assert ns(w.communication_total_s) == comm
    assert ns(w.idle_total_s) == wall - busy
    assert ns(w.overlap_s) == overlap
    assert not split.bounds_known and any("no counters" in n for n in split.notes)


def test_mfu_communication_by_kind_against_sql():
    """Exposed time of NCCL kernels (none runs under a compute kernel there: hidden 0) and of each copy
    kind on device 1, where nothing of two kinds runs at once (checked: overlap 0 and the kinds' sum is
    the exposed total)."""
    w = [w for w in api.breakdown(api.read([MFU])).windows if w.device == 1][0]
    (nccl,), = sql(MFU, f'SELECT SUM(k."end" - k.start) FROM {K} k JOIN StringIds s ON s.id = k.demangledName '
                        "WHERE k.deviceId = 1 AND s.value LIKE 'nccl%'")
    assert ns(w.communication_s[COLLECTIVES]) == nccl == 8_229_100
    (memset,), = sql(MFU, f'SELECT SUM("end" - start) FROM {S} WHERE deviceId = 1')
    assert ns(w.communication_s["memset"]) == memset
    (dtod,), = sql(MFU, f'SELECT SUM("end" - start) FROM {M} WHERE deviceId = 1 AND copyKind = 8')
    assert ns(w.communication_s["memcpy DtoD"]) == dtod == 2_834_360
    assert w.hidden_communication_s == 0


def test_saxpy_gaps_by_cause_against_sql():
    """Each gap ends where an interval starts after all earlier ones ended; its cause from the call that
    issued that interval (same correlation id and process): a cudaMemcpy (synchronous) of the process
    returned in [gap start, call start] -> synchronization, else the call returned after the gap began ->
    launch-bound, else other."""
    rows = sql(SAXPY, f"""
        WITH a AS (SELECT start, "end", correlationId, globalPid FROM {K}
                   UNION ALL SELECT start, "end", correlationId, globalPid FROM {M}),
        r AS (SELECT *, MAX("end") OVER (ORDER BY start, "end" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                        AS before FROM a),
        g AS (SELECT r.before AS g0, r.start AS g1, c.start AS cs, c."end" AS ce, r.globalPid AS pid FROM r
              JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = r.correlationId AND c.eventClass = 0
                AND (c.globalTid >> 24) = (r.globalPid >> 24)
              WHERE r.start > r.before)
        SELECT CASE WHEN EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME y JOIN StringIds n ON n.id = y.nameId
                                 WHERE y.eventClass = 0 AND n.value = 'cudaMemcpy_v3020'
                                   AND (y.globalTid >> 24) = (g.pid >> 24) AND y."end" BETWEEN g.g0 AND g.cs)
                    THEN 'synchronization' WHEN g.ce > g.g0 THEN 'launch-bound' ELSE 'other' END AS cause,
               COUNT(*), SUM(g.g1 - g.g0) FROM g GROUP BY 1 ORDER BY 1""")
    assert rows == [("launch-bound", 15, 463_580), ("synchronization", 4, 723_591_183)]
    (w,) = api.breakdown(api.read([SAXPY])).windows
    assert dict(w.gaps) == {"launch-bound": 15, "synchronization": 4}
    assert {k: ns(v) for k, v in w.idle_s.items()} == {"launch-bound": 463_580, "synchronization": 723_591_183}
    # ranked together: the idle causes, longest first (no kernel's savable time is known here)
    assert [(s.what, ns(s.seconds)) for s in w.savable] == [("idle: synchronization", 723_591_183),
                                                            ("idle: launch-bound", 463_580)]


def test_saxpy_steps_are_its_five_saxpy_ranges():
    """The outermost default-domain range "saxpy" repeats 5 times; each launched one kernel, so each
    step's window is that kernel: SELECT "end" - start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start."""
    expected = [r[0] for r in sql(SAXPY, f'SELECT "end" - start FROM {K} ORDER BY start')]
    split = api.breakdown(api.read([SAXPY]), window="step")
    assert [w.name for w in split.windows] == [f"saxpy #{i}" for i in range(1, 6)]
    assert [w.end_ns - w.start_ns for w in split.windows] == expected
    assert all(ns(w.kernel_total_s) == w.end_ns - w.start_ns and not w.idle_s for w in split.windows)


def test_phase_windows_span_their_kernels():
    """Per device and phase, the window runs from the phase's first kernel start to its last kernel end:
    SELECT min(start), max(end) of the kernels of device 0 whose phase (the kernel table's) is AllToAll4D."""
    table = api.read([MFU])
    frame = table.frame
    mine = (frame["device"] == 0).to_numpy() & (frame["phase"].astype("string") == "AllToAll4D").fillna(False).to_numpy()
    first, last = table.metrics["start_ns"][mine].min(), table.metrics["end_ns"][mine].max()
    (w,) = [w for w in api.breakdown(table, window="phase").windows if w.device == 0 and w.name == "AllToAll4D"]
    assert (w.start_ns, w.end_ns) == (first, last)
    total = w.kernel_total_s + w.communication_total_s + w.idle_total_s
    assert ns(total) == w.end_ns - w.start_ns


# --- small timelines made by hand -------------------------------------------------------------------

def activity(kernels: list[tuple], copies: list[tuple] = (), syncs: list[tuple] = ()) -> Activity:
    """kernels: (start, end, stream, call_start, call_end, nccl); copies: (start, end, kind, call_start,
    call_end); syncs: (start, end); one device (0), one process (7)."""
    calls = lambda rows, i: pd.array([r[i] for r in rows], dtype="Int64")  # noqa: E731
    k = pd.DataFrame({"launch_id": np.arange(len(kernels)), "device": 0, "stream": [r[2] for r in kernels], "pid": 7,
                      "start_ns": [r[0] for r in kernels], "end_ns": [r[1] for r in kernels],
                      "call_start_ns": calls(kernels, 3), "call_end_ns": calls(kernels, 4),
                      "communication": [r[5] for r in kernels], "phase": pd.array(["p"] * len(kernels), dtype="string")})
    c = pd.DataFrame({"device": np.zeros(len(copies), dtype=np.int64), "stream": 9, "pid": 7,
                      "start_ns": np.array([r[0] for r in copies], dtype=np.int64),
                      "end_ns": np.array([r[1] for r in copies], dtype=np.int64),
                      "kind": pd.Categorical([r[2] for r in copies], categories=list(COPY_KINDS)), "bytes": 0,
                      "call_start_ns": calls(copies, 3), "call_end_ns": calls(copies, 4)})
    s = empty_host() if not syncs else pd.DataFrame({"pid": 7, "tid": 1, "start_ns": [r[0] for r in syncs],
                                                     "end_ns": [r[1] for r in syncs], "name": "cudaDeviceSynchronize"})
    return Activity(kernels=k, copies=c, syncs=s)


def bounds(*labels: str | None, savable: tuple[float, ...] = ()) -> pd.DataFrame:
    n = len(labels)
    return pd.DataFrame({"bound": pd.array(list(labels), dtype="string"),
                         "savable_s": list(savable) if savable else [np.nan] * n,
                         "group": pd.array([f"k{i}" for i in range(n)], dtype="string")}, index=pd.Index(range(n)))


def test_kernels_overlapping_on_two_streams_share_the_time_and_count_once():
    """A (dram) on stream 1 runs 0-100 ns, B (fp32) on stream 2 runs 50-150: wall 150 ns, no idle;
    0-50 A alone -> dram 50; 50-100 both -> 25 each; 100-150 B alone -> fp32 50. dram 75, fp32 75,
    overlap 50, kernel time 150 (not 200)."""
    act = activity([(0, 100, 1, 0, 1, False), (50, 150, 2, 1, 2, False)])
    (w,) = breakdown(act, roofline=bounds("dram", "fp32")).windows
    assert w.end_ns - w.start_ns == 150
    assert {k: ns(v) for k, v in w.kernel_s.items()} == {"dram": 75, "fp32": 75}
    assert ns(w.overlap_s) == 50 and not w.idle_s and not w.communication_s


def test_communication_under_a_kernel_is_hidden_and_the_rest_exposed():
    """Compute 0-100, NCCL 80-120, a memcpy HtoD 130-140 issued early (call 0-1): kernel 100, exposed
    communication 20 (NCCL) + 10 (memcpy), overlap 20 (two kernels 80-100), hidden 20, one gap 120-130
    whose memcpy was issued long before -> other, 10 ns."""
    act = activity([(0, 100, 1, 0, 1, False), (80, 120, 2, 0, 1, True)], copies=[(130, 140, "memcpy HtoD", 0, 1)])
    (w,) = breakdown(act, roofline=bounds("l2", None)).windows
    assert {k: ns(v) for k, v in w.kernel_s.items()} == {"l2": 100}
    assert {k: ns(v) for k, v in w.communication_s.items()} == {COLLECTIVES: 20, "memcpy HtoD": 10}
    assert (ns(w.overlap_s), ns(w.hidden_communication_s)) == (20, 20)
    assert dict(w.gaps) == {"other": 1} and ns(w.idle_s["other"]) == 10


def test_each_gap_cause():
    """K0 0-10; K1 20-30 whose call ran 12-15 (after the GPU went idle at 10) -> launch-bound 10 ns;
    K2 40-50 called at 5-8, long before the gap at 30 -> other 10 ns; a synchronize returns at 52, then
    K3's call 55-57, K3 60-70 -> synchronization 10 ns; K4 80-90 with no call in the file -> unknown 10 ns."""
    act = activity([(0, 10, 1, 0, 1, False), (20, 30, 1, 12, 15, False), (40, 50, 1, 5, 8, False),
                    (60, 70, 1, 55, 57, False), (80, 90, 1, None, None, False)], syncs=[(45, 52)])
    (w,) = breakdown(act).windows
    assert dict(w.gaps) == {"launch-bound": 1, "other": 1, "synchronization": 1, "unknown": 1}
    assert {k: ns(v) for k, v in w.idle_s.items()} == {"launch-bound": 10, "other": 10, "synchronization": 10,
                                                         "unknown": 10}
    assert ns(w.kernel_s[BOUND_UNKNOWN]) == 50
    # a launch call that began before the GPU went idle (85) and returned after (95 > 90): launch-bound
    (w,) = breakdown(activity([(0, 90, 1, 0, 1, False), (100, 110, 1, 85, 95, False)])).windows
    assert dict(w.gaps) == {"launch-bound": 1}
    # a synchronization that returned before the gap began does not explain it: launch-bound then
    (w,) = breakdown(activity([(0, 10, 1, 0, 1, False), (20, 30, 1, 12, 15, False)], syncs=[(0, 9)])).windows
    assert dict(w.gaps) == {"launch-bound": 1}


def test_savable_time_of_kernels_and_gaps_ranked_together():
    """K0 0-100 (savable 30 ns by the roofline), gap 100-150 launch-bound (50 ns), K1 150-170 (savable
    5 ns): ranked 50 (idle), 30 (k0), 5 (k1)."""
    act = activity([(0, 100, 1, 0, 1, False), (150, 170, 1, 120, 121, False)])
    (w,) = breakdown(act, roofline=bounds("dram", "fp32", savable=(30e-9, 5e-9))).windows
    assert [(s.what, ns(s.seconds)) for s in w.savable] == [("idle: launch-bound", 50), ("k0", 30), ("k1", 5)]


def test_bounds_and_savable_time_from_a_roofline_analysis():
    """Two kernels with counts on a machine given: their bounds and savable times (the analysis's, per
    launch) are what the breakdown splits the kernel time by."""
    table = KernelTable(from_records([
        {"kernel_name": "stream", "time_s": 100e-9, "fp32_flops": 1e3, "dram_bytes": 1e6, "device": 0, "stream": 1},
        {"kernel_name": "gemm", "time_s": 50e-9, "fp32_flops": 1e9, "dram_bytes": 1e3, "device": 0, "stream": 1},
    ]), activity=activity([(0, 100, 1, 0, 1, False), (100, 150, 1, 2, 3, False)]))
    analysis = api.analyze(table, "h100-sxm", by="name")
    split = api.breakdown(table, analysis)
    rows = analysis.frame.set_index("kernel_name")
    (w,) = split.windows
    assert split.bounds_known
    expected = {rows.loc["stream", "bound"]: 100, rows.loc["gemm", "bound"]: 50}
    assert {k: ns(v) for k, v in w.kernel_s.items()} == expected
    assert rows.loc["stream", "bound"] == "dram"
    kernels = {s.what: s.seconds for s in w.savable if s.kind == "kernels"}
    assert kernels["stream"] == pytest.approx(rows.loc["stream", "savable_time_s"])
    assert kernels["gemm"] == pytest.approx(rows.loc["gemm", "savable_time_s"])


# --- the command line and the API on bad input ----------------------------------------------------

def test_analyze_prints_where_the_time_went_for_a_timeline(capsys):
    assert main(["analyze", str(SAXPY), "-q"]) == 0
    out = capsys.readouterr().out
    assert "Where the time went" in out and "synchronization" in out


def test_json_holds_the_breakdown(tmp_path):
    out = tmp_path / "saxpy.json"
    assert main(["analyze", str(SAXPY), "--json", str(out), "-q"]) == 0
    (w,) = json.loads(out.read_text())["breakdown"]["windows"]
    assert w["gaps"] == {"launch-bound": 15, "synchronization": 4} and w["end_ns"] - w["start_ns"] == 1_097_327_843


def test_steps_of_a_timeline_without_them_refused_with_one_message(capsys):
    assert main(["analyze", str(CLOVERLEAF), "--breakdown", "step", "-q"]) != 0
    captured = capsys.readouterr()
    assert "no repeating outermost NVTX range" in captured.err and "Traceback" not in captured.err
    assert "Kernels by time" not in captured.out  # refused before printing anything


def test_a_profile_without_a_timeline_has_no_breakdown():
    table = KernelTable(from_records([{"kernel_name": "k", "time_s": 1e-6}]))
    with pytest.raises(InputError, match="needs a timeline"):
        api.breakdown(table)


def test_html_report_draws_the_breakdown_beside_the_roofline(tmp_path):
    out = tmp_path / "saxpy.html"
    assert main(["analyze", str(SAXPY), "--html", str(out), "-q"]) == 0
    text = out.read_text()
    assert "Where the time went, per device (run)" in text and "idle: synchronization" in text

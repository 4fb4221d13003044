"""Where a step's time goes on each device: :func:`breakdown` of a timeline's :class:`~roofline.kernels.activity.Activity`.

Per device and per window (the whole run, each NVTX phase, or each step), the window's wall time is
cut into kernel time by bound, exposed communication and copies by kind, and idle gaps by cause
(:mod:`roofline.analysis.intervals` says how pieces with several things running count). Pure: no I/O.

**Windows** (``window=``), each on one device, from the start of its first piece of work to the end of
its last; all work of the device inside it counts, whatever launched it:

- ``"run"``: all the device's kernels, copies and memsets;
- ``"phase"``: the device's kernels of one NVTX phase (the kernel table's ``phase``);
- ``"step"``: the kernels, copies and memsets whose host call was made during one occurrence of the
  step range (:attr:`Activity.steps`; per process, the repeating name whose occurrences launched
  the most kernels), in that process.

**Idle gaps by cause**, from the work that ends the gap (the first to start when it ends) and the
host call that issued it:

1. ``synchronization``: a host synchronization of the same process (:attr:`Activity.syncs`: an
   explicit synchronize, or a synchronous copy) returned after the gap began and before that call
   began: the host waited for the GPU to drain, then had to issue the next work;
2. ``launch-bound``: that call returned after the gap began: the GPU waited for the host (kernels
   shorter than the time between their launches);
3. ``other``: the call had returned before the gap began: the work was issued, the GPU waited for
   something else (another stream, an event, another device) or for the launch itself;
4. ``unknown``: the call is not in the file (the capture began after it).

**Savable time**: an idle gap's length is an upper bound on the time saved by closing it; a kernel
group's savable time is the roofline analysis's (time above the roofline), shared among its launches
by their time; both ranked together per window. Communication kernels (NCCL's and the like, by
name: :data:`roofline.readers.nsys.gpu_activity.COMMUNICATION`) count as communication, not kernel time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from roofline.analysis.intervals import Spans, Split, split_window
from roofline.analysis.result import Analysis
from roofline.errors import InputError
from roofline.kernels import KernelTable, group_keys, has_runs
from roofline.kernels.activity import Activity
from roofline.kernels.steps import choose, spans

#: The windows :func:`breakdown` cuts a timeline into.
WINDOWS = ("run", "phase", "step")
#: Idle causes, in the order the rules try them.
SYNCHRONIZATION, LAUNCH_BOUND, OTHER, UNKNOWN = "synchronization", "launch-bound", "other", "unknown"
CAUSES = (SYNCHRONIZATION, LAUNCH_BOUND, OTHER, UNKNOWN)
#: The label of kernel time whose bound the analysis does not know.
BOUND_UNKNOWN = "bound unknown (no counters)"
#: The label of communication kernels' exposed time.
COLLECTIVES = "collective kernels"


@dataclass(frozen=True)
class Savable:
    """Time that could be saved: ``what`` (a kernel group's label, or an idle cause), ``kind``
    (``"kernels"`` or ``"idle"``) and ``seconds`` (for idle, the gaps' length: an upper bound)."""

    what: str
    kind: str
    seconds: float


@dataclass(frozen=True)
class Window:
    """One device's window (ns on the timeline's clock) and its seconds by what ran: ``kernel_s`` by
    bound, ``communication_s`` (exposed) by kind, ``idle_s`` and ``gaps`` (how many) by cause;
    ``overlap_s`` (more than one kernel at once) and ``hidden_communication_s`` (under compute kernels)
    lie within the kernel and communication time; ``savable`` ranked, largest first."""

    device: int
    name: str
    start_ns: int
    end_ns: int
    kernel_s: Mapping[str, float]
    communication_s: Mapping[str, float]
    idle_s: Mapping[str, float]
    gaps: Mapping[str, int]
    overlap_s: float
    hidden_communication_s: float
    savable: tuple[Savable, ...]

    @property
    def wall_s(self) -> float:
        """The window's length, seconds."""
        return (self.end_ns - self.start_ns) * 1e-9

    @property
    def kernel_total_s(self) -> float:
        return float(sum(self.kernel_s.values()))

    @property
    def communication_total_s(self) -> float:
        return float(sum(self.communication_s.values()))

    @property
    def idle_total_s(self) -> float:
        return float(sum(self.idle_s.values()))


@dataclass(frozen=True)
class Breakdown:
    """What :func:`breakdown` returns: the ``window`` kind (:data:`WINDOWS`), the windows per device in
    time order, whether any kernel's bound is known, and notes on what is unknown."""

    window: str
    windows: tuple[Window, ...]
    bounds_known: bool
    notes: tuple[str, ...] = ()


def launch_roofline(table: KernelTable, analysis: Analysis) -> pd.DataFrame:
    """Each launch of ``table`` (the table ``analysis`` was made of) with its group's ``bound`` (<NA>:
    unknown), ``savable_s`` (the group's savable time shared by launch time; NaN: unknown) and ``group``
    (the row's label), indexed by ``launch_id``."""
    frame, rows = table.frame, analysis.frame
    keys = group_keys(analysis.by, runs=has_runs(frame))
    missing = "\x00"

    def keyed(f: pd.DataFrame) -> pd.Series:
        parts = [f[k].astype("string").fillna(missing).astype(str) for k in keys]
        return parts[0].str.cat(parts[1:], sep="\x01") if len(parts) > 1 else parts[0]

    by_key = pd.DataFrame({"key": keyed(rows).to_numpy(), "bound": rows["bound"].astype("string").array,
                           "group_s": rows["time_s"].to_numpy(dtype=float),
                           "savable": rows["savable_time_s"].to_numpy(dtype=float),
                           "group": rows["kernel_name"].astype("string").array}).drop_duplicates("key")
    launches = pd.DataFrame({"key": keyed(frame).to_numpy(), "time_s": frame["time_s"].to_numpy(dtype=float),
                             "launch_id": frame["launch_id"].to_numpy(dtype=np.int64)})
    joined = launches.merge(by_key, on="key", how="left")
    share = np.where(joined["group_s"].to_numpy() > 0, joined["time_s"].to_numpy() / joined["group_s"].to_numpy(), np.nan)
    return pd.DataFrame({"bound": joined["bound"].array, "savable_s": joined["savable"].to_numpy() * share,
                         "group": joined["group"].array}, index=pd.Index(joined["launch_id"].to_numpy(), name="launch_id"))


def breakdown(activity: Activity, *, window: str = "run", roofline: pd.DataFrame | None = None) -> Breakdown:
    """``activity`` cut per device and ``window`` (:data:`WINDOWS`) by the rules of this module.
    ``roofline``: each launch's ``bound``, ``savable_s`` and ``group`` by ``launch_id``
    (:func:`launch_roofline`); None, or a launch missing from it: bound and savable time unknown."""
    if window not in WINDOWS:
        raise InputError(f"unknown breakdown window {window!r}", hint=f"choose one of {', '.join(WINDOWS)}")
    kernels, copies = activity.kernels, activity.copies
    bound = pd.array([pd.NA] * len(kernels), dtype="string")
    savable = np.full(len(kernels), np.nan)
    group = pd.array([pd.NA] * len(kernels), dtype="string")
    if roofline is not None and len(kernels):
        found = roofline.reindex(kernels["launch_id"].to_numpy())
        bound, savable, group = found["bound"].astype("string").array, found["savable_s"].to_numpy(float), \
            found["group"].astype("string").array
    comm = kernels["communication"].to_numpy(dtype=bool)
    labels = pd.Series(bound).fillna(BOUND_UNKNOWN).to_numpy(dtype=object)
    bounds_known = bool(pd.Series(bound)[~comm].notna().any())
    notes = list(activity.notes)
    if not bounds_known:
        notes.append("kernel time by bound needs each kernel's FLOPs and bytes: a timeline has no counters "
                     "(join an Nsight Compute profile of the same program)")
    unlaunched = int(kernels["call_start_ns"].isna().sum()) + int(copies["call_start_ns"].isna().sum())
    if unlaunched:
        notes.append(f"{unlaunched} kernels and copies have no launching call in the file: a gap before one has an "
                     "unknown cause")
    out: list[Window] = []
    for device in activity.devices:
        on_k = kernels["device"].to_numpy() == device
        on_c = copies["device"].to_numpy() == device
        sides = _Device(activity, device, on_k, on_c, labels, comm, savable, group)
        for name, w0, w1 in _windows(activity, window, device, on_k, on_c):
            out.append(sides.window(name, w0, w1))
    if window == "step" and not out:
        raise InputError("the timeline has no repeating outermost NVTX range to cut into steps",
                         hint="wrap each training step in one range (torch.profiler's ProfilerStep#N, or "
                              "nvtx.range('train_step')), or ask for --breakdown run or phase")
    out.sort(key=lambda w: (w.device, w.start_ns, w.name))
    return Breakdown(window=window, windows=tuple(out), bounds_known=bounds_known, notes=tuple(notes))


def _windows(activity: Activity, window: str, device: int, on_k: np.ndarray,
             on_c: np.ndarray) -> list[tuple[str, int, int]]:
    """``(name, start_ns, end_ns)`` of the device's windows of the kind asked."""
    k, c = activity.kernels[on_k], activity.copies[on_c]
    starts = np.concatenate([k["start_ns"].to_numpy(), c["start_ns"].to_numpy()])
    ends = np.concatenate([k["end_ns"].to_numpy(), c["end_ns"].to_numpy()])
    if window == "run":
        return [("run", int(starts.min()), int(ends.max()))] if len(starts) else []
    if window == "phase":
        spans = k[k["phase"].notna()].groupby(k["phase"].astype("string").dropna(), sort=False)
        return [(str(name), int(g["start_ns"].min()), int(g["end_ns"].max())) for name, g in spans]
    found = []
    for name, number, pid, s, e in _steps(activity):
        made_k = (k["pid"].to_numpy() == pid) & _called_in(k, s, e)
        made_c = (c["pid"].to_numpy() == pid) & _called_in(c, s, e)
        if made_k.any() or made_c.any():
            w0 = min(np.concatenate([k["start_ns"].to_numpy()[made_k], c["start_ns"].to_numpy()[made_c]]))
            w1 = max(np.concatenate([k["end_ns"].to_numpy()[made_k], c["end_ns"].to_numpy()[made_c]]))
            found.append((f"{name} #{number}", int(w0), int(w1)))
    return found


def _called_in(rows: pd.DataFrame, start: int, end: int) -> np.ndarray:
    """True for the rows whose host call began in ``[start, end)`` (an unknown call: False)."""
    at = rows["call_start_ns"].to_numpy(dtype=np.float64, na_value=np.nan)
    return (at >= start) & (at < end)


def _steps(activity: Activity) -> list[tuple[str, int, int, int, int]]:
    """``(name, occurrence number from 1, pid, start_ns, end_ns)`` of each process's steps: the occurrences
    of the name :func:`roofline.kernels.steps.choose` makes the step, by the process's launching calls."""
    steps, kernels = activity.steps, activity.kernels
    out = []
    for pid, mine in steps.groupby("pid", sort=True):
        own = kernels[kernels["pid"].to_numpy() == pid]
        calls = np.sort(own["call_start_ns"].dropna().to_numpy(dtype=np.int64))
        best = choose(mine, calls)
        if best is None:
            continue
        chosen = mine[(mine["name"] == best).to_numpy()].sort_values("start_ns")
        starts, ends, _ = spans(chosen, calls)
        out += [(best, i + 1, int(pid), int(s), int(e)) for i, (s, e) in enumerate(zip(starts, ends))]
    return out


class _Device:
    """One device's work, sorted, ready to cut into windows."""

    def __init__(self, activity: Activity, device: int, on_k: np.ndarray, on_c: np.ndarray, labels: np.ndarray,
                 comm: np.ndarray, savable: np.ndarray, group: pd.api.extensions.ExtensionArray) -> None:
        k, c = activity.kernels[on_k], activity.copies[on_c]
        self.device = device
        compute, collective = ~comm[on_k], comm[on_k]
        bounds = sorted(set(labels[on_k][compute].tolist()))
        code = {b: i for i, b in enumerate(bounds)}
        ks, ke = k["start_ns"].to_numpy(dtype=np.int64), k["end_ns"].to_numpy(dtype=np.int64)
        self.compute = Spans(ks[compute], ke[compute], np.array([code[b] for b in labels[on_k][compute]], dtype=np.int64),
                             bounds, np.ones(int(compute.sum()), dtype=bool))
        kinds = [COLLECTIVES, *[str(x) for x in c["kind"].cat.categories]] if len(c) else [COLLECTIVES]
        kind_codes = c["kind"].cat.codes.to_numpy(dtype=np.int64) + 1 if len(c) else np.zeros(0, dtype=np.int64)
        self.communication = Spans(np.concatenate([ks[collective], c["start_ns"].to_numpy(dtype=np.int64)]),
                                   np.concatenate([ke[collective], c["end_ns"].to_numpy(dtype=np.int64)]),
                                   np.concatenate([np.zeros(int(collective.sum()), dtype=np.int64), kind_codes]),
                                   kinds, np.r_[np.ones(int(collective.sum()), dtype=bool), np.zeros(len(c), dtype=bool)])
        self.savable, self.group, self.kernel_start = savable[on_k][compute], np.asarray(group[on_k], dtype=object)[compute], ks[compute]
        # every piece of work on the device, by start: what ends a gap, and the host call that issued it
        work = pd.DataFrame({"start": np.concatenate([ks, c["start_ns"].to_numpy(dtype=np.int64)]),
                             "pid": np.concatenate([k["pid"].to_numpy(dtype=np.int64), c["pid"].to_numpy(dtype=np.int64)]),
                             "call_start": np.concatenate([k["call_start_ns"].to_numpy(dtype=np.float64, na_value=np.nan),
                                                           c["call_start_ns"].to_numpy(dtype=np.float64, na_value=np.nan)]),
                             "call_end": np.concatenate([k["call_end_ns"].to_numpy(dtype=np.float64, na_value=np.nan),
                                                         c["call_end_ns"].to_numpy(dtype=np.float64, na_value=np.nan)])})
        self.work = work.sort_values("start", kind="stable").reset_index(drop=True)
        syncs = activity.syncs
        self.sync_ends = {int(p): np.sort(g["end_ns"].to_numpy(dtype=np.int64)) for p, g in syncs.groupby("pid")}

    def window(self, name: str, w0: int, w1: int) -> Window:
        split = split_window(w0, w1, self.compute, self.communication)
        causes = self._causes(split)
        lengths = (split.gaps[:, 1] - split.gaps[:, 0]) if len(split.gaps) else np.zeros(0, dtype=np.int64)
        idle = {cause: int(lengths[causes == cause].sum()) * 1e-9 for cause in CAUSES if (causes == cause).any()}
        gaps = {cause: int((causes == cause).sum()) for cause in CAUSES if (causes == cause).any()}
        return Window(device=self.device, name=name, start_ns=w0, end_ns=w1, kernel_s=split.kernel_s,
                      communication_s={k: v for k, v in split.communication_s.items() if v > 0}, idle_s=idle, gaps=gaps,
                      overlap_s=split.overlap_s, hidden_communication_s=split.hidden_s,
                      savable=self._savable(split, idle, w0, w1))

    def _causes(self, split: Split) -> np.ndarray:
        """Each gap's cause (:data:`CAUSES`), by the rules of the module's docstring."""
        out = np.full(len(split.gaps), UNKNOWN, dtype=object)
        starts = self.work["start"].to_numpy()
        for i, (g0, g1) in enumerate(split.gaps.tolist()):
            j = int(np.searchsorted(starts, g1, side="left"))
            if j >= len(starts) or starts[j] != g1:
                continue
            call_start, call_end = self.work.at[j, "call_start"], self.work.at[j, "call_end"]
            if np.isnan(call_start):
                continue
            ends = self.sync_ends.get(int(self.work.at[j, "pid"]), np.zeros(0, dtype=np.int64))
            if np.searchsorted(ends, call_start, side="right") > np.searchsorted(ends, g0, side="left"):
                out[i] = SYNCHRONIZATION
            elif call_end > g0:
                out[i] = LAUNCH_BOUND
            else:
                out[i] = OTHER
        return out

    def _savable(self, split: Split, idle: Mapping[str, float], w0: int, w1: int) -> tuple[Savable, ...]:
        items = [Savable(f"idle: {cause}", "idle", seconds) for cause, seconds in idle.items()]
        inside = (self.kernel_start >= w0) & (self.kernel_start < w1) & ~np.isnan(self.savable)
        if inside.any():
            sums = pd.Series(self.savable[inside]).groupby(pd.Series(self.group[inside]).fillna("?").to_numpy()).sum()
            items += [Savable(str(g), "kernels", float(s)) for g, s in sums.items()]
        return tuple(sorted(items, key=lambda s: (-s.seconds, s.kind, s.what)))

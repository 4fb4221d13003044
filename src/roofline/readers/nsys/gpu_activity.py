"""A timeline's activity beside its kernels (:class:`~roofline.kernels.activity.Activity`): memcpys and
memsets with the calls that issued them, the host's synchronizations, and the repeating outermost
NVTX ranges (training steps).

- **Copies**: ``CUPTI_ACTIVITY_KIND_MEMCPY`` and ``CUPTI_ACTIVITY_KIND_MEMSET``, each optional (a
  capture without copies, or an older export, lacks the table: then those are unknown, and a note
  says so). A memcpy's direction is CUPTI's ``copyKind`` (:data:`COPY_KIND`); a device-to-device copy
  between two devices (``srcDeviceId`` != ``dstDeviceId``) is a peer copy.
- **Synchronizations**: runtime and driver calls that block the host until GPU work is done, by name
  (:data:`SYNC_CALLS`, nsys's version suffix ``_v3020`` left out). The
  ``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`` table is not read: its ``syncType`` numbers differ between
  nsys versions (2024.5 writes 1, "event sync" in its own enum table, for ``cudaDeviceSynchronize``;
  2025.5 writes 2 for ``cudaStreamSynchronize``, which 2026.2 writes 3), and each of its rows lies
  within the call that the names already give.
- **Steps**: the candidate occurrences of a step (:mod:`roofline.kernels.steps`, the one rule
  the breakdown and ``roofline profile --timeline`` share).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from roofline.kernels.activity import COPY_KINDS, Activity, empty_host
from roofline.readers.nsys.export import MEMCPY, MEMSET, PUSH_POP, Export
from roofline.kernels.steps import occurrences

#: CUPTI's memcpy kinds (``ENUM_CUDA_MEMCPY_OPER``) -> ours; arrays count as device memory, unified
#: memory as the memory it moved between. Kinds not listed are "memcpy other".
COPY_KIND = {1: "memcpy HtoD", 2: "memcpy DtoH", 3: "memcpy HtoD", 4: "memcpy DtoH", 5: "memcpy DtoD",
             6: "memcpy DtoD", 7: "memcpy DtoD", 8: "memcpy DtoD", 9: "memcpy HtoH", 10: "memcpy peer",
             11: "memcpy HtoD", 12: "memcpy DtoH", 13: "memcpy DtoD"}
#: Host calls that return only when GPU work is done (version suffix left out): explicit
#: synchronizations, and the synchronous copies and memsets, which wait for their stream.
SYNC_CALLS = frozenset({
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
    "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpyPeer",
    "cudaMemset", "cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemcpyPeer",
})
#: nsys's version suffix of a call's name (``cudaStreamSynchronize_v3020``, ``cuMemcpyDtoH_v2``).
_VERSION = re.compile(r"_v\d+$")
#: Kernels that move data between GPUs: collectives and peer transfers, by name.
COMMUNICATION = re.compile(r"nccl|rccl|nvshmem|cross_device_reduce|all_?reduce|all_?gather|reduce_?scatter|"
                           r"all_?to_?all|sendrecv", re.IGNORECASE)


def call_name(name: str) -> str:
    """A runtime or driver call's name without nsys's version suffix."""
    return _VERSION.sub("", name)


def is_sync_call(name: str) -> bool:
    """True for a call (as nsys names it) that blocks the host until GPU work is done (:data:`SYNC_CALLS`)."""
    return call_name(name) in SYNC_CALLS


def read_activity(export: Export, kernels: pd.DataFrame, names: pd.Categorical, phases: pd.api.extensions.ExtensionArray,
                  ranges: pd.DataFrame) -> Activity:
    """The :class:`Activity` of an export whose kernels (:meth:`Export.kernels`, in the kernel table's
    order), names and phases (the kernel table's) are read already; ``ranges``: its NVTX ranges."""
    label = export.path.name
    notes: list[str] = []
    kinds = pd.Categorical.from_codes(np.zeros(0, dtype=np.int64), categories=list(COPY_KINDS))
    comm = np.asarray(pd.Series(names.categories).str.contains(COMMUNICATION).to_numpy(dtype=bool))
    codes = np.asarray(names.codes)
    own = pd.DataFrame({
        "launch_id": np.arange(len(kernels), dtype=np.int64),
        "device": kernels["device"].to_numpy(dtype=np.int64), "stream": kernels["stream"].to_numpy(dtype=np.int64),
        "pid": kernels["pid"].to_numpy(dtype=np.int64),
        "start_ns": kernels["start"].to_numpy(dtype=np.int64), "end_ns": kernels["end"].to_numpy(dtype=np.int64),
        "call_start_ns": kernels["api_start"].array, "call_end_ns": kernels["api_end"].array,
        "communication": np.where(codes >= 0, comm[codes], False), "phase": phases})
    parts = []
    copies, memsets = export.copies(), export.memsets()
    for table, rows in ((MEMCPY, copies), (MEMSET, memsets)):
        if rows is None:
            notes.append(f"{label}: no {table} table: its {'copies' if table == MEMCPY else 'memsets'} are unknown")
            continue
        if table == MEMCPY:
            kind = [COPY_KIND.get(int(k), "memcpy other") for k in rows["copy_kind"].to_numpy(dtype=np.int64)]
            src = rows["src_device"].to_numpy(dtype=np.float64, na_value=np.nan)
            dst = rows["dst_device"].to_numpy(dtype=np.float64, na_value=np.nan)
            peer = (np.asarray(kind) == "memcpy DtoD") & ~np.isnan(src) & ~np.isnan(dst) & (src != dst)
            kind = np.where(peer, "memcpy peer", kind).tolist()
        else:
            kind = ["memset"] * len(rows)
        parts.append(pd.DataFrame({
            "device": rows["device"].to_numpy(dtype=np.int64), "stream": rows["stream"].to_numpy(dtype=np.int64),
            "pid": rows["pid"].to_numpy(dtype=np.int64), "start_ns": rows["start"].to_numpy(dtype=np.int64),
            "end_ns": rows["end"].to_numpy(dtype=np.int64), "kind": pd.Categorical(kind, categories=list(COPY_KINDS)),
            "bytes": rows["bytes"].to_numpy(dtype=np.int64), "call_start_ns": rows["api_start"].array,
            "call_end_ns": rows["api_end"].array}))
    if parts:
        copied = pd.concat(parts, ignore_index=True).sort_values(["start_ns", "end_ns"], kind="stable")
        copied = copied.reset_index(drop=True)
    else:
        copied = pd.DataFrame({"device": np.zeros(0, np.int64), "stream": np.zeros(0, np.int64),
                               "pid": np.zeros(0, np.int64), "start_ns": np.zeros(0, np.int64),
                               "end_ns": np.zeros(0, np.int64), "kind": kinds, "bytes": np.zeros(0, np.int64),
                               "call_start_ns": pd.array([], dtype="Int64"), "call_end_ns": pd.array([], dtype="Int64")})
    return Activity(kernels=own, copies=copied, syncs=_host(export.host_calls(is_sync_call)), steps=steps(ranges),
                    notes=tuple(notes))


def _host(calls: pd.DataFrame) -> pd.DataFrame:
    if calls.empty:
        return empty_host()
    return pd.DataFrame({"pid": calls["pid"].to_numpy(dtype=np.int64), "tid": calls["tid"].to_numpy(dtype=np.int64),
                         "start_ns": calls["start"].to_numpy(dtype=np.int64),
                         "end_ns": calls["end"].to_numpy(dtype=np.int64),
                         "name": pd.array([call_name(str(n)) for n in calls["name"]], dtype="string")})


def steps(ranges: pd.DataFrame) -> pd.DataFrame:
    """The candidate step occurrences of the push/pop ``ranges`` (:func:`roofline.kernels.steps.occurrences`),
    in start order (:data:`~roofline.kernels.activity.HOST_COLUMNS`): which name is the step is chosen
    per process by :func:`roofline.kernels.steps.choose`."""
    if ranges.empty:
        return empty_host()
    return occurrences(ranges[ranges["kind"] == PUSH_POP])

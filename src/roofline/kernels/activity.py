"""What a timeline holds beside its kernels' times: :class:`Activity`.

A kernel table of launches says how long each kernel ran. Where the rest of a step went (copies,
memsets, the gaps in between, the host calls that left the GPU waiting) needs the timeline itself:
every launch's interval with the host call that launched it, the copies and memsets, the host's
synchronizations and the repeating outermost NVTX ranges (training steps). A timeline reader
(:mod:`roofline.readers.nsys`) builds one; :mod:`roofline.analysis.breakdown` reads it.

Times are integer nanoseconds on the timeline's own clock (host calls and GPU work share it in an
Nsight Systems export). An ``Activity`` is the WHOLE timeline, read before any selection of
kernels (``--kernels``, ``--nvtx``): a selection does not change what the GPU was doing, so it is
kept whole by every ``dataclasses.replace`` of the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

#: Columns of :attr:`Activity.kernels`, one row per kernel launch of the timeline, in start order.
KERNEL_COLUMNS = ("launch_id", "device", "stream", "pid", "start_ns", "end_ns", "call_start_ns", "call_end_ns",
                  "communication", "phase")
#: Columns of :attr:`Activity.copies`, one row per memcpy or memset.
COPY_COLUMNS = ("device", "stream", "pid", "start_ns", "end_ns", "kind", "bytes", "call_start_ns", "call_end_ns")
#: Columns of :attr:`Activity.syncs` and :attr:`Activity.steps` (host-side intervals).
HOST_COLUMNS = ("pid", "tid", "start_ns", "end_ns", "name")
#: The kinds of :attr:`Activity.copies`: memcpy by direction, and memset.
COPY_KINDS = ("memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy peer", "memcpy HtoH", "memcpy other", "memset")


def empty_host() -> pd.DataFrame:
    """An empty frame of :data:`HOST_COLUMNS`."""
    return pd.DataFrame({"pid": pd.array([], dtype="int64"), "tid": pd.array([], dtype="int64"),
                         "start_ns": pd.array([], dtype="int64"), "end_ns": pd.array([], dtype="int64"),
                         "name": pd.array([], dtype="string")})


@dataclass(frozen=True)
class Activity:
    """A timeline's GPU work and the host calls around it (integer ns, the timeline's clock).

    ``kernels`` (:data:`KERNEL_COLUMNS`): each launch's ``launch_id`` (the kernel table's), ``device``,
    ``stream``, process ``pid``, ``start_ns``/``end_ns`` on the GPU, ``call_start_ns``/``call_end_ns`` of
    the host call that launched it (<NA> when that call is not in the file), ``communication`` (a
    collective or peer kernel by its name: NCCL's and the like) and ``phase`` (the kernel table's).
    ``copies`` (:data:`COPY_COLUMNS`): each memcpy and memset, its ``kind`` (:data:`COPY_KINDS`), ``bytes``
    and the host call that issued it. ``syncs`` (:data:`HOST_COLUMNS`): host calls that block until GPU
    work is done (``cudaDeviceSynchronize``, ``cudaStreamSynchronize``, a synchronous ``cudaMemcpy``...),
    by process and thread. ``steps`` (:data:`HOST_COLUMNS`): each occurrence of the outermost NVTX
    ranges that repeat (``train_step``, ``ProfilerStep#N``), named without the occurrence's number.
    ``notes``: what the file does not hold (a table absent: those copies unknown, not none).
    """

    kernels: pd.DataFrame
    copies: pd.DataFrame
    syncs: pd.DataFrame = field(default_factory=empty_host)
    steps: pd.DataFrame = field(default_factory=empty_host)
    notes: tuple[str, ...] = ()

    @property
    def devices(self) -> list[int]:
        """The devices that ran any kernel, copy or memset, in order."""
        found = set(self.kernels["device"].tolist()) | set(self.copies["device"].tolist())
        return sorted(int(d) for d in found)

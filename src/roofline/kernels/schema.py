"""The kernel table's schema: its declared columns, :class:`KernelTable`, and building and checking tables.

Every column is declared here with its dtype, its SI unit and what it means (:data:`COLUMNS`);
readers build tables, :func:`validate` checks one, and analysis and views read only these columns.

The contract (issue 34, a lean table of launches):

- **What a reader returns**: a :class:`KernelTable` whose ``frame`` has one row per launch and the
  declared columns in declared order, checked by :func:`validate`, except as the two points below allow.
- **Identity columns are dictionary-encoded.** The text columns of :data:`ENCODED_COLUMNS` (kernel name,
  phase, operator, module, run, source, architecture, grid and block) may be held as a pandas
  categorical of strings (one code per launch, each distinct text once) instead of the declared
  ``string`` dtype: readers of large profiles return them so (the ncu CSV readers), and nothing decodes
  them per launch. Their values are the same text either way. Grouping (:func:`roofline.kernels.aggregate`)
  decodes them on the groups only, so grouped tables hold the declared ``string`` dtype.
- **Absent is known-missing.** A float count column (:data:`ABSENT_ALLOWED`) that the profile has no
  counter for may be left out of a launch table rather than held as a column of NaN; it means exactly
  what NaN in every row would mean (unknown), and :func:`column_or_nan` reads it so. Which metric would
  supply it is said in :attr:`KernelTable.column_notes`, by the reader. Grouped tables (what analysis
  and views read) hold every declared column: :func:`roofline.kernels.aggregate` and :func:`widened`
  restore the absent ones as NaN.
- Time, clock, ``flops``, ``ops`` and every non-float column are always present.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from roofline.errors import InputError
from roofline.kernels.activity import Activity
from roofline.kernels.arrays import STACK_LIMIT, encoded_text, frame_of, group_ids, groups_from_codes, known_sum, stacked_text


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str
    unit: str
    description: str


#: The declared columns of a kernel table, in display order.
COLUMNS: tuple[Column, ...] = (
    Column("launch_id", "Int64", "", "launch number in the profile (ncu's ID); <NA> after aggregation"),
    Column("kernel_name", "string", "", "kernel name, demangled (C++ templates and all)"),
    Column("phase", "string", "", "NVTX range (e.g. forward, backward, optimizer) the launch ran in; <NA> when unknown"),
    Column("op", "string", "", "PyTorch operator the launch ran in: the innermost operator range (aten::addmm); "
           "for a backward launch, the forward operator that caused it (roofline.attribution); <NA> when unknown"),
    Column("module", "string", "", "PyTorch module path the launch ran in, root class first (DeepCamMini.enc1.0); "
           "for a backward launch, the module whose forward caused it; <NA> outside every module"),
    Column("process_id", "Int64", "", "operating-system process id"),
    Column("device", "Int64", "", "GPU index (CUDA device ordinal)"),
    Column("compute_capability", "string", "", "GPU architecture: compute capability ('7.0', '9.0') or AMD gfx target ('gfx942')"),
    Column("grid", "string", "", "grid size '(x, y, z)' where known"),
    Column("block", "string", "", "block size '(x, y, z)' where known"),
    Column("stream", "Int64", "", "CUDA stream id"),
    Column("launches", "Int64", "", "number of launches in the row (1 per launch)"),
    Column("time_s", "float64", "s", "GPU time of the launch"),
    Column("sm_clock_hz", "float64", "Hz", "SM clock the launch ran at"),
    Column("fp64_flops", "float64", "FLOP", "FP64 FLOPs: dadd + dmul + 2 dfma (thread instructions)"),
    Column("fp32_flops", "float64", "FLOP", "FP32 FLOPs: fadd + fmul + 2 ffma (+ 2 fadd2 + 2 fmul2 + 4 ffma2 on SM 10.0/10.3)"),
    Column("fp16_flops", "float64", "FLOP", "FP16 FLOPs, non-tensor; convention in the table's fp16 setting"),
    Column("tensor_flops", "float64", "FLOP", "tensor-core FLOPs of floating-point types (integer types: tensor_int_ops)"),
    Column("tensor_precision", "string", "", "floating-point tensor input type when known: fp64, tf32, fp16, bf16, fp8 "
           "(Blackwell's 8-bit datapath: FP8, FP6, FP4 inputs), fp4 (Blackwell's FP4 datapath; gfx950's FP6/FP4 MFMAs), "
           "fp32 (AMD's FP32 MFMAs) (int8 or int4 when the only tensor work is integer); on AMD, MFMA work"),
    Column("flops", "float64", "FLOP", "sum of the known FLOP columns; NaN when none is known"),
    Column("flops_partial", "boolean", "", "True when a FLOP component is unknown, so flops is a lower bound"),
    Column("int_ops", "float64", "OP", "integer thread instructions (IADD3, IMAD, LOP3, shifts, ISETP...), one OP each"),
    Column("conversion_ops", "float64", "OP", "conversion thread instructions (F2F, F2I, I2F, I2I)"),
    Column("sfu_ops", "float64", "OP", "thread instructions on the XU pipe, the special-function units "
           "(MUFU transcendentals); not in ops: the XU also runs some conversions and integer instructions counted there"),
    Column("tensor_int_ops", "float64", "OP", "tensor-core integer operations (INT8, INT4)"),
    Column("ops", "float64", "OP", "all counted operations: flops + int_ops + conversion_ops + tensor_int_ops "
           "(the known parts); NaN when none is known"),
    Column("ops_partial", "boolean", "", "True when a part of ops is unknown, so ops is a lower bound"),
    Column("l1_bytes", "float64", "B", "bytes through L1/TEX"),
    Column("shared_bytes", "float64", "B", "bytes through shared memory: 128 B x the wavefronts of shared-memory "
           "instructions (LDGSTS's included), else the bytes those instructions move"),
    Column("l2_bytes", "float64", "B", "bytes through L2"),
    Column("dram_bytes", "float64", "B", "bytes to and from DRAM/HBM"),
    Column("warp_inst", "float64", "inst", "warp instructions executed"),
    Column("global_inst", "float64", "inst", "global and local memory warp instructions: LDG, STG, LDL, STL, LDGSTS "
           "(cp.async), global atomics and reductions (roofline.counting.instructions)"),
    Column("shared_inst", "float64", "inst", "shared-memory warp instructions: LDS, STS, LDSM, STSM, shared atomics and "
           "LDGSTS's shared side"),
    Column("l1_transactions", "float64", "sector", "L1 sectors (32 B) of the global_inst instructions (the loads' with "
           "LDGSTS's)"),
    Column("shared_transactions", "float64", "wavefront", "shared-memory wavefronts (128 B) of the shared_inst instructions"),
    Column("tma_inst", "float64", "inst", "TMA (bulk tensor and bulk copy) warp instructions, which move data between "
           "global and shared memory without LD/ST instructions (0 before SM 9.0)"),
    Column("gmma_inst", "float64", "inst", "warpgroup MMA (wgmma) warp instructions, which read operands from shared "
           "memory (SM 9.x, 0 elsewhere)"),
    Column("l2_transactions", "float64", "sector", "L2 sectors (32 B)"),
    Column("dram_transactions", "float64", "sector", "DRAM sectors (32 B)"),
    Column("estimated", "boolean", "", "True when counts were estimated without hardware counters"),
    Column("run", "string", "", "the program run the row belongs to when the inputs hold several "
           "(its file name less .csv, .ncu-rep, .ncu.csv, .kernels.json); <NA> when they are one run"),
    Column("source", "string", "", "input file(s) the row came from"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
DTYPES: dict[str, str] = {c.name: c.dtype for c in COLUMNS}
FLOP_COLUMNS = ("fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops")
#: Operations that are not floating-point, each its own column (``ops`` = flops + these, but sfu_ops).
OP_COLUMNS = ("int_ops", "conversion_ops", "tensor_int_ops")
BYTE_COLUMNS = {"l1": "l1_bytes", "shared": "shared_bytes", "l2": "l2_bytes", "dram": "dram_bytes"}
#: Memory transactions per level (the instruction roofline's traffic): 32 B sectors, 128 B wavefronts.
TRANSACTION_COLUMNS = {"l1": "l1_transactions", "shared": "shared_transactions", "l2": "l2_transactions",
                       "dram": "dram_transactions"}
#: Warp instructions: all, the memory instructions behind the memory-pattern walls, and those whose
#: traffic the walls cannot hold (TMA, warpgroup MMAs).
INSTRUCTION_COLUMNS = ("warp_inst", "global_inst", "shared_inst", "tma_inst", "gmma_inst")
#: Columns summed when launches are aggregated (NaN in any launch makes the sum NaN).
SUMMED = ("launches", "time_s", *FLOP_COLUMNS, "flops", *OP_COLUMNS, "sfu_ops", "ops", *BYTE_COLUMNS.values(),
          *INSTRUCTION_COLUMNS, *TRANSACTION_COLUMNS.values())
#: Every numeric count column (never negative).
COUNT_COLUMNS = SUMMED[2:]
#: The float columns that are never negative.
NON_NEGATIVE = ("time_s", "sm_clock_hz", *COUNT_COLUMNS)

FP16_CONVENTIONS = ("ncu", "paper")
#: A grouping of launches: one of the named views, or a tuple of key columns (a drill-down).
GroupBy = Literal["launch", "name", "phase", "op", "module"] | tuple[str, ...]
#: The named views and their key columns (:func:`group_keys`).
VIEW_KEYS: dict[str, tuple[str, ...]] = {
    "launch": ("launch_id",), "name": ("kernel_name",), "phase": ("phase", "kernel_name"),
    "op": ("op", "phase"), "module": ("module",),
}
#: Columns that may key a drill-down (``by=("module", "op", "phase", "kernel_name")``).
KEY_COLUMNS = ("module", "op", "phase", "kernel_name", "launch_id", "process_id", "device", "stream", "run")
#: Labels of the rows whose operator or module is unknown (``op`` or ``module`` <NA>).
NO_OPERATOR, OUTSIDE_MODULES = "(no operator)", "(outside modules)"
#: Text columns a launch table may hold dictionary-encoded (a pandas categorical of strings).
ENCODED_COLUMNS = ("kernel_name", "phase", "op", "module", "run", "source", "compute_capability", "grid", "block")
#: Float count columns a launch table may leave out when the profile has no counter for them (unknown).
ABSENT_ALLOWED = tuple(c for c in COUNT_COLUMNS if c not in ("launches", "flops", "ops"))


def is_encoded(values: Any) -> bool:
    """True when ``values`` (a Series or array) is a categorical of strings (an encoded identity column)."""
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype.kind in "OUT"


def column_or_nan(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` of a kernel table as float64 (NaN where unknown), NaN throughout when the
    table leaves it out (known-missing: :data:`ABSENT_ALLOWED`). A float64 column is returned as it is."""
    if name not in frame.columns:
        if name not in ABSENT_ALLOWED:
            raise KeyError(name)
        return np.full(len(frame), np.nan)
    column = frame[name]
    return column.to_numpy() if column.dtype == np.float64 else column.to_numpy(dtype=np.float64, na_value=np.nan)


def decoded(values: Any) -> Any:
    """An identity column (Series or array) as the declared ``string`` dtype; as it is when not encoded."""
    if not is_encoded(values):
        return values
    return values.astype("string")


def lean(frame: pd.DataFrame, *, copy: bool = True) -> pd.DataFrame:
    """A valid launch table in the lean form every reader returns: identity text encoded
    (:data:`ENCODED_COLUMNS` as categoricals, their categories sorted) and the count columns of
    :data:`ABSENT_ALLOWED` that are unknown for every launch left out. The inverse of :func:`widened`.
    ``copy=False``: the frame's other columns are adopted, not copied (a frame nothing else will use)."""
    if all(is_encoded(frame[c]) for c in ENCODED_COLUMNS if c in frame.columns) and not any(
            frame[c].dtype == np.float64 and bool(np.isnan(frame[c].to_numpy()).all())
            for c in ABSENT_ALLOWED if c in frame.columns):
        return frame
    columns: dict[str, Any] = {}
    for name in frame.columns:
        values = frame[name]
        if name in ABSENT_ALLOWED and values.dtype == np.float64 and bool(np.isnan(values.to_numpy()).all()):
            continue
        if name in ENCODED_COLUMNS and not is_encoded(values):
            codes, uniques = pd.factorize(values.array, use_na_sentinel=True)
            columns[name] = encoded_text(np.asarray(uniques, dtype=object), codes)
        else:
            columns[name] = values.to_numpy() if values.dtype == np.float64 else values.array
    return frame_of(columns, frame.index, copy=copy)


def widened(frame: pd.DataFrame) -> pd.DataFrame:
    """A launch table with every declared column in its declared dtype: absent count columns as NaN,
    encoded identities decoded (per launch: for the few callers that need whole per-launch rows, such
    as ``by="launch"`` and the files written). The frame itself when it already is."""
    absent = [c for c in COLUMN_NAMES if c not in frame.columns]
    encoded = [c for c in ENCODED_COLUMNS if c in frame.columns and is_encoded(frame[c])]
    if not absent and not encoded:
        return frame
    columns = {}
    for c in COLUMNS:
        if c.name in absent:
            columns[c.name] = np.full(len(frame), np.nan)
        elif c.name in encoded:
            columns[c.name] = frame[c.name].array.astype("string")
        else:
            values = frame[c.name]
            columns[c.name] = values.to_numpy() if c.dtype == "float64" else values.array
    return frame_of(columns, frame.index, copy=True)


@dataclass(frozen=True)
class KernelTable:
    """What a reader returns: the kernel table plus what came with it. ``frame`` follows :data:`COLUMNS`.
    ``metrics`` holds the raw profiler metrics (one row per launch, same index as ``frame``, SI units,
    the tool's metric names) for analyses that need more than the table, e.g. Speed-of-Light percentages.
    """

    frame: pd.DataFrame
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    fp16_convention: str = "ncu"
    #: Notes on columns beyond FLOPs and bytes (operations, instructions, transactions) that are
    #: unknown or lower bounds, naming the ncu metrics: given by the analyses that use those columns
    #: (``--work ops|instructions``), not to every reader of a FLOP/byte profile.
    column_notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: What to collect: column (or work, :mod:`roofline.counting.hints`) -> the tool's metrics that supply it, as notes
    #: name them ("collect ..."); given by the reader that knows the tool (ncu: NCU_HINTS), empty for records.
    metric_hints: Mapping[str, str] = field(default_factory=dict)
    #: A timeline's copies, gaps' host calls and steps, whole (:class:`~roofline.kernels.activity.Activity`); None otherwise.
    activity: Activity | None = None
    #: Group ids by key columns, worked out once for the table (:meth:`group_ids`): its analysis and
    #: the guidance on it group the same launches. Not copied by ``dataclasses.replace`` nor pickled.
    _groups: dict[tuple[str, ...], tuple[tuple[Any, ...], np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.frame)

    def group_ids(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`group_ids` of :attr:`frame` by ``keys``, kept for the next caller while the key
        columns are the very (Arrow-backed or categorical) arrays they were computed from."""
        columns = tuple(self.frame[k].array for k in keys)
        kept = self._groups.get(tuple(keys))
        if kept is not None and all(a is b for a, b in zip(kept[0], columns)):
            return kept[1], kept[2]
        gid, first = group_ids(self.frame, keys)
        if all(isinstance(c, (pd.arrays.ArrowExtensionArray, pd.Categorical)) for c in columns):
            self._groups[tuple(keys)] = (columns, gid, first)
        return gid, first

    def keep_groups(self, keys: Sequence[str], codes: np.ndarray) -> None:
        """Keep the groups of :attr:`frame` by ``keys`` from codes the reader had (one per distinct key,
        -1 for a missing one: a categorical's), so that :meth:`group_ids` does not hash the keys again."""
        columns = tuple(self.frame[k].array for k in keys)
        if all(isinstance(c, (pd.arrays.ArrowExtensionArray, pd.Categorical)) for c in columns):
            self._groups[tuple(keys)] = (columns, *groups_from_codes(codes))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_groups"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_groups", {})


def empty_frame(n: int = 0, *, counts: bool = True) -> pd.DataFrame:
    """A table of ``n`` rows with every column unknown (launches = 1, flags False); ``counts=False``:
    without the count columns a launch table may leave out (:data:`ABSENT_ALLOWED`), for a reader that has none."""
    data: dict[str, Any] = {}
    for c in (c for c in COLUMNS if counts or c.name not in ABSENT_ALLOWED):
        if c.dtype == "float64":
            data[c.name] = np.full(n, np.nan)
        else:  # all-missing extension array, built without a Python list of n NAs (fast for 1e6 rows)
            data[c.name] = pd.array([], dtype=c.dtype).take(np.full(n, -1, dtype=np.intp), allow_fill=True)
    frame = pd.DataFrame(data)
    frame["launches"] = pd.array(np.ones(n, dtype=np.int64), dtype="Int64")
    frame["flops_partial"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    frame["ops_partial"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    frame["estimated"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    return frame


def from_records(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build a validated table from dicts; absent keys are unknown. ``flops`` is derived when absent."""
    rows = list(records)
    frame = empty_frame(len(rows))
    if rows:
        given = pd.DataFrame(rows)
        unknown = [c for c in given.columns if c not in DTYPES]
        if unknown:
            raise ValueError(f"unknown kernel-table columns: {', '.join(unknown)}")
        for col in given.columns:
            frame[col] = given[col].to_numpy()
        if "flops" not in given.columns:
            frame = with_total_flops(frame)
        elif "ops" not in given.columns:
            frame = with_total_ops(frame)
    if frame["launch_id"].isna().all():
        frame["launch_id"] = pd.array(np.arange(len(frame)), dtype="Int64")
    return validate(frame)


def _floats(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].to_numpy(dtype=float, na_value=np.nan)


def with_total_flops(frame: pd.DataFrame) -> pd.DataFrame:
    """Set ``flops`` (sum of known components) and ``flops_partial`` from the component columns,
    then ``ops`` and ``ops_partial`` (:func:`with_total_ops`)."""
    total, partial = known_sum([_floats(frame, c) for c in FLOP_COLUMNS])
    out = frame.copy()
    out["flops"] = total
    out["flops_partial"] = pd.array(partial, dtype="boolean")
    return with_total_ops(out, copy=False)


def total_ops(flops: np.ndarray, flops_partial: np.ndarray, others: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``ops`` = flops + the :data:`OP_COLUMNS` given in ``others`` (their known parts), and ``ops_partial``
    (a part unknown, or flops itself partial where ops is known)."""
    total, partial = known_sum([flops, *others])
    return total, partial | (flops_partial & ~np.isnan(total))


def with_total_ops(frame: pd.DataFrame, *, copy: bool = True) -> pd.DataFrame:
    """Set ``ops`` = flops + int_ops + conversion_ops + tensor_int_ops (their known parts) and
    ``ops_partial`` (a part unknown, or flops itself partial). Columns absent count as unknown.
    ``copy=False`` writes into ``frame`` itself."""
    out = frame.copy() if copy else frame
    for c in ("flops", *OP_COLUMNS):
        if c not in out.columns:
            out[c] = np.nan
    flops_partial = out["flops_partial"].fillna(False).to_numpy(dtype=bool) if "flops_partial" in out.columns \
        else np.zeros(len(out), dtype=bool)
    total, partial = total_ops(_floats(out, "flops"), flops_partial, [_floats(out, c) for c in OP_COLUMNS])
    out["ops"] = total
    out["ops_partial"] = pd.array(partial, dtype="boolean")
    return out


def check_counts(values: Mapping[str, np.ndarray], where: str | None = None) -> None:
    """Raise :class:`InputError` naming the time and count columns of ``values`` (float arrays) that
    hold negative numbers."""
    bad = [name for name, v in values.items() if len(v) and np.fmin.reduce(v) < 0]  # fmin: NaN ignored, no copy
    if bad:
        raise InputError(f"negative values in {', '.join(bad)}", path=where)


def validate(frame: pd.DataFrame, *, where: str | None = None) -> pd.DataFrame:
    """Check and coerce a frame to the declared schema; returns the frame in column order.

    Raises :class:`InputError` when columns are missing or values are impossible
    (negative times or counts). Extra columns are dropped.
    """
    missing = [c for c in COLUMN_NAMES if c not in frame.columns and c not in ABSENT_ALLOWED]
    if missing:
        raise InputError(f"kernel table lacks columns: {', '.join(missing)}", path=where)
    out: dict[str, pd.Series] = {}
    for c in COLUMNS:
        if c.name not in frame.columns:  # known-missing (ABSENT_ALLOWED): left out
            continue
        col = frame[c.name]
        if c.name in ENCODED_COLUMNS and is_encoded(col):  # dictionary-encoded identities are kept so
            out[c.name] = col
            continue
        try:
            out[c.name] = col.astype(c.dtype) if str(col.dtype) != c.dtype else col
        except (TypeError, ValueError) as exc:
            raise InputError(f"kernel-table column {c.name!r} is not {c.dtype}: {exc}", path=where) from None
    # column by column: no 2-D copy of the table (1e6 launches)
    check_counts({n: out[n].to_numpy() for n in NON_NEGATIVE if n in out}, where)
    if len(frame) * len(COLUMNS) > STACK_LIMIT:  # large: the columns as they are, not copied
        return pd.DataFrame(out, index=frame.index, copy=False)
    return frame_of({n: col.to_numpy() if DTYPES[n] == "float64" else col.array for n, col in out.items()},
                    frame.index, copy=True)


def has_runs(frame: pd.DataFrame) -> bool:
    """True when rows name their run (the inputs were several runs, see ``run`` in :data:`COLUMNS`)."""
    return "run" in frame.columns and not bool(np.asarray(frame["run"].array.isna()).all())


def group_keys(by: GroupBy | str, *, runs: bool = False) -> list[str]:
    """The kernel-table columns that identify a row of a table grouped ``by`` (``run`` first
    when the table holds several runs: each numbers its launches and names its kernels on its own).

    ``by``: a view of :data:`VIEW_KEYS` (``"op"`` is operator and phase, ``"module"`` the module
    path), or key columns of :data:`KEY_COLUMNS` as a tuple or comma-joined
    (``("module", "op", "phase", "kernel_name")``, ``"module,op"``: a drill-down)."""
    if isinstance(by, str) and by in VIEW_KEYS:
        keys = list(VIEW_KEYS[by])
    else:
        keys = [k.strip() for k in by.split(",")] if isinstance(by, str) else list(by)
        bad = [k for k in keys if k not in KEY_COLUMNS]
        if not keys or bad or len(set(keys)) != len(keys) or (isinstance(by, str) and len(keys) < 2):
            raise ValueError(f"by must be one of {', '.join(repr(v) for v in VIEW_KEYS)} or distinct key columns "
                             f"among {', '.join(KEY_COLUMNS)}, not {by!r}")
    return ["run", *[k for k in keys if k != "run"]] if runs else keys


def by_name(by: GroupBy | str) -> str:
    """``by`` as a string: a view's name, or a drill-down's key columns comma-joined (``"module,op"``)."""
    return by if isinstance(by, str) else ",".join(by)


def _launch_note(name: str) -> str:
    """What the contract allows a table of launches for column ``name``, as the docs say it."""
    if name in ENCODED_COLUMNS:
        return " (a table of launches may hold it encoded: categorical)"
    if name in ABSENT_ALLOWED:
        return " (a table of launches may leave it out when unknown throughout)"
    return ""


def describe_columns(counters: Mapping[str, str] | None = None) -> str:
    """The schema as a Markdown table (used by the docs). ``counters``: column -> the profiler counters
    it is counted from, said after its meaning (the docs give
    :data:`roofline.counting.hints.COLUMN_COUNTERS`: the formula table names the metrics, not the schema)."""
    def meaning(c: Column) -> str:
        said = (counters or {}).get(c.name)
        return c.description + (f" (Nsight Compute: {said})" if said else "") + _launch_note(c.name)

    lines = ["| column | dtype | unit | meaning |", "|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.unit or '-'} | {meaning(c)} |" for c in COLUMNS]
    return "\n".join(lines)


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack kernel tables (e.g. measurements and profiles, or several runs) into one validated
    launch table in the lean form (:func:`lean`). Identity text stays encoded: each column of
    :data:`ENCODED_COLUMNS` is one categorical whose categories are the sorted union of the inputs'
    (:func:`~roofline.kernels.arrays.stacked_text`: codes renumbered, no text decoded per launch). A
    count column that one input leaves out (known-missing) and another holds is unknown (NaN) in the
    rows of the first; one that every input leaves out stays out."""
    if not frames:
        return empty_frame(0)
    tables = [lean(validate(f), copy=False) for f in frames]
    present = {name for t in tables for name in t.columns}
    columns: dict[str, Any] = {}
    for c in COLUMNS:
        if c.name not in present:
            continue
        if c.name in ENCODED_COLUMNS:
            columns[c.name] = stacked_text([t[c.name].array for t in tables])
        elif c.dtype == "float64":
            columns[c.name] = np.concatenate([t[c.name].to_numpy() if c.name in t.columns else np.full(len(t), np.nan)
                                              for t in tables])
        else:  # Int64, boolean, string: present in every validated table (only float counts may be absent)
            columns[c.name] = pd.concat([t[c.name] for t in tables], ignore_index=True).array
    return frame_of(columns, pd.RangeIndex(sum(len(t) for t in tables)))

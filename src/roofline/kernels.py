"""The kernel table: one declared schema that every reader returns.

A kernel table is a :class:`pandas.DataFrame` with one row per kernel launch (or,
after :func:`aggregate`, per kernel name or per phase and name). Every column is
declared below with its dtype, its SI unit and what it means; readers build it,
:func:`validate` checks it, and analysis and views read only these columns.

Unknown is not zero: a quantity whose counter was not collected is NaN (or
``<NA>``), and ``flops_partial`` says when the FLOP total lacks a component.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.internals import create_dataframe_from_blocks

from roofline.attribution import module_at_depth
from roofline.errors import InputError


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
    Column("compute_capability", "string", "", "SM architecture, e.g. '7.0', '9.0'"),
    Column("grid", "string", "", "grid size '(x, y, z)' where known"),
    Column("block", "string", "", "block size '(x, y, z)' where known"),
    Column("stream", "Int64", "", "CUDA stream id"),
    Column("launches", "Int64", "", "number of launches in the row (1 per launch)"),
    Column("time_s", "float64", "s", "GPU time of the launch (gpu__time_duration.sum, else cycles / clock)"),
    Column("sm_clock_hz", "float64", "Hz", "SM clock the launch ran at (sm__cycles_elapsed.avg.per_second)"),
    Column("fp64_flops", "float64", "FLOP", "FP64 FLOPs: dadd + dmul + 2 dfma (thread instructions)"),
    Column("fp32_flops", "float64", "FLOP", "FP32 FLOPs: fadd + fmul + 2 ffma"),
    Column("fp16_flops", "float64", "FLOP", "FP16 FLOPs, non-tensor; convention in the table's fp16 setting"),
    Column("tensor_flops", "float64", "FLOP", "tensor-core FLOPs of floating-point types (integer types: tensor_int_ops)"),
    Column("tensor_precision", "string", "", "floating-point tensor input type when known: fp64, tf32, fp16, bf16, fp8 "
           "(int8 or int4 when the only tensor work is integer)"),
    Column("flops", "float64", "FLOP", "sum of the known FLOP columns; NaN when none is known"),
    Column("flops_partial", "boolean", "", "True when a FLOP component is unknown, so flops is a lower bound"),
    Column("int_ops", "float64", "OP", "integer thread instructions (IADD3, IMAD, LOP3, shifts, ISETP...; "
           "sm__sass_thread_inst_executed_op_integer_pred_on.sum), one OP each"),
    Column("conversion_ops", "float64", "OP", "conversion thread instructions (F2F, F2I, I2F, I2I; "
           "sm__sass_thread_inst_executed_op_conversion_pred_on.sum)"),
    Column("sfu_ops", "float64", "OP", "thread instructions on the XU pipe, the special-function units "
           "(MUFU transcendentals; smsp__thread_inst_executed_pipe_xu_pred_on.sum); not in ops: the XU also "
           "runs some conversions and integer instructions counted there"),
    Column("tensor_int_ops", "float64", "OP", "tensor-core integer operations (INT8, INT4; sm__ops_path_tensor_src_int8..., "
           "..._src_int4)"),
    Column("ops", "float64", "OP", "all counted operations: flops + int_ops + conversion_ops + tensor_int_ops "
           "(the known parts); NaN when none is known"),
    Column("ops_partial", "boolean", "", "True when a part of ops is unknown, so ops is a lower bound"),
    Column("l1_bytes", "float64", "B", "bytes through L1/TEX (l1tex__t_bytes.sum)"),
    Column("shared_bytes", "float64", "B", "bytes through shared memory: 128 B x the wavefronts of shared-memory "
           "instructions (sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum, else "
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}.sum), else sm__sass_data_bytes_mem_shared.sum"),
    Column("l2_bytes", "float64", "B", "bytes through L2 (lts__t_bytes.sum)"),
    Column("dram_bytes", "float64", "B", "bytes to and from DRAM/HBM (dram__bytes.sum)"),
    Column("warp_inst", "float64", "inst", "warp instructions executed (smsp__inst_executed.sum)"),
    Column("global_inst", "float64", "inst", "global and local load/store warp instructions "
           "(smsp__sass_inst_executed_op_{global,local}_{ld,st}.sum)"),
    Column("shared_inst", "float64", "inst", "shared-memory load/store warp instructions "
           "(smsp__sass_inst_executed_op_shared_{ld,st}.sum)"),
    Column("l1_transactions", "float64", "sector", "L1 sectors (32 B) of global and local loads and stores "
           "(l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum)"),
    Column("shared_transactions", "float64", "wavefront", "shared-memory load/store wavefronts (128 B) "
           "(l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum)"),
    Column("l2_transactions", "float64", "sector", "L2 sectors (32 B; lts__t_sectors.sum)"),
    Column("dram_transactions", "float64", "sector", "DRAM sectors (32 B; dram__sectors_read.sum + dram__sectors_write.sum)"),
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
#: Warp instructions: all, and the load/store instructions behind the memory-pattern walls.
INSTRUCTION_COLUMNS = ("warp_inst", "global_inst", "shared_inst")
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


@dataclass(frozen=True)
class KernelTable:
    """What a reader returns: the kernel table plus what came with it.

    ``frame`` follows :data:`COLUMNS`. ``metrics`` holds the raw profiler metrics
    (one row per launch, same index as ``frame``, SI units, the tool's metric names)
    for analyses that need more than the table, e.g. Speed-of-Light percentages.
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
    #: Group ids by key columns, worked out once for the table (:meth:`group_ids`): its analysis and
    #: the guidance on it group the same launches. Not copied by ``dataclasses.replace`` nor pickled.
    _groups: dict[tuple[str, ...], tuple[tuple[Any, ...], np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.frame)

    def group_ids(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`group_ids` of :attr:`frame` by ``keys``, kept for the next caller while the key
        columns are the very (immutable, Arrow-backed) arrays they were computed from."""
        columns = tuple(self.frame[k].array for k in keys)
        kept = self._groups.get(tuple(keys))
        if kept is not None and all(a is b for a, b in zip(kept[0], columns)):
            return kept[1], kept[2]
        gid, first = group_ids(self.frame, keys)
        if all(isinstance(c, pd.arrays.ArrowExtensionArray) for c in columns):
            self._groups[tuple(keys)] = (columns, gid, first)
        return gid, first

    def keep_groups(self, keys: Sequence[str], codes: np.ndarray) -> None:
        """Keep the groups of :attr:`frame` by ``keys`` from codes the reader had (one per distinct key,
        -1 for a missing one: a categorical's), so that :meth:`group_ids` does not hash the keys again."""
        columns = tuple(self.frame[k].array for k in keys)
        if all(isinstance(c, pd.arrays.ArrowExtensionArray) for c in columns):
            self._groups[tuple(keys)] = (columns, *_groups_of(codes))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_groups"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_groups", {})


def empty_frame(n: int = 0) -> pd.DataFrame:
    """A table of ``n`` rows with every column unknown (launches = 1, flags False)."""
    data: dict[str, Any] = {}
    for c in COLUMNS:
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


def known_sum(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the sum of the known values of ``parts`` (same-length float arrays; NaN when none is
    known), and whether one of them is unknown. Summed left to right, one part at a time (no 2-D copy)."""
    total = np.zeros(len(parts[0]))
    any_known = np.zeros(len(parts[0]), dtype=bool)
    all_known = np.ones(len(parts[0]), dtype=bool)
    for values in parts:
        known = ~np.isnan(values)
        np.add(total, values, out=total, where=known)  # (adding 0 where unknown would change nothing)
        any_known |= known
        all_known &= known
    total[~any_known] = np.nan
    return total, any_known & ~all_known


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


#: Above this many values (rows x float columns), float columns are kept as separate blocks rather
#: than stacked into one (a copy): a table of a million launches is not copied to be framed.
STACK_LIMIT = 4_000_000


def frame_of(columns: Mapping[str, Any], index: pd.Index | None = None, *, copy: bool = False,
             block: np.ndarray | None = None, block_columns: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame of ``columns`` (name -> 1-D numpy array or pandas extension array, in order), built
    at once rather than column by column (a column insert costs about 0.1 ms in pandas 3).

    Float64 numpy columns are stacked into one 2-D block (below :data:`STACK_LIMIT` values), or
    given already stacked as ``block`` (one row per name of ``block_columns``, which must be keys of
    ``columns`` too, in any order; adopted). Arrays are adopted as they are, so pass arrays nothing
    else holds (fresh results), or ``copy=True`` to copy those that could change (all but the float
    arrays stacked and Arrow-backed arrays, which are immutable). The arrays must have one length and
    the dtypes wanted.
    """
    names = list(columns)
    n = len(index) if index is not None else (len(next(iter(columns.values()))) if names else 0)
    position = {name: i for i, name in enumerate(names)}
    blocks: list[tuple[Any, np.ndarray]] = []
    in_block = set(block_columns)
    if block is not None:
        blocks.append((block, np.array([position[c] for c in block_columns], dtype=np.intp)))
    floats = [c for c in names if c not in in_block and isinstance(columns[c], np.ndarray)
              and columns[c].dtype == np.float64]
    if floats and n * len(floats) <= STACK_LIMIT:
        stacked = np.empty((len(floats), n))
        for i, c in enumerate(floats):
            stacked[i] = columns[c]
        blocks.append((stacked, np.array([position[c] for c in floats], dtype=np.intp)))
        in_block.update(floats)
    for c in names:
        if c in in_block:
            continue
        values = columns[c]
        if copy and not isinstance(values, pd.arrays.ArrowExtensionArray):
            values = values.copy()
        blocks.append((values.reshape(1, -1) if isinstance(values, np.ndarray) else values,
                       np.array([position[c]], dtype=np.intp)))
    return create_dataframe_from_blocks(blocks, index=index if index is not None else pd.RangeIndex(n),
                                        columns=pd.Index(names))


def _arrow_strings() -> bool:
    """True when pandas stores the ``string`` dtype in Arrow (its default with pyarrow installed)."""
    return pd.StringDtype().storage == "pyarrow"


def strings(values: Sequence[Any] | np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Strings (None, NaN or <NA>: missing) as the ``string`` dtype, built straight through Arrow
    where pandas keeps strings there (``pd.array(values, dtype="string")`` costs 40 us more a call)."""
    if _arrow_strings():
        return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string(), from_pandas=True))
    return pd.array(values, dtype="string")


def repeated(value: str | None, n: int) -> pd.api.extensions.ExtensionArray:
    """``value`` (None: <NA>) ``n`` times, as the ``string`` dtype."""
    if _arrow_strings():
        return pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()) if value is None
                                          else pa.repeat(pa.scalar(value, pa.large_string()), n))
    return pd.array([value], dtype="string").take(np.zeros(n, dtype=np.intp))


def flags(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """A bool array (adopted: pass a fresh one) as the ``boolean`` dtype, none missing."""
    return pd.arrays.BooleanArray(np.asarray(values, dtype=bool), np.zeros(len(values), dtype=bool))


def unknown_values(dtype: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` missing values of a declared non-float ``dtype``."""
    if dtype == "string":
        return repeated(None, n)
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
    if dtype == "boolean":
        return pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    return pd.array([], dtype=dtype).take(np.full(n, -1, dtype=np.intp), allow_fill=True)


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
    missing = [c for c in COLUMN_NAMES if c not in frame.columns]
    if missing:
        raise InputError(f"kernel table lacks columns: {', '.join(missing)}", path=where)
    out: dict[str, pd.Series] = {}
    for c in COLUMNS:
        col = frame[c.name]
        try:
            out[c.name] = col.astype(c.dtype) if str(col.dtype) != c.dtype else col
        except (TypeError, ValueError) as exc:
            raise InputError(f"kernel-table column {c.name!r} is not {c.dtype}: {exc}", path=where) from None
    # column by column: no 2-D copy of the table (1e6 launches)
    check_counts({n: out[n].to_numpy() for n in NON_NEGATIVE}, where)
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


def cut_modules(frame: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    """``frame`` with its ``module`` paths cut to ``depth`` components
    (:func:`roofline.attribution.module_at_depth`; comma-joined lists, as after :func:`aggregate` by
    name, member by member); the frame itself when ``depth`` is None. Works on the distinct paths only."""
    if depth is None or "module" not in frame.columns:
        if depth is not None and depth < 1:
            raise ValueError("depth must be at least 1")
        return frame
    codes, uniques = pd.factorize(frame["module"], use_na_sentinel=True)
    cut = [",".join(dict.fromkeys(module_at_depth(p, depth) for p in str(u).split(","))) for u in uniques]
    out = frame.copy(deep=False)  # copy-on-write: the caller's frame keeps its paths, no column is copied
    out["module"] = pd.array(cut, dtype="string").take(codes, allow_fill=True)  # -1 (missing) stays <NA>
    return out


def _row_labels(keys: Sequence[str], firsts: Mapping[str, Any]) -> pd.api.extensions.ExtensionArray:
    """The ``kernel_name`` of grouped rows keyed by ``keys`` without ``kernel_name``: op rows
    ``aten::addmm [backward]``, module rows the path, drill-downs ``module / op [phase]``;
    an unknown op or module is :data:`NO_OPERATOR` / :data:`OUTSIDE_MODULES`. ``firsts``: the keys'
    values per row."""
    n = len(firsts[keys[0]])
    parts: list[list[str]] = [[] for _ in range(n)]
    phases: list[str | None] = [None] * n
    for k in keys:
        if k == "run":
            continue
        values = pd.array(firsts[k]).astype("string").tolist()
        for i, v in enumerate(values):
            missing = v is pd.NA or v is None
            if k == "phase":
                phases[i] = None if missing else str(v)
            elif k == "op":
                parts[i].append(NO_OPERATOR if missing else str(v))
            elif k == "module":
                parts[i].append(OUTSIDE_MODULES if missing else str(v))
            else:
                parts[i].append("?" if missing else f"{k} {v}")
    labels = [" / ".join(p) + (f" [{ph}]" if ph is not None else "") if p else (ph or "(no phase)")
              for p, ph in zip(parts, phases)]
    return strings(labels)


def sameness(values: pd.api.extensions.ExtensionArray) -> str:
    """``"missing"`` when every value is missing, ``"one"`` when every value is one and the same
    (none missing), else ``"mixed"``: most descriptive columns hold one value for a whole profile,
    which needs no grouping (a comparison, not a hash of 1e6 strings)."""
    if not len(values):
        return "missing"
    if isinstance(values, pd.arrays.ArrowExtensionArray):
        arrow = pa.array(values)
        if arrow.null_count:
            return "missing" if arrow.null_count == len(arrow) else "mixed"
        return "one" if pc.all(pc.equal(arrow, arrow[0])).as_py() else "mixed"
    missing = values.isna()
    if missing.all():
        return "missing"
    if missing.any():
        return "mixed"
    data = values.to_numpy()  # none missing: plain numbers (or objects)
    return "one" if bool((data == data[0]).all()) else "mixed"


def _distinct_pairs(values: pd.api.extensions.ExtensionArray, gid: np.ndarray, *,
                    keep_missing: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (group, value code) pairs, and the values the codes stand for (integer work only)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=not keep_missing)
    width = len(uniques) + 1
    pair = pd.unique(gid.astype(np.int64) * width + (codes.astype(np.int64) + 1))
    return pair // width, pair % width - 1, np.asarray(uniques, dtype=object)


def _joined_distinct(values: pd.api.extensions.ExtensionArray, gid: np.ndarray,
                     order: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Per group, in ``order``: the distinct non-missing values, sorted and comma-joined; <NA> when none."""
    same = sameness(values)
    if same != "mixed":
        return repeated(None if same == "missing" else str(values[0]), len(order))
    groups, codes, names = _distinct_pairs(values, gid, keep_missing=False)
    present = codes >= 0
    joined: list[str | None] = [None] * len(order)
    members: dict[int, list[str]] = {}
    for g, c in zip(groups[present].tolist(), codes[present].tolist()):  # distinct pairs only: small
        members.setdefault(g, []).append(str(names[c]))
    for g, vals in members.items():
        joined[g] = ",".join(sorted(vals))
    return strings([joined[g] for g in order.tolist()])


def _repeat(values: pd.api.extensions.ExtensionArray, same: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` times the one value of ``values`` (``same`` is ``"one"``) or <NA> (``"missing"``)."""
    if isinstance(values, pd.arrays.ArrowStringArray) and values.dtype == pd.StringDtype():
        return repeated(None if same == "missing" else values[0], n)
    if same == "missing":
        return unknown_values("Int64", n) if isinstance(values, pd.arrays.IntegerArray) and str(values.dtype) == "Int64" \
            else values.take(np.full(n, -1, dtype=np.intp), allow_fill=True)
    return values.take(np.zeros(n, dtype=np.intp))


def _common_value(values: pd.api.extensions.ExtensionArray, gid: np.ndarray, first_rows: np.ndarray,
                  order: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Per group, in ``order``: the value when all launches agree (missing counts as a value), else <NA>."""
    same = sameness(values)
    if same != "mixed":
        return _repeat(values, same, len(order))
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    mixed = np.zeros(len(first_rows), dtype=bool)
    mixed[gid[codes != codes[first_rows][gid]]] = True  # a launch unlike its group's first
    return values.take(np.where(mixed, -1, first_rows)[order], allow_fill=True)


def _value_codes(values: pd.api.extensions.ExtensionArray) -> tuple[np.ndarray, int]:
    """Codes of ``values`` numbered in order of first appearance, missing values one of them (as
    ``pd.factorize(values, use_na_sentinel=False)``), and how many there are. Arrow-backed strings
    are encoded by Arrow itself, as pandas does, without its overhead (0.1 ms a call)."""
    if isinstance(values, pd.arrays.ArrowStringArray):
        arrow = pa.array(values)
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        encoded = pc.dictionary_encode(arrow, null_encoding="encode")
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(encoded.dictionary)
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def group_ids(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (numbered in order of first appearance) of the rows of ``frame`` by ``keys``,
    and the row of each group's first launch. Missing key values form their own group.

    Each key is factorized once on its own values (no string copies: this runs on 1e6 launches).
    """
    n = len(frame)
    codes = np.zeros(n, dtype=np.int64)
    for k in keys:
        c, count = _value_codes(frame[k].array)
        codes = codes * (count + 1) + c
    if len(keys) > 1:  # renumber the combined codes densely, still in order of first appearance
        codes, _ = pd.factorize(codes, sort=False)
    return _first_rows(codes.astype(np.int64, copy=False))


def _first_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (``codes`` themselves) and the row of each group's first launch."""
    n = len(codes)
    ngroups = int(codes.max()) + 1 if n else 0
    first = np.empty(ngroups, dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)  # the last write per group is its first row
    return codes, first


def _groups_of(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_ids` of a column given as codes (any numbering, -1 missing: a group of its own)."""
    dense, _ = pd.factorize(codes, sort=False, use_na_sentinel=False)  # by first appearance, as group_ids
    return _first_rows(dense.astype(np.int64, copy=False))


def longest_first(time_s: np.ndarray) -> np.ndarray:
    """The order of rows by time, longest first, unknown last, ties in their order (as a stable
    ``sort_values(ascending=False, na_position="last")``)."""
    return np.argsort(-time_s, kind="stable")


def _float_column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as floats, NaN where missing (a float64 column as it is: no conversion, no copy)."""
    column = frame[name]
    return column.to_numpy() if column.dtype == np.float64 else column.to_numpy(dtype=np.float64, na_value=np.nan)


def _as_declared(name: str, values: Any) -> Any:
    """``values`` (a numpy or extension array) in the declared dtype of column ``name``."""
    dtype = DTYPES[name]
    if dtype == "float64":
        return np.asarray(values, dtype=np.float64)
    return values if str(values.dtype) == dtype else pd.array(values).astype(dtype)


def aggregate_columns(frame: pd.DataFrame, by: GroupBy | str = "name", depth: int | None = None, *,
                      table: KernelTable | None = None) -> dict[str, Any]:
    """:func:`aggregate`'s rows as columns (name -> numpy array for float64 columns, else extension
    array, in :data:`COLUMNS` order and their declared dtypes), for callers that add columns before
    making one frame (:func:`frame_of`). ``table``: the KernelTable whose ``frame`` this is, to group
    its launches once for every caller (:meth:`KernelTable.group_ids`)."""
    frame = cut_modules(frame, depth)
    if by == "launch":
        order = longest_first(frame["time_s"].to_numpy(dtype=float, na_value=np.nan))
        return {c.name: _as_declared(c.name, frame[c.name].to_numpy(dtype=float, na_value=np.nan)[order]
                                     if c.dtype == "float64" else frame[c.name].array.take(order))
                for c in COLUMNS}
    keys = group_keys(by, runs=has_runs(frame))
    # Group ids in order of first appearance, computed once; every reduction below groups on
    # these integers instead of hashing the (long) kernel names again (1e6 launches).
    kept = table is not None and table.frame is frame  # (cutting module paths made another frame)
    gid, first_rows = table.group_ids(keys) if kept else group_ids(frame, keys)  # type: ignore[union-attr]
    ngroups = len(first_rows)
    sums: dict[str, np.ndarray] = {}
    for col in SUMMED:  # bincount on the dense group ids: no sorting, one pass per column
        values = _float_column(frame, col)
        missing = np.isnan(values)
        if not missing.any():
            sums[col] = np.bincount(gid, weights=values, minlength=ngroups)
        elif missing.all():  # a column the profile does not have (most lack the instruction counts)
            sums[col] = np.full(ngroups, np.nan)
        else:
            total = np.bincount(gid, weights=np.where(missing, 0.0, values), minlength=ngroups)
            sums[col] = np.where(np.bincount(gid, weights=missing, minlength=ngroups) > 0, np.nan, total)
    t = _float_column(frame, "time_s")
    clk = _float_column(frame, "sm_clock_hz")
    ok = ~(np.isnan(clk) | np.isnan(t))
    wt = np.bincount(gid, weights=np.where(ok, t * clk, 0.0), minlength=ngroups)
    tw = np.bincount(gid, weights=np.where(ok, t, 0.0), minlength=ngroups)
    with np.errstate(invalid="ignore", divide="ignore"):
        sums["sm_clock_hz"] = np.where(np.bincount(gid, weights=ok, minlength=ngroups) > 0, wt / tw, np.nan)
    # every column below is made in this order (rows sorted by time, longest first): one take each
    order = longest_first(sums["time_s"])
    out: dict[str, Any] = {col: values[order] for col, values in sums.items()}
    launches = out["launches"]  # sums of integer counts: integers, <NA> where one was missing
    out["launches"] = pd.arrays.IntegerArray(np.where(np.isnan(launches), 0, launches).astype(np.int64),
                                             np.isnan(launches))
    for col in ("flops_partial", "ops_partial", "estimated"):
        marked = frame[col].array.to_numpy(dtype=bool, na_value=False)
        out[col] = flags(np.bincount(gid, weights=marked, minlength=ngroups)[order] > 0 if marked.any()
                         else np.zeros(ngroups, dtype=bool))
    for col in ("process_id", "device", "compute_capability", "grid", "block", "stream", "tensor_precision"):
        if col not in keys:
            out[col] = _common_value(frame[col].array, gid, first_rows, order)
    out["source"] = _joined_distinct(frame["source"].array, gid, order)
    for col in ("phase", "op", "module"):  # a kernel launched by several operators lists them all
        if col not in keys:
            out[col] = _joined_distinct(frame[col].array, gid, order)
    for k in dict.fromkeys([*keys, "run"]):  # run: a key with several runs, else <NA> throughout
        out[k] = frame[k].array.take(first_rows[order])  # take, then convert: not 1e6 strings
    if "kernel_name" not in keys:  # the row's label, so that every view shows it unchanged
        out["kernel_name"] = _row_labels(keys, out)
    if "launch_id" not in keys:
        out["launch_id"] = unknown_values("Int64", ngroups)
    return {c.name: _as_declared(c.name, out[c.name]) for c in COLUMNS}


def aggregate(frame: pd.DataFrame, by: GroupBy | str = "name", depth: int | None = None) -> pd.DataFrame:
    """Sum launches into one row per group, within each run (a kernel name found in two runs
    gives two rows; one run: ``run`` is <NA> on every row, and this is grouping without it).

    ``by`` (:func:`group_keys`): ``"name"`` (per kernel name), ``"phase"`` (per phase and name),
    ``"op"`` (per operator and phase: forward and backward of ``aten::addmm`` are two rows),
    ``"module"`` (per module path, phases summed), ``"launch"`` (no summing), or a tuple of key
    columns (``("module", "op", "phase", "kernel_name")``). ``depth``: module paths are first cut to
    this many components (:func:`cut_modules`; None: whole paths). Launches with an unknown key
    form their own row.

    Sums keep unknowns unknown: a quantity missing in any launch of a group is NaN
    for the group. ``sm_clock_hz`` is the time-weighted mean; ``launch_id`` is <NA>;
    descriptive columns keep their value when all launches agree, else <NA>; ``phase``, ``op``
    and ``module``, when not keys, list the distinct values, comma-separated. When
    ``kernel_name`` is not a key it holds the row's label (``aten::addmm [backward]``, the module
    path, ``(no operator)``, ``(outside modules)``), so that every view shows the row by it.
    Rows are sorted by time, longest first.
    """
    if by == "launch":
        frame = cut_modules(frame, depth)
        return frame.sort_values("time_s", ascending=False, kind="stable", na_position="last").reset_index(drop=True)
    return frame_of(aggregate_columns(frame, by, depth))


def describe_columns() -> str:
    """The schema as a Markdown table (used by the docs)."""
    lines = ["| column | dtype | unit | meaning |", "|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.unit or '-'} | {c.description} |" for c in COLUMNS]
    return "\n".join(lines)


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack kernel tables (e.g. measurements and profiles) into one validated table."""
    if not frames:
        return empty_frame(0)
    return validate(pd.concat([validate(f) for f in frames], ignore_index=True))

"""The kernel table: one declared schema that every reader returns.

A kernel table is a :class:`pandas.DataFrame` with one row per kernel launch (or,
after :func:`aggregate`, per kernel name or per phase and name). Every column is
declared with its dtype, its SI unit and what it means (:data:`COLUMNS`); readers build it,
:func:`validate` checks it, and analysis and views read only these columns.

Unknown is not zero: a quantity whose counter was not collected is NaN (or
``<NA>``), or, in a table of launches, an absent column (:func:`column_or_nan`); ``flops_partial``
says when the FLOP total lacks a component. Identity text columns of a table of launches may be
dictionary-encoded (:data:`ENCODED_COLUMNS`); the contract is written in :mod:`roofline.kernels.schema`.

- :mod:`roofline.kernels.schema`: the columns, :class:`KernelTable`, building and checking tables;
- :mod:`roofline.kernels.grouping`: launches summed into rows (:func:`aggregate`);
- :mod:`roofline.kernels.activity`: what a timeline holds beside its kernels' times (copies, host calls, steps);
- :mod:`roofline.kernels.steps`: what a step of a timeline is (the breakdown's and ``roofline profile --timeline``'s);
- :mod:`roofline.kernels.arrays`: columns as arrays, frames made at once, launches grouped as integers;
- :mod:`roofline.kernels.labels`: short kernel names and the words for a table's work (FLOPs, operations,
  instructions);
- :mod:`roofline.kernels.vendor`: whose GPU a table comes from (NVIDIA or AMD, by ``compute_capability``) and
  that vendor's words for levels, units and compute ceilings.
"""

from roofline.kernels.arrays import (
    STACK_LIMIT,
    encoded_text,
    flags,
    frame_of,
    group_ids,
    is_lean,
    known_sum,
    longest_first,
    recoded_text,
    repeated,
    sameness,
    stacked_text,
    strings,
    text_codes,
    unknown_encoded,
    unknown_values,
)
from roofline.kernels.grouping import aggregate, aggregate_columns, cut_modules, row_labels
from roofline.kernels.schema import (
    ABSENT_ALLOWED,
    BYTE_COLUMNS,
    COLUMN_NAMES,
    COLUMNS,
    COUNT_COLUMNS,
    DTYPES,
    ENCODED_COLUMNS,
    FLOP_COLUMNS,
    FP16_CONVENTIONS,
    INSTRUCTION_COLUMNS,
    KEY_COLUMNS,
    NO_OPERATOR,
    NON_NEGATIVE,
    OP_COLUMNS,
    OUTSIDE_MODULES,
    SUMMED,
    TRANSACTION_COLUMNS,
    VIEW_KEYS,
    Column,
    GroupBy,
    KernelTable,
    by_name,
    check_counts,
    column_or_nan,
    concat,
    decoded,
    describe_columns,
    empty_frame,
    from_records,
    group_keys,
    has_runs,
    is_encoded,
    lean,
    total_ops,
    validate,
    widened,
    with_total_flops,
    with_total_ops,
)

__all__ = [
    "ABSENT_ALLOWED", "ENCODED_COLUMNS", "column_or_nan", "decoded", "encoded_text", "is_encoded", "is_lean", "lean", "recoded_text",
    "stacked_text", "text_codes", "unknown_encoded", "widened",
    "BYTE_COLUMNS", "COLUMNS", "COLUMN_NAMES", "COUNT_COLUMNS", "DTYPES", "FLOP_COLUMNS", "FP16_CONVENTIONS",
    "INSTRUCTION_COLUMNS", "KEY_COLUMNS", "NON_NEGATIVE", "NO_OPERATOR", "OP_COLUMNS", "OUTSIDE_MODULES",
    "STACK_LIMIT", "SUMMED", "TRANSACTION_COLUMNS", "VIEW_KEYS", "Column", "GroupBy", "KernelTable", "aggregate",
    "aggregate_columns", "by_name", "check_counts", "concat", "cut_modules", "describe_columns", "empty_frame",
    "flags", "frame_of", "from_records", "group_ids", "group_keys", "has_runs", "known_sum", "longest_first",
    "repeated", "row_labels", "sameness", "strings", "total_ops", "unknown_values", "validate", "with_total_flops", "with_total_ops",
]

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.kernels.<module>`` after ``import roofline``).
_SUBMODULES = ("activity", "arrays", "grouping", "labels", "match_rate", "schema", "steps", "vendor")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=__all__)

"""The machinery of the formula table: one counter read in every form ncu writes, and formulas.

A counter total (say the predicated-on thread FFMA instructions of a launch) is read from the first
form present, launch by launch (:class:`Counter`, :meth:`Reader.read`):

1. the total itself, ``sm__X.sum`` or ``smsp__X.sum`` (the same total for ``.sum``);
2. its rate per elapsed cycle, ``<unit>__X.sum.per_cycle_elapsed`` x that unit's
   ``<unit>__cycles_elapsed.avg`` (or, when only the clock was collected,
   ``<unit>__cycles_elapsed.avg.per_second`` x the launch's time). This is how
   Nsight Compute's own roofline sections compute achieved work (``ValuePerCycleMetrics``
   x ``smsp__cycles_elapsed.avg.per_second``), and what ``--set full`` exports hold;
3. its rate per second, ``<unit>__X.sum.per_second`` x the launch's time;
4. the sections' derived per-cycle metrics (``derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2``
   = FFMA per cycle x 2), divided by their factor, x cycles as in 2.
5. where a counter names them, pipe utilizations (``% of peak``) of exactly 0 prove the count is 0
   (see :mod:`roofline.counting.flops`).

A counter may also be read as the sum of counters that add up to it, in the same form (``--set full``
holds the LDGSTS count as its LDGSTS.ACCESS and LDGSTS.BYPASS parts), and may exist only from some SM
on (:attr:`Counter.archs`): on the launches of an earlier SM its total is 0, collected or not.

A :class:`Formula` is ``column = sum(weight x counter)``, from the first alternative whose counters
are all known; counters it names ``optional`` (local-memory parts of a load/store sum) make the
alternative without them a lower bound, used only when no complete alternative is known
(:func:`formula_value`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Compute-capability majors the table has rules for (others are read with the general rules).
ARCHS = ("7", "8", "9", "10", "11")
#: Blackwell's majors: 10 (B200, B300), 11 (Jetson Thor: SM 10.1 until CUDA 13 renamed it 11.0),
#: 12 (RTX 50, RTX PRO Blackwell, DGX Spark's GB10).
BLACKWELL = ("10", "11", "12")
#: The Blackwell majors whose tensor cores run tcgen05 (UTC*MMA, on a pipe of their own): the PTX ISA's
#: target notes for tcgen05 name sm_100a, sm_101a (renamed sm_110a) and their families; SM 12.x has none.
TCGEN05 = ("10", "11")
#: Formulas that hold on every architecture.
ALL = ("*",)


#: One way to read a counter's total: a metric, or several whose totals add up to it
#: (``LDGSTS.ACCESS`` + ``LDGSTS.BYPASS``, what ``--set full`` holds of the LDGSTS count).
Source = str | tuple[str, ...]


def _parts(source: Source) -> tuple[str, ...]:
    return (source,) if isinstance(source, str) else source


@dataclass(frozen=True)
class Counter:
    """One counter total, read from the first form present (see the module docstring).

    ``names``: the totals (``sm__X.sum``, ``smsp__X.sum``), best first; an entry may be a tuple of
    totals that add up to this one (every part needed, each in the same form). The first entry is
    one metric: the name a hint gives.
    ``derived``: (column, factor) of per-cycle derived metrics: column / factor = the per-cycle
    rate of the total, on the unit the column names (``derived__smsp__...`` -> smsp).
    ``archs``: the compute capabilities (``'7.5'``) or their majors (``'8'``) whose SM has what the
    counter counts; elsewhere the total is 0 by definition (LDGSTS, cp.async, exists from SM 8.0 on),
    for the launches whose architecture the reader knows (:class:`Reader`).
    """

    names: tuple[Source, ...]
    derived: tuple[tuple[str, float], ...] = ()
    #: Utilization columns (``% of peak``) whose value of exactly 0 proves the total is 0 where no
    #: other form is present (a ``--set full`` export has the tensor pipe's utilization only).
    idle: tuple[str, ...] = ()
    archs: tuple[str, ...] = ("*",)

    @property
    def name(self) -> str:
        first = self.names[0]
        assert isinstance(first, str), "a counter's first name is one metric (the one hints name)"
        return first

    @property
    def metrics(self) -> tuple[str, ...]:
        """The names that are one metric each (not a sum of parts), best first."""
        return tuple(n for n in self.names if isinstance(n, str))

    def forms(self) -> list[str]:
        """Every column this counter can be read from."""
        out: list[str] = []
        for source in self.names:
            for n in _parts(source):
                out += [n, f"{n}.per_cycle_elapsed", f"{n}.per_second"]
        return out + [d for d, _ in self.derived]

    def exists_on(self, cc: str | None) -> bool:
        """False where the architecture ``cc`` has nothing this counter counts (its total is 0 there);
        True where it has, and where ``cc`` is unknown."""
        return cc is None or applies(self.archs, cc)


def sm(metric: str, derived: tuple[tuple[str, float], ...] = ()) -> Counter:
    """A counter available as ``sm__<metric>`` or ``smsp__<metric>``."""
    return Counter((f"sm__{metric}", f"smsp__{metric}"), derived)


def smsp(metric: str) -> Counter:
    """A counter available as ``smsp__<metric>`` or ``sm__<metric>`` (the SM-partition name first)."""
    return Counter((f"smsp__{metric}", f"sm__{metric}"))


def one(name: str) -> Counter:
    """A counter with one name (an L1TEX, LTS or DRAM metric)."""
    return Counter((name,))


def dram(half: str, kind: str = "bytes") -> Counter:
    """DRAM read or write traffic (``half``: "read", "write"; ``kind``: "bytes", "sectors"):
    ``dram__bytes_read.sum``, or ``dram__bytes_op_read.sum``, the name ncu 2025 and later give it
    on the RTX 50 series (sm_120; real exports in tests/data/ncu/rtx5070_details_dram_op_names)."""
    return Counter((f"dram__{kind}_{half}.sum", f"dram__{kind}_op_{half}.sum"))


def sass(op: str, derived_factor: float | None = None, *more: tuple[str, float]) -> Counter:
    """Predicated-on thread instructions of one SASS opcode class (dadd, ffma, hmul...), with the
    roofline sections' ``derived__smsp__..._x<factor>`` per-cycle form where one exists."""
    base = f"sass_thread_inst_executed_op_{op}_pred_on"
    derived = ((f"derived__smsp__{base}_x{derived_factor:g}", derived_factor),) if derived_factor else ()
    return sm(f"{base}.sum", derived + tuple(more))


def idle_columns(*pipes: str) -> tuple[str, ...]:
    """The utilization columns of ``pipes`` whose 0 % proves their instructions' count is 0."""
    return tuple(f"{unit}__{what}.{stat}.pct_of_peak_sustained_{when}"
                 for unit in ("sm", "smsp") for what in pipes
                 for stat in ("sum", "avg", "max") for when in ("active", "elapsed"))


def _unit(column: str) -> str:
    """The hardware unit a metric counts on: ``smsp`` for ``smsp__x`` and ``derived__smsp__x``."""
    parts = column.split("__")
    return parts[1] if parts[0] == "derived" and len(parts) > 2 else parts[0]


#: Units that run on one clock (an SM and its four sub-partitions).
_SAME_CLOCK = {"sm": ("smsp",), "smsp": ("sm",)}


#: Up to this many launches a reader keeps what it read (the formula table probes the same counters
#: many times; small profiles are all overhead); beyond, it keeps no copy of a column, which would
#: hold more memory than reading it again costs time (each is read once or twice).
KEEP_LAUNCHES = 100_000


class Reader:
    """Reads counters from one metrics frame (SI units), launch by launch.

    Columns present and counters read are remembered per reader (the arrays themselves up to
    :data:`KEEP_LAUNCHES` launches); arrays it returns may be read-only.
    """

    def __init__(self, metrics: pd.DataFrame, cc_codes: np.ndarray | None = None,
                 distinct: Sequence[str | None] = ()) -> None:
        self.metrics = metrics
        self.n = len(metrics)
        #: per launch, the position in ``distinct`` of its compute capability (None: unknown); counters
        #: read 0 on the launches of architectures that lack what they count (:attr:`Counter.archs`)
        self._cc_codes = cc_codes
        self._distinct = tuple(distinct)
        self._keep = self.n <= KEEP_LAUNCHES
        self._numeric = {name for name, dtype in metrics.dtypes.items() if dtype.kind in "iuf"}
        self._columns: dict[str, np.ndarray | None] = {}
        self._reads: dict[tuple[object, ...], np.ndarray | None] = {}
        self._cycles: dict[str, np.ndarray | None] = {}
        self._time: np.ndarray | None = None  # set by count() once time is known
        self._rows_of: dict[tuple[int, ...], np.ndarray] = {}  # launches of some architectures, by their codes

    @property
    def time(self) -> np.ndarray:
        """Launch time (s), which rates per second and clocks are multiplied by; NaN until set."""
        if self._time is None:
            self._time = np.full(self.n, np.nan)
        return self._time

    @time.setter
    def time(self, value: np.ndarray) -> None:
        self._time = value
        self._reads.clear()  # reads through rates and clocks depend on the time
        self._cycles.clear()

    def column(self, name: str) -> np.ndarray | None:
        if name in self._columns:
            return self._columns[name]
        if name not in self._numeric:
            return None
        values = self.metrics[name].to_numpy(dtype=np.float64, na_value=np.nan)
        values.flags.writeable = False  # shared by every reader of the column
        if self._keep:
            self._columns[name] = values
        return values

    def has(self, name: str) -> bool:
        return name in self._numeric

    def cycles(self, unit: str) -> np.ndarray | None:
        """Elapsed cycles of ``unit``: ``<unit>__cycles_elapsed.avg``, else its clock x time. An SM and
        its sub-partitions (``sm``, ``smsp``) share one clock, so either unit's figures serve both."""
        if unit in self._cycles:
            return self._cycles[unit]
        out: np.ndarray | None = None
        for u in (unit, *_SAME_CLOCK.get(unit, ())):
            for values in (self.column(f"{u}__cycles_elapsed.avg"), self._by_clock(u)):
                if values is not None:
                    out = values if out is None else np.where(np.isnan(out), values, out)
        self._cycles[unit] = out
        return out

    def _by_clock(self, unit: str) -> np.ndarray | None:
        rate = self.column(f"{unit}__cycles_elapsed.avg.per_second")
        return rate * self.time if rate is not None else None

    def read(self, counter: Counter, *, totals_only: bool = False) -> np.ndarray | None:
        """The counter's total per launch, from the first form present (row by row); None if none is.
        ``totals_only``: the totals themselves, no rate. 0 on the launches whose architecture lacks
        what the counter counts (:attr:`Counter.archs`), whatever was collected."""
        key = (counter.names, counter.derived, counter.idle, counter.archs, totals_only)  # plain tuples: hashed in C
        if key in self._reads:
            return self._reads[key]
        values = self._absent_archs(counter, self._read(counter, totals_only))
        if self._keep or values is None:
            self._reads[key] = values
        return values

    def _absent_archs(self, counter: Counter, values: np.ndarray | None) -> np.ndarray | None:
        """``values`` with 0 on the launches of architectures without what ``counter`` counts."""
        if counter.archs == ALL or self._cc_codes is None:
            return values
        lacking = [code for code, cc in enumerate(self._distinct) if not counter.exists_on(cc)]
        if not lacking:
            return values
        if len(lacking) == len(self._distinct):  # no launch's architecture has it: 0 throughout
            return np.zeros(self.n)
        rows = self._rows_of.get(tuple(lacking))
        if rows is None:
            rows = self._rows_of[tuple(lacking)] = np.isin(self._cc_codes, lacking)
        out = np.full(self.n, np.nan) if values is None else values.copy()
        out[rows] = 0.0
        return out

    def _read(self, counter: Counter, totals_only: bool) -> np.ndarray | None:
        out: np.ndarray | None = None
        for source in counter.names:
            out = self._fill_source(out, source, "", None)
        if totals_only:
            return out
        for source in counter.names:
            for suffix, per in ((".per_cycle_elapsed", "cycle"), (".per_second", "second")):
                out = self._fill_source(out, source, suffix, per)
        for column, factor in counter.derived:
            out = self._fill(out, column, "cycle", factor)
        for column in counter.idle:
            values = self.column(column)
            if values is not None:
                zero = np.where(values == 0, 0.0, np.nan)
                out = zero if out is None else np.where(np.isnan(out), zero, out)
        return out

    def _fill_source(self, out: np.ndarray | None, source: Source, suffix: str, per: str | None) -> np.ndarray | None:
        """:meth:`_fill` with one source of a counter in one form: a metric, or the sum of its parts
        (NaN where a part is; nothing where a part was not collected in this form)."""
        if isinstance(source, str):
            return self._fill(out, source + suffix, per, 1.0)
        values = [self._fill(None, part + suffix, per, 1.0) for part in source]
        known = [v for v in values if v is not None]
        if len(known) < len(values):
            return out
        total = np.sum(known, axis=0)
        return total if out is None else np.where(np.isnan(out), total, out)

    def _fill(self, out: np.ndarray | None, column: str, per: str | None, factor: float) -> np.ndarray | None:
        values = self.column(column)
        if values is None:
            return out
        if per == "cycle":
            cycles = self.cycles(_unit(column))
            if cycles is None:
                return out
            values = values / factor * cycles
        elif per == "second":
            values = values * self.time
        if out is None:
            return values
        return np.where(np.isnan(out), values, out)


Terms = tuple[tuple[float, Counter], ...]


@dataclass(frozen=True)
class Formula:
    """``column = sum(weight * counter)``, from the first alternative whose counters are all known.

    ``optional``: names of counters (their first name) that an alternative may lack: the sum without
    them is a lower bound, taken only where no complete alternative is known (see :func:`formula_value`).
    """

    column: str
    archs: tuple[str, ...]
    alternatives: tuple[Terms, ...]
    doc: str
    convention: str | None = None  # fp16 only: "ncu" or "paper"
    optional: tuple[str, ...] = field(default=())

    @property
    def terms(self) -> Terms:
        """The preferred alternative."""
        return self.alternatives[0]


def terms(*pairs: tuple[float, Counter]) -> tuple[Terms, ...]:
    """One alternative."""
    return (tuple(pairs),)


def nowhere(n: int) -> np.ndarray:
    """NaN for each of ``n`` launches, as a read-only array that takes no memory (a column nothing
    counted: at a million launches, 8 MB each that the kernel table leaves out anyway)."""
    return np.broadcast_to(np.float64(np.nan), (n,))


def unknown(values: np.ndarray | None) -> bool:
    """Not collected: no column, or a column of empty cells (a derived metric whose inputs were not)."""
    return values is None or bool(np.isnan(values).all())


@dataclass
class FormulaValue:
    """A formula's values per launch, and what a lower bound lacked (optional counters not collected)."""

    values: np.ndarray
    lower_bound: np.ndarray  # bool per launch: the value lacks an optional part
    lacking: list[str]  # the optional counters not collected, where lower_bound is set
    missing: list[str]  # the preferred alternative's counters not collected, where every value is unknown


def _sum(reader: Reader, alternative: Terms, totals_only: bool) -> np.ndarray | None:
    values = [reader.read(c, totals_only=totals_only) for _, c in alternative]
    if any(v is None for v in values):
        return None
    # sum(w * v) left to right, as 0 + w0 v0 + w1 v1 ..., in two arrays however many terms
    (w0, _), v0 = alternative[0], values[0]
    assert v0 is not None
    total = np.multiply(v0, w0)
    total += 0.0  # 0 + w0 v0: -0.0 becomes 0.0, everything else stays
    scratch = np.empty(reader.n) if len(values) > 1 else total
    for (w, _), v in zip(alternative[1:], values[1:]):
        assert v is not None
        total += np.multiply(v, w, out=scratch)
    return total


def _absent(values: np.ndarray | None, rows: np.ndarray) -> bool:
    return values is None or bool(np.isnan(values[rows]).any())


def _lower_sum(reader: Reader, alternative: Terms, optional: tuple[str, ...],
               totals_only: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """An alternative's sum over its required counters (all known: else None; as totals only, or through
    rates too) and whichever of its optional ones are known in any form, launch by launch; and where an
    optional one was not (a lower bound there)."""
    required = tuple(t for t in alternative if t[1].name not in optional)
    total = _sum(reader, required, totals_only) if required else np.zeros(reader.n)
    if total is None:
        return None
    lacks = np.zeros(reader.n, dtype=bool)
    for w, c in alternative:
        if c.name not in optional:
            continue
        v = reader.read(c)
        if v is None:
            lacks[:] = True
            continue
        missing = np.isnan(v)
        lacks |= missing
        total = total + np.where(missing, 0.0, v * w)
    return total, lacks


def formula_value(reader: Reader, f: Formula) -> FormulaValue:
    """Per launch, the first complete alternative known as totals, else the first known through rates
    (dram read + write counted beat dram__bytes.sum.per_second x time); then, where none is, the first
    alternative whose required counters are known, with those of its optional counters that are (a lower
    bound where one is not); NaN where nothing is known."""
    out: np.ndarray | None = None  # None: every launch still unknown
    lower = np.zeros(reader.n, dtype=bool)
    lacking: list[str] = []
    complete = reader.n == 0  # every launch known (checked once per new value, not per alternative)
    for is_lower in (False, True):
        for totals_only in (True, False):
            for full in f.alternatives:
                has_optional = any(c.name in f.optional for _, c in full)
                if (is_lower and not has_optional) or complete:
                    continue  # no optional part (tried as a complete alternative), or every launch known
                lacks: np.ndarray | None = None
                if is_lower:
                    found = _lower_sum(reader, full, f.optional, totals_only)
                    if found is None:
                        continue
                    total, lacks = found
                else:
                    summed = _sum(reader, full, totals_only)
                    if summed is None:
                        continue
                    total = summed
                if out is None:
                    fill = ~np.isnan(total)
                    out = total
                else:
                    fill = np.isnan(out) & ~np.isnan(total)
                    out = np.where(fill, total, out)
                complete = not np.isnan(out).any()
                if lacks is not None and (fill & lacks).any():
                    lower |= fill & lacks
                    lacking += [c.name for _, c in full if c.name in f.optional
                                and _absent(reader.read(c), fill & lacks)]
    if out is None:
        out = nowhere(reader.n)
    missing = [c.name for _, c in f.terms if unknown(reader.read(c))] if np.isnan(out).all() else []
    return FormulaValue(out, lower, list(dict.fromkeys(lacking)), missing)


def arch_family(cc: str | None) -> str | None:
    """``'7.0'`` -> ``'7'``; None for unknown."""
    if cc is None or cc is pd.NA or not isinstance(cc, str) or not cc.strip():
        return None
    return cc.strip().split(".")[0]


def applies(archs: Iterable[str], cc: str | None) -> bool:
    """True when a formula for ``archs`` holds on compute capability ``cc``."""
    archs = tuple(archs)
    return "*" in archs or (cc is not None and (cc in archs or arch_family(cc) in archs))


def ncu_hint(metrics: Iterable[str]) -> str:
    """The command-line hint that collects ``metrics``."""
    return "collect with: ncu --metrics " + ",".join(dict.fromkeys(metrics))

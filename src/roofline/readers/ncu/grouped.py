"""Numbers as ncu writes them by default (``"9,378,941,875"``, ``"27,661.50"``), read by a small
compiled loop over an Arrow text column instead of dropping the commas and casting.

Arrow compute has no cast that skips digit groups: dropping them first (``replace_substring``) costs
about 50 ns a value and makes a second text column, which for the 14 grouped columns of
benchmarks/bench_analyze.py's 1e6-launch page is 0.7 of the read's 2.2 CPU seconds. The loop here
(:data:`_IR`, LLVM IR compiled once a process through llvmlite, numba's own backend, in about 10 ms)
reads each value's digits into an integer mantissa and counts the digits after the decimal point,
about 10 ns a value; the values are then ``mantissa / 10**digits`` (float64) or the mantissa (int64).

Exactly what the cast gives, or nothing: a value is taken only in the strict form ncu writes (an
optional ``-``, digits in groups of three after a first group of one to three, or no groups at all,
an optional ``.`` and at least one digit after it) with at most 15 digits in all, so that the
mantissa and the power of ten are exact doubles and one division rounds as a correct parse does
(Clinger's fast path); ``-0`` (a negative zero as a float) is refused too. When any value of a
column is not so (spaces, an exponent, ``+5``, 16 digits, ``n/a`` text), :func:`grouped_numbers`
returns None and the caller casts as before. Gaps (nulls) become NaN and make the column float64,
as the cast's integers with gaps do. The equivalent C of the loop, for one value::

    p = start; neg = (data[p] == '-'); p += neg; m = digits = 0; group = -1; lead = 0;
    for (; p < end && (isdigit(data[p]) || data[p] == ','); p++)
        if (data[p] == ',') { if (!digits || (group >= 0 ? group != 3 : lead > 3)) fail; group = 0; }
        else { m = 10 * m + data[p] - '0'; digits++; if (group >= 0) group++; else lead++; }
    if (!digits || (group >= 0 && group != 3)) fail;
    k = 0;
    if (p < end) { if (data[p] != '.' || p + 1 == end) fail;
                   for (p++; p < end; p++) { if (!isdigit(data[p])) fail; m = 10 * m + data[p] - '0'; digits++; k++; } }
    if (digits > 15 || (neg && m == 0)) fail;
    mantissa[i] = neg ? -m : m; scale[i] = k;

Without llvmlite (or where it cannot compile for this CPU) every column is cast as before.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

log = logging.getLogger(__name__)

#: Digits a value may have in all: below 2**53, so that the mantissa is an exact double.
MAX_DIGITS = 15
#: 10**k for k digits after the decimal point: exact doubles (10**22 is the last).
_POWERS = np.array([10.0 ** k for k in range(MAX_DIGITS + 1)])

#: ``i64 parse_grouped(i32* offsets, i8* data, i8* validity or null, i64 first bit, i64 n,
#: i64* mantissa, i8* scale)``: 0 when every value (gaps skipped) is in the strict form, else 1 + the
#: index of the first that is not.
_IR = r"""
define i64 @parse_grouped(i32* %off, i8* %data, i8* %valid, i64 %bit0, i64 %n, i64* %mant, i8* %scale) {
entry:
  %has_valid = icmp ne i8* %valid, null
  br label %loop

loop:                                     ; for (i = 0; i < n; i++)
  %i = phi i64 [0, %entry], [%i.next, %store]
  %done = icmp eq i64 %i, %n
  br i1 %done, label %ok, label %check_gap

check_gap:
  br i1 %has_valid, label %load_bit, label %start

load_bit:                                 ; a gap (validity bit 0): stored as 0, NaN later
  %bit = add i64 %i, %bit0
  %byte_i = lshr i64 %bit, 3
  %byte_p = getelementptr i8, i8* %valid, i64 %byte_i
  %byte = load i8, i8* %byte_p
  %shift64 = and i64 %bit, 7
  %shift = trunc i64 %shift64 to i8
  %sh = lshr i8 %byte, %shift
  %isset = and i8 %sh, 1
  %isgap = icmp eq i8 %isset, 0
  br i1 %isgap, label %store_gap, label %start

store_gap:
  br label %store

start:                                    ; the value is data[s:e]
  %op = getelementptr i32, i32* %off, i64 %i
  %s32 = load i32, i32* %op
  %i1 = add i64 %i, 1
  %op1 = getelementptr i32, i32* %off, i64 %i1
  %e32 = load i32, i32* %op1
  %s = sext i32 %s32 to i64
  %e = sext i32 %e32 to i64
  %empty = icmp sge i64 %s, %e
  br i1 %empty, label %fail, label %sign

sign:
  %cp0 = getelementptr i8, i8* %data, i64 %s
  %c0 = load i8, i8* %cp0
  %isneg = icmp eq i8 %c0, 45             ; '-'
  %p0 = select i1 %isneg, i64 1, i64 0
  %pstart = add i64 %s, %p0
  br label %int_loop

int_loop:                                 ; digits and group commas before the decimal point
  %p = phi i64 [%pstart, %sign], [%p.d, %digit], [%p.c, %comma]
  %m = phi i64 [0, %sign], [%m.d, %digit], [%m, %comma]
  %nd = phi i64 [0, %sign], [%nd.d, %digit], [%nd, %comma]
  %grp = phi i64 [-1, %sign], [%grp.d, %digit], [0, %comma]   ; digits since the last comma, -1 before one
  %lead = phi i64 [0, %sign], [%lead.d, %digit], [%lead, %comma]
  %at_end = icmp eq i64 %p, %e
  br i1 %at_end, label %int_end, label %int_char

int_char:
  %cp = getelementptr i8, i8* %data, i64 %p
  %c = load i8, i8* %cp
  %dv = sub i8 %c, 48
  %isdig = icmp ult i8 %dv, 10
  br i1 %isdig, label %digit, label %notdigit

digit:
  %dv64 = zext i8 %dv to i64
  %m10 = mul i64 %m, 10
  %m.d = add i64 %m10, %dv64
  %nd.d = add i64 %nd, 1
  %ingrp = icmp sge i64 %grp, 0
  %grp1 = add i64 %grp, 1
  %grp.d = select i1 %ingrp, i64 %grp1, i64 %grp
  %lead1 = add i64 %lead, 1
  %lead.d = select i1 %ingrp, i64 %lead, i64 %lead1
  %p.d = add i64 %p, 1
  br label %int_loop

notdigit:
  %iscomma = icmp eq i8 %c, 44            ; ','
  br i1 %iscomma, label %comma_check, label %int_end

comma_check:                              ; a comma after 1-3 leading digits or a group of 3
  %nodig = icmp eq i64 %nd, 0
  %ingrp2 = icmp sge i64 %grp, 0
  %grp_not3 = icmp ne i64 %grp, 3
  %bad_grp = and i1 %ingrp2, %grp_not3
  %nogrp = icmp slt i64 %grp, 0
  %lead_gt3 = icmp sgt i64 %lead, 3
  %bad_lead = and i1 %nogrp, %lead_gt3
  %bad1 = or i1 %nodig, %bad_grp
  %bad = or i1 %bad1, %bad_lead
  br i1 %bad, label %fail, label %comma

comma:
  %p.c = add i64 %p, 1
  br label %int_loop

int_end:                                  ; some digit, and the last group whole
  %nodig2 = icmp eq i64 %nd, 0
  %ingrp3 = icmp sge i64 %grp, 0
  %grp_not3b = icmp ne i64 %grp, 3
  %bad_grp2 = and i1 %ingrp3, %grp_not3b
  %bad2 = or i1 %nodig2, %bad_grp2
  br i1 %bad2, label %fail, label %after_int

after_int:
  %more = icmp ult i64 %p, %e
  br i1 %more, label %point, label %finish

point:                                    ; '.' and at least one digit after it
  %cpp = getelementptr i8, i8* %data, i64 %p
  %cpt = load i8, i8* %cpp
  %ispoint = icmp eq i8 %cpt, 46
  %pf = add i64 %p, 1
  %hasfrac = icmp ult i64 %pf, %e
  %okpoint = and i1 %ispoint, %hasfrac
  br i1 %okpoint, label %frac_loop, label %fail

frac_loop:
  %q = phi i64 [%pf, %point], [%q.n, %frac_digit]
  %mf = phi i64 [%m, %point], [%mf.n, %frac_digit]
  %ndf = phi i64 [%nd, %point], [%ndf.n, %frac_digit]
  %k = phi i64 [0, %point], [%k.n, %frac_digit]
  %fend = icmp eq i64 %q, %e
  br i1 %fend, label %finish, label %frac_char

frac_char:
  %cq = getelementptr i8, i8* %data, i64 %q
  %cf = load i8, i8* %cq
  %dvf = sub i8 %cf, 48
  %isdigf = icmp ult i8 %dvf, 10
  br i1 %isdigf, label %frac_digit, label %fail

frac_digit:
  %dvf64 = zext i8 %dvf to i64
  %mf10 = mul i64 %mf, 10
  %mf.n = add i64 %mf10, %dvf64
  %ndf.n = add i64 %ndf, 1
  %k.n = add i64 %k, 1
  %q.n = add i64 %q, 1
  br label %frac_loop

finish:                                   ; at most 15 digits, and no "-0"
  %mm = phi i64 [%m, %after_int], [%mf, %frac_loop]
  %ndd = phi i64 [%nd, %after_int], [%ndf, %frac_loop]
  %kk = phi i64 [0, %after_int], [%k, %frac_loop]
  %toolong = icmp sgt i64 %ndd, 15
  %zero = icmp eq i64 %mm, 0
  %negzero = and i1 %isneg, %zero
  %bad3 = or i1 %toolong, %negzero
  br i1 %bad3, label %fail, label %store_value

store_value:
  %neg_m = sub i64 0, %mm
  %signed = select i1 %isneg, i64 %neg_m, i64 %mm
  %k8 = trunc i64 %kk to i8
  br label %store

store:
  %vm = phi i64 [0, %store_gap], [%signed, %store_value]
  %vk = phi i8 [0, %store_gap], [%k8, %store_value]
  %mp = getelementptr i64, i64* %mant, i64 %i
  store i64 %vm, i64* %mp
  %kp = getelementptr i8, i8* %scale, i64 %i
  store i8 %vk, i8* %kp
  %i.next = add i64 %i, 1
  br label %loop

ok:
  ret i64 0

fail:
  %where = add i64 %i, 1
  ret i64 %where
}
"""

_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                              ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


class _Kernel:
    """The compiled loop, made once in a thread of its own (:meth:`prepare`: while the first slab is
    parsed), its engine kept alive with it; None where it cannot be made."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made = threading.Event()
        self._started = False
        self._engine: Any = None
        self.function: Any = None

    def prepare(self) -> None:
        """Start compiling, if nothing has started it yet."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._make, name="roofline-grouped-numbers", daemon=True).start()

    def _make(self) -> None:
        try:
            self._engine, self.function = _compile()
        except Exception as exc:  # no llvmlite, or it cannot target this CPU: the cast as before
            log.debug("digit groups are cast by Arrow compute: the compiled loop is unavailable (%s)", exc)
        finally:
            self._made.set()

    def get(self) -> Any:
        """The loop (None: unavailable), once it is made."""
        self.prepare()
        self._made.wait()
        return self.function


def _compile() -> tuple[Any, Any]:
    import llvmlite.binding as llvm

    try:
        llvm.initialize()  # older llvmlite needs it; newer initialize themselves and refuse the call
    except RuntimeError:
        pass
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(_IR)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, llvm.Target.from_default_triple().create_target_machine(opt=2))
    engine.finalize_object()
    return engine, _SIGNATURE(engine.get_function_address("parse_grouped"))


_KERNEL = _Kernel()


def prepare() -> None:
    """Start compiling the loop in a thread of its own, so that it is ready when the first column
    asks for it (:func:`grouped_numbers` waits for it otherwise)."""
    _KERNEL.prepare()


def grouped_numbers(text: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | None:
    """``text`` (Arrow ``string``) as numbers, each chunk parsed by the compiled loop: int64 when
    every value is a whole number and none is missing, else float64 with NaN for the gaps; None when
    some value is not in the strict form (see the module docstring) or the loop is unavailable."""
    if text.type != pa.string():
        return None
    function = _KERNEL.get()
    if function is None:
        return None
    parsed = []
    for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
        one = _Parsed.of(function, chunk)
        if one is None:
            return None
        parsed.append(one)
    whole = all(p.whole for p in parsed)
    return pa.chunked_array([p.array(whole) for p in parsed], type=pa.int64() if whole else pa.float64())


@dataclass
class _Parsed:
    """One chunk: each value's mantissa and digits after the decimal point, and where it has a
    value (None: everywhere)."""

    mantissa: np.ndarray
    scale: np.ndarray
    valid: np.ndarray | None

    @classmethod
    def of(cls, function: Any, chunk: pa.Array) -> _Parsed | None:
        """``chunk`` through the loop; None when a value is not in the strict form."""
        n = len(chunk)
        mantissa, scale = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int8)
        if n == 0:
            return cls(mantissa, scale, None)
        validity, offsets, data = chunk.buffers()
        gaps = validity if validity is not None and chunk.null_count > 0 else None
        if function(offsets.address + 4 * chunk.offset, data.address if data is not None else 0,
                    gaps.address if gaps is not None else None, chunk.offset, n, mantissa.ctypes.data,
                    scale.ctypes.data):
            return None
        valid = None
        if gaps is not None:
            bits = np.frombuffer(gaps, dtype=np.uint8)
            valid = np.unpackbits(bits, count=chunk.offset + n, bitorder="little")[chunk.offset:].view(bool)
        return cls(mantissa, scale, valid)

    @property
    def whole(self) -> bool:
        return self.valid is None and not self.scale.any()

    def array(self, whole: bool) -> pa.Array:
        """As an Arrow array made from NumPy's buffer (pyarrow's own conversion of a NumPy array loads
        pandas): the mantissas (``whole``), else ``mantissa / 10**digits``, NaN in the gaps."""
        if whole:
            return pa.Array.from_buffers(pa.int64(), len(self.mantissa), [None, pa.py_buffer(self.mantissa)])
        first = int(self.scale[0]) if len(self.scale) else 0
        same = bool((self.scale == first).all())  # most columns print one number of decimals
        values = self.mantissa / (_POWERS[first] if same else _POWERS[self.scale])
        if self.valid is not None:
            values[~self.valid] = np.nan
        return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])

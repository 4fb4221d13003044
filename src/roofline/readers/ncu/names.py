"""Kernel names and NVTX ranges as profilers print them.

Demangling: Nsight Compute prints demangled names by default; a name still mangled
(``_Z...``, from ``--print-kernel-base mangled`` or a tool that kept it) is demangled
with the ``cxxfilt`` package (a ctypes binding to the C++ runtime's own
``abi::__cxa_demangle``) when it is installed, else with binutils' ``c++filt`` when
it is on PATH (one process for all names), else kept as is, with a warning.

NVTX: the phase of a launch is the INNERMOST push/pop phase range it ran in (the most
recently pushed), as :func:`roofline.phases.current_phase` defines it for the
counter-free mode, so both modes give a kernel the same phase. A launch with no
push/pop phase range takes the last start/end range (``roofline.torch.annotate`` opens
``backward`` as a start/end range, since autograd launches from its own threads).
PyTorch's own ranges (module, operator, autograd-node and optimizer ranges) are not
phases: they give the launch's module and operator, and the phase where no phase range
says (:mod:`roofline.readers.torch_ranges` holds those rules; this module reads the cells).
Stacks are written outermost first (``forward/aten::mm``).

How ``ncu --nvtx --csv`` writes them (the header strings are those of the ncu
2024.1.1 binary; the values as quoted from public exports and the parsers written
against them, cited in tests/test_names.py):

* column ``thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg``:
  the launching thread's id, then each open push/pop range in double quotes, outermost
  first, separated by spaces: ``1614690  "<default domain>:forward:none:none:none:none:none:none"``.
  Each range is ``domain:name:payload type:payload:color type:color:message type:message``;
  the default domain is ``<default domain>``, a named one its name (``NVTX`` for ranges a
  program opens in a domain of that name).
* column ``Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg``: the
  open start/end ranges, each ``id:domain:name:...`` (quoted or not).
* ncu also knows a column ``Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`` beside a
  ``Domain`` column: ranges without their domain.
* older exports and other tools: a column named ``NVTX...`` holding ``a/b`` or ``domain:a/b``.

A range name may hold colons (``aten::mm``): the domain is the first field and the six
attribute fields the last six; what lies between is the name. Where a program's ranges are
in several domains, the default domain's innermost phase range is the phase; when it has none,
the innermost phase range of the last domain listed.

Which launch a name is (:func:`same_kernel`): ncu versions and print options write one kernel's
name in different forms. The same report (tests/data/ncu/h200_sections_rep_and_details_export)
read by ncu 2024.1.1 or ``ncu_report`` names a launch
``void flashinfer::norm::RMSNormKernel<(unsigned int)8, __nv_bfloat16>(T2 *, T2 *, ...)``; its CSV export by
ncu 2026.2.1 ``void norm::RMSNormKernel<8, __nv_bfloat16>(T2 *, T2 *, ...)`` (casts and ``flashinfer::``
dropped); ``--print-kernel-base function`` prints ``RMSNormKernel``; ``--print-kernel-base mangled``
demangled by the C++ runtime gives ``RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, ...)``, ``false`` for
``(bool)0``, ``&(float silu<float>(float const&))`` for ``&silu<float>`` and ``{lambda(int)#1}`` for ncu's
``[lambda(int) (instance 1)]``. Two names are one kernel when
their function names (no namespaces, no return type) are equal and, where both print template
arguments, those are equal once written one way (:func:`kernel_key`). Parameter lists are not compared:
ncu prints the template's own parameter types (``T2 *``), the C++ runtime the instantiated ones.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from roofline.kernels.arrays import encoded_text
from roofline.readers.ncu.layout import nvtx_column_kind
from roofline.readers.torch_ranges import DEFAULT_DOMAIN, Range, attribute

log = logging.getLogger(__name__)


def _demangler():
    try:
        import cxxfilt  # type: ignore[import-not-found]

        def one(name: str) -> str:
            try:
                return str(cxxfilt.demangle(name))
            except Exception:  # cxxfilt raises InvalidName for what it cannot read
                return name

        return lambda names: [one(n) for n in names]
    except Exception:  # ImportError, or its library lookup failing
        pass
    tool = shutil.which("c++filt")
    if tool is None:
        return None

    def batch(names: list[str]) -> list[str]:
        out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=60)
        lines = out.stdout.splitlines()
        return lines if out.returncode == 0 and len(lines) == len(names) else names

    return batch


def demangle_names(names: pd.Series) -> tuple[pd.Series, list[str]]:
    """Demangle the ``_Z...`` names of a string Series (distinct names only); returns names and warnings.

    Names of the ``string`` dtype none of which is mangled (what ncu prints by default) come back
    as they are, the very Series given (one Arrow scan, no copy)."""
    if names.dtype == pd.StringDtype() and not has_mangled(names.array):
        return names, []
    if isinstance(names.dtype, pd.CategoricalDtype):  # encoded: the distinct names demangled, still encoded
        texts, warnings = demangle_names(pd.Series(names.cat.categories.astype("string")))
        if not warnings and texts.equals(pd.Series(names.cat.categories.astype("string"))):
            return names, []
        return pd.Series(encoded_text(texts.to_numpy(dtype=object), names.cat.codes.to_numpy()),
                         index=names.index), warnings
    mangled = [n for n in pd.unique(names.dropna()) if isinstance(n, str) and n.startswith("_Z")]
    if not mangled:
        return names.astype("string"), []
    demangle = _demangler()
    if demangle is None:
        return names.astype("string"), [
            f"{len(mangled)} kernel names are mangled (e.g. {mangled[0][:60]}) and no demangler is available; "
            "install 'cxxfilt' or binutils' c++filt"
        ]
    mapping = dict(zip(mangled, demangle(mangled)))
    return names.astype("string").replace(mapping), []


def has_mangled(names: object) -> bool:
    """True when some name is mangled (``_Z...``): of a ``string`` array or Series (one Arrow scan),
    or of a NumPy object array of text and None. Other arrays: True (let :func:`demangle_names` look)."""
    if isinstance(names, np.ndarray) and names.dtype == object:
        return any(isinstance(n, str) and n.startswith("_Z") for n in set(names.tolist()))
    if getattr(names, "dtype", None) != pd.StringDtype():
        return True
    return bool(pc.any(pc.starts_with(pa.array(names), "_Z")).as_py())


#: A C-style cast before a number, as ncu 2024 prints template arguments: ``(unsigned int)8``, ``(bool)0``,
#: ``(cutlass::arch::OpClass)1``.
_CAST = re.compile(r"\([A-Za-z_][\w:]*(?: +[A-Za-z_][\w:]*)*\) ?(?=[-+]?\d)")
#: An integer literal's suffix, as the C++ runtime's demangler prints them (``8u``, ``1ul``).
_SUFFIX = re.compile(r"\b(\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)\b")
_BOOL = re.compile(r"\b(?:(true)|false)\b")
#: A function given as a template argument, as the C++ runtime writes it: ``&(float silu<float>(float const&))``.
_FUNCTION_ARGUMENT = re.compile(r"&\((?:[^()&]*\s)?([\w:]+(?:<[^()]*>)?)\([^()]*\)\)")
#: ncu's lambda, ``[lambda(int) (instance 1)]``, and the C++ runtime's, ``{lambda(int)#1}``.
_NCU_LAMBDA = re.compile(r"\[lambda\((.*?)\) \(instance (\d+)\)\]")
_NAMESPACES = re.compile(r"(?:\(anonymous namespace\)::|<unnamed>::|\b[A-Za-z_]\w*::)+")  # <unnamed>: nsys 2026
_SPACE = re.compile(r"\s+")
_SPACE_BESIDE_SIGN = re.compile(r" ?([^\w ]) ?")
_PAIRS = {")": "(", ">": "<", "]": "[", "}": "{"}


def _written_one_way(text: str) -> str:
    """A demangled name with what ncu versions and demanglers write differently written one way."""
    text = _FUNCTION_ARGUMENT.sub(r"&\1", text)
    text = _NCU_LAMBDA.sub(r"{lambda(\1)#\2}", text)
    text = _CAST.sub("", text)
    text = _SUFFIX.sub(r"\1", text)
    text = _BOOL.sub(lambda m: "1" if m.group(1) else "0", text)
    text = _NAMESPACES.sub("", text)
    return _SPACE_BESIDE_SIGN.sub(r"\1", _SPACE.sub(" ", text).strip())


def _opening(text: str, end: int) -> int | None:
    """Where the bracket group that closes at ``text[end]`` opens; None when unbalanced."""
    stack: list[str] = []
    for i in range(end, -1, -1):
        ch = text[i]
        if ch in _PAIRS:
            stack.append(_PAIRS[ch])
        elif ch in _PAIRS.values():
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i
    return None


def kernel_key(name: str) -> tuple[str, str | None]:
    """What tells a kernel's name from another's, whatever form it is printed in (module docstring):
    ``(function name, template arguments)``, both written one way, the arguments None where the name
    prints none (a plain C function, ``--print-kernel-base function``). A name this cannot take apart
    (unbalanced brackets) is its own key, written one way."""
    text = _written_one_way(name)
    if text.endswith(("const", "volatile")):  # a qualifier after a parameter list
        text = text.rsplit(" ", 1)[0] if " " in text else text
    if text.endswith(")"):
        start = _opening(text, len(text) - 1)
        if start is None:
            return text, None
        if start > 0:  # a function's parameter list, not a name in parentheses
            text = text[:start]
    arguments = None
    if text.endswith(">"):
        start = _opening(text, len(text) - 1)
        if start is None:
            return text, None
        text, arguments = text[:start], text[start + 1:-1]
    return text.rsplit(" ", 1)[-1], arguments


def same_kernel(a: str, b: str) -> bool:
    """Two printed names name one kernel: equal function names, and equal template arguments where
    both print them (:func:`kernel_key`)."""
    if a == b:
        return True
    (name_a, args_a), (name_b, args_b) = kernel_key(a), kernel_key(b)
    return name_a == name_b and (args_a is None or args_b is None or args_a == args_b)


def innermost_range(stack: str | None) -> str | None:
    """The innermost range of an NVTX push/pop stack written ``a/b/c`` or ``domain:a/b`` (outermost first)."""
    if stack is None or not isinstance(stack, str) or not stack.strip():
        return None
    text = stack.strip()
    if ":" in text.split("/")[0] and "::" not in text.split("/")[0]:
        text = text.split(":", 1)[1]
    parts = [p.strip() for p in text.split("/") if p.strip()]
    return parts[-1] if parts else None


#: Fields after a range's name: payload type and value, color type and value, message type and value.
_ATTRIBUTES = 6
_QUOTED = re.compile(r'"([^"]*)"')


def parse_nvtx_range(text: str, *, with_id: bool = False, with_domain: bool = True) -> tuple[str, str] | None:
    """``(domain, name)`` of one range as ncu writes it (``domain:name:6 attribute fields``; after an
    ``id:`` for start/end ranges); None when empty. The name keeps its own colons (``aten::mm``);
    a range whose name field is empty is named by its message."""
    fields = text.strip().split(":")
    if with_id and len(fields) > 1 and fields[0].strip().isdigit():
        fields = fields[1:]
    domain = fields.pop(0).strip() if with_domain and len(fields) > 1 else DEFAULT_DOMAIN
    if len(fields) > _ATTRIBUTES:
        name, attributes = ":".join(fields[:-_ATTRIBUTES]), fields[-_ATTRIBUTES:]
        if not name.strip() and attributes[-1].strip() not in ("", "none"):
            name = attributes[-1]
    else:
        name = ":".join(fields)
    name = name.strip()
    return (domain, name) if name else None


#: The attribute fields of a range with no payload, color or message: most ranges (parsed fast).
_NO_ATTRIBUTES = ":none" * _ATTRIBUTES


def _parse_part(part: str, kind: str, cache: dict[str, tuple[str, str] | None]) -> tuple[str, str] | None:
    hit = cache.get(part, ())
    if hit != ():
        return hit  # type: ignore[return-value]
    text = part.strip()
    if kind == "push_pop" and text.endswith(_NO_ATTRIBUTES):  # same result as parse_nvtx_range, 5x faster
        domain, sep, name = text[: -len(_NO_ATTRIBUTES)].partition(":")
        result = (domain.strip(), name.strip()) if sep and name.strip() else None
        if not sep and domain.strip():
            result = (DEFAULT_DOMAIN, domain.strip())
    else:
        result = parse_nvtx_range(text, with_id=kind == "start_end", with_domain=kind != "range")
    cache[part] = result
    return result


def nvtx_ranges(value: object, kind: str, cache: dict[str, tuple[str, str] | None] | None = None) -> list[tuple[str, str]]:
    """The ranges in one cell of an ncu NVTX column of ``kind`` (see :func:`nvtx_column_kind`),
    in the order written (outermost or oldest first). ``cache``: parsed ranges kept between calls."""
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    parts = _QUOTED.findall(text)
    if not parts:  # unquoted: one range, after the thread id of a push/pop stack
        if kind == "push_pop":
            head, _, rest = text.partition(" ")
            text = rest.strip() if head.isdigit() else text
            if not text or text.isdigit():
                return []
        parts = [text]
    cache = {} if cache is None else cache
    ranges = [_parse_part(p, kind, cache) for p in parts]
    return [r for r in ranges if r is not None]


#: Columns that hold a launch's push/pop stack, by precedence; start/end ranges are read apart.
_STACK_KINDS = ("push_pop", "range", "legacy")


def legacy_ranges(value: object) -> list[Range]:
    """The ranges of a legacy ``NVTX`` cell (``a/b`` or ``domain:a/b``, outermost first)."""
    if not isinstance(value, str) or not value.strip():
        return []
    text, domain = value.strip(), DEFAULT_DOMAIN
    head = text.split("/")[0]
    if ":" in head and "::" not in head:
        domain, text = (part.strip() for part in text.split(":", 1))
    return [(domain, p.strip()) for p in text.split("/") if p.strip()]


def _cell_ranges(value: object, kind: str, domain: object, cache: dict[str, tuple[str, str] | None]) -> list[Range]:
    if kind == "legacy":
        return legacy_ranges(value)
    ranges = nvtx_ranges(value, kind, cache)
    if kind == "range" and isinstance(domain, str) and domain.strip():
        ranges = [(domain.strip(), name) for _, name in ranges]
    return ranges


def _distinct(columns: list[pd.Series]) -> tuple[np.ndarray, list[int]]:
    """Codes of the distinct value combinations of ``columns`` (-1 where every value is missing)
    and the first row of each combination, in code order; per-column factorize, no tuples."""
    n = len(columns[0])
    combined = np.zeros(n, dtype=np.int64)
    empty = np.ones(n, dtype=bool)
    for col in columns:
        codes, uniques = pd.factorize(col.reset_index(drop=True), use_na_sentinel=True)
        empty &= codes < 0
        combined = pd.factorize(combined * (len(uniques) + 1) + (codes.astype(np.int64) + 1))[0].astype(np.int64)
    rows = np.flatnonzero(~empty)
    distinct = pd.factorize(combined[rows])[0].astype(np.int64)
    out = np.full(n, -1, dtype=np.int64)
    out[rows] = distinct
    firsts = rows[pd.Series(distinct).drop_duplicates().index.to_numpy()]  # codes are numbered in order seen
    return out, [int(r) for r in firsts]


def attribution_from_nvtx(columns: pd.DataFrame, *, process: pd.Series | None = None,
                          kernel_names: pd.Series | None = None) -> pd.DataFrame:
    """``phase``, ``module``, ``op`` and ``op_stack`` per launch from the NVTX columns of an ncu CSV
    (rules: :mod:`roofline.readers.torch_ranges`). The push/pop stack is the first non-empty one of
    the push/pop, ranges-beside-a-domain and legacy columns; start/end columns give start/end ranges.
    ``process``: process ids (the sequence-number join stays within a process); ``kernel_names``:
    for Triton kernels. Each distinct cell is parsed once."""
    frame = columns.reset_index(drop=True)
    kinds = {c: k for c in frame.columns if (k := nvtx_column_kind(str(c))) is not None}
    domain_cols = [c for c, k in kinds.items() if k == "domain"]
    domain = frame[domain_cols[0]].astype("string") if domain_cols else None
    stack_cols = sorted((c for c, k in kinds.items() if k in _STACK_KINDS), key=lambda c: _STACK_KINDS.index(kinds[c]))
    stack_values = [frame[c].astype("string").replace("", pd.NA) for c in stack_cols]
    keyed = stack_values + ([domain] if domain is not None and any(kinds[c] == "range" for c in stack_cols) else [])
    n = len(frame)
    stack_codes, stacks = np.full(n, -1, dtype=np.int64), []
    cache: dict[str, tuple[str, str] | None] = {}
    if stack_cols:
        stack_codes, firsts = _distinct(keyed)
        cells = [v.to_numpy(dtype=object, na_value=None)[firsts] for v in stack_values]
        domains = [None] * len(firsts) if domain is None else domain.to_numpy(dtype=object, na_value=None)[firsts]
        for i in range(len(firsts)):
            ranges: list[Range] = []
            for col, values in zip(stack_cols, cells):
                ranges = _cell_ranges(values[i], kinds[col], domains[i], cache)
                if ranges:
                    break
            stacks.append(ranges)
    se_cols = [c for c, k in kinds.items() if k == "start_end"]
    se_codes, start_ends = None, []
    if se_cols:
        se_values = frame[se_cols[0]].astype("string").replace("", pd.NA)
        se_codes, firsts = _distinct([se_values])
        se_cache: dict[str, tuple[str, str] | None] = {}
        start_ends = [nvtx_ranges(v, "start_end", se_cache) for v in se_values.to_numpy(dtype=object, na_value=None)[firsts]]
    return attribute(stack_codes, stacks, start_end_codes=se_codes, start_ends=start_ends,
                     process=process, kernel_names=kernel_names)


def phase_from_nvtx(columns: pd.DataFrame) -> pd.Series:
    """Phase per launch from the NVTX columns of an ncu CSV (see :func:`attribution_from_nvtx`)."""
    return attribution_from_nvtx(columns)["phase"].set_axis(columns.index)

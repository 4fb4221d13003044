"""Kernel names and NVTX ranges as profilers print them.

Demangling: Nsight Compute prints demangled names by default; a name still mangled
(``_Z...``, from ``--print-kernel-base mangled`` or a tool that kept it) is demangled
with the ``cxxfilt`` package (a ctypes binding to the C++ runtime's own
``abi::__cxa_demangle``) when it is installed, else with binutils' ``c++filt`` when
it is on PATH (one process for all names), else kept as is, with a warning.

NVTX: the phase of a launch is the INNERMOST push/pop range it ran in (the most
recently pushed), as :func:`roofline.phases.current_phase` defines it for the
counter-free mode, so both modes give a kernel the same phase. A launch with no
push/pop range takes the last start/end range (``roofline.torch.annotate`` opens
``backward`` as a start/end range, since autograd launches from its own threads).
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
in several domains, the default domain's innermost range is the phase; when it has none,
the innermost range of the last domain listed.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess

import pandas as pd

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
    """Demangle the ``_Z...`` names of a string Series (distinct names only); returns names and warnings."""
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


def innermost_range(stack: str | None) -> str | None:
    """The innermost range of an NVTX push/pop stack written ``a/b/c`` or ``domain:a/b`` (outermost first)."""
    if stack is None or not isinstance(stack, str) or not stack.strip():
        return None
    text = stack.strip()
    if ":" in text.split("/")[0] and "::" not in text.split("/")[0]:
        text = text.split(":", 1)[1]
    parts = [p.strip() for p in text.split("/") if p.strip()]
    return parts[-1] if parts else None


#: How ncu names the domain of ranges opened without one (the NULL domain of the NVTX API).
DEFAULT_DOMAIN = "<default domain>"
#: Fields after a range's name: payload type and value, color type and value, message type and value.
_ATTRIBUTES = 6
_QUOTED = re.compile(r'"([^"]*)"')


def nvtx_column_kind(column: str) -> str | None:
    """Which NVTX layout an ncu CSV column holds: ``push_pop``, ``start_end``, ``range`` (ranges
    without their domain), ``domain`` (the domain beside a ``range`` column), ``legacy`` (``NVTX...``
    columns holding ``a/b``), or None for a column that is not NVTX."""
    if "Push/Pop_Range" in column:
        return "push_pop"
    if "Start/Stop_Range" in column or "Start/End_Range" in column:
        return "start_end"
    if column.startswith("Range:PL_Type:"):
        return "range"
    if column == "Domain":
        return "domain"
    if column.lower().startswith("nvtx"):
        return "legacy"
    return None


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


def nvtx_ranges(value: object, kind: str) -> list[tuple[str, str]]:
    """The ranges in one cell of an ncu NVTX column of ``kind`` (see :func:`nvtx_column_kind`),
    in the order written (outermost or oldest first)."""
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
    ranges = [parse_nvtx_range(p, with_id=kind == "start_end", with_domain=kind != "range") for p in parts]
    return [r for r in ranges if r is not None]


def innermost_nvtx_range(value: object, kind: str, domain: str | None = None) -> str | None:
    """The phase a cell gives: the last range of the default domain, else the last range written.
    ``domain`` is the domain of a ``range`` column (from its ``Domain`` column)."""
    if kind == "legacy":
        return innermost_range(value if isinstance(value, str) else None)
    ranges = nvtx_ranges(value, kind)
    if domain is not None and kind == "range":
        ranges = [(domain, name) for _, name in ranges]
    if not ranges:
        return None
    default = [name for d, name in ranges if d == DEFAULT_DOMAIN]
    return default[-1] if default else ranges[-1][1]


#: Which NVTX columns give the phase first: push/pop stacks, then start/end ranges, then the rest.
_PRECEDENCE = {"push_pop": 0, "range": 1, "start_end": 2, "legacy": 3}


def phase_from_nvtx(columns: pd.DataFrame) -> pd.Series:
    """Phase per launch from the NVTX columns of an ncu CSV (see the module docstring): the
    innermost push/pop range, else the last start/end range, else a legacy ``NVTX`` column's."""
    result = pd.Series(pd.NA, index=columns.index, dtype="string")
    kinds = {c: k for c in columns.columns if (k := nvtx_column_kind(str(c))) is not None}
    domains = columns[[c for c, k in kinds.items() if k == "domain"]]
    domain = domains.iloc[:, 0].astype("string") if domains.shape[1] else None
    ordered = sorted((c for c, k in kinds.items() if k in _PRECEDENCE), key=lambda c: _PRECEDENCE[kinds[c]])
    for col in ordered:
        kind = kinds[col]
        values = columns[col].astype("string")
        if kind == "range" and domain is not None:
            keys = pd.Series(list(zip(values.fillna(""), domain.fillna(DEFAULT_DOMAIN))), index=values.index)
            mapping = {k: innermost_nvtx_range(k[0], kind, k[1]) for k in pd.unique(keys)}
            phase = keys.map(mapping).astype("string")
        else:
            uniques = pd.unique(values.dropna())  # distinct stacks only: a few per program
            phase = values.map({u: innermost_nvtx_range(u, kind) for u in uniques}).astype("string")
        result = result.fillna(phase)
    return result

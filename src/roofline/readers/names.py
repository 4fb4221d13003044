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
"""

from __future__ import annotations

import logging
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


def phase_from_nvtx(columns: pd.DataFrame) -> pd.Series:
    """Phase per launch from NVTX columns of an ncu CSV (first non-empty column wins)."""
    result = pd.Series(pd.NA, index=columns.index, dtype="string")
    for col in columns.columns:
        values = columns[col].astype("string")
        uniques = pd.unique(values.dropna())
        mapping = {u: innermost_range(u) for u in uniques}
        phase = values.map(mapping).astype("string")
        result = result.fillna(phase)
    return result

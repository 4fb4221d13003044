"""Whose GPU a kernel table comes from, and that vendor's words for what the views name.

The kernel table's ``compute_capability`` column tells the vendor: NVIDIA tables hold a compute
capability (``'9.0'``), AMD tables the gfx target (``'gfx90a'``, ``'gfx942'``). :func:`vendor_of`
reads one value, :func:`table_vendor` a table's. The model's keys stay the same across vendors
(``l1``, ``shared``, ``l2``, ``dram``; ``tensor_fp16``); only their display words differ, declared
here as data (:data:`NVIDIA_WORDS`, :data:`AMD_WORDS`, :func:`words_for`):

=================  ==========================  ====================================================
key / word         NVIDIA                      AMD Instinct (CDNA)
=================  ==========================  ====================================================
``l1``             L1                          vL1D (the vector L1 data cache, TCP)
``shared``         Shared                      LDS (local data share)
``l2``             L2                          L2 (TCC)
``dram``           DRAM                        HBM on gfx908/gfx90a; HBM+MALL (EA) on gfx94x/gfx950,
                                               whose traffic at the L2's EA interface includes
                                               Infinity Cache (MALL) hits
compute unit       SM                          CU
thread group       warp of 32                  wavefront of 64
matrix unit        Tensor (tensor cores)       Matrix (MFMA: matrix cores)
clock              SM clock                    engine clock
=================  ==========================  ====================================================

A table of unknown vendor (no ``compute_capability``, or NVIDIA and AMD rows mixed) reads in
NVIDIA's words, as every table did before AMD was read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np
import pandas as pd

NVIDIA = "nvidia"
AMD = "amd"
#: The vendors :func:`vendor_of` tells apart.
VENDORS = (NVIDIA, AMD)

#: An AMD gfx target: 'gfx90a', 'gfx942', 'gfx950', 'gfx908', 'gfx1100' (any feature suffix after ':').
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")
#: An NVIDIA compute capability: '9.0', '10.3', 'sm_90', 'sm90a'.
_CC = re.compile(r"^(\d{1,2}\.\d{1,2}|sm_?\d{2,3}[a-z]?)$")


def vendor_of(arch: str | None) -> str | None:
    """``"amd"`` for a gfx target (``'gfx90a'``, ``'gfx942'``, ``'gfx942:sramecc+:xnack-'``), ``"nvidia"``
    for a compute capability (``'9.0'``, ``'sm_90'``), None for None, '' or anything else."""
    if arch is None:
        return None
    text = str(arch).strip().lower().split(":", 1)[0]
    if _GFX.match(text):
        return AMD
    if _CC.match(text):
        return NVIDIA
    return None


def _arches(frame: pd.DataFrame) -> list[str]:
    """The distinct non-empty values of the table's ``compute_capability`` (none when it has no such column)."""
    if "compute_capability" not in frame.columns:
        return []
    column = frame["compute_capability"]
    if isinstance(column.dtype, pd.CategoricalDtype):  # a table of launches: the categories its codes use
        codes = np.asarray(column.cat.codes)
        used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(column.cat.categories)))
        values = column.cat.categories[used]
    else:
        values = column.dropna().unique()  # distinct first: a table may hold 1e6 launches
    return sorted({str(v).strip() for v in values if str(v).strip()})


def vendor_and_arch(frame: pd.DataFrame) -> tuple[str | None, str | None]:
    """:func:`table_vendor` and :func:`table_arch` of ``frame``, its architectures read once."""
    arches = _arches(frame)
    vendors = {vendor_of(a) for a in arches}
    stripped = {a.lower().split(":", 1)[0] for a in arches}
    vendor = vendors.pop() if len(vendors) == 1 and None not in vendors else None
    return vendor, (stripped.pop() if len(stripped) == 1 else None)


def table_vendor(frame: pd.DataFrame) -> str | None:
    """The one vendor of a kernel table's ``compute_capability`` column; None when the table has none,
    when a value is not recognised, or when NVIDIA and AMD rows are mixed."""
    vendors = {vendor_of(a) for a in _arches(frame)}
    return vendors.pop() if len(vendors) == 1 and None not in vendors else None


def table_arch(frame: pd.DataFrame) -> str | None:
    """The one architecture of a kernel table (``'gfx942'``, ``'9.0'``), without a gfx feature suffix;
    None when the table has none, or several."""
    arches = {a.lower().split(":", 1)[0] for a in _arches(frame)}
    return arches.pop() if len(arches) == 1 else None


@dataclass(frozen=True)
class VendorWords:
    """One vendor's words for what the views name.

    ``levels``: display names of the memory levels by key; ``compute_unit`` and ``compute_units``:
    ``SM``/``SMs`` or ``CU``/``CUs``; ``thread_group`` and ``thread_group_size``: ``warp`` of 32 or
    ``wavefront`` of 64; ``matrix``: the prefix of a matrix-unit compute ceiling ('Tensor FP16',
    'Matrix FP16'); ``matrix_units``: those units in a sentence ('tensor cores', 'matrix cores (MFMA)');
    ``precisions``: display names of precisions where the vendor's differ from the key's upper case
    (AMD's TF32-like XF32); ``clock``: the clock the ceilings scale with ('SM clock', 'engine clock');
    ``ranges``: the annotation ranges that mark phases ('NVTX', 'ROCTx'); ``profiler``: the counter
    profiler a hint names ('ncu', 'rocprof').
    """

    vendor: str | None
    levels: Mapping[str, str]
    compute_unit: str
    compute_units: str
    thread_group: str
    thread_group_size: int
    matrix: str
    matrix_units: str
    clock: str
    ranges: str
    profiler: str
    precisions: Mapping[str, str] = field(default_factory=dict)
    #: Why work counts can be lower bounds, as a legend says it.
    lower_bound_why: str = "a counter is missing"

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", MappingProxyType(dict(self.levels)))
        object.__setattr__(self, "precisions", MappingProxyType(dict(self.precisions)))

    def level(self, key: str) -> str:
        """The display name of a memory level ('vL1D' for ``l1`` on AMD); an unknown key in upper case."""
        return self.levels.get(key, key.upper())

    def precision(self, key: str) -> str:
        """The display name of a precision ('FP16'; 'XF32' for ``tf32`` on AMD)."""
        return self.precisions.get(key, key.upper())

    def compute(self, key: str) -> str:
        """A compute key in these words: 'tensor_fp16' -> 'Tensor FP16' or 'Matrix FP16', 'fp64' -> 'FP64'
        (the charts' fuller names, variants and all: :func:`roofline.views.chart.style.compute_label`)."""
        if key.startswith("tensor_"):
            return f"{self.matrix} {self.precision(key[len('tensor_'):])}"
        return self.precision(key)

    @property
    def is_amd(self) -> bool:
        return self.vendor == AMD


#: NVIDIA's words (and those of a table of unknown vendor).
NVIDIA_WORDS = VendorWords(
    vendor=NVIDIA,
    levels={"l1": "L1", "shared": "Shared", "l2": "L2", "l3": "L3", "dram": "DRAM"},
    compute_unit="SM", compute_units="SMs", thread_group="warp", thread_group_size=32,
    matrix="Tensor", matrix_units="tensor cores", clock="SM clock", ranges="NVTX", profiler="ncu",
)

#: The ``dram`` level's name per AMD architecture: what the L2's EA (external) interface traffic is.
#: MI300 (gfx94x) and MI350 (gfx950) put the Infinity Cache (MALL) behind it, so its hits are in it.
AMD_DRAM_LABELS: Mapping[str, str] = MappingProxyType({
    "gfx908": "HBM", "gfx90a": "HBM",
    "gfx940": "HBM+MALL (EA)", "gfx941": "HBM+MALL (EA)", "gfx942": "HBM+MALL (EA)", "gfx950": "HBM+MALL (EA)",
})
#: The ``dram`` name when the AMD architecture is not known (several in one table, or none named).
AMD_DRAM_UNKNOWN = "HBM (EA)"

#: AMD's words on an architecture whose ``dram`` is HBM+MALL (:func:`words_for` picks the ``dram`` name).
AMD_WORDS = VendorWords(
    vendor=AMD,
    levels={"l1": "vL1D", "shared": "LDS", "l2": "L2", "l3": "L3", "dram": AMD_DRAM_UNKNOWN},
    compute_unit="CU", compute_units="CUs", thread_group="wavefront", thread_group_size=64,
    matrix="Matrix", matrix_units="matrix cores (MFMA)", clock="engine clock", ranges="ROCTx", profiler="rocprof",
    precisions={"tf32": "XF32"},
    lower_bound_why="a counter is missing, or packed instructions count once",
)


#: ``bound`` values that name no ceiling.
NOT_CEILINGS = frozenset({"mixed", "unknown", "?", "-"})


def bound_words(bound: str, words: VendorWords) -> str:
    """A row's ``bound`` (a level or compute key) in sentences: NVIDIA's keys as they are ('dram',
    'tensor_fp16'), as every view has shown them; AMD's in its words ('HBM+MALL (EA)', 'Matrix FP16')."""
    if not words.is_amd or bound in NOT_CEILINGS:
        return bound
    return words.level(bound) if bound in words.levels else words.compute(bound)


def words_for(vendor: str | None, arch: str | None = None) -> VendorWords:
    """The words of ``vendor`` (NVIDIA's for None); for AMD the ``dram`` name of ``arch`` (a gfx target)."""
    if vendor != AMD:
        return NVIDIA_WORDS
    dram = AMD_DRAM_LABELS.get(str(arch).lower().split(":", 1)[0], AMD_DRAM_UNKNOWN) if arch else AMD_DRAM_UNKNOWN
    if dram == AMD_WORDS.levels["dram"]:
        return AMD_WORDS
    return replace(AMD_WORDS, levels={**AMD_WORDS.levels, "dram": dram})


#: Metadata keys of a machine (:class:`roofline.machine.model.Machine`) that may name its architecture.
ARCH_KEYS = ("vendor", "gfx_arch", "gfx", "arch", "gpu_arch", "architecture", "compute_capability")
#: Architecture family names, for machines whose metadata names the family, not the target.
_FAMILIES = ((re.compile(r"^(cdna|rdna|gcn)", re.I), AMD),
             (re.compile(r"^(volta|turing|ampere|ada|hopper|blackwell)", re.I), NVIDIA))
#: Product names, for a machine with no architecture in its metadata ('AMD Instinct MI300X', 'H100-SXM'):
#: a name's words are its runs of letters and digits ('mi300x_a1' holds 'mi300x').
_PRODUCTS = ((re.compile(r"(?<![a-z0-9])(amd|instinct|radeon|mi\d{3}[a-z]?)(?![a-z0-9])", re.I), AMD),
             (re.compile(r"(?<![a-z0-9])(nvidia|tesla|geforce|quadro|rtx|[abhlvt]\d{1,3}[a-z]?|g[hb]\d{3}|b\d{3})"
                         r"(?![a-z0-9])", re.I), NVIDIA))
#: The gfx target of each AMD Instinct product, for a machine named by its product only.
AMD_PRODUCT_ARCH = ((re.compile(r"mi100", re.I), "gfx908"), (re.compile(r"mi2[15]0", re.I), "gfx90a"),
                    (re.compile(r"mi3[02][05]", re.I), "gfx942"), (re.compile(r"mi35[05]", re.I), "gfx950"))


def machine_vendor(name: str, metadata: Mapping[str, object] | None = None) -> tuple[str | None, str | None]:
    """(vendor, gfx target or compute capability) of a machine from its metadata (``vendor``, a gfx target,
    a compute capability, an architecture family such as 'CDNA3' or 'Hopper'), else from its ``name``
    ('MI300X', 'H100-SXM'); (None, None) when neither tells."""
    meta = metadata or {}
    if meta.get("vendor") in VENDORS:
        named = str(meta["vendor"])
        arch = next((str(meta[k]) for k in ARCH_KEYS[1:] if vendor_of(str(meta.get(k, ""))) == named), None)
        return named, arch
    for key in ARCH_KEYS[1:]:
        value = meta.get(key)
        if not isinstance(value, str):
            continue
        if (told := vendor_of(value)) is not None:
            return told, value.strip().lower().split(":", 1)[0]
        for pattern, family in _FAMILIES:
            if pattern.match(value.strip()):
                return family, None
    for pattern, product in _PRODUCTS:
        if pattern.search(name or ""):
            arch = next((a for p, a in AMD_PRODUCT_ARCH if p.search(name)), None) if product == AMD else None
            return product, arch
    return None, None


def table_words(frame: pd.DataFrame) -> VendorWords:
    """The words of a kernel table's vendor (:func:`table_vendor`) and architecture."""
    return words_for(table_vendor(frame), table_arch(frame))

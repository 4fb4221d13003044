"""The ceilings' vocabulary: the memory levels and compute keys a :class:`~roofline.machine.model.Machine`
names, their aliases and units, the bytes per transaction at each GPU level, which ceilings scale with
the SM clock, and how a ceiling's key is read ('memory.dram', 'fp64_scalar_fma').

Memory ceilings are in B/s; compute ceilings in FLOP/s, OP/s or warp instructions/s (:func:`compute_unit`).
"""

from __future__ import annotations

#: Where a machine's numbers come from.
SOURCES = ("measured", "theoretical", "from-profile")

#: Memory levels we know, innermost first. Other names are kept (ordered after these). ``shared`` is
#: a GPU's shared memory (the SM's scratchpad, in the same SRAM as its L1; AMD's LDS, Intel's SLM).
MEMORY_LEVELS = ("l1", "shared", "l2", "l3", "dram")
#: Aliases accepted on input and mapped to our level names.
MEMORY_ALIASES = {"hbm": "dram", "mem": "dram", "memory": "dram", "gmem": "dram", "llc": "l3",
                  "smem": "shared", "shmem": "shared", "lds": "shared", "slm": "shared"}

#: Compute ceilings we know. Tensor keys name the input type (matrix units: NVIDIA's tensor cores, AMD's
#: MFMA matrix cores; ``tensor_fp32`` is AMD's FP32 matrix path, ``tensor_tf32`` also MI300's XF32). FLOP/s but for: ``tensor_int8``,
#: ``int32`` (integer thread instructions), ``conversion`` and ``sfu`` (special-function unit) in OP/s,
#: and ``warp_inst`` (warp instructions issued, the instruction roofline's peak) in warp instructions/s.
COMPUTE_KEYS = (
    "fp64", "fp32", "fp16", "bf16",
    "tensor_fp64", "tensor_fp32", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_fp4", "tensor_int8",
    "int32", "conversion", "sfu", "warp_inst",
)
#: Compute keys whose ceilings count floating-point operations (the FLOP roofline's).
FLOP_KEYS = tuple(k for k in COMPUTE_KEYS if k not in ("tensor_int8", "int32", "conversion", "sfu", "warp_inst"))
#: Compute keys of the operations roofline (FLOPs and the other operations).
OP_KEYS = tuple(k for k in COMPUTE_KEYS if k != "warp_inst")
#: Compute keys of the instruction roofline.
INSTRUCTION_KEYS = ("warp_inst",)
#: Variant compute keys: ``<key>_<variant>`` (e.g. ``fp64_scalar_fma``, ``fp64_vector``, ``fp64_no_fma``) hold
#: further ceilings of one precision that a machine file names, such as ERT's scalar, vector and no-FMA
#: entries. The analysis holds kernels to the key itself (``fp64``); charts draw the variants with
#: ``ceilings="all"``. :func:`base_compute_key` and :func:`compute_variant` split a key.

#: Bytes per transaction at each GPU memory level (the instruction roofline's traffic unit): a 32-byte
#: sector at L1, L2 and DRAM; a 128-byte wavefront (32 banks x 4 B) in shared memory.
TRANSACTION_BYTES = {"l1": 32.0, "shared": 128.0, "l2": 32.0, "dram": 32.0}

#: Which ceilings scale with the SM (core) clock. DRAM bandwidth does not.
CLOCK_SCALED_MEMORY = ("l1", "shared", "l2", "l3")


def compute_unit(key: str) -> str:
    """The unit of a compute ceiling: 'FLOP/s', 'OP/s' (integer, conversion, SFU work) or 'inst/s' (warp instructions)."""
    if key == "warp_inst":
        return "inst/s"
    return "OP/s" if key in ("tensor_int8", "int32", "conversion", "sfu") or key.endswith("int8") else "FLOP/s"


def base_compute_key(key: str) -> str:
    """The compute key a variant key belongs to: 'fp64_scalar_fma' -> 'fp64', 'fp64_no_fma' -> 'fp64';
    a key we know, or any other, is its own ('tensor_fp16' -> 'tensor_fp16', 'xyz' -> 'xyz')."""
    key = key.lower()
    bases = [k for k in COMPUTE_KEYS if key.startswith(k + "_")]
    return max(bases, key=len) if bases and key not in COMPUTE_KEYS else key


def compute_variant(key: str) -> str:
    """The variant part of a compute key: 'fp64_scalar_fma' -> 'scalar_fma'; '' for a key we know ('fp64')."""
    base = base_compute_key(key)
    return key.lower()[len(base) + 1:] if len(key) > len(base) else ""


def variant_words(variant: str) -> str:
    """A variant in words: 'scalar_fma' -> 'scalar FMA', 'no_fma' -> 'no-FMA', 'vector' -> 'vector'."""
    text = variant.replace("no_fma", "no-FMA")
    return " ".join("FMA" if w == "fma" else w for w in text.split("_") if w)


def ceiling_id(key: str) -> tuple[str, str]:
    """('memory', 'dram') for 'memory.dram', 'dram' or 'hbm'; ('compute', 'fp32') for 'compute.fp32' or 'fp32'.

    A bare key is a memory level when it is one we know or an alias of one, else a compute key.
    """
    kind, dot, name = key.partition(".")
    if dot and kind in ("memory", "compute"):
        name = name.lower()
        return kind, (MEMORY_ALIASES.get(name, name) if kind == "memory" else name)
    name = key.lower()
    name = MEMORY_ALIASES.get(name, name)
    if name in MEMORY_LEVELS or (name not in COMPUTE_KEYS and name.startswith("l") and name[1:].isdigit()):
        return "memory", name
    return "compute", name


def level_order(names: list[str] | tuple[str, ...]) -> list[str]:
    """Order memory level names innermost first (known levels, then others alphabetically)."""
    known = [n for n in MEMORY_LEVELS if n in names]
    return known + sorted(n for n in names if n not in MEMORY_LEVELS)

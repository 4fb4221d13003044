"""Options shared by several commands, and the checks on their values.

Numbers are checked by typer (``min=``/``max=``) and, for floats, by :func:`finite`,
since a range check lets NaN through (every comparison with NaN is false).
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated, Optional

import typer


class Ceilings(str, Enum):
    used = "used"
    all = "all"


class Sort(str, Enum):
    time = "time"
    savable = "savable"
    flops = "flops"
    work = "work"
    ai = "ai"


class Fp16(str, Enum):
    ncu = "ncu"
    paper = "paper"


class By(str, Enum):
    name = "name"
    launch = "launch"
    phase = "phase"
    op = "op"
    module = "module"


#: Help of --by, --depth and --parquet (`roofline analyze` and `roofline profile`).
BY_HELP = ("One row per kernel name, per launch, per phase and name, per PyTorch operator and phase (op), "
           "or per module path (module; see --depth).")
DEPTH_HELP = "With --by module: cut module paths to this many components (Model.encoder.layers at 2 is Model.encoder)."
PARQUET_HELP = ("Write the per-launch kernel table, with the raw metrics, as Parquet (schema "
                "roofline.kernels/1 as for .kernels.json, units in its metadata; docs/parquet.md); roofline analyze reads it back.")


class Work(str, Enum):
    flops = "flops"
    ops = "ops"
    instructions = "instructions"


def finite(value: Optional[float]) -> Optional[float]:
    """Refuse NaN and infinities (typer's range check lets NaN through)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No notes, warnings or 'wrote FILE' lines on stderr; results and errors only.")]
CeilingsOpt = Annotated[Ceilings, typer.Option("--ceilings", help="Chart ceilings: 'used' (the precisions the kernels use, plus the highest) or 'all' (every one, an ERT file's scalar, vector and no-FMA entries too).")]
SortOpt = Annotated[Sort, typer.Option("--sort", help="Order of the table: time, savable (time above the roofline), flops, work (the --work counted: FLOPs, OPs or warp instructions), or ai (DRAM intensity, else the outermost level measured); largest first.")]
WorkOpt = Annotated[Work, typer.Option("--work", help="What the roofline counts: flops (floating-point operations), ops (FLOPs plus integer, conversion and integer tensor operations), or instructions (the instruction roofline: warp instructions per second against warp instructions per transaction at each level, with the memory-pattern walls).")]
FilterOpt = Annotated[Optional[str], typer.Option("--filter", help="Only kernels whose name matches this regular expression (re.search).")]
NvtxOpt = Annotated[Optional[str], typer.Option("--nvtx", help="Only kernels in this NVTX range (phase): its name, else a regular expression.")]
AllowOtherMachineOpt = Annotated[bool, typer.Option("--allow-other-machine", help="Apply a CPU's ceilings to a GPU profile, or a GPU's to a CPU profile (refused by default: such ceilings do not hold the kernels).")]
#: The machine argument's help: what it takes, shared by the commands that take one.
MACHINE_HELP = ("Ceilings: our machine JSON, an ERT roofline.json/sum file, a GPU spec name (roofline machine "
                "--list-specs), or 'profile' (the profile's own peak metrics). An ERT file with several compute entries per precision gives the highest (FMA "
                "vector) one; FILE#ENTRY picks another, e.g. 'roofline.json#FP64 Scalar GFLOPs'.")
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite existing output files (never an input).")]
ByOpt = Annotated[By, typer.Option(help=BY_HELP)]
DepthOpt = Annotated[Optional[int], typer.Option(min=1, help=DEPTH_HELP)]
#: --fp16 where the convention is said in full (`roofline analyze`), and where it is named only.
Fp16Opt = Annotated[Fp16, typer.Option(help="FP16 FLOP convention: ncu (2 hadd + 2 hmul + 4 hfma, paired half instructions) or paper (hadd + hmul + 2 hfma).")]
Fp16NamedOpt = Annotated[Fp16, typer.Option(help="FP16 FLOP convention: ncu or paper.")]

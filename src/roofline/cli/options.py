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

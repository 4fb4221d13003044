"""Options shared by several commands, and the checks on their values.

The CLI is built with click. An option shared by several commands is declared once here as a
decorator (``@quiet_option``); its value reaches the command as the keyword of the same name.
Choices are enums (``click.Choice(By)`` gives the command a ``By`` member). Numbers are checked
by click's ranges (``click.IntRange(min=1)``) and, for floats, by :func:`finite`, since a range
check lets NaN through (every comparison with NaN is false).
"""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

if TYPE_CHECKING:
    from roofline.api import ReadAhead


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


class Work(str, Enum):
    flops = "flops"
    ops = "ops"
    instructions = "instructions"


#: Help of --by, --depth and --parquet (`roofline analyze` and `roofline profile`).
BY_HELP = ("One row per kernel name, per launch, per phase and name, per PyTorch operator and phase (op), "
           "or per module path (module; see --depth).")
DEPTH_HELP = "With --by module: cut module paths to this many components (Model.encoder.layers at 2 is Model.encoder)."
PARQUET_HELP = ("Write the per-launch kernel table, with the raw metrics, as Parquet (schema "
                "roofline.kernels/1 as for .kernels.json, units in its metadata; docs/parquet.md); roofline analyze reads it back.")
#: The machine argument's help: what it takes, shared by the commands that take one.
MACHINE_HELP = ("Ceilings: our machine JSON, an ERT roofline.json/sum file, a GPU spec name (roofline machine "
                "--list-specs), or 'profile' (the profile's own peak metrics). An ERT file with several compute entries per precision gives the highest (FMA "
                "vector) one; FILE#ENTRY picks another, e.g. 'roofline.json#FP64 Scalar GFLOPs'.")


def finite(ctx: Optional[click.Context], param: Optional[click.Parameter], value: Optional[float]) -> Optional[float]:
    """An option's callback: refuse NaN and infinities (a range check lets NaN through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number", ctx=ctx, param=param)
    return value


#: A file or folder name, given to the command as a Path and checked there (``-``: standard input or output).
PATH = click.Path(path_type=Path)


quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="No notes, warnings or 'wrote FILE' lines on stderr; results and errors only.")
ceilings_option = click.option("--ceilings", type=click.Choice(Ceilings), default=Ceilings.used, help=(
    "Chart ceilings: 'used' (the precisions the kernels use, plus the highest) or 'all' (every one, an ERT "
    "file's scalar, vector and no-FMA entries too)."))
sort_option = click.option("--sort", type=click.Choice(Sort), default=Sort.time, help=(
    "Order of the table: time, savable (time above the roofline), flops, work (the --work counted: FLOPs, OPs or "
    "warp instructions), or ai (DRAM intensity, else the outermost level measured); largest first."))
work_option = click.option("--work", type=click.Choice(Work), default=Work.flops, help=(
    "What the roofline counts: flops (floating-point operations), ops (FLOPs plus integer, conversion and "
    "integer tensor operations), or instructions (the instruction roofline: warp instructions per second "
    "against warp instructions per transaction at each level, with the memory-pattern walls)."))
filter_option = click.option("--filter", "kernel_filter",
                             help="Only kernels whose name matches this regular expression (re.search).")
nvtx_option = click.option("--nvtx", help="Only kernels in this NVTX range (phase): its name, else a regular expression.")
allow_other_machine_option = click.option("--allow-other-machine", is_flag=True, help=(
    "Apply a CPU's ceilings to a GPU profile, or a GPU's to a CPU profile (refused by default: such ceilings "
    "do not hold the kernels)."))
force_option = click.option("--force", is_flag=True, help="Overwrite existing output files (never an input).")
by_option = click.option("--by", type=click.Choice(By), default=By.name, help=BY_HELP)
depth_option = click.option("--depth", type=click.IntRange(min=1), help=DEPTH_HELP)
#: --fp16 where the convention is said in full (`roofline analyze`), and where it is named only.
fp16_option = click.option("--fp16", type=click.Choice(Fp16), default=Fp16.ncu, help=(
    "FP16 FLOP convention: ncu (2 hadd + 2 hmul + 4 hfma, paired half instructions) or paper (hadd + hmul + 2 hfma)."))
fp16_named_option = click.option("--fp16", type=click.Choice(Fp16), default=Fp16.ncu, help="FP16 FLOP convention: ncu or paper.")


#: The key under which the root context keeps the parse started before the commands loaded
#: (click's ``Context.meta``, shared by every context of a run): :mod:`roofline.cli.entry`.
READ_AHEAD = "roofline.read_ahead"


def read_ahead_of(ctx: click.Context) -> ReadAhead | None:
    """The parse :func:`roofline.cli.entry.run` started for this run, if any."""
    return ctx.meta.get(READ_AHEAD)

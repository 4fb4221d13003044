"""Everything ``roofline profile`` is told, as one frozen dataclass passed whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: ncu's --clock-control values: 'none' runs at the clocks the program would get
#: (our default, so times and ceilings match production runs), 'base' locks base clocks
#: (ncu's own default), 'reset' resets locked clocks and exits.
CLOCK_CONTROLS = ("none", "base", "reset")


@dataclass(frozen=True)
class ProfileSettings:
    """How to profile one command.

    - ``command``: the program and its arguments, run as a list (never through a shell).
    - ``output``: prefix of the files written: ``<output>.ncu-rep``, ``<output>.ncu.csv``
      (ncu's raw page), ``<output>.kernels.json`` (our kernel table); under a parallel
      launcher ``<output>.rank<N>.*``.
    - ``arch``: compute capability to choose the metric set ('9.0'), or an AMD GPU's gfx target
      ('gfx942'); None detects it.
    - ``metrics``: metrics to collect instead of the architecture's set.
    - ``clock_control``: ncu ``--clock-control`` (default 'none').
    - ``kernel_name``, ``launch_skip``, ``launch_count``, ``nvtx_include``: ncu's kernel
      filters, passed through (``nvtx_include`` may repeat).
    - ``counters``: False runs the counter-free mode (PyTorch programs) instead of ncu.
    - ``fallback``: after a permission error from ncu, rerun in counter-free mode.
    - ``ncu``: the ncu executable (name on PATH or a path).
    - ``rocprofv3``: the rocprofv3 executable, for an AMD GPU (chosen when ``arch`` is a gfx target,
      or when no NVIDIA GPU or ncu is found and an AMD GPU is: :mod:`roofline.profiling.rocprof_runner`);
      its outputs go to ``<output>.rocprofv3/``.
    - ``force``: overwrite existing outputs.
    - ``rank``: the process's rank in a parallel job, None outside one.
    - ``fp16``: FP16 FLOP convention for the kernel table ('ncu' or 'paper').
    - ``torch``: attribute every kernel of a PyTorch program to its operator, module and phase
      (``roofline profile --torch``): module hooks, ``emit_nvtx`` operator ranges and phase
      inference in each Python process of the command, with no change to its code.
    - ``estimate``: with ``torch`` under Nsight Compute, also record the counter-free estimate
      of every operator in the same run (``PREFIX.estimate.kernels.json``), to set beside the
      measured values.
    - ``timeline``: run the program under Nsight Systems too and count only a sample of it
      (:mod:`roofline.profiling.timeline_run`); ``nsys``: its executable; ``sample``: the sample,
      ``NAME[:N]`` (the N-th occurrence of an NVTX range, default the second) or ``all``, None for
      the second occurrence of the outermost repeated range; ``osrt``: trace OS runtime calls too;
      ``importer``: the QdstrmImporter for a target-only nsys's capture (None: found beside nsys, in
      Nsight Compute's folders or on PATH).
    """

    command: tuple[str, ...]
    output: Path = Path("roofline-profile")
    arch: str | None = None
    metrics: tuple[str, ...] | None = None
    clock_control: str = "none"
    kernel_name: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    nvtx_include: tuple[str, ...] = ()
    counters: bool = True
    fallback: bool = True
    ncu: str = "ncu"
    rocprofv3: str = "rocprofv3"
    force: bool = False
    rank: int | None = None
    fp16: str = "ncu"
    torch: bool = False
    estimate: bool = True
    extra_env: tuple[tuple[str, str], ...] = field(default=())
    timeline: bool = False
    nsys: str = "nsys"
    sample: str | None = None
    osrt: bool = False
    importer: str | None = None

    def __post_init__(self) -> None:
        from roofline.errors import InputError

        if not self.command:
            raise InputError("no command to profile", hint="write it after --: roofline profile -- python train.py")
        if self.clock_control not in CLOCK_CONTROLS:
            raise InputError(f"--clock-control must be one of {', '.join(CLOCK_CONTROLS)}, not {self.clock_control!r}")
        if self.timeline and not self.counters:
            raise InputError("--timeline counts a sample with Nsight Compute: it cannot be run with --no-counters")
        if self.sample is not None and not self.timeline:
            raise InputError("--sample chooses what --timeline counts", hint="add --timeline")
        if self.importer is not None and not self.timeline:
            raise InputError("--qdstrm-importer imports the capture of --timeline's nsys run", hint="add --timeline")
        if self.sample is not None and (self.launch_skip is not None or self.launch_count is not None):
            raise InputError("--sample and --launch-skip/--launch-count both choose the launches to count",
                             hint="give one of them")
        for name in ("launch_skip", "launch_count"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InputError(f"--{name.replace('_', '-')} must not be negative")

    def path(self, suffix: str) -> Path:
        """An output path: the prefix, the rank when there is one, then ``suffix``."""
        from roofline.profiling.ranks import ranked

        base = ranked(self.output, self.rank)
        return base.with_name(base.name + suffix)

"""Ranks of parallel launchers, and per-rank output names.

Under ``torchrun``, ``mpirun``/``mpiexec`` (Open MPI, MPICH, Intel MPI) or ``srun``,
every process of the job runs its own ``roofline profile`` (or its own counter-free
recorder) and names its outputs after its rank: ``run.rank3.ncu-rep``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

#: Environment variables that carry the global rank, most specific first.
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK")
#: ... and the number of ranks.
SIZE_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS")


def rank_from_env(env: Mapping[str, str]) -> int | None:
    """The process's rank from the launcher's environment, or None outside a parallel launch.

    ``LOCAL_RANK`` (rank within a node) is used only when no global rank is set.
    A job of one process (``SLURM_NTASKS=1``...) has no rank.
    """
    for name in SIZE_VARIABLES:
        value = env.get(name, "").strip()
        if value.isdigit() and int(value) == 1:
            return None
    for name in RANK_VARIABLES:
        value = env.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def ranked(prefix: str | Path, rank: int | None) -> Path:
    """``prefix`` with ``.rank<N>`` appended when there is a rank: ``run`` -> ``run.rank3``."""
    p = Path(prefix)
    return p if rank is None else p.with_name(f"{p.name}.rank{rank}")

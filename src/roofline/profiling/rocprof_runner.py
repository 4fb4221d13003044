"""``roofline profile`` on an AMD GPU: rocprofv3, one run of the program per counter pass.

Not yet run on AMD hardware: built against rocprofv3's documented command line and outputs and
tested with a stand-in that writes recorded MI300X outputs (tests/profiling/fake_rocprofv3.py).

1. The GPU: :func:`amd_gpu_present` (``/sys/class/kfd/kfd/topology/nodes/*/properties`` with a non-zero
   ``gfx_target_version``, or ``amd-smi`` / ``rocm-smi`` on PATH); :func:`wants_amd` chooses AMD only
   where no NVIDIA GPU or Nsight Compute is found (or ``--arch`` names a gfx target), so that an NVIDIA
   machine profiles as before.
2. The counters: ``rocprofv3 --list-avail`` (:func:`listed_counters`); the formula table's passes
   (:func:`roofline.counting.amd.required_counters`) keep the counters this GPU lists, packed again into
   the fewest passes (:func:`counter_passes`).
3. The runs: first the program traced without counters (``--kernel-trace``: the dispatch times), then
   one ``rocprofv3 --pmc ...`` per pass, each into its own folder under ``PREFIX.rocprofv3/``
   (``trace/``, ``pass_1/``...), CSV output; read back as one table by
   :func:`roofline.readers.amd.rocprof_outputs.read_rocprof` (passes merged by dispatch).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.counting.amd import PASS_LIMITS, required_counters
from roofline.errors import InputError, ToolNotFoundError
from roofline.profiling.ncu_runner import run_streaming
from roofline.profiling.settings import ProfileSettings
from roofline.readers.amd.rocprofv3 import gfx_name

log = logging.getLogger(__name__)

#: Where the Linux kernel's KFD driver lists the GPU nodes (one ``properties`` file each).
KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
ROCPROF_INSTALL_HINT = ("install ROCm's rocprofv3 (ROCm 6.2 or later: /opt/rocm/bin/rocprofv3, package "
                        "rocprofiler-sdk) and put it on PATH, or pass --rocprofv3 PATH")
#: The name rocprofv3 gives its files under each run's folder (``-o``).
OUTPUT_NAME = "run"
TRACE_FOLDER = "trace"


def kfd_gfx_targets(nodes: Path | None = None) -> list[str]:
    """The gfx targets of the GPU nodes KFD lists (``gfx_target_version 90402`` -> gfx942), in node order."""
    root = KFD_NODES if nodes is None else nodes
    found = []
    try:
        props = sorted(root.glob("*/properties"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    except OSError:
        return []
    for prop in props:
        try:
            text = prop.read_text()
        except OSError:
            continue
        m = re.search(r"^gfx_target_version\s+(\d+)", text, re.MULTILINE)
        gfx = gfx_name(m.group(1)) if m else None
        if gfx is not None:
            found.append(gfx)
    return found


def amd_gpu_present(env: Mapping[str, str] | None = None) -> bool:
    """True when this machine shows an AMD GPU: KFD nodes with a gfx target, or amd-smi / rocm-smi on PATH."""
    path = (env or os.environ).get("PATH")
    return bool(kfd_gfx_targets()) or any(shutil.which(t, path=path) for t in ("amd-smi", "rocm-smi"))


def wants_amd(settings: ProfileSettings, env: Mapping[str, str] | None = None) -> bool:
    """Profile with rocprofv3? Yes when ``--arch`` is a gfx target; no when it is a compute capability,
    or when an NVIDIA GPU (nvidia-smi) or Nsight Compute is found; else when an AMD GPU is present."""
    if settings.arch is not None:
        return settings.arch.strip().lower().startswith("gfx")
    path = (env or os.environ).get("PATH")
    if shutil.which("nvidia-smi", path=path) or shutil.which(settings.ncu, path=path):
        return False
    return amd_gpu_present(env)


def find_rocprofv3(name: str, env: Mapping[str, str] | None = None) -> str:
    """The rocprofv3 executable's path, or :class:`ToolNotFoundError` with how to get it."""
    found = shutil.which(name, path=(env or os.environ).get("PATH"))
    if found is None:
        raise ToolNotFoundError(f"rocprofv3 ({name}) was not found: an AMD GPU is profiled with it",
                                hint=ROCPROF_INSTALL_HINT)
    return found


def parse_listed(text: str) -> tuple[set[str], list[str]]:
    """The counter names and gfx targets in ``rocprofv3 --list-avail`` output: ``Counter_Name : X``
    lines (ROCm 6.4 on) or ``gpu-agentN : X : ...`` lines (earlier releases), and ``Name : gfx942``."""
    names: set[str] = set()
    archs: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^\s*Counter_Name\s*:\s*(\S+)", line) or re.match(r"^\s*gpu-agent\d+\s*:\s*([A-Za-z0-9_\[\]]+)\s*:", line)
        if m:
            names.add(m.group(1))
            continue
        a = re.match(r"^\s*Name\s*:\s*(gfx\w+)\s*$", line)
        if a and a.group(1) not in archs:
            archs.append(a.group(1))
    return names, archs


def listed_counters(rocprofv3: str, env: Mapping[str, str] | None = None) -> tuple[set[str] | None, list[str]]:
    """The counters and gfx targets ``rocprofv3 --list-avail`` lists; (None, []) when it could not say."""
    try:
        out = subprocess.run([rocprofv3, "--list-avail"], capture_output=True, text=True, errors="replace",
                             env=dict(env) if env is not None else None, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("rocprofv3 --list-avail failed: %s", exc)
        return None, []
    names, archs = parse_listed(out.stdout + "\n" + out.stderr)
    if out.returncode != 0 or not names:
        log.debug("rocprofv3 --list-avail listed no counters (exit %s)", out.returncode)
        return None, archs
    return names, archs


def counter_passes(arch: str, listed: set[str] | None) -> tuple[list[list[str]], list[str]]:
    """The roofline's counter passes on ``arch`` keeping what ``listed`` has (all when None), packed
    again first-fit into the fewest passes within :data:`roofline.counting.amd.PASS_LIMITS` per block;
    and the counters left out."""
    wanted = [c for p in required_counters(arch) for c in p]
    kept = [c for c in wanted if listed is None or c in listed]
    passes: list[list[str]] = []
    for counter in kept:
        block = counter.split("_")[0]
        limit = PASS_LIMITS.get(block, 8)
        home = next((p for p in passes if sum(c.split("_")[0] == block for c in p) < limit), None)
        if home is None:
            passes.append([counter])
        else:
            home.append(counter)
    return passes, [c for c in wanted if c not in kept]


def rocprof_command(settings: ProfileSettings, rocprofv3: str, folder: Path, counters: Sequence[str] | None) -> list[str]:
    """One rocprofv3 run into ``folder``: a kernel trace (``counters`` None) or one counter pass, CSV."""
    cmd = [rocprofv3, *(["--pmc", *counters] if counters else ["--kernel-trace"]), "-d", str(folder),
           "-o", OUTPUT_NAME, "--output-format", "csv"]
    if settings.kernel_name is not None:
        regex = settings.kernel_name[len("regex:"):] if settings.kernel_name.startswith("regex:") else re.escape(settings.kernel_name)
        cmd += ["--kernel-include-regex", regex]
    return [*cmd, "--", *settings.command]


@dataclass(frozen=True)
class AmdRun:
    """What the rocprofv3 runs did: the output folder, the arch, the last exit status, notes."""

    folder: Path
    arch: str
    returncode: int
    interrupted: bool
    failed: bool
    notes: tuple[str, ...]


def check_amd_settings(settings: ProfileSettings) -> None:
    """Refuse what rocprofv3 profiling does not do (yet), before anything runs."""
    unsupported = [(settings.torch, "--torch"), (settings.timeline, "--timeline"),
                   (settings.launch_skip is not None, "--launch-skip"), (settings.launch_count is not None, "--launch-count"),
                   (bool(settings.nvtx_include), "--nvtx-include")]
    named = [name for on, name in unsupported if on]
    if named:
        raise InputError(f"{', '.join(named)}: not available with rocprofv3 (AMD GPUs) yet",
                         hint="profile without them, or filter kernels with --kernel-name")


def run_rocprof(settings: ProfileSettings, folder: Path, *, on_line: Callable[[str, bool], None] | None = None) -> AmdRun:
    """Trace the program, then run it once per counter pass under rocprofv3, into ``folder``."""
    check_amd_settings(settings)
    env = dict(os.environ, **dict(settings.extra_env))
    rocprofv3 = find_rocprofv3(settings.rocprofv3, env)
    listed, archs = listed_counters(rocprofv3, env)
    arch = (settings.arch or (archs[0] if archs else None) or next(iter(kfd_gfx_targets()), None))
    if arch is None:
        raise ToolNotFoundError("the AMD GPU's architecture could not be found (rocprofv3 --list-avail and KFD "
                                "named none)", hint="pass --arch with its gfx target, e.g. --arch gfx942")
    arch = arch.lower()
    notes: list[str] = []
    left_out: list[str] = []
    if settings.metrics:
        passes = [list(settings.metrics)]
    else:
        try:
            passes, left_out = counter_passes(arch, listed)
        except (KeyError, ValueError):
            raise InputError(f"roofline has no AMD counter table for {arch}", hint="pass --metrics with the counters "
                             "to collect, or profile a gfx90a, gfx942 or gfx950 GPU") from None
    if listed is None:
        notes.append("rocprofv3 --list-avail listed no counters: the roofline's passes are asked for as they are")
    if left_out:
        notes.append(f"left out {len(left_out)} counters this GPU's rocprofv3 does not list: {', '.join(left_out)}; "
                     "the analysis says what stays unknown")
    runs = [(folder / TRACE_FOLDER, None)] + [(folder / f"pass_{i}", p) for i, p in enumerate(passes, 1)]
    returncode, interrupted, failed = 0, False, False
    for where, counters in runs:
        command = rocprof_command(settings, rocprofv3, where, counters)
        log.info("running %s", command)
        returncode, _, interrupted = run_streaming(command, env=env, on_line=on_line)
        if interrupted:
            notes.append(f"interrupted during {where.name}: analyzing the runs done so far")
            break
        if returncode != 0:
            failed = True
            notes.append(f"the program (or rocprofv3) failed in {where.name} (exit status {returncode}): "
                         "analyzing what was recorded; later passes were not run")
            break
    return AmdRun(folder, arch, returncode, interrupted, failed, tuple(notes))

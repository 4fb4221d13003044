"""The part of the counter-free mode that runs inside the user's Python processes.

The generated ``sitecustomize.py`` (see :mod:`.launch`) calls :func:`activate_from_env`
at interpreter startup. When ``ROOFLINE_COUNTER_FREE_DIR`` names a folder, it starts a
:class:`~.recorder.Recorder` and, at interpreter exit (normal end, ``sys.exit``, an
uncaught exception or Ctrl-C), writes ``ops.<pid>.json`` there, with the host and CPU it ran on
(:func:`roofline.machine.cpu_host.cpu_identity`). Processes started by
``multiprocessing`` (data-loader workers) write nothing. If PyTorch cannot be
imported, ``error.<pid>.json`` says why, for the ``roofline`` process to report.

``ROOFLINE_COUNTER_FREE_TIMED=0`` records without the PyTorch profiler (every ``time_s`` NaN):
for a program that runs under Nsight Compute, which owns CUPTI.

Standard library and PyTorch only: the user's Python may lack pandas.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_DIR = "ROOFLINE_COUNTER_FREE_DIR"
#: "0": record without the PyTorch profiler (times NaN); anything else, or unset: timed.
ENV_TIMED = "ROOFLINE_COUNTER_FREE_TIMED"


def timed_from_env(environ: Mapping[str, str]) -> bool:
    """Whether the recorder times operators with the PyTorch profiler (``ROOFLINE_COUNTER_FREE_TIMED``)."""
    return environ.get(ENV_TIMED, "1").strip() != "0"


def _write(folder: Path, name: str, payload: dict[str, Any]) -> None:
    tmp = folder / f".{name}.tmp"
    tmp.write_text(json.dumps(payload, default=str))
    os.replace(tmp, folder / name)


def _finish(recorder: Any, folder: Path) -> None:
    import multiprocessing

    recorder.stop()
    if multiprocessing.parent_process() is not None:
        return
    rows = recorder.rows()
    if rows:
        from roofline.machine.cpu_host import cpu_identity
        from roofline.profiling.ranks import rank_from_env

        _write(folder, f"ops.{os.getpid()}.json",
               {"pid": os.getpid(), "rank": rank_from_env(os.environ), "argv": sys.argv, "rows": rows,
                "timed": recorder.timed, "compiled_frames": recorder.compiled_frames(),
                "cpu_identity": cpu_identity()})  # where it ran: CPU rows are held to this CPU's ceilings


def activate_from_env() -> bool:
    """Start recording this process when ``ROOFLINE_COUNTER_FREE_DIR`` is set; True when started."""
    folder = os.environ.get(ENV_DIR)
    if not folder:
        return False
    path = Path(folder)
    try:
        from roofline.profiling.counter_free.recorder import Recorder

        recorder = Recorder(timed=timed_from_env(os.environ)).start()
    except Exception as exc:  # reported by the roofline process, which reads this file
        _write(path, f"error.{os.getpid()}.json", {"pid": os.getpid(), "error": f"{type(exc).__name__}: {exc}"})
        return False
    atexit.register(_finish, recorder, path)
    return True

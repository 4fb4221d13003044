"""This CPU's measured ceilings, measured once and kept in the user's cache folder.

A CPU program profiled with no machine given is held to ceilings measured on the CPU it ran on:
:func:`cached_cpu_machine` returns the machine cached for this host and CPU, or measures it
(``measure_cpu(mode="quick")``, about 10 s on 2 cores) and caches it for later runs.

Where: ``$ROOFLINE_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/roofline``, else
``~/.cache/roofline``; the file is ``machines/cpu-HOST-DIGEST.json``, an ordinary machine file
(``roofline analyze --machine`` reads it, ``roofline machine --cpu -o FILE --force`` rewrites it
with a longer run). DIGEST is a hash of the CPU key (:func:`roofline.machine.cpu_host.cpu_key`:
host name, CPU model name, CPUID family/model/stepping, logical CPUs usable and physical cores,
data caches, widest vector extension, benchmark version), which the file also records in
``metadata['cpu_key']``. A machine is reused while the key is equal; when the CPU changes (a
virtual machine resized or moved to other hardware, the process limited to fewer CPUs) the key
changes and the CPU is measured again, saying what changed. Files of other keys are left in
place: a host that returns to an earlier CPU finds its machine again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from roofline.errors import MachineError
from roofline.kernels import KernelTable
from roofline.machine.cpu_host import cpu_identity, cpu_key
from roofline.machine.model import Machine

#: The environment variable that names the cache folder (tests point it at a temporary folder).
ENV_CACHE_DIR = "ROOFLINE_CACHE_DIR"


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``cache_dir``, else ``$ROOFLINE_CACHE_DIR``, ``$XDG_CACHE_HOME/roofline``,
    ``~/.cache/roofline``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(ENV_CACHE_DIR):
        return Path(os.environ[ENV_CACHE_DIR])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "roofline"


def _host_part(host: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", host)[:64] or "host"


def cache_file(key: dict[str, str], root: Path) -> Path:
    """The cached machine's file for ``key`` under ``root``."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return root / "machines" / f"cpu-{_host_part(key['host'])}-{digest}.json"


def _date(machine: Machine) -> str:
    """When the machine was measured, as 'YYYY-MM-DD HH:MM UTC' ('an unknown date' when not recorded)."""
    text = str(machine.metadata.get("date", ""))
    try:
        return datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return "an unknown date"


def _redo(path: Path) -> str:
    return f"`roofline machine --cpu -o {path} --force` to measure it again"


def _caveat(machine: Machine) -> str:
    warning = machine.metadata.get("reliability_warning")
    return f" ({warning})" if warning else ""


def _changed(key: dict[str, str], path: Path) -> str:
    """What differs from the newest other machine cached for this host, in words ('' when none)."""
    others = []
    for other in path.parent.glob(f"cpu-{_host_part(key['host'])}-*.json"):
        if other == path:
            continue
        try:
            m = Machine.load(other)
        except MachineError:
            continue
        old = m.metadata.get("cpu_key")
        if isinstance(old, dict):
            others.append((str(m.metadata.get("date", "")), old, m))
    if not others:
        return ""
    _, old, m = max(others, key=lambda o: o[0])
    diffs = [f"{k} {old.get(k, '?')!s} -> {key[k]}" for k in key if str(old.get(k)) != key[k]]
    return f"; the CPU changed since the machine measured on {_date(m)} ({', '.join(diffs)})" if diffs else ""


def _load(path: Path, key: dict[str, str]) -> tuple[Machine | None, str]:
    """The machine cached at ``path`` when it was measured on a CPU of this key, else None and why."""
    if not path.exists():
        return None, ""
    try:
        machine = Machine.load(path)
    except MachineError as exc:
        return None, f"the cached file was unreadable ({exc.message})"
    if machine.metadata.get("cpu_key") != key or machine.source != "measured":
        return None, "the cached file was not measured on this CPU"
    return machine, ""


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold the cache folder's lock: two roofline processes never measure the cores at once."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(folder / ".cpu.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _measure(key: dict[str, str]) -> tuple[Machine, float]:
    """Measure this CPU (quick mode): the machine, with the CPU key and any reliability warning in its
    metadata, and the seconds it took."""
    from roofline.bench.cpu.measure import measure_cpu
    from roofline.bench.reliability import assess, load_per_core

    load = load_per_core()  # before measuring: our own threads would count otherwise
    measurement = measure_cpu(mode="quick")
    machine = measurement.machine
    meta = machine.metadata
    warning = assess(dict(meta.get("repeat_ratio") or {}), load, meta.get("cpu_share")).warning
    machine = replace(machine, metadata={**meta, "cpu_key": key, "load_per_core_before": load,
                                         "reliability_warning": warning})
    return machine, measurement.elapsed_s


def cached_cpu_machine(*, cache_dir: str | os.PathLike[str] | None = None,
                       measure: bool = True) -> tuple[Machine, str] | None:
    """This CPU's measured machine and a sentence saying where it came from (see the module docstring).

    The machine cached for this CPU's key under :func:`cache_root` (``cache_dir`` overrides it), else,
    when ``measure``, this CPU measured now and cached; else None. The sentence names the file and the
    date of the measurement, and how to measure again, e.g. "ceilings: measured CPU machine cached at
    PATH, measured on 2026-11-28 10:27 UTC; `roofline machine --cpu -o PATH --force` to measure it
    again". Raises :class:`~roofline.errors.ToolNotFoundError` without numba and
    :class:`~roofline.errors.MachineError` when the measurement fails.
    """
    key = cpu_key()
    path = cache_file(key, cache_root(cache_dir))
    machine, why = _load(path, key)
    if machine is None and measure:
        with _locked(path.parent):
            machine, why = _load(path, key)  # another process may have measured it while we waited
            if machine is None:
                changed = _changed(key, path)
                machine, elapsed = _measure(key)
                machine.save(path, force=True)  # our own cache file: unreadable or stale, it is replaced
                reason = f"; {why}" if why else changed
                return machine, (f"ceilings: this CPU measured now (`roofline machine --cpu --quick`, {elapsed:.0f} s) "
                                 f"and cached at {path} for later runs{reason}{_caveat(machine)}; {_redo(path)}")
    if machine is None:
        return None
    return machine, (f"ceilings: measured CPU machine cached at {path}, measured on {_date(machine)}"
                     f"{_caveat(machine)}; {_redo(path)}")


def cpu_machine_for(table: KernelTable, *, cache_dir: str | os.PathLike[str] | None = None, measure: bool = True,
                    announce: Callable[[str], None] | None = None) -> tuple[Machine | None, str]:
    """This CPU's measured ceilings for a table of CPU work that ran on this host's CPU, and a sentence
    saying where they came from; what the command-line entry points use when no machine is given (they
    decide whether measuring is allowed now: measuring is the only choice here with a side effect).

    A table qualifies when every row is CPU work (``metrics['device_type']`` 'cpu', as the
    counter-free mode records PyTorch operators) and every row names this host and CPU
    (``metrics`` columns ``host``, ``cpu``, ``cpuid``: :func:`roofline.machine.cpu_host.cpu_identity`).
    Its machine is :func:`cached_cpu_machine` (measured now and cached
    when ``measure`` and none is cached; ``announce(sentence)`` is called first, as the measurement
    takes seconds). Returns ``(None, why)`` for CPU work from elsewhere, of unknown origin or with
    nothing cached and ``measure`` false, and ``(None, "")`` for a table that is not all CPU work.
    """
    from roofline.profiling.counter_free.collect import HOST_COLUMNS  # what the counter-free recorder names

    m = table.metrics
    if m is None or len(m) == 0 or "device_type" not in m.columns or not (m["device_type"] == "cpu").all():
        return None, ""
    way_out = "pass --machine (a file from `roofline machine --cpu -o FILE` on the host it ran on)"
    if any(c not in m.columns for c in HOST_COLUMNS) or m[list(HOST_COLUMNS)].isna().any().any():
        return None, (f"no CPU ceilings: the table does not say which host's CPU it ran on (recorded by an "
                      f"earlier roofline); {way_out}")
    where = m[list(HOST_COLUMNS)].astype(str).drop_duplicates()
    if len(where) > 1:
        names = "; ".join(f"{r.host} ({r.cpu})" for r in where.itertuples())
        return None, f"no CPU ceilings: the table ran on {len(where)} hosts or CPUs ({names}), no one machine fits all; {way_out}"
    ran, here = where.iloc[0].to_dict(), cpu_identity()
    if any(ran[c] != here[c] for c in HOST_COLUMNS):
        return None, (f"no CPU ceilings: the table ran on {ran['host']} ({ran['cpu']}, {ran['cpuid']}), not on this "
                      f"host's CPU ({here['host']}, {here['cpu']}, {here['cpuid']}); {way_out}")
    if announce is not None and measure and cached_cpu_machine(cache_dir=cache_dir, measure=False) is None:
        announce("no measured ceilings cached for this CPU: measuring them now, once "
                 "(`roofline machine --cpu --quick`, about 10 s on 2 cores)")
    found = cached_cpu_machine(cache_dir=cache_dir, measure=measure)
    if found is None:
        path = cache_file(cpu_key(), cache_root(cache_dir))
        return None, (f"no CPU ceilings: none measured for this CPU yet, and not measured now; "
                      f"`roofline machine --cpu -o {path}` measures them for later runs, or pass --machine")
    return found

"""A capture left by a target-only Nsight Systems (``.qdstrm``) made into a report: :func:`import_capture`.

``nsys profile`` records into ``PREFIX.qdstrm`` and hands it to ``QdstrmImporter``, a program of the host
half of Nsight Systems, which writes ``PREFIX.nsys-rep``. A target-only install has no importer: Debian's
and CUDA's ``nsight-systems-target`` packages, the nsys that Nsight Compute carries in
``host/target-linux-x64``, the nsys of many clusters' compute nodes. nsys 2023.4 then says "Importer error
status: The importer binary and its dependencies were not found", keeps the .qdstrm, writes no report
and exits 0.

:func:`importers` finds the importers within reach. If the user names one, only that one is used.
Otherwise it looks, in this order:

1. in the folders beside nsys's own (``host-linux-x64`` of an Nsight Systems install, or Nsight Compute's
   ``host/linux-desktop-*``);
2. in Nsight Compute's ``host/*`` folders, for the ncu that is used;
3. on PATH.

Any importer with nsys's own version comes first. :func:`import_capture` tries each in turn until one
writes the report.

QdstrmImporter writes into the capture it reads (seen with 2023.4.4: the file's checksum changes), so
:func:`import_copy` imports a copy of a user's capture, never the file itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from roofline.errors import InputError, ToolNotFoundError

#: Nsight Systems' importer: capture (.qdstrm) -> report (.nsys-rep).
IMPORTER = "QdstrmImporter"
CAPTURE_SUFFIX = ".qdstrm"
#: Seconds an importer may take (a capture of a long run is gigabytes) and a ``--version`` query may take.
IMPORT_TIMEOUT_S = 3600
VERSION_TIMEOUT_S = 30
#: What to do when no importer is at hand, and how to import by hand.
HINT = ("import it where Nsight Systems' host half is installed (QdstrmImporter -i FILE.qdstrm, in "
        "nsight-systems/<version>/host-linux-x64), then give the .nsys-rep")
_VERSION = re.compile(r"\b(20\d\d\.\d+(?:\.\d+){0,2})")


def version_of(tool: str | Path) -> str | None:
    """The Nsight version a tool prints for ``--version`` (``2023.4.4.54``), or None when it says none."""
    try:
        done = subprocess.run([str(tool), "--version"], capture_output=True, text=True, errors="replace",
                              timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(done.stdout + done.stderr)
    return found.group(1) if found else None


def importers(nsys: str | Path | None, ncu: str | None = None, given: str | Path | None = None) -> list[Path]:
    """The importers to try, in order (see the module docstring); ``given`` alone when the user names one.

    Raises ToolNotFoundError when ``given`` is not an executable file."""
    if given is not None:
        path = Path(given).expanduser()
        named = path if path.is_file() else Path(shutil.which(str(given)) or path)
        if not named.is_file():
            raise ToolNotFoundError(f"the importer {given} was not found",
                                    hint="give the path of QdstrmImporter (nsight-systems/<version>/host-linux-x64)")
        return [named]
    found: list[Path] = []
    if nsys is not None:
        own = Path(nsys).resolve().parent
        siblings = sorted(own.parent.glob(f"*/{IMPORTER}"), key=lambda p: (p.parent.name != "host-linux-x64", str(p)))
        found += siblings
    located = shutil.which(ncu) if ncu else None
    if located:
        found += sorted(Path(located).resolve().parent.glob(f"host/*/{IMPORTER}"))
    on_path = shutil.which(IMPORTER)
    if on_path:
        found.append(Path(on_path))
    unique: dict[Path, Path] = {}
    for path in found:
        if path.is_file():
            unique.setdefault(path.resolve(), path)
    return list(unique.values())


def ordered(candidates: Sequence[Path], version: str | None) -> list[Path]:
    """The candidates with ``version`` (nsys's own) first, in their order otherwise."""
    if version is None or len(candidates) < 2:
        return list(candidates)
    return sorted(candidates, key=lambda p: version_of(p) != version)


def import_capture(capture: Path, report: Path, candidates: Sequence[Path], *, force: bool = False,
                   source: Path | None = None) -> Path:
    """Write ``report`` from ``capture`` with the first of ``candidates`` that succeeds; the importer used.

    The capture is written to by the importer: give a copy of a file that is not yours (:func:`import_copy`).
    Raises ToolNotFoundError when there is no candidate, InputError naming each one's failure when none
    succeeds; both name ``source`` (the user's file) when given, else the capture."""
    where = source or capture
    if not candidates:
        raise ToolNotFoundError(f"a capture that nsys did not import, and no {IMPORTER} was found beside nsys, in "
                                "Nsight Compute's folders or on PATH", path=where, hint=HINT)
    failures = []
    for importer in candidates:
        cmd = [str(importer), "--input-file", str(capture), "--output-file", str(report)]
        if force:
            cmd.append("--force-overwrite")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=IMPORT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failures.append(f"{importer}: took over {IMPORT_TIMEOUT_S} s")
            continue
        except OSError as exc:
            failures.append(f"{importer}: {exc.strerror or exc}")
            continue
        if done.returncode == 0 and report.is_file():
            return importer
        reason = _reason(done.stdout + "\n" + done.stderr).removeprefix(f"{importer}: ")
        failures.append(f"{importer} (exit {done.returncode}): {reason}")
    raise InputError(f"{len(failures)} importer{'s' if len(failures) > 1 else ''} failed on the capture: "
                     + "; ".join(failures), path=where, hint=HINT)


def import_copy(capture: Path, folder: Path, candidates: Sequence[Path]) -> Path:
    """The report of a copy of ``capture`` made in ``folder`` (the capture itself is never written)."""
    copy = folder / capture.name
    shutil.copyfile(capture, copy)
    report = folder / (capture.name[: -len(CAPTURE_SUFFIX)] + ".nsys-rep")
    import_capture(copy, report, candidates, source=capture)
    copy.unlink()
    return report


def _reason(said: str) -> str:
    """The line of an importer's output that says what went wrong (not its progress bar)."""
    lines = [x.strip() for x in re.split(r"[\r\n]+", said) if x.strip() and not x.lstrip().startswith("Processing [")]
    for line in lines:
        if re.search(r"error|fail|exception|cannot|not found", line, re.IGNORECASE):
            return line
    return lines[-1] if lines else "no output"

"""Safe output: never overwrite or lose a user's file without being told to."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from roofline.errors import OutputExistsError, RooflineError


def check_writable(path: str | Path, *, force: bool = False) -> Path:
    """Raise if ``path`` exists and ``force`` is false, or its folder does not exist."""
    p = Path(path)
    if p.exists() and not force:
        raise OutputExistsError("output file exists", path=p, hint="choose another name or pass --force to overwrite it")
    if not p.parent.exists():
        raise RooflineError("the output folder does not exist", path=p)
    return p


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (/proc), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_bytes(path: str | Path, data: bytes, *, force: bool = False) -> Path:
    """Write atomically (temporary file then rename), so a failure never leaves half a file.

    The file gets the permissions an ordinary ``open(path, "w")`` would give it (0666 less the
    umask), not the temporary file's 0600.
    """
    p = check_writable(path, force=force)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def write_text(path: str | Path, text: str, *, force: bool = False) -> Path:
    return write_bytes(path, text.encode("utf-8"), force=force)

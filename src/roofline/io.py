"""Safe output: never overwrite or lose a user's file without being told to, never an input.

``-`` as an output names standard output (:func:`is_stdout`); the callers write it there.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from os import PathLike, fspath
from pathlib import Path

from roofline.errors import OutputExistsError, RooflineError

#: The output name that means standard output.
STDOUT = "-"


def is_stdout(path: str | PathLike[str] | None) -> bool:
    """True for ``-``: write to standard output, not to a file."""
    return path is not None and fspath(path) == STDOUT


def same_file(a: str | PathLike[str], b: str | PathLike[str]) -> bool:
    """True when ``a`` and ``b`` name one file: the same path once symlinks are resolved, or
    the same inode (hard links, bind mounts)."""
    pa, pb = Path(fspath(a)), Path(fspath(b))
    try:
        if pa.resolve() == pb.resolve():
            return True
        return pa.exists() and pb.exists() and os.path.samefile(pa, pb)
    except OSError:
        return False


def check_not_input(path: str | PathLike[str], inputs: Iterable[str | PathLike[str]]) -> None:
    """Raise if ``path`` is one of ``inputs`` (also through symlinks); ``--force`` does not change this."""
    for inp in inputs:
        if not is_stdout(inp) and same_file(path, inp):
            raise RooflineError("the output is one of the inputs; refusing to overwrite it", path=fspath(path),
                                hint="choose another output name (--force never overwrites an input)")


def check_writable(path: str | PathLike[str], *, force: bool = False,
                   inputs: Iterable[str | PathLike[str]] = ()) -> Path:
    """Raise if ``path`` is an input, is a folder, or exists and ``force`` is false.

    A missing parent folder is not an error: :func:`write_bytes` creates it (as ``-o DIR`` does),
    unless some part of it is a file.
    """
    p = Path(fspath(path))
    check_not_input(p, inputs)
    if p.is_dir():
        raise RooflineError("the output is a folder, not a file name", path=p)
    if p.exists() and not force:
        raise OutputExistsError("output file exists", path=p, hint="choose another name or pass --force to overwrite it")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise RooflineError(f"cannot create the output folder: {parent} is a file", path=p)
            break
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


def write_bytes(path: str | PathLike[str], data: bytes, *, force: bool = False,
                inputs: Iterable[str | PathLike[str]] = ()) -> Path:
    """Write atomically (temporary file then rename), so a failure never leaves half a file.

    The parent folders are created when missing. The file gets the permissions an ordinary
    ``open(path, "w")`` would give it (0666 less the umask), not the temporary file's 0600.
    """
    p = check_writable(path, force=force, inputs=inputs)
    p.parent.mkdir(parents=True, exist_ok=True)
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


def write_text(path: str | PathLike[str], text: str, *, force: bool = False,
               inputs: Iterable[str | PathLike[str]] = ()) -> Path:
    return write_bytes(path, text.encode("utf-8"), force=force, inputs=inputs)

"""Safe output: never overwrite or lose a user's file without being told to, never an input.

``-`` as an output names standard output (:func:`is_stdout`); the callers write it there. ``-`` as
an input is standard input: when that is a regular file (``< profile.csv``), the file it reads is an
input like any named one (:func:`reads_stdin_file`). An output that cannot be written (no permission,
a read-only or virtual file system, a folder that cannot be made) raises
:class:`~roofline.errors.OutputError` with the operating system's reason (:func:`writing`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from os import PathLike, fspath
from pathlib import Path

from roofline.errors import OutputError, OutputExistsError, RooflineError

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


def reads_stdin_file(path: str | PathLike[str]) -> bool:
    """True when standard input (file descriptor 0) is the regular file ``path`` names (same device
    and inode), as after ``< path``. A pipe, a terminal or a closed standard input names no file."""
    try:
        stdin = os.fstat(0)
        if not stat.S_ISREG(stdin.st_mode):
            return False
        out = os.stat(fspath(path))
    except OSError:
        return False
    return (out.st_dev, out.st_ino) == (stdin.st_dev, stdin.st_ino)


def check_not_input(path: str | PathLike[str], inputs: Iterable[str | PathLike[str]]) -> None:
    """Raise if ``path`` is one of ``inputs`` (also through symlinks), or, when ``-`` is one of them,
    the file standard input reads; ``--force`` does not change this."""
    hint = "choose another output name (--force never overwrites an input)"
    for inp in inputs:
        if is_stdout(inp):
            if reads_stdin_file(path):
                raise RooflineError("the output is the file standard input (-) reads; refusing to overwrite it",
                                    path=fspath(path), hint=hint)
        elif same_file(path, inp):
            raise RooflineError("the output is one of the inputs; refusing to overwrite it", path=fspath(path),
                                hint=hint)


def check_writable(path: str | PathLike[str], *, force: bool = False,
                   inputs: Iterable[str | PathLike[str]] = ()) -> Path:
    """Raise if ``path`` is an input, is a folder, exists and ``force`` is false, or lies in a folder
    this process may not write to.

    A missing parent folder is not an error: :func:`write_bytes` creates it (as ``-o DIR`` does),
    unless some part of it is a file or its nearest existing folder is not writable. The permission
    check is the operating system's own (``access(2)``: modes, read-only file systems); what it
    cannot see (a virtual file system such as /proc for root) fails when written, as
    :class:`~roofline.errors.OutputError` too.
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
            if not os.access(parent, os.W_OK | os.X_OK):
                raise OutputError(f"cannot write: the folder {parent} is not writable (permission denied or a "
                                  "read-only file system)", path=p, hint="write it to a folder you can write to")
            break
    return p


@contextlib.contextmanager
def writing(path: str | PathLike[str]) -> Iterator[None]:
    """Turn an operating-system error while writing ``path`` (making its folder, its temporary file,
    renaming it into place) into :class:`~roofline.errors.OutputError` naming ``path`` and the reason."""
    p = Path(fspath(path))
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        failed = Path(exc.filename) if isinstance(exc.filename, str) else None
        where = f" (creating the folder {failed})" if failed is not None and failed in p.parents else ""
        raise OutputError(f"cannot write: {reason}{where}", path=p,
                          hint="write it to a folder you can write to") from None


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
    with writing(p):
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

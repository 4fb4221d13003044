"""Inputs that are not plain files: standard input (``-``), pipes, ``/dev/stdin``, ``<(cmd)``;
and text encodings other than UTF-8.

A pipe can be read once only, has no size and cannot seek: it is read whole into memory
(:func:`read_stream`), and the readers work on those bytes. Text is decoded by its
byte-order mark (UTF-8, UTF-16 LE/BE, what PowerShell's ``>`` writes), else as UTF-8,
else as Latin-1, which never fails (:func:`to_utf8`).
"""

from __future__ import annotations

import codecs
import stat
import sys
from dataclasses import dataclass
from os import PathLike, fspath
from pathlib import Path
from typing import BinaryIO

from roofline.errors import InputError

#: The argument that means standard input (and, for outputs, standard output).
STDIO = "-"
#: The name standard input gets in messages and in the table's ``source`` column.
STDIN_NAME = "<stdin>"

_UTF16_BOMS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


@dataclass(frozen=True, eq=False)  # compared by identity: the bytes can be large
class InMemory:
    """A profile read whole from a stream: its name (for messages) and its bytes."""

    name: str
    data: bytes

    def __fspath__(self) -> str:  # so that labels and messages can name it like a path
        return self.name


def is_stdio(path: str | PathLike[str] | InMemory) -> bool:
    """True for ``-`` (standard input or output)."""
    return not isinstance(path, InMemory) and fspath(path) == STDIO


def is_stream(path: str | PathLike[str]) -> bool:
    """True for ``-`` and for paths that exist but are neither a regular file nor a folder
    (a FIFO from ``<(cmd)`` or ``mkfifo``, ``/dev/stdin``, a character device)."""
    if is_stdio(path):
        return True
    try:
        mode = Path(fspath(path)).stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def read_stream(path: str | PathLike[str], stdin: BinaryIO | None = None) -> InMemory:
    """Read a stream once, whole, into memory (no size check, no seek).

    ``-`` reads ``stdin`` (default: the process's standard input, as bytes).
    """
    if is_stdio(path):
        source = stdin if stdin is not None else sys.stdin.buffer
        if source.isatty() if hasattr(source, "isatty") else False:
            raise InputError("standard input is a terminal, not a profile",
                             hint="pipe a profile in (ncu ... --csv | roofline analyze -) or give a file name")
        return InMemory(STDIN_NAME, source.read())
    p = Path(fspath(path))
    try:
        with p.open("rb") as fh:
            return InMemory(str(p), fh.read())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=p) from None


def utf16_codec(head: bytes) -> str | None:
    """The codec named by a UTF-16 byte-order mark at the start of ``head``, else None."""
    for bom, codec in _UTF16_BOMS:
        if head.startswith(bom):
            return codec
    return None


def to_utf8(data: bytes) -> bytes:
    """``data`` as UTF-8 (BOM dropped): UTF-16 by its BOM, UTF-8 as is, anything else as Latin-1."""
    codec = utf16_codec(data)
    if codec is not None:
        return data[2:].decode(codec, errors="replace").encode("utf-8")
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1").encode("utf-8")
    return data

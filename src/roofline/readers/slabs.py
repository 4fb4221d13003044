"""A file in pieces that end at line ends (:func:`slabs`): what :mod:`roofline.readers.csv_arrow`
hands pyarrow's parser one at a time, as Arrow buffers of Arrow's own memory.

A file on disk is memory-mapped a piece at a time by Arrow (``pyarrow.memory_map``: no copy of its
bytes, 0.08 s against 0.3 s read for 380 MB on the 2-core VM, and only the pieces being parsed
mapped); a stream (bytes in memory) is read and copied into an Arrow buffer. Never a buffer over a
Python object: the parser's threads let go of their input after ``read_csv`` returns, and freeing a
Python-backed buffer takes the GIL, which a thread cannot have once the interpreter is ending (the
process then aborts: apache/arrow#49942; seen here 1 run in 70 when a script ended right after a
parse).
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa

#: Bytes at the end of a piece searched at a time for its last line end.
_TAIL_BYTES = 1 << 16


class FileShrank(ValueError):
    """The file became shorter while it was read (mapped pages past its end would kill the process)."""


def slabs(fh: BinaryIO, size: int) -> Iterator[pa.Buffer]:
    """The rest of ``fh`` in pieces of about ``size`` bytes, each ending at a line end (the last
    one at the end of the file). A file on disk is memory-mapped a piece at a time; any other
    stream is read."""
    try:
        status = os.fstat(fh.fileno())
        mapped = stat.S_ISREG(status.st_mode) and status.st_size > 0 and isinstance(getattr(fh, "name", None), str)
    except (OSError, AttributeError, io.UnsupportedOperation):
        mapped = False
    yield from (_mapped_slabs(fh, size) if mapped else _read_slabs(fh, size))


def _read_slabs(fh: BinaryIO, size: int) -> Iterator[pa.Buffer]:
    """:func:`slabs` of a stream: the bytes after a piece's last line end are read again with the
    next piece, rather than copied onto it."""
    while True:
        start = fh.tell()
        chunk = fh.read(size)
        if not chunk:
            return
        cut = chunk.rfind(b"\n") + 1 if len(chunk) == size else len(chunk)
        while cut == 0:  # a line longer than the piece: read on to its end
            more = fh.read(size)
            chunk += more
            cut = chunk.rfind(b"\n") + 1 if more else len(chunk)
        fh.seek(start + cut)
        out = pa.BufferOutputStream()
        out.write(memoryview(chunk)[:cut])
        yield out.getvalue()


def _mapped_slabs(fh: BinaryIO, size: int) -> Iterator[pa.Buffer]:
    """:func:`slabs` of a file on disk, each piece a slice of a mapping of its own, unmapped once
    nothing holds the piece."""
    end_of_file = os.fstat(fh.fileno()).st_size
    start = fh.tell()
    while start < end_of_file:
        now = os.fstat(fh.fileno()).st_size
        if now < end_of_file:  # reading a mapped page past the file's end would kill the process (SIGBUS)
            raise FileShrank(f"the file shrank to {now:,} bytes while it was read")
        source = pa.memory_map(fh.name)
        try:
            source.seek(start)
            window = source.read_buffer(end_of_file - start)  # mapped, not read: pages are touched when parsed
        finally:
            source.close()  # (the buffer keeps its pages mapped)
        length = min(len(window), size)
        cut = len(window) if length == len(window) else _last_line_end(window, length)
        while cut == 0:  # a line longer than the piece: on to its end
            length = min(len(window), length + size)
            cut = len(window) if length == len(window) else _last_line_end(window, length)
        fh.seek(start + cut)
        yield window.slice(0, cut)
        del window
        start += cut


def _last_line_end(buffer: pa.Buffer, length: int) -> int:
    """One past the last line end in ``buffer[:length]`` (0: none), the end searched first."""
    stop = length
    while stop > 0:
        lo = max(0, stop - _TAIL_BYTES)
        found = np.flatnonzero(np.frombuffer(buffer, dtype=np.uint8, count=stop - lo, offset=lo) == 10)
        if len(found):
            return lo + int(found[-1]) + 1
        stop = lo
    return 0

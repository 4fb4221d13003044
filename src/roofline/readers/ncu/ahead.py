"""A large Nsight Compute raw page parsed in a thread of its own while the rest of a program loads.

``roofline analyze FILE`` spends its first 0.3 s or so importing pandas, click and its commands, on
one core; the parse of a large CSV (pyarrow's, GIL released, :mod:`roofline.readers.ncu.raw_columns`)
needs none of them. :func:`read_ahead` starts that parse at once, and the reader takes its result
when the command gets there (:func:`roofline.readers.read_profile`'s ``ahead``), instead of parsing
the file again. What is read is what the reader would read: the same layout (:func:`sniff`), the
same columns, the same errors (raised when the result is taken).

A file smaller than :data:`AHEAD_BYTES`, or one that is not a raw page (a details page, a report,
anything else), is not read ahead: the reader reads it when asked, as it always does. Neither is a
file changed since the parse started (:meth:`ReadAhead.is_for`).

This module imports no pandas.
"""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import Future
from os import PathLike
from pathlib import Path

from roofline.errors import InputError
from roofline.readers import csv_arrow
from roofline.readers.ncu.layout import CsvLayout, sniff
from roofline.readers.ncu.raw_columns import RawColumns, parse_raw

#: Files from this size on are read ahead: below it the parse takes some tens of milliseconds at most
#: (it runs on one thread there too: :data:`roofline.readers.csv_arrow.THREADED_BYTES`).
AHEAD_BYTES = csv_arrow.THREADED_BYTES

#: What tells a file apart from another, or from itself changed: device, inode, size, modification time.
FileId = tuple[int, int, int, int]


def read_ahead(path: str | PathLike[str], *, min_bytes: int = AHEAD_BYTES) -> ReadAhead | None:
    """Start parsing ``path`` in a thread of its own when it is a regular file of at least
    ``min_bytes``; None otherwise (nothing started). Whether it is an ncu raw page is found in the
    thread (:meth:`ReadAhead.take` then says None when it is not)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode) or status.st_size < min_bytes:
        return None
    return ReadAhead(Path(path), _file_id(status))


class ReadAhead:
    """A raw page being parsed in a daemon thread (:func:`read_ahead`)."""

    def __init__(self, path: Path, file_id: FileId) -> None:
        self.path = path
        self._file_id = file_id
        self._stop = threading.Event()
        self._result: Future[tuple[CsvLayout, RawColumns] | None] = Future()
        threading.Thread(target=self._parse, name="roofline-read-ahead").start()

    def _parse(self) -> None:
        try:
            try:
                layout = sniff(self.path)
            except InputError:  # not an ncu CSV: the reader says so when it reads the file
                self._result.set_result(None)
                return
            self._result.set_result((layout, parse_raw(layout, self._stop)) if layout.layout == "raw" else None)
        except csv_arrow.Stopped:
            self._result.set_result(None)
        except BaseException as exc:  # raised again where the result is taken, as if the parse ran there
            self._result.set_exception(exc)

    def is_for(self, path: str | PathLike[str]) -> bool:
        """Whether ``path`` is the file being read, unchanged since the parse started."""
        try:
            return _file_id(os.stat(path)) == self._file_id
        except OSError:
            return False

    def take(self) -> tuple[CsvLayout, RawColumns] | None:
        """The file's layout and columns, once the parse is done; None when it is not a raw page (or
        the parse was stopped). Raises what the parse raised. The result is handed over: a second call
        gets None (the reader then reads the file itself)."""
        result = self._result.result()
        self._result = Future()
        self._result.set_result(None)
        return result

    def cancel(self) -> None:
        """Stop the parse at its next slab, and drop its result if it is done: :meth:`take` says None."""
        self._stop.set()
        if self._result.done():
            self._result = Future()
            self._result.set_result(None)


def _file_id(status: os.stat_result) -> FileId:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns

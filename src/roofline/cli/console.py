"""Where the CLI's output goes: results on stdout, messages on stderr.

* Results (the tables) go to standard output, or to standard error when standard output
  carries a file (``--json -``), so that what is piped stays parseable.
* Messages (notes, warnings, "wrote FILE") go to standard error through one
  :class:`Messages` per run: each text once, none with ``--quiet``. The library's own
  ``logging`` warnings and Python ``warnings`` are routed there too (:meth:`Messages.capture`).
* A reader that stops reading (``roofline analyze r.csv --json r.json | head``) ends the
  printing, not the command: the files asked for are still written (:func:`stop_writing`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

from rich.console import Console

#: Width used when stdout is not a terminal (a pipe, a file, a CI log): rich's default of 80
#: columns would fold the kernel tables into unreadable slivers.
NON_TERMINAL_WIDTH = 200


def stop_writing(stream: IO[str]) -> None:
    """Point ``stream``'s file descriptor at the null device: its reader has gone (a closed pipe),
    and what is still to be printed, or flushed at exit, must not fail the command."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (pytest's capture): nothing to redirect
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class _ResultsConsole(Console):
    """rich's console, but a closed pipe ends the printing only (rich exits the program with 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        stop_writing(self.file)


def stdout_console() -> Console:
    """A console for results: the terminal's width, or a wide fixed width when not a terminal."""
    return results_console()


def results_console(*, to_stderr: bool = False) -> Console:
    """A console for results: stdout, or stderr when stdout carries a file (``--json -``)."""
    console = _ResultsConsole(soft_wrap=False, stderr=to_stderr)
    return console if console.is_terminal else _ResultsConsole(soft_wrap=False, width=NON_TERMINAL_WIDTH,
                                                               stderr=to_stderr)


@dataclass
class Messages:
    """Notes and warnings for the person at the terminal: on stderr, each text once, none when quiet.

    One per CLI run (made by :func:`roofline.cli.app.main`, passed to commands as the click
    context's ``obj``); a command sets :attr:`quiet` from its ``--quiet`` option.
    """

    quiet: bool = False
    stream: TextIO | None = None  # None: sys.stderr at the time of writing (pytest's capsys swaps it)
    _seen: set[str] = field(default_factory=set)

    def _emit(self, text: str) -> None:
        if self.quiet or text in self._seen:
            return
        self._seen.add(text)
        out = self.stream if self.stream is not None else sys.stderr
        try:
            out.write(text + "\n")
            out.flush()
        except BrokenPipeError:  # stderr piped to a reader that has gone: say nothing more
            self.quiet = True
            stop_writing(out)

    def note(self, text: str) -> None:
        """A note the reader of the results must know (missing ceilings, clock scaling, ...)."""
        self._emit(f"note: {text}")

    def warning(self, text: str) -> None:
        self._emit(f"warning: {text}")

    def notes(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.note(text)

    def wrote(self, path: Path | str) -> None:
        self._emit(f"wrote {path}")

    def info(self, text: str) -> None:
        """A plain line of progress ("merged 3 files ...")."""
        self._emit(text)

    @contextlib.contextmanager
    def capture(self) -> Iterator[None]:
        """Route the library's logging warnings and Python warnings here while the command runs."""
        handler = _Handler(self)
        logger = logging.getLogger("roofline")
        logger.addHandler(handler)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                warnings.showwarning = self._showwarning  # type: ignore[assignment]
                yield
        finally:
            logger.removeHandler(handler)

    def _showwarning(self, message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        self.warning(str(message))


class _Handler(logging.Handler):
    def __init__(self, messages: Messages) -> None:
        super().__init__(level=logging.WARNING)
        self.messages = messages

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.warning(record.getMessage())


def messages_for(ctx: Any, quiet: bool) -> Messages:
    """The run's :class:`Messages` (the context's ``obj``, or a new one), with ``quiet`` set."""
    obj = getattr(ctx, "obj", None)
    messages = obj if isinstance(obj, Messages) else Messages()
    messages.quiet = quiet
    return messages

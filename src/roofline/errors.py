"""Typed exceptions raised by the library.

Library code raises these; only the CLI turns them into a message and an exit
status. Every error says what is wrong, where (the file, when there is one) and,
when we know it, what to do about it.
"""

from __future__ import annotations

from pathlib import Path


class RooflineError(Exception):
    """Base class of every error this package raises on purpose."""

    def __init__(self, message: str, *, path: str | Path | None = None, hint: str | None = None):
        self.message = message
        self.path = Path(path) if path is not None else None
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        where = f"{self.path}: " if self.path is not None else ""
        text = f"{where}{self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(RooflineError):
    """An input file is missing, empty, truncated, of the wrong format or lacks what we need."""


class MissingMetricsError(InputError):
    """The input holds none of the metrics needed for what was asked."""


class MachineError(RooflineError):
    """A machine description (ceilings) is missing, malformed or cannot be measured here."""


class OutputExistsError(RooflineError):
    """An output file exists and the caller did not allow overwriting it."""


class OutputError(RooflineError):
    """An output file cannot be written: its folder cannot be created or written to (permissions, a
    read-only or virtual file system, a full disk); the message gives the operating system's reason."""


class ToolNotFoundError(RooflineError):
    """An external tool (ncu, a GPU, a Python extra) needed for the request is not available."""

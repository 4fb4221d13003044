"""The terminal the CLI prints to."""

from __future__ import annotations

from rich.console import Console

#: Width used when stdout is not a terminal (a pipe, a file, a CI log): rich's default of 80
#: columns would fold the kernel tables into unreadable slivers.
NON_TERMINAL_WIDTH = 200


def stdout_console() -> Console:
    """A console for results: the terminal's width, or a wide fixed width when not a terminal."""
    console = Console(soft_wrap=False)
    return console if console.is_terminal else Console(soft_wrap=False, width=NON_TERMINAL_WIDTH)

"""The installed ``roofline`` command and ``python -m roofline``: :func:`run`.

Its first lines read ahead. When the command line is ``roofline analyze`` with one CSV file, that
file starts being parsed (:func:`roofline.api.read_ahead`: a thread of its own, no pandas) before
pandas, click and the commands are imported, so that the parse runs on the core those imports
(0.3 s of one core) leave idle; the analyze command then takes the parse instead of starting its
own (:func:`roofline.cli.options.read_ahead_of`). The guess is made before click reads the command
line, so it can be wrong (an option's value that is a CSV file); a wrong guess costs a parse that
nothing takes, never a different result: the reader takes a parse only for the very file it reads,
unchanged since (:meth:`roofline.api.ReadAhead.is_for`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from roofline.api import ReadAhead


def run() -> NoReturn:
    """``roofline``: the parse of the profile started (:func:`profile_to_read_ahead`), then
    :func:`roofline.cli.app.main`, then the process ends (:func:`roofline.cli.app.end_process`)."""
    args = sys.argv[1:]
    ahead = _read_ahead(args)
    from roofline.cli.app import end_process, main

    try:
        code = main(args, ahead=ahead)
    finally:
        if ahead is not None:  # a parse the command did not take ends at its next slab
            ahead.cancel()
    end_process(code)


def profile_to_read_ahead(args: Sequence[str]) -> str | None:
    """The CSV file an ``analyze`` command line names, when it names exactly one that exists (and no
    ``--engine``: an out-of-core engine reads files its own way)."""
    if not args or args[0] != "analyze" or any(a == "--engine" or a.startswith("--engine=") for a in args):
        return None
    files = [a for a in args[1:] if a.lower().endswith(".csv") and not a.startswith("-") and os.path.isfile(a)]
    return files[0] if len(files) == 1 else None


def _read_ahead(args: Sequence[str]) -> ReadAhead | None:
    path = profile_to_read_ahead(args)
    if path is None:
        return None
    from roofline import api

    return api.read_ahead(path)

"""Reading ahead: a large Nsight Compute CSV parsed while the rest of a program loads.

:func:`read_ahead` starts the parse of one file in a thread of its own and returns at once; hand
what it returns to :func:`roofline.api.read` (``ahead=``) and the file is not parsed again. The
``roofline`` command does this for the profile an ``analyze`` command line names, before it loads
pandas and its commands (:mod:`roofline.cli.entry`). This module, and what it imports, load no
pandas: importing it costs what the parse needs anyway (numpy and pyarrow).

    >>> from roofline import api
    >>> ahead = api.read_ahead("big.csv")        # doctest: +SKIP
    >>> table = api.read(["big.csv"], ahead=ahead)  # doctest: +SKIP
"""

from __future__ import annotations

from roofline.readers.ncu.ahead import AHEAD_BYTES, ReadAhead, read_ahead

__all__ = ["AHEAD_BYTES", "ReadAhead", "read_ahead"]

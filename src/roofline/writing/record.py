"""A record of the files a command wrote into a folder, so that running it again replaces its own
outputs and nothing else (``roofline demo``).

The record is a ``sha256sum`` file beside the outputs (``sha256sum -c`` checks it): one line per
file, its SHA-256 and its name. A file is the command's own when the record lists it with the
content it has now: a file the command did not write, or one changed since, is not, and stays
protected (``--force`` still overwrites it). Content, not a marker inside the file, decides: a
marker would need one way per format (PNG, SVG, PDF, HTML, JSON) and would still call a file edited
by its user the command's own; comparing with what the command would write now breaks with every
new version of roofline or matplotlib.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from roofline.errors import OutputExistsError

_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


def sha256(path: Path) -> str:
    """The SHA-256 of the file's bytes, in hex."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_record(record: Path) -> dict[str, str] | None:
    """File name -> SHA-256 as ``record`` lists them; ``{}`` when there is no record; None when a
    file of that name exists and is not such a record (then it is somebody else's file)."""
    if not record.exists():
        return {}
    try:
        lines = record.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    found = [_LINE.match(line) for line in lines]
    if not lines or not all(found):
        return None
    return {m.group(2): m.group(1) for m in found if m}


def own_files(record: Path, paths: Iterable[Path]) -> set[Path]:
    """Those of ``paths`` (files in ``record``'s folder) that exist with the content ``record`` lists
    for them: written by the command that keeps the record, unchanged since."""
    listed = read_record(record) or {}
    return {p for p in paths if p.is_file() and listed.get(p.name) == sha256(p)}


def check_replaceable(record: Path, paths: Iterable[Path], *, force: bool) -> None:
    """Raise :class:`~roofline.errors.OutputExistsError`, unless ``force``, when one of ``paths`` (or
    the record itself) exists and is not the command's own (:func:`own_files`)."""
    if force:
        return
    hint = "choose another folder or pass --force to overwrite it"
    listed = read_record(record)
    if listed is None:
        raise OutputExistsError("output file exists and is not a record of what roofline wrote", path=record,
                                hint=hint)
    paths = list(paths)
    own = own_files(record, paths)
    for p in paths:
        if p.exists() and p not in own:
            why = (f"{record.name} there lists what roofline wrote, and not this content" if listed else
                   f"roofline has no record of writing it (no {record.name} there)")
            raise OutputExistsError(f"output file exists: {why}", path=p, hint=hint)


def record_text(paths: Iterable[Path]) -> str:
    """The record of ``paths`` as written now (``sha256sum`` format, names relative to their folder)."""
    return "".join(f"{sha256(p)}  {p.name}\n" for p in paths)

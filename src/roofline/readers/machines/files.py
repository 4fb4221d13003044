"""``read_machine(path)``: ceilings from any machine file we know, recognised by content.

- our JSON (``"schema": "roofline.machine/1"``) -> :meth:`Machine.load`
- ERT ``roofline.json`` (an ``empirical`` section) -> :func:`roofline.readers.machines.ert.read_ert_json`
- ERT ``sum`` text (``... GFLOPs`` lines and ``META_DATA``) -> :func:`roofline.readers.machines.ert.read_ert_sum`
- NERSC plotting input (``memroofs`` / ``comproofs`` lines) -> :func:`roofline.readers.machines.ert.read_nersc_txt`

``pick`` names compute entries of an ERT or NERSC file to use as their precision's ceiling instead of
the highest (:func:`roofline.readers.machines.ert.choose_compute`); :func:`split_pick` reads them from a
machine argument ``FILE#ENTRY[#ENTRY...]`` (``"roofline.json#FP64 Scalar GFLOPs"``).
"""

from __future__ import annotations

import json
import re
from os import PathLike
from pathlib import Path

from roofline.errors import MachineError
from roofline.machine.model import SCHEMA, Machine
from roofline.readers.machines import ert

_SUM_MARK = re.compile(r"^\s*[0-9.eE+-]+\s+(\w+\s+)?GFLOPs\s*$", re.MULTILINE)
_NERSC_MARK = re.compile(r"^\s*(memroofs|comproofs)\s", re.MULTILINE)


#: Separates a machine file from the compute entries picked in it: ``FILE#ENTRY[#ENTRY...]``.
PICK_MARK = "#"


def split_pick(spec: str | PathLike[str]) -> tuple[Path, tuple[str, ...]]:
    """``(file, picked entries)`` of a machine argument: ``"r.json#FP64 Scalar GFLOPs"`` -> (r.json,
    ('FP64 Scalar GFLOPs',)); a file that exists under the whole name, or a name without ``#``, picks nothing."""
    text = str(spec)
    if PICK_MARK not in text or Path(text).exists():
        return Path(text), ()
    head, *picks = text.split(PICK_MARK)
    return Path(head), tuple(p.strip() for p in picks if p.strip())


def read_machine(path: str | PathLike[str], *, pick: tuple[str, ...] | list[str] = ()) -> Machine:
    """Read ceilings from our JSON, an ERT ``roofline.json``, an ERT ``sum`` file or NERSC plotting input;
    ``pick``: compute entries of an ERT or NERSC file to use instead of each precision's highest."""
    p = Path(path)
    if p.is_dir():
        raise MachineError("is a folder, not a machine file", path=p,
                           hint="give the roofline.json (or sum) file inside the ERT results folder")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MachineError("no such file", path=p) from None
    except UnicodeDecodeError:
        raise MachineError("not a text machine file", path=p) from None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MachineError(f"not JSON ({exc})", path=p) from None
        if isinstance(d, dict) and d.get("schema") == SCHEMA:
            if pick:
                raise MachineError(f"picks the compute entry {pick[0]!r}, but this is a roofline machine file, "
                                   "whose ceilings have one value each", path=p,
                                   hint="FILE#ENTRY picks among the compute entries of an ERT or NERSC file")
            return Machine.from_dict(d, path=p)
        if isinstance(d, dict) and "empirical" in d:
            return ert.from_ert_dict(d, path=p, pick=pick)
        raise MachineError("JSON that is neither a roofline machine file nor an ERT roofline.json", path=p,
                           hint=f"a machine file has \"schema\": \"{SCHEMA}\"; ERT's has an 'empirical' section")
    if _NERSC_MARK.search(text):
        return ert.read_nersc_txt(p, pick=pick)
    if "META_DATA" in text and _SUM_MARK.search(text):
        return ert.read_ert_sum(p, pick=pick)
    if stripped.startswith("device,HBMBw"):  # an Omniperf / rocprof-compute roofline.csv (AMD's empirical peaks)
        from roofline.readers.amd.omniperf import read_roofline_csv

        return read_roofline_csv(p, device=int(pick[0]) if pick and pick[0].isdigit() else None)
    raise MachineError("unknown machine file format", path=p,
                       hint="expected our machine JSON, an ERT roofline.json or sum file, NERSC memroofs/comproofs, or an "
                            "Omniperf / rocprof-compute roofline.csv")

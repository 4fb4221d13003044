"""Measured machine files that ship with roofline (``roofline/data/machines/*.json``).

Each is a whole ``roofline machine`` run on one GPU we had at hand, corrected where a ceiling was
later found wrong (its ``metadata.ceiling_sources`` and ``metadata.corrections`` say how). The
analysis takes one, with no ``--machine``, for a profile of the same product: same spec key
(:func:`roofline.machine.specs.spec_for_device_name`) or the same device name. Files are read
when asked for, never at import.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from roofline.machine.specs import spec_for_device_name
from roofline.machine.model import Machine


def shipped_files() -> list[Path]:
    """The measured machine files in the package, sorted by name."""
    root = Path(str(resources.files("roofline") / "data" / "machines"))
    return sorted(root.glob("*.json")) if root.is_dir() else []


def _product(name: str) -> str:
    spec = spec_for_device_name(name)
    return spec.key if spec is not None else " ".join(name.lower().split())


def shipped_machine(gpu: str) -> tuple[Machine, Path] | None:
    """The shipped measured machine of the GPU the driver names ``gpu`` (and its file), or None."""
    want = _product(gpu)
    for path in shipped_files():
        machine = Machine.load(path)
        device = machine.metadata.get("device")
        name = device.get("name") if isinstance(device, dict) else None
        if _product(str(name or machine.name)) == want:
            return machine, path
    return None

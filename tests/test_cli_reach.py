"""The CLI is thin: it reaches the library only through the api, the errors, the units and the views
it prints with (issue 34, item 3). Read from the source by tests/house.py's graph (every import, at
module level or inside a function; ``if TYPE_CHECKING:`` imports left out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import house  # noqa: E402

#: What a CLI module may import from the package: the api, errors, units, the views, its own modules.
ALLOWED = ("roofline.api", "roofline.errors", "roofline.units", "roofline.views", "roofline.cli", "roofline._version")


def _allowed(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in ALLOWED)


def test_the_cli_reaches_only_the_api_errors_units_and_views() -> None:
    graph = house.graph()
    cli = {m: deps for m, deps in graph.items() if m == "roofline.cli" or m.startswith("roofline.cli.")}
    assert len(cli) >= 8, sorted(cli)  # the graph found the CLI's modules
    beyond = {m: sorted(d for d in deps if not _allowed(d)) for m, deps in sorted(cli.items())}
    assert {m: d for m, d in beyond.items() if d} == {}


def test_the_cli_uses_absolute_imports_which_the_graph_sees() -> None:
    # house.py reads ``from roofline.x import y``; a relative import (``from ..x import y``) would slip past it.
    for path in sorted((house.PACKAGE / "cli").rglob("*.py")):
        assert "from ." not in path.read_text(), path


def test_the_api_imports_no_cli_module() -> None:
    graph = house.graph()
    up = {m: sorted(d for d in deps if d.startswith("roofline.cli")) for m, deps in graph.items()
          if m == "roofline.api" or m.startswith("roofline.api.")}
    assert {m: d for m, d in up.items() if d} == {}


@pytest.mark.parametrize("name", ["analyze", "compare", "project", "profile", "save", "measure_machine",
                                  "processor_to_measure", "merge_ranks", "input_files", "cpu_machine_for"])
def test_every_api_name_resolves(name: str) -> None:
    from roofline import api

    assert callable(getattr(api, name))
    assert name in dir(api)


def test_help_loads_neither_the_api_nor_pandas() -> None:
    code = ("import sys\nfrom roofline.cli.app import main\nmain(['--help'])\n"
            "print(sorted(m for m in ('roofline.api', 'pandas', 'numpy', 'roofline.machine.model') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"

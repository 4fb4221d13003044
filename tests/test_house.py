"""The house's shape, read from the package's own source (issue 34): no import cycle, modules small
enough to read in one sitting, a docstring on every package saying what it holds, one Nsight Compute
wing, and no module name that means two things.

The import graph is :mod:`house` (tests/house.py): every import, at module level or inside a function.
The rule on Nsight Compute metric names outside readers/ncu/ and the CLI's reach are tested beside
the code they guard (their own test files).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import house

PACKAGE = house.PACKAGE

#: Most lines a module may have (a few hundred: readable in one sitting).
MAX_LINES = 450

#: Modules allowed past :data:`MAX_LINES`, each with why: declared data, read as tables, not code.
DATA_MODULES = {
    "machine/specs.py": "GPU architecture and product tables (per-SM rates, board figures, their sources)",
    "counting/tensor.py": "the formula table's tensor-core rows: counters per input type and architecture",
    "guidance/rules.py": "the guidance rules as data: metrics, thresholds and source of each rule",
}

#: File names the issue found meaning two things in two places (merge.py in readers and profiling,
#: ceilings.py in analysis and projection, ...): each may be used once at most.
ONCE_ONLY = ("merge.py", "ceilings.py", "ert.py", "names.py", "result.py", "profile.py")

#: Names of modules that do not mean one thing apiece; no two of them may be used together.
EXCLUSIVE = (("measuring.py", "measurement.py"),)

#: File names more than one package uses, each with why that reads well: the same role in sibling
#: rooms (the CPU and GPU benchmarks, a command and the view it prints). A new shared name is a
#: question to answer here, not a habit.
SHARED_NAMES = {
    "measure.py": "bench/cpu and bench/gpu: each room's measurement driver",
    "kernels.py": "bench/cpu and bench/gpu: each room's micro-benchmark kernels",
    "html.py": "views/report and views/projection: each view's HTML page",
    "json_out.py": "views and views/projection: each view's JSON",
    "compare.py": "cli (the command) and views/chart (the chart it draws)",
    "machine.py": "cli (the command) and views/chart (the machine's roofs it draws)",
    "model.py": "machine (the Machine) and projection (the projection's model)",
    "columns.py": "readers/ncu (columns of ncu's CSV) and analysis (columns an analysis adds)",
    "layout.py": "readers/ncu (layouts of ncu's CSV) and views/chart (the chart's layout)",
    "instructions.py": "counting (instruction counters) and views/chart (the instruction roofline)",
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_no_import_cycle() -> None:
    cycles = house.cycles(house.graph())
    assert not cycles, "import cycles (imports inside functions count):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_imports_inside_functions() -> None:
    """The graph would hide a cycle if it read module-level imports only."""
    graph = house.graph()
    assert "roofline.views.report.html" in graph["roofline.writing.analysis_files"]  # imported inside a function


def test_modules_are_small_enough_to_read() -> None:
    declared = set(DATA_MODULES)
    long = {_rel(p): len(p.read_text().splitlines()) for p in _modules()}
    over = {name: n for name, n in long.items() if n > MAX_LINES and name not in declared}
    assert not over, f"modules over {MAX_LINES} lines (split by subject, or declare data in DATA_MODULES): {over}"
    stale = [name for name in declared if name not in long]
    assert not stale, f"declared modules that no longer exist: {stale}"


def test_every_package_says_what_it_holds() -> None:
    folders = sorted({p.parent for p in _modules()})
    missing = []
    for folder in folders:
        init = folder / "__init__.py"
        if not init.exists() or not (ast.get_docstring(ast.parse(init.read_text())) or "").strip():
            missing.append(folder.relative_to(PACKAGE.parent).as_posix())
    assert not missing, f"packages without a docstring in __init__.py: {missing}"


def test_every_nsight_compute_reader_is_in_the_ncu_wing() -> None:
    readers = PACKAGE / "readers"
    flat = [_rel(p) for p in readers.rglob("ncu*.py") if p.parent != readers / "ncu"]
    assert not flat, f"Nsight Compute readers outside readers/ncu/: {flat}"


def _folders_by_name() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for p in _modules():
        if p.name != "__init__.py":
            where[p.name].append(p.parent.relative_to(PACKAGE.parent).as_posix())
    return where


def test_names_the_issue_found_twice_are_used_once() -> None:
    where = _folders_by_name()
    twice = {name: where[name] for name in ONCE_ONLY if len(where.get(name, [])) > 1}
    assert not twice, f"module names used in more than one package: {twice}"
    for group in EXCLUSIVE:
        used = [name for name in group if name in where]
        assert len(used) <= 1, f"modules whose names do not tell them apart: {used}"


def test_no_new_module_name_shared_across_packages() -> None:
    where = _folders_by_name()
    shared = {name: folders for name, folders in where.items() if len(folders) > 1}
    new = {name: folders for name, folders in shared.items() if name not in SHARED_NAMES}
    assert not new, f"module names used in several packages (rename, or say why in SHARED_NAMES): {new}"
    gone = [name for name in SHARED_NAMES if name not in shared]
    assert not gone, f"no longer shared: take these out of SHARED_NAMES: {gone}"

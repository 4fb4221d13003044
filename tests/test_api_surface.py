"""The public Python API: what `import roofline` gives, how cheaply, and what the README promises.

Each check runs in a fresh interpreter: laziness can only be seen before anything else imported
the submodules.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Libraries `import roofline` must not load: plotting, GPU, PyTorch, JIT.
HEAVY = ("matplotlib", "plotly", "torch", "cupy", "cuda", "numba", "pynvml", "nvtx", "jax", "triton")


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_is_fast_and_loads_no_heavy_library() -> None:
    # The best of three fresh interpreters: a busy machine slows one run, not all three.
    code = (
        "import json, sys, time\n"
        "t = time.perf_counter()\nimport roofline\nt = time.perf_counter() - t\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "print(json.dumps({'t': t, 'heavy': heavy, 'pandas': 'pandas' in sys.modules}))"
    )
    runs = [json.loads(_python(code)) for _ in range(3)]
    assert min(r["t"] for r in runs) < 0.3, runs
    assert runs[0]["heavy"] == [] and not runs[0]["pandas"], runs[0]


def test_resolving_the_analysis_api_loads_no_plotting_gpu_or_torch_library() -> None:
    code = (
        "import sys, roofline\n"
        "for name in ('read', 'analyze', 'load_machine', 'compare', 'phase', 'measure', 'Machine'):\n"
        "    getattr(roofline, name)\n"
        "roofline.machine.theoretical; roofline.bench.measure_cpu; roofline.bench.measure_gpu\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    assert _python(code).strip() == "[]"


def _documented_names() -> list[str]:
    """Every dotted ``roofline.x.y`` Python name in the README and docs (file names excluded, and
    NVTX range names such as ``roofline.module:<path>``, which a colon follows)."""
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = set()
    for path in texts:
        for m in re.finditer(r"(?<![\w/.-])roofline(?:\.[A-Za-z_]\w*)+(?![\w:])", path.read_text(encoding="utf-8")):
            name = m.group(0)
            if name.rsplit(".", 1)[1] in {"json", "csv", "png", "html", "svg", "pdf", "txt", "md"}:
                continue  # a file name such as ERT's roofline.json
            found.add(name)
    return sorted(found)


def test_the_readme_names_enough_to_check() -> None:
    names = _documented_names()
    for expected in ("roofline.compare", "roofline.machine.theoretical", "roofline.torch.annotate",
                     "roofline.analyze", "roofline.phase"):
        assert expected in names


def test_every_documented_name_resolves_after_import_roofline() -> None:
    names = _documented_names()
    code = (
        "import json, roofline\n"
        "bad = []\n"
        f"for dotted in {names!r}:\n"
        "    obj = roofline\n"
        "    try:\n"
        "        for part in dotted.split('.')[1:]:\n"
        "            obj = getattr(obj, part)\n"
        "    except AttributeError as exc:\n"
        "        bad.append(f'{dotted}: {exc}')\n"
        "print(json.dumps(bad))"
    )
    assert json.loads(_python(code)) == []


def test_compare_machine_and_torch_after_import_roofline() -> None:
    code = (
        "import roofline\n"
        "print(callable(roofline.compare), roofline.machine.theoretical('v100-sxm2').name,\n"
        "      roofline.torch.__name__, callable(roofline.torch.annotate))"
    )
    out = _python(code).split()
    assert out[0] == "True" and out[-2:] == ["roofline.torch", "True"]
    assert "V100" in " ".join(out[1:-2])


def test_compare_stays_a_function_when_its_module_was_imported_first() -> None:
    # A submodule named like a package attribute replaces the attribute when it is imported.
    code = "import roofline.comparison, roofline.cli.compare, roofline\nprint(callable(roofline.compare))"
    assert _python(code).strip() == "True"


def test_dir_lists_the_public_api_for_completion() -> None:
    import roofline

    listed = dir(roofline)
    for name in ("analyze", "read", "plot", "compare", "load_machine", "machine", "torch", "phase",
                 "measure", "Analysis", "Machine", "__version__"):
        assert name in listed
    for name in roofline.__all__:
        assert getattr(roofline, name) is not None
    assert "theoretical" in dir(roofline.machine) and "measure_gpu" in dir(roofline.bench)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        roofline.nonexistent  # noqa: B018


def test_analysis_data_are_properties() -> None:
    from roofline.analysis.result import Analysis
    from roofline.comparison import Comparison

    for cls, names in ((Analysis, ("ranked", "totals", "zero_flop_mask", "total_time_s")), (Comparison, ("totals",))):
        for name in names:
            assert isinstance(getattr(cls, name), property), f"{cls.__name__}.{name}"

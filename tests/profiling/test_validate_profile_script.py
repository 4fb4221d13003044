"""benchmarks/validate_profile_gpu.py imports, answers --help, and reads the kernel tables it asks for
(the checks themselves need a GPU: see benchmarks/README-profile.md)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from roofline import kernels
from roofline.readers import kernel_json

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "validate_profile_gpu.py"


@pytest.fixture
def script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("validate_profile_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_help_runs_in_a_process_of_its_own() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--parts" in out.stdout and "--ncu" in out.stdout


def test_unknown_part_is_a_usage_error(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as err:
        script.main([str(tmp_path / "out"), "--parts", "nonsense"])
    assert err.value.code == 2


def test_table_reads_the_kernel_table_file_profile_writes(script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = kernels.from_records([{"kernel_name": "saxpy", "time_s": 2e-6, "fp32_flops": 2048.0, "dram_bytes": 12288.0}])
    (tmp_path / "saxpy.kernels.json").write_text(kernel_json.to_json(kernels.KernelTable(frame=frame)))
    table = script._table(tmp_path, "saxpy")
    assert table.frame["kernel_name"].tolist() == ["saxpy"]
    assert script._sum(table.frame, "dram_bytes") == 12288.0

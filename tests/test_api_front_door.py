"""The api as the CLI's one library: real return types, a pandas DataFrame taken as a kernel table,
and what the CLI reaches through it (measuring, files, profiling) with the behaviour it had."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from roofline import api
from roofline.analysis.result import Analysis
from roofline.comparison import Comparison
from roofline.errors import InputError
from roofline.projection import Projection


@pytest.fixture(scope="module")
def example() -> tuple[list[Path], Path]:
    return api.example_files()


def test_analyze_compare_and_project_return_their_types(example: tuple[list[Path], Path]) -> None:
    profiles, machine = example
    table = api.read(profiles, fp16="paper")
    result = api.analyze(table, machine)
    assert isinstance(result, Analysis)
    assert isinstance(api.compare(table, table, machine), Comparison)
    assert isinstance(api.project(table, "h100-sxm", source=machine), Projection)


def test_a_dataframe_is_analysed_as_the_kernel_table_it_holds(example: tuple[list[Path], Path]) -> None:
    profiles, machine = example
    table = api.read(profiles, fp16="paper")
    from_table = api.analyze(table, machine)
    from_frame = api.analyze(table.frame, machine)
    pd.testing.assert_frame_equal(from_frame.frame, from_table.frame)
    assert from_frame.totals == from_table.totals


def test_a_dataframe_that_is_no_kernel_table_is_refused_by_name() -> None:
    frame = pd.DataFrame({"launch_id": [0, 1], "time_s": [1e-3, 2e-3]})
    with pytest.raises(InputError, match="kernel table lacks columns") as err:
        api.analyze(frame, "v100-sxm2")
    assert "no such file" not in err.value.render()
    assert "DataFrame" in err.value.render()


def test_the_cpu_machine_rule_lives_with_the_benchmarks() -> None:
    from roofline.bench.cpu import cache
    from roofline.machine import resolve

    assert not hasattr(resolve, "cpu_machine_for")
    table = api.read(api.example_files()[0], fp16="paper")  # GPU work: no CPU ceilings, nothing measured
    assert cache.cpu_machine_for(table, measure=False) == (None, "")
    assert api.cpu_machine_for(table, measure=False) == (None, "")


def test_both_processors_asked_for_is_refused_before_measuring() -> None:
    with pytest.raises(InputError, match="--cpu and --gpu exclude each other"):
        api.processor_to_measure(gpu=0, cpu=True)
    assert api.processor_to_measure(cpu=True) == api.Processor("cpu")


def test_the_ert_document_keeps_flop_ceilings_only() -> None:
    theory = api.theoretical("h100-sxm")
    doc = api.ert_document(theory)
    assert "int32" in theory.compute and "warp_inst" in theory.compute
    names = " ".join(str(entry) for entry in doc["empirical"]["gflops"]["data"])
    assert "INT32" not in names and "WARP_INST" not in names


def test_input_files_name_the_profiles_in_a_folder_and_the_machine_file(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x")
    machine = tmp_path / "m.json"
    machine.write_text("{}")
    found = api.input_files([tmp_path, "-"], [f"{machine}#FP64 Scalar GFLOPs"])
    assert tmp_path / "a.csv" in found and machine in found and Path("-") in found

"""Ranks from launcher environments, per-rank names, and merging per-rank kernel tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roofline import kernels
from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.readers import kernel_json as table_file
from roofline.profiling.merge import merge_tables, rank_of
from roofline.profiling.ranks import rank_from_env, ranked
from roofline.profiling.settings import ProfileSettings


@pytest.mark.parametrize("env, rank", [
    ({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}, 3),          # torchrun
    ({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "6"}, 5),   # Open MPI
    ({"PMI_RANK": "2", "PMI_SIZE": "4"}, 2),                           # MPICH, Intel MPI
    ({"PMIX_RANK": "7"}, 7),                                          # PMIx
    ({"SLURM_PROCID": "11", "SLURM_NTASKS": "16"}, 11),                # srun
    ({"LOCAL_RANK": "1"}, 1),                                         # only a node-local rank
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, None),                # a one-task job has no rank
    ({}, None),
    ({"RANK": "x"}, None),
])
def test_rank_from_the_launcher_environment(env: dict, rank: int | None) -> None:
    assert rank_from_env(env) == rank


def test_per_rank_output_names(tmp_path: Path) -> None:
    assert ranked("out/run", 3) == Path("out/run.rank3")
    assert ranked("run", None) == Path("run")
    s = ProfileSettings(command=("x",), output=tmp_path / "run", rank=3)
    assert s.path(".ncu-rep") == tmp_path / "run.rank3.ncu-rep"
    assert rank_of("run.rank12.kernels.json") == 12 and rank_of("run.kernels.json") is None


def _table(pid: int, times: list[float]) -> KernelTable:
    frame = kernels.from_records([
        {"kernel_name": f"k{i}", "process_id": pid, "time_s": t, "fp32_flops": 10.0 * (i + 1), "dram_bytes": 4.0,
         "phase": "forward"}
        for i, t in enumerate(times)])
    import pandas as pd

    metrics = pd.DataFrame({"gpu__time_duration.sum": times}, index=frame.index)
    return KernelTable(frame=frame, metrics=metrics, sources=(f"p{pid}",), warnings=(f"w{pid}",))


def test_kernel_table_file_round_trips_unknowns(tmp_path: Path) -> None:
    t = _table(10, [1e-3, 2e-3])
    path = tmp_path / "a.kernels.json"
    path.write_text(table_file.to_json(t))
    back = table_file.read(path)
    assert back.frame["time_s"].tolist() == [1e-3, 2e-3]
    assert np.isnan(back.frame["l1_bytes"]).all()  # unknown stays unknown
    assert back.frame["phase"].tolist() == ["forward", "forward"]
    assert back.warnings == ("w10",) and back.metrics["gpu__time_duration.sum"].tolist() == [1e-3, 2e-3]
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError):
        table_file.read(tmp_path / "bad.json")


def test_merge_combines_ranks_and_keeps_their_identity(tmp_path: Path) -> None:
    paths = []
    for rank, pid in ((0, 100), (1, 101), (2, 102)):
        p = tmp_path / f"run.rank{rank}.kernels.json"
        p.write_text(table_file.to_json(_table(pid, [1e-3 * (rank + 1), 1e-4])))
        paths.append(p)
    merged = merge_tables(paths)
    assert len(merged) == 6
    assert merged.metrics["rank"].tolist() == [0, 0, 1, 1, 2, 2]
    assert merged.frame["process_id"].tolist() == [100, 100, 101, 101, 102, 102]
    assert merged.frame["source"].tolist()[0] == "run.rank0.kernels.json"
    assert merged.frame["time_s"].sum() == pytest.approx(1e-3 * 6 + 3e-4)
    by_name = kernels.aggregate(merged.frame, by="name")
    assert by_name.set_index("kernel_name").loc["k0", "launches"] == 3
    with pytest.raises(InputError):
        merge_tables([])


def test_merge_command_writes_one_table(tmp_path: Path) -> None:
    from roofline.cli.app import main

    for rank in (0, 1):
        (tmp_path / f"r.rank{rank}.kernels.json").write_text(table_file.to_json(_table(rank, [1e-3])))
    out = tmp_path / "all.kernels.json"
    code = main(["merge", str(tmp_path / "r.rank0.kernels.json"), str(tmp_path / "r.rank1.kernels.json"),
                 "-o", str(out)])
    assert code == 0
    assert table_file.read(out).frame["process_id"].tolist() == [0, 1]
    assert main(["merge", str(tmp_path / "r.rank0.kernels.json"), "-o", str(out)]) == 2  # exists, no --force


def test_analyze_reads_the_kernel_table_files_that_profile_and_merge_write(tmp_path, capsys):
    """`roofline analyze run.kernels.json` works, alone or with ncu files beside it."""
    from roofline.cli.app import main
    from roofline.kernels import from_records
    from roofline.kernels import KernelTable
    from roofline.readers import read_profile

    frame = from_records([dict(kernel_name="conv<float>", phase="forward", time_s=2e-3, fp32_flops=4e9,
                               fp64_flops=0.0, fp16_flops=0.0, tensor_flops=0.0, dram_bytes=1e8, estimated=True)])
    path = tmp_path / "run.kernels.json"
    path.write_text(table_file.to_json(KernelTable(frame=frame, sources=("run",))))
    table = read_profile([path])
    assert table.frame["estimated"].all() and table.frame["fp32_flops"].iloc[0] == 4e9
    ncu = Path(__file__).parents[1] / "data" / "ncu" / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
    both = read_profile([ncu, path])
    assert len(both) == 16 + 1 and both.frame["kernel_name"].iloc[-1] == "conv<float>"
    assert main(["analyze", str(path), "--machine", "h100-sxm", "--by", "phase"]) == 0
    assert "conv" in capsys.readouterr().out

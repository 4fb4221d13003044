"""Ranks from launcher environments, per-rank names, and merging per-rank kernel tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline import kernels
from roofline.errors import InputError
from roofline.kernels import KernelTable
from roofline.readers import kernel_json as table_file
from roofline.profiling.rank_tables import merge_tables, rank_of
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
    assert np.isnan(widened(back.frame)["l1_bytes"]).all()  # unknown stays unknown (left out: known-missing)
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


# -- Parquet kernel tables: the streaming merge (roofline merge -o X.parquet) -----------------------
# Ground truth: the real V100 CUTLASS GEMM details page (11 launches; 6 SIMT GEMMs of 17,182,415,257,600
# FLOPs, 1 tensor-op GEMM of 17,180,288,614,400, 4 of 0) and the B200 raw page (16 launches, no FLOP
# counters, 464 raw metrics), tests/data/ncu.
DATA = Path(__file__).parents[1] / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
B200 = DATA / "b200_sdpa_flash" / "b200_raw_units_torch_sdpa_flash.csv"
V100_FLOPS = 6 * 17182415257600 + 17180288614400


def _rank_files(tmp_path: Path, source: Path = V100_GEMM, ranks: int = 3, fmt: str = "parquet") -> list[Path]:
    """Per-rank kernel tables of a real export: rank r runs (r + 1) times longer, as process 100 + r."""
    import dataclasses

    import pandas as pd

    from roofline import api
    from roofline.readers import kernel_parquet

    base = api.read(source)
    paths = []
    for r in range(ranks):
        frame = base.frame.copy()
        frame["time_s"] = frame["time_s"] * (r + 1)
        frame["process_id"] = pd.array([100 + r] * len(frame), dtype="Int64")
        table = dataclasses.replace(base, frame=frame)
        if fmt == "parquet":
            p = tmp_path / f"run.rank{r}.parquet"
            p.write_bytes(kernel_parquet.to_bytes(table))
        else:
            p = tmp_path / f"run.rank{r}.kernels.json"
            p.write_text(table_file.to_json(table))
        paths.append(p)
    return paths


def test_streaming_merge_of_three_real_ranks(tmp_path: Path) -> None:
    from roofline import api
    from roofline.profiling.rank_tables import merge_to_parquet
    from roofline.readers import read_profile

    paths = _rank_files(tmp_path)
    out = tmp_path / "all.parquet"
    summary = merge_to_parquet(paths, out)
    assert (summary.files, summary.ranks, summary.rows) == (3, 3, 33)
    merged = read_profile(out)
    one = api.read(V100_GEMM).frame
    assert len(merged) == 33
    assert merged.metrics["rank"].tolist() == [0] * 11 + [1] * 11 + [2] * 11
    assert merged.frame["source"].tolist() == [f"run.rank{r}.parquet" for r in range(3) for _ in range(11)]
    assert merged.frame["process_id"].tolist() == [100 + r for r in range(3) for _ in range(11)]
    assert merged.frame["time_s"].sum() == pytest.approx(6 * one["time_s"].sum(), rel=1e-12)
    assert merged.frame["flops"].sum() == 3 * V100_FLOPS
    assert widened(merged.frame)["int_ops"].isna().all()  # unknown in every rank stays unknown
    assert merged.sources == tuple(str(p) for p in paths)
    assert merged.metrics["dram__bytes.sum"].sum() == 3 * api.read(V100_GEMM).metrics["dram__bytes.sum"].sum()
    by_name = kernels.aggregate(merged.frame, by="name")
    assert by_name["launches"].sum() == 33 and by_name["flops"].sum() == 3 * V100_FLOPS
    in_memory = merge_tables(paths)  # the same merge, held in memory (for .kernels.json outputs)
    import pandas as pd

    pd.testing.assert_frame_equal(widened(merged.frame), widened(in_memory.frame))
    pd.testing.assert_frame_equal(merged.metrics, in_memory.metrics, check_dtype=False)


def test_streaming_merge_reads_kernel_json_and_mixed_metric_sets(tmp_path: Path) -> None:
    from roofline.profiling.rank_tables import merge_to_parquet
    from roofline.readers import read_profile

    (tmp_path / "p").mkdir()
    (tmp_path / "j").mkdir()
    parquet = merge_to_parquet(_rank_files(tmp_path / "p"), tmp_path / "p.parquet")
    from_json = merge_to_parquet(_rank_files(tmp_path / "j", fmt="json"), tmp_path / "j.parquet")
    assert parquet.rows == from_json.rows == 33
    a, b = read_profile(tmp_path / "p.parquet"), read_profile(tmp_path / "j.parquet")
    assert a.frame.drop(columns="source").equals(b.frame.drop(columns="source"))
    assert b.frame["source"].iloc[0] == "run.rank0.kernels.json"
    # a V100 rank and a B200 rank: every metric of either, unknown where a rank lacks it
    b200 = _rank_files(tmp_path / "j", source=B200, ranks=1)[0]
    mixed = tmp_path / "mixed.parquet"
    assert merge_to_parquet([tmp_path / "p" / "run.rank0.parquet", b200], mixed).rows == 11 + 16
    table = read_profile(mixed)
    assert table.metrics["dram__bytes.sum"].iloc[:11].notna().all() and table.metrics["dram__bytes.sum"].iloc[11:].isna().all()
    assert table.metrics["gpu__time_duration.sum"].iloc[:11].isna().all()
    assert table.frame["flops"].iloc[:11].sum() == V100_FLOPS and table.frame["flops"].iloc[11:].isna().all()


def test_streaming_merge_refuses_mixed_fp16_conventions_before_writing(tmp_path: Path) -> None:
    from roofline import api
    from roofline.profiling.rank_tables import merge_to_parquet
    from roofline.readers import kernel_parquet

    ncu = _rank_files(tmp_path, ranks=1)[0]
    profiles, _ = api.example_files()
    paper = tmp_path / "run.rank1.parquet"
    paper.write_bytes(kernel_parquet.to_bytes(api.read(profiles, fp16="paper")))
    (tmp_path / "j").mkdir()
    ncu_json = _rank_files(tmp_path / "j", fmt="json", ranks=1)[0]
    out = tmp_path / "all.parquet"
    for inputs in ([ncu, paper], [paper, ncu_json]):  # Parquet footers alone; then a .kernels.json read
        with pytest.raises(InputError, match=r"different conventions \(ncu, paper\)"):
            merge_to_parquet(inputs, out)
        assert not out.exists() and not any(p.name.startswith(".all.parquet") for p in tmp_path.iterdir())


def test_merge_command_writes_parquet_by_suffix(tmp_path: Path, capsys) -> None:
    from roofline.cli.app import main
    from roofline.readers import read_profile

    paths = [str(p) for p in _rank_files(tmp_path)]
    out = tmp_path / "all.parquet"
    assert main(["merge", *paths, "-o", str(out)]) == 0
    assert "merged 3 files (3 ranks, 33 rows)" in capsys.readouterr().err
    before = out.read_bytes()
    assert main(["merge", *paths, "-o", str(out)]) == 2  # exists, no --force
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
    assert main(["merge", *paths, str(out), "-o", str(out), "--force"]) == 2  # never over an input
    assert main(["merge", *paths, "-o", str(out), "--force"]) == 0
    assert len(read_profile(out)) == 33
    as_json = tmp_path / "all.kernels.json"
    assert main(["merge", *paths, "-o", str(as_json)]) == 0  # today's format from Parquet inputs
    assert table_file.read(as_json).frame["flops"].sum() == 3 * V100_FLOPS
    assert main(["analyze", str(out), "--machine", "v100-pcie", "-q"]) == 0


def test_merge_refuses_a_parquet_file_that_is_not_a_kernel_table(tmp_path: Path, capsys) -> None:
    import pandas as pd

    from roofline.cli.app import main

    foreign = tmp_path / "run.rank1.parquet"
    pd.DataFrame({"x": [1.0]}).to_parquet(foreign)
    out = tmp_path / "all.parquet"
    assert main(["merge", str(_rank_files(tmp_path, ranks=1)[0]), str(foreign), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(foreign) in err and "not a roofline kernel table" in err and "Traceback" not in err
    assert not out.exists()


def test_profile_writes_a_parquet_table_per_rank(tmp_path: Path, fake_ncu: Path, monkeypatch) -> None:
    import sys

    from roofline.cli.app import main
    from roofline.readers import read_profile

    monkeypatch.setenv("SLURM_PROCID", "2")
    monkeypatch.setenv("SLURM_NTASKS", "4")
    code = main(["profile", "--arch", "9.0", "-o", str(tmp_path / "run"), "--parquet", str(tmp_path / "k.parquet"),
                 "-q", "--", sys.executable, "-c", "pass"])
    assert code == 0
    table = read_profile(tmp_path / "k.rank2.parquet")
    from_json = table_file.read(tmp_path / "run.rank2.kernels.json")  # the same launches, beside it as before
    assert len(table) == len(from_json) == 16
    assert table.frame["time_s"].tolist() == from_json.frame["time_s"].tolist()
    assert table.frame["flops"].isna().all()  # the recorded B200 page has no FLOP counters

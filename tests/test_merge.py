"""Merging one-metric-per-file ncu runs, and the timing-source rule."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from roofline.errors import InputError
from roofline.readers import read_profile
from roofline.readers.ncu.csv_export import read_ncu_csv

DATA = Path(__file__).parent / "data" / "ncu"
DEEPCAM = DATA / "v100_deepcam_lamb"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"


def test_deepcam_twelve_files_one_row_per_launch():
    files = sorted(DEEPCAM.glob("out.*"))
    assert len(files) == 12
    t = read_profile(files)
    assert len(t.frame) == 35
    assert len(t.metrics.columns) == 12  # one metric per file, all kept
    single = read_ncu_csv(DEEPCAM / "out.dram__bytes.sum")
    assert t.frame["dram_bytes"].tolist() == single.metrics["dram__bytes.sum"].tolist()
    cycles = read_ncu_csv(DEEPCAM / "out.sm__cycles_elapsed.avg").metrics["sm__cycles_elapsed.avg"].to_numpy()
    clock = read_ncu_csv(DEEPCAM / "out.sm__cycles_elapsed.avg.per_second").metrics.iloc[:, 0].to_numpy()
    np.testing.assert_allclose(t.frame["time_s"].to_numpy(), cycles / clock, rtol=1e-15)
    assert len(t.sources) == 12


def _inflated_copy(tmp_path: Path) -> Path:
    """The V100 GEMM export as a second, instrumented pass: cycles x 150, an sm__sass metric, no others."""
    lines = V100_GEMM.read_text().splitlines(keepends=True)
    out = []
    for line in lines:
        if not line.startswith('"') or line.startswith('"ID"'):
            out.append(line)
            continue
        row = next(csv.reader([line]))
        if row[12] == "sm__cycles_elapsed.avg":
            row[14] = f"{float(row[14].replace(',', '')) * 150:,.2f}"
        elif row[12] not in ("sm__cycles_elapsed.avg.per_second", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"):
            continue
        out.append(",".join(f'"{v}"' for v in row) + "\n")
    p = tmp_path / "instrumented_pass.csv"
    p.write_text("".join(out))
    return p


def _timing_only_copy(tmp_path: Path) -> Path:
    lines = V100_GEMM.read_text().splitlines(keepends=True)
    keep = [l for l in lines if not l.startswith('"') or l.startswith('"ID"') or '"sm__cycles_elapsed.avg' in l or '"dram__bytes.sum"' in l]
    p = tmp_path / "timing_pass.csv"
    p.write_text("".join(keep))
    return p


@pytest.mark.parametrize("instrumented_first", [True, False])
def test_timing_comes_from_the_uninstrumented_input(tmp_path, instrumented_first):
    clean = _timing_only_copy(tmp_path)
    inflated = _inflated_copy(tmp_path)
    paths = [inflated, clean] if instrumented_first else [clean, inflated]
    t = read_profile(paths)
    truth = read_profile(V100_GEMM).frame["time_s"].to_numpy()
    np.testing.assert_allclose(t.frame["time_s"].to_numpy(), truth, rtol=1e-12)
    assert any("timing taken from timing_pass.csv" in w and "instrumented_pass.csv" in w for w in t.warnings)
    # the instrumented pass still supplies its instruction counts
    assert t.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"].notna().all()
    assert "fp32_flops unknown" in " ".join(t.warnings)  # fadd/fmul were in neither file


def test_instrumented_timing_alone_is_used_but_not_preferred(tmp_path):
    t = read_profile(_inflated_copy(tmp_path))
    truth = read_profile(V100_GEMM).frame["time_s"].to_numpy()
    np.testing.assert_allclose(t.frame["time_s"].to_numpy(), 150 * truth, rtol=1e-6)


def test_mismatched_kernel_names_are_refused_within_one_process(tmp_path):
    # The same process (60518) and the same launch IDs, but another kernel at one of them:
    # the copy claims to be the run it contradicts.
    src = DEEPCAM / "out.dram__bytes.sum"
    text = src.read_text().replace("cleanup(float*", "renamed_kernel(float*", 1)
    other = tmp_path / "out.dram__bytes.sum"
    other.write_text(text)
    with pytest.raises(InputError) as err:
        read_profile([src, other])
    assert "do not describe the same launches" in str(err.value)
    assert "(1 launch differs)" in str(err.value)
    assert str(other) in str(err.value)


def test_mismatched_kernel_names_in_another_process_are_another_run(tmp_path):
    # The L2 file is process 61036, the renamed DRAM copy process 60518: two runs, side by side.
    src = DEEPCAM / "out.dram__bytes.sum"
    other = tmp_path / "renamed.csv"
    other.write_text(src.read_text().replace("cleanup(float*", "renamed_kernel(float*", 1))
    t = read_profile([DEEPCAM / "out.lts__t_bytes.sum", other])
    assert t.frame["run"].tolist() == ["out.lts__t_bytes.sum"] * 35 + ["renamed"] * 35
    assert t.frame["launch_id"].tolist() == list(range(35)) * 2
    renamed = t.frame["kernel_name"].str.startswith("renamed_kernel(float*")
    assert renamed.sum() == 1 and t.frame.loc[renamed, "run"].tolist() == ["renamed"]
    single = read_ncu_csv(src).metrics["dram__bytes.sum"].tolist()
    assert t.frame["dram_bytes"].iloc[35:].tolist() == single
    assert t.frame["dram_bytes"].iloc[:35].isna().all() and t.frame["l2_bytes"].iloc[35:].isna().all()


def test_different_programs_are_two_runs():
    gemm_launches = len(read_ncu_csv(V100_GEMM).ids)
    t = read_profile([DEEPCAM / "out.lts__t_bytes.sum", V100_GEMM])
    assert len(t.frame) == 35 + gemm_launches
    assert t.frame["run"].tolist() == (["out.lts__t_bytes.sum"] * 35
                                       + ["v100pcie_details_cutlass_gemm_ncu2022"] * gemm_launches)
    assert t.frame["process_id"].tolist() == [61036] * 35 + [24103] * gemm_launches
    assert t.frame["source"].tolist() == ["out.lts__t_bytes.sum"] * 35 + [V100_GEMM.name] * gemm_launches


def test_the_deepcam_set_is_one_run():
    t = read_profile(sorted(DEEPCAM.glob("out.*")))
    assert t.frame["run"].isna().all()


def test_conflicting_values_keep_the_first_with_a_warning(tmp_path):
    a = tmp_path / "a.csv"
    shutil.copy(DEEPCAM / "out.dram__bytes.sum", a)
    b = tmp_path / "b.csv"
    lines = (DEEPCAM / "out.dram__bytes.sum").read_text().splitlines(keepends=True)
    b.write_text("".join(l.replace('"6976"', '"7000"') if l.startswith('"0"') else l for l in lines))
    t = read_profile([a, b])
    assert t.frame["dram_bytes"].iloc[0] == 6976
    assert any("dram__bytes.sum differs between a.csv and b.csv" in w for w in t.warnings)

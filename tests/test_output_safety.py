"""Outputs never write over what standard input reads, and an output that cannot be written is one
message naming it and the operating system's reason, exit 2, never "internal error" (issue 32).

Data: the real V100 CUTLASS GEMM details page (tests/data/ncu/v100_cutlass_gemm, provenance there),
11 launches of 4 kernels whose FLOPs sum to 120,274,780,160,000 (see tests/test_cli_conventions.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.cli.app import main

DATA = Path(__file__).parent / "data" / "ncu"
V100_GEMM = DATA / "v100_cutlass_gemm" / "v100pcie_details_cutlass_gemm_ncu2022.csv"
TOTAL_FLOPS = 6 * 17182415257600 + 17180288614400
SRC = str(Path(__file__).parents[1] / "src")


def _run(args: list[str], *, stdin: Path | bytes | None = None,
         prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``python -m roofline ARGS`` with standard input opened on the file ``stdin`` (``< file``) or fed
    ``stdin``'s bytes through a pipe."""
    env = {**os.environ, "PYTHONPATH": SRC}
    cmd = [*prefix, sys.executable, "-m", "roofline", *args]
    if isinstance(stdin, Path):
        with stdin.open("rb") as fh:
            return subprocess.run(cmd, stdin=fh, capture_output=True, text=True, env=env, timeout=120)
    return subprocess.run(cmd, input=stdin.decode() if stdin else None, capture_output=True, text=True, env=env,
                          timeout=120)


# -- standard input is an input ----------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    ["analyze", "-", "--json", "{victim}"],
    ["analyze", "-", "--csv", "{victim}"],
    ["analyze", "-", "--parquet", "{victim}"],
    ["compare", "-", str(V100_GEMM), "--json", "{victim}"],
    ["project", "-", "--to", "a100-pcie", "--json", "{victim}"],
    ["merge", "-", "-o", "{victim}"],
], ids=["analyze-json", "analyze-csv", "analyze-parquet", "compare", "project", "merge"])
def test_the_file_standard_input_reads_is_never_an_output_even_with_force(tmp_path, command):
    """``roofline analyze - --json victim.csv --force < victim.csv`` wrote its JSON over the profile it read."""
    victim = tmp_path / "victim.csv"
    victim.write_bytes(V100_GEMM.read_bytes())
    args = [a.replace("{victim}", str(victim)) for a in command]
    done = _run([*args, "--force"], stdin=victim)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("roofline: error:") == 1 and "Traceback" not in done.stderr
    assert f"{victim}: the output is the file standard input (-) reads" in done.stderr
    assert victim.read_bytes() == V100_GEMM.read_bytes()


def test_standard_input_is_compared_by_device_and_inode(tmp_path):
    """A hard link is the same file under another name: refused. A pipe names no file, and a copy is
    another file: both write, and the JSON holds the profile's FLOPs."""
    victim = tmp_path / "victim.csv"
    victim.write_bytes(V100_GEMM.read_bytes())
    link = tmp_path / "link.csv"
    os.link(victim, link)
    done = _run(["analyze", "-", "--json", str(victim), "--force", "-q"], stdin=link)
    assert done.returncode == 2 and "standard input (-) reads" in done.stderr
    assert victim.read_bytes() == V100_GEMM.read_bytes()

    out = tmp_path / "out.json"
    out.write_bytes(V100_GEMM.read_bytes())  # a copy of the input, not the input: --force replaces it
    done = _run(["analyze", "-", "--json", str(out), "--force", "-q"], stdin=victim)
    assert done.returncode == 0, done.stderr
    assert sum(k["flops"]["total"] or 0 for k in json.loads(out.read_text())["kernels"]) == TOTAL_FLOPS
    done = _run(["analyze", "-", "--json", str(victim), "--force", "-q"], stdin=V100_GEMM.read_bytes())
    assert done.returncode == 0, done.stderr  # through a pipe: standard input is no file to protect
    assert json.loads(victim.read_text())["schema"] == "roofline.analysis/1"


# -- outputs that cannot be written --------------------------------------------------------------------
#: /proc takes no new files, whoever asks (root too); its folders cannot be made either.
PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not (PROC / "self").exists(),
                                reason="needs Linux's /proc (a file system that takes no new files)")
ANALYZE = ["analyze", str(V100_GEMM), "-m", "v100-pcie"]
#: One command per output kind; {t} is the unwritable target.
KINDS = {
    "png": [*ANALYZE, "--png", "{t}.png"], "svg": [*ANALYZE, "--png", "{t}.svg"], "pdf": [*ANALYZE, "--png", "{t}.pdf"],
    "html": [*ANALYZE, "--html", "{t}.html"], "json": [*ANALYZE, "--json", "{t}.json"],
    "csv": [*ANALYZE, "--csv", "{t}.csv"], "parquet": [*ANALYZE, "--parquet", "{t}.parquet"],
    "compare-json": ["compare", str(V100_GEMM), str(V100_GEMM), "--json", "{t}.json"],
    "project-json": ["project", str(V100_GEMM), "--from", "v100-pcie", "--to", "a100-pcie", "--json", "{t}.json"],
    "merge-json": ["merge", str(V100_GEMM), "-o", "{t}.kernels.json"],
    "merge-parquet": ["merge", str(V100_GEMM), "-o", "{t}.parquet"],
    "machine-o": ["machine", "--spec", "h100-sxm", "-o", "{t}.json"],
    "machine-ert-json": ["machine", "--spec", "h100-sxm", "--ert-json", "{t}.json"],
    "demo": ["demo", "-o", "{t}"],
}


def _one_message(err: str, path: str) -> None:
    assert err.startswith("roofline: error:") and err.count("roofline: error:") == 1, err
    assert f"{path}: cannot write" in err and "internal error" not in err and "Traceback" not in err


@needs_proc
@pytest.mark.parametrize("kind", KINDS)
def test_an_output_the_system_refuses_is_one_message_with_the_reason(capsys, kind):
    """``--png /proc/x.png`` was "internal error: FileNotFoundError ... a bug in roofline", exit 1."""
    target = str(PROC / "roofline-test")
    args = [a.replace("{t}", target) for a in KINDS[kind]]
    assert main([*args, "-q"]) == 2
    err = capsys.readouterr().err
    _one_message(err, args[-1] if kind != "demo" else f"{target}/roofline-demo.json")  # its first output
    assert "No such file or directory" in err or "not writable" in err  # the system's reason, as it gives it


@needs_proc
def test_a_folder_that_cannot_be_made_is_named(capsys):
    target = PROC / "roofline-no-such-folder" / "a.json"
    assert main(["analyze", str(V100_GEMM), "--json", str(target), "-q"]) == 2
    err = capsys.readouterr().err
    _one_message(err, str(target))
    assert "roofline-no-such-folder" in err.split(": cannot write", 1)[1]  # the folder, not only the file


def test_a_read_only_folder_is_refused_before_the_work(tmp_path):
    """Permissions bind root only without CAP_DAC_OVERRIDE: as root, the command runs with it dropped
    (util-linux's setpriv), as an ordinary user would."""
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("as root, needs util-linux's setpriv to drop the permission override (apt-get install util-linux)")
        prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        for option, name in (("--json", "a.json"), ("--png", "a.png"), ("--html", "sub/a.html")):
            done = _run(["analyze", str(V100_GEMM), option, str(folder / name), "-q"], prefix=prefix)
            assert done.returncode == 2, done.stderr
            _one_message(done.stderr, str(folder / name))
            assert f"the folder {folder} is not writable" in done.stderr
            assert "Kernels by time" not in done.stdout  # refused before reading and printing
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)

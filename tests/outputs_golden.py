"""Every result roofline gives for every export in tests/data, as digests: the guard of refactors.

For each input (each profile file under tests/data/ncu, each case folder, and a few machine choices)
this runs ``roofline analyze`` as a user would and digests what it gives: the JSON, the CSV, the
Parquet table's values, the terminal text and notes, the exit status, the instruction and operations
rooflines' JSON, and the static chart's data (every line, point, size and label matplotlib draws).
tests/test_outputs_unchanged.py compares them with tests/data/golden/outputs.json, recorded before a
change of layout; a change that alters a result fails there, naming the input and the output.

Record again (only when a result is meant to change, saying why in the commit):
``python tests/outputs_golden.py --write``; ``--dump DIR`` also writes every output in full, to diff
two checkouts.

Parquet is compared by its values, not its bytes (the file's own metadata names the writer's
version): the columns that hold a value, with their names, decoded from any dictionary encoding.
Paths are written relative to the repository (``<repo>``, ``<out>``), so the digests hold anywhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
GOLDEN = DATA / "golden" / "outputs.json"
NOT_PROFILES = {"PROVENANCE.md"}


def cases() -> dict[str, list[str]]:
    """Case name -> the arguments of ``roofline analyze`` after the inputs' own (paths relative to the repo)."""
    found: dict[str, list[str]] = {}
    ncu = DATA / "ncu"
    for folder in sorted(p for p in ncu.iterdir() if p.is_dir()):
        files = sorted(f for f in folder.rglob("*") if f.is_file() and f.name not in NOT_PROFILES)
        for f in files:
            rel = str(f.relative_to(REPO))
            found[rel] = [rel]
        found[str(folder.relative_to(REPO)) + "/"] = [str(folder.relative_to(REPO))]
    demo = REPO / "src" / "roofline" / "data" / "examples" / "deepcam_v100"
    metrics = [str(p.relative_to(REPO)) for p in sorted(demo.glob("out.*"))]
    found["demo"] = [*metrics, "--machine", str((demo / "v100_sxm2_demo_machine.json").relative_to(REPO))]
    found["demo --machine v100-sxm2"] = [*metrics, "--machine", "v100-sxm2"]
    found["demo --machine profile"] = [*metrics, "--machine", "profile"]
    ert = DATA / "ert" / "v100_cori_ert_hierarchical_data.txt"
    found["demo --machine ert"] = [*metrics, "--machine", str(ert.relative_to(REPO))]
    return found


def needs_ncu(args: list[str]) -> bool:
    """Whether reading these inputs goes through Nsight Compute (a .ncu-rep, or a folder holding one)."""
    for a in args:
        p = REPO / a
        if p.suffix == ".ncu-rep" or (p.is_dir() and any(p.rglob("*.ncu-rep"))):
            return True
    return False


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _cli(args: list[str]) -> tuple[int, str, str]:
    from roofline.cli.app import main

    before, columns = os.getcwd(), os.environ.get("COLUMNS")
    os.chdir(REPO)
    os.environ["COLUMNS"] = "200"  # the terminal tables' width, the same everywhere
    try:
        with _captured() as (out, err):
            code = main(args)
    finally:
        os.chdir(before)
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns
    return code, out.getvalue(), err.getvalue()


def _text(s: str, out_dir: Path) -> bytes:
    return s.replace(str(out_dir), "<out>").replace(str(REPO), "<repo>").encode()


def parquet_values(path: Path) -> bytes:
    """The Parquet table's values as CSV text: columns that hold a value, dictionaries decoded."""
    import pandas as pd
    import pyarrow.parquet as pq

    frame = pq.read_table(path).to_pandas()
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(object)
    frame = frame[[c for c in frame.columns if frame[c].notna().any()]]
    return frame.to_csv(index=False, float_format=repr).encode()


def chart_data(figure: Any) -> bytes:
    """What a matplotlib figure draws, as text: each axes' scales, limits, lines, point sets and labels."""
    import numpy as np

    parts: list[str] = []

    def arr(a: Any) -> str:
        a = np.asarray(a, dtype=float)
        return np.array2string(a, precision=10, threshold=1 << 30, separator=",")

    for ax in figure.axes:
        parts.append(f"axes {ax.get_xscale()} {ax.get_yscale()} {arr(ax.get_xlim())} {arr(ax.get_ylim())}")
        parts.append(f"labels {ax.get_xlabel()!r} {ax.get_ylabel()!r} {ax.get_title()!r}")
        for line in ax.get_lines():
            parts.append(f"line {line.get_label()!r} {line.get_color()} {line.get_linestyle()} {arr(line.get_xydata())}")
        for coll in ax.collections:
            parts.append(f"points {coll.get_label()!r} {arr(coll.get_offsets())} {arr(coll.get_sizes())}")
        for text in ax.texts:
            parts.append(f"text {text.get_text()!r} {arr(text.get_position())}")
    for text in figure.texts:
        parts.append(f"figtext {text.get_text()!r}")
    return "\n".join(parts).encode()


def outputs(name: str, args: list[str], out_dir: Path) -> dict[str, bytes]:
    """Every output of one case, by name, as bytes (before digesting)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    j, c, p = out_dir / "a.json", out_dir / "a.csv", out_dir / "a.parquet"
    got: dict[str, bytes] = {}
    code, stdout, stderr = _cli(["analyze", *args, "--json", str(j), "--csv", str(c), "--parquet", str(p)])
    got["exit"] = str(code).encode()
    got["stdout"] = _text(stdout, out_dir)
    got["stderr"] = _text(stderr, out_dir)
    if code != 0:
        return got
    got["json"] = _text(j.read_text(), out_dir)
    got["csv"] = _text(c.read_text(), out_dir)
    got["parquet"] = parquet_values(p)
    for work, by in (("ops", "phase"), ("instructions", "launch")):
        w = out_dir / f"{work}.json"
        code, stdout, stderr = _cli(["analyze", *args, "--work", work, "--by", by, "--json", str(w), "-q"])
        got[f"{work}.exit"] = str(code).encode()
        got[f"{work}.json"] = _text(w.read_text(), out_dir) if code == 0 else _text(stderr, out_dir)
    got["chart"] = _chart(args)
    return got


def _chart(args: list[str]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import roofline

    machine = None
    files = list(args)
    if "--machine" in files:
        i = files.index("--machine")
        machine = files[i + 1]
        del files[i:i + 2]
    before = os.getcwd()
    os.chdir(REPO)
    try:
        with _captured():
            analysis = roofline.analyze(files, machine)
            figure = roofline.plot(analysis)
    except roofline.RooflineError as exc:  # nothing to draw: the message is the output
        return f"{type(exc).__name__}: {exc.render()}".replace(str(REPO), "<repo>").encode()
    finally:
        os.chdir(before)
    try:
        return chart_data(figure)
    finally:
        plt.close(figure)


def digests(name: str, args: list[str], dump: Path | None = None) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        got = outputs(name, args, Path(tmp) / "out")
    if dump is not None:
        folder = dump / name.replace("/", "_").replace(" ", "_")
        folder.mkdir(parents=True, exist_ok=True)
        for key, data in got.items():
            (folder / key).write_bytes(data)
    return {key: _digest(data) for key, data in got.items()}


def main(argv: list[str]) -> int:
    write = "--write" in argv
    dump = Path(argv[argv.index("--dump") + 1]) if "--dump" in argv else None
    only = [a for a in argv if not a.startswith("--") and (dump is None or a != str(dump))]
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    result: dict[str, dict[str, str]] = {}
    differ = 0
    for name, args in cases().items():
        if only and not any(o in name for o in only):
            continue
        result[name] = digests(name, args, dump)
        if name in recorded and recorded[name] != result[name]:
            keys = sorted(k for k in set(recorded[name]) | set(result[name])
                          if recorded[name].get(k) != result[name].get(k))
            print(f"differs: {name}: {', '.join(keys)}")
            differ += 1
    if write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps({**recorded, **result}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN.relative_to(REPO)}: {len(result)} cases")
    return 1 if differ and not write else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Issue 35 on a GPU: `roofline profile --timeline` of the DeepCAM-like step and of a small transformer.

    PYTHONPATH=src python3 benchmarks/validate_timeline_gpu.py OUTDIR [--parts tools,deepcam,transformer]
    PYTHONPATH=src python3 benchmarks/validate_timeline_gpu.py OUTDIR --dry-run    # no GPU: stand-in nsys and ncu

Parts, each runnable alone (``--parts``; a device call allows 10 minutes):

- tools: the nsys executables and QdstrmImporters of the machine, with their versions. It looks on PATH, in
  /opt/nvidia/nsight-systems, in CUDA's bin and in the nsys inside Nsight Compute's folder; the importers are
  those roofline itself finds (:func:`roofline.readers.nsys.capture.importers`). Then a smoke capture of one
  CUDA kernel, to see whether nsys writes a report or leaves its capture, and whether the import and
  ``nsys export`` work. Those machines are known to lack an nsys on PATH; the nsys inside Nsight Compute
  2025.3.1 wrote a .qdstrm there but no report (the device README's KINDS.md).
- deepcam, transformer: the program alone, timed, then ``roofline profile --timeline`` of it with 3 training
  steps (the sample Nsight Compute counts is the second iteration), with ``--json`` and the full output kept.
  Read from them: each run's wall time against the bare program, the match rate (launches and time matched
  exactly, by configuration, unmatched), production time against Nsight Compute's replay time per class and
  in all, and the breakdown of the run.

Writes under OUTDIR: one folder per part with every raw file, ``fixtures/<part>/`` (the timeline's SQLite and
the ncu CSV, gzip'd, each under 1 MB, with the exact command), ``summary.json`` and ``summary.md``.

Nothing here is a pass/fail test of the package: it records numbers for a person. ``--dry-run`` runs the same
steps with tests/profiling/fake_nsys.py and benchmarks/profile_dry_run.py's ncu on an annotated loop written in
a real nsys export's tables: it checks the plumbing, and its numbers are not measurements.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
PY = sys.executable
PROGRAMS = {
    "deepcam": ["examples/deepcam_mini.py", "--device", "cuda", "--size", "64", "--batch", "2", "--steps", "3",
                "--width", "8"],
    "transformer": ["examples/transformer_block.py", "--device", "cuda", "--steps", "3", "--annotate", "--autocast",
                    "bf16"],
}
DRY_PROGRAMS = {
    "deepcam": ["examples/deepcam_mini.py", "--device", "cpu", "--size", "16", "--batch", "1", "--steps", "3",
                "--width", "4"],
    "transformer": ["examples/transformer_block.py", "--device", "cpu", "--steps", "3", "--annotate"],
}
SMOKE = "import torch; x = torch.ones(1 << 20, device='cuda'); (x * 2).sum().item(); torch.cuda.synchronize()"
#: The largest fixture file (CI clones them all).
FIXTURE_MAX_BYTES = 1_000_000
#: Where an nsys may be when none is on PATH (newest last within each pattern).
NSYS_GLOBS = ("/opt/nvidia/nsight-systems/*/bin/nsys", "/opt/nvidia/nsight-systems/*/target-linux-x64/nsys",
              "/usr/local/cuda*/bin/nsys", "/usr/local/cuda*/nsight-systems*/bin/nsys",
              "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys")


def run(cmd: list[str], *, timeout: float, env: dict[str, str] | None = None, log: Path | None = None) -> dict[str, Any]:
    """Run ``cmd``; its exit status, wall seconds and output (also written to ``log``); 124 on time-out."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env, cwd=ROOT)
        rc, out = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = 124, f"{exc.stdout or ''}{exc.stderr or ''}\nTIMEOUT after {timeout:.0f} s"
    except OSError as exc:
        rc, out = 127, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - t0
    if log is not None:
        log.write_text(f"$ {shlex.join(cmd)}\n{out}\n# exit {rc} after {seconds:.1f} s\n")
    return {"command": shlex.join(cmd), "rc": rc, "seconds": round(seconds, 2), "tail": out[-2000:]}


def nsys_candidates() -> list[str]:
    found = [shutil.which("nsys")] + [p for pattern in NSYS_GLOBS for p in sorted(glob.glob(pattern))]
    return list(dict.fromkeys(p for p in found if p and os.access(p, os.X_OK)))


def part_tools(out: Path, ncu: str, env: dict[str, str]) -> dict[str, Any]:
    """Which nsys and importers there are, and what one smoke capture gives with the first nsys."""
    from roofline.readers.nsys.capture import importers, version_of

    out.mkdir(parents=True, exist_ok=True)
    nsyses = [{"path": p, "version": version_of(p)} for p in nsys_candidates()]
    result: dict[str, Any] = {"nsys": nsyses, "ncu": ncu, "ncu_version": version_of(ncu) if shutil.which(ncu) else None}
    if not nsyses:
        result["verdict"] = "no nsys found (PATH, " + ", ".join(NSYS_GLOBS) + ")"
        return result
    nsys = nsyses[0]["path"]
    result["importers"] = [{"path": str(p), "version": version_of(p)} for p in importers(nsys, ncu)]
    smoke = run([nsys, "profile", "--trace", "cuda", "--output", str(out / "smoke"), "--force-overwrite", "true",
                 PY, "-c", SMOKE], timeout=120, env=env, log=out / "smoke.log")
    made = sorted(p.name for p in out.glob("smoke.*") if p.suffix != ".log")
    result["smoke"] = {**smoke, "files": made}
    if (out / "smoke.qdstrm").exists() and not (out / "smoke.nsys-rep").exists():
        for i, imp in enumerate(result["importers"]):
            tried = run([imp["path"], "--input-file", str(out / "smoke.qdstrm"), "--output-file",
                         str(out / "smoke.nsys-rep")], timeout=120, log=out / f"import-{i}.log")
            result.setdefault("imports", []).append({**tried, "importer": imp["path"]})
            if (out / "smoke.nsys-rep").exists():
                break
    if (out / "smoke.nsys-rep").exists():
        result["export"] = run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output",
                                str(out / "smoke.sqlite"), str(out / "smoke.nsys-rep")], timeout=120, log=out / "export.log")
    result["verdict"] = ("a report and its SQLite export" if (out / "smoke.sqlite").exists() else
                         "a report but no SQLite export" if (out / "smoke.nsys-rep").exists() else
                         "a capture that no importer here could import" if (out / "smoke.qdstrm").exists() else
                         "no report and no capture")
    return result


def part_program(name: str, out: Path, *, nsys: str | None, ncu: str, env: dict[str, str], dry_run: bool,
                 timeout: float) -> dict[str, Any]:
    """The program alone, then under `roofline profile --timeline`; the figures the issue asks for."""
    out.mkdir(parents=True, exist_ok=True)
    program = [PY, *(DRY_PROGRAMS if dry_run else PROGRAMS)[name]]
    t0 = time.perf_counter()
    bare = run(program, timeout=timeout / 4, env=env, log=out / "bare.log")
    prefix, report = out / name, out / f"{name}.json"
    cmd = [PY, "-m", "roofline", "profile", "--timeline", "-o", str(prefix), "--json", str(report), "--force",
           "--ncu", ncu, *(["--nsys", nsys] if nsys else []), *(["--arch", "9.0"] if dry_run else []), "--", *program]
    left = timeout - (time.perf_counter() - t0)
    profiled = run(cmd, timeout=max(left, 30), env=env, log=out / "profile.log")
    result: dict[str, Any] = {"bare": bare, "profile": profiled, "program": shlex.join(program)}
    # where each step's time went: the timeline and the sample's counts joined again, by analyze
    steps = out / f"{name}.steps.json"
    if (out / f"{name}.sqlite").is_file() and (out / f"{name}.ncu.csv").is_file():
        result["analyze"] = run([PY, "-m", "roofline", "analyze", str(out / f"{name}.sqlite"), str(out / f"{name}.ncu.csv"),
                                 "--breakdown", "step", "--json", str(steps), "--force", "-q"],
                                timeout=120, env=env, log=out / "analyze.log")
        if steps.is_file():
            result["steps"] = json.loads(steps.read_text()).get("breakdown")
    said = (out / "profile.log").read_text()
    wall = re.search(r"wall time: the bare program ([\d.]+) s, under nsys ([\d.]+) s \(([\d.]+)x\)"
                     r"(?:, under ncu \(the sample\) ([\d.]+) s \(([\d.]+)x\))?", said)
    if wall:
        result["overheads"] = {"bare_s": float(wall[1]), "nsys_s": float(wall[2]), "nsys_x": float(wall[3]),
                               "ncu_sample_s": float(wall[4]) if wall[4] else None,
                               "ncu_sample_x": float(wall[5]) if wall[5] else None}
    sample = re.search(r"counted (.+)", said)
    result["sample"] = sample[1].strip() if sample else None
    if report.is_file():
        doc = json.loads(report.read_text())
        result.update(match=doc.get("match"), replay=doc.get("replay"), totals=doc.get("totals"), notes=doc.get("notes"))
    result["fixtures"] = fixtures(name, out, profiled["command"])
    return result


def fixtures(name: str, out: Path, command: str) -> list[str]:
    """The timeline's SQLite and the ncu CSV, gzip'd, where each stays under FIXTURE_MAX_BYTES."""
    kept = []
    folder = out.parent / "fixtures" / name
    for path in (out / f"{name}.sqlite", out / f"{name}.ncu.csv"):
        if not path.is_file():
            continue
        data = gzip.compress(path.read_bytes(), mtime=0)
        if len(data) <= FIXTURE_MAX_BYTES:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / (path.name + ".gz")).write_bytes(data)
            kept.append(path.name + ".gz")
    if kept:
        (folder / "COMMAND.txt").write_text(command + "\n")
    return kept


def dry_run_tools(folder: Path, env: dict[str, str]) -> tuple[str, str]:
    """The stand-ins: an nsys handing back a 3-iteration loop of the dry-run DeepCAM kernels inside their phase
    ranges (written in a real nsys export's tables), and profile_dry_run's ncu handing back their ideal sm_90
    raw page (one iteration, the same phases)."""
    import profile_dry_run as dry

    sys.path.insert(0, str(ROOT / "tests"))
    from nsys_build import Launch, write_timeline

    folder.mkdir(parents=True, exist_ok=True)
    launches, ranges = [], []
    for i in range(3):
        t = i * 10_000_000
        for j, (phase, kernel, *_rest) in enumerate(dry.DEEPCAM_LAUNCHES):
            at = t + j * 1_000_000 + 100_000
            launches.append(Launch(kernel, (1024, 1, 1), (256, 1, 1), at, at + 20_000, at + 20_000 + 40_000 * (j + 1)))
        ranges += [(t, t + 2_000_000, 4242, "forward"), (t + 2_000_000, t + 5_000_000, 4242, "backward"),
                   (t + 5_000_000, t + 6_000_000, 4242, "optimizer")]
    timeline = write_timeline(folder / "loop.sqlite", launches, ranges)
    recorded = dry.ideal_report(folder / "deepcam.raw.csv", dry.deepcam_launches())
    ncu = dry.write_ncu_wrapper(folder / "bin")
    nsys = folder / "bin" / "nsys"
    nsys.write_text(f'#!/bin/sh\nexec "{PY}" "{ROOT / "tests" / "profiling" / "fake_nsys.py"}" "$@"\n')
    nsys.chmod(0o755)
    env.update(FAKE_NSYS_SQLITE=str(timeline), FAKE_NCU_RECORDED=str(recorded), FAKE_NCU_KERNELS="6",
               PATH=f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return str(nsys), str(ncu)


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"# roofline profile --timeline on a GPU ({'DRY RUN: stand-ins, not measurements' if summary['dry_run'] else summary['gpu']})",
             "", f"Date {summary['date_utc']}; nvidia-smi: `{summary['nvidia_smi']}`", ""]
    tools = summary.get("tools")
    if tools:
        lines += ["## Tools", "", f"- nsys: {tools.get('nsys')}", f"- importers: {tools.get('importers')}",
                  f"- smoke capture: {tools.get('verdict')}", ""]
    for name in PROGRAMS:
        r = summary.get(name)
        if not r:
            continue
        lines += [f"## {name}", "", f"`{r['profile']['command']}`: exit {r['profile']['rc']} in {r['profile']['seconds']} s",
                  "", f"- overheads: {r.get('overheads')}", f"- sample: {r.get('sample')}",
                  f"- match: {json.dumps(r.get('match'))}", *replay_lines(r.get("replay")),
                  f"- fixtures: {r.get('fixtures')}", ""]
    return "\n".join(lines)


def replay_lines(replay: dict[str, Any] | None) -> list[str]:
    """Production time against the replay's, in all and per class (the JSON's ``replay`` block)."""
    if not replay:
        return ["- replay: none (no launch has both times)"]
    lines = [f"- production {replay['time_s'] * 1e3:.3f} ms against replay {replay['replay_time_s'] * 1e3:.3f} ms over "
             f"{replay['launches']} launches: {replay['ratio']:.2f}x ({replay['left_out']} left out)"]
    lines += [f"  - {c['bound']}: {c['launches']} launches, {c['time_s'] * 1e3:.3f} ms against {c['replay_time_s'] * 1e3:.3f}"
              f" ms, {c['ratio']:.2f}x" for c in replay.get("classes", [])]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--parts", default="tools,deepcam,transformer")
    ap.add_argument("--ncu", default=os.environ.get("NCU", "ncu"))
    ap.add_argument("--nsys", help="the nsys to use (default: the first the tools part finds)")
    ap.add_argument("--deadline-s", type=float, help="seconds from now after which no part starts")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    began = time.monotonic()
    deadline = began + a.deadline_s if a.deadline_s else None
    out = a.outdir
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    nsys, ncu = a.nsys, a.ncu
    if a.dry_run:
        nsys, ncu = dry_run_tools(out / "dry-run-tools", env)
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem", "--format=csv,noheader"],
              timeout=30)
    summary: dict[str, Any] = {"dry_run": a.dry_run, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "nvidia_smi": smi["tail"].strip(), "gpu": smi["tail"].split(",")[0].strip()}
    for part in a.parts.split(","):
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left < 60:
            summary[part] = {"verdict": f"NOT RUN: {left:.0f} s were left before the deadline"}
            continue
        print(f"{part}: starting", flush=True)
        if part == "tools":
            summary["tools"] = {"verdict": "stand-ins (dry run)", "nsys": nsys} if a.dry_run else \
                part_tools(out / "tools", ncu, env)
            if not nsys and summary["tools"].get("nsys"):
                nsys = summary["tools"]["nsys"][0]["path"]
        elif part in PROGRAMS:
            summary[part] = part_program(part, out / part, nsys=nsys, ncu=ncu, env=env, dry_run=a.dry_run,
                                         timeout=min(left, 400) if left is not None else 400)
        else:
            raise SystemExit(f"unknown part {part!r}: tools, {', '.join(PROGRAMS)}")
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    (out / "summary.md").write_text(markdown(summary) + "\n")
    print(f"done in {time.monotonic() - began:.0f} s: {out / 'summary.md'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

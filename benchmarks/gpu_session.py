"""The GPU session of issue 15 in one device call (or several, with more time), and their results brought home.

    python3 benchmarks/gpu_session.py plan                          # here: the device calls to make
    python3 benchmarks/gpu_session.py run CALL OUT [--dry-run]      # there: CALL is session (or a part of it)
    python3 benchmarks/gpu_session.py unpack FOLDER [--force]       # here: FOLDER is what the call returned

A device call may run 10 minutes and brings back at most 8 files from ``$OUT``, none over 16 MiB
and none more than two folders down. ``run`` therefore runs the call's steps (the validation
scripts of benchmarks/) one after another, each in its own process group under its own time limit
inside the call's, and leaves in OUT: ``CALL.json`` (environment and, per step, command, exit status,
seconds), ``CALL.log`` (every step's output) and one ``CALL-STEP.tar.gz`` per step holding that
step's folder. A file too large to come back is left out of its archive and named in ``CALL.json``.
Python wheels the GPU machine lacks (plotly, for the HTML reports) travel in ``.whl/`` (the device
tool's ``carry``) and are installed into a private folder first.

``unpack`` files a returned folder under ``benchmarks/results/<gpu>-<date>/`` (each step's files
and a README.md: GPU, driver, CUDA, ncu version, clocks, exact commands), copies the measured
machine file to ``benchmarks/results/<gpu>/machine.json`` after checking that it is one, and the
example profiles to ``tests/data/ncu/<gpu>_examples/`` with a PROVENANCE.md. It never writes over a
file without ``--force``, and files a dry run (``run --dry-run``: no GPU, fakes) only where told to
(``--results``), marked as such: nothing a dry run writes may pass for a measurement.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The device tool's limits: one command's run, files and bytes brought back from $OUT.
CALL_LIMIT_S = 600
MAX_FILES = 8
MAX_FILE_BYTES = 16 * 2**20
#: The largest file filed as a test fixture (a CSV export over it is gzip'd first): CI clones them all.
FIXTURE_MAX_BYTES = 1_000_000
#: Kept free in every call for start-up, packing and the transfer.
CALL_MARGIN_S = 45
#: The session's device time (the device tool's README: 15 minutes, all tries together), and what starting a
#: machine costs (KINDS.md: "a minute or more").
SESSION_DEVICE_S = 15 * 60
START_S = 120


@dataclass(frozen=True)
class Step:
    """One validation script run inside a call (``argv`` after the Python executable; ``{dir}`` in it is
    the step's output folder)."""

    name: str
    argv: tuple[str, ...]
    timeout_s: int
    #: Appended under --dry-run; None: the step needs a GPU and is not run in a dry run.
    dry_args: tuple[str, ...] | None = ("--dry-run",)
    #: Whether the step takes --ncu (left out in a dry run: the scripts bring their fake).
    takes_ncu: bool = False
    #: The call's last step may run on for what the steps before it left (``timeout_s`` is its least), and is told
    #: its deadline (``--deadline-s``, so that it starts nothing it cannot finish).
    takes_rest: bool = False
    #: Told its own limit as a deadline (``--deadline-s``), so that it starts nothing it cannot finish.
    takes_deadline: bool = False


#: The calls. PLANNED is the session's plan: each call's step limits sum to at most CALL_LIMIT_S - CALL_MARGIN_S
#: and, with a fresh start for each call, to under the session's device time. The others are the same work in
#: parts (machine, profile, extra) and "more" (issue 11's instruction walls, the GPU tests, issue 12's --torch
#: profiles), for a session with more time: a next call made at once finds the machine warm and saves a start.
#: What each step is expected to take on an H100 is in benchmarks/README-gpu.md (estimates until a GPU runs them).
CALLS: dict[str, tuple[Step, ...]] = {
    # Issue 33 (every fix on the GPU again, and every GPU path that never ran), in the order: the whole default
    # `roofline machine` twice (CLI and in-process: run-to-run spread); the GPU tests and the instruction roofline's
    # walls; `--torch` of the DeepCAM-like step (also the projection pair's H200/H100 side and the counter-free
    # estimate's measured side) and of a small transformer, then the pair's saxpy sizes and the counter-free estimate,
    # each started only if the step's deadline allows; the FP16 pipes' SASS and rates.
    "issue33": (
        Step("machine", ("benchmarks/validate_gpu_machine.py", "{dir}"), 90),
        Step("gpu-tests", ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/test_gpu_real.py"),
             40, dry_args=None),
        Step("instr", ("benchmarks/validate_instruction_gpu.py", "{dir}", "--parts", "walls"), 65, takes_ncu=True),
        Step("profile", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,torch,pair,cf"), 325,
             takes_ncu=True, takes_deadline=True),
        Step("fp16", ("benchmarks/probe_fp16_pipes.py", "{dir}"), 35, dry_args=None, takes_rest=True),
    ),
    # The 15-minute session: one call, the items in the order of their worth. The DeepCAM step's one ncu
    # run is also the deepcam fixture; the paper's per-metric runs come last and stop at the call's deadline.
    "session": (
        Step("machine", ("benchmarks/validate_gpu_machine.py", "{dir}"), 170),
        Step("targets", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,targets"), 160,
             takes_ncu=True),
        Step("profile", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,deepcam,examples,cf,paper"),
             225, takes_ncu=True, takes_rest=True),
    ),
    # Issue 33's second call, after the first showed the 4-wave read kernel re-reading 1/4 of its set (fixed) and an
    # empty disassembly: the GPU tests and the whole machine run again, the FP16 pipes with their SASS, and the GEMM
    # kernels cuBLASLt runs for INT8 and FP8 with the partitioned-kernel variants.
    "issue33b": (
        Step("gpu-tests", ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/test_gpu_real.py"),
             40, dry_args=None),
        Step("machine", ("benchmarks/validate_gpu_machine.py", "{dir}"), 90),
        Step("fp16", ("benchmarks/probe_fp16_pipes.py", "{dir}"), 45, dry_args=None, takes_deadline=True),
        Step("gemms", ("benchmarks/probe_gpu_ceilings.py", "{dir}", "--parts", "gemms,part"), 80, dry_args=None,
             takes_deadline=True),
    ),
    # Issue 33's third call: the paired-FMA kernels now take their constants as __half2 / __nv_bfloat162 (ptxas then
    # issues half of their HFMA2s on the tensor pipe): the forms of the kernel side by side, and the whole machine run.
    "issue33c": (
        Step("fp16", ("benchmarks/probe_fp16_pipes.py", "{dir}", "--variants"), 45, dry_args=None, takes_deadline=True),
        Step("machine", ("benchmarks/validate_gpu_machine.py", "{dir}"), 90),
        Step("gpu-tests", ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/test_gpu_real.py"),
             40, dry_args=None),
        Step("compiled", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,torch_compiled"), 130,
             takes_ncu=True, takes_deadline=True),
    ),
    # The same work in parts, for a session with more device time or to run one part again.
    "machine": (
        Step("machine", ("benchmarks/validate_gpu_machine.py", "{dir}"), 180),
        Step("targets", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,targets"), 240,
             takes_ncu=True),
    ),
    "profile": (
        Step("profile", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,deepcam,cf,examples"), 420,
             takes_ncu=True),
    ),
    "extra": (
        # The NERSC method's wall time (15 ncu runs) against one `roofline profile` run timed in the same step.
        Step("paper", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,deepcam,paper"), 420,
             takes_ncu=True),
    ),
    "more": (
        Step("instr", ("benchmarks/validate_instruction_gpu.py", "{dir}"), 160, takes_ncu=True),
        Step("gpu-tests", ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/test_gpu_real.py"),
             60, dry_args=None),
        Step("torch", ("benchmarks/validate_profile_gpu.py", "{dir}", "--parts", "env,torch"), 300, takes_ncu=True),
    ),
    # Issue 35: which nsys and importer the machine has, then `roofline profile --timeline` of the DeepCAM-like step
    # and a small transformer (overheads, match rate, production against replay, fixtures).
    "timeline": (
        Step("timeline", ("benchmarks/validate_timeline_gpu.py", "{dir}"), 480, takes_ncu=True, takes_rest=True),
    ),
}
#: The calls the session's device time is planned for.
PLANNED = ("issue33",)


def find_ncu() -> str | None:
    """Nsight Compute's ncu: $NCU, on PATH, else the newest under /opt/nvidia/nsight-compute or CUDA's bin."""
    if os.environ.get("NCU"):
        return os.environ["NCU"]
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), key=_version_key)
    candidates += [p for p in ("/usr/local/cuda/bin/ncu",) if os.path.exists(p)]
    return candidates[-1] if candidates else None


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", Path(path).parent.name))


def _output(cmd: list[str], env: dict[str, str] | None = None) -> str:
    """A command's output, or why there is none (never raises)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60, env=env)
        return (proc.stdout + proc.stderr).strip() or f"(no output, exit {proc.returncode})"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable: {type(exc).__name__}: {exc}"


def environment(ncu: str | None, dry_run: bool, env: dict[str, str] | None = None) -> dict[str, Any]:
    """What the summary needs: GPU, driver, CUDA, ncu version, clocks, libraries (as the steps, run with
    ``env``, import them), the machine."""
    query = ("name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
             "memory.total,power.limit,temperature.gpu")
    code = ("import json\nout = {}\nfor m in ('torch', 'cupy', 'numpy', 'pandas', 'pyarrow', 'matplotlib', "
            "'plotly'):\n    try:\n        out[m] = __import__(m).__version__\n    except Exception as e:\n"
            "        out[m] = f'unavailable ({type(e).__name__})'\ntry:\n    import torch\n"
            "    out['torch_cuda'] = torch.version.cuda\nexcept Exception:\n    pass\nprint(json.dumps(out))")
    libraries = _output([sys.executable, "-c", code], env)
    try:
        libs: Any = json.loads(libraries.splitlines()[-1])
    except (ValueError, IndexError):
        libs = libraries
    return {
        "dry_run": dry_run,
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "nvidia_smi": _output(["nvidia-smi", f"--query-gpu={query}", "--format=csv"]),
        "ncu": ncu,
        "ncu_version": _output([ncu, "--version"]) if ncu else "not found",
        "nvcc_version": _output(["nvcc", "--version"]).splitlines()[-1],
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "libraries": libs,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def gpu_name(env: dict[str, Any]) -> str | None:
    """The GPU's name from nvidia-smi's CSV (header, then one line per GPU), or None."""
    lines = str(env.get("nvidia_smi", "")).splitlines()
    if len(lines) < 2 or not lines[0].startswith("name"):
        return None
    return lines[1].split(",")[0].strip() or None


def install_wheels(wheels: Path, site: Path) -> tuple[int, str]:
    """Install the carried wheels (no index, no dependencies) into ``site``; (exit status, output)."""
    found = sorted(wheels.glob("*.whl"))
    if not found:
        return 0, "no wheels carried"
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
           "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, found)]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return proc.returncode, f"$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}"


def run_step(argv: list[str], timeout_s: float, env: dict[str, str]) -> tuple[int, float, str]:
    """Run one step in its own process group; on time-out the whole group (ncu, the profiled program) is
    killed and the status is 124. Returns (exit status, seconds, output)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        out = f"{out}\nTIMEOUT: killed after {timeout_s:.0f} s\n"
        rc = 124
    return rc, time.perf_counter() - t0, out


def pack(folder: Path, archive: Path, max_bytes: int = MAX_FILE_BYTES) -> list[str]:
    """Write ``folder``'s files into a gzip'd tar at ``archive``, smallest first, leaving out whatever
    would take the archive over ``max_bytes``; returns the files left out (relative paths)."""
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: (p.stat().st_size, str(p)))
    left_out: list[str] = []
    while True:
        with tarfile.open(archive, "w:gz") as tar:
            for p in files:
                tar.add(p, arcname=str(p.relative_to(folder)))
        if archive.stat().st_size <= max_bytes or not files:
            return left_out
        biggest = files.pop()  # the largest file goes; the rest is packed again
        left_out.append(str(biggest.relative_to(folder)))


def run_call(call: str, out: Path, *, dry_run: bool = False, steps: tuple[Step, ...] | None = None,
             wheels: Path = ROOT / ".whl", limit_s: float = CALL_LIMIT_S - CALL_MARGIN_S) -> dict[str, Any]:
    """Run a call's steps and leave its files in ``out``; returns what ``CALL.json`` holds."""
    steps = CALLS[call] if steps is None else steps
    t_start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"roofline-{call}-"))
    ncu = find_ncu()
    site = work / "site"
    rc, text = install_wheels(wheels, site)
    paths = [str(site)] if rc == 0 and site.exists() else []
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([*paths, str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    record: dict[str, Any] = {"call": call, "environment": environment(ncu, dry_run, env), "steps": [],
                              "wheels": {"rc": rc, "output": text}}
    log = [f"# {call}: {record['environment']['date_utc']}, ncu {ncu}, dry run {dry_run}\n", text, "\n"]
    for step in steps:
        folder = work / step.name
        folder.mkdir()
        argv = [sys.executable, *(a.replace("{dir}", str(folder)) for a in step.argv)]
        entry: dict[str, Any] = {"step": step.name, "command": shlex.join(argv), "timeout_s": step.timeout_s}
        remaining = limit_s - (time.perf_counter() - t_start)
        if dry_run and step.dry_args is None:
            entry.update(rc=None, verdict="NOT RUN (dry run: needs a GPU)")
        elif remaining < 20:
            entry.update(rc=None, verdict=f"NOT RUN (the call's {limit_s:.0f} s were spent)")
        else:
            if dry_run:
                argv += list(step.dry_args or ())
            elif step.takes_ncu and ncu:
                argv += ["--ncu", ncu]
            limit = remaining if step.takes_rest else min(step.timeout_s, remaining)
            if (step.takes_rest or step.takes_deadline) and not dry_run:
                argv += ["--deadline-s", f"{max(limit - 30, 0):.0f}"]  # 30 s for its summary and the packing
            entry["command"] = shlex.join(argv)
            rc, seconds, text = run_step(argv, limit, env)
            (folder / "step.log").write_text(text)
            entry.update(rc=rc, seconds=round(seconds, 1), verdict="ran" if rc == 0 else f"exit {rc}")
            log += [f"\n## {step.name}: $ {entry['command']}\n", text, f"\n# exit {rc} after {seconds:.1f} s\n"]
        entry["left_out"] = pack(folder, out / f"{call}-{step.name}.tar.gz")
        record["steps"].append(entry)
        print(f"{step.name}: {entry['verdict']}" + (f" in {entry['seconds']} s" if "seconds" in entry else ""),
              flush=True)
    record["seconds"] = round(time.perf_counter() - t_start, 1)
    (out / f"{call}.log").write_text("".join(log))
    (out / f"{call}.json").write_text(json.dumps(record, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return record


def plan_text() -> str:
    """The device calls, as the device tool's run takes them, and the device time they are planned for."""
    lines = ["# The GPU session of issue 15: the device calls (run's command, timeout_s, carry)", ""]
    total = 0
    for call, steps in CALLS.items():
        budget = sum(s.timeout_s for s in steps)
        if call in PLANNED:
            total += budget + CALL_MARGIN_S
        elif call == next(c for c in CALLS if c not in PLANNED):
            lines += ["The same work in parts (a session with more time, or one part again):", ""]
        command = f"python3 benchmarks/gpu_session.py run {call} $OUT"
        lines += [f"## {call} (steps {', '.join(s.name for s in steps)}; at most {budget} s)",
                  f"command: {command}", f"timeout_s: {CALL_LIMIT_S}", 'carry: [".whl"]', ""]
    starts = len(PLANNED) * START_S
    lines += [f"At most {total} s of device time for {', '.join(PLANNED)}, plus {starts} s to start a machine "
              f"({START_S} s each, an estimate; the machine goes back 30 s after a call): "
              f"{total + starts} s of the session's {SESSION_DEVICE_S} s.",
              "Then, here: python3 benchmarks/gpu_session.py unpack FILES_AT (once per call)."]
    return "\n".join(lines)


# -- unpacking here ------------------------------------------------------------------------------------


def slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100-80gb-hbm3'."""
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return re.sub(r"^nvidia-", "", s) or "gpu"


def short_gpu(name: str) -> str:
    """The folder for the measured machine file: 'h100' or 'h200' (issue 15), else the slug."""
    m = re.search(r"\b([A-Z]{1,2}\d{2,3}[A-Z]?)\b", name.upper().replace("NVIDIA", ""))
    return m.group(1).lower() if m else slug(name)


class UnpackError(Exception):
    """A returned folder that cannot be filed as asked (the message says why and what to do)."""


def _write(path: Path, data: bytes, force: bool) -> None:
    if path.exists() and not force:
        raise UnpackError(f"{path} exists; pass --force to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def check_machine_file(path: Path) -> str:
    """Why ``path`` is not a measured H100/H200 machine file (issue 15 item 5), or '' if it is one; the test
    is validate_gpu_machine.py's, which also reports it in the machine step's summary."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"{path}: not readable JSON ({exc})"
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))  # run as a script from a checkout: roofline from src/
    spec = importlib.util.spec_from_file_location("validate_gpu_machine", Path(__file__).with_name(
        "validate_gpu_machine.py"))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    ok, found = module.machine_file_check(doc if isinstance(doc, dict) else {})
    return "" if ok else f"{path}: not a measured H100 or H200 machine file ({found})"


def unpack(folder: Path, *, results: Path = ROOT / "benchmarks" / "results", fixtures: Path = ROOT / "tests" / "data"
           / "ncu", force: bool = False, dry_run: bool = False, fixture_max_bytes: int | None = None) -> list[Path]:
    """File one call's returned files; returns the paths written. An example file over ``fixture_max_bytes``
    (:data:`FIXTURE_MAX_BYTES`) becomes a fixture gzip'd if it is a CSV export and fits then, else stays out (the
    PROVENANCE.md names it); logs and the tool's JSON outputs are no fixtures."""
    fixture_max_bytes = FIXTURE_MAX_BYTES if fixture_max_bytes is None else fixture_max_bytes
    records = sorted(folder.glob("*.json"))
    if len(records) != 1:
        raise UnpackError(f"{folder}: expected one CALL.json from `gpu_session.py run`, found {len(records)}")
    record = json.loads(records[0].read_text())
    call, env = record["call"], record["environment"]
    if env.get("dry_run") and not dry_run:
        raise UnpackError(f"{folder} holds a dry run (no GPU, fakes): it is filed only with --dry-run and --results")
    name = gpu_name(env) or ("dry-run" if env.get("dry_run") else None)
    if name is None:
        raise UnpackError(f"{records[0]}: no GPU name in its nvidia-smi output; file it by hand")
    root = results / f"{slug(name)}-{env['date_utc'][:10]}"
    written: list[Path] = []
    for step in record["steps"]:
        archive = folder / f"{call}-{step['step']}.tar.gz"
        if not archive.exists():
            continue
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if not member.isfile() or member.name.startswith(("/", "..")) or "/../" in member.name:
                    continue
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                target = root / step["step"] / member.name
                _write(target, data, force)
                written.append(target)
    for suffix in (".json", ".log"):
        source = folder / f"{call}{suffix}"
        if source.exists():
            _write(root / source.name, source.read_bytes(), force)
            written.append(root / source.name)
    _write(root / f"README-{call}.md", summary_md(record, name).encode(), force)
    written.append(root / f"README-{call}.md")
    ran = {s["step"] for s in record["steps"]}
    machine = root / "machine" / "machine.json"
    if "machine" in ran and machine.exists() and not env.get("dry_run"):
        why = check_machine_file(machine)
        if why:
            raise UnpackError(f"{why}; the run's files are under {root}, the machine file was not filed")
        target = results / short_gpu(name) / "machine.json"
        _write(target, machine.read_bytes(), force)
        written.append(target)
    profile = root / "profile"
    examples = sorted(profile.glob("example_*")) if "profile" in ran and profile.exists() else []
    if examples:
        base = root / "fixtures" if env.get("dry_run") else fixtures  # a dry run's files are never fixtures
        case = base / f"{slug(name).replace('-', '_')}_examples"
        kept: list[str] = []
        left_out: list[str] = []
        for p in examples:
            if not p.is_file() or p.name.endswith((".log", ".json")):  # logs and the tool's own outputs: no inputs
                continue
            data, target = p.read_bytes(), case / p.name
            if len(data) > fixture_max_bytes and p.name.endswith(".csv"):
                data, target = gzip.compress(data, compresslevel=9, mtime=0), case / f"{p.name}.gz"
            if len(data) > fixture_max_bytes:
                left_out.append(f"{p.name} ({len(data)} B)")
                continue
            _write(target, data, force)
            written.append(target)
            kept.append(target.name)
        _write(case / "PROVENANCE.md", provenance_md(record, name, kept, left_out, fixture_max_bytes).encode(), force)
        written.append(case / "PROVENANCE.md")
    return written


def _env_lines(env: dict[str, Any], name: str) -> list[str]:
    return [f"- GPU: {name}" + (" (DRY RUN: no GPU, fakes; nothing here was measured)" if env.get("dry_run") else ""),
            f"- nvidia-smi (driver, clocks): `{' / '.join(str(env.get('nvidia_smi')).splitlines())}`",
            f"- ncu: `{env.get('ncu')}`, `{' '.join(str(env.get('ncu_version')).split())}`",
            f"- CUDA: nvcc `{env.get('nvcc_version')}`; libraries `{json.dumps(env.get('libraries'))}`",
            f"- Python {env.get('python')} on {env.get('platform')}, {env.get('cpus')} CPUs; date {env.get('date_utc')}"]


def summary_md(record: dict[str, Any], name: str) -> str:
    """The results folder's README for one call: environment, exact commands, exit status, times."""
    lines = [f"# GPU session, call `{record['call']}`", "", *_env_lines(record["environment"], name), "",
             f"Device command: `python3 benchmarks/gpu_session.py run {record['call']} $OUT` ({record['seconds']} s)",
             "", "| step | exact command | exit | seconds | left out (too large to bring back) |", "|---|---|---|---|---|"]
    for s in record["steps"]:
        lines.append(f"| {s['step']} | `{s['command']}` | {s.get('rc')} ({s['verdict']}) | {s.get('seconds', '-')} | "
                     f"{', '.join(s['left_out']) or '-'} |")
    lines += ["", "Each step's own summary.md (in its folder) holds its measurements and targets."]
    return "\n".join(lines) + "\n"


def provenance_md(record: dict[str, Any], name: str, files: list[str], left_out: Sequence[str] = (),
                  max_bytes: int = FIXTURE_MAX_BYTES) -> str:
    step: dict[str, Any] = next((s for s in record["steps"] if s["step"] == "profile"), {})
    lines = [f"# Recorded on {name} by the GPU session of issue 15", "", *_env_lines(record["environment"], name),
             f"- command: `{step.get('command')}` (benchmarks/validate_profile_gpu.py, part examples: the "
             "exact ncu and program arguments are in its summary.json under results)", "",
             "Files: " + ", ".join(sorted(files)) + " (a `.csv.gz` is the export gzip'd)"]
    if left_out:
        lines.append(f"Left out, over {max_bytes} B even compressed: " + ", ".join(sorted(left_out)))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="verb", required=True)
    sub.add_parser("plan", help="print the device calls")
    r = sub.add_parser("run", help="run one call's steps (on the GPU machine)")
    r.add_argument("call", choices=sorted(CALLS))
    r.add_argument("out", type=Path)
    r.add_argument("--dry-run", action="store_true", help="no GPU: each script's --dry-run (fakes)")
    u = sub.add_parser("unpack", help="file a call's returned files here")
    u.add_argument("folder", type=Path)
    u.add_argument("--force", action="store_true", help="replace files that exist")
    u.add_argument("--dry-run", action="store_true", help="accept a dry run's files (then give --results)")
    u.add_argument("--results", type=Path, default=None, help="results folder (default benchmarks/results)")
    u.add_argument("--fixtures", type=Path, default=None, help="fixtures folder (default tests/data/ncu)")
    a = p.parse_args(argv)
    if a.verb == "plan":
        print(plan_text())
        return 0
    if a.verb == "run":
        record = run_call(a.call, a.out, dry_run=a.dry_run)
        files = sorted(p.name for p in a.out.iterdir())
        print(json.dumps({"steps": record["steps"], "files": files}, indent=1))
        return 0 if all(s.get("rc") in (0, None) for s in record["steps"]) else 1
    if a.dry_run and a.results is None:
        p.error("--dry-run files a dry run only where --results says (never into benchmarks/results)")
    try:
        written = unpack(a.folder, results=a.results or ROOT / "benchmarks" / "results",
                         fixtures=a.fixtures or ROOT / "tests" / "data" / "ncu", force=a.force, dry_run=a.dry_run)
    except UnpackError as exc:
        print(f"gpu_session: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(str(w) for w in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A stand-in for ROCm's rocprofv3, for tests on machines without an AMD GPU.

It writes what rocprofv3 writes for ``--output-format csv``, with the values of a real MI300X run
(tests/rocprof_forms.py: vcopy, rocprof-compute 3.2.0 over rocprofv3, ROCm 7.0):

* ``--list-avail``: the GPU (``Name: gfx942``) and the recorded counters, ``Counter_Name : X`` lines as
  rocprofv3 1.0 prints them, less those named in $FAKE_ROCPROF_MISSING (comma-separated);
* ``--pmc A B ... -d DIR -o NAME --output-format csv -- CMD``: runs CMD, writes DIR/NAME_agent_info.csv and
  DIR/NAME_counter_collection.csv (the recorded values of A, B...); a counter the recording lacks makes
  it fail as rocprofv3 does (exit 1, nothing written);
* ``--kernel-trace -d DIR -o NAME ... -- CMD``: runs CMD, writes DIR/NAME_agent_info.csv and
  DIR/NAME_kernel_trace.csv; with $FAKE_ROCPROF_ZERO_TIME=1 the first dispatch's end equals its start.

Exits with CMD's status. Every argv is appended, one JSON line per run, to $FAKE_ROCPROF_ARGV_LOG.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rocprof_forms  # noqa: E402


def _missing() -> set[str]:
    return {c for c in os.environ.get("FAKE_ROCPROF_MISSING", "").split(",") if c}


def list_avail() -> int:
    print("GPU:0\nName:gfx942\n")
    names = sorted({c for p in rocprof_forms.recorded_passes() for c in p["values"] if "[" not in c} - _missing())
    for name in names:
        print(f"Counter_Name        :\t{name}\nDescription         :\t(recorded)\n")
    return 0


def main(argv: list[str]) -> int:
    if "--list-avail" in argv or "-L" in argv:
        return list_avail()
    log = os.environ.get("FAKE_ROCPROF_ARGV_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(json.dumps(argv) + "\n")
    command = argv[argv.index("--") + 1:]
    options = argv[:argv.index("--")]
    folder = Path(options[options.index("-d") + 1])
    name = options[options.index("-o") + 1] if "-o" in options else str(os.getpid())
    counters: list[str] = []
    if "--pmc" in options:
        for a in options[options.index("--pmc") + 1:]:
            if a.startswith("-"):
                break
            counters += [c for c in a.split(",") if c]
        unknown = [c for c in counters if all(c not in p["values"] for p in rocprof_forms.recorded_passes())]
        if unknown:
            print(f"E rocprofv3: counter {unknown[0]} not found on gfx942", flush=True)
            return 1
    rc = subprocess.run(command).returncode
    folder.mkdir(parents=True, exist_ok=True)
    rocprof_forms.write_agents(folder / f"{name}_agent_info.csv")
    if counters:
        rocprof_forms.write_counters(folder / f"{name}_counter_collection.csv", counters, os.getpid(), missing=_missing())
    if "--kernel-trace" in options:
        rocprof_forms.write_trace(folder / f"{name}_kernel_trace.csv", os.getpid(),
                                  zero_first=os.environ.get("FAKE_ROCPROF_ZERO_TIME") == "1")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

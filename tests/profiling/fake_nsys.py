"""A stand-in for Nsight Systems' `nsys`, for tests on machines without a GPU.

Profile mode (`nsys profile ... --output PREFIX ... --stats false CMD ARGS`, as
roofline.profiling.timeline_run writes it): logs its argv (JSON) to $FAKE_NSYS_ARGV_LOG, runs CMD for
real, then writes PREFIX.nsys-rep (a placeholder) and PREFIX.sqlite, a copy of $FAKE_NSYS_SQLITE (a
timeline made by tests/nsys_build.py), and exits with CMD's status. $FAKE_NSYS_MODE=noreport: runs CMD,
prints the real target-only package's complaint and writes no report. $FAKE_NSYS_MODE=capture: as a
target-only nsys 2023.4 does, runs CMD, writes PREFIX.qdstrm (a placeholder), prints its complaint, writes
no report and exits 0.

Export mode (`nsys export --type sqlite ... --output OUT REPORT`): copies $FAKE_NSYS_SQLITE to OUT.
"""

import json
import os
import shutil
import subprocess
import sys


def main(argv):
    log = os.environ.get("FAKE_NSYS_ARGV_LOG")
    if log:
        with open(log, "w") as fh:
            json.dump(argv, fh)
    if argv[:1] == ["export"]:
        shutil.copyfile(os.environ["FAKE_NSYS_SQLITE"], argv[argv.index("--output") + 1])
        return 0
    if argv[:1] != ["profile"]:
        print("fake nsys: only 'profile' and 'export' are known", file=sys.stderr)
        return 1
    prefix = argv[argv.index("--output") + 1]
    command = argv[argv.index("--stats") + 2:]
    rc = subprocess.run(command).returncode
    mode = os.environ.get("FAKE_NSYS_MODE")
    if mode in ("noreport", "capture"):
        if mode == "capture":
            with open(prefix + ".qdstrm", "wb") as fh:
                fh.write(b"fake nsys capture\n")
        print("Importer error status: The importer binary and its dependencies were not found.", flush=True)
        print("Unable to retrieve the importer version: skipping importation of the QDSTRM file.", flush=True)
        return 0
    with open(prefix + ".nsys-rep", "wb") as fh:
        fh.write(b"fake nsys report\n")
    shutil.copyfile(os.environ["FAKE_NSYS_SQLITE"], prefix + ".sqlite")
    print(f"Generated:\n    {prefix}.nsys-rep\n    {prefix}.sqlite", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

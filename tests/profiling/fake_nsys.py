"""A stand-in for Nsight Systems' `nsys`, for tests on machines without a GPU.

Profile mode (`nsys profile ... --output PREFIX ... --stats false CMD ARGS`, as
roofline.profiling.timeline_run writes it): logs its argv (JSON) to $FAKE_NSYS_ARGV_LOG, runs CMD for
real, then writes PREFIX.nsys-rep (a placeholder) and PREFIX.sqlite, a copy of $FAKE_NSYS_SQLITE (a
timeline made by tests/nsys_build.py), and exits with CMD's status. $FAKE_NSYS_MODE=noreport: runs CMD,
prints the real target-only package's complaint and writes no report.
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
    if argv[:1] != ["profile"]:
        print("fake nsys: only 'profile' is known", file=sys.stderr)
        return 1
    prefix = argv[argv.index("--output") + 1]
    command = argv[argv.index("--stats") + 2:]
    rc = subprocess.run(command).returncode
    if os.environ.get("FAKE_NSYS_MODE") == "noreport":
        print("Importer error status: The importer binary and its dependencies were not found.", flush=True)
        return 0
    with open(prefix + ".nsys-rep", "wb") as fh:
        fh.write(b"fake nsys report\n")
    shutil.copyfile(os.environ["FAKE_NSYS_SQLITE"], prefix + ".sqlite")
    print(f"Generated:\n    {prefix}.nsys-rep\n    {prefix}.sqlite", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

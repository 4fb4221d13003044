"""A stand-in for Nsight Compute's `ncu`, for tests on machines without a GPU.

Profile mode (`ncu ... --export REPORT ... -- CMD ARGS`): logs its argv (JSON) to
$FAKE_NCU_ARGV_LOG, prints `==PROF==` lines like ncu, runs CMD for real, and writes
REPORT as a copy of $FAKE_NCU_RECORDED (a recorded ncu raw-page CSV). $FAKE_NCU_MODE:
  ok          N kernels profiled, the report written, exit with CMD's status
  perm0/perm1 ERR_NVGPUCTRPERM printed for every kernel, no report, exit 0 / 1
  interrupt   N kernels profiled, then wait for SIGINT; on it write the report, exit 130
$FAKE_NCU_UNKNOWN names metrics this "chip" lacks (comma-separated): when --metrics holds any, ncu
refuses the first of them at once, as the real one does one name per run (`==ERROR== Failed to find
metric NAME`, or with $FAKE_NCU_UNKNOWN_FORM=regex the form `Failed to find metric
regex:^base\.(sum|avg|max|min)$`), runs nothing, writes no report and exits 1.
Every profile-mode argv is also appended, one JSON line per run, to $FAKE_NCU_ARGV_LOG.runs.
Import mode (`ncu --import REPORT --csv --page raw`): prints REPORT.
Query mode (`ncu --query-metrics --query-metrics-mode suffix --metrics BASES --csv`): with
$FAKE_NCU_CATALOG (a file of full metric names, one per line) prints, in the real ncu's CSV form, the
names of that file whose base is among BASES, for one chip ("gb100"); its argv goes to
$FAKE_NCU_ARGV_LOG.query. Without it prints the real ncu's answer on a machine without a driver.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

PERM = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
        "Counters on the target device 0. For instructions on enabling permissions and to get more information "
        "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def main(argv):
    if "--import" in argv:
        with open(argv[argv.index("--import") + 1]) as fh:
            sys.stdout.write(fh.read())
        return 0
    if "--query-metrics" in argv:
        return query(argv)
    log = os.environ.get("FAKE_NCU_ARGV_LOG")
    if log:
        with open(log, "w") as fh:
            json.dump(argv, fh)
        with open(log + ".runs", "a") as fh:
            fh.write(json.dumps(argv) + "\n")
    report = argv[argv.index("--export") + 1]
    requested = argv[argv.index("--metrics") + 1].split(",") if "--metrics" in argv else []
    unknown = [m for m in os.environ.get("FAKE_NCU_UNKNOWN", "").split(",") if m and m in requested]
    if unknown:
        name = unknown[0]
        if os.environ.get("FAKE_NCU_UNKNOWN_FORM") == "regex":
            base, _, _ = name.rpartition(".")
            name = "regex:^" + base.replace(".", "\\.") + "\\.(sum|avg|max|min)$"
        print(f"==ERROR== Failed to find metric {name}", flush=True)
        return 1
    command = argv[argv.index("--") + 1:]
    mode = os.environ.get("FAKE_NCU_MODE", "ok")
    kernels = int(os.environ.get("FAKE_NCU_KERNELS", "3"))
    print(f"==PROF== Connected to process {os.getpid()} ({command[0]})", flush=True)
    rc = subprocess.run(command).returncode
    for i in range(kernels):
        if mode.startswith("perm"):
            print(PERM, flush=True)
        else:
            print(f'==PROF== Profiling "kernel_{i}<float>" - {i}: 0%....50%....100% - 9 passes', flush=True)
    if mode.startswith("perm"):
        print("==PROF== Disconnected from process", os.getpid(), flush=True)
        print("==WARNING== No kernels were profiled.", flush=True)
        return 0 if mode == "perm0" else 1
    if mode == "interrupt":
        got = []
        signal.signal(signal.SIGINT, lambda *a: got.append(1))
        print("==PROF== waiting", flush=True)
        deadline = time.time() + 20
        while not got and time.time() < deadline:
            time.sleep(0.05)
        shutil.copyfile(os.environ["FAKE_NCU_RECORDED"], report)
        print(f"==PROF== Report: {report}", flush=True)
        return 130
    shutil.copyfile(os.environ["FAKE_NCU_RECORDED"], report)
    print(f"==PROF== Disconnected from process {os.getpid()}", flush=True)
    if rc != 0:
        print(f"==ERROR== The application returned an error code ({rc}).", flush=True)
    print(f"==PROF== Report: {report}", flush=True)
    return rc


def query(argv):
    log = os.environ.get("FAKE_NCU_ARGV_LOG")
    if log:
        with open(log + ".query", "w") as fh:
            json.dump(argv, fh)
    catalog = os.environ.get("FAKE_NCU_CATALOG")
    if not catalog:
        print("==ERROR== Driver could not be loaded.", flush=True)
        return 0
    bases = set(argv[argv.index("--metrics") + 1].split(","))
    print('"Metric name","Metric type","Metric unit","Metric description","gb100"')
    with open(catalog) as fh:
        for name in fh.read().split():
            if name.split(".")[0] in bases:
                print(f'"{name}","Counter","","(fake)","1"')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

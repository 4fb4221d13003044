"""Read what Nsight Compute prints while it runs: progress, permission errors, the program's fate.

ncu prefixes its own lines with ``==PROF==``, ``==WARNING==`` or ``==ERROR==``; the
program's output is interleaved. :class:`NcuProgress` folds lines into a state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PERMISSION_CODE = "ERR_NVGPUCTRPERM"
PERMISSION_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"

PERMISSION_HELP = f"""\
Nsight Compute may not read the GPU's performance counters ({PERMISSION_CODE}). Ways out:
  - run as root, or give the profiler CAP_SYS_ADMIN (Linux, or CAP_PERFMON on recent kernels);
  - allow all users: put `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file in
    /etc/modprobe.d/, then reboot (or reload the nvidia kernel module);
  - in a container: start it with `--cap-add SYS_ADMIN` (or `--privileged`); the host's
    driver setting above still applies;
  - or profile without counters: `roofline profile --no-counters` (PyTorch programs, estimated).
See {PERMISSION_URL}"""

_PROFILING = re.compile(r'^==PROF== Profiling "(?P<name>.*)" - (?P<id>\d+):.*?(?:- (?P<passes>\d+) pass(?:es)?)?\s*$')
_APP_ERROR = re.compile(r"^==ERROR== The application returned an error code \((?P<code>-?\d+)\)")
_REPORT = re.compile(r"^==PROF== Report: (?P<path>.+?)\s*$")
_CONNECTED = re.compile(r"^==PROF== Connected to process (?P<pid>\d+)")
# ncu's refusal of a metric the chip does not have, in two forms:
#   ==ERROR== Failed to find metric sm__foo.sum
#   ==ERROR== Failed to find metric regex:^sm__foo\.(sum|avg|max|min)$
# (the second is the regex ncu tried for the name; the requested sm__foo.sum is one it matches).
_UNKNOWN_METRIC = re.compile(r"Failed to find metrics?\s*:?\s*(?P<names>.+)$")
_METRIC_NAME = re.compile(r"[A-Za-z0-9_]+__[A-Za-z0-9_.]+")
_REGEX_TOKEN = re.compile(r"regex:(?P<pattern>\S+)")
# The form ncu writes: ^base\.(a|b|c)$ (an optional group of alternatives after the escaped dot).
_SIMPLE_REGEX = re.compile(r"^\^?(?P<base>[A-Za-z0-9_]+__[A-Za-z0-9_]*(?:\\\.[A-Za-z0-9_]+)*)"
                           r"(?:\\\.\((?P<alts>[A-Za-z0-9_.|\\]+)\))?\$?$")


def expand_metric_regex(pattern: str) -> list[str]:
    """The metric names an ncu metric regex of the simple form ``^base\\.(a|b)$`` stands for
    (``["base.a", "base.b"]``); ``[]`` for any other regex."""
    m = _SIMPLE_REGEX.match(pattern)
    if m is None:
        return []
    base = m["base"].replace("\\.", ".")
    if not m["alts"]:
        return [base]
    return [f"{base}.{alt.replace(chr(92), '')}" for alt in m["alts"].split("|") if alt]


@dataclass
class NcuProgress:
    """What ncu said so far. ``kernels`` counts launches profiled (finished)."""

    kernels: int = 0
    last_kernel: str | None = None
    passes: int | None = None
    processes: int = 0
    permission_error: bool = False
    app_error_code: int | None = None
    report: str | None = None
    no_kernels: bool = False
    errors: list[str] = field(default_factory=list)
    #: Metric names ncu said it cannot find (names in a regex refusal expanded, see :func:`expand_metric_regex`).
    unknown_metrics: list[str] = field(default_factory=list)
    #: The regexes of refusals written as ``regex:...`` (matched whole against requested names by :meth:`refused`).
    unknown_patterns: list[str] = field(default_factory=list)

    def refused(self, requested: list[str] | tuple[str, ...]) -> list[str]:
        """The requested metrics that ncu refused: named in a refusal, or matched whole by a refusal's regex."""
        compiled = []
        for pattern in self.unknown_patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error:
                continue
        # A base name asked for without its rollup (sm__foo) is what ncu expands to ^sm__foo\.(sum|...)$.
        bases = {m["base"].replace("\\.", ".") for p in self.unknown_patterns if (m := _SIMPLE_REGEX.match(p))}
        return [m for m in requested
                if m in self.unknown_metrics or m in bases or any(p.fullmatch(m) for p in compiled)]

    def feed(self, line: str) -> bool:
        """Take one line of output; True when the line was ncu's own (not the program's)."""
        line = line.rstrip("\r\n")
        if PERMISSION_CODE in line:
            self.permission_error = True
        if not line.startswith("=="):
            return False
        if m := _PROFILING.match(line):
            self.kernels += 1
            self.last_kernel = m["name"]
            if m["passes"]:
                self.passes = int(m["passes"])
        elif m := _CONNECTED.match(line):
            self.processes += 1
        elif m := _APP_ERROR.match(line):
            self.app_error_code = int(m["code"])
        elif m := _REPORT.match(line):
            self.report = m["path"]
        elif line.startswith("==WARNING== No kernels were profiled"):
            self.no_kernels = True
        if line.startswith("==ERROR=="):
            self.errors.append(line.removeprefix("==ERROR==").strip())
            if m := _UNKNOWN_METRIC.search(line):
                self._add_unknown(m["names"])
        return line.startswith(("==PROF==", "==WARNING==", "==ERROR=="))

    def _add_unknown(self, text: str) -> None:
        names: list[str] = []
        for token in text.replace(",", " ").split():
            if r := _REGEX_TOKEN.fullmatch(token):
                if r["pattern"] not in self.unknown_patterns:
                    self.unknown_patterns.append(r["pattern"])
                names += expand_metric_regex(r["pattern"])
            else:
                names += _METRIC_NAME.findall(token)
        self.unknown_metrics += [n for n in dict.fromkeys(names) if n not in self.unknown_metrics]

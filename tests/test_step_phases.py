"""A repeated range that marks a phase of each iteration, not the iteration (roofline.kernels.steps.spans).

roofline.torch.annotate marks ``forward`` and ``optimizer`` with push/pop ranges. The backward pass gets a
process-wide range, not a push/pop one. So in a timeline of its training loop, the step rule picks
``forward``, the repeated range that encloses the most launches. But most launches (backward, optimizer) fall
between its occurrences. Both the sample that ``roofline profile --timeline`` counts and the per-step
breakdown must then take whole iterations: from one ``forward`` to the next.

The timeline is written in the tables of a real nsys 2026.2 export (tests/nsys_build.py). Each iteration
(10 ms apart) has 2 forward launches inside ``forward``, 4 backward launches outside any push/pop range, and
1 optimizer launch inside ``optimizer``. Each kernel runs 50 us. Every expected figure follows from that
layout.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nsys_build import Launch, write_timeline
from roofline import api
from roofline.kernels.steps import spans
from roofline.readers.nsys.window import sample_window

ITERATION_NS = 10_000_000
KERNEL_NS = 50_000


def _loop(path: Path, iterations: int, *, step_range: bool = False) -> Path:
    launches, ranges = [], []
    for i in range(iterations):
        t = i * ITERATION_NS
        calls = [("fwd_a", t + 100_000), ("fwd_b", t + 200_000)]
        calls += [(f"bwd_{j}", t + 2_000_000 + j * 100_000) for j in range(4)]
        calls += [("adam", t + 5_100_000)]
        launches += [Launch(name, (1, 1, 1), (128, 1, 1), at, at + 10_000, at + 10_000 + KERNEL_NS) for name, at in calls]
        ranges += [(t, t + 1_000_000, 4242, "forward"), (t + 5_000_000, t + 6_000_000, 4242, "optimizer")]
        if step_range:  # the loop's own step range around the whole iteration
            ranges.append((t, t + 6_000_000, 4242, "train_step"))
    return write_timeline(path, launches, ranges)


def test_the_sample_is_the_second_whole_iteration(tmp_path):
    w = sample_window(_loop(tmp_path / "loop.sqlite", 3))
    assert (w.name, w.occurrence, w.occurrences, w.widened) == ("forward", 2, 3, True)
    assert (w.skip, w.count) == (7, 7)  # the first iteration's 7 launches, then the second's 7
    assert (w.start_ns, w.end_ns) == (ITERATION_NS, 2 * ITERATION_NS)
    assert w.describe() == ("the iteration from occurrence 2 of 3 of the NVTX range 'forward' to the next one "
                            "(launches fall between its occurrences: a phase, not a step): 7 kernel launches after "
                            "the first 7 (process 4242)")


def test_the_last_iteration_runs_to_the_last_launch(tmp_path):
    w = sample_window(_loop(tmp_path / "loop.sqlite", 2))
    assert (w.occurrence, w.occurrences, w.widened, w.skip, w.count) == (2, 2, True, 7, 7)
    assert "to the last launch" in w.describe()


def test_a_range_the_user_names_is_counted_as_it_is(tmp_path):
    w = sample_window(_loop(tmp_path / "loop.sqlite", 3), "forward", 2)
    assert (w.widened, w.skip, w.count) == (False, 7, 2)


def test_three_pushed_phases_make_whole_iterations_too(tmp_path):
    """With backward pushed as well, the rule picks it (4 launches an occurrence); 3 fall between (forward and
    optimizer), more than a quarter of 4."""
    path = _loop(tmp_path / "loop.sqlite", 3)
    import sqlite3

    with sqlite3.connect(path) as db:
        db.executemany('INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, domainId, text) '
                       "VALUES (?, ?, 59, ?, 0, 'backward')",
                       [(i * ITERATION_NS + 1_900_000, i * ITERATION_NS + 2_500_000, 4242 << 24 | 4242) for i in range(3)])
    w = sample_window(path)
    assert (w.name, w.widened, w.skip, w.count) == ("backward", True, 9, 7)  # backward #2 to backward #3


def test_a_real_step_range_is_not_widened(tmp_path):
    w = sample_window(_loop(tmp_path / "loop.sqlite", 3, step_range=True))
    assert (w.name, w.widened, w.skip, w.count) == ("train_step", False, 7, 7)
    assert w.end_ns == ITERATION_NS + 6_000_000


def test_the_breakdown_steps_are_whole_iterations(tmp_path):
    split = api.breakdown(api.read([_loop(tmp_path / "loop.sqlite", 3)]), window="step")
    assert [w.name for w in split.windows] == ["forward #1", "forward #2", "forward #3"]
    # every window holds its iteration's 7 kernels: 7 x 50 us of kernel time, first kernel start to last kernel end
    assert [round(sum(w.kernel_s.values()) * 1e9) for w in split.windows] == [7 * KERNEL_NS] * 3
    assert [w.end_ns - w.start_ns for w in split.windows] == [5_100_000 + KERNEL_NS - 100_000] * 3


@pytest.mark.parametrize("inside, between, widened", [(2, 5, True), (3, 3, True), (8, 3, True), (8, 2, False),
                                                     (5, 0, False)])
def test_widened_only_when_over_a_quarter_as_many_launches_fall_between(inside, between, widened):
    """Two occurrences [0, 100) and [1000, 1100); ``inside`` calls in the first, ``between`` in [100, 1000), and
    the process's last call at 1500: a widened last step runs to just after it."""
    import pandas as pd

    chosen = pd.DataFrame({"start_ns": [0, 1000], "end_ns": [100, 1100]})
    calls = np.sort(np.r_[np.arange(inside) * 10, 200 + np.arange(between) * 10, [1050, 1500]]).astype(np.int64)
    starts, ends, was = spans(chosen, calls)
    assert was is widened
    assert ends.tolist() == ([1000, 1501] if widened else [100, 1100])
    assert starts.tolist() == [0, 1000]

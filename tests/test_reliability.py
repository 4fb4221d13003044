"""The decision whether measured figures can be trusted, on given numbers (no measuring)."""

from __future__ import annotations

import math

import pytest

from roofline.bench import reliability
from roofline.bench.reliability import assess, repeat_ratio


def test_repeat_ratio_is_fastest_over_slowest_of_the_usable_repeats():
    assert repeat_ratio([80.8e9, 51.8e9, 79.0e9]) == pytest.approx(80.8 / 51.8)
    assert repeat_ratio([5.0, 5.0]) == 1.0
    assert repeat_ratio([4.0, math.nan, 0.0, -1.0, 5.0]) == pytest.approx(1.25)  # NaN and non-positive ignored
    assert math.isnan(repeat_ratio([3.0])) and math.isnan(repeat_ratio([]))


def test_steady_repeats_on_an_idle_machine_give_no_warning():
    v = assess({"fp64": 1.05, "fp32": 1.19, "dram": 1.0}, load=0.2, cpu_share=0.97)
    assert v.warning is None and v.unsteady == {} and v.load_per_core is None and v.cpu_share is None


def test_the_two_runs_of_the_issue_are_flagged_by_their_spread():
    """FP64 80.8 then 51.8 GFLOP/s: within one run, repeats that differ as much name the ceiling and the ratio."""
    v = assess({"fp64": 80.8 / 51.8, "fp32": 1.1, "l1": 1.35}, load=None)
    assert v.unsteady == pytest.approx({"fp64": 1.5598, "l1": 1.35}, rel=1e-3)
    assert v.warning.count("\n") == 0
    assert "fp64 1.56x, l1 1.35x" in v.warning  # worst first
    assert "fp32" not in v.warning and "load average" not in v.warning


def test_threshold_is_strict_and_adjustable():
    assert assess({"dram": 1.2}, load=0.5).warning is None  # at the limits: not over them
    assert assess({"dram": 1.2001}, load=None).unsteady == {"dram": 1.2001}
    assert assess({"dram": 1.15}, load=None, max_ratio=1.1).unsteady == {"dram": 1.15}


def test_load_before_measuring_alone_warns():
    v = assess({"fp64": 1.01}, load=1.6)
    assert v.load_per_core == 1.6 and v.unsteady == {}
    assert "load average was 1.60 per core" in v.warning and "repeats varied" not in v.warning
    assert assess({}, load=0.51).load_per_core == 0.51


def test_threads_off_their_cores_warn():
    v = assess({"fp64": 1.02}, load=0.1, cpu_share=0.45)
    assert v.cpu_share == 0.45 and "on a core 45% of the time" in v.warning
    assert assess({}, load=None, cpu_share=0.8).warning is None


def test_unknowns_say_nothing_either_way():
    v = assess({"fp64": math.nan, "dram": math.inf}, load=None, cpu_share=math.nan)
    assert v.warning is None  # an infinite ratio is not a measurement (a zero repeat is dropped earlier)
    assert assess({}, load=math.nan).warning is None


def test_load_per_core_divides_by_the_usable_cores(monkeypatch):
    monkeypatch.setattr(reliability.os, "getloadavg", lambda: (3.0, 2.0, 1.0))
    monkeypatch.setattr(reliability, "usable_cores", lambda: 2)
    assert reliability.load_per_core() == 1.5

    def no_loadavg():
        raise OSError("no load average here")

    monkeypatch.setattr(reliability.os, "getloadavg", no_loadavg)
    assert reliability.load_per_core() is None

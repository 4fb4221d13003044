"""Display names of section exports: the table matches the real ncu's section files, and a details
page of sections only reads as a profile (time, and what else it holds)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from needs import needs_ncu

from roofline.readers.ncu.display import CHART_SECTIONS, SECTIONS, UNAMBIGUOUS, metric_for


def _section_files() -> dict[str, dict[str, str]]:
    """section display name -> {header label: metric} read from the installed ncu's section files."""
    ncu = shutil.which("ncu")
    assert ncu is not None
    root = Path(ncu).resolve().parent
    found: list[Path] = []
    for up in (root, *root.parents[:4]):
        found = sorted(up.glob("**/sections/SpeedOfLight.section"))
        if found:
            break
    assert found, f"no sections/ folder near {root}"
    out: dict[str, dict[str, str]] = {}
    for path in found[0].parent.glob("*.section"):
        text = path.read_text()
        name = re.search(r'^DisplayName: "(.*)"', text, re.M)
        header = re.search(r"^Header \{(.*?)^\}", text, re.M | re.S)
        if name and header:
            out[name.group(1)] = dict(re.findall(r'Label: "([^"]*)"\s*Name: "([^"]*)"', header.group(1)))
        elif name and name.group(1) in CHART_SECTIONS:  # no header: every Label/Name pair of the file
            pairs: dict[str, set[str]] = {}
            for label, metric in re.findall(r'Label: "([^"]*)"\s*Name: "([^"]*)"', text):
                pairs.setdefault(label, set()).add(metric)
            out[name.group(1)] = pairs  # type: ignore[assignment]
    return out


@needs_ncu
def test_every_display_name_is_what_the_real_section_files_say() -> None:
    real = _section_files()
    assert "GPU Speed Of Light Throughput" in real
    for section, labels in SECTIONS.items():
        assert section in real, section
        for label, metric in labels.items():
            found = real[section].get(label)
            if section in CHART_SECTIONS:  # a chart label may name one quantity on two units (sm, smsp)
                assert found is not None and metric in found, (section, label, metric, found)
            else:
                assert found == metric, (section, label, metric, found)


def test_the_same_label_in_two_sections_is_told_apart() -> None:
    assert metric_for("Memory Throughput", "GPU Speed Of Light Throughput").endswith("pct_of_peak_sustained_elapsed")
    assert metric_for("Memory Throughput", "Memory Workload Analysis") == "dram__bytes.sum.per_second"
    assert "Memory Throughput" not in UNAMBIGUOUS
    assert metric_for("Duration", None) == "gpu__time_duration.sum"
    assert metric_for("No Such Label", "GPU Speed Of Light Throughput") is None

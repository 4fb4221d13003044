"""Kernel-name demangling and NVTX phases."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from needs import needs_ncu

from roofline.kernels import widened  # a launch table leaves out the counts it has no counter for
from roofline.readers.ncu import names
from roofline.readers import read_profile


def test_demangles_only_mangled_names():
    s = pd.Series(["_Z6kernelPfi", "void k2()", None, "_Z6kernelPfi"], dtype="string")
    out, warnings = names.demangle_names(s)
    assert out.tolist()[:2] == ["kernel(float*, int)", "void k2()"]
    assert out.isna().tolist() == [False, False, True, False]
    assert out.iloc[3] == "kernel(float*, int)"
    assert warnings == []


def test_no_demangler_keeps_names_and_warns(monkeypatch):
    monkeypatch.setattr(names, "_demangler", lambda: None)
    out, warnings = names.demangle_names(pd.Series(["_Z1fv"], dtype="string"))
    assert out.tolist() == ["_Z1fv"]
    assert len(warnings) == 1 and "cxxfilt" in warnings[0]


@pytest.mark.parametrize("stack,phase", [
    ("train_step/forward", "forward"), ("default:step/backward", "backward"), ("optimizer", "optimizer"),
    ("aten::mm", "aten::mm"), ("", None), (None, None),
])
def test_innermost_range(stack, phase):
    assert names.innermost_range(stack) == phase


def test_csv_nvtx_column_fills_phase(tmp_path):
    p = tmp_path / "nvtx.csv"
    p.write_text(
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","NVTX Range","gpu__time_duration.sum"\n'
        '"","","","","","","","","","","","","nsecond"\n'
        '"0","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","train_step/forward","1000"\n'
        '"1","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","","1000"\n'
    )
    t = read_profile(p)
    assert t.frame["phase"].iloc[0] == "forward"
    assert pd.isna(t.frame["phase"].iloc[1])
    assert "NVTX Range" not in t.metrics.columns


def test_phase_is_unknown_without_nvtx():
    from pathlib import Path

    csv = Path(__file__).parent / "data" / "ncu" / "a100_naive_sgemm" / "a100_details_smsp_printfp_naive_sgemm.csv"
    assert read_profile(csv).frame["phase"].isna().all()


# -- ncu --nvtx exports ----------------------------------------------------------------------------
# Header strings: verbatim from the ncu 2024.1.1 binary (Debian's nsight-compute package, as
# .ci/install-ncu installs it); test_ncu_writes_these_headers checks them against it.
PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_END = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
RANGE_ONLY = "Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
# Values: the form public readers of these exports parse: the thread id, then each open range in
# double quotes, outermost first, each "domain:name:" + six attribute fields ("none" when unset),
# e.g. LLNL Hatchet's Nsight reader (hatchet/readers/nsight_reader.py: strips
# ":none:none:none:none:none:none", the quotes, and splits the stack on white space), and test
# strings such as '1614690  "<default domain>:THOG2_PROCESSING|owner=MAIN|...:none:none:none:none:none:none"'
# and '0:<default domain>:compute_kernel:profile:none:none:none:none:none:none' (start/end, id first)
# quoted in public ncu-CSV parsers. No small real export with these columns was found to keep here.
RAW_HEADER = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, START_END, "Kernel Name", "Context",
              "Stream", "Block Size", "Grid Size", "Device", "CC", "gpu__time_duration.sum"]


def _nvtx_csv(tmp_path, rows):  # type: ignore[no-untyped-def]
    """A raw page with ncu's NVTX columns: rows are (push/pop cell, start/end cell)."""
    import csv

    p = tmp_path / "nvtx_raw.csv"
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(RAW_HEADER)
        w.writerow([""] * (len(RAW_HEADER) - 1) + ["nsecond"])
        for i, (push_pop, start_end) in enumerate(rows):
            w.writerow([i, 4242, "python3", "127.0.0.1", push_pop, start_end, f"k{i}", 1, 7, "(256, 1, 1)",
                        "(80, 1, 1)", 0, "9.0", 1000])
    return p


NONE6 = ":none:none:none:none:none:none"


def test_ncu_nvtx_columns_give_the_innermost_push_pop_range_else_the_last_start_end_range(tmp_path):
    rows = [
        ('4242  "<default domain>:train_step' + NONE6 + '"  "<default domain>:forward' + NONE6 + '" ', ""),
        ('4242  "<default domain>:optimizer' + NONE6 + '"', '"3:<default domain>:backward' + NONE6 + '"'),
        ("4243", '"3:<default domain>:epoch' + NONE6 + '"  "5:<default domain>:backward' + NONE6 + '"'),
        ("", "5:<default domain>:backward" + NONE6),  # unquoted, as some parsers expect too
        # names keep their colons; an operator range is not a phase (it was before PyTorch attribution):
        # it names the launch's op, and with no phase, marker or module range the phase is unknown
        ('4242  "<default domain>:aten::mm' + NONE6 + '"', ""),
        ('4242  "<default domain>:forward:int64:7:ARGB:0xff00ff00:none:none"', ""),  # payload and color set
        ('4242  "<default domain>:forward' + NONE6 + '"  "NCCL:AllReduce' + NONE6 + '"', ""),  # a library's domain
        ('4242  "NVTX:forward' + NONE6 + '"', ""),  # a named domain only
        ("", ""),
    ]
    t = read_profile(_nvtx_csv(tmp_path, rows))
    t = replace(t, frame=widened(t.frame))  # text decoded, to fill with "<NA>"
    assert t.frame["phase"].fillna("<NA>").tolist() == ["forward", "optimizer", "backward", "backward", "<NA>",
                                                        "forward", "forward", "forward", "<NA>"]
    assert t.frame["op"].fillna("<NA>").tolist() == ["<NA>"] * 4 + ["aten::mm"] + ["<NA>"] * 4
    assert t.frame["module"].isna().all()
    assert not any("Range" in c for c in t.metrics.columns)  # NVTX columns are not metrics
    assert t.frame["time_s"].tolist() == pytest.approx([1e-6] * len(rows))


def test_nvtx_range_fields():
    assert names.parse_nvtx_range("<default domain>:forward" + NONE6) == ("<default domain>", "forward")
    assert names.parse_nvtx_range("NVTX:aten::mm, seq = 3" + NONE6) == ("NVTX", "aten::mm, seq = 3")
    assert names.parse_nvtx_range("12:<default domain>:backward" + NONE6, with_id=True) == ("<default domain>", "backward")
    assert names.parse_nvtx_range("<default domain>::none:none:none:none:registered:forward") == (
        "<default domain>", "forward")  # no name: the message names the range
    assert names.parse_nvtx_range("forward" + NONE6, with_domain=False) == ("<default domain>", "forward")
    assert names.parse_nvtx_range("  ") is None


def test_ranges_without_domain_beside_a_domain_column():
    frame = pd.DataFrame({
        "Domain": ["<default domain>", "NVTX", None],
        RANGE_ONLY: ['"step' + NONE6 + '" "forward' + NONE6 + '"', '"backward' + NONE6 + '"', ""],
    })
    assert names.phase_from_nvtx(frame).tolist()[:2] == ["forward", "backward"]
    assert pd.isna(names.phase_from_nvtx(frame).iloc[2])


@pytest.mark.parametrize("column,kind", [
    (PUSH_POP, "push_pop"), (START_END, "start_end"), (RANGE_ONLY, "range"), ("Domain", "domain"),
    ("NVTX Range", "legacy"), ("4242 Domain:Push/Pop_Range:PL_Type:PL_Value", "push_pop"),
    ("Kernel Name", None), ("gpu__time_duration.sum", None),
])
def test_nvtx_column_kinds(column, kind):
    from roofline.readers.ncu.csv_export import is_nvtx_column

    assert names.nvtx_column_kind(column) == kind
    assert is_nvtx_column(column) is (kind is not None)


def _ncu_binary():  # type: ignore[no-untyped-def]
    import shutil
    from pathlib import Path

    launcher = Path(shutil.which("ncu") or "").resolve()
    found = sorted(launcher.parent.glob("target/*/ncu")) + [launcher]
    return next(p for p in found if p.is_file() and p.stat().st_size > 1_000_000)


@needs_ncu
def test_ncu_writes_these_headers():
    binary = _ncu_binary().read_bytes()
    for header in (PUSH_POP, START_END, RANGE_ONLY):
        assert header.encode() in binary, header
        assert names.nvtx_column_kind(header) is not None


def test_details_page_nvtx_columns(tmp_path):
    p = tmp_path / "details.csv"
    head = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, START_END, "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    import csv

    with p.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(head)
        for i, stack in enumerate(['1  "<default domain>:forward' + NONE6 + '"', "1"]):
            for metric, unit, value in (("gpu__time_duration.sum", "usecond", "2"), ("dram__bytes.sum", "Kbyte", "3")):
                w.writerow([i, 1, "python3", "127.0.0.1", stack, "" if i == 0 else "7:<default domain>:backward" + NONE6,
                            "k", 1, 7, "(1, 1, 1)", "(1, 1, 1)", 0, "8.0", "Command line profiler metrics",
                            metric, unit, value])
    t = read_profile(p)
    assert t.frame["phase"].tolist() == ["forward", "backward"]
    assert t.frame["dram_bytes"].tolist() == [3000, 3000]

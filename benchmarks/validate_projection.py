"""Validate `roofline project` on real pairs: the same program profiled on two GPUs.

Each pair lives in tests/data/ncu/pairs/<name>/ with a ``pair.json``::

    {"name": "...", "source": ["file", ...], "target": ["file", ...],
     "source_machine": null, "target_machine": null,      # default: each profile's own ceilings
     "kind": "memory-bound" | "mixed", "provenance": "PROVENANCE.md"}

For each pair the source profile is projected onto the target machine (its spec and the target
profile's own peak metrics, at the SM clock the target's kernels ran at: a profile records it),
kernels are matched by name, and the script reports per kernel the projected and measured time
on the target, the error (projected / measured - 1) and whether the measured time lies inside the
stated range; then the whole program: total projected against total measured, and the share of the
measured time whose kernels' true time lies inside their range.

Targets (issue 13): whole-program time within 15% for memory-bound programs; the true time inside
the stated range for at least 90% of the kernel time.

    python benchmarks/validate_projection.py [--out benchmarks/results/projection]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "tests" / "data" / "ncu" / "pairs"
WHOLE_PROGRAM_TARGET = 0.15
INSIDE_RANGE_TARGET = 0.90


def _mean_clock(frame: pd.DataFrame, highest: float | None = None) -> float | None:
    """The time-weighted mean SM clock, each launch's taken as at most ``highest`` (the device's maximum: ncu's
    clock reads high on short launches), as the analysis takes it."""
    t, c = frame["time_s"].to_numpy(float), frame["sm_clock_hz"].to_numpy(float)
    if highest:
        c = np.fmin(c, highest)
    ok = np.isfinite(t) & np.isfinite(c) & (t > 0)
    return float(np.sum(t[ok] * c[ok]) / np.sum(t[ok])) if ok.any() else None


def _measured_on_target(src: pd.DataFrame, tgt: pd.DataFrame, match: str) -> pd.DataFrame:
    """Per source kernel name: the target's measured time, launches and kernel names. ``match``: "name"
    (the same kernel names) or "launch-order" (the same program: the i-th launch there is the i-th here,
    whatever kernel the target's libraries picked for it)."""
    if match == "launch-order":
        s = src.sort_values("launch_id", kind="stable").reset_index(drop=True)
        t = tgt.sort_values("launch_id", kind="stable").reset_index(drop=True)
        if len(s) != len(t):
            raise SystemExit(f"launch-order matching needs as many launches on both sides ({len(s)} vs {len(t)})")
        t = t.assign(kernel_name=s["kernel_name"].to_numpy(), target_name=t["kernel_name"].to_numpy())
    elif match == "name":
        t = tgt.assign(target_name=tgt["kernel_name"])
    else:
        raise SystemExit(f"unknown match {match!r}: name or launch-order")
    g = t.groupby("kernel_name", sort=False)
    out = g[["time_s", "launches"]].sum()
    out["names"] = g["target_name"].agg(lambda v: sorted(set(map(str, v))))
    return out


def validate_pair(folder: Path) -> dict:
    """Project one pair and compare with the target's measured times; a JSON-ready dict."""
    from roofline import api
    from roofline.projection import profile_l2_bytes, project

    spec = json.loads((folder / "pair.json").read_text())
    src_table = api.read([folder / f for f in spec["source"]])
    tgt_table = api.read([folder / f for f in spec["target"]])
    source = api.load_machine(spec["source_machine"]) if spec.get("source_machine") else api.machine_for(src_table)
    target = api.load_machine(spec["target_machine"]) if spec.get("target_machine") else api.machine_for(tgt_table)
    if source is None or target is None:
        raise SystemExit(f"{folder.name}: no ceilings for the {'source' if source is None else 'target'}")
    clock = _mean_clock(tgt_table.frame, target.max_sm_clock_hz)
    proj = project(src_table, target, source, by="name", target_clock_hz=clock,
                   source_l2_bytes=profile_l2_bytes(src_table))
    measured = _measured_on_target(src_table.frame, tgt_table.frame, spec.get("match", "name"))
    f = proj.frame.set_index("kernel_name")
    rows = []
    for name, r in f.iterrows():
        if name not in measured.index or not r["projected"]:
            continue
        true = float(measured.loc[name, "time_s"])
        # per launch on both sides, so that a different number of launches compares alike
        scale = float(measured.loc[name, "launches"]) / float(r["launches"])
        proj_t, low, high = (float(r[c]) * scale for c in ("projected_time_s", "low_time_s", "high_time_s"))
        rows.append({"kernel": name, "target_kernels": measured.loc[name, "names"],
                     "time_source_s": float(r["time_s"]) * scale, "measured_target_s": true,
                     "projected_s": proj_t, "best_s": float(r["best_time_s"]) * scale, "low_s": low, "high_s": high,
                     "error": proj_t / true - 1.0, "inside_range": bool(low <= true <= high),
                     "bound_source": str(r["bound"]), "bound_target": str(r["bound_target"]),
                     "notes": list(r["notes"])})
    if not rows:
        raise SystemExit(f"{folder.name}: no kernel of the source is in the target profile")
    k = pd.DataFrame(rows)
    total_true, total_proj = k["measured_target_s"].sum(), k["projected_s"].sum()
    inside = k.loc[k["inside_range"], "measured_target_s"].sum() / total_true
    whole = total_proj / total_true - 1.0
    memory_bound = spec.get("kind") == "memory-bound"
    subset = None
    if spec.get("memory_bound_kernels"):  # the memory-bound part of a mixed program, judged on its own
        mb = k[k["kernel"].str.contains(spec["memory_bound_kernels"], regex=True)]
        t, p = float(mb["measured_target_s"].sum()), float(mb["projected_s"].sum())
        subset = {"kernels": spec["memory_bound_kernels"], "measured_target_s": t, "projected_s": p,
                  "error": p / t - 1.0, "high_s": float(mb["high_s"].sum()), "low_s": float(mb["low_s"].sum())}
    return {
        "pair": spec["name"], "source_gpu": source.name, "target_gpu": target.name,
        "target_clock_hz": clock, "kind": spec.get("kind"),
        "kernels": rows,
        "whole_program": {"measured_target_s": total_true, "projected_s": total_proj, "error": whole,
                          "low_s": float(k["low_s"].sum()), "high_s": float(k["high_s"].sum()),
                          "measured_source_s": float(k["time_source_s"].sum())},
        "memory_bound_part": subset,
        "time_inside_range": float(inside),
        "targets": {
            "whole_program_within_15pct": bool(abs(whole) <= WHOLE_PROGRAM_TARGET) if memory_bound else None,
            "memory_bound_part_within_15pct": bool(abs(subset["error"]) <= WHOLE_PROGRAM_TARGET) if subset else None,
            "time_inside_range_90pct": bool(inside >= INSIDE_RANGE_TARGET),
        },
        "projection_notes": list(proj.notes),
    }


def report_markdown(results: list[dict]) -> str:
    from roofline.units import format_time

    def t(seconds: float) -> str:
        return format_time(seconds) if math.isfinite(seconds) else "unbounded"

    lines = ["# Projection validation on real pairs", "",
             "Command: `python benchmarks/validate_projection.py --out benchmarks/results/projection` (no GPU needed: "
             "both sides are recorded profiles). Each source profile is projected onto the target GPU (its ceilings at "
             "the clock its kernels ran at); error = projected / measured - 1; times per kernel summed over its "
             "launches.", ""]
    for r in results:
        w = r["whole_program"]
        clock = f" (target clock {r['target_clock_hz'] / 1e9:.3f} GHz)" if r["target_clock_hz"] else ""
        lines += [f"## {r['pair']}", "", f"{r['source_gpu']} -> {r['target_gpu']}{clock}", "",
                  "| kernel | here | measured there | projected | range | error | inside | limiter |",
                  "|---|---|---|---|---|---|---|---|"]
        for k in r["kernels"]:
            lines.append(f"| {k['kernel'][:60]} | {t(k['time_source_s'])} | {t(k['measured_target_s'])} "
                         f"| {t(k['projected_s'])} | {t(k['low_s'])}–{t(k['high_s'])} "
                         f"| {k['error']:+.1%} | {'yes' if k['inside_range'] else 'no'} "
                         f"| {k['bound_source']} → {k['bound_target']} |")
        lines += ["", f"Whole program: measured {t(w['measured_target_s'])}, projected {t(w['projected_s'])}, "
                      f"error {w['error']:+.1%}; measured time inside the stated range: {r['time_inside_range']:.1%}."]
        m = r["memory_bound_part"]
        if m:
            lines += [f"Memory-bound part ({m['kernels']}): measured {t(m['measured_target_s'])}, projected "
                      f"{t(m['projected_s'])} (range {t(m['low_s'])}–{t(m['high_s'])}), error {m['error']:+.1%}."]
        lines += ["", "Targets: " + ", ".join(f"{k} {'met' if v else 'missed'}" for k, v in r["targets"].items()
                                             if v is not None), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="folder for projection_validation.json and .md")
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    args = ap.parse_args(argv)
    folders = sorted(p.parent for p in args.pairs.glob("*/pair.json"))
    if not folders:
        print(f"no pairs under {args.pairs}", file=sys.stderr)
        return 2
    results = [validate_pair(f) for f in folders]
    md = report_markdown(results)
    print(md)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "projection_validation.json").write_text(json.dumps(results, indent=2) + "\n")
        (args.out / "projection_validation.md").write_text(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The guidance rules, as data: what each reads, its thresholds, its source, and a small check.

A :class:`Rule` names the metrics it needs (raw ncu metrics or analysis columns; a
rule may accept one of several sets of them), its thresholds as named values, and
where its logic comes from. Its ``check`` sees one row (analysis columns merged with
the row's metrics) and returns a :class:`Finding`. A rule whose metrics are missing
never runs: :func:`roofline.guidance.diagnose.diagnose` records which metrics would
enable it instead.

The rules that read the instruction roofline (memory-pattern walls, bank conflicts, issue)
are in :mod:`roofline.guidance.memory_patterns` and listed here after the others.

To add a rule: write a check function below, add a :class:`Rule` to :data:`RULES`,
and, if it names a new limiter, add the limiter to :data:`LIMITERS` (with the plain
sentence of what usually helps) and to :data:`LIMITER_PRIORITY`, and say in
:data:`roofline.guidance.headline.SUPPORT` how much time its numbers support: the headline of a
kernel is the claim its rows support most (:mod:`roofline.guidance.headline`); the priority
breaks ties and orders the claims whose support is not measured.

Percentages from ncu are in percent (0..100); fractions from the analysis are 0..1.
"""

from __future__ import annotations

import math

from roofline.guidance import metrics as m
from roofline.guidance.memory_patterns import PATTERN_RULES, used_bytes_per_sector
from roofline.guidance.rule_types import (
    BPG_BANDWIDTH, BPG_COALESCING, HEURISTIC, NCU_MEMORY_TABLES, NCU_SOL, NCU_UNCOALESCED, PAPER, Check, Finding,
    Limiter, RowValues, Rule, Threshold,
)
from roofline.units import format_number, format_si, format_time
from roofline.kernels.vendor import bound_words

#: Limiters the rules name, with the plain sentence of what usually helps.
LIMITERS: dict[str, Limiter] = {
    "small-grid": Limiter("grid too small", "too few blocks to fill the GPU (less than one wave)",
                          "launch more work at once (bigger grid, batching), fuse small kernels, or run them concurrently in streams"),
    "short-kernel": Limiter("launch overhead", "launches so short that launch overhead and ramp-up dominate",
                            "fuse small kernels or capture them in a CUDA Graph"),
    "uncoalesced": Limiter("uncoalesced access", "uncoalesced global memory accesses, which move more sectors than the data needs",
                           "fix coalescing: make neighbouring threads touch neighbouring addresses (change the data layout or stage through shared memory)"),
    "local-memory": Limiter("register spills", "local memory (register spills, or per-thread arrays indexed at run "
                            "time), which moves through L1 and L2 like global memory",
                            "give each thread more registers (__launch_bounds__, fewer threads per block, "
                            "-maxrregcount), index per-thread arrays with compile-time constants, or keep them in "
                            "shared memory"),
    "bank-conflicts": Limiter("shared-memory bank conflicts", "shared-memory bank conflicts, which replay a warp's "
                              "shared accesses as several wavefronts",
                              "pad shared arrays, swizzle the index, or change which thread reads which word, so a "
                              "warp's 32 threads hit 32 different banks"),
    "broadcast": Limiter("broadcast loads", "global loads where a warp's threads read one address (the stride-0 wall), "
                         "so each instruction moves a sector or less",
                         "hoist loop-invariant loads into registers, keep values every thread reads in constant "
                         "memory, or load them once per block into shared memory (tiling)"),
    "latency": Limiter("latency", "latency: neither compute nor memory is busy, warps wait",
                       "put more work in flight: more independent instructions per thread, higher occupancy, fewer dependent loads"),
    "memory": Limiter("memory bandwidth", "memory bandwidth",
                      "raise arithmetic intensity: reuse data from cache or shared memory (tiling), fuse kernels that pass data through memory, use smaller data types"),
    "fp64": Limiter("FP64 throughput", "FP64 arithmetic, which runs at a fraction of the FP32 rate on most GPUs",
                    "move FP64 to FP32 (or mixed precision) where the science allows"),
    "tensor-cores": Limiter("no tensor cores", "FP16/FP32 arithmetic on the CUDA cores, far below the tensor-core peak",
                            "use tensor cores (cuBLAS/cuDNN with TF32/FP16/BF16, or WMMA/MMA in your own kernels)"),
    "issue": Limiter("instruction issue", "instruction issue: the schedulers issue near their peak of one warp "
                     "instruction per clock",
                     "issue fewer instructions: vector loads and stores, less index arithmetic, fused or wider "
                     "operations (FMA, half2, tensor cores)"),
    "compute": Limiter("compute throughput", "compute throughput near the peak of the units it uses",
                       "do less arithmetic (better algorithm, avoid recomputation) or use faster units (tensor cores, lower precision)"),
    "inconsistent": Limiter("inconsistent counters", "figures beyond physical limits (achieved above a ceiling or "
                            "the spec, more sectors or wavefronts per instruction than a warp can take): the "
                            "counters or the ceilings they are divided by, not the kernel",
                            "read why (--explain): a ceiling below what the GPU delivers (measure again, or "
                            "--machine SPEC), the clock, or a counter that was not collected"),
    "poor-use": Limiter("low utilization", "neither compute nor memory bandwidth is used well (below half of both ceilings)",
                        "put more work in flight and check coalescing; profile scheduler and warp-state statistics to see why warps stall"),
}

#: When several rules name a limiter and their supports tie or are not measured, the first in this
#: order is the one reported (:mod:`roofline.guidance.headline`).
LIMITER_PRIORITY: tuple[str, ...] = (
    "small-grid", "short-kernel", "local-memory", "uncoalesced", "bank-conflicts", "broadcast", "latency", "fp64", "tensor-cores",
    "memory", "issue", "compute", "poor-use",
)


def _pct(x: float) -> str:
    return f"{x:.0f}%" if math.isfinite(x) else "-"


# -- checks ---------------------------------------------------------------------------------
def check_speed_of_light(v: RowValues, r: Rule) -> Finding:
    """Classify the kernel by its compute and memory throughput (percent of peak), as ncu's SOLBottleneck."""
    sm, mem, waves = v.get(m.SM_THROUGHPUT), v.get(m.MEMORY_THROUGHPUT), v.get(m.WAVES_PER_SM)
    vals = {"compute_pct": sm, "memory_pct": mem, "waves_per_sm": waves}
    where = f"compute {_pct(sm)} and memory {_pct(mem)} of peak"
    brief = f"SOL: compute {_pct(sm)}, memory {_pct(mem)}"
    if sm >= r.t("bound_pct") or mem >= r.t("bound_pct"):
        unit = "compute" if sm >= mem else "memory"
        return r.finding("fired", f"Throughput-bound on {unit} ({where}): further gains need work moved off the "
                         f"busiest unit.", severity="medium", limiter="compute" if unit == "compute" else "memory",
                         values=vals, brief=brief)
    if sm < r.t("latency_pct") and mem < r.t("latency_pct"):
        if math.isfinite(waves) and waves < r.t("waves"):
            return r.finding("fired", f"Grid too small: {waves:.2f} waves of blocks per SM, so the GPU is never "
                             f"full ({where}).", severity="high", limiter="small-grid", values=vals,
                             brief=f"{waves:.2f} waves/SM; {brief}")
        note = "" if math.isfinite(waves) else (f" (grid size not checked: {m.WAVES_PER_SM} was not collected)")
        return r.finding("fired", f"Latency problem: {where}, both under {r.t('latency_pct'):.0f}%; look at "
                         f"scheduler and warp-state statistics{note}.", severity="high", limiter="latency", values=vals,
                         brief=brief)
    if abs(sm - mem) >= r.t("balanced_pct"):
        unit = "compute" if sm > mem else "memory"
        return r.finding("fired", f"{unit.capitalize()} is the more heavily used unit ({where}).", severity="info",
                         limiter="compute" if unit == "compute" else "memory", values=vals, brief=brief)
    return r.finding("ok", f"Compute and memory are balanced ({where}): both work and traffic must shrink to go "
                     f"faster.", values=vals)


#: Why a rule without the access size hedges up to 16 sectors per request.
WIDEST_WORDS = ("32 threads x 16 B (float4) = 16 sectors: without the access size or the bytes used per sector, "
                "up to this many is waste or width, not told apart")


def _ideal_sectors_per_request(v: RowValues, r: Rule) -> tuple[float, bool]:
    """Ideal sectors per request: bytes per thread per access (32 threads x b bytes = b sectors of 32 B).

    Uses the access-size instruction counts when collected (as ncu's MemoryCacheAccessPattern
    rule does), else assumes 32-bit words. Returns (ideal, measured?).
    """
    counts = {size: v.get(name) for size, name in m.ACCESS_SIZE_INSTRUCTIONS.items()}
    if all(math.isfinite(c) for c in counts.values()):
        total = sum(counts.values())
        if total > 0:
            return sum(size * c for size, c in counts.items()) / total, True
    return r.t("ideal_sectors_per_request"), False


def _coalescing(v: RowValues, r: Rule, sectors_name: str, requests_name: str, what: str) -> Finding:
    sectors, requests = v.get(sectors_name), v.get(requests_name)
    ideal, measured = _ideal_sectors_per_request(v, r)
    if requests <= 0:
        return r.finding("ok", f"No global {what}s.", values={"sectors": sectors, "requests": requests})
    spr = sectors / requests
    excess = max(0.0, sectors - requests * ideal)
    vals = {"sectors_per_request": spr, "ideal_sectors_per_request": ideal, "excess_sectors": excess,
            "excess_bytes": excess * m.SECTOR_BYTES, "excess_share": excess / sectors if sectors > 0 else math.nan}
    basis = "measured access size" if measured else "assuming 32-bit words"
    used = used_bytes_per_sector(v, "ld" if what == "load" else "st")
    vals["used_bytes_per_sector"] = used
    if not measured and spr > ideal and used >= r.t("full_use_bytes"):
        return r.finding("ok", f"Global {what}s use {spr:.1f} sectors per request and {used:.1f} of every 32 bytes "
                         f"fetched: wider words than 32 bits (e.g. float4), coalesced.", values=vals)
    widest = r.t("widest_sectors_per_request")
    if not measured and not math.isfinite(used) and ideal * r.t("tolerance") < spr <= widest:
        # 16-byte words at unit stride take 16 sectors: the counts alone cannot tell waste from width.
        per_sector = m.GLOBAL_LD_BYTES_PER_SECTOR if what == "load" else m.GLOBAL_ST_BYTES_PER_SECTOR
        return r.finding("fired", f"Global {what}s use {spr:.1f} sectors per request: uncoalesced if they are 32-bit "
                         f"words ({ideal:.0f} would do, {format_si(excess * m.SECTOR_BYTES, 'B')} of excess traffic), "
                         f"coalesced if they are up to 16-byte words (float4: {widest:.0f}). The profile holds neither "
                         f"the access size nor the bytes used per sector: collect {per_sector} or "
                         f"{m.ACCESS_SIZE_INSTRUCTIONS[16]} (and the other access sizes) to tell.",
                         severity="info", values=vals,
                         brief=f"{what}s: {spr:.1f} sectors/request: 32-bit words wasted, or wide words")
    if spr > ideal * r.t("tolerance"):
        high = spr > ideal * r.t("high_factor")
        return r.finding("fired", f"Global {what}s use {spr:.1f} sectors per request where {ideal:.0f} would do "
                         f"({basis}): {format_si(excess * m.SECTOR_BYTES, 'B')} of excess traffic "
                         f"({vals['excess_share']:.0%} of the {what} sectors).",
                         severity="high" if high else "medium", limiter="uncoalesced", values=vals,
                         brief=f"{what}s: {spr:.1f} sectors/request (ideal {ideal:.0f}), "
                               f"{format_si(excess * m.SECTOR_BYTES, 'B')} excess")
    return r.finding("ok", f"Global {what}s are coalesced: {spr:.1f} sectors per request (ideal {ideal:.0f}, {basis}).",
                     values=vals)


def check_load_coalescing(v: RowValues, r: Rule) -> Finding:
    return _coalescing(v, r, m.GLOBAL_LD_SECTORS, m.GLOBAL_LD_REQUESTS, "load")


def check_store_coalescing(v: RowValues, r: Rule) -> Finding:
    return _coalescing(v, r, m.GLOBAL_ST_SECTORS, m.GLOBAL_ST_REQUESTS, "store")


def check_local_memory(v: RowValues, r: Rule) -> Finding:
    """Local-memory sectors against all global and local ones at L1 (ncu's Memory Workload tables)."""
    local = v.get(m.LOCAL_LD_SECTORS) + v.get(m.LOCAL_ST_SECTORS)
    total = local + v.get(m.GLOBAL_LD_SECTORS) + v.get(m.GLOBAL_ST_SECTORS)
    share = local / total if total > 0 else math.nan
    vals = {"local_sectors": local, "local_bytes": local * m.SECTOR_BYTES, "local_share": share}
    if not share >= r.t("share"):
        return r.finding("ok", f"Local memory: {_pct(100 * share)} of the L1 sectors of global and local accesses.",
                         values=vals)
    return r.finding("fired", f"Local memory (register spills, or per-thread arrays indexed at run time) moves "
                     f"{share:.0%} of the L1 sectors of global and local accesses ({local:,.0f} of {total:,.0f}, "
                     f"{format_si(local * m.SECTOR_BYTES, 'B')}): the global-access figures are mostly its.",
                     severity="high" if share >= r.t("high_share") else "medium", limiter="local-memory", values=vals,
                     brief=f"local memory {share:.0%} of the L1 sectors")


def check_uncoalesced_source(v: RowValues, r: Rule) -> Finding:
    """Excess L2 sectors from global accesses, as ncu's UncoalescedGlobalAccess rule (actual - ideal)."""
    excess = v.get(m.L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE)
    total = v.get(m.L2_THEORETICAL_SECTORS_GLOBAL)
    if not math.isfinite(excess):
        excess = max(0.0, total - v.get(m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL))
    share = excess / total if math.isfinite(total) and total > 0 else math.nan
    vals = {"excess_sectors": excess, "excess_bytes": excess * m.SECTOR_BYTES, "excess_share": share}
    if excess > r.t("excess_sectors"):
        of = f" ({share:.0%} of all global sectors)" if math.isfinite(share) else ""
        return r.finding("fired", f"Uncoalesced global accesses cost {excess:,.0f} excess sectors "
                         f"({format_si(excess * m.SECTOR_BYTES, 'B')}){of}; ncu's Source Counters show the lines.",
                         severity="high" if math.isfinite(share) and share >= r.t("high_share") else "medium",
                         limiter="uncoalesced", values=vals, brief=f"{excess:,.0f} excess global sectors{of}")
    return r.finding("ok", "No excess sectors from global accesses.", values=vals)


def check_sector_use(v: RowValues, r: Rule) -> Finding:
    """Useful bytes per 32-byte sector for global loads and stores; ``waste_share``: the share of their
    sectors fetched and not used (the sides whose use was counted)."""
    parts, vals, low = [], {}, False
    sides = {"ld": (v.get(m.GLOBAL_LD_SECTORS), v.get(m.GLOBAL_LD_REQUESTS)),
             "st": (v.get(m.GLOBAL_ST_SECTORS), v.get(m.GLOBAL_ST_REQUESTS))}
    all_sectors = sum(sec for sec, _ in sides.values()) if all(math.isfinite(sec) for sec, _ in sides.values()) \
        else math.nan
    wasted = counted = 0.0
    for what, op in (("loads", "ld"), ("stores", "st")):
        used = used_bytes_per_sector(v, op)
        sectors, requests = sides[op]
        if requests == 0:  # no such accesses: ncu writes a ratio of 0 for them (atomics-only kernels)
            continue
        if math.isfinite(used) and (used > m.SECTOR_BYTES or (used == 0 and sectors > 0)):
            # more than a sector holds, or nothing of sectors that were fetched: the ratio describes other
            # instructions than these sectors' (ncu's LDG bytes beside LDGSTS sectors, in H200 and H100 exports)
            parts.append(f"{what} {used:.1f} of 32 B counted (not these sectors' use: not evaluated)")
            continue
        if math.isfinite(used):
            vals[f"{what}_bytes_per_sector"] = used
            parts.append(f"{what} {used:.1f} of 32 B")
            # a side with a small share of the sectors (one store per block) wastes little, whatever its use
            minor = math.isfinite(all_sectors) and all_sectors > 0 and sectors / all_sectors < r.t("min_sector_share")
            low = low or (used / m.SECTOR_BYTES * 100.0 < r.t("low_pct") and not minor)
            if math.isfinite(sectors):
                wasted += sectors * (1.0 - used / m.SECTOR_BYTES)
                counted += sectors
    if counted > 0:
        vals["waste_share"] = wasted / counted
    if not parts:
        return r.finding("ok", "No global loads or stores whose sector use was counted.", values=vals)
    text = "Bytes used per sector: " + ", ".join(parts) + "."
    if low:
        brief = ", ".join(p for p in parts if "not evaluated" not in p) + " used"
        return r.finding("fired", text + f" Under {r.t('low_pct'):.0f}% of each sector fetched is used.",
                         severity="medium", limiter="uncoalesced", values=vals, brief=brief)
    return r.finding("ok", text, values=vals)


def check_hit_rates(v: RowValues, r: Rule) -> Finding:
    l1, l2 = v.get(m.L1_HIT_RATE), v.get(m.L2_HIT_RATE)
    vals = {"l1_hit_pct": l1, "l2_hit_pct": l2}
    text = f"Hit rates: L1 {_pct(l1)}, L2 {_pct(l2)}."
    bound = v.text("bound")
    if math.isfinite(l2) and l2 < r.t("low_l2_pct") and bound == "dram":
        return r.finding("fired", text + f" Bound by DRAM with most L2 lookups missing: blocking the working set "
                         f"to fit L2 would cut DRAM traffic.", severity="medium", limiter="memory", values=vals,
                         brief=f"DRAM-bound, L2 hit rate {_pct(l2)}")
    return r.finding("ok", text, values=vals)


def check_bandwidth(v: RowValues, r: Rule) -> Finding:
    """Effective bandwidth (bytes read + written over time) per level against the level's ceiling."""
    parts, vals, top, top_level = [], {}, -1.0, ""
    for level in v.levels:
        bw, use = v.get(f"bw_{level}"), v.get(f"bw_use_{level}")
        if not math.isfinite(bw):
            continue
        vals[f"bw_{level}"], vals[f"bw_use_{level}"] = bw, use
        parts.append(f"{v.level_name(level)} {format_si(bw, 'B/s')} ({_pct(use * 100)} of ceiling)")
        if math.isfinite(use) and use > top:
            top, top_level = use, level
    if not parts:
        return r.finding("ok", "No bytes known at any level.")
    text = "Effective bandwidth: " + ", ".join(parts) + "."
    if top >= r.t("near_ceiling"):
        return r.finding("fired", text + f" {v.level_name(top_level)} runs at {top:.0%} of its ceiling: "
                         f"bandwidth-bound there.", severity="medium", limiter="memory", values=vals,
                         brief=f"{v.level_name(top_level)} at {top:.0%} of its bandwidth ceiling")
    return r.finding("ok", text, values=vals)


def check_roofline(v: RowValues, r: Rule) -> Finding:
    """Distance to the binding ceiling, the time at that ceiling and the time that could be saved."""
    t, rt, pct, save = v.get("time_s"), v.get("roofline_time_s"), v.get("pct_of_roofline"), v.get("savable_time_s")
    bound, region = v.text("bound") or "?", v.text("region") or "unknown"
    vals = {"time_s": t, "roofline_time_s": rt, "pct_of_roofline": pct, "savable_time_s": save}
    level = v.level_name(bound) if bound in v.levels else bound_words(bound, v.words)
    text = (f"Runs at {pct:.0%} of its roofline, bound by the {level} ceiling ({region}): at the ceiling it would take "
            f"{format_time(rt)} instead of {format_time(t)}, saving {format_time(save)}.")
    if bound in v.levels:
        limiter = "memory"
    elif region == "poor":
        limiter = "poor-use"
    else:
        limiter = "compute"
    brief = f"{pct:.0%} of its {level} roofline ({region})"
    if pct < r.t("near_roofline"):
        return r.finding("fired", text, severity="high" if pct < r.t("far_from_roofline") else "medium",
                         limiter="poor-use" if region == "poor" else limiter, values=vals, brief=brief)
    return r.finding("fired", text + " It is near the roofline: only less work or a higher ceiling helps.",
                     severity="info", limiter=limiter, values=vals, brief=brief)


_LOCALITY_TEXT = {
    "streaming": "the intensities at {l1}, {l2} and {dram} are close: data streams through the caches with little reuse",
    "l2-reuse": "{l2} serves much of the traffic ({dram} intensity well above {l2}'s): there is reuse in {l2}",
    "l1-reuse": "{l1} serves much of the traffic ({l2} intensity well above {l1}'s): there is reuse in {l1}",
    "l1-l2-reuse": "both caches filter traffic: reuse in {l1} and in {l2}",
}


def check_locality(v: RowValues, r: Rule) -> Finding:
    """Cache locality from the spread of the per-level intensities (the paper's reading)."""
    loc = v.text("locality")
    ais = {lvl: v.get(f"ai_{lvl}") for lvl in v.levels}
    vals = {f"ai_{k}": x for k, x in ais.items() if math.isfinite(x)}
    shown = ", ".join(f"{v.level_name(k)} {format_number(x)}" for k, x in ais.items() if math.isfinite(x))
    names = {lv: v.level_name(lv) for lv in ("l1", "l2", "dram")}
    reading = _LOCALITY_TEXT[loc].format(**names) if loc in _LOCALITY_TEXT else f"locality reading {loc!r}"
    return r.finding("fired", f"Arithmetic intensity (FLOP/B) {shown}: {reading}.", severity="info", values=vals)


def check_fp64(v: RowValues, r: Rule) -> Finding:
    f64, total = v.get("fp64_flops"), v.get("flops")
    share = f64 / total if total > 0 else math.nan
    vals = {"fp64_share": share}
    region = v.text("region")
    if math.isfinite(share) and share >= r.t("fp64_share") and region == "compute-bound":
        return r.finding("fired", f"{share:.0%} of the FLOPs are FP64 and the kernel is compute-bound.",
                         severity="medium", limiter="fp64", values=vals, brief=f"{share:.0%} of FLOPs in FP64")
    return r.finding("ok", f"FP64 share of FLOPs: {share:.0%}." if math.isfinite(share) else "No FLOPs.", values=vals)


def check_tensor_cores(v: RowValues, r: Rule) -> Finding:
    tensor, total, use = v.get("tensor_flops"), v.get("flops"), v.get("compute_use")
    fp16 = v.get("fp16_flops")
    scalar_low = v.get("fp32_flops") + (fp16 if math.isfinite(fp16) else 0.0)
    share = tensor / total if total > 0 else math.nan
    low_share = scalar_low / total if total > 0 else math.nan
    vals = {"tensor_share": share, "fp32_fp16_share": low_share, "compute_use": use}
    units = v.words.matrix_units  # 'tensor cores', 'matrix cores (MFMA)'
    if (math.isfinite(share) and share < r.t("tensor_share") and math.isfinite(low_share)
            and low_share >= r.t("scalar_share") and use >= r.t("compute_use")):
        return r.finding("fired", f"Compute-heavy ({use:.0%} of its compute ceiling) with {share:.0%} of FLOPs on "
                         f"{units}.", severity="medium", limiter="tensor-cores", values=vals,
                         brief=f"{use:.0%} of compute peak, {share:.0%} of FLOPs on {units}")
    which = "Matrix-core (MFMA)" if v.words.is_amd else "Tensor-core"
    return r.finding("ok", f"{which} share of FLOPs: {share:.0%}." if math.isfinite(share) else "No FLOPs.",
                     values=vals)


def check_short_kernel(v: RowValues, r: Rule) -> Finding:
    t, n = v.get("time_s"), v.get("launches")
    per = t / n if n > 0 else math.nan
    vals = {"time_per_launch_s": per, "launches": n}
    if math.isfinite(per) and per < r.t("short_launch_s"):
        return r.finding("fired", f"{n:,.0f} launch(es) of {format_time(per)} each: launch overhead and "
                         f"ramp-up are a large part of such short kernels.", severity="medium", limiter="short-kernel",
                         values=vals, brief=f"{n:,.0f} launches of {format_time(per)}")
    return r.finding("ok", f"{format_time(per)} per launch.", values=vals)


def _th(value: float, unit: str, meaning: str) -> Threshold:
    return Threshold(value, unit, meaning)


#: Every rule, in the order a diagnosis lists them.
RULES: tuple[Rule, ...] = (
    Rule("roofline", "Roofline", PAPER,
         needs=(("time_s", "roofline_time_s", "pct_of_roofline", "savable_time_s"),),
         thresholds={"near_roofline": _th(0.8, "", "fraction of the roofline above which a kernel is 'near' it"),
                     "far_from_roofline": _th(0.5, "", "below this fraction the finding is severe")},
         check=check_roofline),
    Rule("speed-of-light", "Speed of Light", NCU_SOL,
         needs=((m.SM_THROUGHPUT, m.MEMORY_THROUGHPUT),),
         thresholds={"latency_pct": _th(60.0, "%", "both compute and memory below this: latency-bound"),
                     "bound_pct": _th(80.0, "%", "either at or above this: throughput-bound on that unit"),
                     "balanced_pct": _th(10.0, "%", "compute and memory closer than this: balanced"),
                     "waves": _th(1.0, "waves/SM", "fewer waves of blocks than this: grid too small")},
         check=check_speed_of_light),
    Rule("global-load-coalescing", "Global load coalescing", f"{BPG_COALESCING}; {NCU_MEMORY_TABLES}",
         needs=((m.GLOBAL_LD_SECTORS, m.GLOBAL_LD_REQUESTS),),
         thresholds={"ideal_sectors_per_request": _th(4.0, "sector/request", "32 threads x 4 B = 128 B = 4 sectors "
                                                      "(used when the access size is not collected)"),
                     "tolerance": _th(1.0, "x ideal", "fires above ideal x this (ncu fires above ideal)"),
                     "high_factor": _th(2.0, "x ideal", "severe above ideal x this (as ncu)"),
                     "full_use_bytes": _th(0.95 * 32, "B", "without the access size: more sectors than 32-bit words need "
                                           "but at least this many of 32 bytes used is wide words, not waste"),
                     "widest_sectors_per_request": _th(16.0, "sector/request", WIDEST_WORDS)},
         check=check_load_coalescing),
    Rule("global-store-coalescing", "Global store coalescing", f"{BPG_COALESCING}; {NCU_MEMORY_TABLES}",
         needs=((m.GLOBAL_ST_SECTORS, m.GLOBAL_ST_REQUESTS),),
         thresholds={"ideal_sectors_per_request": _th(4.0, "sector/request", "32 threads x 4 B = 4 sectors"),
                     "tolerance": _th(1.0, "x ideal", "fires above ideal x this"),
                     "high_factor": _th(2.0, "x ideal", "severe above ideal x this"),
                     "full_use_bytes": _th(0.95 * 32, "B", "without the access size: at least this many of 32 bytes "
                                           "used per sector is wide words, not waste"),
                     "widest_sectors_per_request": _th(16.0, "sector/request", WIDEST_WORDS)},
         check=check_store_coalescing),
    Rule("local-memory", "Local memory (register spills)", NCU_MEMORY_TABLES,
         needs=((m.LOCAL_LD_SECTORS, m.LOCAL_ST_SECTORS, m.GLOBAL_LD_SECTORS, m.GLOBAL_ST_SECTORS),),
         thresholds={"share": _th(0.5, "", f"fires when local memory has this share of the L1 sectors of global and "
                                           f"local accesses ({HEURISTIC})"),
                     "high_share": _th(0.8, "", f"severe from this share ({HEURISTIC})")},
         check=check_local_memory),
    Rule("uncoalesced-global", "Uncoalesced global accesses (source counters)", NCU_UNCOALESCED,
         needs=((m.L2_THEORETICAL_SECTORS_GLOBAL_EXCESSIVE,),
                (m.L2_THEORETICAL_SECTORS_GLOBAL, m.L2_THEORETICAL_SECTORS_GLOBAL_IDEAL)),
         thresholds={"excess_sectors": _th(0.0, "sector", "fires above this many excess sectors (as ncu)"),
                     "high_share": _th(0.5, "", f"severe when this share of sectors is excess ({HEURISTIC})")},
         check=check_uncoalesced_source),
    Rule("sector-use", "Bytes used per sector", NCU_MEMORY_TABLES,
         needs=((m.GLOBAL_LD_BYTES_PER_SECTOR_PCT,), (m.GLOBAL_ST_BYTES_PER_SECTOR_PCT,), (m.GLOBAL_LD_BYTES_PER_SECTOR,),
                (m.GLOBAL_ST_BYTES_PER_SECTOR,)),
         thresholds={"low_pct": _th(50.0, "%", f"fewer of the 32 bytes used than this fires ({HEURISTIC})"),
                     "min_sector_share": _th(0.1, "", "loads or stores with a smaller share of the global sectors "
                                                      f"are not flagged: they waste little ({HEURISTIC})")},
         check=check_sector_use),
    Rule("hit-rates", "Cache hit rates", NCU_MEMORY_TABLES,
         needs=((m.L2_HIT_RATE,), (m.L1_HIT_RATE,)),
         thresholds={"low_l2_pct": _th(50.0, "%", f"a DRAM-bound kernel with an L2 hit rate below this fires ({HEURISTIC})")},
         check=check_hit_rates),
    Rule("bandwidth", "Effective bandwidth per level", BPG_BANDWIDTH,
         needs=(("bw_use",),),
         thresholds={"near_ceiling": _th(0.8, "", "bandwidth use at or above this fraction of a level's ceiling: "
                                                  "bandwidth-bound there (as ncu's 80%)")},
         check=check_bandwidth),
    Rule("locality", "Cache locality", PAPER, needs=(("locality",),), thresholds={}, check=check_locality),
    Rule("fp64", "FP64 arithmetic", PAPER, needs=(("fp64_flops", "flops"),),
         thresholds={"fp64_share": _th(0.5, "", f"share of FP64 FLOPs in a compute-bound kernel that fires ({HEURISTIC})")},
         check=check_fp64),
    Rule("tensor-cores", "Tensor cores", PAPER, needs=(("tensor_flops", "fp32_flops", "flops", "compute_use"),),
         thresholds={"tensor_share": _th(0.1, "", "tensor-core share of FLOPs below this ..."),
                     "scalar_share": _th(0.5, "", "... with FP32/FP16 share at or above this ..."),
                     "compute_use": _th(0.5, "", f"... and compute use at or above this fires ({HEURISTIC})")},
         check=check_tensor_cores),
    Rule("short-kernel", "Short launches", "CUDA C++ Programming Guide, CUDA Graphs (launch overhead)",
         needs=(("time_s", "launches"),),
         thresholds={"short_launch_s": _th(10e-6, "s", f"mean time per launch below this fires ({HEURISTIC})")},
         check=check_short_kernel),
    *PATTERN_RULES,
)


def rule_by_id(rule_id: str) -> Rule:
    for r in RULES:
        if r.id == rule_id:
            return r
    raise KeyError(rule_id)

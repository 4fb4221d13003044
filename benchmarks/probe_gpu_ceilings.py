"""Why a measured GPU ceiling falls short: variants of roofline's own micro-benchmarks, timed in one run.

    python3 benchmarks/probe_gpu_ceilings.py OUTDIR [--deadline-s 170] [--ncu ncu]

The first H100 session (issue 15) measured L1 at 0.50 of 128 B/clk/SM, FP16 and BF16 (paired FMA)
at 0.50 of SMs x 256 results/clk x clock, INT8 GEMMs at 0.065 of the datasheet, HBM at 0.887 of it,
and an L2 that was 7.1 TB/s in one run and 12.0 TB/s in the next. Each part here runs roofline's
kernel as it is beside variants that differ in one thing, so that the cause shows in one run:

- l1:   the broadcast read kernel (``bw_read_bcast``) on 64 KiB against 32-bit indexing, 4-, 8- and
        16-byte loads, ``ld.global.nc`` and deeper unrolling;
- part: the partitioned read kernel on 16 MiB (L2) and 2 GiB (HBM) against deeper unrolling,
        cached loads and other block counts; and the broadcast kernel on 1 and 2 MiB (past L1);
- fp16: the FMA kernels (fp32, fp16, bf16) as roofline builds them (NVRTC), with 16 chains, and built
        by nvcc for sm_90 with their SASS instruction counts (HFMA2 against HFMA2.MMA);
- int8: ``torch._int_mm`` with B row-major (as roofline calls it) and column-major;
- gemms: INT8, FP8 and BF16 GEMMs as roofline calls them at 4096, 8192 and 16384, with the kernels cuBLASLt ran;
- ncu:  the broadcast kernel on 1 MiB under ncu: L1 hit rate and L2 bytes against the bytes read;
- paper: the paper's per-metric runs the first session had no time for (dram, lts, l1tex).

Writes OUTDIR/probe.json after every measurement (a run cut short keeps what it measured),
OUTDIR/sass.txt and the ncu outputs. Never changes clocks; ncu runs with --clock-control none.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

KiB, MiB, GiB = 2**10, 2**20, 2**30

L1_TEMPLATE = r"""
extern "C" __global__ void {name}(const {T}* __restrict__ a, unsigned int mask, int reps, int* out)
{{
    // the working set is mask + 1 elements (a power of two, a multiple of blockDim.x)
    unsigned int i = (threadIdx.x + blockIdx.x * 7919u * blockDim.x) & mask;
    {T} acc = {zero};
    for (int r = 0; r < reps; ++r) {{
        #pragma unroll {unroll}
        for (unsigned int k = 0; k <= mask; k += blockDim.x) {{
            {T} v = {load}(a + ((i + k) & mask));
            {xor}
        }}
    }}
    if ({test}) out[0] = 1;
}}
"""
TYPES = {
    "int4": ("make_int4(0, 0, 0, 0)", "acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;",
             "(acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff", 16),
    "int2": ("make_int2(0, 0)", "acc.x ^= v.x; acc.y ^= v.y;", "(acc.x ^ acc.y) == 0x7fffffff", 8),
    "int": ("0", "acc ^= v;", "acc == 0x7fffffff", 4),
}

PART_TEMPLATE = r"""
extern "C" __global__ void {name}(const int4* __restrict__ a, long long n, int reps, int* out)
{{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int4 acc = make_int4(0, 0, 0, 0);
    for (int r = 0; r < reps; ++r) {{
        long long i = tid;
        for (; i + {last} * stride < n; i += {u} * stride) {{
            {loads}
        }}
        for (; i < n; i += stride) {{
            int4 v = {load}(a + i);
            acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
        }}
    }}
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) out[0] = acc.x;
}}
"""


class Probe:
    def __init__(self, out: Path, deadline: float) -> None:
        import cupy as cp

        self.cp = cp
        self.out = out
        self.deadline = deadline
        self.res: dict[str, Any] = {"errors": {}}
        self.dev = cp.cuda.Device(0)
        self.sms = self.dev.attributes["MultiProcessorCount"]
        try:
            import pynvml as nv

            nv.nvmlInit()
            self.nvml: Any = (nv, nv.nvmlDeviceGetHandleByIndex(0))
        except Exception as exc:  # clocks then unknown, said in the results
            self.nvml = None
            self.res["errors"]["nvml"] = repr(exc)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def save(self) -> None:
        (self.out / "probe.json").write_text(json.dumps(self.res, indent=1, default=str) + "\n")

    def clock(self) -> float | None:
        if self.nvml is None:
            return None
        nv, h = self.nvml
        return float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)) * 1e6

    def time(self, fn: Callable[[], Any], repeats: int = 7) -> tuple[float, float | None]:
        """Median seconds of fn() (CUDA events, 2 warm-ups), and the SM clock read right after."""
        cp = self.cp
        fn()
        fn()
        times = []
        for _ in range(repeats):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
        return statistics.median(times), self.clock()

    def record(self, part: str, name: str, **values: Any) -> None:
        self.res.setdefault(part, {})[name] = values
        self.save()
        print(part, name, json.dumps(values, default=str), flush=True)

    def guarded(self, part: str, fn: Callable[[], None]) -> None:
        if self.left() < 5:
            self.res["errors"][part] = "not run: deadline"
            self.save()
            return
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:
            self.res["errors"][part] = f"{type(exc).__name__}: {exc}"
        self.res.setdefault("seconds", {})[part] = round(time.monotonic() - t0, 2)
        self.save()

    # -- L1 ------------------------------------------------------------------------------------------------
    def l1(self) -> None:
        from roofline.bench.gpu.kernels import BANDWIDTH_SOURCE, bandwidth_blocks

        cp = self.cp
        blocks, threads = bandwidth_blocks(self.sms), 256
        size = 64 * KiB
        buf = cp.arange(size // 4, dtype=cp.int32)
        out = cp.zeros(4, dtype=cp.int32)
        base = cp.RawModule(code=BANDWIDTH_SOURCE).get_function("bw_read_bcast")

        def rate(fn: Callable[[], Any], bytes_per_launch: float) -> dict[str, Any]:
            t, clk = self.time(fn)
            bw = bytes_per_launch / t
            return {"bandwidth": bw, "clock_hz": clk, "bytes_per_clk_per_sm": bw / (self.sms * clk) if clk else None}

        reps = 200
        n16 = size // 16
        self.record("l1", "roofline bw_read_bcast (int4, __ldca, 64-bit index, unroll 4)",
                    **rate(lambda: base((blocks,), (threads,), (buf, cp.int64(n16), cp.int32(reps), out)),
                           blocks * size * reps))
        variants = [("int4", "__ldca", 4), ("int4", "__ldca", 8), ("int4", "__ldca", 16), ("int2", "__ldca", 8),
                    ("int", "__ldca", 8), ("int4", "__ldg", 8), ("int4", "*", 8)]
        for T, load, unroll in variants:
            zero, xor, test, width = TYPES[T]
            src = L1_TEMPLATE.format(name="l1v", T=T, zero=zero, xor=xor, test=test, unroll=unroll, load=load)
            fn = cp.RawModule(code=src).get_function("l1v")
            mask = size // width - 1
            self.record("l1", f"{T}, {'plain load' if load == '*' else load}, 32-bit index, unroll {unroll}",
                        **rate(lambda fn=fn, mask=mask: fn((blocks,), (threads,), (buf, cp.uint32(mask), cp.int32(reps),
                                                                              out)), blocks * size * reps))
        for size_b in (1 * MiB, 2 * MiB):  # the broadcast kernel past L1, where the L2 "12 TB/s" came from
            big = cp.arange(size_b // 4, dtype=cp.int32)
            self.record("l1", f"roofline bw_read_bcast at {size_b // MiB} MiB",
                        **rate(lambda big=big, size_b=size_b: base((blocks,), (threads,), (big, cp.int64(size_b // 16),
                                                                                            cp.int32(4), out)),
                               blocks * size_b * 4))

    # -- partitioned (L2, HBM) ----------------------------------------------------------------------------------
    def part(self) -> None:
        from roofline.bench.gpu.kernels import BANDWIDTH_SOURCE, bandwidth_blocks

        cp = self.cp
        out = cp.zeros(4, dtype=cp.int32)
        base = cp.RawModule(code=BANDWIDTH_SOURCE).get_function("bw_read_part")

        def kernel(u: int, load: str) -> Any:
            loads = "\n            ".join(
                [f"int4 v{j} = {load}(a + i + {j} * stride);" for j in range(u)]
                + [f"acc.{c} ^= " + " ^ ".join(f"v{j}.{c}" for j in range(u)) + ";" for c in "xyzw"])
            src = PART_TEMPLATE.format(name="pv", last=u - 1, u=u, loads=loads, load=load)
            return cp.RawModule(code=src).get_function("pv")

        variants: list[tuple[str, Any, int]] = [
            ("roofline bw_read_part (__ldcg, unroll 4, 8 blocks/SM)", base, bandwidth_blocks(self.sms)),
            ("__ldcg, unroll 8", kernel(8, "__ldcg"), bandwidth_blocks(self.sms)),
            ("__ldg, unroll 4", kernel(4, "__ldg"), bandwidth_blocks(self.sms)),
            ("__ldcs (streaming), unroll 8", kernel(8, "__ldcs"), bandwidth_blocks(self.sms)),
            ("__ldcg, unroll 4, 4 blocks/SM", base, 4 * self.sms),
            ("__ldcg, unroll 4, 32 blocks/SM (4 waves)", base, 32 * self.sms),
        ]
        for size, reps, level in ((16 * MiB, 200, "l2"), (2 * GiB, 1, "hbm")):
            buf = cp.ones(size // 4, dtype=cp.int32)
            n = size // 16
            for name, fn, blocks in variants:
                t, clk = self.time(lambda fn=fn, blocks=blocks: fn((blocks,), (256,), (buf, cp.int64(n), cp.int32(reps),
                                                                                      out)))
                self.record("part", f"{level} {size // MiB} MiB: {name}", bandwidth=size * reps / t, clock_hz=clk)
            del buf
            cp.get_default_memory_pool().free_all_blocks()

    # -- FP16 / BF16 FMA --------------------------------------------------------------------------------------
    def fp16(self) -> None:
        import roofline.bench.gpu.kernels as gk

        cp = self.cp
        blocks, threads = gk.compute_blocks(self.sms), gk.COMPUTE_THREADS
        out = cp.zeros(blocks * threads * 2, dtype=cp.float64)
        iters = 2000
        for prec in ("fp32", "fp16", "bf16"):
            for chains in (gk.CHAINS, 16):
                src = gk._fma_source(*_fma_args(prec), chains=chains)
                fn = cp.RawModule(code=src).get_function(gk.COMPUTE_KERNEL[prec])
                flops = blocks * threads * iters * gk.UNROLL * chains * 2 * gk.LANES[prec]
                t, clk = self.time(lambda fn=fn: fn((blocks,), (threads,), (out, cp.float32(1.0001), cp.float32(1e-4),
                                                                           cp.int64(iters))))
                rate = flops / t
                self.record("fp16", f"{prec} NVRTC, {chains} chains", flops_per_s=rate, clock_hz=clk,
                            flops_per_clk_per_sm=rate / (self.sms * clk) if clk else None)
                if chains == gk.CHAINS:
                    self._sass(prec, src)

    def _sass(self, prec: str, src: str) -> None:
        """nvcc -cubin -arch sm_90 of the same source; its SASS and the FMA instruction counts."""
        work = self.out / "build"
        work.mkdir(exist_ok=True)
        cu, cubin = work / f"{prec}.cu", work / f"{prec}.cubin"
        cu.write_text(src)
        cc = "".join(str(x) for x in self.dev.compute_capability)
        subprocess.run(["nvcc", "-cubin", f"-arch=sm_{cc}", "-O3", "-o", str(cubin), str(cu)], check=True,
                       capture_output=True, timeout=60)
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, timeout=60).stdout
        with (self.out / "sass.txt").open("a") as fh:
            fh.write(f"==== {prec} (nvcc -cubin -arch=sm_{cc} -O3)\n{sass}\n")
        ops = [line.split()[1] for line in sass.splitlines() if "/*" in line and len(line.split()) > 1
               and line.split()[1][:1].isalpha()]
        counts = {k: sum(1 for o in ops if o.split(".")[0] == k or o == k) for k in ("HFMA2", "FFMA", "HADD2", "HMUL2")}
        counts["HFMA2.MMA"] = sum(1 for o in ops if o.startswith("HFMA2.MMA"))
        counts["HFMA2.BF16_V2"] = sum(1 for o in ops if o.startswith("HFMA2.BF16"))
        self.record("fp16", f"{prec} SASS (nvcc sm_{cc})", **counts)

    # -- INT8 GEMM --------------------------------------------------------------------------------------------
    def int8(self) -> None:
        import torch

        n = 8192
        dev = torch.device("cuda", 0)
        a = torch.randint(-64, 64, (n, n), device=dev, dtype=torch.int8)
        b_row = torch.randint(-64, 64, (n, n), device=dev, dtype=torch.int8)
        b_col = b_row.t().contiguous().t()
        for name, b in (("B row-major (as roofline)", b_row), ("B column-major", b_col)):
            t, clk = self._torch_time(lambda b=b: torch._int_mm(a, b))
            self.record("int8", name, ops_per_s=2 * n**3 / t, clock_hz=clk)
        same = bool(torch.equal(torch._int_mm(a[:256], b_row[:, :256]), torch._int_mm(a[:256], b_col[:, :256])))
        self.record("int8", "same result", equal=same)

    def gemms(self) -> None:
        """Issue 33: why INT8 (0.40-0.46 of the datasheet) and FP8 (0.67-0.71) stay low: the cuBLASLt kernel each
        runs (its name says which instruction family: sm90_xmma_*gmma* is Hopper's wgmma, sm80_* Ampere's mma), and
        the rate at three sizes, as roofline.bench.gpu.gemm calls them (B column-major, FP8 with fast accumulation)."""
        import torch

        dev = torch.device("cuda", 0)
        one = torch.ones((), device=dev)
        for n in (4096, 8192, 16384):
            if self.left() < 10:
                self.record("gemms", f"n={n}", not_run="deadline")
                continue
            a8 = torch.randint(-64, 64, (n, n), device=dev, dtype=torch.int8)
            b8 = torch.randint(-64, 64, (n, n), device=dev, dtype=torch.int8).t().contiguous().t()
            af = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
            bf = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t().contiguous().t()
            ab = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
            runs = {"int8 torch._int_mm": lambda: torch._int_mm(a8, b8),
                    "fp8 torch._scaled_mm fast accum": lambda: torch._scaled_mm(
                        af, bf, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True),
                    "bf16 torch.matmul": lambda: ab @ ab}
            for name, fn in runs.items():
                try:
                    t, clk = self._torch_time(fn)
                    kernels = self._kernel_names(fn) if n == 8192 else None
                    self.record("gemms", f"{name} n={n}", ops_per_s=2 * n**3 / t, clock_hz=clk, kernels=kernels)
                except Exception as exc:  # the next one still runs
                    self.record("gemms", f"{name} n={n}", error=f"{type(exc).__name__}: {exc}")
            del a8, b8, af, bf, ab
            torch.cuda.empty_cache()

    @staticmethod
    def _kernel_names(fn: Callable[[], Any]) -> list[str]:
        """The GPU kernels one call of ``fn`` launches (torch.profiler)."""
        import torch
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})

    def _torch_time(self, fn: Callable[[], Any], repeats: int = 5) -> tuple[float, float | None]:
        import torch

        fn()
        fn()
        times = []
        for _ in range(repeats):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / 1e3)
        return statistics.median(times), self.clock()


def _fma_args(prec: str) -> tuple[str, ...]:
    """_fma_source's arguments for ``prec`` as COMPUTE_SOURCES built them until 2026-11-29 (the paired types' constants
    passed as float and converted in the kernel: every HFMA2 on the FMA pipe; benchmarks/probe_fp16_pipes.py)."""
    return {
        "fp32": ("fma_fp32", "float", "float", "", "(float)(tid + k)", "fmaf({a}, {b}, {c})"),
        "fp16": ("fma_fp16", "__half2", "float", "__float2half2_rn", "__floats2half2_rn((float)k, (float)(tid & 7))",
                 "__hfma2({a}, {b}, {c})", "#include <cuda_fp16.h>"),
        "bf16": ("fma_bf16", "__nv_bfloat162", "float", "__float2bfloat162_rn",
                 "__floats2bfloat162_rn((float)k, (float)(tid & 7))", "__hfma2({a}, {b}, {c})",
                 "#include <cuda_bf16.h>"),
    }[prec]


def bcast_under_ncu() -> None:
    """The broadcast kernel once at 1 MiB (the program ncu profiles: --bcast-once)."""
    import cupy as cp
    from roofline.bench.gpu.kernels import BANDWIDTH_SOURCE, bandwidth_blocks

    sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
    buf = cp.arange(MiB // 4, dtype=cp.int32)
    out = cp.zeros(4, dtype=cp.int32)
    fn = cp.RawModule(code=BANDWIDTH_SOURCE).get_function("bw_read_bcast")
    fn((bandwidth_blocks(sms),), (256,), (buf, cp.int64(MiB // 16), cp.int32(4), out))
    cp.cuda.Device().synchronize()
    print(f"bytes read: {bandwidth_blocks(sms) * MiB * 4}")


def run_ncu(probe: Probe, ncu: str) -> None:
    metrics = ("gpu__time_duration.sum,l1tex__t_bytes.sum,l1tex__t_sector_hit_rate.pct,lts__t_bytes.sum,"
               "lts__t_sector_hit_rate.pct,dram__bytes.sum,sm__cycles_elapsed.avg.per_second")
    cmd = [ncu, "--clock-control", "none", "--metrics", metrics, "--csv", "--page", "raw", "--", sys.executable,
           str(Path(__file__).resolve()), str(probe.out), "--bcast-once"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10, probe.left()))
    (probe.out / "ncu_bcast_1mib.csv").write_text(f"$ {shlex.join(cmd)}\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    probe.record("ncu", "bcast 1 MiB", rc=proc.returncode, file="ncu_bcast_1mib.csv")


def run_paper(probe: Probe, ncu: str) -> None:
    """The per-metric runs the first session's deadline left out, each as validate_profile_gpu's paper part runs it."""
    import validate_profile_gpu as v

    v.NCU = ncu
    paper = probe.out / "paper_per_metric"
    paper.mkdir(exist_ok=True)
    for metric in ("dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum"):
        if probe.left() < 25:
            probe.record("paper", metric, not_run="deadline")
            continue
        cmd = [ncu, "--metrics", metric, "--nvtx", "--target-processes", "all", "--clock-control", "none",
               "--csv", "--log-file", str(paper / f"out.{metric}"), "--", *v.deepcam_program()]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), timeout=max(10, probe.left()))
        (paper / f"log.{metric}").write_text(proc.stdout + proc.stderr)
        probe.record("paper", metric, rc=proc.returncode, seconds=round(time.perf_counter() - t0, 3),
                     cmd=shlex.join(cmd))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--deadline-s", type=float, default=170.0)
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--parts", default="int8,fp16,l1,part,ncu,paper")
    ap.add_argument("--bcast-once", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.bcast_once:
        bcast_under_ncu()
        return 0
    a.outdir.mkdir(parents=True, exist_ok=True)
    probe = Probe(a.outdir, time.monotonic() + a.deadline_s)
    probe.res["device"] = {"sms": probe.sms, "name": probe.cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                           "clock_before_hz": probe.clock(),
                           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    parts: dict[str, Callable[[], None]] = {
        "int8": probe.int8, "gemms": probe.gemms, "fp16": probe.fp16, "l1": probe.l1, "part": probe.part,
        "ncu": lambda: run_ncu(probe, a.ncu), "paper": lambda: run_paper(probe, a.ncu)}
    for part in a.parts.split(","):
        probe.guarded(part, parts[part])
    probe.save()
    print(json.dumps(probe.res["errors"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Is Hopper's non-tensor FP16 / BF16 ceiling the FP32 rate or twice it? (issue 33, item 5: twice)

    python3 benchmarks/probe_fp16_pipes.py OUTDIR [--deadline-s 30] [--variants]

The first H100 session timed roofline's paired-FMA kernel at 256 FLOP/clk/SM, the FP32 rate, half the
whitepaper's non-tensor FP16 figure. Each kernel here is built as ``roofline machine`` builds it (CuPy's
NVRTC, default options), its cubin taken from CuPy's kernel cache and disassembled (``cuobjdump -sass``),
its HFMA2 and HFMA2.MMA (the tensor pipe) instructions counted, and its rate timed (CUDA events, median of
7) in FLOP per clock per SM at the SM clock NVML reads right after:

- the FP32 kernel; the FP16 and BF16 kernel with its constants passed as float and converted inside (as
  roofline built it until 2026-11-29: every HFMA2 on the FMA pipe) with 8, 4, 2 and 1 chains; and as
  roofline builds it now, its constants of the paired type (ptxas issues half on the tensor pipe);
- the one-chain ``hfma2_chain`` of benchmarks/gpu_targets.py and the same with 2 and 4 accumulators;
- ``--variants``: the forms of VARIANTS alone (chains, unroll, constants), FP16 and BF16.

On an H200 (benchmarks/results/h200-2026-11-29): 252 FLOP/clk/SM with float constants, 469 with paired
ones (0.92 of 512).

Writes OUTDIR/fp16_pipes.json (after every kernel: a run cut short keeps what it measured) and
OUTDIR/sass_fp16_pipes.txt. Never changes clocks.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: hfma2_chain with 2 and 4 accumulators (a rolled loop, as there: ptxas alternates HFMA2 and HFMA2.MMA in it).
CHAINS_SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_chains2(__half2* out, __half2 a, __half2 b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 x0 = out[i], x1 = __hadd2(out[i], b);
    for (int k = 0; k < iters; ++k) { x0 = __hfma2(a, x0, b); x1 = __hfma2(a, x1, b); }
    out[i] = __hadd2(x0, x1);
}
extern "C" __global__ void hfma2_chains4(__half2* out, __half2 a, __half2 b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 x0 = out[i], x1 = __hadd2(x0, b), x2 = __hadd2(x1, b), x3 = __hadd2(x2, b);
    for (int k = 0; k < iters; ++k) {
        x0 = __hfma2(a, x0, b); x1 = __hfma2(a, x1, b); x2 = __hfma2(a, x2, b); x3 = __hfma2(a, x3, b);
    }
    out[i] = __hadd2(__hadd2(x0, x1), __hadd2(x2, x3));
}
"""
#: Forms of roofline's paired-FMA kernel (--variants): (chains, unroll, constants passed as float and converted in the
#: kernel, as roofline machine did until 2026-11-29, or as the paired type itself, as it does since). Converted, every
#: HFMA2 went to the FMA pipe; passed as __half2 / __nv_bfloat162, ptxas issued about half as HFMA2.MMA (local nvcc 13.0).
VARIANTS = ((8, 16, "float"), (8, 16, "paired"), (4, 16, "paired"), (16, 8, "paired"), (8, 4, "paired"),
            (4, 1, "paired"))


def variant_source(prec: str, chains: int, unroll: int, params: str) -> tuple[str, str]:
    """(source, kernel name) of roofline's paired-FMA kernel with ``chains`` independent chains, ``unroll`` steps per
    loop trip, its constants passed as ``params`` ('float': converted in the kernel; 'paired': the paired type)."""
    import roofline.bench.gpu.kernels as gk

    ctype, conv, init, header = {
        "fp16": ("__half2", "__float2half2_rn", "__floats2half2_rn((float)k, (float)(tid & 7))", "cuda_fp16.h"),
        "bf16": ("__nv_bfloat162", "__float2bfloat162_rn", "__floats2bfloat162_rn((float)k, (float)(tid & 7))",
                 "cuda_bf16.h")}[prec]
    name = f"fma_{prec}_c{chains}_u{unroll}_{params}"
    ptype, conv = ("float", conv) if params == "float" else (ctype, "")
    return gk._fma_source(name, ctype, ptype, conv, init, "__hfma2({a}, {b}, {c})", f"#include <{header}>",
                          chains=chains, unroll=unroll), name


#: One chain per thread: 4 FLOPs per iteration (benchmarks/gpu_targets.py's hfma2_chain, as ncu counted it).
TARGET_THREADS, TARGET_ITERS = 1 << 20, 1 << 14


def sass_counts(sass: str) -> dict[str, int]:
    """Opcode counts of a cuobjdump -sass listing: the half-precision FMAs by form, and FFMA."""
    ops: Counter[str] = Counter()
    for line in sass.splitlines():
        if "/*" not in line or ";" not in line:
            continue
        text = line.split("*/", 1)[-1].strip()
        if text.startswith("@"):  # a predicate guard
            text = text.split(None, 1)[-1] if " " in text else text
        op = text.split(None, 1)[0] if text else ""
        if op[:1].isalpha():
            ops[op] += 1
    out = {"HFMA2 (all forms)": sum(v for k, v in ops.items() if k.startswith("HFMA2")),
           "HFMA2.MMA (all forms)": sum(v for k, v in ops.items() if k.startswith("HFMA2.MMA")),
           "FFMA (all forms)": sum(v for k, v in ops.items() if k.startswith("FFMA")),
           # ptxas also writes a register's zero as HFMA2.MMA R, -RZ, RZ, 0, 0: a move, no arithmetic
           "HFMA2.MMA as a move (-RZ, RZ)": sum(1 for line in sass.splitlines()
                                               if "HFMA2.MMA" in line and "-RZ, RZ" in line)}
    out.update({k: v for k, v in ops.items() if k.startswith("HFMA2")})
    return out


def cached_cubin(cache: Path, seen: set[Path], kernel: str) -> bytes | None:
    """The cubin of ``kernel`` that CuPy wrote to its kernel cache since ``seen`` (a hash, then the ELF), or None.
    CuPy 14.2's cache files end one byte short of the ELF's own size (its last program header's last byte, a zero:
    cuobjdump then says the file "does not contain device code"); the ELF is padded to its size with zeros."""
    found = None
    for path in sorted(cache.rglob("*")):
        if not path.is_file() or path in seen:
            continue
        seen.add(path)
        data = path.read_bytes()
        at = data.find(b"\x7fELF", 0, 256)
        if at >= 0 and kernel.encode() in data:
            found = data[at:]
    if found is not None and len(found) >= 64:
        ph_off, sh_off = struct.unpack_from("<QQ", found, 0x20)
        ph_num, sh_num = struct.unpack_from("<H", found, 0x38)[0], struct.unpack_from("<H", found, 0x3C)[0]
        size = max(ph_off + 56 * ph_num, sh_off + 64 * sh_num)
        found += b"\0" * max(0, size - len(found))
    return found


def _nvrtc_version(cp: Any) -> str:
    try:
        return ".".join(map(str, cp.cuda.nvrtc.getVersion()))
    except Exception as exc:  # recorded, not fatal
        return f"unknown ({type(exc).__name__})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--deadline-s", type=float, default=30.0)
    ap.add_argument("--variants", action="store_true", help="time the forms of roofline's kernel (VARIANTS) alone")
    a = ap.parse_args(argv)
    a.outdir.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="cupy-cache-"))
    os.environ["CUPY_CACHE_DIR"] = str(cache)  # before CuPy compiles anything: each build lands here alone
    from probe_gpu_ceilings import Probe

    import roofline.bench.gpu.kernels as gk
    from gpu_targets import HFMA_SOURCE

    probe = Probe(a.outdir, time.monotonic() + a.deadline_s)
    cp = probe.cp
    res: dict[str, Any] = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sms": probe.sms,
                           "cupy": cp.__version__, "nvrtc": _nvrtc_version(cp),
                           "clock_before_hz": probe.clock(), "kernels": {}}
    path, sass_path = a.outdir / "fp16_pipes.json", a.outdir / "sass_fp16_pipes.txt"
    sass_path.write_text("")
    seen: set[Path] = set()
    blocks, threads = gk.compute_blocks(probe.sms), gk.COMPUTE_THREADS
    out = cp.zeros(max(blocks * threads, TARGET_THREADS) * 2, dtype=cp.float64)

    def measure(label: str, src: str, kernel: str, launch: Any, flops: float) -> None:
        if probe.left() < 3:
            res["kernels"][label] = {"not_run": "deadline"}
            return
        entry: dict[str, Any] = {}
        try:
            fn = cp.RawModule(code=src).get_function(kernel)
            cubin = cached_cubin(cache, seen, kernel)
            if cubin is None:
                entry["sass"] = "no cubin in CuPy's cache (it may have built PTX)"
            else:
                cubin_path = a.outdir / "cubins" / f"{kernel}_{len(res['kernels'])}.cubin"
                cubin_path.parent.mkdir(exist_ok=True)
                cubin_path.write_bytes(cubin)
                proc = subprocess.run(["cuobjdump", "-sass", str(cubin_path)], capture_output=True, text=True,
                                      timeout=30)
                sass = proc.stdout + (f"\n(cuobjdump stderr: {proc.stderr.strip()})" if proc.stderr.strip() else "")
                with sass_path.open("a") as fh:
                    fh.write(f"==== {label} (CuPy {cp.__version__} NVRTC cubin)\n{sass}\n")
                entry["sass_counts"] = sass_counts(sass)
            t, clk = probe.time(lambda: launch(fn))
            entry.update(flops=flops, seconds=t, flops_per_s=flops / t, clock_hz=clk,
                         flops_per_clk_per_sm=flops / t / (probe.sms * clk) if clk else None)
        except Exception as exc:  # the next kernel still runs
            entry["error"] = f"{type(exc).__name__}: {exc}"
        res["kernels"][label] = entry
        path.write_text(json.dumps(res, indent=1) + "\n")
        print(label, json.dumps(entry), flush=True)

    iters = 2000

    def form(prec: str, chains: int, unroll: int, params: str, label: str) -> None:
        """One form of the paired-FMA kernel, the same FLOPs per launch (2000 x 128 FMAs per thread)."""
        from roofline.bench.gpu.kernels import paired_bits

        src, name = variant_source(prec, chains, unroll, params)
        n = iters * 128 // (chains * unroll)
        flops = blocks * threads * n * unroll * chains * 2 * 2
        consts = ((cp.float32(0.9995), cp.float32(0.001)) if params == "float" else
                  tuple(cp.uint32(paired_bits(v, prec)) for v in (0.9995, 0.001)))
        measure(label or f"{prec} form {name}", src, name, lambda fn, n=n, consts=consts: fn(
            (blocks,), (threads,), (out, *consts, cp.int64(n))), flops)

    if a.variants:
        for prec in ("fp16", "bf16"):
            for chains, unroll, params in VARIANTS:
                form(prec, chains, unroll, params, "")
        res["clock_after_hz"] = probe.clock()
        path.write_text(json.dumps(res, indent=1) + "\n")
        return 0
    n32 = iters
    measure("fp32 roofline kernel, 8 chains (as timed by roofline machine)", gk.COMPUTE_SOURCES["fp32"],
            gk.COMPUTE_KERNEL["fp32"], lambda fn: fn((blocks,), (threads,), (out, cp.float32(1.0001), cp.float32(1e-4),
                                                                          cp.int64(n32))),
            blocks * threads * n32 * gk.UNROLL * gk.CHAINS * 2)
    for prec, chains_list in (("fp16", (8, 4, 2, 1)), ("bf16", (8, 1))):
        for chains in chains_list:  # the form roofline machine timed until 2026-11-29: float constants
            form(prec, chains, gk.UNROLL, "float", f"{prec} kernel with float constants, {chains} chains")
        form(prec, gk.CHAINS, gk.UNROLL, "paired", f"{prec} roofline kernel (paired constants, as timed by roofline "
                                                    "machine)")
    import numpy as np

    one, small = (np.array([x, x], dtype=np.float16).view(np.uint32)[0] for x in (1.0, 1e-3))
    measure("fp16 hfma2_chain of gpu_targets.py (1 chain, loop not unrolled by hand)", HFMA_SOURCE, "hfma2_chain",
            lambda fn: fn((TARGET_THREADS // 256,), (256,), (out, cp.uint32(one), cp.uint32(small),
                                                           cp.int32(TARGET_ITERS))),
            TARGET_THREADS * TARGET_ITERS * 4)
    for chains in (2, 4):
        measure(f"fp16 hfma2_chain with {chains} accumulators (rolled loop)", CHAINS_SOURCE, f"hfma2_chains{chains}",
                lambda fn, c=chains: fn((TARGET_THREADS // 256,), (256,), (out, cp.uint32(one), cp.uint32(small),
                                                                          cp.int32(TARGET_ITERS // c))),
                TARGET_THREADS * (TARGET_ITERS // chains) * 4 * chains)
    res["clock_after_hz"] = probe.clock()
    path.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

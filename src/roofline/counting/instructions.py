"""The formula table's rows beyond FLOPs: operations, warp instructions, transactions, shared memory.

Every row holds on every architecture (the names exist for gv100, tu102, ga100, ga102, ad102 and
gh100 in ``ncu --query-metrics --chip``, Nsight Compute 2024.1.1, from the SM on which their instruction
class exists: see "Like by like"), and each counter is read in every form ncu writes (:mod:`roofline.counting.forms`: total, per-cycle rate x cycles, per-second rate x time).

===================  ==========================================================================
column               formula (the first alternative known wins; {a,b} = the sum over a and b)
===================  ==========================================================================
int_ops              sm__sass_thread_inst_executed_op_integer_pred_on.sum (one OP per thread
                     instruction: IADD3, IMAD, LOP3, shifts, ISETP...; nvprof's inst_integer)
conversion_ops       sm__sass_thread_inst_executed_op_conversion_pred_on.sum (F2F, F2I, I2F, I2I;
                     nvprof's inst_bit_convert)
sfu_ops              smsp__thread_inst_executed_pipe_xu_pred_on.sum (thread instructions on the XU
                     pipe: MUFU transcendentals, and some conversions and integer instructions)
warp_inst            smsp__inst_executed.sum (= sm__inst_executed.sum; ``--set full`` holds
                     sm__inst_executed.sum.per_cycle_elapsed, x sm__cycles_elapsed.avg); the
                     instruction roofline's work (Ding and Williams, PMBS 2019; nvprof's inst_executed)
global_inst          LDG, STG, LDL, STL: smsp__sass_inst_executed_op_{global,local}_{ld,st}.sum, else
                     the hardware counters smsp__inst_executed_op_{global,local}_{ld,st}.sum;
                     + LDGSTS (cp.async) :data:`LDGSTS` + ATOMG :data:`GLOBAL_ATOM` + REDG
                     :data:`GLOBAL_RED`; else the L1 requests
                     l1tex__t_requests_pipe_lsu_mem_{global,local}_op_{ld,st}.sum (the loads' hold
                     LDGSTS's) + ..._global_op_{atom,red}.sum (one request per warp-level LDG/STG:
                     524,288 instructions and requests alike in the H100 report in tests/data)
l1_transactions      their L1 sectors: l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum +
                     ..._global_op_{atom,red}.sum (32 B sectors; nvprof's gld/gst/local_load/
                     local_store_transactions). LDGSTS's sectors are inside op_ld's
shared_inst          LDS, STS: smsp__sass_inst_executed_op_shared_{ld,st}.sum, else
                     smsp__inst_executed_op_shared_{ld,st}.sum; + LDSM :data:`LDSM` + STSM :data:`STSM`
                     + ATOMS :data:`SHARED_ATOM` + LDGSTS (its shared-memory side)
shared_transactions  their wavefronts: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}.sum
                     (op_ld: LDS and LDSM; op_st: STS and STSM; op_atom: ATOMS; nvprof's
                     shared_load/store_transactions) + LDGSTS's :data:`LDGSTS_WAVEFRONTS`
tma_inst             TMA warp instructions :data:`TMA` (0 before SM 9.0)
gmma_inst            warpgroup MMA warp instructions :data:`GMMA` (SM 9.0 only)
shared_bytes         128 B x sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum (every instruction
                     that moves data through shared memory: LDS, STS, ATOMS, LDSM, STSM, LDGSTS,
                     GMMA), else 128 B x (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}
                     .sum + LDGSTS's + l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum), else
                     sm__sass_data_bytes_mem_shared.sum (the bytes the instructions ask for, fewer
                     than their wavefronts move when they conflict)
l2_transactions      lts__t_sectors.sum (32 B sectors), else lts__t_bytes.sum / 32
dram_transactions    dram__sectors_read.sum + dram__sectors_write.sum, else dram__sectors.sum,
                     else dram__bytes.sum / 32, else (dram__bytes_read.sum + _write.sum) / 32
===================  ==========================================================================

Like by like. The memory-pattern walls (:mod:`roofline.analysis.patterns`) divide ``l1_transactions`` by
``global_inst`` and ``shared_transactions`` by ``shared_inst``: each instruction class is counted where its
traffic is. Which counter holds which traffic was checked on a public H200 ``--set full`` export (Nsight
Compute 2026.1; tests/data/ncu/h200_setfull_sglang_moe_fa3/PROVENANCE.md has the cells) against the
metric descriptions of ``ncu --query-metrics`` (2024.1.1):

* LDGSTS's global requests and sectors are inside the global loads' (fused_moe_kernel: 106,752 load requests
  = 2,304 LDG + 104,448 LDGSTS; 1,599,744 load sectors, 1,597,440 of them LDGSTS's), so LDGSTS adds
  instructions to ``global_inst`` and no sectors; its shared-memory wavefronts are in no op_ld/op_st count
  and are added (``smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts``: 42 % of that kernel's
  shared-memory wavefronts), as its instructions are to ``shared_inst``: LDGSTS is in both figures.
* LDSM's wavefronts are inside op_ld's (786,624 = 192 LDS + 4 x 196,608 LDSM.x4) and STSM's inside op_st's
  (the hardware counters; the SASS ``smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`` hold
  LDS and STS alone and are not read).
* Atomics and reductions have sectors and wavefronts of their own (``..._op_atom``, ``..._op_red``).
* TMA (UTMALDG, UTMASTG, UBLKCP..., SM 9.0 on) moves data without LD/ST instructions: its global traffic is
  in no LSU sector count and is left out; what it does to the shared wavefronts cannot be paired (the
  analysis gives such kernels no shared-wall figure and says why). Warpgroup MMAs (wgmma) read operands from
  shared memory in wavefronts of their own (``..._op_gmma``), in no op_ld/op_st count. Both are counted
  (``tma_inst``, ``gmma_inst``) so that each kernel can say so.

Each class exists from some SM on (:attr:`~roofline.counting.forms.Counter.archs`; the PTX ISA's target
notes: ldmatrix sm_75, cp.async sm_80, stmatrix, cp.async.bulk and wgmma sm_90): before it, its count is 0
whatever the profile holds, and ``roofline profile`` does not ask for it (ncu would refuse the name).

The metric names follow Nsight Compute's own metric descriptions (``ncu --query-metrics --csv``)
and its CLI documentation's table of nvprof metrics and their ncu equivalents.

Optional parts: local memory, and every instruction class beyond LD/ST with its traffic (LDGSTS, LDSM,
STSM, atomics, reductions; shared_bytes' atomic, LDGSTS and GMMA wavefronts). A sum takes its complete
alternative first; where only some parts were collected (an export older than them, ``roofline
profile`` before them), it is the sum of those known, a lower bound
(:attr:`roofline.counting.Counted.lower_bounds` names what it lacks). ``--set full`` collects them all.

Not read: ``l1tex__data_pipe_lsu_wavefronts_mem_shared.sum``, the data stage's total, which also
counts "Misc" wavefronts (its description) that no shared-memory instruction asked for. In the
reports in tests/data they are 1 to 3 per warp in kernels without any shared-memory instruction
(H100 silu: 524,288 for 524,288 warps; T4 matrix addition: 63,504 for 31,752 warps) and 3.8 times the
LDS/STS wavefronts in a shared-memory reduction (GTX 1660 SUPER dot_prod: 892,928 in all, 102,400 +
81,920 of them LDS and STS): as bytes they would be wrong by that much. (Its peak and "% of peak"
still give the data stage's rate, the shared ceiling: :mod:`roofline.readers.ncu.peaks`.)

These columns are wanted only for ``--work ops`` or ``--work instructions`` (and the shared level):
a FLOP/byte export that lacks them is not warned about; :attr:`roofline.counting.Counted.missing_hints`
names the metrics for the analysis that needs them.
"""

from __future__ import annotations

from roofline.counting.forms import ALL, Counter, Formula, Source, Terms, dram, one, sm, smsp, terms


def _per_op(counter: str, ops: tuple[str, ...], spaces: tuple[str, ...]) -> Terms:
    """``counter`` formatted for each memory space and operation, summed with weight 1."""
    return tuple((1.0, one(counter.format(space=s, op=o))) for s in spaces for o in ops)


def _smsp_per_op(counter: str, ops: tuple[str, ...], spaces: tuple[str, ...]) -> Terms:
    """As :func:`_per_op`, for an SM counter that ncu also writes per SM sub-partition."""
    return tuple((1.0, smsp(counter.format(space=s, op=o))) for s in spaces for o in ops)


def _both(metric: str) -> tuple[str, str]:
    """An SM counter under its sub-partition name first, then its SM name (the same ``.sum``)."""
    return f"smsp__{metric}", f"sm__{metric}"


def _summed(*metrics: str) -> tuple[Source, Source]:
    """A total written as the sum of ``metrics`` (each an SM counter), per sub-partition and per SM."""
    return tuple(f"smsp__{m}" for m in metrics), tuple(f"sm__{m}" for m in metrics)


LD_ST = ("ld", "st")
GLOBAL_LOCAL = ("global", "local")
#: The local-memory parts of a load/store sum: without them, the sum is a lower bound.
LOCAL_PARTS = tuple(
    f"{prefix}{op}{suffix}" for op in LD_ST for prefix, suffix in (
        ("smsp__sass_inst_executed_op_local_", ".sum"), ("smsp__inst_executed_op_local_", ".sum"),
        ("l1tex__t_requests_pipe_lsu_mem_local_op_", ".sum"), ("l1tex__t_sectors_pipe_lsu_mem_local_op_", ".sum")))

_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared"
WAVEFRONT_BYTES = 128.0  # a shared-memory wavefront: 32 banks x 4 B
SECTOR_BYTES = 32.0

# -- the instruction classes beyond LD/ST, from the compute capability whose SM has them (the PTX ISA's
# -- target notes: ldmatrix sm_75, cp.async sm_80, stmatrix, cp.async.bulk and wgmma sm_90); 0 elsewhere
#: LDSM (ldmatrix): SM 7.5 on.
LDSM_ARCHS = ("7.5", "8", "9", "10", "11", "12")
#: LDGSTS (cp.async): SM 8.0 on.
LDGSTS_ARCHS = ("8", "9", "10", "11", "12")
#: STSM (stmatrix) and TMA (cp.async.bulk, UTMALDG/UTMASTG/UBLKCP): SM 9.0 on.
SM90_ARCHS = ("9", "10", "11", "12")
#: Warpgroup MMA (wgmma: HGMMA, IGMMA, QGMMA, BGMMA): SM 9.0 only (Blackwell's tcgen05 MMAs are others).
GMMA_ARCHS = ("9",)

#: LDGSTS (cp.async) warp instructions: the SASS count (Nsight Compute's ``--set full`` holds its
#: LDGSTS.ACCESS and LDGSTS.BYPASS parts), else the hardware count. The two differ: on the FA3 kernel
#: of the H200 export in tests/data the hardware reads 1,760 where the SASS parts read 0 + 1,448 (and
#: the requests 1,344); on Triton's fused_moe_kernel both read 138,240. The SASS count is the one the
#: LDG/STG counts and the SASS sector and wavefront counts come from.
LDGSTS = Counter((*_both("sass_inst_executed_op_ldgsts.sum"),
                  *_summed("sass_inst_executed_op_ldgsts_cache_access.sum", "sass_inst_executed_op_ldgsts_cache_bypass.sum"),
                  "smsp__inst_executed_op_ldgsts.sum"), archs=LDGSTS_ARCHS)
#: Global atomics (ATOMG, and generic ATOM that resolved to global memory): the SASS count, else the
#: hardware's ATOM count (``generic_atom``, or its ``.ALU`` and ``.CAS`` parts): the hardware counters
#: have no ATOMG of their own (on the H200 export, FA3's 4 global-atomic requests come with 4 ATOM.ALU).
GLOBAL_ATOM = Counter((*_both("sass_inst_executed_op_global_atom.sum"), "smsp__inst_executed_op_generic_atom.sum",
                       ("smsp__inst_executed_op_generic_atom_dot_alu.sum", "smsp__inst_executed_op_generic_atom_dot_cas.sum")))
#: Global reductions (REDG; hardware: RED).
GLOBAL_RED = Counter((*_both("sass_inst_executed_op_global_red.sum"), "smsp__inst_executed_op_global_red.sum"))
#: LDSM (ldmatrix) and STSM (stmatrix) warp instructions.
LDSM = Counter((*_both("sass_inst_executed_op_ldsm.sum"), *_both("inst_executed_op_ldsm.sum")), archs=LDSM_ARCHS)
STSM = Counter((*_both("sass_inst_executed_op_shared_stsm.sum"), *_both("inst_executed_op_shared_stsm.sum")),
               archs=SM90_ARCHS)
#: Shared-memory atomics (ATOMS, and generic ATOM that resolved to shared memory; hardware: ATOMS).
SHARED_ATOM = Counter((*_both("sass_inst_executed_op_shared_atom.sum"), "smsp__inst_executed_op_shared_atom.sum"))
#: The shared-memory side of LDGSTS: its wavefronts (only the SASS counts exist); 0 where the LDGSTS
#: count is (Counter.idle: a count of 0 proves its traffic 0).
LDGSTS_WAVEFRONTS = Counter((
    *_both("sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"),
    *_summed("sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_access.sum",
             "sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_bypass.sum")), archs=LDGSTS_ARCHS,
    idle=(*_both("sass_inst_executed_op_ldgsts.sum"), "smsp__inst_executed_op_ldgsts.sum"))
#: Shared-memory wavefronts of warpgroup MMAs reading their operands; 0 where no warpgroup MMA ran.
GMMA_WAVEFRONTS = Counter((f"{_WAVEFRONTS}_op_gmma.sum", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"),
                          archs=GMMA_ARCHS, idle=(*_both("sass_inst_executed_op_shared_gmma.sum"),
                                                  *_both("inst_executed_pipe_tensor_op_gmma.sum")))
#: TMA warp instructions: the SASS total (UTMALDG, UBLKCP.S.G, UTMASTG, UBLKCP.G.S, UTMAREDG, UBLKRED.G.S,
#: UBLKCP.S.S, UBLKRED.S.S), else its load, store and reduction parts (the global ones), else the hardware
#: loads and stores (which read more: 256,000 + 320,000 against the SASS 256,000 + 80,000 in an nvjet GEMM
#: of the same study's long-prefill export).
TMA = Counter((*_both("sass_inst_executed_op_tma.sum"),
               *_summed("sass_inst_executed_op_tma_ld.sum", "sass_inst_executed_op_tma_st.sum",
                        "sass_inst_executed_op_tma_red.sum"),
               ("smsp__inst_executed_op_tma_ld.sum", "smsp__inst_executed_op_tma_st.sum")), archs=SM90_ARCHS)
#: Warpgroup MMA warp instructions (they read operands from shared memory through descriptors).
GMMA = Counter((*_both("sass_inst_executed_op_shared_gmma.sum"), *_both("inst_executed_pipe_tensor_op_gmma.sum")),
               archs=GMMA_ARCHS)

#: The global side: LDGSTS, atomics and reductions beside the LD/ST instructions, and their sectors.
GLOBAL_MORE: Terms = ((1.0, LDGSTS), (1.0, GLOBAL_ATOM), (1.0, GLOBAL_RED))
GLOBAL_MORE_SECTORS: Terms = _per_op("l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum", ("atom", "red"), ("global",))
GLOBAL_MORE_REQUESTS: Terms = _per_op("l1tex__t_requests_pipe_lsu_mem_{space}_op_{op}.sum", ("atom", "red"), ("global",))
#: The shared side: LDSM, STSM, atomics and LDGSTS beside LDS/STS, and the wavefronts beyond op_ld/op_st.
SHARED_MORE: Terms = ((1.0, LDSM), (1.0, STSM), (1.0, SHARED_ATOM), (1.0, LDGSTS))
SHARED_MORE_WAVEFRONTS: Terms = ((1.0, one(f"{_WAVEFRONTS}_op_atom.sum")), (1.0, LDGSTS_WAVEFRONTS))

#: Parts a profile without them still gets a lower bound from (:attr:`Formula.optional`): local memory,
#: and every instruction class beyond LD/ST with its traffic (``roofline profile`` before them, older
#: exports).
GLOBAL_OPTIONAL = (*LOCAL_PARTS, *(c.name for _, c in (*GLOBAL_MORE, *GLOBAL_MORE_SECTORS, *GLOBAL_MORE_REQUESTS)))
SHARED_OPTIONAL = tuple(c.name for _, c in (*SHARED_MORE, *SHARED_MORE_WAVEFRONTS))

FORMULAS: tuple[Formula, ...] = (
    Formula("int_ops", ALL, terms((1, sm("sass_thread_inst_executed_op_integer_pred_on.sum"))),
            "integer thread instructions, one OP each"),
    Formula("conversion_ops", ALL, terms((1, sm("sass_thread_inst_executed_op_conversion_pred_on.sum"))),
            "conversion thread instructions"),
    Formula("sfu_ops", ALL, terms((1, smsp("thread_inst_executed_pipe_xu_pred_on.sum"))),
            "thread instructions on the XU (special-function) pipe"),
    Formula("warp_inst", ALL, terms((1, smsp("inst_executed.sum"))), "warp instructions executed"),
    Formula("global_inst", ALL, (
        (*_smsp_per_op("sass_inst_executed_op_{space}_{op}.sum", LD_ST, GLOBAL_LOCAL), *GLOBAL_MORE),
        (*_smsp_per_op("inst_executed_op_{space}_{op}.sum", LD_ST, GLOBAL_LOCAL), *GLOBAL_MORE),
        (*_per_op("l1tex__t_requests_pipe_lsu_mem_{space}_op_{op}.sum", LD_ST, GLOBAL_LOCAL), *GLOBAL_MORE_REQUESTS),
    ), "global and local memory warp instructions: LD/ST, LDGSTS, atomics, reductions (else L1 requests)",
        optional=GLOBAL_OPTIONAL),
    Formula("shared_inst", ALL, (
        (*_smsp_per_op("sass_inst_executed_op_{space}_{op}.sum", LD_ST, ("shared",)), *SHARED_MORE),
        (*_smsp_per_op("inst_executed_op_{space}_{op}.sum", LD_ST, ("shared",)), *SHARED_MORE),
    ), "shared-memory warp instructions: LDS, STS, LDSM, STSM, atomics, LDGSTS", optional=SHARED_OPTIONAL),
    Formula("l1_transactions", ALL, (
        (*_per_op("l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum", LD_ST, GLOBAL_LOCAL), *GLOBAL_MORE_SECTORS),),
            "L1 sectors of global and local memory instructions (LDGSTS's inside the loads')", optional=GLOBAL_OPTIONAL),
    Formula("shared_transactions", ALL, (
        (*_per_op(_WAVEFRONTS + "_op_{op}.sum", LD_ST, ("",)), *SHARED_MORE_WAVEFRONTS),),
            "shared-memory wavefronts of the shared-memory instructions", optional=SHARED_OPTIONAL),
    Formula("shared_bytes", ALL, (
        ((WAVEFRONT_BYTES, sm("sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum")),),
        tuple((WAVEFRONT_BYTES, c) for c in (*(one(f"{_WAVEFRONTS}_op_{op}.sum") for op in ("ld", "st", "atom")),
                                               LDGSTS_WAVEFRONTS, GMMA_WAVEFRONTS)),
        ((1.0, sm("sass_data_bytes_mem_shared.sum")),),
    ), "bytes through shared memory: 128 B x wavefronts (else the bytes the instructions ask for)",
        optional=(f"{_WAVEFRONTS}_op_atom.sum", LDGSTS_WAVEFRONTS.name, GMMA_WAVEFRONTS.name)),
    Formula("tma_inst", ALL, terms((1, TMA)), "TMA (bulk-copy) warp instructions"),
    Formula("gmma_inst", ALL, terms((1, GMMA)), "warpgroup MMA warp instructions (operands from shared memory)"),
    Formula("l2_transactions", ALL, (
        ((1.0, one("lts__t_sectors.sum")),),
        ((1 / SECTOR_BYTES, one("lts__t_bytes.sum")),),
    ), "L2 sectors (else bytes / 32)"),
    Formula("dram_transactions", ALL, (
        ((1.0, dram("read", "sectors")), (1.0, dram("write", "sectors"))),
        ((1.0, one("dram__sectors.sum")),),
        ((1 / SECTOR_BYTES, one("dram__bytes.sum")),),
        ((1 / SECTOR_BYTES, dram("read")), (1 / SECTOR_BYTES, dram("write"))),
    ), "DRAM sectors: read + write (else the total, else bytes / 32)"),
)

#: Columns whose missing counters are hinted (``Counted.missing_hints``), never warned about.
HINTED_COLUMNS = (*(f.column for f in FORMULAS), "tensor_int_ops")

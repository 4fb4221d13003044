"""The formula table's rows beyond FLOPs: operations, warp instructions, transactions, shared memory.

Every row holds on every architecture (the names exist for gv100, tu102, ga100, ga102, ad102 and
gh100 in ``ncu --query-metrics --chip``, Nsight Compute 2024.1.1), and each counter is read in every
form ncu writes (:mod:`roofline.counting.forms`: total, per-cycle rate x cycles, per-second rate x time).

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
global_inst          smsp__sass_inst_executed_op_{global,local}_{ld,st}.sum, else the hardware
                     counters smsp__inst_executed_op_{global,local}_{ld,st}.sum, else
                     l1tex__t_requests_pipe_lsu_mem_{global,local}_op_{ld,st}.sum (one request per
                     warp-level LDG/STG: 524,288 instructions and requests alike in the H100 report
                     in tests/data)
shared_inst          smsp__sass_inst_executed_op_shared_{ld,st}.sum, else
                     smsp__inst_executed_op_shared_{ld,st}.sum
l1_transactions      l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum (32 B sectors;
                     nvprof's gld/gst/local_load/local_store_transactions)
shared_transactions  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum (wavefronts of LDS,
                     LDSM, STS, STSM; nvprof's shared_load/store_transactions)
shared_bytes         128 B x sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum (every instruction
                     that moves data through shared memory: LDS, STS, ATOMS, LDSM, STSM, LDGSTS,
                     GMMA), else 128 B x l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}
                     .sum (LDS, LDSM, STS, STSM, ATOMS: not LDGSTS or GMMA), else
                     sm__sass_data_bytes_mem_shared.sum (the bytes the instructions ask for, fewer
                     than their wavefronts move when they conflict)
l2_transactions      lts__t_sectors.sum (32 B sectors), else lts__t_bytes.sum / 32
dram_transactions    dram__sectors_read.sum + dram__sectors_write.sum, else dram__sectors.sum,
                     else dram__bytes.sum / 32, else (dram__bytes_read.sum + _write.sum) / 32
===================  ==========================================================================

The metric names follow Nsight Compute's own metric descriptions (``ncu --query-metrics --csv``)
and its CLI documentation's table of nvprof metrics and their ncu equivalents.

Optional parts: a sum with local-memory parts (global_inst, l1_transactions), or shared_bytes
with its atomics part, takes its complete alternative first; where only the other parts were
collected, it is their sum, a lower bound (:attr:`roofline.counting.Counted.lower_bounds` names what
it lacks). ``--set full`` collects them all.

Not read: ``l1tex__data_pipe_lsu_wavefronts_mem_shared.sum``, the data stage's total, which also
counts "Misc" wavefronts (its description) that no shared-memory instruction asked for. In the
reports in tests/data they are 1 to 3 per warp in kernels without any shared-memory instruction
(H100 silu: 524,288 for 524,288 warps; T4 matrix addition: 63,504 for 31,752 warps) and 3.8 times the
LDS/STS wavefronts in a shared-memory reduction (GTX 1660 SUPER dot_prod: 892,928 in all, 102,400 +
81,920 of them LDS and STS): as bytes they would be wrong by that much. (Its peak and "% of peak"
still give the data stage's rate, the shared ceiling: :mod:`roofline.analysis.ceilings`.)

These columns are wanted only for ``--work ops`` or ``--work instructions`` (and the shared level):
a FLOP/byte export that lacks them is not warned about; :attr:`roofline.counting.Counted.missing_hints`
names the metrics for the analysis that needs them.
"""

from __future__ import annotations

from roofline.counting.forms import ALL, Formula, Terms, dram, one, sm, smsp, terms


def _per_op(counter: str, ops: tuple[str, ...], spaces: tuple[str, ...]) -> Terms:
    """``counter`` formatted for each memory space and operation, summed with weight 1."""
    return tuple((1.0, one(counter.format(space=s, op=o))) for s in spaces for o in ops)


def _smsp_per_op(counter: str, ops: tuple[str, ...], spaces: tuple[str, ...]) -> Terms:
    """As :func:`_per_op`, for an SM counter that ncu also writes per SM sub-partition."""
    return tuple((1.0, smsp(counter.format(space=s, op=o))) for s in spaces for o in ops)


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

FORMULAS: tuple[Formula, ...] = (
    Formula("int_ops", ALL, terms((1, sm("sass_thread_inst_executed_op_integer_pred_on.sum"))),
            "integer thread instructions, one OP each"),
    Formula("conversion_ops", ALL, terms((1, sm("sass_thread_inst_executed_op_conversion_pred_on.sum"))),
            "conversion thread instructions"),
    Formula("sfu_ops", ALL, terms((1, smsp("thread_inst_executed_pipe_xu_pred_on.sum"))),
            "thread instructions on the XU (special-function) pipe"),
    Formula("warp_inst", ALL, terms((1, smsp("inst_executed.sum"))), "warp instructions executed"),
    Formula("global_inst", ALL, (
        _smsp_per_op("sass_inst_executed_op_{space}_{op}.sum", LD_ST, GLOBAL_LOCAL),
        _smsp_per_op("inst_executed_op_{space}_{op}.sum", LD_ST, GLOBAL_LOCAL),
        _per_op("l1tex__t_requests_pipe_lsu_mem_{space}_op_{op}.sum", LD_ST, GLOBAL_LOCAL),
    ), "global and local load/store warp instructions (else L1 requests)", optional=LOCAL_PARTS),
    Formula("shared_inst", ALL, (
        _smsp_per_op("sass_inst_executed_op_{space}_{op}.sum", LD_ST, ("shared",)),
        _smsp_per_op("inst_executed_op_{space}_{op}.sum", LD_ST, ("shared",)),
    ), "shared-memory load/store warp instructions"),
    Formula("l1_transactions", ALL, (_per_op("l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum", LD_ST, GLOBAL_LOCAL),),
            "L1 sectors of global and local loads and stores", optional=LOCAL_PARTS),
    Formula("shared_transactions", ALL, (_per_op(_WAVEFRONTS + "_op_{op}.sum", LD_ST, ("",)),),
            "shared-memory load/store wavefronts"),
    Formula("shared_bytes", ALL, (
        ((WAVEFRONT_BYTES, sm("sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum")),),
        tuple((WAVEFRONT_BYTES, one(f"{_WAVEFRONTS}_op_{op}.sum")) for op in ("ld", "st", "atom")),
        ((1.0, sm("sass_data_bytes_mem_shared.sum")),),
    ), "bytes through shared memory: 128 B x wavefronts (else the bytes the instructions ask for)",
        optional=(f"{_WAVEFRONTS}_op_atom.sum",)),
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

"""What to collect: the Nsight Compute metrics that supply each kernel-table column, as notes name them.

A note on a kernel without time, work or traffic ends with what would supply it, e.g. "no instruction
counts (collect smsp__inst_executed.sum)". The metric names live here, beside the formulas that read
them (:mod:`roofline.counting.flops`, :mod:`~roofline.counting.instructions`); the ncu reader puts
:data:`NCU_HINTS` in the kernel table (:attr:`roofline.kernels.KernelTable.metric_hints`), the analysis
carries them (:attr:`roofline.analysis.Analysis.metric_hints`), and the analysis, its views and the
guidance say them without naming a metric themselves. A table whose reader names no tool (built from
records) has none, and its notes say what is missing without what to collect.

Keys (the text is what follows "collect"):

======================  ==========================================================================
key                     supplies
======================  ==========================================================================
``time_s``              the launch's time
``flops``, ``ops``,     the work of the FLOP, operation and instruction rooflines (named in the
``warp_inst``           notes on kernels without it)
``<level>_bytes``,      each level's traffic in bytes and in transactions
``<level>_transactions``
``ldst_inst``           global, local and shared load/store instructions (the memory-access walls)
``fp32_time_flops``     time and FP32 FLOPs, comma-joined for ``ncu --metrics``
``tensor_flops``        tensor-core FLOPs
``roofline:<work>``     everything a roofline of that work (``ops``, ``instructions``) needs, listed
``ldgsts_inst``,        cp.async (LDGSTS) and ldmatrix (LDSM) instructions, which the global and shared
``ldsm_inst``           load/store counts leave out
``flop:<column>``       one FLOP column's counters on every architecture (``fp64_flops``, ``fp32_flops``,
                        ``fp16_flops``, ``tensor_flops``), named where a projection finds it uncounted
======================  ==========================================================================
"""

from __future__ import annotations

from roofline.counting.flops import GPU_TIME

_TIME = GPU_TIME.name
_FP32 = ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum")

#: Key (see the module docstring) -> the Nsight Compute metrics that supply it, as a note names them.
NCU_HINTS: dict[str, str] = {
    "time_s": _TIME,
    "flops": "sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum and sm__inst_executed_pipe_tensor.sum",
    "ops": "the FLOP counters and sm__sass_thread_inst_executed_op_{integer,conversion}_pred_on.sum",
    "warp_inst": "smsp__inst_executed.sum",
    "l1_bytes": "l1tex__t_bytes.sum", "shared_bytes": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l2_bytes": "lts__t_bytes.sum", "dram_bytes": "dram__bytes.sum",
    "l1_transactions": "l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum, ..._global_op_{atom,red}.sum",
    "shared_transactions": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}.sum, "
                           "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "l2_transactions": "lts__t_sectors.sum", "dram_transactions": "dram__sectors_{read,write}.sum",
    "ldst_inst": "smsp__inst_executed_op_{global,local,shared}_{ld,st}.sum",
    "fp32_time_flops": ",".join((_TIME, *_FP32)),
    "tensor_flops": "sm__inst_executed_pipe_tensor.sum",
    "roofline:flops": ", ".join(("sm__sass_thread_inst_executed_op_{dadd,dmul,dfma,fadd,fmul,ffma,hadd,hmul,hfma}"
                                 "_pred_on.sum", "sm__inst_executed_pipe_tensor.sum")),
    "roofline:ops": ", ".join(("the FLOP counters", "sm__sass_thread_inst_executed_op_integer_pred_on.sum",
                               "sm__sass_thread_inst_executed_op_conversion_pred_on.sum")),
    "roofline:instructions": ", ".join(("smsp__inst_executed.sum",
                                        "l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum",
                                        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum",
                                        "lts__t_sectors.sum", "dram__sectors_{read,write}.sum")),
    "ldgsts_inst": "smsp__inst_executed_op_ldgsts.sum",
    "ldsm_inst": "smsp__inst_executed_op_ldsm.sum",
    "flop:fp64_flops": "sm__sass_thread_inst_executed_op_d{add,mul,fma}_pred_on.sum",
    "flop:fp32_flops": "sm__sass_thread_inst_executed_op_f{add,mul,fma}_pred_on.sum",
    "flop:fp16_flops": "sm__sass_thread_inst_executed_op_h{add,mul,fma}_pred_on.sum",
    "flop:tensor_flops": "sm__inst_executed_pipe_tensor.sum (Hopper: sm__ops_path_tensor_src_*)",
}

#: Kernel-table column -> the Nsight Compute counters it is counted from, every alternative in the
#: order :mod:`roofline.counting` tries them, as the kernel-table docs say them beside the column's
#: meaning (:func:`roofline.kernels.describe_columns`, docs/kernel-table.md).
COLUMN_COUNTERS: dict[str, str] = {
    "time_s": f"{_TIME}, else cycles / clock",
    "sm_clock_hz": "gpc__cycles_elapsed.avg.per_second, else sm__cycles_elapsed.avg.per_second",
    "int_ops": "sm__sass_thread_inst_executed_op_integer_pred_on.sum",
    "conversion_ops": "sm__sass_thread_inst_executed_op_conversion_pred_on.sum",
    "sfu_ops": "smsp__thread_inst_executed_pipe_xu_pred_on.sum",
    "tensor_int_ops": "sm__ops_path_tensor_src_int8..., ..._src_int4",
    "l1_bytes": "l1tex__t_bytes.sum",
    "shared_bytes": "128 B x sm__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum, else "
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom,gmma}.sum + LDGSTS's "
                    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum; else sm__sass_data_bytes_mem_shared.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "dram_bytes": "dram__bytes.sum",
    "warp_inst": "smsp__inst_executed.sum",
    "global_inst": "smsp__sass_inst_executed_op_{global,local}_{ld,st}.sum, ..._ldgsts, ..._global_atom, ..._global_red",
    "shared_inst": "smsp__sass_inst_executed_op_shared_{ld,st}.sum, ..._ldsm, ..._shared_stsm, ..._shared_atom, ..._ldgsts",
    "l1_transactions": "l1tex__t_sectors_pipe_lsu_mem_{global,local}_op_{ld,st}.sum + ..._global_op_{atom,red}.sum",
    "shared_transactions": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom}.sum + "
                           "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "tma_inst": "smsp__sass_inst_executed_op_tma.sum",
    "gmma_inst": "smsp__sass_inst_executed_op_shared_gmma.sum",
    "l2_transactions": "lts__t_sectors.sum",
    "dram_transactions": "dram__sectors_read.sum + dram__sectors_write.sum",
}

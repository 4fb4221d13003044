"""GPU micro-benchmarks: CUDA kernels (:mod:`.kernels`) compiled by NVRTC and timed through CuPy
(:mod:`.cupy_timer`), cuBLAS GEMMs (:mod:`.gemm`), and the whole measurement (:mod:`.measure`)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("cupy_timer", "gemm", "kernels", "measure")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

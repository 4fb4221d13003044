"""GPU micro-benchmarks: CUDA kernels (:mod:`.kernels`) compiled by NVRTC and timed through CuPy
(:mod:`.cupy_timer`), cuBLAS GEMMs (:mod:`.gemm`), the whole measurement (:mod:`.measure`) and what it runs on (:mod:`.backend`:
the backend protocol, settings, statistic, calibration)."""

from roofline._lazy import attach

#: Modules reachable as attributes.
_SUBMODULES = ("backend", "cupy_timer", "gemm", "kernels", "measure")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES)

"""The environment variable that tells a profiled process to switch attribution on: no PyTorch import here,
so the launcher (:mod:`roofline.profiling.counter_free.launch`) can set it without PyTorch installed."""

#: "1": open the module, operator and phase ranges of ``roofline profile --torch`` (:mod:`roofline.torch.auto`).
ENV_TORCH = "ROOFLINE_TORCH"

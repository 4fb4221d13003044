"""Working-set sweeps: find bandwidth plateaus and name them after cache levels.

Shared by the GPU and CPU characterizations. Interface (owned by the CPU/sweep work):

    find_plateaus(sizes_bytes, bandwidths, cache_sizes=None) -> list[Plateau]
    name_plateaus(plateaus, levels=("l1", "l2", "dram")) -> dict[str, Plateau]
    plot_sweep(sweep, cache_sizes=None) -> matplotlib.figure.Figure

``Plateau`` has ``first_size``, ``last_size`` (bytes), ``bandwidth`` (B/s, median over
the plateau) and ``spread`` (relative).
"""

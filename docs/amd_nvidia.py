"""Draw docs/amd-nvidia.png: an AMD and an NVIDIA profile side by side, each on its own GPU's ceilings.

Left, mixbench on an MI210 (Omniperf workload from ROCm/omniperf's tests, ceilings from the workload's
own roofline.csv); right, the micro-kernels roofline's GPU session recorded on an H100 80GB HBM3
(GEMMs, paired FP16 FMAs, saxpy; ceilings from the H100 file roofline ships). Both files are test
fixtures (tests/data/amd, tests/data/ncu/h100_80gb_hbm3_examples, with their provenance).

    python docs/amd_nvidia.py            # from the repository root
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from roofline import api
from roofline.views.chart.static import roofline_figure

ROOT = Path(__file__).resolve().parents[1]
AMD = ROOT / "tests" / "data" / "amd" / "omniperf_mixbench_mi200_gfx90a"
H100 = ROOT / "tests" / "data" / "ncu" / "h100_80gb_hbm3_examples"
NVIDIA = [H100 / f"target_{name}.ncu.csv" for name in ("gemm_bf16", "gemm_fp16", "gemm_fp32", "gemm_tf32", "hfma", "hfma2",
                                                        "saxpy")]


def pixels(figure: Figure, dpi: int) -> np.ndarray:
    canvas = FigureCanvasAgg(figure)
    figure.set_dpi(dpi)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())


def side_by_side(left: Figure, right: Figure, *, dpi: int = 130) -> Figure:
    """One figure holding two rendered charts next to each other, tops aligned."""
    images = [pixels(f, dpi) for f in (left, right)]
    height = max(i.shape[0] for i in images)
    width = sum(i.shape[1] for i in images)
    out = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    x = 0
    for image in images:
        ax = out.add_axes((x / width, 1 - image.shape[0] / height, image.shape[1] / width, image.shape[0] / height))
        ax.imshow(image)
        ax.set_axis_off()
        x += image.shape[1]
    return out


def main() -> None:
    amd = api.analyze(AMD)
    nvidia = api.analyze(NVIDIA)
    left = roofline_figure(amd, top=6, title="AMD Instinct MI210: mixbench (an Omniperf workload)")
    right = roofline_figure(nvidia, top=6, title="NVIDIA H100 80GB HBM3: GEMMs, FMAs, saxpy (ncu)")
    out = ROOT / "docs" / "amd-nvidia.png"
    side_by_side(left, right).savefig(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""A small DeepCAM-like segmentation network and a training step, annotated by phase.

DeepCAM (MLPerf HPC) segments extreme-weather features in climate images with a
convolutional encoder-decoder. This is a miniature of that shape: conv + batch norm
+ ReLU downsampling blocks, a bottleneck, transposed-convolution upsampling with skip
connections, and per-pixel class logits; trained with Adam on random data.
``roofline.torch.annotate`` marks the forward, backward and optimizer phases.

    python examples/deepcam_mini.py                       # CPU, a few seconds
    python examples/deepcam_mini.py --device cuda --size 256 --batch 8 --steps 5
    roofline profile -o deepcam -- python examples/deepcam_mini.py --device cuda
    roofline profile --no-counters -o deepcam -- python examples/deepcam_mini.py
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

import roofline.torch


def block(cin: int, cout: int) -> nn.Sequential:
    """conv 3x3 + batch norm + ReLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DeepCamMini(nn.Module):
    """Encoder (3 downsampling blocks), bottleneck, decoder (3 upsampling blocks with skips)."""

    def __init__(self, channels: int = 4, classes: int = 3, width: int = 16):
        super().__init__()
        w = width
        self.enc1, self.enc2, self.enc3 = block(channels, w), block(w, 2 * w), block(2 * w, 4 * w)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = block(4 * w, 8 * w)
        self.up3 = nn.ConvTranspose2d(8 * w, 4 * w, 2, stride=2)
        self.dec3 = block(8 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = block(4 * w, 2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = block(2 * w, w)
        self.head = nn.Conv2d(w, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        e3 = self.enc3(self.pool(e2))
        b = self.bottleneck(self.pool(e3))
        d3 = self.dec3(torch.cat([self.up3(b), e3], dim=1))
        d2 = self.dec2(torch.cat([self.up2(d3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


def train(device: str = "cpu", size: int = 32, batch: int = 2, steps: int = 2, width: int = 8,
          channels: int = 4, classes: int = 3, seed: int = 0) -> float:
    """Run ``steps`` training steps on random data; returns the last loss."""
    torch.manual_seed(seed)
    model = DeepCamMini(channels, classes, width).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    roofline.torch.annotate(model, optimizer)
    x = torch.randn(batch, channels, size, size, device=device)
    y = torch.randint(0, classes, (batch, size, size), device=device)
    loss_fn = nn.CrossEntropyLoss()
    loss = torch.zeros(())
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return float(loss.detach())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--size", type=int, default=32, help="image height and width (multiple of 8)")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--width", type=int, default=8, help="channels of the first block")
    a = p.parse_args(argv)
    loss = train(a.device, a.size, a.batch, a.steps, a.width)
    print(f"deepcam_mini: {a.steps} steps on {a.device}, last loss {loss:.4f}")


if __name__ == "__main__":
    main()

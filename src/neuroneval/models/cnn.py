"""A tiny convolutional classifier for the embedded vision world, trained on the CPU in the DAG.

It stands in for the paper's ImageNet/Places classifiers (000 App. F): its softmax units are "final layer
neurons" with known concepts (their classes), and ``block3`` is a hidden layer whose spatially pooled channels
get IoU-chosen ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


@dataclass(frozen=True)
class CNNConfig:
    """Architecture of :class:`TinyCNN`: input size, number of classes and base channel width."""

    n_classes: int
    width: int = 32
    image_size: int = 32


class TinyCNN(nn.Module):
    """Three conv blocks (``block1``–``block3``), global average pooling and a linear classifier ``fc``."""

    def __init__(self, config: CNNConfig) -> None:
        super().__init__()
        width = config.width
        self.config = config
        self.block1 = _conv_block(3, width, pool=True)
        self.block2 = _conv_block(width, 2 * width, pool=True)
        self.block3 = _conv_block(2 * width, 4 * width, pool=False)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, config.n_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        features = self.block3(self.block2(self.block1(images)))
        return self.fc(torch.flatten(self.pool(features), 1))


def _conv_block(in_channels: int, out_channels: int, *, pool: bool) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    ]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


def images_to_tensor(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, 3) uint8 images -> (N, 3, H, W) float32 tensor in [-1, 1]."""
    if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
        raise ValueError(f"images must be (N, H, W, 3) uint8, got shape {images.shape} dtype {images.dtype}")
    tensor = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float()
    return tensor / 127.5 - 1.0

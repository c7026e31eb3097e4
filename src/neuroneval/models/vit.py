"""A tiny Vision Transformer (timm's ``VisionTransformer`` with a small config) for the embedded world.

It stands in for the paper's ViT-B-16 (000 App. F, settings 1–4): same architecture family, same layer names
(``blocks.<i>``, ``norm``, ``head``), sized to train on two CPU cores in about a minute.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from timm.models.vision_transformer import VisionTransformer

DEFAULT_VIT_CONFIG: Mapping[str, Any] = {
    "img_size": 32,
    "patch_size": 8,
    "embed_dim": 64,
    "depth": 3,
    "num_heads": 4,
    "mlp_ratio": 2.0,
}


def build_tiny_vit(n_classes: int, **overrides: Any) -> VisionTransformer:
    """``VisionTransformer(**DEFAULT_VIT_CONFIG | overrides, num_classes=n_classes)``."""
    config = {**DEFAULT_VIT_CONFIG, **overrides}
    return VisionTransformer(num_classes=n_classes, **config)

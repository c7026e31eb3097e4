"""Unpooled (spatial) outputs of a world classifier's layer, for the spatial explanation methods (paper 001 App. B.2).

Network Dissection and the compositional methods compare each unit's activation *map* with the concepts' masks;
the activation tables (:mod:`neuroneval.activations.record`) hold the pooled outputs. :func:`classifier_spatial_maps`
records the maps with a forward hook and also pools them as the tables do, so the caller can check that the maps
belong to the setting's units.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def classifier_spatial_maps(checkpoint: str | Path, images: np.ndarray, layer: str, batch_size: int,
                            pooling: str = "mean") -> tuple[np.ndarray, np.ndarray]:
    """Module ``layer`` of a world classifier on ``images``: its unpooled outputs as (N, C, h, w) float32 maps
    (a CNN's channel maps; a ViT's patch tokens on the patch grid, :func:`~neuroneval.activations.extract.
    spatial_grid`) and the outputs pooled as the activation tables pool them (N, C) (a ViT: class token
    included), to check the maps against the setting's table."""
    import torch

    from neuroneval.activations.extract import pool, spatial_grid
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor

    model, _ = load_checkpoint(checkpoint)
    modules = dict(model.named_modules())
    if layer not in modules or not layer:
        raise ValueError(f"explain spatial layer {layer!r} is not a module of {checkpoint}")
    maps: list[np.ndarray] = []
    pooled: list[np.ndarray] = []
    prefix = int(getattr(model, "num_prefix_tokens", 0))

    def record(_module: Any, _inputs: Any, output: Any) -> None:
        maps.append(spatial_grid(output.float().cpu().numpy(), prefix))
        pooled.append(pool(output.float(), pooling).cpu().numpy())

    handle = modules[layer].register_forward_hook(record)
    try:
        with torch.no_grad():
            for start in range(0, len(images), batch_size):
                model(images_to_tensor(images[start : start + batch_size]))
    finally:
        handle.remove()
    return np.concatenate(maps), np.concatenate(pooled)

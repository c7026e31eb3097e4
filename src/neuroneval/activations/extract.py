"""Forward-hook recording of named layers, spatial pooling, and derived output units.

A *layer* is either the name of a submodule (``"block3"``, ``"blocks.2"``; 4-D conv outputs (N, C, H, W) are
pooled over space and 3-D token outputs (N, T, D) over tokens, giving one unit per channel) or one of the
output layers computed from the model's logits:
``"logits"``, ``"softmax"`` (class probabilities; the paper's final-layer neurons).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, get_args

import numpy as np
import pandas as pd
import torch
from torch import nn

from neuroneval.io import ID_COLUMN
from neuroneval.progress import progress_bar

OUTPUT_LAYERS = ("logits", "softmax")
Pooling = Literal["mean", "max"]
POOLINGS: tuple[Pooling, ...] = get_args(Pooling)


def pool(output: torch.Tensor, pooling: str) -> torch.Tensor:
    """(N, C, H, W) -> pooled over H, W; (N, T, D) -> pooled over tokens T; (N, D) unchanged."""
    if output.ndim == 2:
        return output
    dims = (2, 3) if output.ndim == 4 else (1,)
    if output.ndim not in (3, 4):
        raise ValueError(f"cannot pool a {output.ndim}-D layer output of shape {tuple(output.shape)}")
    return output.mean(dim=dims) if pooling == "mean" else output.amax(dim=dims)


def spatial_grid(output: np.ndarray, n_prefix_tokens: int = 0) -> np.ndarray:
    """A layer output as (N, C, h, w) maps: conv maps unchanged; ViT tokens (N, T, D) without their first
    ``n_prefix_tokens`` (class token) reshaped to the patch grid, row-major as timm's patch embedding lays them
    out, h = w = √(T − prefix), channels first (the token dimension D is the unit)."""
    output = np.asarray(output)
    if output.ndim == 4:
        return output
    if output.ndim != 3:
        raise ValueError(f"cannot lay a {output.ndim}-D layer output of shape {output.shape} out as maps")
    patches = output[:, n_prefix_tokens:]
    side = round(patches.shape[1] ** 0.5)
    if side * side != patches.shape[1] or side == 0:
        raise ValueError(f"{patches.shape[1]} patch tokens (after {n_prefix_tokens} prefix tokens) are not a "
                         "square grid")
    return patches.reshape(len(patches), side, side, patches.shape[2]).transpose(0, 3, 1, 2)


@torch.no_grad()
def record_activations(
    model: nn.Module,
    batches: Sequence[torch.Tensor],
    layers: Sequence[str],
    *,
    pooling: str = "mean",
    desc: str = "activations",
    device: str | torch.device | None = None,
) -> dict[str, np.ndarray]:
    """Run ``model`` over ``batches`` and return ``{layer: (n, units) float32}`` for each requested layer.

    Parameters
    ----------
    model
        Any ``nn.Module`` whose forward returns logits; put in eval mode here.
    batches
        Input tensors, in input-id order.
    layers
        Submodule names (see ``model.named_modules()``) and/or entries of :data:`OUTPUT_LAYERS`.
    pooling
        How conv (N, C, H, W) and token (N, T, D) outputs become one value per channel: ``"mean"``/``"max"``.
    device
        Where each batch is moved before the forward pass (the model must already be there); ``None`` leaves
        batches where they are. Recorded values always come back to the CPU.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {sorted(POOLINGS)}, got {pooling!r}")
    modules = dict(model.named_modules())
    hooked = [layer for layer in layers if layer not in OUTPUT_LAYERS]
    unknown = [layer for layer in hooked if layer not in modules or layer == ""]
    if unknown:
        raise ValueError(f"unknown layer(s) {unknown}; available: {sorted(m for m in modules if m)[:20]}")
    captured: dict[str, list[np.ndarray]] = {layer: [] for layer in layers}

    def make_hook(layer: str) -> Callable:
        def hook(_module: nn.Module, _inputs: tuple, output: torch.Tensor) -> None:
            values = pool(output, pooling)
            captured[layer].append(values.float().cpu().numpy())

        return hook

    handles = [modules[layer].register_forward_hook(make_hook(layer)) for layer in hooked]
    model.eval()
    try:
        for batch in progress_bar(batches, desc=desc, unit="batch"):
            logits = model(batch if device is None else batch.to(device))
            if "logits" in captured:
                captured["logits"].append(logits.float().cpu().numpy())
            if "softmax" in captured:
                captured["softmax"].append(torch.softmax(logits.double(), dim=1).float().cpu().numpy())
    finally:
        for handle in handles:
            handle.remove()
    return {layer: np.concatenate(parts).astype(np.float32) for layer, parts in captured.items()}


def superclass_units(
    probabilities: np.ndarray, class_names: Sequence[str], hierarchy: Mapping[str, Sequence[str]]
) -> tuple[np.ndarray, list[str]]:
    """Superclass neurons of 000 App. F: a parent's unit is the sum of its member classes' probabilities.

    Returns the (n, P) matrix and the parent names, in sorted parent order. Children that are not classes
    of the model are an error (the sum would silently miss mass).
    """
    class_position = {name: position for position, name in enumerate(class_names)}
    parents = sorted(hierarchy)
    columns = []
    for parent in parents:
        missing = [child for child in hierarchy[parent] if child not in class_position]
        if missing:
            raise ValueError(f"superclass {parent!r} has children that are not model classes: {missing[:3]}")
        members = [class_position[child] for child in hierarchy[parent]]
        columns.append(probabilities[:, members].astype(np.float64).sum(axis=1))
    return np.stack(columns, axis=1).astype(np.float32), parents


def activation_frame(values: np.ndarray, unit_names: Sequence[str], input_ids: np.ndarray) -> pd.DataFrame:
    """Assemble the activation-table frame: ``input_id`` then one column per unit."""
    if values.shape != (len(input_ids), len(unit_names)):
        raise ValueError(
            f"values shape {values.shape} does not match {len(input_ids)} inputs x {len(unit_names)} units"
        )
    columns = {name: values[:, position] for position, name in enumerate(unit_names)}
    return pd.DataFrame({ID_COLUMN: np.asarray(input_ids, dtype=np.int64), **columns})

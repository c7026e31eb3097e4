"""Activations of a world classifier's units on any images (synthetic sets), as the activation tables record them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def classifier_units(checkpoint: str | Path, images: np.ndarray, *, layer: str, hierarchy: Mapping[str, Sequence[str]],
                     batch_size: int = 512, pooling: str = "mean") -> tuple[np.ndarray, list[str]]:
    """(N, K) float32 activations of ``layer`` of the classifier at ``checkpoint`` and the unit names.

    Unit names and values follow ``vision_classifier_activations`` (the workflow's activation tables):
    ``softmax``/``logits`` units ``"0".."C-1"``, ``superclass`` units named by parent (sum of member
    probabilities), ``concepts`` units named by bottleneck concept, any other module pooled per channel.
    """
    from neuroneval.activations import record_activations, superclass_units
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor

    model, card = load_checkpoint(checkpoint)
    batches = [images_to_tensor(images[start : start + batch_size]) for start in range(0, len(images), batch_size)]
    recorded = {"superclass": "softmax", "concepts": "concept_probabilities"}.get(layer, layer)
    values = record_activations(model, batches, [recorded], pooling=pooling, desc=f"cosy {layer}")[recorded]
    if layer == "superclass":
        return superclass_units(values, card["class_names"], hierarchy)
    if layer == "concepts":
        return values, list(card["concept_names"])
    return values, [str(k) for k in range(values.shape[1])]

"""Linear probes: one logistic unit per concept on frozen features (paper 000 App. F, setting 6/8).

The paper trains a linear probe on CLIP ViT-B-32 image embeddings to detect the 112 CUB concepts; each probe
output is a "neuron" whose known concept is the one it was trained on.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from neuroneval.models.training import fit


def train_linear_probe(
    features: np.ndarray,
    targets: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    weight_decay: float,
    seed: int,
) -> nn.Linear:
    """Fit ``Linear(d, M)`` with per-concept binary cross-entropy (independent logistic regressions)."""
    if features.ndim != 2 or targets.ndim != 2 or len(features) != len(targets):
        raise ValueError(f"features (N, d) and targets (N, M) must align, got {features.shape} and {targets.shape}")
    inputs = torch.from_numpy(features.astype(np.float32))
    labels = torch.from_numpy(targets.astype(np.float32))
    torch.manual_seed(seed)
    probe = nn.Linear(features.shape[1], targets.shape[1])
    loss_fn = nn.BCEWithLogitsLoss()

    def batch_loss(batch: np.ndarray) -> torch.Tensor:
        return loss_fn(probe(inputs[batch]), labels[batch])

    fit(probe, len(features), batch_loss, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
        weight_decay=weight_decay, seed=seed, desc="train linear probe")
    return probe


@torch.no_grad()
def probe_probabilities(probe: nn.Linear, features: np.ndarray) -> np.ndarray:
    """σ(W·x + b) for every row of ``features``: (N, M) float32."""
    return torch.sigmoid(probe(torch.from_numpy(features.astype(np.float32)))).numpy().astype(np.float32)

"""Linear probes: one logistic unit per concept on frozen features (paper 000 App. F, setting 6/8).

The paper trains a linear probe on CLIP ViT-B-32 image embeddings to detect the 112 CUB concepts; each probe
output is a "neuron" whose known concept is the one it was trained on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from neuroneval import io
from neuroneval.concepts.threshold import concept_positive
from neuroneval.models.training import TrainingOptions, fit

#: Default share of the probe's training inputs held out (the last ones) to report its concept accuracy.
HOLDOUT_FRACTION = 0.1


@dataclass(frozen=True)
class ProbeTraining(TrainingOptions):
    """The ``training:`` block of a probe in params.yaml: AdamW on per-concept binary cross-entropy, with the
    fields and checks of :class:`~neuroneval.models.training.TrainingOptions` and a probe's defaults (10 epochs
    of 256 inputs at peak learning rate 0.01)."""

    epochs: int = 10
    batch_size: int = 256
    learning_rate: float = 0.01


@dataclass(frozen=True)
class HeldOutProbe:
    """A probe trained on the first inputs and its concept accuracy on the last ``holdout_inputs`` ones
    (threshold 0.5), next to the accuracy of always predicting each concept's majority training value."""

    probe: nn.Linear
    train_inputs: int
    holdout_inputs: int
    holdout_accuracy: float
    chance_accuracy: float

    def card(self) -> dict[str, Any]:
        """The figures of the model card (rounded to 6 decimals)."""
        return {"train_inputs": self.train_inputs, "holdout_inputs": self.holdout_inputs,
                "holdout_accuracy": round(self.holdout_accuracy, 6), "chance_accuracy": round(self.chance_accuracy, 6)}


def train_linear_probe(
    features: np.ndarray,
    targets: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    weight_decay: float,
    seed: int,
    desc: str = "train linear probe",
) -> nn.Linear:
    """Fit ``Linear(d, M)`` with per-concept binary cross-entropy (independent logistic regressions); ``desc`` names
    the training in its progress bar and errors."""
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
        weight_decay=weight_decay, seed=seed, desc=desc)
    return probe


@torch.no_grad()
def probe_probabilities(probe: nn.Linear, features: np.ndarray) -> np.ndarray:
    """σ(W·x + b) for every row of ``features``: (N, M) float32."""
    return torch.sigmoid(probe(torch.from_numpy(features.astype(np.float32)))).numpy().astype(np.float32)


def train_probe_with_holdout(features: np.ndarray, targets: np.ndarray, training: ProbeTraining, *,
                             holdout_fraction: float = HOLDOUT_FRACTION, source: str = "probe") -> HeldOutProbe:
    """Train :func:`train_linear_probe` on all but the last ``max(1, round(holdout_fraction·N))`` inputs and
    measure it on those: accuracy = mean over held-out inputs and concepts of 1[σ(w_t·x + b_t) ≥ 0.5] = 1[c_t ≥ 0.5];
    chance = the same for the constant prediction 1[mean of c_t over training inputs ≥ 0.5].

    ``ValueError`` naming ``source`` when nothing is left to train on.
    """
    if not 0 < holdout_fraction < 1:
        raise ValueError(f"{source}: holdout_fraction must lie in (0, 1), got {holdout_fraction!r}")
    holdout = max(1, round(float(holdout_fraction) * len(features)))
    n_train = len(features) - holdout
    if n_train < 1:
        raise ValueError(f"{source}: {len(features)} inputs with {holdout} held out leave none to train the probe")
    probe = train_linear_probe(features[:n_train], targets[:n_train], epochs=training.epochs,
                               batch_size=training.batch_size, learning_rate=training.learning_rate,
                               weight_decay=training.weight_decay, seed=training.seed, desc=f"train {source}")
    held_out = concept_positive(targets[n_train:])
    predicted = concept_positive(probe_probabilities(probe, features[n_train:]))
    majority = concept_positive(targets[:n_train].mean(axis=0))
    return HeldOutProbe(probe, n_train, holdout, float(np.mean(predicted == held_out)),
                        float(np.mean(majority[None, :] == held_out)))


def save_probe(path: str | os.PathLike, probe: nn.Linear, concept_names: list[str]) -> None:
    """Write the probe's weights and concept names atomically (``torch.save``)."""
    io.write_torch(path, {"state_dict": probe.state_dict(), "concept_names": list(concept_names),
                          "in_features": probe.in_features})


def load_probe(path: str | os.PathLike) -> tuple[nn.Linear, list[str]]:
    """The probe written by :func:`save_probe` and its concept names (one output per concept, in order)."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    concept_names = list(payload["concept_names"])
    probe = nn.Linear(payload["in_features"], len(concept_names))
    probe.load_state_dict(payload["state_dict"])
    return probe, concept_names

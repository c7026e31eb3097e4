"""A tiny concept bottleneck model (CBM): image -> sigmoid concept units -> linear class head.

It stands in for the CUB CBM of paper 000 (App. F, setting 5/7): every bottleneck unit is trained to detect one
named concept, so its known concept is that name. Jointly trained (Koh et al. 2020's "joint" CBM):
``loss = CE(class) + concept_weight · BCE(concepts)``. The bottleneck's probabilities are the module
``concept_probabilities`` (a ``Sigmoid``), which is the layer the workflow records.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from neuroneval.models.cnn import CNNConfig, TinyCNN


@dataclass(frozen=True)
class CBMConfig:
    """Backbone width, number of bottleneck concepts and classes."""

    n_classes: int
    n_concepts: int
    width: int = 32
    image_size: int = 32


class ConceptBottleneck(nn.Module):
    """TinyCNN features -> ``concepts`` (linear) -> ``concept_probabilities`` (sigmoid) -> ``fc`` (classes)."""

    def __init__(self, config: CBMConfig) -> None:
        super().__init__()
        self.config = config
        backbone = TinyCNN(CNNConfig(n_classes=1, width=config.width, image_size=config.image_size))
        self.features = nn.Sequential(backbone.block1, backbone.block2, backbone.block3, backbone.pool, nn.Flatten())
        self.concepts = nn.Linear(4 * config.width, config.n_concepts)
        self.concept_probabilities = nn.Sigmoid()
        self.fc = nn.Linear(config.n_concepts, config.n_classes)

    def forward_with_concepts(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(class logits, concept logits)."""
        concept_logits = self.concepts(self.features(images))
        return self.fc(self.concept_probabilities(concept_logits)), concept_logits

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.forward_with_concepts(images)[0]

"""Training, prediction and checkpoints for the image classifiers trained in the DAG (TinyCNN, tiny ViT, CBM).

A checkpoint is ``{"architecture", "config", "state_dict"}`` (torch.save) plus a JSON card beside it with the
config, the class names and the training report; :func:`build_classifier` rebuilds the module from the first
two, so loading never depends on pickled classes.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from neuroneval.concepts.threshold import concept_positive
from neuroneval.io import write_json, write_torch
from neuroneval.models.cbm import CBMConfig, ConceptBottleneck
from neuroneval.models.cnn import CNNConfig, TinyCNN, images_to_tensor
from neuroneval.models.training import TrainingOptions, fit
from neuroneval.models.vit import build_tiny_vit
from neuroneval.options import check_fraction, check_range

ARCHITECTURES = ("tiny_cnn", "tiny_vit", "tiny_cbm")


@dataclasses.dataclass(frozen=True)
class ClassifierTraining(TrainingOptions):
    """The ``training:`` block of a classifier in ``models.vision`` (the schema's ``$defs/training``):
    :class:`~neuroneval.models.training.TrainingOptions`, the last ``holdout_fraction`` of the images held out
    for the reported accuracy, and ``concept_weight``, the weight of a concept bottleneck's concept loss."""

    holdout_fraction: float = 0.1
    concept_weight: float = 1.0

    def validate(self) -> None:
        super().validate()
        check_fraction(self, "holdout_fraction", high_open=True)
        check_range(self, "concept_weight", 0)


def build_classifier(architecture: str, config: Mapping[str, Any]) -> nn.Module:
    """Instantiate an architecture from its config (``n_classes`` plus architecture-specific keys)."""
    settings = dict(config)
    if architecture == "tiny_cnn":
        return TinyCNN(CNNConfig(**settings))
    if architecture == "tiny_vit":
        return build_tiny_vit(settings.pop("n_classes"), **settings)
    if architecture == "tiny_cbm":
        return ConceptBottleneck(CBMConfig(**settings))
    raise ValueError(f"unknown architecture {architecture!r}; expected one of {ARCHITECTURES}")


def train_classifier(
    architecture: str,
    config: Mapping[str, Any],
    images: np.ndarray,
    targets: np.ndarray,
    training: ClassifierTraining,
    *,
    concept_targets: np.ndarray | None = None,
    desc: str | None = None,
) -> tuple[nn.Module, dict[str, float]]:
    """Train a classifier with cross-entropy (:func:`~neuroneval.models.training.fit`); return model and report.

    The last ``training.holdout_fraction`` of the (i.i.d.) images is held out; the report gives its accuracy next
    to the chance level ``max_c P(c)`` of the training targets. A ``tiny_cbm`` also needs ``concept_targets``
    (N, M) in {0, 1}; its loss adds ``training.concept_weight`` × the concepts' binary cross-entropy and the report
    their holdout accuracy. ``desc`` names the training in its progress bar and errors (default: the architecture).
    """
    if len(images) != len(targets):
        raise ValueError(f"images ({len(images)}) and targets ({len(targets)}) differ in length")
    n_holdout = max(1, round(training.holdout_fraction * len(images)))
    train_x, holdout_x = images[:-n_holdout], images[-n_holdout:]
    train_y = torch.from_numpy(targets[:-n_holdout].astype(np.int64))
    torch.manual_seed(training.seed)
    model = build_classifier(architecture, config)
    loss_fn = nn.CrossEntropyLoss()
    is_cbm = isinstance(model, ConceptBottleneck)
    if is_cbm and (concept_targets is None or concept_targets.shape != (len(images), model.config.n_concepts)):
        raise ValueError(f"a concept bottleneck needs concept_targets of shape {(len(images), config['n_concepts'])}")
    concept_y = torch.from_numpy(concept_targets[:-n_holdout].astype(np.float32)) if is_cbm else None
    concept_loss_fn = nn.BCEWithLogitsLoss()

    def batch_loss(batch: np.ndarray) -> torch.Tensor:
        inputs = images_to_tensor(train_x[batch])
        if not is_cbm:
            return loss_fn(model(inputs), train_y[batch])
        class_logits, concept_logits = model.forward_with_concepts(inputs)
        return loss_fn(class_logits, train_y[batch]) + training.concept_weight * concept_loss_fn(concept_logits,
                                                                                                concept_y[batch])

    started = time.perf_counter()
    last_loss = fit(model, len(train_x), batch_loss, epochs=training.epochs, batch_size=training.batch_size,
                    learning_rate=training.learning_rate, weight_decay=training.weight_decay, seed=training.seed,
                    desc=desc or f"train {architecture}")
    predictions = predict_classes(model, holdout_x, batch_size=512)
    class_counts = np.bincount(targets[:-n_holdout], minlength=int(config["n_classes"]))
    report = {
        "holdout_accuracy": float(np.mean(predictions == targets[-n_holdout:])),
        "chance_accuracy": float(class_counts.max() / class_counts.sum()),
        "final_train_loss": last_loss,
        "train_images": len(train_x),
        "holdout_images": n_holdout,
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    if is_cbm:
        with torch.no_grad():
            concept_logits = model.forward_with_concepts(images_to_tensor(holdout_x))[1].numpy()
        holdout_concepts = concept_positive(concept_targets[-n_holdout:])
        report["holdout_concept_accuracy"] = float(np.mean((concept_logits > 0) == holdout_concepts))
    return model, report


@torch.no_grad()
def predict_classes(model: nn.Module, images: np.ndarray, *, batch_size: int) -> np.ndarray:
    """Arg-max class of each image."""
    model.eval()
    outputs = [model(images_to_tensor(images[start : start + batch_size])).argmax(1).numpy()
               for start in range(0, len(images), batch_size)]
    return np.concatenate(outputs)


def save_checkpoint(model: nn.Module, path: str | Path, *, architecture: str, config: Mapping[str, Any],
                    report: Mapping[str, Any], class_names: list[str]) -> None:
    """Write weights + architecture (``path``) and a JSON card beside it (config, class names, report)."""
    path = Path(path)
    write_torch(path, {"architecture": architecture, "config": dict(config), "state_dict": model.state_dict()})
    card = {"architecture": architecture, "config": dict(config), "class_names": class_names, **report}
    write_json(path.with_suffix(".json"), card)


def load_checkpoint(path: str | Path) -> tuple[nn.Module, dict]:
    """Load a classifier saved by :func:`save_checkpoint` (in eval mode) and its JSON card."""
    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    model = build_classifier(payload["architecture"], payload["config"])
    model.load_state_dict(payload["state_dict"])
    model.eval()
    card = json.loads(path.with_suffix(".json").read_text())
    return model, card

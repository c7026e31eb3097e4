"""Classifier training (TinyCNN, tiny ViT): learns, is deterministic, round-trips through its checkpoint."""

from pathlib import Path

import numpy as np
import pytest
import torch

from neuroneval.models.classifier import (
    ClassifierTraining,
    load_checkpoint,
    predict_classes,
    save_checkpoint,
    train_classifier,
)
from neuroneval.models.cnn import images_to_tensor


def colour_task(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Images filled with one of three noisy colours; the class is the colour."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 3, size=n)
    palette = np.array([[200, 30, 30], [30, 200, 30], [30, 30, 200]])
    images = palette[targets][:, None, None, :] + rng.normal(0, 25, size=(n, 16, 16, 3))
    return np.clip(images, 0, 255).astype(np.uint8), targets


#: One quick epoch, for the argument checks.
QUICK = ClassifierTraining(epochs=1, batch_size=2, learning_rate=0.1, holdout_fraction=0.5, seed=0)
CONFIGS = {"tiny_cnn": {"n_classes": 3, "width": 4, "image_size": 16},
           "tiny_cbm": {"n_classes": 3, "n_concepts": 3, "width": 4, "image_size": 16},
           "tiny_vit": {"n_classes": 3, "img_size": 16, "patch_size": 8, "embed_dim": 16, "depth": 1, "num_heads": 2}}


def train(seed: int = 0, architecture: str = "tiny_cnn"):
    images, targets = colour_task(300)
    concepts = np.eye(3)[targets] if architecture == "tiny_cbm" else None  # one concept per colour
    epochs = 8 if architecture == "tiny_cbm" else 3  # the sigmoid bottleneck learns more slowly
    training = ClassifierTraining(epochs=epochs, batch_size=32, learning_rate=0.01, holdout_fraction=0.2, seed=seed)
    return train_classifier(architecture, CONFIGS[architecture], images, targets, training, concept_targets=concepts)


@pytest.mark.parametrize("architecture", sorted(CONFIGS))
def test_learns_a_learnable_task_and_reports_chance(architecture: str) -> None:
    _, report = train(architecture=architecture)
    assert report["holdout_accuracy"] >= 0.9
    if architecture == "tiny_cbm":
        assert report["holdout_concept_accuracy"] >= 0.9
    assert report["chance_accuracy"] == pytest.approx(np.bincount(colour_task(300)[1][:240]).max() / 240)


def test_training_is_deterministic() -> None:
    first, _ = train(seed=1)
    second, _ = train(seed=1)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("architecture", sorted(CONFIGS))
def test_checkpoint_round_trip(tmp_path: Path, architecture: str) -> None:
    model, report = train(architecture=architecture)
    save_checkpoint(model, tmp_path / "cnn.pt", architecture=architecture, config=CONFIGS[architecture],
                    report=report, class_names=["red", "green", "blue"])
    loaded, card = load_checkpoint(tmp_path / "cnn.pt")
    images, _ = colour_task(50, seed=5)
    np.testing.assert_array_equal(predict_classes(model, images, batch_size=16),
                                  predict_classes(loaded, images, batch_size=16))
    assert card["class_names"] == ["red", "green", "blue"] and card["holdout_accuracy"] == report["holdout_accuracy"]


def test_image_validation() -> None:
    with pytest.raises(ValueError, match=r"\(N, H, W, 3\) uint8"):
        images_to_tensor(np.zeros((2, 8, 8), dtype=np.uint8))
    with pytest.raises(ValueError, match="differ in length"):
        train_classifier("tiny_cnn", {"n_classes": 2}, np.zeros((4, 8, 8, 3), np.uint8), np.zeros(3, int), QUICK)
    with pytest.raises(ValueError, match="needs concept_targets of shape"):
        train_classifier("tiny_cbm", CONFIGS["tiny_cbm"], *colour_task(10), QUICK)
    with pytest.raises(ValueError, match="unknown architecture 'resnet'"):
        train_classifier("resnet", {"n_classes": 2}, np.zeros((4, 8, 8, 3), np.uint8), np.zeros(4, int), QUICK)

"""A model no better than its baseline, or with a non-finite loss, fails its training job with the figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.dummy import DummyClassifier
from sklearn.metrics import accuracy_score

from neuroneval.models.classifier import ClassifierTraining, predict_classes, train_classifier
from neuroneval.models.quality import ACCURACY, PERPLEXITY, check_beats_baseline
from neuroneval.models.training import fit
from neuroneval.pipeline.models_steps import train_vision_classifier
from neuroneval.pipeline.worlds_steps import digits_world
from neuroneval.worlds.digits import DEFAULT_HIERARCHY
from tests.external.conftest import run_step

CNN = {"n_classes": 8, "width": 4, "image_size": 8}
VIT = {"n_classes": 8, "img_size": 8, "patch_size": 4, "embed_dim": 16, "depth": 1, "num_heads": 2}


def colour_task(n: int = 400, n_classes: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """8×8 images filled with one of ``n_classes`` random colours plus noise; the class is the colour."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n_classes, size=n)
    palette = rng.integers(0, 256, size=(n_classes, 3))
    images = palette[targets][:, None, None, :] + rng.normal(0, 10, size=(n, 8, 8, 3))
    return np.clip(images, 0, 255).astype(np.uint8), targets


def training(learning_rate: float) -> ClassifierTraining:
    return ClassifierTraining(epochs=3, batch_size=32, learning_rate=learning_rate, holdout_fraction=0.25, seed=0)


def test_a_diverged_classifier_is_not_above_chance_and_fails_the_gate() -> None:
    images, targets = colour_task()
    model, report = train_classifier("tiny_cnn", CNN, images, targets, training(1e6))
    # the card's figures against sklearn: accuracy of the held-out predictions, and the majority-class dummy
    held_out = targets[300:]
    accuracy = accuracy_score(held_out, predict_classes(model, images[300:], batch_size=64))
    chance = DummyClassifier(strategy="most_frequent").fit(images[:300, 0, 0], targets[:300]).score(
        images[:300, 0, 0], targets[:300])
    assert report["holdout_accuracy"] == pytest.approx(accuracy) and report["chance_accuracy"] == pytest.approx(chance)
    assert math.isfinite(report["final_train_loss"]) and report["final_train_loss"] > 1e3  # diverged, not NaN
    assert accuracy <= chance
    with pytest.raises(ValueError) as error:
        check_beats_baseline("data/models/tiny", ACCURACY, report["holdout_accuracy"], report["chance_accuracy"],
                             loss=report["final_train_loss"])
    message = str(error.value)
    assert message.startswith(f"data/models/tiny: held-out accuracy {accuracy:.3g} is not above chance {chance:.3g} "
                              f"(loss {report['final_train_loss']:.3g})")
    assert "training.learning_rate" in message


def test_a_sensible_learning_rate_passes_the_gate() -> None:
    images, targets = colour_task()
    _, report = train_classifier("tiny_cnn", CNN, images, targets, training(0.01))
    assert report["holdout_accuracy"] > report["chance_accuracy"]
    check_beats_baseline("data/models/tiny", ACCURACY, report["holdout_accuracy"], report["chance_accuracy"],
                         loss=report["final_train_loss"])


def test_a_non_finite_loss_fails_at_once_with_its_epoch() -> None:
    weight = torch.nn.Linear(1, 1)
    calls = []

    def batch_loss(batch: np.ndarray) -> torch.Tensor:  # finite for 4 steps, then infinite
        calls.append(len(batch))
        return weight.weight.sum() * 0 + (math.inf if len(calls) == 5 else 1.0)

    # 4 examples in batches of 2: 2 steps per epoch, so step 5 is the first of epoch 3
    with pytest.raises(FloatingPointError, match=r"^train probe: training loss inf at epoch 3 of 4 \(step 5 of 8\)"):
        fit(weight, 4, batch_loss, epochs=4, batch_size=2, learning_rate=0.1, seed=0, desc="train probe")
    assert len(calls) == 5


def test_a_vit_whose_loss_becomes_nan_fails_during_training() -> None:
    images, targets = colour_task()
    with pytest.raises(FloatingPointError, match=r"^train data/models/vit: training loss nan at epoch \d of 3"):
        train_classifier("tiny_vit", VIT, images, targets, training(1e6), desc="train data/models/vit")


@pytest.mark.parametrize(("quality", "baseline", "passes"), [(40.0, 50.0, True), (50.0, 50.0, False),
                                                              (60.0, 50.0, False), (math.nan, 50.0, False)])
def test_perplexity_must_be_below_the_unigram_baseline(quality: float, baseline: float, passes: bool) -> None:
    if passes:
        check_beats_baseline("data/models/lm", PERPLEXITY, quality, baseline, loss=3.0)
        return
    with pytest.raises(ValueError, match=rf"^data/models/lm: probe perplexity {quality:.4g} is not below the unigram "
                                         rf"perplexity {baseline:.4g} \(loss 3\)"):
        check_beats_baseline("data/models/lm", PERPLEXITY, quality, baseline, loss=3.0)


@pytest.mark.parametrize(("quality", "baseline", "passes"), [(0.2, 0.1, True), (0.1, 0.1, False), (0.05, 0.1, False)])
def test_accuracy_must_be_above_chance(quality: float, baseline: float, passes: bool) -> None:
    if passes:
        check_beats_baseline("m", ACCURACY, quality, baseline)
        return
    with pytest.raises(ValueError, match=rf"^m: held-out accuracy {quality:.3g} is not above chance {baseline:.3g};"):
        check_beats_baseline("m", ACCURACY, quality, baseline)


def test_the_training_step_fails_without_writing_the_model(tmp_path: Path) -> None:
    """``train_vision_classifier`` on the digits world with ``learning_rate: 1e6``: the job fails naming the model
    and the figures, and writes neither checkpoint nor card."""
    world = tmp_path / "worlds" / "train"
    run_step(digits_world, output={"world": world},
             params={"digits": {"seed": 0, "probe_fraction": 0.5, "hierarchy": DEFAULT_HIERARCHY}},
             wildcards={"split": "train"})
    model = tmp_path / "models" / "digits_cnn.pt"
    spec = {"architecture": "tiny_cnn", "config": {"width": 4},
            "training": {"epochs": 2, "batch_size": 64, "learning_rate": 1e6, "weight_decay": 0.0,
                         "holdout_fraction": 0.2, "seed": 0}}
    with pytest.raises((ValueError, FloatingPointError)) as error:
        run_step(train_vision_classifier, input={"world": world},
                 output={"checkpoint": model, "card": model.with_suffix(".json")}, params={"spec": spec})
    assert str(error.value).startswith(f"train {model.with_suffix('')}: training loss") or str(
        error.value).startswith(f"{model.with_suffix('')}: held-out accuracy")
    assert not model.exists() and not model.with_suffix(".json").exists()
    spec["training"]["learning_rate"] = 0.01
    run_step(train_vision_classifier, input={"world": world},
             output={"checkpoint": model, "card": model.with_suffix(".json")}, params={"spec": spec})
    card = json.loads(model.with_suffix(".json").read_text())
    assert card["holdout_accuracy"] > card["chance_accuracy"]

"""Tiny CLIP: tokenizer conventions, training aligns matching image–caption pairs, save/load round trip."""

from pathlib import Path

import numpy as np
import pytest
import torch

from neuroneval.models.clip import CaptionTokenizer, embed_images, embed_texts, load_clip, save_clip, train_clip
from neuroneval.models.training import TrainingOptions

CONFIG = {"embed_dim": 16, "logit_bias": -10.0,
          "vision": {"image_size": 16, "layers": 1, "width": 16, "patch_size": 8, "head_width": 8},
          "text": {"context_length": 6, "width": 16, "heads": 2, "layers": 1}}
COLOURS = {"red": [220, 30, 30], "green": [30, 220, 30], "blue": [30, 30, 220]}


def colour_pairs(n: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    names = rng.choice(sorted(COLOURS), size=n)
    images = np.array([COLOURS[name] for name in names])[:, None, None, :] + rng.normal(0, 20, (n, 16, 16, 3))
    return np.clip(images, 0, 255).astype(np.uint8), [f"a {name} square" for name in names]


def test_tokenizer_ends_every_text_with_the_largest_id() -> None:
    tokenizer = CaptionTokenizer.from_texts(["a red square", "a blue dot"], context_length=4)
    tokens = tokenizer(["a red square", "a purple thing here and more"])
    assert tokenizer.words == ["a", "blue", "dot", "red", "square"]
    assert tokens.tolist() == [[2, 5, 6, 7], [2, 1, 1, 7]]
    assert tokenizer.vocab_size == 8 and int(tokens.max()) == tokenizer.end_id


def test_training_matches_images_to_their_captions(tmp_path: Path) -> None:
    images, captions = colour_pairs(256)
    model, tokenizer, report = train_clip(images, captions, CONFIG, TrainingOptions(epochs=8, batch_size=64,
                                                                                  learning_rate=0.01, seed=0))
    test_images, test_captions = colour_pairs(60, seed=1)
    prompts = [f"a {name} square" for name in sorted(COLOURS)]
    similarity = embed_images(model, test_images) @ embed_texts(model, tokenizer, prompts).T
    predicted = np.array(prompts)[similarity.argmax(1)]
    assert np.mean(predicted == np.array(test_captions)) > 0.9
    save_clip(model, tokenizer, tmp_path / "clip.pt", config=CONFIG, report=report)
    loaded, loaded_tokenizer, card = load_clip(tmp_path / "clip.pt")
    assert card["architecture"] == "tiny_clip"
    torch.testing.assert_close(torch.from_numpy(embed_images(loaded, test_images)),
                               torch.from_numpy(embed_images(model, test_images)))
    assert loaded_tokenizer.words == tokenizer.words


def test_linear_probe_recovers_a_linear_concept() -> None:
    from sklearn.metrics import roc_auc_score

    from neuroneval.models.probe import probe_probabilities, train_linear_probe

    rng = np.random.default_rng(0)
    features = rng.normal(size=(600, 5)).astype(np.float32)
    targets = np.column_stack([features[:, 0] > 0.5, features[:, 1] + features[:, 2] < 0]).astype(np.float32)
    probe = train_linear_probe(features[:500], targets[:500], epochs=20, batch_size=50, learning_rate=0.05,
                               weight_decay=0.0, seed=0)
    probabilities = probe_probabilities(probe, features[500:])
    assert probabilities.shape == (100, 2) and ((probabilities > 0) & (probabilities < 1)).all()
    for concept in range(2):
        assert roc_auc_score(targets[500:, concept], probabilities[:, concept]) > 0.97


def test_probe_with_holdout_reports_accuracy_on_the_last_inputs() -> None:
    from neuroneval.models.probe import ProbeTraining, probe_probabilities, train_probe_with_holdout

    rng = np.random.default_rng(1)
    features = rng.normal(size=(200, 4)).astype(np.float32)
    targets = np.column_stack([features[:, 0] > 0, features[:, 3] > 1.0]).astype(np.float32)
    training = ProbeTraining.from_params({"epochs": 5, "batch_size": 32, "learning_rate": 0.05, "weight_decay": 0.0,
                                          "seed": 0})
    result = train_probe_with_holdout(features, targets, training, holdout_fraction=0.25)
    assert (result.train_inputs, result.holdout_inputs) == (150, 50)
    # oracle: the held-out accuracy and the majority baseline, elementwise by hand
    predicted = probe_probabilities(result.probe, features[150:]) >= 0.5
    assert result.holdout_accuracy == pytest.approx(float(np.mean(predicted == (targets[150:] >= 0.5))))
    majority = targets[:150].mean(axis=0) >= 0.5
    assert result.chance_accuracy == pytest.approx(float(np.mean(majority[None, :] == (targets[150:] >= 0.5))))
    assert result.card()["holdout_accuracy"] == round(result.holdout_accuracy, 6)
    with pytest.raises(ValueError, match="my probe: 1 inputs"):
        train_probe_with_holdout(features[:1], targets[:1], training, source="my probe")
    with pytest.raises(ValueError, match=r"ProbeTraining\.epochs"):
        ProbeTraining.from_params({"epochs": 0})


def test_saved_probe_loads_with_its_concepts(tmp_path) -> None:
    from neuroneval.models.probe import load_probe, probe_probabilities, save_probe, train_linear_probe

    features = np.random.default_rng(2).normal(size=(40, 3)).astype(np.float32)
    probe = train_linear_probe(features, (features[:, :2] > 0).astype(np.float32), epochs=1, batch_size=8,
                               learning_rate=0.01, weight_decay=0.0, seed=0)
    save_probe(tmp_path / "probe.pt", probe, ["a", "b"])
    loaded, names = load_probe(tmp_path / "probe.pt")
    assert names == ["a", "b"]
    np.testing.assert_array_equal(probe_probabilities(loaded, features), probe_probabilities(probe, features))

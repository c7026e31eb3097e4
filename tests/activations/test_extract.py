"""Hook recording equals a manual forward pass; superclass units are sums of member-class probabilities."""

import numpy as np
import pytest
import torch

from neuroneval.activations import activation_frame, record_activations, superclass_units
from neuroneval.models.cnn import CNNConfig, TinyCNN


@pytest.fixture
def model_and_batches():
    torch.manual_seed(0)
    model = TinyCNN(CNNConfig(n_classes=5, width=4, image_size=16)).eval()
    batches = [torch.randn(7, 3, 16, 16), torch.randn(3, 3, 16, 16)]
    return model, batches


def test_hooked_layers_match_a_manual_forward(model_and_batches) -> None:
    model, batches = model_and_batches
    recorded = record_activations(model, batches, ["block3", "fc", "softmax", "logits"])
    images = torch.cat(batches)
    with torch.no_grad():
        features = model.block3(model.block2(model.block1(images)))
        logits = model(images)
    np.testing.assert_allclose(recorded["block3"], features.mean(dim=(2, 3)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(recorded["fc"], logits.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(recorded["logits"], logits.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(recorded["softmax"], torch.softmax(logits, 1).numpy(), rtol=1e-5, atol=1e-6)
    max_pooled = record_activations(model, batches, ["block3"], pooling="max")["block3"]
    np.testing.assert_allclose(max_pooled, features.amax(dim=(2, 3)).numpy(), rtol=1e-5, atol=1e-6)


def test_unknown_layer_and_pooling_are_named(model_and_batches) -> None:
    model, batches = model_and_batches
    with pytest.raises(ValueError, match=r"unknown layer\(s\) \['block9'\]"):
        record_activations(model, batches, ["block9"])
    with pytest.raises(ValueError, match="pooling must be one of"):
        record_activations(model, batches, ["block3"], pooling="median")


def test_superclass_units_sum_member_probabilities() -> None:
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(4), size=6).astype(np.float32)
    names = ["class:a", "class:b", "class:c", "class:d"]
    hierarchy = {"parent:y": ["class:c", "class:d", "class:a"], "parent:x": ["class:b"]}
    values, parents = superclass_units(probabilities, names, hierarchy)
    assert parents == ["parent:x", "parent:y"]
    for row in range(6):
        assert values[row, 0] == pytest.approx(probabilities[row, 1])
        assert values[row, 1] == pytest.approx(probabilities[row, [0, 2, 3]].sum())
    with pytest.raises(ValueError, match="not model classes"):
        superclass_units(probabilities, names, {"parent:z": ["class:zz"]})


def test_activation_frame_checks_shape() -> None:
    frame = activation_frame(np.zeros((3, 2), np.float32), ["u0", "u1"], np.array([5, 6, 7]))
    assert frame.columns.tolist() == ["input_id", "u0", "u1"]
    with pytest.raises(ValueError, match="does not match 3 inputs x 3 units"):
        activation_frame(np.zeros((3, 2), np.float32), ["u0", "u1", "u2"], np.array([5, 6, 7]))

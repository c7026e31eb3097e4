"""Concept constructors recover planted directions of synthetic hidden states (cosine > 0.9)."""

import numpy as np
import pytest
import torch

from neuroneval.concepteval import (
    FunctionConcept,
    LinearConcept,
    ProbeOptions,
    ReluConcept,
    SAEOptions,
    activate_all,
    fit_probes,
    kmeans_concepts,
    neuron_concepts,
    pca_concepts,
    random_concepts,
    sae_concepts,
    train_sae,
)

WIDTH = 12


def planted(seed: int = 0, n: int = 3000, k: int = 4):
    """Sparse non-negative codes on k orthonormal directions, plus small noise and a mean offset."""
    rng = np.random.default_rng(seed)
    directions = np.linalg.qr(rng.normal(size=(WIDTH, WIDTH)))[0][:k]
    codes = (rng.random((n, k)) < 0.15) * rng.exponential(1.0, (n, k)) * 3
    return codes @ directions + 0.05 * rng.normal(size=(n, WIDTH)) + 0.5, codes, directions


def cosine(a, b):
    return abs(a @ b) / np.linalg.norm(a) / np.linalg.norm(b)


def test_sae_recovers_planted_features():
    hidden, codes, directions = planted()
    sae = train_sae(hidden, SAEOptions(expansion=2, l1=3e-2, epochs=15, learning_rate=1e-2, seed=0))
    decoder = sae.decoder.T / np.linalg.norm(sae.decoder.T, axis=1, keepdims=True)
    best = np.abs(decoder @ directions.T).argmax(axis=0)
    assert (np.abs(decoder @ directions.T).max(axis=0) > 0.9).all()
    concepts = sae_concepts(sae)
    activations = activate_all(hidden, concepts)
    np.testing.assert_allclose(activations, sae.encode(hidden)[:, [int(c.name.split(":")[1]) for c in concepts]],
                               atol=1e-9)
    for planted_index, feature in enumerate(best):  # the matching feature fires with its planted code
        assert np.corrcoef(sae.encode(hidden)[:, feature], codes[:, planted_index])[0, 1] > 0.9


def test_probe_recovers_the_planted_direction():
    rng = np.random.default_rng(1)
    direction = rng.normal(size=WIDTH)
    direction /= np.linalg.norm(direction)
    labels = rng.random(2000) < 0.3
    hidden = rng.normal(size=(2000, WIDTH)) + 3.0 * labels[:, None] * direction
    concepts, report = fit_probes(hidden, labels[:, None].astype(int), ["planted"], ProbeOptions(c=0.1))
    assert cosine(concepts[0].v, direction) > 0.9 and concepts[0].v @ direction > 0
    assert report.loc[0, "holdout_balanced_accuracy"] > 0.85
    assert concepts[0].name == "probe:planted" and concepts[0].is_affine


def test_pca_and_kmeans_recover_the_dominant_direction():
    rng = np.random.default_rng(2)
    direction = rng.normal(size=WIDTH)
    direction /= np.linalg.norm(direction)
    side = rng.choice([-1.0, 1.0], size=1000)
    hidden = 0.3 * rng.normal(size=(1000, WIDTH)) + 4.0 * side[:, None] * direction + 1.0
    first = pca_concepts(hidden, 2)[0]
    assert cosine(first.v, direction) > 0.9
    np.testing.assert_allclose(first.activate(hidden).mean(), 0.0, atol=1e-9)  # centred: b = −vᵀμ
    clusters = kmeans_concepts(hidden, 2, seed=0)
    assert all(cosine(concept.v, direction) > 0.9 for concept in clusters)


def test_neurons_random_and_activate_all():
    hidden = np.random.default_rng(3).normal(size=(5, 4, WIDTH))
    neurons = neuron_concepts(WIDTH, [0, 7])
    np.testing.assert_array_equal(activate_all(hidden, neurons), hidden[..., [0, 7]])
    center = hidden.reshape(-1, WIDTH).mean(axis=0)
    randoms = random_concepts(WIDTH, 3, seed=0, center=center)
    assert all(np.isclose(np.linalg.norm(c.v), 1.0) for c in randoms)
    np.testing.assert_allclose(activate_all(hidden, randoms).reshape(-1, 3).mean(axis=0), 0.0, atol=1e-9)
    mixed = [LinearConcept(np.ones(WIDTH), 1.0), ReluConcept(-np.ones(WIDTH), 0.0),
             FunctionConcept(lambda h: (h ** 2).sum(-1))]
    together = activate_all(torch.as_tensor(hidden), mixed).numpy()
    one_by_one = np.stack([concept.activate(hidden) for concept in mixed], axis=-1)
    np.testing.assert_allclose(together, one_by_one)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="non-finite"):
        pca_concepts(np.array([[1.0, np.nan], [0.0, 1.0]]), 1)
    with pytest.raises(ValueError, match="labels must have shape"):
        fit_probes(np.ones((4, 2)), np.ones((3, 1)), ["a"])
    with pytest.raises(ValueError, match="only positives"):
        fit_probes(np.random.default_rng(0).normal(size=(6, 2)), np.ones((6, 1)), ["a"])
    with pytest.raises(ValueError, match="unit 9 outside"):
        neuron_concepts(4, [9])
    with pytest.raises(ValueError, match="width 3, v has 4"):
        LinearConcept(np.ones(4)).activate(np.ones((2, 3)))
    with pytest.raises(ValueError, match="unknown option 'l2'"):
        SAEOptions.from_params({"l2": 0.1})
    with pytest.raises(ValueError, match=r"SAEOptions\.epochs"):
        SAEOptions.from_params({"epochs": 0})

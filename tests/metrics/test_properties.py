"""Properties: paper 000's identities (App. A.4), the pet example (Table 2), closed forms (App. D)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neuroneval.metrics import score
from tests.metrics.conftest import quiet_score

SETTINGS = settings(max_examples=40, deadline=None)


def binary_matrices(rows: int, columns: int):
    return arrays(np.float64, (rows, columns), elements=st.sampled_from([0.0, 1.0]))


@SETTINGS
@given(activations=arrays(np.float64, (40, 3), elements=st.floats(-5, 5, width=32)),
       concepts=binary_matrices(40, 4), alpha=st.sampled_from([0.05, 0.1, 0.3, 0.7]))
def test_f1_is_a_monotone_function_of_iou(activations, concepts, alpha) -> None:
    """F1 = 2·IoU / (1 + IoU) (000 Eq. A.16)."""
    iou = quiet_score(score, "iou", activations, concepts, alpha=alpha)
    f1 = quiet_score(score, "f1", activations, concepts, alpha=alpha)
    np.testing.assert_allclose(f1, 2 * iou / (1 + iou), atol=1e-12)


@SETTINGS
@given(activations=arrays(np.float64, (40, 3), elements=st.floats(-5, 5, width=32)),
       concepts=binary_matrices(40, 4), alpha=st.sampled_from([0.05, 0.2, 0.5]))
def test_f1_is_the_harmonic_mean_of_recall_and_precision(activations, concepts, alpha) -> None:
    """000 Eq. E.2: hmean:recall+precision reproduces F1."""
    f1 = quiet_score(score, "f1", activations, concepts, alpha=alpha)
    combined = quiet_score(score, "hmean:recall+precision", activations, concepts, alpha=alpha)
    np.testing.assert_allclose(combined, f1, atol=1e-12)


@SETTINGS
@given(activations=arrays(np.float64, (30, 3), elements=st.floats(-100, 100, width=32)),
       concepts=arrays(np.float64, (30, 3), elements=st.floats(0, 1, width=32)))
def test_correlation_is_cosine_of_centred_vectors(activations, concepts) -> None:
    """000 Eq. A.12 (rows that centre to all-zero are excluded: both metrics define them as 0).

    Centred concepts leave [0, 1], which ``score`` rejects, so their cosine is computed here; the engine's cosine
    equals this formula (tests/metrics/test_oracles.py).
    """
    centred_a = activations - activations.mean(axis=0)
    centred_c = concepts - concepts.mean(axis=0)
    correlation = quiet_score(score, "correlation", activations, concepts)
    norms = np.linalg.norm(centred_a, axis=0)[:, None] * np.linalg.norm(centred_c, axis=0)[None, :]
    cosine = (centred_a.T @ centred_c) / np.where(norms == 0, 1.0, norms)
    constant_a = np.all(activations == activations[0], axis=0)
    constant_c = np.all(concepts == concepts[0], axis=0)
    keep = ~constant_a[:, None] & ~constant_c[None, :]
    np.testing.assert_allclose(correlation[keep], cosine[keep], atol=1e-9)
    assert np.all(correlation[~keep] == 0)


def test_pet_neuron_table_2() -> None:
    """000 Table 2: inputs dog, cat, dog, bear, monkey, flamingo; a neuron firing on pets."""
    neuron = np.array([[1.0], [1.0], [1.0], [0.0], [0.0], [0.0]])
    concepts = np.array([  # dog, cat, pet, animal
        [1, 0, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]], dtype=float)
    recall = score("recall", neuron, concepts, alpha=0.5)[0]
    precision = score("precision", neuron, concepts, alpha=0.5)[0]
    iou = score("iou", neuron, concepts, alpha=0.5)[0]
    np.testing.assert_allclose(recall, [2 / 3, 1 / 3, 1, 1], atol=1e-15)
    np.testing.assert_allclose(precision, [1, 1, 1, 0.5], atol=1e-15)
    np.testing.assert_allclose(iou, [2 / 3, 1 / 3, 1, 0.5], atol=1e-15)
    assert np.round(recall, 2).tolist() == [0.67, 0.33, 1.0, 1.0]
    assert np.round(iou, 2).tolist() == [0.67, 0.33, 1.0, 0.5]


def ideal_neuron_tests(n: int, positives: int, changed: int, rng: np.random.Generator):
    """a = c (first ``positives`` inputs); c⁻ drops exactly ``changed`` positives, c⁺ adds ``changed``."""
    concept = np.zeros(n)
    concept[:positives] = 1.0
    missing = concept.copy()
    missing[rng.choice(positives, size=changed, replace=False)] = 0.0
    extra = concept.copy()
    extra[positives + rng.choice(n - positives, size=changed, replace=False)] = 1.0
    return concept[:, None], np.column_stack([concept, missing, extra])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(20, 3000), gamma=st.floats(0.01, 0.49), p=st.floats(0.05, 1.0), seed=st.integers(0, 99))
def test_closed_forms_of_appendix_d_hold_on_ideal_neurons(n, gamma, p, seed) -> None:
    """Table D.1 (and the AUC/AUPRC/cosine analogues) with exact counts: p of the positives removed/added."""
    positives = max(1, round(gamma * n))
    changed = round(p * positives)
    if changed == 0 or positives + changed > n or changed >= positives:  # c⁻ keeps at least one positive
        return
    gamma, p = positives / n, changed / positives
    neuron, concepts = ideal_neuron_tests(n, positives, changed, np.random.default_rng(seed))
    alpha = positives / n
    expected = {  # metric: (s(a, c), s(a, c⁻), s(a, c⁺))
        "recall": (1, 1 - p, 1),
        "precision": (1, 1, 1 / (1 + p)),
        "f1": (1, (2 - 2 * p) / (2 - p), 2 / (2 + p)),
        "iou": (1, 1 - p, 1 / (1 + p)),
        "accuracy": (1, 1 - p * gamma, 1 - gamma * p),
        "balanced_accuracy": (1, 1 - p / 2, 1 - p * gamma / (2 * (1 - gamma))),
        "inverse_balanced_accuracy": (1, (1 - gamma) / (2 * (1 - gamma) + 2 * p * gamma) + 0.5,
                                      (2 + p) / (2 * (1 + p))),
        "auc": (1, 1 - p / 2, 1 - p * gamma / (2 * (1 - gamma))),
        "auprc": (1, (1 - p) + p * gamma, 1 / (1 + p)),
        "cosine": (1, np.sqrt(1 - p), 1 / np.sqrt(1 + p)),
    }
    for metric, values in expected.items():
        params = {} if metric == "cosine" else {"alpha": alpha}
        got = quiet_score(score, metric, neuron, concepts, **params)[0]
        np.testing.assert_allclose(got, values, atol=1e-12, err_msg=metric)


@pytest.mark.parametrize("gamma", [0.499, 0.1, 0.01, 0.001])
def test_table_d2_score_differences(gamma: float) -> None:
    """Table D.2 (p = 0.5 missing, p = 1 extra): the simple Δs of every binary metric, n = 100,000."""
    n = 100_000
    positives = round(gamma * n)
    gamma = positives / n
    neuron, concepts = ideal_neuron_tests(n, positives, positives // 2, np.random.default_rng(0))
    _, _, extra = ideal_neuron_tests(n, positives, positives, np.random.default_rng(1))[1].T
    concepts[:, 2] = extra
    p_missing = (positives // 2) / positives
    diffs = {
        "recall": (-p_missing, 0.0),
        "precision": (0.0, -0.5),
        "f1": ((2 - 2 * p_missing) / (2 - p_missing) - 1, -1 / 3),
        "iou": (-p_missing, -0.5),
        "accuracy": (-p_missing * gamma, -gamma),
        "balanced_accuracy": (-p_missing / 2, -gamma / (2 * (1 - gamma))),
        "inverse_balanced_accuracy": ((1 - gamma) / (2 * (1 - gamma) + 2 * p_missing * gamma) - 0.5, -0.25),
    }
    for metric, (missing, added) in diffs.items():
        scores = score(metric, neuron, concepts, alpha=gamma)[0]
        np.testing.assert_allclose([scores[1] - scores[0], scores[2] - scores[0]], [missing, added], atol=1e-12,
                                   err_msg=metric)

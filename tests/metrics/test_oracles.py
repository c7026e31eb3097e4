"""Every metric against an independent oracle: scikit-learn, scipy, and the per-pair reference.

Data have ties (rounded values), constant columns, empty and full concepts and heavy imbalance (γ down to
1e-4). Where an oracle is undefined (scipy on constant input, sklearn AUC with one class) the engine's
documented value is checked instead.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from neuroneval.metrics import METRICS, score, score_pairs
from neuroneval.metrics.metric_options import engine_params
from neuroneval.metrics.reference import per_pair
from neuroneval.metrics.topandrandom import sample_indices
from tests.metrics.conftest import make_activations, make_concepts, metric_params, quiet_score

ALPHA = 0.03


def top_alpha(a: np.ndarray, alpha: float) -> np.ndarray:
    k = int(np.ceil(round(alpha * a.size, 9)))
    return a >= np.sort(a)[a.size - k]


SKLEARN_BINARY = {
    "recall": lambda label, pred: skm.recall_score(label, pred, zero_division=0),
    "precision": lambda label, pred: skm.precision_score(label, pred, zero_division=0),
    "f1": lambda label, pred: skm.f1_score(label, pred, zero_division=0),
    "iou": lambda label, pred: skm.jaccard_score(label, pred, zero_division=0),
    "accuracy": skm.accuracy_score,
    "balanced_accuracy": skm.balanced_accuracy_score,
    "inverse_balanced_accuracy": lambda label, pred: skm.balanced_accuracy_score(pred, label),
}


def sklearn_oracle(metric: str, a: np.ndarray, c: np.ndarray, alpha: float) -> float | None:
    """sklearn's value with the neuron as label (simulation framing); None where sklearn is undefined."""
    neuron, concept = top_alpha(a, alpha), c >= 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if metric in SKLEARN_BINARY:
            if metric == "inverse_balanced_accuracy" and (concept.all() or not concept.any()):
                return None
            if metric == "balanced_accuracy" and neuron.all():
                return None
            return float(SKLEARN_BINARY[metric](neuron, concept))
        if metric == "auc":
            return None if neuron.all() else float(skm.roc_auc_score(neuron, c))
        if metric == "inverse_auc":
            return None if concept.all() or not concept.any() else float(skm.roc_auc_score(concept, a))
        if metric == "auprc":
            return float(skm.average_precision_score(neuron, c))
        if metric == "inverse_auprc":
            return None if not concept.any() else float(skm.average_precision_score(concept, a))
    return None


def scipy_oracle(metric: str, a: np.ndarray, c: np.ndarray) -> float | None:
    if np.all(a == a[0]) or np.all(c == c[0]):
        return None
    if metric == "correlation":
        return float(stats.pearsonr(a, c).statistic)
    if metric == "spearman":
        return float(stats.spearmanr(a, c).statistic)
    return None


@pytest.mark.parametrize("metric", [m for m in METRICS if METRICS[m].kind != "sampled"])
def test_engine_matches_per_pair_reference(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    params = metric_params(metric, ALPHA)
    scores = quiet_score(score, metric, activations, concepts, **params)
    expected = np.array([[per_pair(metric)(activations[:, k], concepts[:, t], **params)
                          for t in range(concepts.shape[1])] for k in range(activations.shape[1])])
    np.testing.assert_allclose(scores, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", [*SKLEARN_BINARY, "auc", "inverse_auc", "auprc", "inverse_auprc"])
def test_engine_matches_sklearn(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    scores = quiet_score(score, metric, activations, concepts, **metric_params(metric, ALPHA))
    checked = 0
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            expected = sklearn_oracle(metric, activations[:, k], concepts[:, t], ALPHA)
            if expected is None:  # sklearn undefined: the documented convention, as the reference spells it out
                documented = per_pair(metric)(activations[:, k], concepts[:, t],
                                                        **metric_params(metric, ALPHA))
                assert scores[k, t] == pytest.approx(documented, abs=1e-12), (k, t)
            else:
                assert scores[k, t] == pytest.approx(expected, abs=1e-12), (k, t)
                checked += 1
    assert checked >= 30


@pytest.mark.parametrize("metric", ["correlation", "spearman"])
def test_engine_matches_scipy(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    scores = quiet_score(score, metric, activations, concepts)
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            expected = scipy_oracle(metric, activations[:, k], concepts[:, t])
            assert scores[k, t] == pytest.approx(0.0 if expected is None else expected, abs=1e-12), (k, t)


@pytest.mark.parametrize("gamma", [1e-2, 1e-3, 1e-4])
@pytest.mark.parametrize("metric", ["f1", "iou", "precision", "balanced_accuracy", "inverse_balanced_accuracy",
                                    "auc", "inverse_auc", "auprc", "inverse_auprc"])
def test_heavy_imbalance_against_sklearn(metric: str, gamma: float) -> None:
    """Rare concepts (γ n positives of n = 20,000) and α = γ, the regime where failing metrics collapse."""
    rng = np.random.default_rng(int(gamma * 1e6))
    n = 20_000
    positives = max(2, round(gamma * n))
    concept = np.zeros(n)
    concept[rng.choice(n, size=positives, replace=False)] = 1.0
    activations = np.column_stack([concept + 0.3 * rng.standard_normal(n), rng.standard_normal(n),
                                   np.round(concept * (0.5 + rng.random(n)), 1)])
    concepts = np.column_stack([concept, np.round(np.clip(concept * 0.8 + 0.3 * rng.random(n), 0, 1), 2)])
    alpha = positives / n
    params = {"alpha": alpha} if METRICS[metric].uses_alpha else {}
    scores = quiet_score(score, metric, activations, concepts, **params)
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            expected = sklearn_oracle(metric, activations[:, k], concepts[:, t], alpha)
            assert expected is not None
            assert scores[k, t] == pytest.approx(expected, abs=1e-12), (k, t)


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
@pytest.mark.parametrize("ties", ["average", "reference"])
def test_top_and_random_equals_the_metric_on_its_sample(metric: str, ties: str, tricky_data) -> None:
    """T&R = correlation (Spearman) on each unit's sample; checked with scipy on the sampled inputs."""
    activations, concepts = tricky_data
    scores = quiet_score(score, metric, activations, concepts, ties=ties, seed=5)
    from neuroneval.metrics import engine

    ctx = engine.Context(None, engine_params(METRICS[metric].options(ties=ties, seed=5))[0], None,
                         activations, concepts, np.arange(activations.shape[1]))
    index, valid = sample_indices(activations, ctx.unit_rows, ctx)
    for k in range(activations.shape[1]):
        sample = index[k][valid[k]]
        for t in range(concepts.shape[1]):
            a, c = activations[sample, k], concepts[sample, t]
            if ties == "reference" and metric == "spearman_tr":
                continue  # noise tie-breaking: checked against the published numbers in test_reference_mode
            if np.all(a == a[0]) or np.all(c == c[0]):
                assert scores[k, t] == 0.0
                continue
            if ties == "reference":
                factor = (sample.size - 1) / sample.size
                assert scores[k, t] == pytest.approx(factor * stats.pearsonr(a, c).statistic, abs=1e-12)
                continue
            oracle = stats.pearsonr if metric == "correlation_tr" else stats.spearmanr
            assert scores[k, t] == pytest.approx(oracle(a, c).statistic, abs=1e-12), (k, t)
            given_sample = per_pair(metric)(activations[:, k], concepts[:, t], sample)
            assert scores[k, t] == pytest.approx(given_sample, abs=1e-12), (k, t)


def test_top_and_random_sample_has_the_documented_shape() -> None:
    rng = np.random.default_rng(6)
    n = 20_000
    activations = rng.standard_normal((n, 4))
    concepts = rng.random((n, 1))
    from neuroneval.metrics import engine

    ctx = engine.Context(None, engine_params(METRICS["correlation_tr"].options(seed=9))[0], None,
                         activations, concepts, np.arange(4))
    index, valid = sample_indices(activations, ctx.unit_rows, ctx)
    assert index.shape == (4, 50) and valid.all()
    pool = int(np.ceil(0.002 * n))
    for k in range(4):
        cutoff = np.sort(activations[:, k])[n - pool]
        top_part, random_part = index[k, :25], index[k, 25:]
        assert np.all(activations[top_part, k] >= cutoff)
        assert np.unique(index[k]).size == 50
        assert np.sum(activations[random_part, k] >= cutoff) <= 3
    again, _ = sample_indices(activations, ctx.unit_rows, ctx)
    np.testing.assert_array_equal(index, again)


@pytest.mark.parametrize("metric", [*METRICS, "hmean:auc+inverse_auc"])
def test_score_pairs_matches_score(metric: str) -> None:
    rng = np.random.default_rng(7)
    activations, concepts = make_activations(rng, 700), make_concepts(rng, 700)
    pairs = np.array([[0, 0], [5, 7], [3, 1], [3, 1], [2, 4], [1, 6], [4, 2], [0, 3]])
    params = metric_params(metric, ALPHA) if metric in METRICS else {"alpha": ALPHA}
    for ties in ("average", "reference"):
        full = quiet_score(score, metric, activations, concepts, ties=ties, **params)
        listed = quiet_score(score_pairs, metric, activations, concepts, pairs, ties=ties, **params)
        np.testing.assert_allclose(listed, full[pairs[:, 0], pairs[:, 1]], rtol=1e-12, atol=1e-12)

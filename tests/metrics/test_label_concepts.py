"""Every metric on concepts that are labels only (0/1), against the per-pair reference.

``tests/metrics/test_oracles.py`` scores all its concept columns in one call, and its probabilities send the
whole chunk down each metric's continuous path. Several metrics take a closed form when every concept of a
chunk is 0/1 (WPMI's log(1e-8)·(1 − c), Spearman's average ranks of a 0/1 vector, the sparse confusion counts);
here those paths are compared with the reference, which never takes them, and the zero-variance note is checked
to appear exactly when a concept is constant.
"""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics import METRICS
from neuroneval.metrics.confusion import ALL_POSITIVES, NO_POSITIVES
from neuroneval.metrics.features import ZERO_NORM, ZERO_VARIANCE
from tests.metrics.conftest import make_activations, metric_params, per_pair_matrix, scored_with_notes

ALPHAS = (0.004, 0.03, 0.3)


def label_concepts(rng: np.random.Generator, n: int, *, constant: bool = True) -> np.ndarray:
    """0/1 columns: γ = 0.5, 0.3, 0.05, three positives, one positive, and (``constant``) all 0 and all 1."""
    def exactly(count: int) -> np.ndarray:
        column = np.zeros(n)
        column[rng.choice(n, size=count, replace=False)] = 1.0
        return column

    columns = [(rng.random(n) < gamma).astype(float) for gamma in (0.5, 0.3, 0.05)] + [exactly(3), exactly(1)]
    return np.column_stack(columns + ([np.zeros(n), np.ones(n)] if constant else []))


CASES = [(metric, alpha) for metric in sorted(m for m in METRICS if METRICS[m].kind != "sampled")
         for alpha in (ALPHAS if "alpha" in METRICS[metric].params else ALPHAS[:1])]


@pytest.mark.parametrize(("metric", "alpha"), CASES)
def test_label_concepts_match_the_per_pair_reference(metric: str, alpha: float) -> None:
    rng = np.random.default_rng(2037)
    n = 900
    activations, concepts = make_activations(rng, n), label_concepts(rng, n)
    params = metric_params(metric, alpha)
    scores, _ = scored_with_notes(metric, activations, concepts, **params)
    np.testing.assert_allclose(scores, per_pair_matrix(metric, activations, concepts, **params), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("metric", "note", "degenerate"), [("correlation", ZERO_VARIANCE, (0.0, 1.0)),
                                                            ("spearman", ZERO_VARIANCE, (0.0, 1.0)),
                                                            ("cosine", ZERO_NORM, (0.0,))])
def test_a_degenerate_label_concept_is_noted_only_when_there_is_one(metric: str, note: str, degenerate: tuple) -> None:
    """Correlations are 0 for a constant concept, cosine for an all-zero one (no norm), each with the note."""
    rng = np.random.default_rng(2038)
    n = 500
    activations = make_activations(rng, n)[:, [0, 1, 3, 5]]  # no constant unit: only the concepts can be noted
    concepts = label_concepts(rng, n, constant=False)
    for constant in (0.0, 1.0):
        with_constant = np.column_stack([concepts, np.full(n, constant)])
        scores, notes = scored_with_notes(metric, activations, with_constant)
        noted = [message for message in notes if note in message]
        assert bool(noted) == (constant in degenerate), (metric, constant, notes)
        np.testing.assert_allclose(scores, per_pair_matrix(metric, activations, with_constant), rtol=1e-10, atol=1e-12)
        if constant in degenerate:
            assert np.all(scores[:, -1] == 0.0)


@pytest.mark.parametrize("metric", ["precision", "inverse_balanced_accuracy", "f1", "iou"])
def test_an_empty_or_full_concept_is_noted_only_when_there_is_one(metric: str) -> None:
    """Precision's 0/0 (no positive) and the inverse balanced accuracy's two 0/0 terms (no positive, every input
    positive) are set to 0 with a note; a concept with a single positive (a denominator of 1) is no such case."""
    rng = np.random.default_rng(2039)
    n = 500
    activations = make_activations(rng, n)
    concepts = label_concepts(rng, n, constant=False)
    params = metric_params(metric, 0.03)
    _, notes = scored_with_notes(metric, activations, concepts, **params)
    assert not [message for message in notes if NO_POSITIVES in message or ALL_POSITIVES in message], notes
    for constant, note in ((0.0, NO_POSITIVES), (1.0, ALL_POSITIVES)):
        with_constant = np.column_stack([concepts, np.full(n, constant)])
        scores, notes = scored_with_notes(metric, activations, with_constant, **params)
        expects_note = metric == "inverse_balanced_accuracy" or (metric == "precision" and constant == 0.0)
        assert any(note in message for message in notes) == expects_note, (metric, constant, notes)
        np.testing.assert_allclose(scores, per_pair_matrix(metric, activations, with_constant, **params), rtol=1e-10,
                                   atol=1e-12)

"""Pearson, Spearman and cosine stay within [−1, 1] exactly where round-off would push them out.

The closed form: a vector correlates with itself at 1 and with its negation at −1 (cosine too). One float64
GEMM of normalised rows lands a few ulps beyond ±1 for about half of such columns, which the engine clips; a
score of 1 + 1e-15 breaks callers that take arccos or compare with ``<= 1``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neuroneval.metrics import score


@pytest.mark.parametrize("metric", ["correlation", "spearman", "cosine"])
def test_a_vector_with_itself_and_with_its_negation_scores_exactly_within_minus_one_and_one(metric: str) -> None:
    rng = np.random.default_rng(3)
    concepts = np.round(rng.random((300, 64)), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = np.diag(np.asarray(score(metric, concepts, concepts)))
        opposite = np.diag(np.asarray(score(metric, -concepts, concepts)))
    np.testing.assert_allclose(same, 1.0, atol=1e-12)
    np.testing.assert_allclose(opposite, -1.0, atol=1e-12)
    assert same.max() <= 1.0 and opposite.min() >= -1.0

"""Rules of ``neuroneval.metrics.correlation`` on every path that reaches it, against scipy and closed forms.

The default numpy call of correlation, cosine and (non-binary) Spearman goes through the whole-call passes
(:mod:`~neuroneval.metrics.input_products`, :mod:`~neuroneval.metrics.rank_products`); the block-by-chunk kernels
of ``correlation.py`` serve ``chunk_size``, the torch backend, sparse concepts and 0/1 concepts for Spearman. Each
test here runs on those paths too, so a rule of the kernels cannot hide behind the whole-call pass.

Pinned:

* Pearson, Spearman and cosine of a vector with itself are exactly ≤ 1 and with its negation exactly ≥ −1 on
  every path, probability and 0/1 concepts (the kernels clip to [−1, 1]; without the clip, 0/1 Spearman lands
  a few ulps outside);
* Spearman of 0/1 concepts (the closed form of their average ranks: centred ranks (n/2)·c − n₁/2, norm
  √(n₀·n₁·n/4)) equals ``scipy.stats.spearmanr`` at odd n, where n/2 and n₀·n₁·n/4 are not integers, and with
  tied unit values;
* in reference mode, 0/1 concepts are ranked by their noised values like any concept (no closed form), as a
  brute force of the documented rule computes them: a 0/1 vector's Spearman with itself is then the correlation
  of two tie-breaks, well below the closed form's 1.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from neuroneval.metrics import score

#: Options that send the call to the kernels of ``correlation.py`` (and the default one).
PATHS = {
    "default": {},
    "chunks": {"chunk_size": 5},
    "torch": {"device": "cpu"},
}


def _scores(metric: str, activations: np.ndarray, concepts: np.ndarray, path: str, **params) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(score(metric, activations, concepts, **PATHS[path], **params), dtype=float)


def _concepts(kind: str, n: int, columns: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "binary":
        values = (rng.random((n, columns)) < 0.3).astype(float)
        values[0] = 1.0  # no constant column
        values[1] = 0.0
        return values
    return np.round(rng.random((n, columns)), 3)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("kind", ["probability", "binary"])
@pytest.mark.parametrize("metric", ["correlation", "spearman", "cosine"])
def test_a_vector_with_itself_and_its_negation_stays_within_minus_one_and_one(metric: str, kind: str,
                                                                               path: str) -> None:
    concepts = _concepts(kind, 301, 40, seed=11)
    same = np.diag(_scores(metric, concepts, concepts, path))
    opposite = np.diag(_scores(metric, -concepts, concepts, path))
    np.testing.assert_allclose(same, 1.0, atol=1e-12)
    np.testing.assert_allclose(opposite, -1.0, atol=1e-12)
    assert same.max() <= 1.0
    assert opposite.min() >= -1.0


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("n", [7, 9, 101])
def test_binary_spearman_equals_scipy_at_odd_n(n: int, path: str) -> None:
    rng = np.random.default_rng(n)
    activations = rng.integers(0, 4, size=(n, 6)).astype(float)  # tied unit values
    activations[:, 0] = np.arange(n)  # one unit without ties
    concepts = np.zeros((n, 5))
    for column, positives in enumerate([1, 2, 3, n // 2, n - 2]):
        concepts[rng.choice(n, size=positives, replace=False), column] = 1.0
    expected = np.array([[stats.spearmanr(activations[:, k], concepts[:, t]).statistic for t in range(5)]
                         for k in range(6)])
    np.testing.assert_allclose(_scores("spearman", activations, concepts, path), expected, atol=1e-12)


def _reference_spearman(activations: np.ndarray, concepts: np.ndarray, seed: int) -> np.ndarray:
    """The documented reference rule, brute force: unit k's values and concept t's values as float32 plus
    float32(1e-7)·U, with U row k (unit) of ``default_rng([seed, 3]).random((·, n))`` and row t (concept) of
    stream ``[seed, 4]``; ranks by a stable sort; Pearson of the ranks (scipy) times (n − 1)/n."""
    n = activations.shape[0]
    unit_noise = np.random.default_rng([seed, 3]).random((activations.shape[1], n)).astype(np.float32)
    concept_noise = np.random.default_rng([seed, 4]).random((concepts.shape[1], n)).astype(np.float32)

    def ranks(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
        noisy = values.astype(np.float32) + np.float32(1e-7) * noise
        ranked = np.empty(n)
        ranked[np.argsort(noisy, kind="stable")] = np.arange(1, n + 1)
        return ranked

    return np.array([[stats.pearsonr(ranks(activations[:, k], unit_noise[k]),
                                     ranks(concepts[:, t], concept_noise[t])).statistic * (n - 1) / n
                      for t in range(concepts.shape[1])] for k in range(activations.shape[1])])


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("path", ["default", "chunks"])
def test_reference_mode_ranks_binary_concepts_by_their_noise_not_by_the_closed_form(path: str, seed: int) -> None:
    concepts = _concepts("binary", 400, 4, seed=seed)
    activations = np.concatenate([concepts, np.round(np.random.default_rng(seed).random((400, 2)), 1)], axis=1)
    expected = _reference_spearman(activations, concepts, seed)
    np.testing.assert_allclose(_scores("spearman", activations, concepts, path, ties="reference", seed=seed),
                               expected, atol=1e-12)
    assert np.diag(expected).max() < 0.9  # a 0/1 vector with itself: two tie-breaks, not the closed form's 1

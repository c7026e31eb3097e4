"""The compiled inverse-AUPRC kernel (:mod:`neuroneval.metrics.ap_kernel`) against sklearn, pair by pair.

Oracle: ``sklearn.metrics.average_precision_score(c ≥ 0.5, a)`` per (unit, concept) pair, and the repo's per-pair
reference; data with heavy ties (ReLU zeros, rounded scores, constant units), soft concepts with 4–7 % positives,
empty and all-positive concepts, both tie modes, concept chunks, unit blocks, a FeatureCache and sparse concepts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn import metrics as skm

from neuroneval.metrics import FeatureCache, NeuronEvalWarning, score, score_pairs
from neuroneval.metrics import reference as ref
from neuroneval.metrics.ap_kernel import _ap_sums, _rank_keys, positives_by_label
from neuroneval.metrics.ranking import NO_LABEL_POSITIVES
from tests.metrics.conftest import make_activations, quiet_score


def sklearn_inverse_auprc(activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """sklearn's average precision of every unit against every B(c); 0 for a concept with no positive."""
    out = np.zeros((activations.shape[1], concepts.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(concepts.shape[1]):
            label = concepts[:, t] >= 0.5
            if not label.any():
                continue
            for k in range(activations.shape[1]):
                out[k, t] = skm.average_precision_score(label, activations[:, k])
    return out


@pytest.fixture(scope="module")
def soft_data() -> tuple[np.ndarray, np.ndarray]:
    """Tied units (rounded, ReLU, constant, binary, capped, float32 noise, coarse ReLU, two levels) and soft
    concepts (sigmoid of N(−3, 2²) rounded to 3 decimals: ≈ 7 % of values ≥ 0.5), one empty, one all-positive,
    one with a single positive, one exactly at the threshold."""
    rng = np.random.default_rng(360004)
    n = 1200
    units = np.column_stack([make_activations(rng, n), np.maximum(np.round(rng.standard_normal((n, 3)), 0), 0.0),
                             rng.integers(0, 2, n).astype(float)])
    soft = np.round(1.0 / (1.0 + np.exp(-rng.normal(-3.0, 2.0, (n, 9)))), 3)
    single = np.zeros(n)
    single[rng.integers(n)] = 0.9
    concepts = np.column_stack([soft, np.zeros(n), np.ones(n), single, np.full(n, 0.5)])
    return units, concepts


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_inverse_auprc_equals_sklearn_on_soft_concepts_with_ties(soft_data, ties: str) -> None:
    activations, concepts = soft_data
    got = quiet_score(score, "inverse_auprc", activations, concepts, ties=ties)
    expected = sklearn_inverse_auprc(activations, concepts)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    positives = (concepts >= 0.5).mean(axis=0)[:9]
    assert 0.02 < positives.mean() < 0.12  # the soft concepts: 4–7 % of values ≥ 0.5


def test_inverse_auprc_equals_the_per_pair_reference(soft_data) -> None:
    activations, concepts = soft_data
    got = quiet_score(score, "inverse_auprc", activations, concepts)
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            assert got[k, t] == pytest.approx(ref.inverse_auprc(activations[:, k], concepts[:, t]), abs=1e-12)


def test_constant_unit_and_all_positive_concept_give_the_positive_share(soft_data) -> None:
    """One threshold holds every input: AP = |B(c)|/n (sklearn's value too); an all-positive concept gives 1."""
    activations, concepts = soft_data
    got = quiet_score(score, "inverse_auprc", activations, concepts)
    constant = 2  # make_activations' third column is constant
    assert np.ptp(activations[:, constant]) == 0
    np.testing.assert_allclose(got[constant], (concepts >= 0.5).mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(got[:, concepts.shape[1] - 3], 1.0)


def test_empty_concept_scores_zero_with_a_note(soft_data) -> None:
    activations, concepts = soft_data
    with pytest.warns(NeuronEvalWarning) as caught:
        got = score("inverse_auprc", activations, concepts)
    assert any(NO_LABEL_POSITIVES in str(warning.message) for warning in caught)
    np.testing.assert_array_equal(got[:, concepts.shape[1] - 4], 0.0)


def test_chunks_unit_blocks_cache_and_listed_pairs_agree(soft_data) -> None:
    """Concept chunks of 2, a 16 MiB budget on a table cut into unit blocks, a FeatureCache (the units' kept sort)
    and listed pairs (the sparse path) give the same values as one call."""
    activations, concepts = soft_data
    whole = quiet_score(score, "inverse_auprc", activations, concepts)
    np.testing.assert_allclose(quiet_score(score, "inverse_auprc", activations, concepts, chunk_size=2), whole,
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(quiet_score(score, "inverse_auprc", activations, concepts, memory_budget=2**24),
                               whole, rtol=0, atol=1e-15)
    cache = FeatureCache()
    for _ in range(2):
        np.testing.assert_allclose(quiet_score(score, "inverse_auprc", activations, concepts, cache=cache), whole,
                                   rtol=0, atol=1e-15)
    pairs = np.array([(k, t) for k in range(activations.shape[1]) for t in range(concepts.shape[1])])
    listed = quiet_score(score_pairs, "inverse_auprc", activations, concepts, pairs)
    np.testing.assert_allclose(listed, whole[pairs[:, 0], pairs[:, 1]], rtol=0, atol=1e-12)


def test_one_hot_concepts_kept_sparse_equal_sklearn() -> None:
    """Many one-hot classes (the engine keeps them as a CSR) and ReLU units tied to some classes."""
    rng = np.random.default_rng(360005)
    n, n_classes = 4000, 80
    classes = rng.integers(0, n_classes, n)
    concepts = np.zeros((n, n_classes), dtype=np.float32)
    concepts[np.arange(n), classes] = 1.0
    activations = rng.standard_normal((n, 6)).astype(np.float32)
    activations[:, :3] += 2.0 * concepts[:, :3]
    activations[:, ::2] = np.maximum(activations[:, ::2], 0.0)
    got = quiet_score(score, "inverse_auprc", activations, concepts)
    np.testing.assert_allclose(got, sklearn_inverse_auprc(activations.astype(np.float64), concepts), rtol=0,
                               atol=1e-12)


def test_nan_activation_is_rejected_naming_row_and_column(soft_data) -> None:
    activations, concepts = soft_data
    broken = activations.copy()
    broken[7, 3] = np.nan
    with pytest.raises(ValueError, match=r"activations must be finite.*row 7"):
        score("inverse_auprc", broken, concepts)


@pytest.mark.parametrize("n_units", [1, 4, 5])
@pytest.mark.parametrize("shift", [16, 32])
def test_kernel_alone_equals_brute_force(shift: int, n_units: int) -> None:
    """|y|·AP = Σ_{y_i} TP(a ≥ a_i)/N(a ≥ a_i) counted by brute force over all inputs, from the kernel's rank keys
    (packed uint32 and int64) and positives given dense or as a CSR; units walk in twos, so an odd count (the last
    unit alone in its step) and a single unit are checked too."""
    rng = np.random.default_rng(7)
    n, n_labels = 300, 5
    values = np.round(rng.standard_normal((n_units, n)), 0)
    bits = rng.random((n_labels, n)) < 0.2
    bits[3] = False
    keys = np.empty((n_units, n), dtype=np.uint32 if shift == 16 else np.int64)
    order = np.argsort(values, axis=1)
    _rank_keys(np.take_along_axis(values, order, axis=1), order, shift, keys)
    indptr, indices = positives_by_label(sparse.csr_matrix(bits.astype(float)))
    dense_indptr, dense_indices = positives_by_label(bits.astype(np.float32))
    np.testing.assert_array_equal(indptr, dense_indptr)
    np.testing.assert_array_equal(indices, dense_indices)
    got = _ap_sums(keys, shift, indptr, indices)
    assert got.shape == (n_units, n_labels)
    for k in range(n_units):
        at_least = values[k][None, :] >= values[k][:, None]  # at_least[i, j]: a_j ≥ a_i
        np.testing.assert_array_equal(keys[k].astype(np.int64) >> shift, at_least.sum(axis=1))
        for t in range(n_labels):
            expected = sum((at_least[i] & bits[t]).sum() / at_least[i].sum() for i in np.flatnonzero(bits[t]))
            assert got[k, t] == pytest.approx(expected, rel=1e-13, abs=0)

"""Sparse concept chunks (one-hot labels such as next tokens or classes) take sparse products: same numbers.

The concepts here are 95 one-hot classes (Zipf-sized, 20 % of inputs unlabelled) plus the edge cases a sparse
chunk can hold: an empty concept, one positive on every input, a constant 0.3, a single positive and a sparse
non-binary concept (probabilities on 2 % of inputs). Their density is below ``SPARSE_CONCEPTS``, so every
all-pairs kernel runs its sparse path; it must agree with the per-pair reference and with the dense path.
"""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics import METRICS, context, score, score_pairs
from neuroneval.metrics.reference import per_pair
from tests.metrics.conftest import make_activations, metric_params, quiet_score

N_INPUTS = 2000


@pytest.fixture(scope="module")
def one_hot_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    activations = make_activations(rng, N_INPUTS)
    sizes = 1.0 / np.arange(1, 96)
    classes = rng.choice(95, size=N_INPUTS, p=sizes / sizes.sum())
    labelled = rng.random(N_INPUTS) < 0.8
    one_hot = np.zeros((N_INPUTS, 95))
    one_hot[np.flatnonzero(labelled), classes[labelled]] = 1.0
    single = np.zeros(N_INPUTS)
    single[rng.integers(N_INPUTS)] = 1.0
    soft = np.where(rng.random(N_INPUTS) < 0.02, np.round(rng.choice([0.3, 0.8], N_INPUTS), 1), 0.0)
    edge = np.column_stack([np.zeros(N_INPUTS), np.ones(N_INPUTS), np.full(N_INPUTS, 0.3), single, soft])
    concepts = np.column_stack([one_hot, edge])
    # Units correlated with some classes, so scores are not all near zero.
    activations = np.column_stack([activations, one_hot[:, :3] + 0.5 * rng.standard_normal((N_INPUTS, 3))])
    return activations, concepts


def test_the_data_is_sparse_enough_for_the_sparse_path(one_hot_data) -> None:
    _, concepts = one_hot_data
    assert np.count_nonzero(concepts) <= context.SPARSE_CONCEPTS * concepts.size


@pytest.mark.parametrize("metric", [m for m in METRICS if METRICS[m].kind != "sampled"])
def test_sparse_path_matches_the_per_pair_reference(metric: str, one_hot_data) -> None:
    activations, concepts = one_hot_data
    params = metric_params(metric, 0.03)
    scores = quiet_score(score, metric, activations, concepts, **params)
    expected = np.array([[per_pair(metric)(activations[:, k], concepts[:, t], **params)
                          for t in range(concepts.shape[1])] for k in range(activations.shape[1])])
    np.testing.assert_allclose(scores, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ties", ["average", "reference"])
@pytest.mark.parametrize("metric", [*METRICS, "hmean:auc+inverse_auc"])
def test_sparse_path_matches_the_dense_path(metric: str, ties: str, one_hot_data, monkeypatch) -> None:
    activations, concepts = one_hot_data
    params = metric_params(metric, 0.01) if metric in METRICS else {}
    sparse = quiet_score(score, metric, activations, concepts, ties=ties, **params)
    monkeypatch.setattr(context, "SPARSE_CONCEPTS", 0.0)
    dense = quiet_score(score, metric, activations, concepts, ties=ties, **params)
    np.testing.assert_allclose(sparse, dense, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ["correlation", "spearman", "cosine", "mad", "wpmi", "iou", "inverse_auc"])
def test_listed_pairs_on_sparse_concepts_match_all_pairs(metric: str, one_hot_data) -> None:
    activations, concepts = one_hot_data
    params = metric_params(metric, 0.03)
    pairs = np.array([(k, t) for k in range(activations.shape[1]) for t in range(0, concepts.shape[1], 7)])
    listed = quiet_score(score_pairs, metric, activations, concepts, pairs, **params)
    whole = quiet_score(score, metric, activations, concepts, **params)
    np.testing.assert_allclose(listed, whole[pairs[:, 0], pairs[:, 1]], rtol=1e-10, atol=1e-12)


def test_column_major_concepts_give_the_same_sparse_matrix(one_hot_data) -> None:
    """Parquet tables load column-major; the CSR built from them (scanned in memory order) equals the row-major one."""
    from neuroneval.metrics.backend import NumpyBackend

    _, concepts = one_hot_data
    row_major = NumpyBackend().sparse_concept_rows(np.ascontiguousarray(concepts), context.SPARSE_CONCEPTS)
    column_major = NumpyBackend().sparse_concept_rows(np.asfortranarray(concepts), context.SPARSE_CONCEPTS)
    assert (row_major != column_major).nnz == 0
    assert np.array_equal(column_major.toarray().T, concepts)

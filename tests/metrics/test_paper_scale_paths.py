"""Kernel paths taken at paper scale (ImageNet-like 0/1 labels), checked against sklearn, scipy and brute force.

* top-and-random correlation and Spearman on a 0/1 concept table in average mode take sparse products instead of
  (K, C, s) gathers: equal to ``scipy.stats.pearsonr``/``spearmanr`` on each unit's sample;
* AUPRC and inverse AUPRC with few positives per label sort the gathered counts once, without a backward scan:
  equal to ``sklearn.metrics.average_precision_score`` on data with ties, all pairs and listed pairs;
* the T&R sample's selections (top pool, random inputs) equal a brute-force stable sort;
* the torch backend on the CPU gives the same numbers (1e-5) on these paths.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from neuroneval.metrics import METRICS, score, score_pairs
from neuroneval.metrics import engine as engine_module
from neuroneval.metrics.metric_options import engine_params
from neuroneval.metrics.topandrandom import _smallest_keys, _top_pool, sample_indices
from tests.metrics.conftest import make_activations, quiet_score

N_INPUTS = 3000


@pytest.fixture(scope="module")
def label_data() -> tuple[np.ndarray, np.ndarray]:
    """Tied activations (rounded, ReLU, constant, binary, float32 noise, class-tied units) and 0/1 concepts:
    40 one-hot classes, a rare attribute (3 positives), an empty concept and an all-positive one."""
    rng = np.random.default_rng(190003)
    classes = rng.integers(0, 40, N_INPUTS)
    one_hot = np.zeros((N_INPUTS, 40))
    one_hot[np.arange(N_INPUTS), classes] = 1.0
    rare = np.zeros(N_INPUTS)
    rare[rng.choice(N_INPUTS, 3, replace=False)] = 1.0
    concepts = np.column_stack([one_hot, rare, np.zeros(N_INPUTS), np.ones(N_INPUTS)])
    tied_units = np.round(one_hot[:, :4] + 0.7 * rng.standard_normal((N_INPUTS, 4)), 1)
    tied_units[:, ::2] = np.maximum(tied_units[:, ::2], 0.0)
    activations = np.column_stack([make_activations(rng, N_INPUTS), tied_units])
    return activations, concepts


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
def test_top_and_random_on_labels_equals_scipy_on_the_sample(metric: str, label_data) -> None:
    activations, concepts = label_data
    scores = quiet_score(score, metric, activations, concepts, seed=3)
    ctx = engine_module.Context(None, engine_params(METRICS[metric].options(seed=3))[0], None,
                                activations, concepts, np.arange(activations.shape[1]))
    index, valid = sample_indices(activations, ctx.unit_rows, ctx)
    assert valid.all()
    oracle = stats.pearsonr if metric == "correlation_tr" else stats.spearmanr
    for k in range(activations.shape[1]):
        a = activations[index[k], k]
        for t in range(concepts.shape[1]):
            c = concepts[index[k], t]
            if np.all(a == a[0]) or np.all(c == c[0]):
                assert scores[k, t] == 0.0, (k, t)
            else:
                assert scores[k, t] == pytest.approx(oracle(a, c).statistic, abs=1e-12), (k, t)


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
def test_top_and_random_listed_pairs_match_all_pairs_on_labels(metric: str, label_data) -> None:
    activations, concepts = label_data
    every = quiet_score(score, metric, activations, concepts, seed=4)
    rng = np.random.default_rng(1)
    pairs = np.column_stack([rng.integers(0, activations.shape[1], 60), rng.integers(0, concepts.shape[1], 60)])
    listed = quiet_score(score_pairs, metric, activations, concepts, pairs, seed=4)
    np.testing.assert_allclose(listed, every[pairs[:, 0], pairs[:, 1]], rtol=0, atol=1e-12)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_auprc_and_inverse_auprc_on_labels_equal_sklearn(chunk_size: int | None, label_data) -> None:
    activations, concepts = label_data
    alpha = 0.01
    forward = quiet_score(score, "auprc", activations, concepts, alpha=alpha, chunk_size=chunk_size)
    inverse = quiet_score(score, "inverse_auprc", activations, concepts, chunk_size=chunk_size)
    k_top = int(np.ceil(alpha * N_INPUTS))
    for k in range(activations.shape[1]):
        a = activations[:, k]
        active = a >= np.sort(a)[::-1][k_top - 1]
        for t in range(concepts.shape[1]):
            c = concepts[:, t]
            expected = skm.average_precision_score(active, c)
            assert forward[k, t] == pytest.approx(expected, abs=1e-12), (k, t)
            if c.any():
                assert inverse[k, t] == pytest.approx(skm.average_precision_score(c >= 0.5, a), abs=1e-12), (k, t)
            else:
                assert inverse[k, t] == 0.0


def test_inverse_auprc_sparse_kernel_with_heavy_ties_equals_sklearn() -> None:
    """Scores with long runs of equal values among a label's positives (ReLU zeros, few distinct levels)."""
    rng = np.random.default_rng(11)
    n = 800
    activations = np.column_stack([np.maximum(np.round(rng.standard_normal(n), 0), 0.0),
                                   rng.integers(0, 3, n).astype(float), rng.standard_normal(n)])
    concepts = np.zeros((n, 6))
    for t, size in enumerate([1, 2, 5, 9, 17, 30]):
        concepts[rng.choice(n, size, replace=False), t] = 1.0
    got = quiet_score(score, "inverse_auprc", activations, concepts)
    pairs = np.array([(k, t) for k in range(3) for t in range(6)])
    listed = quiet_score(score_pairs, "inverse_auprc", activations, concepts, pairs)
    for (k, t), value in zip(pairs, listed, strict=True):
        expected = skm.average_precision_score(concepts[:, t], activations[:, k])
        assert got[k, t] == pytest.approx(expected, abs=1e-12)
        assert value == pytest.approx(expected, abs=1e-12)


def test_smallest_keys_equal_a_stable_sort() -> None:
    rng = np.random.default_rng(5)
    for rows, n, count in [(30, 20_000, 25), (9, 400, 25), (12, 1000, 3), (4, 60, 25), (5, 100, 1), (3, 50, 0)]:
        keys = rng.random((rows, n))
        keys[:, rng.choice(n, min(n // 3, 100), replace=False)] = 2.0  # excluded inputs
        expected = np.sort(np.argsort(keys, axis=1, kind="stable")[:, :count], axis=1)
        np.testing.assert_array_equal(_smallest_keys(keys, count), expected)


def test_top_pool_equals_a_stable_sort_with_ties_to_the_lower_index() -> None:
    rng = np.random.default_rng(6)
    values = np.round(rng.standard_normal((20, 3000)), 1)
    values[3] = 0.0
    values[4, :300] = 9.0
    for pool in (1, 7, 100, 3000):
        expected = np.sort(np.argsort(-values, axis=1, kind="stable")[:, :pool], axis=1)
        np.testing.assert_array_equal(_top_pool(values, pool), expected)


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr", "auprc", "inverse_auprc", "spearman",
                                    "inverse_auc"])
def test_torch_cpu_equals_numpy_on_labels(metric: str, label_data) -> None:
    pytest.importorskip("torch")
    activations, concepts = label_data
    params = {"alpha": 0.01} if "alpha" in METRICS[metric].params else {}
    expected = quiet_score(score, metric, activations, concepts, **params)
    got = quiet_score(score, metric, activations, concepts, device="cpu", **params)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)

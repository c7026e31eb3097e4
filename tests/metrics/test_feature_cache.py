"""FeatureCache: unit features shared across calls change no number and no warning, and respect their budget."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neuroneval.metrics import METRICS, FeatureCache, NeuronEvalWarning, score, score_grid, score_units
from tests.metrics.conftest import metric_params, quiet_score

ALL = [*METRICS, "hmean:auc+inverse_auc"]


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_every_metric_through_one_cache_equals_fresh_calls(ties: str, tricky_data) -> None:
    activations, concepts = tricky_data
    cache = FeatureCache()
    for metric in ALL:  # later metrics reuse the features earlier ones prepared
        params = metric_params(metric) if metric in METRICS else {}
        cached = quiet_score(score, metric, activations, concepts, ties=ties, cache=cache, **params)
        fresh = quiet_score(score, metric, activations, concepts, ties=ties, **params)
        np.testing.assert_array_equal(cached, fresh, err_msg=metric)
    assert 0 < cache.bytes <= cache.max_bytes


def test_grid_and_unit_subsets_share_one_cache(tricky_data) -> None:
    activations, concepts = tricky_data
    cache = FeatureCache()
    grid = [{"alpha": 0.01}, {"alpha": 0.03}, {"alpha": 0.1}]
    for metric in ["iou", "wpmi", "auprc", "recall"]:
        for units in ([0, 2, 4], [1, 3, 5], None):
            got = quiet_score(score_grid, metric, activations, concepts, units, grid, cache=cache)
            fresh = quiet_score(score_grid, metric, activations, concepts, units, grid)
            for point, scores, same in zip(grid, got, fresh, strict=True):
                np.testing.assert_array_equal(scores, same, err_msg=f"{metric} {units} {point}")
                single = quiet_score(score, metric, activations, concepts, cache=cache, **point)
                single = single if units is None else single[units]  # a stacked GEMM rounds differently
                np.testing.assert_allclose(scores, single, rtol=1e-12, atol=1e-12, err_msg=f"{metric} {units}")


def test_warnings_of_a_cached_feature_are_replayed(tricky_data) -> None:
    activations, concepts = tricky_data  # unit 2 is constant: its standardized row raises the zero-variance note
    cache = FeatureCache()
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NeuronEvalWarning)
            score_units("correlation", activations, concepts, [2, 3], cache=cache)
        assert any("zero-variance" in str(w.message) for w in caught)


def test_budget_is_respected_and_results_unchanged(tricky_data) -> None:
    activations, concepts = tricky_data
    one_row = activations.shape[0] * 8 * activations.shape[1]  # one float64 (K, n) feature
    cache = FeatureCache(max_bytes=one_row)
    for metric in ["correlation", "spearman", "cosine", "mad", "inverse_auc"]:
        cached = quiet_score(score, metric, activations, concepts, cache=cache)
        np.testing.assert_array_equal(cached, quiet_score(score, metric, activations, concepts), err_msg=metric)
        assert cache.bytes <= one_row
    empty = FeatureCache(max_bytes=0)
    np.testing.assert_array_equal(quiet_score(score, "spearman", activations, concepts, cache=empty),
                                  quiet_score(score, "spearman", activations, concepts))
    assert empty.bytes == 0


def test_a_cache_belongs_to_one_activations_matrix(tricky_data) -> None:
    activations, concepts = tricky_data
    cache = FeatureCache()
    quiet_score(score, "correlation", activations, concepts, cache=cache)
    with pytest.raises(ValueError, match="one activations matrix"):
        quiet_score(score, "correlation", activations.copy(), concepts, cache=cache)
    with pytest.raises(ValueError, match="max_bytes"):
        FeatureCache(max_bytes=-1)

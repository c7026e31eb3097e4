"""Edges of the crowd estimator (mutation survivors): σ_S at |S| − ddof = 0 and correlation_matrix's shape check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neuroneval.crowd.estimator import correlation_matrix, importance_weights, is_correlation, weighted_std


@pytest.mark.parametrize(("values", "ddof"), [([2.0], 1), ([1.0, 3.0], 2)])
def test_weighted_std_is_nan_without_a_warning_when_no_degree_of_freedom_is_left(values, ddof) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = weighted_std(np.array(values), np.ones(len(values)), ddof=ddof)
    assert np.isnan(result)


def test_weighted_std_with_one_degree_of_freedom_left_is_the_sample_std() -> None:
    values = np.array([1.0, 3.0])
    assert float(weighted_std(values, np.ones(2), ddof=1)) == pytest.approx(np.std(values, ddof=1))


@pytest.mark.parametrize(("activation_rows", "concept_rows"), [(5, 4), (4, 5)])
def test_correlation_matrix_refuses_tables_of_different_lengths(activation_rows, concept_rows) -> None:
    with pytest.raises(ValueError, match="equal n"):
        correlation_matrix(np.zeros((activation_rows, 2)), np.zeros((concept_rows, 3)))


@pytest.mark.parametrize(("activations", "concepts"), [(np.zeros(5), np.zeros((5, 3))), (np.zeros((5, 2)), np.zeros(5)),
                                                       (np.zeros((5, 2, 1)), np.zeros((5, 3)))])
def test_correlation_matrix_refuses_arrays_that_are_not_tables(activations, concepts) -> None:
    with pytest.raises(ValueError, match=r"need \(n, K\) activations and \(n, C\) concepts"):
        correlation_matrix(activations, concepts)


def test_known_activation_moments_broadcast_per_row_of_a_batch() -> None:
    """Per-row μ(a), σ(a) of shape (R,) for (R, |S|) samples: each row as if estimated alone."""
    rng = np.random.default_rng(4)
    a, c, w = rng.normal(size=(3, 9)), (rng.random((3, 9)) < 0.4).astype(float), rng.uniform(0.5, 2.0, (3, 9))
    means, stds = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 0.5])
    batch = is_correlation(a, c, w, activation_mean=means, activation_std=stds)
    rows = [float(is_correlation(a[r], c[r], w[r], activation_mean=means[r], activation_std=stds[r])) for r in range(3)]
    assert batch.shape == (3,)
    np.testing.assert_allclose(batch, rows, rtol=1e-12)


@pytest.mark.parametrize(("size", "ddof"), [(1, 1), (2, 2), (1, 2), (2, 5)])
def test_no_degree_of_freedom_left_gives_zeros_of_the_batch_shape_without_a_warning(size, ddof) -> None:
    rng = np.random.default_rng(size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = is_correlation(rng.normal(size=(4, size)), rng.random((4, size)), np.ones((4, size)), ddof=ddof)
    assert result.shape == (4,)
    np.testing.assert_array_equal(result, np.zeros(4))


@pytest.mark.parametrize("level", [1e6 + 0.1, 1e9 / 3])
def test_a_constant_sample_far_from_zero_is_constant_despite_round_off(level) -> None:
    """μ_S of a constant far from 0 is off by round-off, so σ_S is a tiny positive number: still 'constant' (0)."""
    concept = np.full(7, level)
    for seed in range(5):  # exactly 0, not round-off: an absolute tolerance would give ±1e−17 for most samples
        activation = np.random.default_rng(seed).normal(size=7)
        assert float(is_correlation(activation, concept, np.ones(7))) == 0.0
        assert float(is_correlation(concept, activation, np.ones(7))) == 0.0


def test_a_spread_below_the_absolute_tolerance_counts_as_constant() -> None:
    """σ ≤ 1e−12·(|μ| + 1): inputs that differ by 1e−13 near 0 are a constant unit (the '+ 1' of the tolerance)."""
    activation = np.array([0.0, 1e-13] * 5)
    concept = np.array([0.0, 1.0] * 5)
    assert float(is_correlation(activation, concept, np.ones(10))) == 0.0


def eq5_eq6_by_loops(a: list[float], c: list[float], w: list[float], ddof: int = 1) -> float:
    """Eq. 5–6 written out term by term in plain Python (the brute-force reference)."""
    size = len(a)
    mean_a = sum(wi * ai for wi, ai in zip(w, a, strict=True)) / size
    mean_c = sum(wi * ci for wi, ci in zip(w, c, strict=True)) / size
    std_a = (sum(wi * (ai - mean_a) ** 2 for wi, ai in zip(w, a, strict=True)) / (size - ddof)) ** 0.5
    std_c = (sum(wi * (ci - mean_c) ** 2 for wi, ci in zip(w, c, strict=True)) / (size - ddof)) ** 0.5
    products = sum(wi * (ai - mean_a) * (ci - mean_c) for wi, ai, ci in zip(w, a, c, strict=True))
    return products / (std_a * std_c) / (size - ddof)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_importance_weighted_estimate_matches_eq6_written_out(seed) -> None:
    rng = np.random.default_rng(seed)
    a, c = rng.gamma(2.0, size=12), (rng.random(12) < 0.5).astype(float)
    w = rng.uniform(0.2, 3.0, 12)  # Σ w ≠ |S|: the centring terms do not cancel
    assert float(is_correlation(a, c, w)) == pytest.approx(eq5_eq6_by_loops(a.tolist(), c.tolist(), w.tolist()),
                                                           rel=1e-12)


def test_weighted_std_takes_mean_and_ddof_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        weighted_std(np.ones(3), np.ones(3), None, 1)


def test_a_spread_just_above_the_absolute_tolerance_is_a_real_spread() -> None:
    """σ ≈ 1.6e−12 > 1e−12·(|μ| + 1): the tiny unit is not constant and tracks the concept exactly (ρ = 1)."""
    activation = np.array([0.0, 3e-12] * 5)
    concept = np.array([0.0, 1.0] * 5)
    assert float(is_correlation(activation, concept, np.ones(10))) == pytest.approx(1.0)


def test_is_correlation_takes_its_options_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        is_correlation(np.ones(3), np.ones(3), np.ones(3), 1)


def test_correlation_matrix_refuses_concepts_with_more_than_two_axes() -> None:
    with pytest.raises(ValueError, match=r"need \(n, K\) activations and \(n, C\) concepts"):
        correlation_matrix(np.zeros((5, 2)), np.zeros((5, 3, 1)))


@pytest.mark.parametrize(("shape_a", "shape_c", "shape_w"), [((2, 5), (2, 4), (2, 4)), ((2, 4), (2, 5), (2, 5)),
                                                             ((2, 5), (2, 5), (2, 4)), ((2, 4), (2, 4), (2, 5))])
def test_samples_whose_shapes_differ_anywhere_are_refused(shape_a, shape_c, shape_w) -> None:
    """Each of the three arrays differing from the other two, in either direction (none broadcasts silently)."""
    with pytest.raises(ValueError, match="must have equal shapes"):
        is_correlation(np.ones(shape_a), np.ones(shape_c), np.ones(shape_w))


@pytest.mark.parametrize(("shape", "expected"), [((1,), ()), ((2, 3, 1), (2, 3))])
def test_no_degree_of_freedom_left_keeps_every_leading_axis(shape, expected) -> None:
    """One sample (|S| − 1 = 0) gives 0 of the sample's leading shape: a scalar for one sample, (2, 3) for a grid."""
    result = is_correlation(np.ones(shape), np.ones(shape), np.ones(shape))
    assert np.shape(result) == expected and not np.any(result)


@pytest.mark.parametrize(("a", "c"), [([1.0, 2.0], [0.0, 1.0]), ([1.0, 2.0], [1.0, 0.0]), ([5.0, -1.0], [0.2, 0.7])])
def test_one_degree_of_freedom_left_is_pearsons_r_of_two_points(a, c) -> None:
    """|S| = 2, ddof = 1: with weights 1 the estimate is the sample's Pearson r, ±1 for two distinct points."""
    expected = np.corrcoef(a, c)[0, 1]
    assert float(is_correlation(np.array(a), np.array(c), np.ones(2))) == pytest.approx(expected, abs=1e-12)


def test_importance_weights_of_a_table_use_its_number_of_rows() -> None:
    """(n, K) probabilities with n = 3 inputs and K = 2 columns: w = 1 / (3 q) (not 1 / (2 q))."""
    q = np.array([[0.5, 0.2], [0.25, 0.2], [0.25, 0.6]])
    np.testing.assert_allclose(importance_weights(q), 1.0 / (3 * q), rtol=1e-15)


def test_correlation_matrix_stays_within_minus_one_and_one_where_round_off_would_leave_it() -> None:
    """A unit with itself and with its negation: unclipped, this sample gives ±1.0000000000000002."""
    unit = np.random.default_rng(0).normal(size=(9, 1))
    result = correlation_matrix(unit, np.hstack([unit, -unit]))
    assert result.tolist() == [[1.0, -1.0]]

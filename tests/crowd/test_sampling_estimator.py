"""Sampling distributions (Eq. 4) and the importance-sampling estimator (Eq. 5–6) against independent oracles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from neuroneval.crowd import (
    correlation_matrix,
    draw_indices,
    importance_weights,
    is_correlation,
    sampling_distribution,
    standardize,
    weighted_mean,
    weighted_std,
)
from tests.crowd.synthetic import planted_world


@pytest.fixture(scope="module")
def world():
    return planted_world(n=2000, n_units=8, seed=3)


def _pearson(x, y):
    """scipy's Pearson r, with the library convention 0 for a constant vector."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return stats.pearsonr(x, y)[0]


def _unit(world, k):
    concept = world.planted[k]
    return world.activations[:, k].astype(np.float64), world.labels[:, concept], world.pseudo_labels[:, concept]


def test_distributions_match_their_formulas(world):
    a, _, p = _unit(world, 0)
    a_bar = (a - a.mean()) / a.std()
    p_bar = (p - p.mean()) / p.std()
    expected = {
        "uniform": np.full(a.size, 1 / a.size),
        "activation": (a_bar**2 + 0.001) / (a_bar**2 + 0.001).sum(),
        "pseudo": np.abs(a_bar * p_bar + 0.001) / np.abs(a_bar * p_bar + 0.001).sum(),
    }
    for method, q in expected.items():
        np.testing.assert_allclose(sampling_distribution(method, a, p), q, rtol=1e-12)


def test_distributions_vectorise_over_units(world):
    a = world.activations.astype(np.float64)
    p = world.pseudo_labels[:, world.planted]
    q = sampling_distribution("pseudo", a, p)
    for k in range(a.shape[1]):
        np.testing.assert_allclose(q[:, k], sampling_distribution("pseudo", a[:, k], p[:, k]), rtol=1e-9)


def test_distribution_errors():
    with pytest.raises(ValueError, match="needs pseudo_labels"):
        sampling_distribution("pseudo", np.arange(3.0))
    for unknown in ("top", "abc", "zzz", "Uniform"):  # names that sort before, between and after the known ones
        with pytest.raises(ValueError, match="unknown sampling method"):
            sampling_distribution(unknown, np.arange(3.0))
    with pytest.raises(ValueError, match="does not match"):
        sampling_distribution("pseudo", np.arange(3.0), np.arange(4.0))
    assert np.all(standardize(np.ones(4)) == 0)


def test_draws_follow_q():
    q = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    draws = draw_indices(q, 200_000, np.random.default_rng(0))
    counts = np.bincount(draws, minlength=q.size)
    assert counts[-1] == 0
    expected = q[:-1] * draws.size
    chi2 = ((counts[:-1] - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, df=3) > 1e-4


class FixedUniforms:
    """Stands in for a generator: ``random(shape)`` repeats the given uniforms."""

    def __init__(self, values: list[float]) -> None:
        self.values = np.asarray(values, dtype=np.float64)

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.resize(self.values, shape)


def test_draws_at_the_ends_of_0_1_pick_inputs_of_positive_probability():
    """u = 0 draws a column's first input of positive probability and u just below 1 its last (where u + k rounds
    up to k + 1 in the vectorised search); inputs of probability 0 at either end are never drawn."""
    q = np.array([[0.0, 0.5, 0.2], [0.5, 0.5, 0.2], [0.5, 0.0, 0.2], [0.0, 0.0, 0.4]])
    below_one = np.nextafter(1.0, 0.0)
    draws = draw_indices(q, 3, [FixedUniforms([0.0, 0.5, below_one])] * 3)
    np.testing.assert_array_equal(draws, [[1, 2, 2], [0, 1, 1], [0, 2, 3]])  # u = 0.5 is past a CDF step at 0.5
    assert np.all(np.take_along_axis(q.T, draws, axis=1) > 0)
    odd = np.column_stack([[0.2] * 5, [0.5, 0.5, 0.0, 0.0, 0.0]])  # five inputs, the last three of probability 0
    np.testing.assert_array_equal(draw_indices(odd, 1, [FixedUniforms([below_one])] * 2).ravel(), [4, 1])


def test_each_column_cdf_ends_at_exactly_one():
    """A column whose normalised cumulative sum rounds to 1 + 2**-52 is set to end at 1, so the next column's search
    starts after it (a first input of probability 0 there is never drawn), and the last input keeps its share."""
    rounds_above = [0.8158535541215322, 0.002738500170148095, 0.8574042765875693, 0.033585575305464355,
                    0.7296554464299441]
    assert np.cumsum(np.array(rounds_above) / sum(rounds_above))[-1] > 1.0
    # six columns after it whose first input has probability 0 (with seven columns the search of an unsorted
    # flattened CDF, had the first column ended above 1, returned input −1 for the second)
    q = np.column_stack([rounds_above, *[[0.0, 1.0, 1.0, 1.0, 1.0]] * 6])
    np.testing.assert_array_equal(draw_indices(q, 1, [FixedUniforms([0.0])] * 7).ravel(), [0, 1, 1, 1, 1, 1, 1])
    quarters = np.array([0.25, 0.25, 0.25, 0.25, 0.0])
    np.testing.assert_array_equal(draw_indices(quarters, 3, [FixedUniforms([0.1, 0.6, 0.8])]), [0, 2, 3])


def test_generators_must_match_the_columns_of_q():
    q = np.full((5, 300), 0.2)
    draws = draw_indices(q, 2, [np.random.default_rng(seed) for seed in range(300)])
    assert draws.shape == (300, 2) and draws.min() >= 0 and draws.max() <= 4
    for count in (2, 4):
        with pytest.raises(ValueError, match=f"got {count} generators for 3 columns"):
            draw_indices(q[:, :3], 2, [np.random.default_rng(seed) for seed in range(count)])


def test_q_of_zero_or_three_dimensions_is_refused():
    for q in (np.full((2, 2, 2), 0.5), np.array(1.0)):
        with pytest.raises(ValueError, match=r"q must be \(n,\) or \(n, K\), got shape"):
            draw_indices(q, 2, np.random.default_rng(0))


def test_a_column_of_q_without_probability_is_refused():
    with pytest.raises(ValueError, match="every column of q needs positive total probability"):
        draw_indices(np.array([[0.5, 0.0], [0.5, 0.0]]), 2, np.random.default_rng(0))


def test_q_must_be_finite_and_non_negative():
    for q in (np.array([0.5, -0.1, 0.6]), np.array([0.5, np.nan, 0.5]), np.array([0.5, np.inf, 0.5])):
        with pytest.raises(ValueError, match="finite and non-negative"):
            draw_indices(q, 2, np.random.default_rng(0))


def test_distribution_arguments_are_checked():
    for epsilon in (0.0, -0.5):
        with pytest.raises(ValueError, match="epsilon must be > 0"):
            sampling_distribution("activation", np.arange(3.0), epsilon=epsilon)
    with pytest.raises(ValueError, match="non-empty"):
        sampling_distribution("uniform", np.zeros(0))
    with pytest.raises(ValueError, match="non-empty"):
        sampling_distribution("uniform", np.zeros((0, 3)))
    np.testing.assert_array_equal(sampling_distribution("uniform", np.zeros((2, 0))), np.zeros((2, 0)))  # no units
    for shorter_or_longer in (np.arange(2.0), np.arange(4.0)):
        with pytest.raises(ValueError, match="does not match"):
            sampling_distribution("pseudo", np.arange(3.0), shorter_or_longer)
    np.testing.assert_array_equal(sampling_distribution("activation", np.array([2.0])), [1.0])  # one input
    with pytest.raises(TypeError):
        sampling_distribution("pseudo", np.arange(3.0), np.arange(3.0), 0.1)  # type: ignore[misc]
    activations, pseudo = np.array([0.0, 1.0, 3.0]), np.array([0.2, 0.1, 0.9])
    for method in ("uniform", "activation", "pseudo"):
        built = "".join(list(method))  # equal to the name, but not the same string object
        np.testing.assert_array_equal(sampling_distribution(built, activations, pseudo),
                                      sampling_distribution(method, activations, pseudo))


def test_draws_per_unit_generators_are_independent_of_other_units():
    rng = np.random.default_rng(1)
    q = rng.random((50, 3))
    together = draw_indices(q, (4, 7), [np.random.default_rng(s) for s in (10, 11, 12)])
    alone = draw_indices(q[:, 1], (4, 7), np.random.default_rng(11))
    assert together.shape == (3, 4, 7)
    np.testing.assert_array_equal(together[1], alone)
    assert np.all(np.diff(together, axis=-1) >= 0)


def test_uniform_q_reduces_to_plain_monte_carlo(world):
    a, c, _ = _unit(world, 1)
    q = sampling_distribution("uniform", a)
    weights = importance_weights(q)
    np.testing.assert_allclose(weights, 1.0)
    draws = draw_indices(q, (20, 60), np.random.default_rng(2))
    estimates = is_correlation(a[draws], c[draws], weights[draws])
    for row, estimate in zip(draws, estimates, strict=True):
        assert estimate == pytest.approx(_pearson(a[row], c[row]), abs=1e-12)
    literal = is_correlation(a[draws], c[draws], weights[draws], literal_eq6=True)
    np.testing.assert_allclose(literal, estimates * 59 / 60, rtol=1e-12)


def test_weighted_moments_with_unit_weights_are_the_sample_moments():
    x = np.random.default_rng(4).normal(size=(3, 25))
    np.testing.assert_allclose(weighted_mean(x, np.ones_like(x)), x.mean(axis=1))
    np.testing.assert_allclose(weighted_std(x, np.ones_like(x)), x.std(axis=1, ddof=1))


@pytest.mark.parametrize("method", ["activation", "pseudo"])
def test_importance_sampling_mean_is_unbiased(world, method):
    """Eq. 5 (mean) and the IS average of h (Eq. 2–3) are exactly unbiased: closed form and Monte Carlo."""
    a, c, p = _unit(world, 2)
    q = sampling_distribution(method, a, p)
    weights = importance_weights(q)
    h = standardize(a) * standardize(c)
    rho = stats.pearsonr(a, c)[0]
    assert (q * weights * c).sum() == pytest.approx(c.mean(), rel=1e-12)
    assert (q * weights * h).sum() == pytest.approx(rho, rel=1e-10)
    draws = draw_indices(q, (20_000, 30), np.random.default_rng(5))
    for values, truth in ((c, c.mean()), (h, rho)):
        estimates = weighted_mean(values[draws], weights[draws])
        standard_error = estimates.std(ddof=1) / np.sqrt(estimates.size)
        assert abs(estimates.mean() - truth) < 4 * standard_error


@pytest.mark.parametrize("method", ["activation", "pseudo"])
def test_full_estimator_is_consistent(world, method):
    """Eq. 5–6 normalise by estimated moments (a ratio estimator): bias O(1/|S|), vanishing with |S|."""
    biases = []
    for k in (1, 2, 3):
        a, c, p = _unit(world, k)
        q = sampling_distribution(method, a, p)
        weights = importance_weights(q)
        rho = stats.pearsonr(a, c)[0]
        row = []
        for size in (25, 400):
            draws = draw_indices(q, (4000, size), np.random.default_rng([6, k, size]))
            estimates = is_correlation(a[draws], c[draws], weights[draws])
            standard_error = estimates.std(ddof=1) / np.sqrt(estimates.size)
            row.append(abs(estimates.mean() - rho) - 4 * standard_error)
        biases.append(row)
    small, large = np.array(biases).T
    assert np.all(large < 0.01)
    assert large.max() <= max(small.max(), 0.0)


def test_zero_variance_sample_gives_zero():
    a = np.arange(5.0)
    assert is_correlation(a, np.zeros(5), np.ones(5)) == 0.0
    assert is_correlation(a[:1], np.ones(1), np.ones(1)) == 0.0


def test_correlation_matrix_matches_scipy(world):
    a = world.activations[:, :3].astype(np.float64)
    c = world.labels[:, :5]
    matrix = correlation_matrix(a, c)
    for k in range(3):
        for t in range(5):
            assert matrix[k, t] == pytest.approx(_pearson(a[:, k], c[:, t]), abs=1e-10)

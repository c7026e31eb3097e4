"""Rating aggregation (Eq. 7–8), simulated raters and the RCE (Eq. 13) against closed forms and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from neuroneval.crowd import (
    AGGREGATION_METHODS,
    aggregate,
    average_rating,
    bayes_posterior,
    majority_vote,
    pseudo_label_prior,
    relative_correlation_error,
    relative_errors,
    simulate_ratings,
)


def _posterior_brute_force(ratings, prior, eta):
    """Eq. 7 with the likelihood of Eq. 8 written as a product over the individual ratings."""
    like_one = np.prod([(1 - eta) if r == 1 else eta for r in ratings])
    like_zero = np.prod([eta if r == 1 else (1 - eta) for r in ratings])
    return like_one * prior / (like_one * prior + like_zero * (1 - prior))


@settings(max_examples=200, deadline=None)
@given(
    ratings=st.lists(st.integers(0, 1), min_size=1, max_size=12),
    prior=st.floats(0.001, 0.999),
    eta=st.floats(0.01, 0.49),
)
def test_bayes_posterior_equals_its_closed_form(ratings, prior, eta):
    expected = _posterior_brute_force(ratings, prior, eta)
    got = bayes_posterior(np.array(sum(ratings)), len(ratings), prior, rater_error=eta)
    assert float(got) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_bayes_posterior_enumerates_all_rating_sets():
    eta, prior = 0.13, 0.01
    for m in range(1, 6):
        for ratings in itertools.product((0, 1), repeat=m):
            got = bayes_posterior(np.array([sum(ratings)]), m, prior, rater_error=eta)[0]
            assert got == pytest.approx(_posterior_brute_force(ratings, prior, eta), rel=1e-12)


def test_simple_aggregations():
    positives, n = np.array([0, 1, 2, 3]), np.array([3, 2, 2, 3])
    np.testing.assert_allclose(average_rating(positives, n), [0, 0.5, 1, 1])
    np.testing.assert_array_equal(majority_vote(positives, n), [0, 0, 1, 1])
    np.testing.assert_allclose(pseudo_label_prior(np.array([-1.0, 0.3, 2.0])), [0.001, 0.3, 0.999])
    prior = np.array([0.0, 0.5, 1.0, 0.2])
    np.testing.assert_allclose(
        aggregate("bayes_pseudo", positives, n, pseudo_labels=prior),
        bayes_posterior(positives, n, np.clip(prior, 0.001, 0.999)),
    )
    np.testing.assert_allclose(aggregate("bayes_uniform", positives, n), bayes_posterior(positives, n, 0.01))


def test_noiseless_raters_recover_labels():
    labels = np.random.default_rng(0).integers(0, 2, size=(7, 40))
    ratings = simulate_ratings(labels, 3, np.random.default_rng(1), rater_error=0.0)
    assert ratings.shape == (7, 40, 3)
    np.testing.assert_array_equal(ratings, np.repeat(labels[..., None], 3, axis=-1))
    positives = ratings.sum(axis=-1)
    for method in AGGREGATION_METHODS:
        recovered = aggregate(method, positives, 3, rater_error=0.0, pseudo_labels=np.full(labels.shape, 0.3))
        np.testing.assert_array_equal(recovered, labels)


def test_simulated_flip_rate_matches_eta():
    labels = np.tile([0, 1], 50_000)
    ratings = simulate_ratings(labels, 2, np.random.default_rng(2), rater_error=0.13)
    flips = (ratings != labels[:, None]).mean()
    standard_error = np.sqrt(0.13 * 0.87 / ratings.size)
    assert abs(flips - 0.13) < 4 * standard_error
    assert stats.pearsonr(ratings[:, 0], ratings[:, 1])[0] == pytest.approx(0.74**2, abs=0.01)


def test_aggregation_errors():
    with pytest.raises(ValueError, match="disagree"):
        bayes_posterior(np.array([1]), 2, 0.5, rater_error=0.0)
    with pytest.raises(ValueError, match="strictly between"):
        bayes_posterior(np.array([1]), 2, 1.0)
    with pytest.raises(ValueError, match="at least one rating"):
        majority_vote(np.array([0]), 0)
    with pytest.raises(ValueError, match="needs pseudo_labels"):
        aggregate("bayes_pseudo", np.array([1]), 1)
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate("median", np.array([1]), 1)
    with pytest.raises(ValueError, match="binary"):
        simulate_ratings(np.array([0.5]), 1, np.random.default_rng(0))


@pytest.mark.parametrize("positives", [-1, -0.5, 1.3, 1.7, 3])
def test_counts_must_be_whole_and_within_the_ratings(positives: float) -> None:
    with pytest.raises(ValueError, match="whole numbers between 0 and the number of ratings"):
        average_rating(np.array([positives]), 2)


@pytest.mark.parametrize("prior", [-0.1, 0.0, 1.0, 1.2, np.nan])
def test_a_prior_outside_0_1_is_refused(prior: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        bayes_posterior(np.array([1]), 2, prior)


@pytest.mark.parametrize("clip", [(-0.1, 0.5), (0.0, 0.5), (0.2, 0.1), (0.1, 1.0), (0.1, 1.5)])
def test_a_prior_clip_outside_0_1_is_refused(clip: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="0 < low <= high < 1"):
        pseudo_label_prior(np.array([0.5]), clip)


def test_a_prior_clip_may_be_one_point() -> None:
    point = 0.3
    np.testing.assert_array_equal(pseudo_label_prior(np.array([0.0, 0.3, 1.0]), (point, point)), [0.3, 0.3, 0.3])


@pytest.mark.parametrize("rater_error", [-0.1, 1.0, 1.5])
def test_a_rater_error_outside_0_1_is_refused(rater_error: float) -> None:
    with pytest.raises(ValueError, match=r"rater_error must be in \[0, 1\)"):
        bayes_posterior(np.array([1]), 2, 0.5, rater_error=rater_error)


def test_methods_are_matched_by_value_and_unknown_ones_refused() -> None:
    positives, pseudo = np.array([0, 1, 3]), np.array([0.2, 0.5, 0.9])
    for method in ("average", "majority", "bayes_uniform", "bayes_pseudo"):
        built = "".join(list(method))  # equal to the name, but not the same string object
        np.testing.assert_array_equal(aggregate(built, positives, 3, pseudo_labels=pseudo),
                                      aggregate(method, positives, 3, pseudo_labels=pseudo))
    for unknown in ("Average", "aardvark", "bayes"):  # sort before or after the known names
        with pytest.raises(ValueError, match="unknown aggregation"):
            aggregate(unknown, positives, 3)
    with pytest.raises(TypeError):
        bayes_posterior(positives, 3, 0.5, 0.1)  # type: ignore[misc]  # rater_error is keyword-only
    with pytest.raises(TypeError):
        aggregate("bayes_uniform", positives, 3, 0.1)  # type: ignore[misc]  # so are the options of aggregate


def test_majority_is_more_than_half_of_the_ratings() -> None:
    """2α > m against a direct count for every α ≤ m ≤ 9 (ties, e.g. 3 of 6, are 0)."""
    for m in range(1, 10):
        alpha = np.arange(m + 1)
        np.testing.assert_array_equal(majority_vote(alpha, m), [1.0 if a > m - a else 0.0 for a in alpha])


def test_rce_closed_form():
    truth = np.array([0.2, -0.4, 0.5])
    estimates = np.array([[0.1, 0.3], [-0.4, -0.2], [0.5, 1.0]])
    expected = np.mean([0.5, 0.5, 0.0, 0.5, 0.0, 1.0])
    assert relative_correlation_error(estimates, truth) == pytest.approx(expected)
    assert relative_correlation_error(estimates[:, 0], truth) == pytest.approx(0.5 / 3)
    with pytest.raises(ValueError, match="undefined"):
        relative_errors(np.array([0.1]), np.array([0.0]))

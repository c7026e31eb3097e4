"""Measurement theory against independent oracles: Cronbach's α by its covariance form, Kendall τ by scipy and
by brute force, Pearson/Spearman by scipy; bootstrap intervals seeded and around the point value."""

import itertools

import numpy as np
import pytest
from scipy import stats

from neuroneval.concepteval import (
    BootstrapOptions,
    MeasurementOptions,
    RaterOptions,
    concurrent_validity,
    inter_rater,
    kendall_tau,
    mean_with_interval,
    mtmm,
    retest_reliability,
    simulate_raters,
    subset_consistency,
)
from neuroneval.concepteval.measurement import cronbach_alpha, mtmm_matrix, subset_noise


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator per test, so a test's data do not depend on which tests ran before it (random order)."""
    return np.random.default_rng(7)
QUICK = BootstrapOptions(n_boot=200, seed=1)


def alpha_by_covariances(items: np.ndarray) -> float:
    """Textbook covariance form: α = J·c̄ / (v̄ + (J − 1)·c̄), v̄ mean item variance, c̄ mean inter-item covariance
    (items in rows, concepts in columns)."""
    covariance = np.cov(items)
    n_items = items.shape[0]
    mean_variance = np.trace(covariance) / n_items
    mean_covariance = (covariance.sum() - np.trace(covariance)) / (n_items * (n_items - 1))
    return n_items * mean_covariance / (mean_variance + (n_items - 1) * mean_covariance)


def test_cronbach_alpha_against_the_covariance_form(rng):
    truth = rng.normal(size=40)
    subsets = truth + 0.7 * rng.normal(size=(5, 40))
    assert float(cronbach_alpha(subsets)) == pytest.approx(alpha_by_covariances(subsets), rel=1e-12)
    stacked = np.stack([subsets, rng.normal(size=(5, 40))], axis=-1)  # second measure: pure noise
    table = subset_consistency(stacked, ["signal", "noise"], QUICK)
    assert table.loc[0, "value"] == pytest.approx(alpha_by_covariances(subsets))
    assert table.loc[1, "value"] == pytest.approx(alpha_by_covariances(stacked[..., 1]))
    assert table.loc[0, "ci_low"] <= table.loc[0, "value"] <= table.loc[0, "ci_high"]
    assert table.loc[0, "value"] > 0.8 > table.loc[1, "value"]


def test_subset_noise_against_a_per_concept_loop(rng):
    """Why α is low: per concept the effect (mean over subsets), its spread between subsets and whether every subset
    has the effect's sign, computed concept by concept; a measure whose small effects drown in the subset noise
    flips sign and has a low α, one with large effects keeps its sign."""
    effect = rng.normal(size=50)
    noisy = 0.05 * effect + rng.normal(size=(4, 50))  # small effects, unit subset noise
    clear = effect + 0.05 * rng.normal(size=(4, 50))
    clear[:, 0] = [1.0, -1.0, 2.0, 2.0]  # a sign flip in one concept
    clear[:, 1] = 0.0  # no effect: no sign to keep
    stacked = np.stack([noisy, clear], axis=-1)
    found = subset_noise(stacked)
    for column, scores in enumerate((noisy, clear)):
        effects = [scores[:, c].mean() for c in range(50)]
        spreads = [np.var(scores[:, c], ddof=1) for c in range(50)]
        kept = [e != 0 and all(np.sign(v) == np.sign(e) for v in scores[:, c]) for c, e in enumerate(effects)]
        assert found["median_effect"][column] == pytest.approx(np.median(np.abs(effects)), rel=1e-12)
        assert found["subset_sd"][column] == pytest.approx(np.sqrt(np.mean(spreads)), rel=1e-12)
        assert found["sign_agreement"][column] == pytest.approx(np.mean(kept), rel=1e-12)
    assert found["sign_agreement"][0] < 0.5 < found["sign_agreement"][1] < 1.0
    table = subset_consistency(stacked, ["noisy", "clear"], QUICK)
    assert table["value"].iloc[0] < 0.5 < table["value"].iloc[1]
    np.testing.assert_allclose(table["sign_agreement"], found["sign_agreement"], rtol=1e-12)
    np.testing.assert_allclose(table["subset_sd"], found["subset_sd"], rtol=1e-12)


def test_subset_consistency_bootstraps_alpha_over_resampled_concepts(rng):
    """Each bootstrap replicate is α of the same J subsets on resampled concepts (a former version mixed up the
    subset and resample axes, giving intervals far below the estimate)."""
    truth = rng.normal(size=60)
    subsets = np.stack([truth + 0.5 * rng.normal(size=(4, 60)), rng.normal(size=(4, 60))], axis=-1)
    options = BootstrapOptions(n_boot=200, seed=3)
    table = subset_consistency(subsets, ["signal", "noise"], options)
    rows = np.random.default_rng(3).integers(0, 60, size=(200, 60))
    replicates = np.stack([cronbach_alpha(subsets[:, row]) for row in rows])
    low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(table["ci_low"], low, rtol=1e-10)
    np.testing.assert_allclose(table["ci_high"], high, rtol=1e-10)
    assert 0.8 < table.loc[0, "ci_low"] < table.loc[0, "value"] < table.loc[0, "ci_high"] <= 1.0


def test_cronbach_alpha_of_identical_subsets_is_one(rng):
    assert float(cronbach_alpha(np.tile(rng.normal(size=10), (4, 1)))) == pytest.approx(1.0)


def tau_a_brute_force(x, y):
    pairs = list(itertools.combinations(range(len(x)), 2))
    return sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs) / len(pairs)


def test_kendall_tau_against_scipy_and_brute_force(rng):
    x, y = rng.integers(1, 6, 30).astype(float), rng.integers(1, 6, 30).astype(float)  # many ties
    assert kendall_tau(x, y, "b") == pytest.approx(stats.kendalltau(x, y).statistic, rel=1e-12)
    assert kendall_tau(x, y, "a") == pytest.approx(tau_a_brute_force(x, y), rel=1e-12)
    u, v = rng.normal(size=25), rng.normal(size=25)  # no ties: both variants equal scipy
    assert kendall_tau(u, v, "a") == pytest.approx(stats.kendalltau(u, v).statistic, rel=1e-12)


def test_inter_rater_pairs_and_simulated_raters(rng):
    truth = rng.normal(size=60)
    ratings = simulate_raters(truth, RaterOptions(n_raters=3, noise_scale=0.3, seed=2))
    assert ratings.shape == (3, 60) and ratings.min() >= 1 and ratings.max() <= 5
    table = inter_rater(ratings, ["e1", "e2", "e3"], MeasurementOptions(bootstrap=QUICK))
    assert list(zip(table["rater_a"], table["rater_b"], strict=True)) == [("e1", "e2"), ("e1", "e3"), ("e2", "e3")]
    for row in table.itertuples():
        first, second = ratings[int(row.rater_a[1]) - 1], ratings[int(row.rater_b[1]) - 1]
        assert row.value == pytest.approx(stats.kendalltau(first, second).statistic, rel=1e-12)
        assert row.ci_low <= row.value <= row.ci_high
    noisy = simulate_raters(truth, RaterOptions(n_raters=3, noise="laplace", noise_scale=3.0, seed=2))
    noisy_table = inter_rater(noisy, options=MeasurementOptions(bootstrap=BootstrapOptions(n_boot=0)))
    assert noisy_table["value"].mean() < table["value"].mean()
    assert noisy_table["ci_low"].isna().all()


def test_retest_and_concurrent_validity_against_scipy(rng):
    truth = rng.normal(size=(50, 2))
    run_a, run_b = truth + 0.1 * rng.normal(size=(50, 2)), truth + 0.1 * rng.normal(size=(50, 2))
    table = retest_reliability(run_a, run_b, ["m1", "m2"], QUICK)
    for column in range(2):
        expected = stats.pearsonr(run_a[:, column], run_b[:, column]).statistic
        assert table.loc[column, "value"] == pytest.approx(expected, rel=1e-12)
    again = retest_reliability(run_a, run_b, ["m1", "m2"], QUICK)
    assert table.equals(again)  # seeded
    criterion = truth[:, 0]
    validity = concurrent_validity(run_a, criterion, ["m1", "m2"], MeasurementOptions(bootstrap=QUICK))
    lookup = validity.set_index(["measure", "statistic"])["value"]
    assert lookup["m1", "kendall_tau_b"] == pytest.approx(stats.kendalltau(run_a[:, 0], criterion).statistic)
    assert lookup["m2", "pearson"] == pytest.approx(stats.pearsonr(run_a[:, 1], criterion).statistic)
    assert lookup["m1", "spearman"] == pytest.approx(stats.spearmanr(run_a[:, 0], criterion).statistic)


def test_mtmm_table(rng):
    scores = rng.normal(size=(30, 3))
    scores[:, 1] = scores[:, 0] + 0.1 * rng.normal(size=30)
    table = mtmm(scores, ["a", "b", "c"], consistency=np.array([0.9, 0.8, 0.7]),
                 options=MeasurementOptions(bootstrap=QUICK))
    matrix = mtmm_matrix(table)
    assert matrix.loc["a", "b"] == pytest.approx(stats.kendalltau(scores[:, 0], scores[:, 1]).statistic)
    assert matrix.loc["a", "b"] == matrix.loc["b", "a"]
    assert np.diag(matrix.to_numpy()).tolist() == [0.9, 0.8, 0.7]


def test_mean_with_interval():
    result = mean_with_interval(np.array([1.0, 2.0, 3.0, 4.0]), QUICK)
    assert result["value"] == 2.5 and 1.0 <= result["ci_low"] <= 2.5 <= result["ci_high"] <= 4.0


def test_bad_inputs_and_options_are_named():
    with pytest.raises(ValueError, match="non-finite"):
        retest_reliability(np.array([[1.0], [np.nan], [2.0]]), np.ones((3, 1)))
    with pytest.raises(ValueError, match="differ in shape"):
        retest_reliability(np.ones((4, 2)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="differ in length"):
        kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match=r"RaterOptions\.n_raters"):
        RaterOptions.from_params({"n_raters": 1})
    with pytest.raises(ValueError, match="unknown option 'noise_model'"):
        RaterOptions.from_params({"noise_model": "gaussian"})
    with pytest.raises(ValueError, match="noise"):
        RaterOptions.from_params({"noise": "uniform"})
    with pytest.raises(ValueError, match=r"BootstrapOptions\.confidence"):
        MeasurementOptions.from_params({"bootstrap": {"confidence": 1.5}})
    with pytest.raises(ValueError, match="at least 1 row"):
        mean_with_interval(np.array([]))

"""Experimental Missing/Extra Labels tests on a small synthetic setting (paper 000, Sec. 4.3, App. E.3, E.5)."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics import METRICS, FeatureCache, MetricOptions, get_spec, options_for, score, score_pairs
from neuroneval.sanity.experimental import experimental_deltas, experimental_draw_deltas, experimental_test
from neuroneval.sanity.params import metric_params
from neuroneval.sanity.perturb import missing_labels

N = 4_000
FREQUENCIES = [0.01, 0.05, 0.1, 0.3]


def opts(metric: str, ties: str = "average", **candidates: float) -> MetricOptions:
    """The metric's options with those of ``candidates`` (α, λ) that it takes."""
    return options_for(metric, ties=ties, **metric_params(metric, **candidates))


@pytest.fixture(scope="module")
def setting() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Units that track their concept (binary concept + small noise); correct pairs (k, k); two decoy concepts."""
    rng = np.random.default_rng(0)
    concepts = (rng.random((N, 6)) < [*FREQUENCIES, 0.2, 0.02]).astype(float)
    activations = concepts[:, :4] + 0.05 * rng.standard_normal((N, 4))
    pairs = np.column_stack([np.arange(4), np.arange(4)])
    return activations, concepts, pairs


def test_passing_and_failing_metrics_behave_as_in_the_paper(setting) -> None:
    activations, concepts, pairs = setting
    tables = {metric: experimental_test(metric, activations, concepts, pairs, draws=3,
                                         options=opts(metric, alpha=0.05)).set_index("test")
              for metric in ("iou", "recall", "correlation", "mad")}
    assert tables["iou"]["decrease_acc"].tolist() == [1.0, 1.0]  # passes both tests
    assert tables["correlation"]["decrease_acc"].tolist() == [1.0, 1.0]
    assert tables["recall"].loc["extra", "decrease_acc"] == 0.0  # recall cannot see extra labels
    assert tables["mad"].loc["extra", "decrease_acc"] == 1.0
    # MAD barely notices missing labels on rare concepts: Δs ≈ −γ/(2 − γ)/span (App. D), ≈ 0 at γ = 0.01.
    mad, _, span, _ = experimental_deltas("mad", activations, concepts, pairs, test="missing", draws=3)
    np.testing.assert_allclose(mad, [-g / (2 - g) / span for g in FREQUENCIES], atol=0.01)
    row = tables["iou"].loc["missing"]
    assert row["n_pairs"] == 4 and row["draws"] == 3 and row["span"] == 1.0 and row["ties"] == "average"
    assert tables["correlation"].loc["missing", "span"] == 2.0


def test_deltas_are_the_draw_average_of_the_formula(setting) -> None:
    activations, concepts, pairs = setting
    deltas, tested, span, draws = experimental_deltas("cosine", activations, concepts, pairs[[2, 0]], test="missing",
                                                      draws=4, seed=7)
    assert tested.tolist() == [[2, 2], [0, 0]] and span == 2.0 and draws == 4
    for (unit, concept), delta in zip(tested, deltas, strict=True):
        perturbed = missing_labels(concepts[:, [concept]], 4, seed=7, concept_ids=[concept])[:, 0, :]
        by_hand = score_pairs("cosine", activations[:, [unit]], perturbed, [[0, d] for d in range(4)])
        original = score_pairs("cosine", activations, concepts, [[unit, concept]])[0]
        assert delta == pytest.approx(np.mean(by_hand - original) / 2.0, abs=1e-12)


def test_blocks_do_not_change_the_result(setting) -> None:
    activations, concepts, pairs = setting
    pairs = np.vstack([pairs, [[0, 4], [3, 5]]])
    auprc = opts("auprc", alpha=0.05)
    big = experimental_deltas("auprc", activations, concepts, pairs, test="extra", draws=5, options=auprc)
    small = experimental_deltas("auprc", activations, concepts, pairs, test="extra", draws=5,
                                options=auprc, block_elements=N)
    np.testing.assert_allclose(big[0], small[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_a_shared_feature_cache_changes_no_delta(setting, ties) -> None:
    activations, concepts, pairs = setting
    pairs = np.vstack([pairs, [[0, 4], [3, 5]]])
    cache = FeatureCache()
    for metric in [*METRICS, "hmean:recall+auc"]:  # every metric after the first reuses the tested units' features
        for test in ("missing", "extra"):
            options = opts(metric, ties, alpha=0.05, lam=0.5)
            cached = experimental_deltas(metric, activations, concepts, pairs, cache=cache, block_elements=2 * N,
                                         test=test, draws=3, seed=5, options=options)
            fresh = experimental_deltas(metric, activations, concepts, pairs, block_elements=2 * N, test=test, draws=3,
                                        seed=5, options=options)
            np.testing.assert_array_equal(cached[0], fresh[0], err_msg=f"{metric} {test}")
            assert cached[2] == fresh[2]
    assert cache.bytes > 0


def test_score_pairs_with_a_unit_superset_and_its_errors(setting) -> None:
    activations, concepts, _ = setting
    pairs = np.array([[2, 1], [0, 3], [2, 5]])
    for metric, params in (("spearman", {}), ("iou", {"alpha": 0.05}), ("mad", {})):
        expected = score_pairs(metric, activations, concepts, pairs, **params)
        got = score_pairs(metric, activations, concepts, pairs, units=[3, 2, 0, 1], cache=FeatureCache(), **params)
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match=r"pair 1 = \(0, 3\): its unit is not among the given units"):
        score_pairs("iou", activations, concepts, pairs, units=[1, 2])


@pytest.mark.parametrize("metric", ["auprc", "correlation_tr"])
def test_fewer_draws_are_a_prefix_of_more_draws(setting, metric) -> None:
    """App. E.5 reads 1, 3, 10 … draws off one run: draw d is the same whatever the number of draws."""
    activations, concepts, pairs = setting
    many, tested, span, draws = experimental_draw_deltas(metric, activations, concepts, pairs, test="missing",
                                                         draws=6, seed=3, options=opts(metric, alpha=0.05))
    few, _, _, _ = experimental_draw_deltas(metric, activations, concepts, pairs, test="missing", draws=2, seed=3,
                                            options=opts(metric, alpha=0.05))
    low, high = get_spec(metric).value_range
    assert many.shape == (len(tested), 6) and draws == 6 and span == high - low
    np.testing.assert_allclose(many[:, :2], few, rtol=0, atol=1e-12)
    means, _, _, _ = experimental_deltas(metric, activations, concepts, pairs, test="missing", draws=6, seed=3,
                                         options=opts(metric, alpha=0.05))
    np.testing.assert_allclose(means, many.mean(axis=1), rtol=0, atol=1e-12)


def test_unbounded_metrics_use_the_observed_spread(setting) -> None:
    activations, concepts, pairs = setting
    wpmi = opts("wpmi", alpha=0.05, lam=0.5)
    deltas, _, span, _ = experimental_deltas("wpmi", activations, concepts, pairs, test="extra", options=wpmi)
    full = score("wpmi", activations, concepts, alpha=0.05, lam=0.5)
    assert span >= full.max() - full.min() - 1e-12 and np.all(np.abs(deltas) <= 1.0)
    fixed = experimental_test("wpmi", activations, concepts, pairs, tests=["extra"], span=10.0, options=wpmi)
    assert fixed["span"].item() == 10.0


def test_sampled_metrics_and_reference_mode_run(setting) -> None:
    activations, concepts, pairs = setting
    reference = opts("correlation_tr", "reference")
    table = experimental_test("correlation_tr", activations, concepts, pairs, draws=2, options=reference)
    assert table["n_pairs"].tolist() == [4, 4] and table["decrease_acc"].between(0, 1).all()
    assert table["ties"].tolist() == ["reference", "reference"]
    again = experimental_test("correlation_tr", activations, concepts, pairs, draws=2, options=reference)
    assert table.equals(again)


def test_semantic_sub_and_superclasses() -> None:
    """Units for 'pet' (dog ∪ cat) and for 'dog'; pet's largest subclass is dog, dog's superclass is pet."""
    rng = np.random.default_rng(1)
    breed = rng.choice(4, size=N, p=[0.05, 0.04, 0.03, 0.88])  # dog, cat, bird, none
    dog, cat, bird = (breed == 0).astype(float), (breed == 1).astype(float), (breed == 2).astype(float)
    pet = np.maximum(dog, cat)
    concepts = np.column_stack([dog, cat, bird, pet])
    names, hierarchy = ["dog", "cat", "bird", "pet"], {"pet": ["dog", "cat"]}
    activations = np.column_stack([pet, dog]) + 0.01 * rng.standard_normal((N, 2))
    pairs = [[0, 3], [1, 0], [1, 2]]  # bird has no superclass in the table: not tested under extra labels
    table = experimental_test("f1", activations, concepts, pairs, perturbation="semantic", names=names,
                              hierarchy=hierarchy, options=opts("f1", alpha=0.09)).set_index("test")
    assert table.loc["missing", "n_pairs"] == 1 and table.loc["extra", "n_pairs"] == 1
    assert table["decrease_acc"].tolist() == [1.0, 1.0] and table["draws"].tolist() == [1, 1]
    assert np.isnan(table.loc["extra", "strength"])
    random = experimental_test("f1", activations, concepts, pairs, tests=["missing"], perturbation="semantic",
                               names=names, hierarchy=hierarchy, subclass_rule="random_child", draws=4,
                               options=opts("f1", alpha=0.09))
    assert random["draws"].item() == 4 and random["decrease_acc"].item() == 1.0


def test_invalid_arguments(setting) -> None:
    activations, concepts, pairs = setting
    with pytest.raises(TypeError, match="alhpa"):
        experimental_test("iou", activations, concepts, pairs, alhpa=0.1)
    with pytest.raises(ValueError, match=r"takes no parameter\(s\) \['alpha'\]"):
        experimental_test("correlation", activations, concepts, pairs, options=opts("iou", alpha=0.1))
    with pytest.raises(ValueError, match="semantic"):
        experimental_test("iou", activations, concepts, pairs, perturbation="semantic")
    with pytest.raises(ValueError, match="pairs"):
        experimental_test("iou", activations, concepts, [0, 0])

"""Meta-AUPRC (000 Eq. 13), the unit split and Table 4's aggregation, checked against direct computations."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

from neuroneval.meta import build_table4, evaluate_metric, meta_auprc, split_units, truth_mask
from neuroneval.metrics import MetricOptions, get_spec, score


def brute_force_average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """AP = Σ_thresholds (R_i − R_{i−1}) P_i over distinct score thresholds, high to low (ties grouped)."""
    total_positives = labels.sum()
    value, previous_recall = 0.0, 0.0
    for threshold in np.unique(scores)[::-1]:
        predicted = scores >= threshold
        true_positives = (predicted & labels).sum()
        recall = true_positives / total_positives
        value += (recall - previous_recall) * true_positives / predicted.sum()
        previous_recall = recall
    return float(value)


def test_meta_auprc_matches_brute_force_with_ties() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, size=(7, 9)).astype(float)
    truth = np.zeros((7, 9), dtype=bool)
    truth[np.arange(7), rng.integers(0, 9, size=7)] = True
    expected = brute_force_average_precision(scores.ravel(), truth.ravel())
    assert meta_auprc(scores, truth) == pytest.approx(expected, abs=1e-12)
    assert meta_auprc(-scores, truth, higher_is_better=False) == pytest.approx(expected, abs=1e-12)


def test_average_precision_matches_sklearn() -> None:
    from sklearn.metrics import average_precision_score

    from neuroneval.meta.auprc import average_precision

    rng = np.random.default_rng(1)
    for trial in range(20):
        labels = rng.random(300) < [0.002, 0.05, 0.5, 0.9][trial % 4]
        scores = rng.integers(0, 8 if trial % 2 else 10_000, 300).astype(float)
        expected = average_precision_score(labels, scores) if labels.any() else 0.0
        assert average_precision(labels, scores) == pytest.approx(expected, abs=1e-12)


def test_meta_auprc_is_one_when_every_correct_pair_wins() -> None:
    truth = np.eye(4, dtype=bool)
    assert meta_auprc(np.eye(4) + 0.01, truth) == 1.0


def test_meta_auprc_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        meta_auprc(np.array([[np.nan, 1.0]]), np.array([[True, False]]))
    with pytest.raises(ValueError, match="at least one correct"):
        meta_auprc(np.ones((2, 2)), np.zeros((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        meta_auprc(np.ones((2, 3)), np.zeros((2, 2), dtype=bool))


def test_truth_mask_names_unknown_units_and_concepts() -> None:
    truth = pd.DataFrame({"unit": ["0", "1"], "concept": ["dog", "cat"]})
    mask = truth_mask(truth, ["0", "1", "2"], ["cat", "dog"])
    assert mask.tolist() == [[False, True], [True, False], [False, False]]
    with pytest.raises(ValueError, match=r"units that are not in the activation tables: \['1'\]"):
        truth_mask(truth, ["0"], ["cat", "dog"])
    with pytest.raises(ValueError, match=r"concepts that are not in the concept table: \['cat'\]"):
        truth_mask(truth, ["0", "1"], ["dog"])


def test_split_is_seeded_disjoint_and_sized() -> None:
    val, test = split_units(100, val_fraction=0.05, seed=7)
    assert len(val) == 5 and len(test) == 95
    assert set(val).isdisjoint(test) and set(val) | set(test) == set(range(100))
    again = split_units(100, val_fraction=0.05, seed=7)
    assert np.array_equal(val, again[0])
    assert not np.array_equal(val, split_units(100, val_fraction=0.05, seed=8)[0])
    assert len(split_units(3, val_fraction=0.05, seed=0)[0]) == 1
    with pytest.raises(ValueError, match="at least 2 units"):
        split_units(1, val_fraction=0.05, seed=0)


def test_min_val_units_floors_the_validation_set_at_most_half() -> None:
    assert [len(split_units(n, val_fraction=0.05, seed=0, min_val_units=10)[0]) for n in (27, 120, 500, 6)] \
        == [10, 10, 25, 3]
    val, test = split_units(27, val_fraction=0.05, seed=0, min_val_units=10)
    assert set(val).isdisjoint(test) and len(val) + len(test) == 27
    with pytest.raises(ValueError, match="min_val_units"):
        split_units(27, val_fraction=0.05, seed=0, min_val_units=0)


def test_table4_means_and_ranks_match_scipy() -> None:
    rng = np.random.default_rng(0)
    metrics, settings = ["a", "b", "c", "d"], ["s1", "s2", "s3"]
    values = rng.random((4, 3)).round(1)
    values[1, 0] = values[2, 0]  # a tie within one setting
    tidy = pd.DataFrame([(s, m, values[i, j]) for i, m in enumerate(metrics) for j, s in enumerate(settings)],
                        columns=["setting", "metric", "test_auprc"]).sample(frac=1, random_state=1)
    table = build_table4(tidy, metric_order=metrics, setting_order=settings)
    assert table.columns.tolist() == ["metric", "s1", "s2", "s3", "mean_auprc", "mean_rank"]
    assert table["metric"].tolist() == metrics
    np.testing.assert_allclose(table[settings].to_numpy(), values)
    np.testing.assert_allclose(table["mean_auprc"], values.mean(axis=1))
    expected_ranks = np.column_stack([rankdata(-values[:, j]) for j in range(3)]).mean(axis=1)
    np.testing.assert_allclose(table["mean_rank"], expected_ranks)


def test_table4_rejects_duplicates_and_gaps() -> None:
    tidy = pd.DataFrame({"setting": ["s", "s"], "metric": ["a", "a"], "test_auprc": [0.1, 0.2]})
    with pytest.raises(ValueError, match="more than once"):
        build_table4(tidy, metric_order=["a"], setting_order=["s"])
    with pytest.raises(ValueError, match="lack settings"):
        build_table4(tidy.iloc[:1], metric_order=["a"], setting_order=["s", "t"])


def test_evaluate_metric_takes_combinations_and_picks_the_best_validation_alpha() -> None:
    """App. E.9 scores ``hmean:`` combinations by meta-AUPRC; α is the grid point of best validation AUPRC."""
    rng = np.random.default_rng(5)
    concepts = (rng.random((800, 6)) < 0.1).astype(np.float32)
    activations = concepts + 0.6 * rng.standard_normal((800, 6)).astype(np.float32)
    truth = np.eye(6, dtype=bool)
    metric, grid = "hmean:auc+inverse_auc", [0.02, 0.1, 0.3]
    result = evaluate_metric(metric, activations, concepts, truth, val_units=np.array([0, 1]),
                             test_units=np.arange(2, 6), alpha_grid=grid, lam_grid=[0.0])
    by_alpha = {alpha: score(metric, activations, concepts, alpha=alpha) for alpha in grid}
    val = {alpha: meta_auprc(scores[:2], truth[:2]) for alpha, scores in by_alpha.items()}
    best = max(grid, key=lambda alpha: (val[alpha], -grid.index(alpha)))
    assert result.params == {"alpha": best} and result.val_auprc == pytest.approx(val[best])
    assert result.test_auprc == pytest.approx(meta_auprc(by_alpha[best][2:], truth[2:]))


@pytest.mark.parametrize(("metric", "alpha_grid", "lam_grid"), [("iou", [0.3], [0.0]), ("wpmi", [0.3], [0.5])])
def test_a_one_point_grid_scores_at_that_point(metric: str, alpha_grid: list[float], lam_grid: list[float]) -> None:
    """With one grid point there is nothing to choose, but the scores are still those at that point (the sanity
    tests pass the truth's α alone): equal to ``score`` at α (and λ), and unlike the metric's default α."""
    rng = np.random.default_rng(11)
    concepts = (rng.random((500, 5)) < 0.3).astype(np.float64)
    activations = concepts + 0.9 * rng.standard_normal((500, 5))
    truth = np.eye(5, dtype=bool)
    val_units, test_units = np.array([0, 1]), np.array([2, 3, 4])
    result = evaluate_metric(metric, activations, concepts, truth, val_units=val_units, test_units=test_units,
                             alpha_grid=alpha_grid, lam_grid=lam_grid)
    point = {"alpha": alpha_grid[0], **({"lam": lam_grid[0]} if metric == "wpmi" else {})}
    at_point = score(metric, activations, concepts, **point)
    assert result.params == point
    assert result.val_auprc == pytest.approx(meta_auprc(at_point[val_units], truth[val_units]))
    assert result.test_auprc == pytest.approx(meta_auprc(at_point[test_units], truth[test_units]))
    default = score(metric, activations, concepts)
    assert not np.allclose(default, at_point)  # the old path scored here and reported α as chosen


@pytest.mark.parametrize("metric", ["wpmi", "correlation", "iou"])
def test_evaluate_metric_matches_scoring_every_grid_point(metric: str) -> None:
    """The shared-pass grid search (WPMI interpolated in λ) equals one full ``score`` call per grid point."""
    rng = np.random.default_rng(8)
    concepts = (rng.random((600, 7)) < 0.15).astype(np.float64)
    activations = concepts[:, ::-1] + 0.8 * rng.standard_normal((600, 7))
    truth = np.fliplr(np.eye(7, dtype=bool))
    alphas, lams = [0.01, 0.05, 0.2], [0.0, 0.3, 1.0]
    val_units, test_units = np.array([1, 4]), np.array([0, 2, 3, 5, 6])
    result = evaluate_metric(metric, activations, concepts, truth, val_units=val_units, test_units=test_units,
                             alpha_grid=alphas, lam_grid=lams,
                             options=MetricOptions(seed=3))
    spec_params = get_spec(metric).params
    points = [{}]
    if "alpha" in spec_params:
        points = [{"alpha": alpha} for alpha in alphas]
    if "lam" in spec_params:
        points = [{**point, "lam": lam} for point in points for lam in lams]
    full = [score(metric, activations, concepts, seed=3, **point) for point in points]
    val = [meta_auprc(scores[val_units], truth[val_units]) for scores in full]
    best = next(i for i, value in enumerate(val) if value >= max(val) * (1 - 1e-12))  # first of (float-)tied maxima
    assert dict(result.params) == points[best] and result.val_auprc == pytest.approx(val[best], abs=1e-12)
    assert result.test_auprc == pytest.approx(meta_auprc(full[best][test_units], truth[test_units]), abs=1e-12)


def test_bootstrap_interval_equals_explicit_resampling_of_units() -> None:
    """Oracle: draw the same unit multiplicities, repeat the rows explicitly and score with meta_auprc."""
    from neuroneval.meta.auprc import bootstrap_meta_auprc

    rng = np.random.default_rng(1)
    scores = np.round(rng.normal(size=(30, 12)), 1)  # rounded: many tied scores
    truth = np.zeros((30, 12), dtype=bool)
    truth[np.arange(30), rng.integers(0, 12, 30)] = True
    scores[truth] += 1.0
    low, high = bootstrap_meta_auprc(scores, truth, n_boot=300, seed=5, level=0.9)
    counts = np.random.default_rng(5).multinomial(30, np.full(30, 1 / 30), size=300)
    values = [meta_auprc(scores[np.repeat(np.arange(30), c)], truth[np.repeat(np.arange(30), c)]) for c in counts]
    assert low == pytest.approx(np.quantile(values, 0.05), abs=1e-12)
    assert high == pytest.approx(np.quantile(values, 0.95), abs=1e-12)
    assert low <= meta_auprc(scores, truth) <= high
    flipped = bootstrap_meta_auprc(-scores, truth, n_boot=300, seed=5, level=0.9, higher_is_better=False)
    assert flipped == pytest.approx((low, high))
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_meta_auprc(scores, truth, n_boot=0, seed=0)


def test_evaluate_setting_reports_the_interval_and_the_ceiling_of_label_units() -> None:
    """Ideal units built from labels are their concepts: correlation scores them perfectly (ceiling 1)."""
    from neuroneval.meta import MetaOptions, ceiling_frame, evaluate_setting, ideal_units_from_labels
    from neuroneval.settings import SettingData

    rng = np.random.default_rng(2)
    n, n_concepts = 2000, 20
    labels = (rng.random((n, n_concepts)) < np.linspace(0.01, 0.3, n_concepts)).astype(np.float32)
    noisy = labels + rng.normal(scale=0.8, size=labels.shape).astype(np.float32)
    names = [f"c{j}" for j in range(n_concepts)]
    units = [f"u{j}" for j in range(n_concepts)]
    data = SettingData(noisy, units, labels, names, {u: [c] for u, c in zip(units, names, strict=True)})
    truth = pd.DataFrame({"unit": units, "concept": names})
    options = MetaOptions(metrics=("correlation", "iou"), alpha_grid=(0.01, 0.1), lam_grid=(0.0,),
                          min_val_units=5, n_boot=50)
    rows = evaluate_setting(data, truth, options, setting="toy", progress=False)
    assert list(rows["metric"]) == ["correlation", "iou"] and set(rows["val_units"]) == {5}
    assert (rows["ci_low"] <= rows["test_auprc"]).all() and (rows["test_auprc"] <= rows["ci_high"]).all()
    assert rows["chance_auprc"].tolist() == [pytest.approx(1 / n_concepts)] * 2  # one correct concept per unit
    ideal = ideal_units_from_labels(data, truth, labels, names)
    ceiling = ceiling_frame(evaluate_setting(ideal, truth, options, setting="toy", progress=False),
                            ideal_source="labels")
    assert list(ceiling.columns[:5]) == ["setting", "metric", "ties", "meta_auprc", "ideal_source"]
    by_metric = ceiling.set_index("metric")["meta_auprc"]
    assert by_metric["correlation"] == pytest.approx(1.0)
    assert by_metric.max() >= rows["test_auprc"].max()


def test_own_concept_first_against_a_per_unit_loop() -> None:
    """Share of units whose best concept is theirs, against an explicit loop (ties at the top count as wrong)."""
    from neuroneval.meta import own_concept_first

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(40, 7)).astype(float)  # many ties
    truth = np.zeros((40, 7), dtype=bool)
    truth[np.arange(40), rng.integers(0, 7, size=40)] = True
    truth[:3] = False  # units without a known concept are skipped
    truth[5, [1, 2]] = True  # two correct concepts
    for higher in (True, False):
        signed = scores if higher else -scores
        expected = []
        for k in range(3, 40):
            best = np.flatnonzero(signed[k] == signed[k].max())
            expected.append(all(truth[k, best]))
        assert own_concept_first(scores, truth, higher_is_better=higher) == pytest.approx(np.mean(expected))
    with pytest.raises(ValueError, match="shape"):
        own_concept_first(scores, truth[:, :3])


def test_bootstrap_checkpoint_and_cumsum_paths_agree(monkeypatch) -> None:
    """The checkpoint matrices (small settings) and the per-replicate cumulative sums (large ones) give the same
    interval, units with several correct concepts and tied scores included."""
    from neuroneval.meta import auprc

    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=(40, 25)), 1)
    truth = rng.random((40, 25)) < 0.06
    truth[np.arange(40), rng.integers(0, 25, 40)] = True
    scores[truth] += 0.8
    fast = auprc.bootstrap_meta_auprc(scores, truth, n_boot=200, seed=2, level=0.8)
    monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", 0)
    slow = auprc.bootstrap_meta_auprc(scores, truth, n_boot=200, seed=2, level=0.8)
    assert fast == pytest.approx(slow, abs=1e-12)

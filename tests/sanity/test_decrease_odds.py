"""The closed-form expected Decrease Acc of binary metrics under random Missing Labels
(:mod:`neuroneval.sanity.decrease_odds`), against three independent oracles: the metric engine's scores for the
count formulas, an enumeration of every subset of removed labels for the odds, and the experimental test itself
(many random draws) for the expectation over a setting's pairs."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from neuroneval.metrics import NeuronEvalWarning, options_for, score_pairs
from neuroneval.sanity.decrease_odds import (
    COUNT_METRICS,
    decrease_odds,
    expected_missing_decrease,
    pair_counts,
)
from neuroneval.sanity.experimental import experimental_test


def _pair_data(counts: list[tuple[int, int, int]], n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One binary unit and one concept per (TP, |B(a)|, |B(c)|) triple, inputs placed at random: the unit's active
    inputs score 1 (the rest 0), so top-α at α = |B(a)|/n selects exactly them."""
    rng = np.random.default_rng(seed)
    units, concepts = np.zeros((n, len(counts))), np.zeros((n, len(counts)))
    for column, (tp, active, positives) in enumerate(counts):
        order = rng.permutation(n)
        both, unit_only = order[:tp], order[tp:active]
        concept_only = order[active:active + positives - tp]
        units[np.r_[both, unit_only], column] = 1.0
        concepts[np.r_[both, concept_only], column] = 1.0
    return units.astype(np.float32), concepts.astype(np.float32)


@pytest.mark.parametrize("metric", sorted(COUNT_METRICS))
def test_count_formulas_equal_the_engine(metric: str) -> None:
    """Each formula on (TP, |B(a)|, |B(c)|, n) equals the engine's score of vectors with those counts, degenerate
    ones (TP = 0, no positive) included."""
    n = 400
    counts = [(3, 8, 20), (0, 8, 20), (8, 8, 8), (5, 8, 300), (0, 8, 0), (2, 8, 3)]
    units, concepts = _pair_data(counts, n, seed=1)
    pairs = np.array([[k, k] for k in range(len(counts))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NeuronEvalWarning)
        engine = score_pairs(metric, units, concepts, pairs, alpha=8 / n)
    tp, active, positives = (np.array(column) for column in zip(*counts, strict=True))
    np.testing.assert_allclose(COUNT_METRICS[metric](tp, active, positives, n), engine, rtol=1e-12, atol=1e-12)


def _enumerated_odds(metric: str, tp: int, active: int, positives: int, n: int, keep: float,
                     epsilon: float) -> float:
    """Every subset of removed labels with its probability: Σ over 2**|B(c)| keep/remove patterns."""
    formula = COUNT_METRICS[metric]
    before = formula(np.asarray(tp), np.asarray(active), np.asarray(positives), n)
    total = 0.0
    for removed in itertools.product((0, 1), repeat=positives):
        weight = np.prod([(1 - keep) if bit else keep for bit in removed])
        removed_tp = sum(removed[:tp])
        after = formula(np.asarray(tp - removed_tp), np.asarray(active), np.asarray(positives - sum(removed)), n)
        total += weight * float(after - before < -epsilon)
    return total


@pytest.mark.parametrize("metric", sorted(COUNT_METRICS))
@pytest.mark.parametrize(("tp", "active", "positives", "keep"), [(2, 3, 9, 0.5), (0, 4, 6, 0.5), (4, 4, 10, 0.33),
                                                                  (3, 12, 5, 0.75), (5, 5, 5, 0.5)])
def test_odds_equal_the_enumeration_of_removed_labels(metric: str, tp: int, active: int, positives: int,
                                                      keep: float) -> None:
    n = 60
    expected = _enumerated_odds(metric, tp, active, positives, n, keep, epsilon=1e-3)
    got = decrease_odds(metric, tp, active, positives, n, keep=keep, epsilon=1e-3)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("metric", ["f1", "iou", "recall", "precision", "auprc"])
def test_expectation_equals_the_experimental_test_over_many_seeds(metric: str) -> None:
    """The mean odds over pairs equal the workflow's one-draw experimental test (each draw its own seed) averaged
    over 120 seeds, within 4 standard errors; the F1 case of a small top set against large concepts sits near one
    half, far from the pass mark."""
    n, seeds = 3000, 120
    counts = [(5, 5, 90), (3, 5, 90), (5, 5, 40), (20, 25, 60), (1, 5, 120)]
    units, concepts = _pair_data(counts, n, seed=7)
    pairs = np.array([[k, k] for k in range(len(counts))])
    alpha = 5 / n
    expected = expected_missing_decrease(metric, units, concepts, pairs, alpha=alpha, keep=0.5, epsilon=1e-3)
    options = options_for(metric, alpha=alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NeuronEvalWarning)
        measured = np.mean([float(experimental_test(metric, units, concepts, pairs, tests=["missing"], draws=1,
                                                    epsilon=1e-3, keep=0.5, seed=seed,
                                                    options=options)["decrease_acc"].iloc[0])
                            for seed in range(seeds)])
    standard_error = np.sqrt(expected * (1 - expected) / (seeds * len(counts)))
    assert abs(measured - expected) <= 4 * standard_error + 1e-9
    if metric == "f1":
        assert 0.3 < expected < 0.8


def test_pair_counts_follow_the_top_alpha_rule_and_rounding() -> None:
    """Ties at the k-th largest activation are all active (the engine's default rule); B(c) is c ≥ 0.5."""
    activations = np.array([[3.0, 0.1], [2.0, 0.9], [2.0, 0.2], [1.0, 0.4], [0.0, 0.6]])
    concepts = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5], [1.0, 0.49], [0.0, 1.0]])
    counts = pair_counts(activations, concepts, np.array([[0, 0], [1, 1]]), alpha=0.4)
    assert counts.tolist() == [[2, 3, 3], [2, 2, 3]]


def test_impossible_counts_and_unknown_metrics_are_refused() -> None:
    with pytest.raises(ValueError, match="TP = 6"):
        decrease_odds("f1", 6, 5, 90, 1000, keep=0.5, epsilon=1e-3)
    with pytest.raises(ValueError, match="no closed form for 'auc'"):
        decrease_odds("auc", 1, 5, 90, 1000, keep=0.5, epsilon=1e-3)
    with pytest.raises(ValueError, match="keep"):
        decrease_odds("f1", 1, 5, 90, 1000, keep=0.0, epsilon=1e-3)


def test_pair_counts_read_each_pairs_own_unit_and_concept() -> None:
    """Pairs whose unit and concept indices differ (and a flat list of pairs): TP, |B(a)|, |B(c)| against the
    per-vector reference top-α and a threshold at 0.5, pair by pair."""
    from neuroneval.metrics.reference import top_alpha as reference_top_alpha

    rng = np.random.default_rng(4)
    activations = rng.standard_normal((40, 3))
    concepts = np.round(rng.random((40, 4)), 2)
    pairs = [(0, 3), (2, 1), (1, 0)]
    counts = pair_counts(activations, concepts, np.ravel(pairs), alpha=0.2)
    for (unit, concept), row in zip(pairs, counts, strict=True):
        active = reference_top_alpha(activations[:, unit], 0.2)
        labels = concepts[:, concept] >= 0.5
        assert row.tolist() == [int((active & labels).sum()), int(active.sum()), int(labels.sum())]


def test_the_bounds_of_keep_and_the_counts_are_inclusive_where_they_should_be() -> None:
    """keep (r₋) lies in (0, 1]: 1 removes nothing (odds 0), 0, below 0 and above 1 are refused; counts may equal n
    (every input active or positive) and TP may be 0 (nothing to remove: odds 0), but not −1."""
    assert decrease_odds("recall", 3, 5, 8, 100, keep=1.0, epsilon=1e-3) == 0.0
    for keep in (-0.5, 1.5):
        with pytest.raises(ValueError, match="keep"):
            decrease_odds("recall", 3, 5, 8, 100, keep=keep, epsilon=1e-3)
    assert decrease_odds("recall", 2, 4, 4, 4, keep=0.5, epsilon=1e-3) == pytest.approx(1 - 0.5**2)
    assert decrease_odds("f1", 0, 4, 3, 10, keep=0.5, epsilon=1e-3) == 0.0
    with pytest.raises(ValueError, match="TP = -1"):
        decrease_odds("f1", -1, 4, 3, 10, keep=0.5, epsilon=1e-3)


def test_options_are_keyword_only() -> None:
    from neuroneval.sanity.decrease_odds import mean_decrease_odds

    with pytest.raises(TypeError):
        pair_counts(np.ones((4, 1)), np.ones((4, 1)), [(0, 0)], 0.5)
    with pytest.raises(TypeError):
        mean_decrease_odds("f1", np.array([[1, 2, 2]]), 10, 0.5, 1e-3)
    with pytest.raises(TypeError):
        decrease_odds("f1", 1, 2, 2, 10, 0.5, 1e-3)
    with pytest.raises(TypeError):
        expected_missing_decrease("f1", np.ones((4, 1)), np.ones((4, 1)), [(0, 0)], 0.5, 0.5, 1e-3)


def test_a_drop_of_exactly_epsilon_is_no_decrease() -> None:
    """Eq. 11 counts Δs < −ε strictly: recall 2/4 → 1/4 drops by exactly ε = 0.25 (exact in binary), so only losing
    both true positives (probability 0.5² at keep 0.5) counts."""
    assert decrease_odds("recall", 2, 4, 2, 10, keep=0.5, epsilon=0.25) == 0.25

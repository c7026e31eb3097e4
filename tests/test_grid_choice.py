"""The tie rule of every hyperparameter search (neuroneval.grid_choice): float-sum ties are ties, the first tied
point wins, real differences are not ties; checked against exact rational arithmetic and against sklearn."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from neuroneval.grid_choice import GRID_TIE_RTOL, first_best_index, grid_all_tied, tied_with_best
from neuroneval.meta.auprc import meta_auprc


def _exact_first_best(values: list[Fraction]) -> int:
    """The authors' rule in exact arithmetic: the first grid point whose value is the maximum."""
    return values.index(max(values))


def test_average_precision_computed_two_ways_ties_and_keeps_the_first_point() -> None:
    """A perfect ranking of 17 positives among 289 pairs: our step-wise sum gives 0.9999999999999999, sklearn's
    1.0 — one value (exactly 1) summed in two orders. ``np.argmax`` keeps the second; the tie rule the first."""
    rng = np.random.default_rng(0)
    truth = np.eye(17, dtype=bool)
    scores = np.where(truth, 1.0 + rng.random((17, 17)), 0.5 * rng.random((17, 17)))
    ours, sklearns = meta_auprc(scores, truth), average_precision_score(truth.ravel(), scores.ravel())
    assert ours != sklearns and abs(ours - sklearns) <= 2 * np.spacing(1.0)  # they differ in the last ulp
    values = [ours, sklearns]
    assert int(np.argmax(values)) == 1  # the old rule: the ulp decides
    assert first_best_index(values) == _exact_first_best([Fraction(1), Fraction(1)]) == 0
    assert grid_all_tied(values)


def test_the_best_point_need_not_be_the_first() -> None:
    """A real gap (≥ 1e-9) is no tie: the best point wins wherever it is, with float-sum ties behind it."""
    exact = [Fraction(8, 10), sum([Fraction(1, 10)] * 10, Fraction(0)), Fraction(1), Fraction(1) - Fraction(1, 10**9)]
    values = [0.8, sum([0.1] * 10), 1.0, 1 - 1e-9]  # ten 0.1s sum to 0.9999999999999999: a float tie with 1
    assert values[1] < values[2] and int(np.argmax(values)) == 2  # "the exact maximum" would pick the third
    assert first_best_index(values) == _exact_first_best(exact) == 1
    assert not grid_all_tied(values)
    assert tied_with_best(values).tolist() == [False, True, True, False]


def test_lower_is_better_and_one_point_grids() -> None:
    rce = [0.3, 0.1 + 0.2, 0.2]  # 0.30000000000000004 ties with 0.3; 0.2 is the real minimum
    assert first_best_index(rce, higher_is_better=False) == 2
    assert first_best_index([0.1 + 0.2, 0.3, 0.4], higher_is_better=False) == 0
    assert first_best_index([np.inf, np.inf], higher_is_better=False) == 0
    assert first_best_index([np.inf, 0.5, 0.4], higher_is_better=False) == 2  # an unscored point never wins
    assert first_best_index([0.7]) == 0 and not grid_all_tied([0.7])


def test_the_tolerance_is_relative() -> None:
    """Near zero, only values as small as each other tie; ``rtol = 0`` is ``np.argmax``."""
    assert first_best_index([1e-20, 2e-20]) == 1
    assert first_best_index([1e-20, 1e-20 * (1 + GRID_TIE_RTOL / 2)]) == 0
    values = [1.0 - 2e-16, 1.0]
    assert first_best_index(values, rtol=0.0) == int(np.argmax(values)) == 1


@pytest.mark.parametrize("values", [[], [[0.1, 0.2]], [0.1, np.nan]])
def test_bad_values_are_a_clear_error(values: list) -> None:
    with pytest.raises(ValueError, match="grid"):
        first_best_index(values)


def test_a_negative_tolerance_is_an_error() -> None:
    with pytest.raises(ValueError, match="rtol must be >= 0"):
        tied_with_best([0.1, 0.2], rtol=-1.0)


def test_random_grids_match_exact_rational_averages() -> None:
    """Oracle: the mean of k fractions, summed exactly; floats sum them in another order. Grids mix copies of one
    mean (float-sum ties) with other means (real differences), and the rule must pick the exact first maximum."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        pool = [[Fraction(int(n), int(d)) for n, d in zip(rng.integers(1, 50, 7), rng.integers(50, 99, 7),
                                                          strict=True)] for _ in range(3)]
        terms = [pool[int(rng.integers(0, 3))] for _ in range(5)]
        exact = [sum(group, Fraction(0)) / len(group) for group in terms]
        values = [float(np.sum([float(term) for term in rng.permutation(np.array(group, dtype=object))])) / len(group)
                  for group in terms]
        assert first_best_index(values) == _exact_first_best(exact)
        assert grid_all_tied(values) == (len(set(exact)) == 1)

"""CoSy scores against independent oracles: sklearn's ROC AUC, the Mann–Whitney test counted by hand
(tests/oracles.py: pairs, the exact rank-sum distribution, the normal approximation), hand closed forms."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from neuroneval.cosy.scoring import EXACT_MAX_SAMPLE, cosy_scores, mann_whitney_two_sided
from tests.oracles import (
    EXACT_MANN_WHITNEY_MAX,
    mann_whitney_exact_p,
    mann_whitney_normal_p,
    mann_whitney_p,
    mann_whitney_u,
)


def _reference(control: np.ndarray, synthetic: np.ndarray) -> tuple[float, float, float, float]:
    """sklearn's ROC AUC, the closed-form MAD and the two-sided test under scipy's documented ``auto`` rule
    (counted in tests/oracles.py, no scipy), on one unit."""
    label = np.r_[np.zeros(len(control)), np.ones(len(synthetic))]
    auc = roc_auc_score(label, np.r_[control, synthetic])
    mad = (synthetic.mean() - control.mean()) / control.std(ddof=1)
    return auc, mad, mann_whitney_u(list(synthetic), list(control)), mann_whitney_p(list(synthetic), list(control))


@pytest.mark.parametrize("ties", [False, True])
def test_matches_sklearn_and_the_counted_test(ties: bool) -> None:
    rng = np.random.default_rng(3)
    control = rng.normal(size=(400, 6))
    synthetic = rng.normal(0.4, 1.3, size=(30, 6))
    if ties:
        control, synthetic = np.round(control), np.round(synthetic)
    scores = cosy_scores(control, synthetic)
    for k in range(6):
        auc, mad, u, p_value = _reference(control[:, k], synthetic[:, k])
        assert scores["auc"][k] == pytest.approx(auc, abs=1e-12)
        assert scores["mad"][k] == pytest.approx(mad, rel=1e-12)
        assert scores["u"][k] == u == pytest.approx(auc * 400 * 30, abs=1e-6)
        assert scores["p_value"][k] == pytest.approx(p_value, rel=1e-9)


@pytest.mark.parametrize(("n_synthetic", "n_control"), [(3, 5), (8, 40), (40, 8), (9, 9), (6, 200)])
def test_two_sided_p_follows_the_auto_rule_per_unit(n_synthetic: int, n_control: int) -> None:
    """Small samples without ties take the exact distribution, tied or large ones the normal approximation —
    unit by unit, even when the units of one batch need different methods (a batched scipy call would not).
    Oracle: U by pairs, the exact p by counting rank sums, the normal p in closed form (tests/oracles.py)."""
    assert EXACT_MAX_SAMPLE == EXACT_MANN_WHITNEY_MAX
    rng = np.random.default_rng(n_synthetic * 100 + n_control)
    control = rng.normal(size=(n_control, 7))
    synthetic = rng.normal(0.8, 1.0, size=(n_synthetic, 7))
    control[:, 1], synthetic[:, 1] = np.round(control[:, 1]), np.round(synthetic[:, 1])  # ties
    synthetic[0, 2] = control[0, 2]  # one tie across the samples
    synthetic[:, 3] = control.max(axis=0)[3] + 1 + np.arange(n_synthetic)  # separated: the most extreme U
    u, p_value = mann_whitney_two_sided(synthetic, control)
    for k in range(7):
        first, second = list(synthetic[:, k]), list(control[:, k])
        assert u[k] == mann_whitney_u(first, second)
        exact = min(n_synthetic, n_control) <= EXACT_MANN_WHITNEY_MAX and k not in (1, 2)
        expected = mann_whitney_exact_p(first, second) if exact else mann_whitney_normal_p(first, second)
        assert p_value[k] == pytest.approx(expected, rel=1e-9, abs=1e-300), (k, exact)


def test_exact_p_by_enumeration() -> None:
    """Two-sided exact p = share of all C(m+n, m) splits whose U is at least as far from m n / 2 (brute force)."""
    from itertools import combinations

    rng = np.random.default_rng(11)
    control, synthetic = rng.normal(size=6), rng.normal(1.0, 1.0, size=4)
    pooled = np.r_[synthetic, control]
    ranks = pooled.argsort().argsort() + 1.0

    def u_of(positions: tuple[int, ...]) -> float:
        return ranks[list(positions)].sum() - len(positions) * (len(positions) + 1) / 2

    observed = u_of(tuple(range(4)))
    centre = 4 * 6 / 2
    splits = [u_of(positions) for positions in combinations(range(10), 4)]
    brute = np.mean([abs(value - centre) >= abs(observed - centre) - 1e-9 for value in splits])
    u, p_value = mann_whitney_two_sided(synthetic[:, None], control[:, None])
    assert u[0] == observed
    assert p_value[0] == pytest.approx(min(1.0, brute), rel=1e-12)


def test_asymptotic_p_by_normal_approximation() -> None:
    """Large samples: ``2 · (1 − Φ(z))`` with the tie-corrected variance and continuity ½ (closed form)."""
    from scipy.special import ndtr

    rng = np.random.default_rng(5)
    control, synthetic = np.round(rng.normal(size=300), 1), np.round(rng.normal(0.2, 1.0, size=50), 1)
    pooled = np.r_[synthetic, control]
    m, n = len(synthetic), len(control)
    u = (synthetic[:, None] > control[None, :]).sum() + 0.5 * (synthetic[:, None] == control[None, :]).sum()
    _, counts = np.unique(pooled, return_counts=True)
    variance = m * n / 12 * ((m + n + 1) - (counts**3 - counts).sum() / ((m + n) * (m + n - 1)))
    z = (max(u, m * n - u) - m * n / 2 - 0.5) / np.sqrt(variance)
    got_u, p_value = mann_whitney_two_sided(synthetic[:, None], control[:, None])
    assert got_u[0] == u
    assert p_value[0] == pytest.approx(2 * ndtr(-z), rel=1e-10)


def test_eq3_by_hand() -> None:
    # Eq. 3 pair count: synthetic 2 beats control 0, 1 and ties 2 (1/2); synthetic 4 beats all four -> 6.5 / 8
    scores = cosy_scores(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 4.0]))
    assert scores["auc"][0] == 0.8125 and scores["u"][0] == 6.5
    assert scores["mad"][0] == pytest.approx(1.5 / np.sqrt(5 / 3))


def test_separated_sets_give_extreme_scores() -> None:
    scores = cosy_scores(np.arange(10.0), np.arange(10.0) + 100)
    assert scores["auc"][0] == 1.0
    assert scores["p_value"][0] < 1e-3
    reverse = cosy_scores(np.arange(10.0) + 100, np.arange(10.0))
    assert reverse["auc"][0] == 0.0 and reverse["mad"][0] < 0


def _reference_mad(control: np.ndarray, synthetic: np.ndarray) -> float:
    """A transcription of the authors' rule (lkopf/cosy ``src/evaluation.py``): 0 when the control std is 0."""
    spread = float(np.std(control, ddof=1))  # torch's Tensor.std is the unbiased (n − 1) estimator
    return 0.0 if spread == 0 else (float(np.mean(synthetic)) - float(np.mean(control))) / spread


@pytest.mark.parametrize(("synthetic", "above", "below"), [
    ([2.0, 3.0], 1, 0),    # synthetic above the constant: Eq. 4 would be +inf
    ([0.25, 0.5], 0, 1),   # below it: −inf
])
def test_constant_control_gives_the_reference_zero_mad_for_either_sign(synthetic: list[float], above: int,
                                                                        below: int) -> None:
    control = np.ones(5)
    message = rf"\({above} with a higher, {below} with a lower synthetic mean\): MAD is 0"
    with pytest.warns(RuntimeWarning, match=message):
        scores = cosy_scores(control, np.array(synthetic))
    assert scores["mad"][0] == 0.0 == _reference_mad(control, np.array(synthetic))
    assert scores["auc"][0] == above  # every synthetic value above (AUC 1) or below (AUC 0) the constant


def test_constant_control_with_the_same_synthetic_mean_gives_zero_mad_silently() -> None:
    # dead unit: constant 0 on control and synthetic images -> Eq. 4's numerator is 0, MAD 0, nothing hidden
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cosy_scores(np.zeros((6, 2)), np.array([[0.0, 1.0], [0.0, 1.0]]) * [[1, 0]])
    assert scores["mad"].tolist() == [0.0, 0.0] and scores["auc"].tolist() == [0.5, 0.5]


def test_constant_control_units_are_scored_beside_ordinary_ones() -> None:
    control = np.column_stack([np.ones(5), np.arange(5.0)])
    synthetic = np.array([[2.0, 0.5], [3.0, 1.0]])
    with pytest.warns(RuntimeWarning, match="1 unit"):
        scores = cosy_scores(control, synthetic)
    assert scores["mad"][0] == 0.0
    assert scores["mad"][1] == pytest.approx((0.75 - 2.0) / np.sqrt(2.5))  # closed form: var(0..4, ddof 1) = 2.5
    assert scores["mad"][1] == pytest.approx(_reference_mad(control[:, 1], synthetic[:, 1]))
    # 0.5 beats 0 (1 pair), 1.0 beats 0 and ties 1 (1.5 pairs): 2.5 / 10, as sklearn's ROC AUC
    assert scores["auc"].tolist() == [1.0, 0.25]
    pooled = np.concatenate([control[:, 1], synthetic[:, 1]])
    assert scores["auc"][1] == pytest.approx(roc_auc_score([0] * 5 + [1] * 2, pooled))


def test_single_control_image_gives_nan_mad_with_warning() -> None:
    with pytest.warns(RuntimeWarning, match="one control image"):
        scores = cosy_scores(np.array([[1.0]]), np.array([[2.0], [3.0]]))
    assert np.isnan(scores["mad"][0]) and scores["auc"][0] == 1.0


@pytest.mark.parametrize(("control", "synthetic", "message"), [
    (np.zeros((0, 2)), np.ones((3, 2)), "control_activations is empty"),
    (np.ones((4, 2)), np.zeros((0, 2)), "synthetic_activations is empty"),
    (np.ones((4, 2)), np.ones((3, 3)), "control has 2 units but synthetic has 3"),
    (np.array([1.0, np.nan]), np.ones(3), "non-finite"),
])
def test_bad_input(control: np.ndarray, synthetic: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cosy_scores(control, synthetic)


def test_the_warning_counts_constant_units_by_direction_at_the_callers_line() -> None:
    """Three constant units with a higher synthetic mean (one by only 0.5), one with a lower; the warning is
    reported at the line that called ``cosy_scores``."""
    control = np.column_stack([np.ones(4), np.ones(4), np.ones(4), np.ones(4), np.arange(4.0)])
    synthetic = np.array([[3.0, 1.5, 2.0, 0.0, 1.0], [3.0, 1.5, 4.0, 0.5, 2.0]])
    with pytest.warns(RuntimeWarning) as record:
        scores = cosy_scores(control, synthetic)
    assert len(record) == 1 and record[0].filename == __file__
    assert str(record[0].message).startswith("4 unit(s) are constant on the control images but not on the "
                                             "synthetic ones (3 with a higher, 1 with a lower synthetic mean)")
    assert scores["mad"][:4].tolist() == [0.0] * 4


def test_a_single_control_image_warns_at_the_callers_line_and_gives_nan_for_every_unit() -> None:
    with pytest.warns(RuntimeWarning, match="one control image") as record:
        scores = cosy_scores(np.array([[1.0, 2.0]]), np.array([[2.0, 0.0], [3.0, 1.0], [4.0, 5.0]]))
    assert record[0].filename == __file__
    assert scores["mad"].shape == (2,) and np.isnan(scores["mad"]).all()


def test_two_control_images_define_mad() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cosy_scores(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
    assert scores["mad"][0] == pytest.approx((2.5 - 0.5) / np.std([0.0, 1.0], ddof=1))


def test_many_units_are_scored_when_both_sides_have_them() -> None:
    rng = np.random.default_rng(0)
    control, synthetic = rng.normal(size=(6, 300)), rng.normal(size=(4, 300)) + 1.0
    scores = cosy_scores(control, synthetic)
    assert scores["auc"].shape == (300,)
    assert scores["auc"][7] == pytest.approx(roc_auc_score([0] * 6 + [1] * 4, np.r_[control[:, 7], synthetic[:, 7]]))


@pytest.mark.parametrize(("control", "synthetic", "message"), [
    (np.zeros((0, 2)), np.ones((3, 2)), "control_activations is empty: CoSy needs at least one control image"),
    (np.ones((4, 2)), np.zeros((0, 2)), "synthetic_activations is empty: CoSy needs at least one synthetic image"),
    (np.ones((4, 3)), np.ones((5, 2)), "control has 3 units but synthetic has 2"),
    (np.ones((4, 2)), np.ones((5, 3)), "control has 2 units but synthetic has 3"),
    (np.array(1.0), np.ones(3), r"control_activations must be \(n_images, n_units\), got shape \(\)"),
    (np.ones((4, 2)), np.ones((3, 2, 1)), r"synthetic_activations must be \(n_images, n_units\), got shape"),
])
def test_bad_input_is_named(control: np.ndarray, synthetic: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cosy_scores(control, synthetic)

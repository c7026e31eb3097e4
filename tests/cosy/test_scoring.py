"""CoSy scores against independent oracles: sklearn's ROC AUC, scipy's Mann–Whitney test, hand closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from sklearn.metrics import roc_auc_score

from neuroneval.cosy.scoring import cosy_scores


def _reference(control: np.ndarray, synthetic: np.ndarray) -> tuple[float, float, float]:
    label = np.r_[np.zeros(len(control)), np.ones(len(synthetic))]
    auc = roc_auc_score(label, np.r_[control, synthetic])
    mad = (synthetic.mean() - control.mean()) / control.std(ddof=1)
    p_value = mannwhitneyu(synthetic, control, alternative="greater", method="asymptotic").pvalue
    return auc, mad, p_value


@pytest.mark.parametrize("ties", [False, True])
def test_matches_sklearn_and_scipy(ties: bool) -> None:
    rng = np.random.default_rng(3)
    control = rng.normal(size=(400, 6))
    synthetic = rng.normal(0.4, 1.3, size=(30, 6))
    if ties:
        control, synthetic = np.round(control), np.round(synthetic)
    scores = cosy_scores(control, synthetic)
    for k in range(6):
        auc, mad, p_value = _reference(control[:, k], synthetic[:, k])
        assert scores["auc"][k] == pytest.approx(auc, abs=1e-12)
        assert scores["mad"][k] == pytest.approx(mad, rel=1e-12)
        assert scores["p_value"][k] == pytest.approx(p_value, rel=1e-9)


def test_eq3_by_hand() -> None:
    # Eq. 3 pair count: synthetic 2 beats control 0, 1 and ties 2 (1/2); synthetic 4 beats all four -> 6.5 / 8
    scores = cosy_scores(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 4.0]))
    assert scores["auc"][0] == 0.8125
    assert scores["mad"][0] == pytest.approx(1.5 / np.sqrt(5 / 3))


def test_separated_sets_give_extreme_scores() -> None:
    scores = cosy_scores(np.arange(10.0), np.arange(10.0) + 100)
    assert scores["auc"][0] == 1.0
    assert scores["p_value"][0] < 1e-3
    reverse = cosy_scores(np.arange(10.0) + 100, np.arange(10.0))
    assert reverse["auc"][0] == 0.0 and reverse["mad"][0] < 0


def test_constant_control_gives_nan_mad_with_warning() -> None:
    with pytest.warns(RuntimeWarning, match="constant on the control"):
        scores = cosy_scores(np.ones((5, 2)), np.array([[2.0, 0.5], [3.0, 1.0]]))
    assert np.isnan(scores["mad"]).all()
    assert scores["auc"].tolist() == [1.0, 0.25]  # 0.5 loses to all five 1s, 1.0 ties them: 2.5 / 10


@pytest.mark.parametrize(("control", "synthetic", "message"), [
    (np.zeros((0, 2)), np.ones((3, 2)), "control_activations is empty"),
    (np.ones((4, 2)), np.zeros((0, 2)), "synthetic_activations is empty"),
    (np.ones((4, 2)), np.ones((3, 3)), "control has 2 units but synthetic has 3"),
    (np.array([1.0, np.nan]), np.ones(3), "non-finite"),
])
def test_bad_input(control: np.ndarray, synthetic: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cosy_scores(control, synthetic)

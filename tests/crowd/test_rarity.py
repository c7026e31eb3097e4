"""Planted rarity study (neuroneval.crowd.rarity): the planted world has the advertised ρ, rarity and AUC."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import roc_auc_score

from neuroneval.crowd.rarity import RarityStudyOptions, planted_units, rarity_factors


@pytest.mark.parametrize("noise", ["lognormal", "gaussian"])
@pytest.mark.parametrize("rarity", [0.2, 0.01])
def test_planted_units_have_the_chosen_rarity_correlation_and_pseudo_label_auc(rarity: float, noise: str) -> None:
    options = RarityStudyOptions(n_inputs=40_000, n_units=6, true_correlation=0.5, pseudo_auc=0.9,
                                 activation_noise=noise)
    units = planted_units(rarity, options)
    assert units.labels.sum(axis=0).tolist() == [round(rarity * 40_000)] * 6
    for k in range(6):
        rho = pearsonr(units.activations[:, k], units.labels[:, k]).statistic
        assert units.rho_true[k] == pytest.approx(rho, abs=1e-9)
        assert rho == pytest.approx(0.5, abs=0.06)
        assert roc_auc_score(units.labels[:, k], units.pseudo_labels[:, k]) == pytest.approx(0.9, abs=0.03)
    # calibrated posterior: its mean is the base rate (law of total probability)
    assert units.pseudo_labels.mean() == pytest.approx(rarity, rel=0.1)


def test_each_rarity_world_is_independent_of_the_others_studied() -> None:
    first = planted_units(0.01, RarityStudyOptions(rarities=(0.01,)))
    second = planted_units(0.01, RarityStudyOptions(rarities=(0.1, 0.01)))
    np.testing.assert_array_equal(first.activations, second.activations)


def test_factor_is_the_ratio_of_costs_at_equal_error_and_the_study_is_deterministic() -> None:
    options = RarityStudyOptions(rarities=(0.01,), n_inputs=5_000, n_units=6, n_trials=3, n_boot=20,
                                 sample_sizes=(10, 30, 100, 300, 1000, 3000), costs=(20, 60, 200, 600),
                                 rater_counts=(1, 3))
    table = rarity_factors(options)
    assert len(table) == 5 and set(table["rarity"]) == {0.01}
    np.testing.assert_allclose(table["factor"], table["baseline_cost"] / table["method_cost"])
    assert table.equals(rarity_factors(options))


@pytest.mark.parametrize(("knobs", "message"), [
    ({"rarities": (0.0,)}, "rarities"),
    ({"rarities": (0.001,), "n_inputs": 100}, "no positive input"),
    ({"pseudo_auc": 0.4}, "pseudo_auc"),
    ({"activation_noise": "cauchy"}, "activation_noise"),
])
def test_invalid_options_name_the_knob(knobs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RarityStudyOptions(**knobs)


def test_from_params_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="unknown option 'rarity'"):
        RarityStudyOptions.from_params({"rarity": [0.1]})
    assert RarityStudyOptions.from_params({"rarities": [0.1, 0.01]}).rarities == (0.1, 0.01)

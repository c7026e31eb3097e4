"""The per-setting tables of the sanity workflow (experimental test of every metric, App. E ablations), checked
against the single-metric library calls they are built from."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.metrics import options_for
from neuroneval.sanity import decrease_accuracy, experimental_draw_deltas, experimental_test
from neuroneval.sanity.ablations import ABLATION_COLUMNS, ablation_table
from neuroneval.sanity.experimental_table import experimental_table
from neuroneval.sanity.options import SanityOptions
from neuroneval.sanity.units import SanityUnits, chosen_params

SANITY = SanityOptions.from_params({
    "ties": "average", "tie_metrics": ["auc"], "seed": 3, "epsilon": 0.001, "experimental": {"draws": 2},
    "ablations": {"keep": [0.33, 0.75], "multiplier": [1.5], "draws": [1, 3], "epsilons": [0.0, 0.01],
                  "subclass_rule": "largest"}})


@pytest.fixture(scope="module")
def units() -> SanityUnits:
    rng = np.random.default_rng(0)
    concepts = (rng.random((400, 4)) < [0.2, 0.1, 0.3, 0.05]).astype(np.float32)
    activations = (concepts[:, [0, 1, 2]] + rng.normal(scale=0.7, size=(400, 3))).astype(np.float32)
    truth = np.zeros((3, 4), bool)
    truth[[0, 1, 2], [0, 1, 2]] = True
    return SanityUnits(activations, concepts, ["a", "b", "c", "d"], truth, np.array([0]), np.array([1, 2]))


HYPERPARAMETERS = pd.DataFrame({"metric": ["iou", "auc", "correlation"], "alpha": [0.1, np.nan, np.nan],
                                "lam": [np.nan, np.nan, np.nan]}).set_index("metric")


def test_chosen_params_and_test_pairs(units: SanityUnits) -> None:
    assert chosen_params(HYPERPARAMETERS, "iou") == {"alpha": 0.1}
    assert chosen_params(HYPERPARAMETERS, "auc") == {}
    with pytest.raises(ValueError, match="'wpmi'"):
        chosen_params(HYPERPARAMETERS, "wpmi")
    np.testing.assert_array_equal(units.test_pairs, [[1, 1], [2, 2]])


def test_experimental_table_is_the_per_metric_test_in_every_tie_mode(units: SanityUnits) -> None:
    table = experimental_table(units, ["iou", "auc"], HYPERPARAMETERS, SANITY, setting="s", feature_cache_gib=0)
    assert SANITY.tie_modes("auc") == ["average", "reference"] and SANITY.tie_modes("iou") == ["average"]
    assert list(zip(table["metric"], table["ties"], strict=True))[::2] == [("iou", "average"), ("auc", "average"),
                                                                          ("auc", "reference")]
    assert table.columns[0] == "setting" and set(table["setting"]) == {"s"}
    direct = experimental_test("auc", units.activations, units.concepts, units.test_pairs, draws=2, epsilon=0.001,
                               seed=3, options=options_for("auc", ties="reference"))
    ours = table[(table["metric"] == "auc") & (table["ties"] == "reference")]
    np.testing.assert_allclose(ours["decrease_acc"], direct["decrease_acc"])
    assert (table.loc[table["metric"] == "iou", "alpha"] == 0.1).all()


def test_draws_ablation_agrees_with_the_experimental_test(units: SanityUnits) -> None:
    table = ablation_table("draws", units, ["correlation"], HYPERPARAMETERS, SANITY, setting="s")
    assert list(table.columns) == ABLATION_COLUMNS
    for test in ("missing", "extra"):
        at_base = experimental_test("correlation", units.activations, units.concepts, units.test_pairs,
                                    tests=[test], draws=2, epsilon=0.0, seed=3)
        row = table[(table["ablation"] == "epsilon") & (table["test"] == test) & (table["epsilon"] == 0.0)]
        assert float(row["decrease_acc"].iloc[0]) == pytest.approx(float(at_base["decrease_acc"].iloc[0]))
        deltas, *_ = experimental_draw_deltas("correlation", units.activations, units.concepts, units.test_pairs,
                                             test=test, draws=3, seed=3)
        row = table[(table["ablation"] == "draws") & (table["test"] == test) & (table["draws"] == 3)]
        assert float(row["decrease_acc"].iloc[0]) == pytest.approx(decrease_accuracy(deltas.mean(axis=1), 0.001))


def test_strength_ablation_rows_and_unknown_ablation(units: SanityUnits) -> None:
    table = ablation_table("strength", units, ["correlation"], HYPERPARAMETERS, SANITY, setting="s")
    assert sorted(table["test"]) == ["extra", "missing", "missing"]
    with pytest.raises(ValueError, match="unknown ablation 'size'"):
        ablation_table("size", units, ["correlation"], HYPERPARAMETERS, SANITY, setting="s")


def test_one_draw_missing_rows_of_binary_metrics_carry_their_closed_form(units: SanityUnits) -> None:
    """With one draw (the workflow's default) the random Missing Labels row of a binary metric carries the closed-form
    expected Decrease Acc and the median counts it is read by; every other row (another test, a rank metric, more
    draws) has NaN."""
    from neuroneval.sanity.decrease_odds import expected_missing_decrease, pair_counts

    one_draw = SanityOptions.from_params({"ties": "average", "tie_metrics": [], "seed": 3, "epsilon": 0.001,
                                          "experimental": {"draws": 1}})
    table = experimental_table(units, ["iou", "auc"], HYPERPARAMETERS, one_draw, setting="s", feature_cache_gib=0)
    row = table[(table["metric"] == "iou") & (table["test"] == "missing")].iloc[0]
    expected = expected_missing_decrease("iou", units.activations, units.concepts, units.test_pairs, alpha=0.1,
                                         keep=0.5, epsilon=0.001)
    assert row["expected_decrease_acc"] == pytest.approx(expected) and 0.0 < expected < 1.0
    counts = pair_counts(units.activations, units.concepts, units.test_pairs, alpha=0.1)
    assert [row["median_active"], row["median_positives"]] == np.median(counts[:, 1:], axis=0).tolist()
    others = table[(table["metric"] != "iou") | (table["test"] != "missing")]
    assert others[["expected_decrease_acc", "median_active", "median_positives"]].isna().all().all()
    two_draws = experimental_table(units, ["iou"], HYPERPARAMETERS, SANITY, setting="s", feature_cache_gib=0)
    assert two_draws["expected_decrease_acc"].isna().all()


def test_auprc_has_a_closed_form_only_for_label_concepts(units: SanityUnits) -> None:
    """AUPRC reads the concept values as scores: its count formula holds for 0/1 concepts only, so soft concepts get
    NaN there while F1 (which reads B(c) alone) keeps its closed form."""
    from neuroneval.sanity.experimental_table import with_expected_decrease

    rows = pd.DataFrame([{"metric": metric, "test": "missing", "perturbation": "random", "draws": 1, "alpha": 0.1,
                          "strength": 0.5, "epsilon": 0.001} for metric in ("f1", "auprc")])
    soft = SanityUnits(units.activations, units.concepts * 0.9, units.concept_names, units.truth, units.val_units,
                       units.test_units)
    assert with_expected_decrease(rows, units)["expected_decrease_acc"].notna().tolist() == [True, True]
    assert with_expected_decrease(rows, soft)["expected_decrease_acc"].notna().tolist() == [True, False]

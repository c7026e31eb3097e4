"""Closed forms of App. D against the formulas of Table D.2, the simulation and the published numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neuroneval.sanity.analytical import (
    ANALYTICAL_METRICS,
    analytical_table,
    decrease_probability,
    expected_delta,
    score_after,
)
from neuroneval.sanity.theoretical import theoretical_deltas
from neuroneval.sanity.theoretical_reference import load_theoretical_reference

GAMMAS = (0.499, 0.1, 0.01, 0.001)

# Table D.2 (p = ½ missing, p = 1 extra) and the forms derived for the other metrics, as raw differences.
TABLE_D2 = {
    "recall": (lambda g: -0.5, lambda g: 0.0),
    "precision": (lambda g: 0.0, lambda g: -0.5),
    "f1": (lambda g: -1 / 3, lambda g: -1 / 3),
    "iou": (lambda g: -0.5, lambda g: -0.5),
    "accuracy": (lambda g: -g / 2, lambda g: -g),
    "balanced_accuracy": (lambda g: -0.25, lambda g: -g / (2 * (1 - g))),
    "inverse_balanced_accuracy": (lambda g: -g / (2 * (2 - g)), lambda g: -0.25),
    "auc": (lambda g: -0.25, lambda g: -g / (2 * (1 - g))),
    "inverse_auc": (lambda g: -g / (2 * (2 - g)), lambda g: -0.25),
    "correlation": (lambda g: math.sqrt((1 - g) / (2 - g)) - 1, lambda g: math.sqrt((1 - 2 * g) / (2 * (1 - g))) - 1),
    "cosine": (lambda g: math.sqrt(0.5) - 1, lambda g: math.sqrt(0.5) - 1),
    "auprc": (lambda g: -(1 - g) / 2, lambda g: -0.5),
    "inverse_auprc": (lambda g: -0.5, lambda g: -0.5 + g),
    "mad": (lambda g: -g / (2 - g), lambda g: -0.5),
    "wpmi": (lambda g: 0.5 * math.log(1e-8) + math.log(2), lambda g: -math.log(2)),
}


@pytest.mark.parametrize("metric", sorted(TABLE_D2))
def test_population_limit_is_table_d2(metric: str) -> None:
    missing, extra = TABLE_D2[metric]
    for gamma in GAMMAS:
        assert expected_delta(metric, "missing", gamma, span=1.0) == pytest.approx(missing(gamma), abs=1e-12)
        assert expected_delta(metric, "extra", gamma, span=1.0) == pytest.approx(extra(gamma), abs=1e-12)


def test_generalised_strengths_and_normalisation() -> None:
    # App. D with general p: recall 1 − p under missing labels, precision 1/(1 + p) under extra labels.
    assert expected_delta("recall", "missing", 0.1, strength=0.75) == pytest.approx(-0.25)
    assert expected_delta("precision", "extra", 0.1, strength=3.0) == pytest.approx(1 / 3 - 1)
    assert expected_delta("correlation", "missing", 0.1) == pytest.approx(TABLE_D2["correlation"][0](0.1) / 2)
    f1 = expected_delta("f1", "missing", 0.2)
    assert expected_delta("hmean:recall+precision", "missing", 0.2) == pytest.approx(f1)
    assert float(score_after("wpmi", "extra", 0, 10, 1000, lam=0.5)) == pytest.approx(-0.5 * math.log(0.01))
    with pytest.raises(ValueError, match="no closed form"):
        expected_delta("correlation_tr", "missing", 0.1)


def test_finite_n_converges_to_the_population_limit() -> None:
    for metric in ("precision", "f1", "cosine", "inverse_auprc", "inverse_balanced_accuracy"):
        for test in ("missing", "extra"):
            exact = expected_delta(metric, test, 0.01, 500_000)
            assert exact == pytest.approx(expected_delta(metric, test, 0.01), abs=2e-3)
    # At s = 50 positives the ratio bias is visible: E[s/(s + X)] > 1/2 (the published −0.4974).
    assert expected_delta("precision", "extra", 1e-4, 500_000) > -0.498


@pytest.fixture(scope="module")
def simulated() -> tuple[dict, dict, int]:
    """Average-tie simulation of every metric with a closed form at n = 20,000, 60 draws per γ and test."""
    metrics = [*ANALYTICAL_METRICS, "hmean:auc+inverse_auc"]
    draws = 60
    deltas, spans = theoretical_deltas(metrics, gammas=(0.499, 0.1, 0.01), n=20_000, draws=draws, ties="average",
                                       seed=4, progress=False)
    return deltas, spans, draws


@pytest.mark.parametrize("metric", [*ANALYTICAL_METRICS, "hmean:auc+inverse_auc"])
def test_closed_forms_agree_with_the_simulation(simulated, metric: str) -> None:
    deltas, spans, draws = simulated
    for column, gamma in enumerate((0.499, 0.1, 0.01)):
        for test in ("missing", "extra"):
            sample = deltas[(metric, column, test)]
            exact = expected_delta(metric, test, gamma, 20_000, span=spans[metric])
            # The mean of 60 i.i.d. draws lies within 4 standard errors of its expectation (p ≈ 6e-5 per check);
            # the 1e-9 absorbs float rounding where every draw is identical (sd = 0).
            standard_error = sample.std(ddof=1) / math.sqrt(draws)
            assert abs(sample.mean() - exact) <= 4 * standard_error + 1e-9, (metric, gamma, test)
            probability = decrease_probability(metric, test, gamma, 20_000, span=spans[metric])
            accuracy = np.mean(sample < -1e-3)
            assert abs(accuracy - probability) <= 4 * math.sqrt(probability * (1 - probability) / draws) + 1e-9


def test_exact_forms_reproduce_the_published_deterministic_numbers() -> None:
    """Finite-n expectations at the paper's n = 500,000 against every published deterministic row.

    Excluded: the stochastic metrics, WPMI (its span comes from the data), and AUC under extra labels (the
    published value carries the float32 tie-breaking artefact explained in ``neuroneval.sanity.analytical``).
    A published Δs is a mean of 1,000 draws; its standard error is at most ≈ 0.0022 (recall at γ = 1e-4, per-draw
    sd 0.5/√50 / √1000) plus 5e-5 rounding, so 0.005 is over 2 standard errors at the noisiest row and ≥ 10 at
    γ ≥ 0.01.
    """
    reference = load_theoretical_reference()
    checked = 0
    for row in reference.itertuples():
        parts = row.metric.removeprefix("hmean:").split("+")
        if row.kind == "stochastic" or "wpmi" in parts or ("auc" in parts and row.test == "extra"):
            continue
        exact = expected_delta(row.metric, row.test, row.gamma, 500_000, span=1.0 if row.metric == "mad" else None)
        assert abs(exact - row.ref_mean_delta) <= 0.005, row
        checked += 1
    assert checked >= 180


def test_analytical_table_shape() -> None:
    table = analytical_table(["iou", "accuracy"], gammas=(0.1, 0.001))
    assert len(table) == 8 and set(table.columns) >= {"expected_delta", "expected_decrease_acc"}
    accuracy = table.set_index(["metric", "test", "gamma"])["expected_decrease_acc"]
    assert accuracy[("iou", "extra", 0.001)] == 1.0 and accuracy[("accuracy", "missing", 0.001)] == 0.0

"""Δs normalisation by the registry's value ranges, and Decrease Acc (paper 000, Eq. 10–11)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from neuroneval.metrics import METRICS
from neuroneval.sanity.delta import (
    decrease_accuracy,
    has_fixed_span,
    increase_fraction,
    normalized_delta,
    summarize_deltas,
    value_span,
)


@pytest.mark.parametrize("metric", list(METRICS))
def test_span_is_the_width_of_the_registry_range(metric: str) -> None:
    low, high = METRICS[metric].value_range
    if math.isfinite(low) and math.isfinite(high):
        assert has_fixed_span(metric)
        assert value_span(metric) == high - low
        assert value_span(metric, [100.0, -100.0]) == high - low  # observed scores are ignored
    else:
        assert not has_fixed_span(metric)
        with pytest.raises(ValueError, match="unbounded"):
            value_span(metric)
        assert value_span(metric, np.array([[0.5, -1.0]]), [2.0, np.nan]) == 3.0


def test_span_by_range_type() -> None:
    unit = [m for m in METRICS if METRICS[m].value_range == (0.0, 1.0)]
    signed = [m for m in METRICS if METRICS[m].value_range == (-1.0, 1.0)]
    assert {"recall", "iou", "auc", "auprc"} <= set(unit) and {"correlation", "cosine", "spearman"} <= set(signed)
    assert {value_span(m) for m in unit} == {1.0} and {value_span(m) for m in signed} == {2.0}
    assert {m for m in METRICS if not has_fixed_span(m)} == {"mad", "wpmi"}
    assert value_span("hmean:auc+inverse_auc") == 1.0
    with pytest.raises(ValueError, match="all equal"):
        value_span("wpmi", [1.5, 1.5])


def test_normalized_delta_and_decrease_accuracy() -> None:
    deltas = normalized_delta([0.2, 0.9, 0.5], [1.0, 1.0, 0.5], 2.0)
    np.testing.assert_allclose(deltas, [-0.4, -0.05, 0.0])
    assert decrease_accuracy([-0.5, -0.001, -0.0011, 0.2], 1e-3) == 0.5  # strict: Δs = −ε does not count
    assert increase_fraction([0.001, 0.0011, -1.0], 1e-3) == pytest.approx(1 / 3)
    assert decrease_accuracy([-0.005], epsilon=0.01) == 0.0
    assert math.isnan(decrease_accuracy([]))
    with pytest.raises(ValueError, match="span"):
        normalized_delta([1.0], [0.0], 0.0)


def test_summary() -> None:
    summary = summarize_deltas([-0.2, -0.4, 0.3, 0.0005])
    assert summary["mean_delta"] == pytest.approx(-0.074875)
    assert summary["decrease_acc"] == 0.5 and summary["increase_frac"] == 0.25 and summary["n"] == 4
    assert summary["delta_se"] == pytest.approx(np.std([-0.2, -0.4, 0.3, 0.0005], ddof=1) / 2)


def test_a_half_bounded_range_is_normalised_by_the_observed_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A metric bounded on one side only (a user metric in [0, ∞)) has no fixed span: its differences are
    normalised by the observed max − min, here below 1."""
    from types import SimpleNamespace

    from neuroneval.sanity import delta

    monkeypatch.setattr(delta, "get_spec", lambda metric: SimpleNamespace(value_range=(0.0, math.inf)))
    assert not has_fixed_span("mine")
    assert value_span("mine", [0.25, 0.75], [0.5]) == 0.5


def test_all_equal_observed_scores_are_an_error_naming_their_value() -> None:
    with pytest.raises(ValueError, match=r"all equal \(0\.3\)"):
        value_span("wpmi", [0.3])


def test_a_span_must_be_positive_and_may_be_below_one() -> None:
    np.testing.assert_allclose(normalized_delta([1.0, 0.25], [0.0, 0.5], 0.5), [2.0, -0.5])
    with pytest.raises(ValueError, match="span must be positive"):
        normalized_delta([1.0], [0.0], -1.0)


def test_summary_of_fewer_than_two_deltas_has_no_standard_error_and_no_warning() -> None:
    """The standard error needs two values; with none or one it is NaN, computed without a numpy warning."""
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        empty, single, pair = summarize_deltas([]), summarize_deltas([-0.2]), summarize_deltas([-0.2, 0.4])
    assert math.isnan(empty["mean_delta"]) and math.isnan(empty["delta_se"]) and empty["n"] == 0
    assert single["mean_delta"] == -0.2 and math.isnan(single["delta_se"])
    assert pair["delta_se"] == pytest.approx(np.std([-0.2, 0.4], ddof=1) / math.sqrt(2), rel=1e-15)

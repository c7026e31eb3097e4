"""Paper 000's Tables C.1–C.4 and D.2 as printed (neuroneval.published), checked against independent facts, and
the printed-vs-notebook differences of docs/fidelity.md shown by computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from neuroneval import published
from neuroneval.sanity.analytical import expected_delta
from neuroneval.sanity.printed_reference import (
    DIFFERENCE_LABELS,
    load_printed_reference,
    printed_vs_notebook,
    published_reference,
    span_factor,
)
from neuroneval.sanity.theoretical import theoretical_deltas
from neuroneval.sanity.theoretical_reference import compare_with_reference, load_theoretical_reference

TABLES = {"C.1": published.TABLE_C1, "C.2": published.TABLE_C2, "C.3": published.TABLE_C3, "C.4": published.TABLE_C4}


def test_every_table_has_the_18_metrics_of_table_3_in_its_order() -> None:
    for table in TABLES.values():
        assert list(table) == list(published.TABLE3)


@pytest.mark.parametrize("metric", list(published.TABLE3))
def test_table3_theoretical_columns_are_the_means_of_the_printed_c1_c2_rows(metric: str) -> None:
    """Table 3 prints the mean over γ of C.1/C.2 to 0.01 %: an independent check of the transcription."""
    row = published.TABLE3[metric]
    assert np.mean(published.TABLE_C1[metric].values()) == pytest.approx(row.theoretical_missing, abs=5e-5)
    assert np.mean(published.TABLE_C2[metric].values()) == pytest.approx(row.theoretical_extra, abs=5e-5)


@pytest.mark.parametrize("table", ["C.1", "C.2"])
def test_the_pass_column_is_decrease_acc_above_90_percent_at_every_gamma(table: str) -> None:
    for metric, row in TABLES[table].items():
        assert row.passes == all(value > 0.9 for value in row.values()), metric


@pytest.mark.parametrize("metric", list(published.TABLE_D2))
@pytest.mark.parametrize("gamma", published.TABLE_C_GAMMAS)
def test_printed_d2_forms_are_our_population_limits(metric: str, gamma: float) -> None:
    row = published.TABLE_D2[metric]
    assert row.missing(gamma) == pytest.approx(expected_delta(metric, "missing", gamma), abs=1e-12)
    assert row.extra(gamma) == pytest.approx(expected_delta(metric, "extra", gamma), abs=1e-12)


@pytest.mark.parametrize("test", ["missing", "extra"])
def test_the_printed_limit_column_is_d2_at_gamma_zero(test: str) -> None:
    table = published.TABLE_C3 if test == "missing" else published.TABLE_C4
    limits = {metric: row.limit for metric, row in table.items() if row.limit is not None}
    assert set(limits) == set(published.TABLE_D2)
    for metric, limit in limits.items():
        form = getattr(published.TABLE_D2[metric], test)
        assert form(0.0) == pytest.approx(limit, abs=5e-5), metric


def test_a_gamma_row_reads_by_gamma_and_refuses_other_columns() -> None:
    row = published.TABLE_C1["spearman"]
    assert row.at(0.0001) == 0.133 and row.at(0.001) == 0.227
    with pytest.raises(KeyError, match=r"γ = 0\.2 is not a column"):
        row.at(0.2)


def test_the_printed_reference_is_primary_and_the_notebook_beside_it() -> None:
    reference = published_reference(load_theoretical_reference())
    assert len(reference) == 24 * 5 * 2 and len(load_printed_reference()) == 18 * 5 * 2
    printed = reference[reference["ref_source"] == "printed table"]
    assert len(printed) == 180 and set(reference.loc[reference["ref_source"] != "printed table", "metric"]) == {
        name for name in reference["metric"] if name.startswith("hmean:")}
    cell = printed.set_index(["metric", "test", "gamma"]).loc[("mad", "extra", 0.499)]
    assert (cell["ref_mean_delta"], cell["notebook_mean_delta"]) == (-0.3324, -0.5)
    assert set(printed["printed_vs_notebook"]) <= set(DIFFERENCE_LABELS)
    assert printed.set_index(["metric", "test", "gamma"]).loc[("cosine", "extra", 0.0001), "printed_vs_notebook"] == (
        "typo")


def test_printed_vs_notebook_labels() -> None:
    label = printed_vs_notebook
    assert label("recall", "missing", 0.1, kind="deterministic", delta_difference=1e-4, accuracy_difference=0) == "same"
    assert label("mad", "extra", 0.1, kind="deterministic", delta_difference=0.17, accuracy_difference=0) == "span"
    assert label("spearman", "extra", 0.01, kind="stochastic", delta_difference=0, accuracy_difference=-0.26) == (
        "random draw")
    assert label("accuracy", "extra", 0.001, kind="boundary", delta_difference=0, accuracy_difference=-0.02) == (
        "coin flip")
    assert label("f1", "extra", 0.0001, kind="deterministic", delta_difference=-0.004, accuracy_difference=0) == (
        "sampling")


# --- MAD and WPMI: printed = notebook / one constant per metric -------------------------------------------------


@pytest.mark.parametrize(("metric", "factor"), [("mad", 1.5043), ("wpmi", 1.0240)])
def test_printed_mad_and_wpmi_are_the_notebook_divided_by_one_constant(metric: str, factor: float) -> None:
    reference = published_reference(load_theoretical_reference())
    assert span_factor(reference, metric) == pytest.approx(factor, abs=0.0005)
    rows = reference[(reference["metric"] == metric) & (reference["ref_mean_delta"].abs() >= 0.01)
                     & (reference["gamma"] >= 0.01)]
    # Every cell's ratio agrees with the one constant within the printed rounding (±5e-5 on each side) and the
    # sampling error of two runs of 1,000 draws (below 0.1 % of Δs at γ ≥ 0.01, ≥ 5,000 positives).
    for row in rows.itertuples():
        bound = factor * (5e-5 / abs(row.ref_mean_delta) + 5e-5 / abs(row.notebook_mean_delta) + 0.002)
        assert row.notebook_mean_delta / row.ref_mean_delta == pytest.approx(factor, abs=bound), row


@pytest.mark.parametrize("metric", ["recall", "precision", "f1", "iou", "balanced_accuracy", "correlation",
                                    "cosine", "auprc", "inverse_auprc"])
def test_other_deterministic_metrics_have_no_rescaling(metric: str) -> None:
    assert span_factor(published_reference(load_theoretical_reference()), metric) == pytest.approx(1.0, abs=0.002)


def test_the_mad_factor_is_neither_a_reachable_span_nor_a_known_constant() -> None:
    """MAD of binary units nested as in the notebook lies in [0, 1]: no max − min of its scores reaches 1.504.

    The span is the notebook's ``run_test`` rule (γ × γ scores vs c, c⁻ and c⁺), recomputed here at n = 20,000.
    """
    _, spans = theoretical_deltas(["mad"], n=20_000, draws=1, progress=False)
    assert 0.99 <= spans["mad"] <= 1.0 + 1e-9
    factor = span_factor(published_reference(load_theoretical_reference()), "mad")
    # scipy's normal-consistent MAD scale 1/Φ⁻¹(3/4) = 1.4826 and a round 1.5 both miss by more than the rounding.
    normal_scale = 1 / stats.norm.ppf(0.75)
    assert stats.median_abs_deviation([0.0, 1.0, 2.0], scale="normal") == pytest.approx(normal_scale)
    rounding = 1.5 * (5e-5 / 0.3324 + 5e-5 / 0.5)
    assert abs(factor - normal_scale) > 10 * rounding and abs(factor - 1.5) > 2 * rounding


def _lambda_from_ratio(ratio: float) -> float:
    """λ at which WPMI's expected missing/extra Δs ratio (App. D forms, population limit) equals ``ratio``."""
    def gap(lam: float) -> float:
        return expected_delta("wpmi", "missing", 0.1, lam=lam) / expected_delta("wpmi", "extra", 0.1, lam=lam) - ratio

    return optimize.brentq(gap, 0.3, 3.0)


@pytest.mark.parametrize("source", ["printed", "notebook"])
def test_wpmi_lambda_is_1_in_both_runs_so_only_the_span_differs(source: str) -> None:
    """λ and the log floor fix the missing/extra ratio, which a span cannot change (nor a log base: it scales both
    raw differences and their max − min alike); both runs give λ = 1 within the printed rounding."""
    reference = published_reference(load_theoretical_reference()).set_index(["metric", "test", "gamma"])
    column = "ref_mean_delta" if source == "printed" else "notebook_mean_delta"
    missing, extra = reference.loc[("wpmi", "missing", 0.1), column], reference.loc[("wpmi", "extra", 0.1), column]
    low = _lambda_from_ratio((abs(missing) + 5e-5) / (abs(extra) - 5e-5))
    high = _lambda_from_ratio((abs(missing) - 5e-5) / (abs(extra) + 5e-5))
    assert min(low, high) <= 1.0 <= max(low, high)
    assert abs(high - low) < 0.01
    # The raw differences at λ = 1 (log floor 1e-8) over each run's Δs give its span: 23.18 notebook, 23.73 printed.
    span = expected_delta("wpmi", "extra", 0.1, lam=1.0) / extra
    assert span == pytest.approx(23.73 if source == "printed" else 23.18, abs=0.45)
    assert -0.5 * math.log(1e-8) - math.log(2) == pytest.approx(-expected_delta("wpmi", "missing", 0.1), abs=1e-9)


def test_compare_with_reference_judges_against_the_printed_value_and_keeps_the_notebook_beside() -> None:
    reference = published_reference(load_theoretical_reference())
    printed = reference[reference["ref_source"] == "printed table"]
    runs = printed[["metric", "test", "gamma"]].assign(
        n=500_000, draws=1000, seed=0, mean_delta=printed["notebook_mean_delta"], delta_se=1e-4,
        decrease_acc=printed["notebook_decrease_acc"])
    cells = compare_with_reference(runs).set_index(["metric", "test", "gamma"])
    mad = cells.loc[("mad", "extra", 0.1)]
    assert (mad["ref_mean_delta"], mad["notebook_mean_delta"], mad["ref_source"]) == (-0.3324, -0.5, "printed table")
    assert not mad["delta_ok"] and mad["printed_vs_notebook"] == "span"
    notebook_only = compare_with_reference(runs, load_theoretical_reference()).set_index(["metric", "test", "gamma"])
    assert notebook_only.loc[("mad", "extra", 0.1), "delta_ok"] and "ref_source" not in notebook_only.columns


def test_table_c_outputs_carry_the_printed_and_notebook_values_beside_ours() -> None:
    from neuroneval.sanity.tables import analytical_table, gamma_column, gamma_table, with_published_columns

    tidy = load_printed_reference().assign(ties="average", decrease_acc=0.5, mean_delta=-0.25)
    table = gamma_table(tidy, metrics=["mad", "spearman", "hmean:auc+inverse_auc"], test="missing",
                        ties="average", value="mean_delta")
    shown = with_published_columns(table, test="missing", value="mean_delta").set_index("metric")
    column = gamma_column(0.499)
    assert shown.loc["mad", [column, f"printed_{column}", f"notebook_{column}"]].tolist() == [-0.25, -0.221, -0.3325]
    assert np.isnan(shown.loc["hmean:auc+inverse_auc", f"printed_{column}"])
    assert shown.loc["hmean:auc+inverse_auc", f"notebook_{column}"] == -0.2104
    accuracy = with_published_columns(gamma_table(tidy, metrics=["spearman"], test="extra", ties="average"),
                                      test="extra").set_index("metric")
    assert accuracy.loc["spearman", [f"printed_{gamma_column(0.01)}", f"notebook_{gamma_column(0.01)}"]].tolist() == [
        0.056, 0.314]
    with pytest.raises(ValueError, match="value must be"):
        with_published_columns(table, test="missing", value="span")
    d2 = analytical_table(["accuracy", "cosine"], gammas=[0.1], n=1000, spans={"accuracy": 1.0, "cosine": 2.0},
                          epsilon=1e-3, lam=1.0).set_index(["metric", "test"])
    assert d2.loc[("accuracy", "extra"), "printed_delta"] == pytest.approx(-0.1)
    assert d2.loc[("accuracy", "extra"), "printed_delta"] == pytest.approx(d2.loc[("accuracy", "extra"),
                                                                                  "population_delta"])
    assert np.isnan(d2.loc[("cosine", "missing"), "printed_delta"])

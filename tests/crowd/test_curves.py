"""Curve and per-unit tables of the simulated study (Fig. 2a, Fig. 3a), their figures and the file round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import (
    AggregationOptions,
    CostReductionOptions,
    SamplingOptions,
    SimulationOptions,
    aggregation_study,
    cost_reduction_table,
    plot_aggregation_curves,
    plot_sampling_curves,
    read_unit_errors,
    sampling_study,
    select_explanations,
    write_unit_errors,
)
from neuroneval.crowd.simulation import MIN_INPUTS
from tests.crowd.conftest import SMALL
from tests.crowd.synthetic import simulated_study_tables


def test_study_tables(tables):
    sampling_df, aggregation_df, summary_df = tables
    assert set(sampling_df["method"]) == {"uniform", "activation", "pseudo"}
    assert len(sampling_df) == 3 * len(SMALL["sample_sizes"])
    curve = sampling_df.pivot(index="n_inputs", columns="method", values="rce")
    assert (curve.loc[[10, 30, 100], "pseudo"] < curve.loc[[10, 30, 100], "uniform"]).all()
    assert curve["pseudo"].iloc[-1] < curve["pseudo"].iloc[0]
    assert sampling_df["undefined_fraction"].between(0, 1).all()
    best = aggregation_df[aggregation_df["best"]]
    assert best.groupby(["method", "cost"]).size().eq(1).all()
    assert (aggregation_df["n_inputs"] * aggregation_df["n_raters"] - aggregation_df["cost"]).abs().max() <= 3
    rows = summary_df.set_index(["experiment", "baseline", "method"])
    pseudo = rows.loc[("sampling", "uniform", "pseudo")]
    assert pseudo["factor"] > 1 and pseudo["ci_low"] <= pseudo["factor"] <= pseudo["ci_high"]
    bayes = rows.loc[("aggregation", "majority", "bayes_pseudo")]
    assert bayes["factor"] > 1
    assert summary_df["n_units"].nunique() == 1


def test_study_is_deterministic_and_works_without_pseudo_labels(world):
    options = {**SMALL, "sample_sizes": (10, 100), "costs": (20, 200), "n_boot": 10, "max_units": 6}
    first = simulated_study_tables(world.activations, world.labels, unit_ids=world.unit_ids, **options)
    second = simulated_study_tables(world.activations, world.labels, unit_ids=world.unit_ids, **options)
    for one, two in zip(first, second, strict=True):
        pd.testing.assert_frame_equal(one, two)
    assert "pseudo" not in set(first[0]["method"])
    assert "bayes_pseudo" not in set(first[1]["method"])
    assert set(first[1]["sampling"]) == {"activation"}


def test_figures(tables, tmp_path):
    sampling_df, aggregation_df, _ = tables
    for path in (
        plot_sampling_curves(sampling_df, tmp_path / "sampling.png"),
        plot_aggregation_curves(aggregation_df, tmp_path / "aggregation.svg"),
    ):
        assert path.stat().st_size > 1000


def test_per_unit_tables_reproduce_curves_and_summary(world, tables, tmp_path):
    """The workflow's split (curves -> per-unit CSVs -> summary) gives exactly the one-call tables."""
    sampling_df, aggregation_df, summary_df = tables
    units = select_explanations(
        world.activations, world.labels, world.pseudo_labels, unit_ids=world.unit_ids, concept_names=world.concept_names
    )
    simulation = SimulationOptions(n_trials=SMALL["n_trials"])
    curve, sampling_units = sampling_study(
        units, SamplingOptions(sample_sizes=SMALL["sample_sizes"], simulation=simulation)
    )
    agg_curve, aggregation_units = aggregation_study(
        units, AggregationOptions(costs=SMALL["costs"], rater_counts=SMALL["rater_counts"], simulation=simulation)
    )
    pd.testing.assert_frame_equal(curve, sampling_df)
    pd.testing.assert_frame_equal(agg_curve, aggregation_df)

    n_units = len(units.unit_ids)
    assert len(sampling_units) == 3 * len(SMALL["sample_sizes"]) * n_units
    assert len(aggregation_units) == 4 * len(SMALL["rater_counts"]) * len(SMALL["costs"]) * n_units
    means = sampling_units.groupby(["method", "n_inputs"], sort=False)["relative_error"].mean().to_numpy()
    np.testing.assert_allclose(means, sampling_df["rce"].to_numpy(), rtol=1e-12)
    unrun = aggregation_units["relative_error"].isna()
    assert unrun.equals(aggregation_units["n_inputs"] < MIN_INPUTS)
    np.testing.assert_allclose(
        aggregation_units["n_inputs"], np.round(aggregation_units["cost"] / aggregation_units["n_raters"])
    )
    first = aggregation_units[aggregation_units["unit"] == units.unit_ids[0]]
    assert set(first["concept"]) == {units.concept_names[0]} and set(first["rho_true"]) == {units.rho_true[0]}

    paths = {}
    for name, frame in (("sampling", sampling_units), ("aggregation", aggregation_units)):
        paths[name] = write_unit_errors(tmp_path / f"{name}.csv", frame)
    from_files = cost_reduction_table(
        read_unit_errors(paths["sampling"], "sampling"),
        read_unit_errors(paths["aggregation"], "aggregation"),
        CostReductionOptions(n_boot=SMALL["n_boot"]),
    )
    pd.testing.assert_frame_equal(from_files, summary_df)
    assert set(summary_df["unit_group"]) == {"all"}

    grouped = cost_reduction_table(
        sampling_units, aggregation_units, CostReductionOptions(unit_groups=("class:", "parent:"), n_boot=20)
    )
    for prefix, rows in grouped.groupby("unit_group"):
        if prefix == "all":
            continue
        keep = [frame[frame["concept"].str.startswith(prefix)] for frame in (sampling_units, aggregation_units)]
        alone = cost_reduction_table(*keep, CostReductionOptions(n_boot=20))
        alone = alone.drop(columns="unit_group").reset_index(drop=True)
        pd.testing.assert_frame_equal(rows.drop(columns="unit_group").reset_index(drop=True), alone)
        assert rows["n_units"].iloc[0] == keep[0]["unit"].nunique() < len(units.unit_ids)
    assert set(grouped["unit_group"]) == {"all", "class:", "parent:"}
    with pytest.raises(ValueError, match="twice"):
        cost_reduction_table(
            pd.concat([sampling_units, sampling_units.iloc[:1]]), aggregation_units, CostReductionOptions(n_boot=0)
        )


def test_the_best_rater_count_is_the_fewest_among_float_ties() -> None:
    """Per cost, the lowest mean RCE; a float-sum tie (0.1 + 0.2 vs 0.3) keeps the fewer raters, where
    ``np.argmin`` let the last ulp choose; NaN cells (not run) never win."""
    from neuroneval.crowd.curves import _fewest_raters_of_lowest_rce

    rce = np.array([[0.1 + 0.2, np.nan, 0.5], [0.3, 0.5, 0.5], [0.4, 0.4, 0.5 - 1e-9]])
    assert np.argmin(rce[:, 0]) == 1  # 0.30000000000000004 > 0.3 by one ulp
    assert _fewest_raters_of_lowest_rce(rce).tolist() == [0, 2, 2]

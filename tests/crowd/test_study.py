"""Simulated study (Setting 1, Eq. 9–13), cost-reduction factors and figures, on a planted world."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from neuroneval.crowd import (
    cost_at_rce,
    cost_reduction_factor,
    plot_aggregation_curves,
    plot_sampling_curves,
    sampling_errors,
    select_explanations,
    simulated_study_tables,
)
from tests.crowd.synthetic import planted_world

SMALL = {
    "sample_sizes": (10, 30, 100, 300, 1000, 3000),
    "costs": (20, 60, 200, 600, 2000),
    "rater_counts": (1, 2, 3, 5),
    "n_trials": 6,
    "n_boot": 100,
}


@pytest.fixture(scope="module")
def world():
    return planted_world(n=4000, n_units=24, seed=11)


@pytest.fixture(scope="module")
def tables(world):
    return simulated_study_tables(
        world.activations,
        world.labels,
        world.pseudo_labels,
        unit_ids=world.unit_ids,
        concept_names=world.concept_names,
        **SMALL,
    )


def test_explanations_maximise_correlation(world):
    units = select_explanations(
        world.activations, world.labels, unit_ids=world.unit_ids, concept_names=world.concept_names
    )
    for k, unit in enumerate(units.unit_ids):
        column = world.unit_ids.index(unit)
        a = world.activations[:, column]
        rhos = [stats.pearsonr(a, world.labels[:, t])[0] if world.labels[:, t].any() else 0.0 for t in range(48)]
        assert units.concept_names[k] == world.concept_names[int(np.argmax(rhos))]
        assert units.rho_true[k] == pytest.approx(max(rhos), abs=1e-9)
        assert units.rho_true[k] >= 0.1
    subset = select_explanations(world.activations, world.labels, unit_ids=world.unit_ids, max_units=5)
    reversed_subset = select_explanations(
        world.activations[:, ::-1], world.labels, unit_ids=world.unit_ids[::-1], max_units=5
    )
    assert set(subset.unit_ids) == set(reversed_subset.unit_ids)
    with pytest.raises(ValueError, match="binary"):
        select_explanations(world.activations, world.pseudo_labels)


def test_unit_results_do_not_depend_on_other_units(world):
    units = select_explanations(world.activations, world.labels, world.pseudo_labels, unit_ids=world.unit_ids)
    order = np.arange(len(units.unit_ids))[::-1][:5]
    subset = dataclasses.replace(
        units,
        unit_ids=tuple(units.unit_ids[k] for k in order),
        concept_names=tuple(units.concept_names[k] for k in order),
        activations=units.activations[:, order],
        labels=units.labels[:, order],
        pseudo_labels=units.pseudo_labels[:, order],
        rho_true=units.rho_true[order],
        unit_keys=units.unit_keys[order],
    )
    options = {"sample_sizes": (20, 50), "n_trials": 3, "rater_error": 0.1, "seed": 4}
    full = sampling_errors(units, **options)["errors"]
    part = sampling_errors(subset, **options)["errors"]
    np.testing.assert_array_equal(part, full[..., order])


def test_cost_factor_recovers_a_planted_shift():
    costs = np.array([10, 30, 100, 300, 1000, 3000], dtype=float)
    rng = np.random.default_rng(0)
    unit_scale = rng.uniform(0.5, 1.5, 40)
    baseline = unit_scale[None, :] * costs[:, None] ** -0.5
    method = unit_scale[None, :] * (10 * costs[:, None]) ** -0.5
    result = cost_reduction_factor(costs, baseline, method, n_boot=50)
    assert result["factor"] == pytest.approx(10.0, rel=1e-9)
    assert result["ci_low"] == pytest.approx(10.0, rel=1e-9)
    assert result["ci_high"] == pytest.approx(10.0, rel=1e-9)
    assert np.isnan(cost_at_rce(costs, baseline.mean(axis=1), 1.0))  # already below the target at the first cost
    assert np.isnan(cost_at_rce(costs, baseline.mean(axis=1), 1e-3))  # never reached


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
    from neuroneval.crowd.study import MIN_INPUTS, aggregation_study, cost_reduction_table, sampling_study
    from neuroneval.io import write_csv
    from neuroneval.pipeline.crowd_steps import EXACT_FLOAT_FORMAT, read_unit_errors

    sampling_df, aggregation_df, summary_df = tables
    units = select_explanations(
        world.activations, world.labels, world.pseudo_labels, unit_ids=world.unit_ids, concept_names=world.concept_names
    )
    shared = {"n_trials": SMALL["n_trials"]}
    curve, sampling_units = sampling_study(units, sample_sizes=SMALL["sample_sizes"], **shared)
    agg_curve, aggregation_units = aggregation_study(
        units, costs=SMALL["costs"], rater_counts=SMALL["rater_counts"], **shared
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
        paths[name] = write_csv(tmp_path / f"{name}.csv", frame, float_format=EXACT_FLOAT_FORMAT)
    from_files = cost_reduction_table(
        read_unit_errors(paths["sampling"], "sampling"),
        read_unit_errors(paths["aggregation"], "aggregation"),
        n_boot=SMALL["n_boot"],
    )
    pd.testing.assert_frame_equal(from_files, summary_df)
    assert set(summary_df["unit_group"]) == {"all"}

    grouped = cost_reduction_table(sampling_units, aggregation_units, concept_groups=("class:", "parent:"), n_boot=20)
    for prefix, rows in grouped.groupby("unit_group"):
        if prefix == "all":
            continue
        keep = [frame[frame["concept"].str.startswith(prefix)] for frame in (sampling_units, aggregation_units)]
        alone = cost_reduction_table(*keep, n_boot=20).drop(columns="unit_group").reset_index(drop=True)
        pd.testing.assert_frame_equal(rows.drop(columns="unit_group").reset_index(drop=True), alone)
        assert rows["n_units"].iloc[0] == keep[0]["unit"].nunique() < len(units.unit_ids)
    assert set(grouped["unit_group"]) == {"all", "class:", "parent:"}
    with pytest.raises(ValueError, match="twice"):
        cost_reduction_table(pd.concat([sampling_units, sampling_units.iloc[:1]]), aggregation_units, n_boot=0)


def test_unreadable_per_unit_tables_name_file_row_and_column(tmp_path):
    from neuroneval.pipeline.crowd_steps import read_unit_errors

    path = tmp_path / "units.csv"
    path.write_text("method,n_inputs,unit,relative_error\nuniform,10,u0,0.5\nuniform,10,u1,abc\n")
    with pytest.raises(ValueError, match=r"units\.csv, row 3, column relative_error: 'abc'"):
        read_unit_errors(path, "sampling")
    with pytest.raises(ValueError, match=r"units\.csv: missing column\(s\) \['n_raters', 'cost'\]"):
        read_unit_errors(path, "aggregation")

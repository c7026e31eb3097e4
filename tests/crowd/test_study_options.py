"""Typed options of the simulated study: parsed once from params.yaml, normalised, checked with clear messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from neuroneval.crowd import AggregationOptions, CostReductionOptions, SamplingOptions, SimulationOptions
from neuroneval.crowd.study_options import DEFAULT_COMPARISONS
from neuroneval.options import OptionsError

PARAMS = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text())["crowd"]


def test_params_yaml_parses_into_the_defaults_of_the_paper() -> None:
    simulation = SimulationOptions.from_params(PARAMS["simulation"])
    assert simulation == SimulationOptions()
    assert SamplingOptions.from_params({**PARAMS["sampling"], "simulation": simulation}) == SamplingOptions()
    assert AggregationOptions.from_params({**PARAMS["aggregation"], "simulation": PARAMS["simulation"]}) == (
        AggregationOptions())
    summary = CostReductionOptions.from_params(PARAMS["summary"])
    assert summary.comparisons == DEFAULT_COMPARISONS and summary.unit_groups == ("class:", "parent:")


def test_values_are_normalised_so_python_and_params_runs_write_the_same_tables() -> None:
    options = AggregationOptions(costs=[20, 50], rater_counts=[1, 3], methods=["majority"], rater_error=0,
                                 prior_clip=[0.01, 0.99], simulation=SimulationOptions(n_trials=2, epsilon=1, seed=3))
    assert options.costs == (20, 50) and options.methods == ("majority",) and options.prior_clip == (0.01, 0.99)
    assert isinstance(options.rater_error, float) and isinstance(options.simulation.epsilon, float)
    assert options.model_rater_error == 0.0
    assert AggregationOptions(rater_error=0.1, assumed_rater_error=0.2).model_rater_error == 0.2
    assert list(options.simulation.table_columns()) == ["n_trials", "epsilon", "ddof", "seed"]
    hash(options)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SimulationOptions(n_trials=0), r"SimulationOptions\.n_trials"),
        (lambda: SimulationOptions(ddof=2), r"SimulationOptions\.ddof"),
        (lambda: SimulationOptions(max_units=0), r"SimulationOptions\.max_units"),
        (lambda: SimulationOptions.from_params({"n_trial": 3}), r"unknown option 'n_trial'"),
        (lambda: SamplingOptions(sample_sizes=()), r"SamplingOptions\.sample_sizes"),
        (lambda: SamplingOptions(methods=("stratified",)), r"SamplingOptions\.methods.*'stratified'"),
        (lambda: SamplingOptions(rater_error=0.5), r"SamplingOptions\.rater_error"),
        (lambda: AggregationOptions(methods=("median",)), r"AggregationOptions\.methods.*'median'"),
        (lambda: AggregationOptions(sampling="stratified"), r"AggregationOptions\.sampling"),
        (lambda: AggregationOptions(uniform_prior=0), r"AggregationOptions\.uniform_prior"),
        (lambda: AggregationOptions(prior_clip=(0.9, 0.1)), r"AggregationOptions\.prior_clip"),
        (lambda: CostReductionOptions(comparisons=(("sampling", "uniform", "majority"),)), r"\.comparisons"),
        (lambda: CostReductionOptions(ci_level=1.0), r"CostReductionOptions\.ci_level"),
    ],
)
def test_bad_options_name_the_field(build, message) -> None:
    with pytest.raises(OptionsError, match=message):
        build()

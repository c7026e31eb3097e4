"""The simulated crowd study (paper 001, Setting 1) as workflow targets, on top of the tiny end-to-end run."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.io import read_activation_table, read_concept_table
from tests.workflow.conftest import ROOT, copy_of_build, deep_update, params_overlay, run_tool, tiny_params

TABLES = ("results/crowd_sampling.csv", "results/crowd_aggregation.csv", "results/crowd_summary.csv",
          "results/crowd/sampling_units.csv", "results/crowd/aggregation_units.csv")
FIGURES = ("results/crowd_sampling.png", "results/crowd_aggregation.png")




@pytest.fixture(scope="module")
def crowd_run(built_workspace: Path) -> tuple[Path, dict]:
    """The tiny workspace, whose build includes results/crowd_summary.csv, and its crowd params."""
    return built_workspace, yaml.safe_load((built_workspace / "params.yaml").read_text())["crowd"]


def test_explanations_maximise_correlation_on_the_full_data(crowd_run) -> None:
    """Eq. 9–10 against a brute-force Pearson over every (unit, class/superclass) pair of the built tables."""
    workspace, crowd = crowd_run
    activations, _ = read_activation_table(workspace / "data/activations/vision_probe/vision_cnn/block3.parquet")
    labels, _ = read_concept_table(workspace / "data/concepts/vision_probe/labels.parquet")
    concepts = [c for c in labels.columns if c.startswith(tuple(crowd["concepts"]["prefixes"]))]
    per_unit = pd.read_csv(workspace / "results/crowd/sampling_units.csv", dtype={"unit": str})
    chosen = per_unit.drop_duplicates("unit").set_index("unit")
    expected = {}
    for unit in activations.columns[1:]:
        a = activations[unit].to_numpy(dtype=np.float64)
        rhos = [np.corrcoef(a, labels[c].to_numpy(dtype=np.float64))[0, 1] if labels[c].std() > 0 and a.std() > 0
                else 0.0 for c in concepts]
        best = int(np.argmax(rhos))
        if rhos[best] >= crowd["simulation"]["min_true_correlation"]:
            expected[unit] = (concepts[best], rhos[best])
    assert expected, "the tiny CNN should have hidden units that correlate with some class or superclass"
    assert set(chosen.index) == set(expected)
    for unit, (concept, rho) in expected.items():
        assert chosen.loc[unit, "concept"] == concept
        assert chosen.loc[unit, "rho_true"] == pytest.approx(rho, abs=1e-6)


def test_tables_and_figures_follow_their_contracts(crowd_run) -> None:
    workspace, crowd = crowd_run
    sampling = pd.read_csv(workspace / "results/crowd_sampling.csv")
    sampling_units = pd.read_csv(workspace / "results/crowd/sampling_units.csv", dtype={"unit": str})
    methods, sizes = crowd["sampling"]["methods"], crowd["sampling"]["sample_sizes"]
    assert sampling[["method", "n_inputs"]].values.tolist() == [[m, s] for m in methods for s in sizes]
    assert (sampling["rce"] > 0).all() and sampling["undefined_fraction"].between(0, 1).all()
    assert (sampling[["n_trials", "seed", "epsilon"]].values == [3, crowd["simulation"]["seed"], 0.001]).all()
    means = sampling_units.groupby(["method", "n_inputs"], sort=False)["relative_error"].mean()
    np.testing.assert_allclose(means.to_numpy(), sampling["rce"].to_numpy(), rtol=1e-5)

    aggregation = pd.read_csv(workspace / "results/crowd_aggregation.csv")
    assert set(aggregation["method"]) == set(crowd["aggregation"]["methods"])
    assert aggregation[aggregation["best"]].groupby(["method", "cost"]).size().eq(1).all()
    assert (aggregation["n_inputs"] == np.round(aggregation["cost"] / aggregation["n_raters"])).all()
    best_rce = aggregation.groupby(["method", "cost"])["rce"].transform("min")
    assert (aggregation.loc[aggregation["best"], "rce"] == best_rce[aggregation["best"]]).all()

    summary = pd.read_csv(workspace / "results/crowd_summary.csv")
    expected = [[c["experiment"], c["baseline"], c["method"]] for c in crowd["summary"]["comparisons"]]
    everyone = summary[summary["unit_group"] == "all"]
    assert everyone[["experiment", "baseline", "method"]].values.tolist() == expected
    assert set(summary["unit_group"]) <= {"all", *crowd["summary"]["unit_groups"]}
    groups = summary.drop_duplicates("unit_group").set_index("unit_group")["n_units"]
    assert groups.drop("all").sum() <= groups["all"] == sampling_units["unit"].nunique()
    finite = summary.dropna(subset=["factor"])
    np.testing.assert_allclose(finite["factor"], finite["baseline_cost"] / finite["method_cost"], rtol=1e-4)
    bounded = finite.dropna(subset=["ci_low", "ci_high"])
    assert (bounded["ci_low"] <= bounded["ci_high"]).all()
    for name in FIGURES:
        data = (workspace / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name


def test_same_inputs_and_seeds_give_byte_identical_results(crowd_run, tmp_path: Path) -> None:
    """The crowd rules rerun on a copy of the build give the shared build's bytes."""
    workspace, _ = crowd_run
    copy = copy_of_build(workspace, tmp_path / "copy")
    rerun = run_tool(["snakemake", "--cores", "2", "results/crowd_summary.csv",
                      "--forcerun", "crowd_sampling", "crowd_aggregation"], copy)
    assert "crowd_summary" in rerun.stdout + rerun.stderr
    for name in (*TABLES, *FIGURES):
        assert (copy / name).read_bytes() == (workspace / name).read_bytes(), name


def test_each_crowd_rule_reruns_only_for_the_params_it_reads(crowd_run, tmp_path: Path) -> None:
    """Dry runs with changed crowd params as an overlay (the shared build is not edited)."""
    workspace, crowd = crowd_run
    saved_params = yaml.safe_load((workspace / "params.yaml").read_text())

    def planned(change: dict) -> str:
        params = {**saved_params, "crowd": deep_update(crowd, change)}
        output = run_tool(["snakemake", "-n", "results/crowd_summary.csv", *params_overlay(tmp_path, params)],
                          workspace).stdout
        return output[output.index("Job stats:"):output.index("Reasons:")] if "Job stats:" in output else ""

    assert planned({}) == ""
    summary_only = planned({"summary": {"n_boot": 7}})
    assert "crowd_summary" in summary_only and "crowd_sampling" not in summary_only
    assert "crowd_aggregation" not in summary_only
    aggregation = planned({"aggregation": {"rater_error": 0.2}})
    assert "crowd_aggregation" in aggregation and "crowd_summary" in aggregation
    assert "crowd_sampling" not in aggregation and "vision_classifier_activations" not in aggregation


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ({"aggregation": {"rater_error": 0.7}}, "0.7 is greater than or equal to the maximum of 0.5"),
        ({"sampling": {"methods": ["uniform", "random"]}}, "'random' is not one of"),
        ({"simulation": {"n_trails": 3}}, "'n_trails' was unexpected"),
        ({"summary": {"comparisons": [{"experiment": "sampling", "baseline": "uniform"}]}}, "'method' is a required"),
    ],
)
def test_schema_rejects_bad_crowd_params(mutation: dict, message: str) -> None:
    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    jsonschema.validate(tiny_params(), schema)
    with pytest.raises(jsonschema.ValidationError, match=re.escape(message)):
        jsonschema.validate(tiny_params(crowd=mutation), schema)

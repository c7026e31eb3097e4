"""The concept evaluation of paper 004 (``concepteval_results``) as a workflow target, on the tiny end-to-end run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.concepteval.benchmark import readability_measures
from neuroneval.concepteval.protocol import CRITERIA, FAMILIES, RUNS

OUTPUTS = ("measures.csv", "reliability.csv", "reliability.png", "inter_rater.csv", "validity.csv", "mtmm.csv",
           "mtmm.png", "methods.csv", "methods.png", "patterns.md")


@pytest.fixture(scope="module")
def concepteval_run(built_workspace: Path) -> tuple[Path, dict]:
    """The tiny workspace's ``results/concepteval`` folder, whose build includes concepteval_results, and the
    concepteval params."""
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    return built_workspace / "results" / "concepteval", params["concepteval"]


def test_concepteval_results_tables_and_figures(concepteval_run: tuple[Path, dict]) -> None:
    results, params = concepteval_run
    models = params["models"]
    names = [*params["faithfulness"]["measures"], *readability_measures(params["readability"]["cooccurrence_sides"])]
    measures = pd.read_csv(results / "measures.csv")
    assert list(measures.columns) == ["model", "run", "family", "concept", "measure", "value"]
    assert list(dict.fromkeys(measures["model"])) == models and set(measures["run"]) == set(RUNS)
    assert list(dict.fromkeys(measures["family"])) == list(FAMILIES)
    n_concepts = measures.groupby("model")["concept"].nunique()
    assert (measures.groupby(["model", "run", "concept"]).size() == len(names)).all()
    families = params["families"]
    counts = measures.groupby(["model", "family"])["concept"].nunique()
    for family in ("neuron", "sae", "kmeans", "random"):
        assert (counts.xs(family, level="family") == families[family]["count"]).all(), family
    faithful = measures[measures["measure"].isin(params["faithfulness"]["measures"])]
    if params["faithfulness"].get("weighting") == "activation":  # an SAE feature silent on a run has no weight
        faithful = faithful[faithful["family"] != "sae"]
    assert faithful["value"].notna().all()

    reliability = pd.read_csv(results / "reliability.csv")
    assert len(reliability) == len(models) * len(names) * 3
    retest = reliability[reliability["statistic"] == "pearson"]
    assert retest["value"].dropna().between(-1, 1).all() and (retest["run"] == "test-retest").all()
    assert set(reliability.loc[reliability["statistic"] == "cronbach_alpha", "run"]) == set(RUNS)
    assert (reliability["acceptable"] == (reliability["value"] >= 0.9)).all()

    validity = pd.read_csv(results / "validity.csv")
    assert set(validity["criterion"]) == set(CRITERIA)
    planted = validity[validity["criterion"] == "planted"]
    n_probes = counts.xs("probe", level="family")
    for model in models:
        assert (planted.loc[planted["model"] == model, "n_concepts"] <= n_probes[model]
                + families["random"]["count"]).all()
    raters = pd.read_csv(results / "inter_rater.csv")
    n_raters = params["raters"]["n_raters"]
    assert len(raters) == len(models) * n_raters * (n_raters - 1) // 2
    assert raters["value"].between(-1, 1).all() and (raters["n_concepts"] == n_concepts.iloc[0]).all()

    mtmm = pd.read_csv(results / "mtmm.csv")
    for model, frame in mtmm.groupby("model"):
        kept = frame["measure_a"].nunique()
        assert len(frame) == kept * kept and kept >= len(params["faithfulness"]["measures"])
        diagonal = frame[frame["measure_a"] == frame["measure_b"]]
        assert (diagonal["statistic"] == "cronbach_alpha").all(), model
        off = frame[frame["measure_a"] != frame["measure_b"]]
        assert off["value"].dropna().between(-1, 1).all()

    methods = pd.read_csv(results / "methods.csv")
    kinds = [f"probe:{kind}" for kind in families["probe"]["planted"]] if len(families["probe"]["planted"]) > 1 else []
    assert list(dict.fromkeys(methods["family"])) == ["neuron", "sae", "probe", *kinds, "pca", "kmeans", "random"]
    assert set(methods["measure"]) == set(params["comparison"])
    assert ((methods["ci_low"] <= methods["mean"] + 1e-12) & (methods["mean"] <= methods["ci_high"] + 1e-12)).all()

    text = (results / "patterns.md").read_text()
    for model in models:
        assert f"## {model}" in text
    for probe in measures.loc[measures["family"] == "probe", "concept"].unique():
        assert f"`{probe}`" in text
    for name in OUTPUTS:
        if name.endswith(".png"):
            assert (results / name).stat().st_size > 10_000, name


def test_planted_probe_directions_are_more_faithful_than_random_ones(concepteval_run: tuple[Path, dict]) -> None:
    """Issue 16's acceptance on the embedded world, faithfulness side: the mean ABL-Div of the probe directions of
    the planted concepts lies above the random floor's, with bootstrap intervals over concepts that do not
    overlap — for all probes and for the word-class probes alone, whose classes the layer encodes (held-out
    balanced accuracy > 0.65); and ABL-Div tells probes from random directions (concurrent validity with the
    planted indicator). (Readability does not separate them on the tiny build: docs/concepteval.md, Status.)"""
    results, params = concepteval_run
    methods = pd.read_csv(results / "methods.csv").set_index(["model", "family", "measure"])
    validity = pd.read_csv(results / "validity.csv")
    for model in params["models"]:
        floor = methods.loc[(model, "random", "ABL-Div")]
        for family in ("probe", "probe:slot"):
            probe = methods.loc[(model, family, "ABL-Div")]
            assert probe["ci_low"] > floor["ci_high"], (model, family, probe.to_dict(), floor.to_dict())
        card = pd.read_csv(results.parents[1] / "data" / "concepteval" / model / "concepts.csv")
        slot_probes = card[card["concept"].str.startswith("probe:slot:")]
        # chance is 0.5; at the MLP site (the paper's, the default) ADV reads 0.67 on the tiny LM, 0.72-0.98 at resid
        assert (slot_probes["holdout_balanced_accuracy"] > 0.65).all(), slot_probes.to_dict("records")
        tau = validity[(validity["model"] == model) & (validity["criterion"] == "planted")
                       & (validity["measure"] == "ABL-Div") & validity["statistic"].str.startswith("kendall")]
        assert len(tau) == 1 and tau["ci_low"].iloc[0] > 0, tau.to_dict("records")
        assert np.isfinite(tau["value"].iloc[0])

"""CoSy and simulated-crowd scoring of explanations (neuroneval.method_eval) and the scorers' ranking agreement
(neuroneval.explain.agreement), against brute-force loops, scipy and closed forms."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, pearsonr, sem

from neuroneval.cosy.prompts import fill_template
from neuroneval.cosy.shown_concept import shown_concept
from neuroneval.cosy.synthesis import plan_images
from neuroneval.explain import parse
from neuroneval.explain.agreement import method_summary, ranking_agreement, scorer_agreement
from neuroneval.method_eval.cosy_table3 import CosyBenchmarkOptions, cosy_unit_scores, prompt_table
from neuroneval.method_eval.crowd_table3 import CrowdBenchmarkOptions, crowd_unit_scores, simulated_study
from neuroneval.options import OptionsError


def brute_tau(first: np.ndarray, second: np.ndarray) -> float:
    """Kendall τ-a (= τ-b without ties) by counting concordant and discordant pairs."""
    signs = [np.sign(first[i] - first[j]) * np.sign(second[i] - second[j])
             for i, j in combinations(range(len(first)), 2)]
    return float(np.mean(signs))


def brute_auc(control: np.ndarray, synthetic: np.ndarray) -> float:
    """002 Eq. 3 with ties ½: the fraction of (control, synthetic) pairs the synthetic image wins."""
    wins = [1.0 if a < b else 0.5 if a == b else 0.0 for a in control for b in synthetic]
    return float(np.mean(wins))


@pytest.mark.parametrize("text, kind, expected", [
    ("class:red_striped_circle", "concept", "class:red_striped_circle"),
    ("0.2*c:a + 0.5*c:b + 0.1", "linear", "c:b"),
    ("-0.4*c:a + 0.1", "linear", None),
    ("0*c:a + 0.3", "linear", None),
    ("NOT c:a", "formula", None),
    ("c:a OR c:b", "formula", None),
])
def test_shown_concept(text: str, kind: str, expected: str | None) -> None:
    assert shown_concept(parse(text, kind)) == expected


def test_prompt_table_uses_the_world_prompts_and_one_unit_subset() -> None:
    files = {("s", "m1"): pd.DataFrame({"unit": ["0", "1", "2"], "kind": ["concept"] * 3,
                                        "explanation": ["class:red_striped_circle", "parent:circle",
                                                        "scene:grass"]}),
             ("s", "m2"): pd.DataFrame({"unit": ["0", "1", "2"], "kind": ["formula", "linear", "concept"],
                                        "explanation": ["NOT class:red_striped_circle", "0.3*parent:circle + 0.1",
                                                        "scene:grass"]})}
    table = prompt_table(files, max_units=2, seed=0)
    assert table.groupby("method")["unit"].apply(list).to_dict()["m1"] == \
        table.groupby("method")["unit"].apply(list).to_dict()["m2"]
    assert len(table) == 4
    texts = dict(zip(zip(table["method"], table["unit"], strict=True), table["explanation"], strict=True))
    for (method, unit), text in texts.items():
        if method == "m2" and unit == "0":
            assert text == ""
        elif unit == "1":
            assert text == "a circle"
        elif unit == "0":
            assert text == "a red striped circle"


def test_cosy_unit_scores_match_the_pairwise_definitions() -> None:
    rng = np.random.default_rng(0)
    prompts = pd.DataFrame({"setting": "s", "method": ["a", "b", "c"], "unit": ["u0", "u1", "u0"],
                            "concept": ["c:x", "c:y", ""], "explanation": ["a circle", "a square", ""]})
    manifest = plan_images(["a circle", "a square"], templates=["closeup"], n_images=5)
    control = rng.normal(size=(30, 2))
    synthetic = rng.normal(0.8, 1.0, size=(len(manifest), 2))
    scores = cosy_unit_scores(prompts, unit_names=["u0", "u1"], control=control, synthetic=synthetic,
                              manifest=manifest, template="closeup", generator="oracle")
    for row in scores.itertuples(index=False):
        if not row.explanation:
            assert np.isnan(row.auc) and row.n_synthetic == 0
            continue
        k = ["u0", "u1"].index(row.unit)
        images = synthetic[manifest["prompt"] == fill_template("closeup", row.explanation), k]
        assert row.auc == pytest.approx(brute_auc(control[:, k], images))
        expected_mad = (images.mean() - control[:, k].mean()) / control[:, k].std(ddof=1)
        assert row.mad == pytest.approx(expected_mad) and row.n_synthetic == 5 and row.n_control == 30


def test_scorer_agreement_is_kendall_tau_of_the_method_means() -> None:
    rng = np.random.default_rng(1)
    units = pd.MultiIndex.from_product([["s"], [str(k) for k in range(12)]], names=["setting", "unit"])
    first = pd.DataFrame(rng.normal(size=(12, 5)) + np.arange(5), index=units, columns=list("abcde"))
    second = pd.DataFrame(rng.normal(size=(12, 4)) + np.array([0, 2, 1, 3]), index=units, columns=list("abcd"))
    second.iloc[0] = np.nan  # a unit the second scorer does not score is left out of the pair
    rows = scorer_agreement({"x": first, "y": second}, n_boot=200, ci_level=0.9, seed=0)
    row = rows.iloc[0]
    kept = first.iloc[1:][list("abcd")].mean().to_numpy(), second.iloc[1:].mean().to_numpy()
    assert row["n_methods"] == 4 and row["n_units"] == 11
    assert row["tau"] == pytest.approx(brute_tau(*kept)) == pytest.approx(kendalltau(*kept).statistic)
    assert row["ci_low"] <= row["tau"] <= row["ci_high"]
    tau, low, high = ranking_agreement(first.to_numpy(), first.to_numpy() * 3 + 1, n_boot=50, ci_level=0.9,
                                       seed=0)
    assert tau == low == high == pytest.approx(1.0)


def test_method_summary_is_mean_and_standard_error_with_floor_and_ceiling() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"setting": "s", "method": np.repeat(["m", "random_l1", "truth", "ideal"], 6),
                          "auc": rng.random(24), "mad": rng.normal(size=24)})
    frame.loc[0, "auc"] = np.nan
    table = method_summary(frame, keys=["setting", "method"], values=["auc", "mad"]).set_index("method")
    values = frame.loc[frame["method"] == "m", "auc"].dropna()
    assert table.loc["m", "auc_mean"] == pytest.approx(values.mean())
    assert table.loc["m", "auc_se"] == pytest.approx(sem(values))
    assert table.loc["m", "n_units"] == 5 and table.loc["m", "n_unscored"] == 1
    assert (table["floor"] == table.loc["random_l1", "auc_mean"]).all()
    assert (table["ceiling"] == table.loc["ideal", "auc_mean"]).all()


def test_noise_free_uniform_study_estimates_the_full_data_correlation() -> None:
    """η = 0, uniform q, averaged labels: ρ_S is Pearson's r on the sample, so its mean over trials approaches
    the full-data r (Eq. 5–6 with uniform weights)."""
    rng = np.random.default_rng(3)
    labels = (rng.random(3000) < 0.2).astype(float)
    activations = labels + rng.normal(0.0, 1.0, 3000)
    options = CrowdBenchmarkOptions(n_inputs=400, n_raters=1, sampling="uniform", aggregation=("average",),
                                    rater_error=0.0, n_trials=40)
    estimate = simulated_study(activations, labels, None, options, np.random.default_rng(0))["average"]
    assert estimate == pytest.approx(pearsonr(activations, labels).statistic, abs=0.03)


def test_crowd_unit_scores_rank_the_true_concept_above_a_wrong_one() -> None:
    rng = np.random.default_rng(4)
    n = 2000
    concepts = (rng.random((n, 3)) < [0.05, 0.1, 0.3]).astype(float)
    activations = np.stack([concepts[:, 0] * 2 + rng.normal(0, 0.5, n), rng.normal(size=n)], axis=1)
    pseudo = np.clip(concepts * 0.7 + rng.random((n, 3)) * 0.3, 0, 1)
    options = CrowdBenchmarkOptions(n_trials=8)
    scores = crowd_unit_scores(setting="s", method="m", units=["0", "0", "1"], concepts=["c0", "c2", None],
                               activations=activations, unit_names=["0", "1"], labels=concepts, pseudo=pseudo,
                               concept_names=["c0", "c1", "c2"], options=options)
    assert len(scores) == 3 * len(options.aggregation)
    for aggregation, rows in scores.groupby("aggregation"):
        rows = rows.reset_index(drop=True)
        assert rows.loc[0, "crowd_correlation"] > rows.loc[1, "crowd_correlation"] + 0.3, aggregation
        assert rows.loc[0, "label_correlation"] == pytest.approx(pearsonr(activations[:, 0], concepts[:, 0])[0])
        assert np.isnan(rows.loc[2, "crowd_correlation"]) and rows.loc[2, "concept"] == ""


def test_options_name_the_bad_value() -> None:
    with pytest.raises(OptionsError, match="generators"):
        CosyBenchmarkOptions(generators=("dalle",))
    with pytest.raises(OptionsError, match="template"):
        CosyBenchmarkOptions(template="no placeholder")
    with pytest.raises(OptionsError, match="aggregation"):
        CrowdBenchmarkOptions(aggregation=("median",))
    with pytest.raises(OptionsError, match="rater_error"):
        CrowdBenchmarkOptions(rater_error=0.5)
    with pytest.raises(ValueError, match="pseudo-labels"):
        simulated_study(np.ones(5), np.ones(5), None, CrowdBenchmarkOptions(), np.random.default_rng(0))

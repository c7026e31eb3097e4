"""Setting 2 from a ratings file (paper 001, Figs. 2b, 3b, 4): ratings simulated with a known η and truth must give
back the simulated study's curves, η and the cost model's prediction, each within its interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from neuroneval.crowd import (
    AggregationOptions,
    SamplingOptions,
    SimulationOptions,
    aggregation_study,
    design_study,
    read_design,
    read_ratings,
    sampling_study,
    select_explanations,
    write_study,
)
from neuroneval.crowd.cost_model import CostModel, cheapest_design, design_for_budget, expected_rce
from neuroneval.crowd.gold import insert_gold_items, rater_error_from_gold, read_gold_answers
from neuroneval.crowd.real_study import (
    Setting2Options,
    rce_curve,
    reference_correlations,
    setting2_study,
    simulate_study_ratings,
)
from tests.crowd.synthetic import planted_world
from tests.oracles import clopper_pearson

ETA = 0.13
SIZES = (20, 60, 200)


@pytest.fixture(scope="module")
def bed():
    """A planted world, its explained units, and one rated study per sampling distribution (3 raters, η = 0.13)."""
    world = planted_world(n=4000, n_units=24, seed=11)
    units = select_explanations(world.activations, world.labels, world.pseudo_labels, unit_ids=world.unit_ids,
                                concept_names=world.concept_names, max_units=12)
    ids = np.arange(world.activations.shape[0])
    activations = pd.DataFrame(world.activations, columns=world.unit_ids)
    activations.insert(0, "input_id", ids)
    column = {name: index for index, name in enumerate(world.concept_names)}
    names = list(dict.fromkeys(units.concept_names))
    truth = pd.DataFrame({name: world.labels[:, column[name]].astype(int) for name in names})
    truth.insert(0, "input_id", ids)
    pseudo = pd.DataFrame({name: world.pseudo_labels[:, column[name]] for name in names})
    pseudo.insert(0, "input_id", ids)
    pairs = pd.DataFrame({"unit": units.unit_ids, "explanation": units.concept_names})
    studies, references = {}, {}
    for sampling in ("uniform", "pseudo"):
        design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=600, sampling=sampling, seed=1)
        studies[sampling] = (design, simulate_study_ratings(design, truth, n_raters=3, rater_error=ETA, seed=2))
        references[sampling] = reference_correlations(design, activations, truth)
    return {"units": units, "activations": activations, "truth": truth, "pseudo": pseudo, "pairs": pairs,
            "studies": studies, "references": references}


@pytest.fixture(scope="module")
def curve(bed):
    options = Setting2Options(sample_sizes=SIZES, rater_counts=(1, 3), n_trials=100)
    return setting2_study(bed["studies"], bed["references"], options)[0]


def _within(measured: pd.DataFrame, simulated: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    simulated = simulated[simulated["n_inputs"].isin(SIZES)]
    both = measured.merge(simulated, on=keys, suffixes=("", "_sim"))
    assert len(both) == len(simulated)
    both["z"] = (both["rce"] - both["rce_sim"]) / np.hypot(both["rce_se"], both["rce_se_sim"])
    return both


def test_reference_is_eq10_full_data_correlation(bed):
    np.testing.assert_allclose(bed["references"]["pseudo"]["rho_true"], bed["units"].rho_true, rtol=1e-9)


def test_sampling_curve_recovers_the_simulated_study(bed, curve):
    """Fig. 2b vs Fig. 2a: one flipped rating per input (average of 1 rater) is Setting 1's noisy label."""
    simulated, _ = sampling_study(bed["units"], SamplingOptions(
        sample_sizes=SIZES, methods=("uniform", "pseudo"), rater_error=ETA, simulation=SimulationOptions(n_trials=30)))
    measured = curve[(curve["method"] == "average") & (curve["n_raters"] == 1)]
    measured = measured.drop(columns="method").rename(columns={"sampling": "method"})
    both = _within(measured[["method", "n_inputs", "rce", "rce_se"]],
                   simulated[["method", "n_inputs", "rce", "rce_se"]], ["method", "n_inputs"])
    assert (both["z"].abs() < 1.96).all(), both
    # importance sampling beats uniform sampling on the measured curve too (Fig. 2b)
    wide = measured.pivot(index="n_inputs", columns="method", values="rce")
    assert (wide["pseudo"] < wide["uniform"]).all()


def test_aggregation_curve_recovers_the_simulated_study(bed, curve):
    """Figs. 3b/4 vs 3a: every (method, raters, inputs) cell the simulated study ran at the same cost."""
    simulated, _ = aggregation_study(bed["units"], AggregationOptions(
        costs=(60, 180, 600), rater_counts=(1, 3), sampling="pseudo", rater_error=ETA,
        simulation=SimulationOptions(n_trials=30)))
    measured = curve[curve["sampling"] == "pseudo"]
    keys = ["method", "n_raters", "n_inputs"]
    both = _within(measured[[*keys, "rce", "rce_se"]], simulated[[*keys, "rce", "rce_se"]], keys)
    assert len(both) >= 12
    assert (both["z"].abs() < 1.96).all(), both


def test_curve_statistics_match_a_direct_computation(bed):
    options = Setting2Options(sample_sizes=(30,), rater_counts=(2,), methods=("majority",), n_trials=20)
    curve, pairs = setting2_study({"pseudo": bed["studies"]["pseudo"]}, {"pseudo": bed["references"]["pseudo"]},
                                  options)
    errors = pairs["relative_error"].to_numpy()
    assert curve["rce"].item() == pytest.approx(errors.mean())
    assert curve["rce_se"].item() == pytest.approx(stats.sem(errors))
    assert curve["ci_high"].item() == pytest.approx(errors.mean() + stats.norm.ppf(0.975) * stats.sem(errors))
    assert curve["cost"].item() == 60
    assert rce_curve(pairs.assign(relative_error=1.0))["rce_se"].item() == 0


def test_all_draws_and_raters_give_the_full_pool_estimate(bed):
    """n = N draws and r = R raters leave one subset: every trial is the ingest estimate of the whole pool."""
    from neuroneval.crowd import estimate_correlations

    design, ratings = bed["studies"]["pseudo"]
    n_draws = int(design.samples.groupby("pair")["draws"].sum().min())
    options = Setting2Options(sample_sizes=(n_draws,), rater_counts=(3,), methods=("bayes_uniform",), n_trials=3)
    _, pairs = setting2_study({"pseudo": (design, ratings)}, {"pseudo": bed["references"]["pseudo"]}, options)
    full = estimate_correlations(design, ratings, method="bayes_uniform", n_boot=1).set_index("pair")["rho"]
    rho_true = bed["references"]["pseudo"].set_index("pair")["rho_true"]
    expected = (full - rho_true).abs() / rho_true
    np.testing.assert_allclose(pairs.set_index("pair")["relative_error"], expected.loc[pairs["pair"]], rtol=1e-9)


def test_subset_too_large_is_named(bed):
    options = Setting2Options(sample_sizes=(10,), rater_counts=(4,), methods=("average",), n_trials=2)
    with pytest.raises(ValueError, match=r"4 raters per input requested but input .* has 3 rating"):
        setting2_study({"pseudo": bed["studies"]["pseudo"]}, {"pseudo": bed["references"]["pseudo"]}, options)
    with pytest.raises(ValueError, match="sample size 10000 exceeds its 600 draws"):
        setting2_study({"pseudo": bed["studies"]["pseudo"]}, {"pseudo": bed["references"]["pseudo"]},
                       Setting2Options(sample_sizes=(10000,), rater_counts=(1,), methods=("average",), n_trials=2))


def test_simulated_ratings_flip_at_eta(bed):
    design, ratings = bed["studies"]["pseudo"]
    truth = bed["truth"].set_index("input_id")
    explanation = design.tasks.set_index("task")["explanation"]
    expected = [truth.at[i, explanation[t]] for t, i in zip(ratings["task"], ratings["input"], strict=True)]
    wrong = int((ratings["label"].to_numpy() != np.asarray(expected)).sum())
    interval = stats.binomtest(wrong, len(ratings)).proportion_ci(0.99)
    assert interval.low <= ETA <= interval.high
    assert set(ratings.columns) == {"task", "input", "rater", "label"}


def test_gold_items_estimate_eta_with_an_interval(bed, tmp_path):
    truth = bed["truth"]
    rows = []
    for explanation in bed["pairs"]["explanation"].unique():
        positives = truth.loc[truth[explanation] == 1, "input_id"].to_numpy()[:6]
        negatives = truth.loc[truth[explanation] == 0, "input_id"].to_numpy()[:6]
        rows += [(explanation, int(i), 1) for i in positives] + [(explanation, int(i), 0) for i in negatives]
    gold_path = tmp_path / "gold.csv"
    pd.DataFrame(rows, columns=["explanation", "input_id", "answer"]).to_csv(gold_path, index=False)
    answers = read_gold_answers(gold_path, input_ids=truth["input_id"])
    design = design_study(bed["activations"], bed["pairs"], pseudo_labels=bed["pseudo"], n_draws=90, seed=3)
    with_gold = insert_gold_items(design, answers, per_task=2, seed=3)
    assert (with_gold.tasks["n_inputs"] == design.tasks["n_inputs"] + 2).all()
    assert len(with_gold.gold) == 2 * len(design.tasks)
    write_study(with_gold, tmp_path / "study")
    reread = read_design(tmp_path / "study")
    pd.testing.assert_frame_equal(reread.gold, with_gold.gold, check_dtype=False)
    ratings_frame = simulate_study_ratings(reread, truth, n_raters=9, rater_error=ETA, seed=4)
    ratings_frame.to_csv(tmp_path / "ratings.csv", index=False)
    ratings = read_ratings(tmp_path / "ratings.csv", reread)
    table = rater_error_from_gold(reread, ratings, by_rater=True)
    overall = table.iloc[0]
    assert overall["gold_ratings"] == 9 * len(with_gold.gold)
    assert overall["ci_low"] <= ETA <= overall["ci_high"]
    # the exact interval by bisection on the binomial tails (tests/oracles.py), not scipy's binomtest that gold.py calls
    reference = clopper_pearson(int(overall["wrong"]), int(overall["gold_ratings"]), 0.95)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx(reference, rel=1e-9)
    assert len(table) == 10
    # the estimator ignores gold items: same estimates with and without them
    from neuroneval.crowd import estimate_correlations

    plain = estimate_correlations(design, ratings[~ratings.set_index(["task", "input"]).index.isin(
        reread.gold.set_index(["task", "input_id"]).index)], n_boot=10)
    assert np.allclose(estimate_correlations(reread, ratings, n_boot=10)["rho"], plain["rho"])


def test_gold_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("explanation,input_id,answer\ndog,3,1\ndog,4,yes\n")
    with pytest.raises(ValueError, match=r"gold.csv, line 3, column answer: 'yes' is not 0 or 1"):
        read_gold_answers(path)
    path.write_text("explanation,input_id,answer\ndog,3,1\ndog,3,0\n")
    with pytest.raises(ValueError, match=r"line 3: gold item \(dog, 3\) is listed twice"):
        read_gold_answers(path)
    path.write_text("explanation,input_id,answer\ndog,99,1\n")
    with pytest.raises(ValueError, match="line 2, column input_id: unknown input 99"):
        read_gold_answers(path, input_ids=[1, 2])


def test_cost_model_paper_example():
    model = CostModel()
    assert model.price_per_rating == pytest.approx(0.004)
    assert model.cost(90, 2) == pytest.approx(0.72)


def test_cost_model_prediction_matches_a_measurement(bed, curve):
    """The expected RCE at n = 120 (between measured sizes) matches a fresh Setting-2 measurement there."""
    for method in ("bayes_uniform", "bayes_pseudo", "majority"):
        predicted = expected_rce(curve, method=method, n_inputs=120, n_raters=3, sampling="pseudo")
        options = Setting2Options(sample_sizes=(120,), rater_counts=(3,), methods=(method,), n_trials=100, seed=9)
        measured, _ = setting2_study({"pseudo": bed["studies"]["pseudo"]}, {"pseudo": bed["references"]["pseudo"]},
                                     options)
        assert predicted["ci_low"] <= measured["rce"].item() <= predicted["ci_high"], (method, predicted, measured)


def test_budget_and_cheapest_design(curve):
    model = CostModel()
    budget = design_for_budget(curve, 0.72, model, method="bayes_pseudo", sampling="pseudo")
    assert budget["n_inputs"].tolist() == [180, 60]  # $0.72 / $0.004 / r
    assert budget["dollars"].tolist() == pytest.approx([0.72, 0.72])
    assert budget["best"].sum() == 1
    rows = curve[(curve["sampling"] == "pseudo") & (curve["method"] == "bayes_pseudo") & (curve["n_raters"] == 1)]
    target = float(rows["rce"].iloc[1] + rows["rce"].iloc[2]) / 2
    cheapest = cheapest_design(curve, target, model, method="bayes_pseudo", sampling="pseudo")
    one = cheapest[cheapest["n_raters"] == 1].iloc[0]
    assert 60 < one["n_inputs"] <= 200
    assert one["rce"] <= target + 1e-12
    below = expected_rce(curve, method="bayes_pseudo", n_inputs=one["n_inputs"] - 1, n_raters=1, sampling="pseudo")
    assert below["rce"] > target
    assert one["dollars"] == pytest.approx(model.cost(one["n_inputs"], 1))
    assert cheapest["cheapest"].sum() == 1


def test_gold_items_are_shown_with_the_users_media(bed, tmp_path):
    """A gold input is an input like any other on the page: the user's media must hold it, and the page shows it."""
    from neuroneval.input_media import read_text_table

    design = design_study(bed["activations"], bed["pairs"].iloc[:1], pseudo_labels=bed["pseudo"], n_draws=20, seed=0)
    explanation = bed["pairs"]["explanation"].iloc[0]
    answers = pd.DataFrame({"explanation": explanation, "input_id": [3999, 3998], "answer": [1, 0]})
    with_gold = insert_gold_items(design, answers, per_task=1, seed=0)
    texts = tmp_path / "texts.csv"
    pd.DataFrame({"input_id": bed["activations"]["input_id"],
                  "text": [f"snippet number {i}" for i in bed["activations"]["input_id"]]}).to_csv(texts, index=False)
    write_study(with_gold, tmp_path / "study", media=read_text_table(texts))
    page = (tmp_path / "study" / "batch_000.html").read_text()
    for input_id in with_gold.gold["input_id"]:
        assert f"snippet number {input_id}" in page
    shown = with_gold.tasks.filter(like="input_").stack().dropna().astype(int)
    assert set(with_gold.gold["input_id"]) <= set(shown)
    positions = with_gold.samples.set_index("input_id")["position"]
    first_task = with_gold.tasks.iloc[0]
    for slot in range(int(first_task["n_inputs"])):
        input_id = int(first_task[f"input_{slot + 1}"])
        if input_id in positions.index:
            assert positions[input_id] == slot  # samples.position follows the shuffled task

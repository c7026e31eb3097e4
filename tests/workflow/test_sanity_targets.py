"""The sanity-test targets (paper 000 Table 3, App. C–F) on the tiny build, checked against independent oracles.

Oracles: per-setting tidy results for Table 3's means; the library called directly for the theoretical rows;
the per-pair reference metrics with the documented perturbation rule for one experimental setting; the App. D
closed forms for the simulated Δs; ``results/meta.csv`` for Tables F.5–F.7; the metrics' invariances for
Table E.2; and known behaviour (recall cannot see extra labels, F1 passes the theoretical tests).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import rankdata

from neuroneval.io import read_activation_table, read_concept_table
from neuroneval.meta import split_units
from neuroneval.metrics import reference
from neuroneval.sanity import theoretical_test
from neuroneval.sanity.analytical import expected_delta
from neuroneval.settings import select_concepts
from tests.workflow.conftest import copy_of_build, run_tool

TESTS = ("missing", "extra")
PAPER_TABLES = ["table3", *[f"tableF{i}" for i in range(1, 8)], *[f"tableC{i}" for i in range(1, 5)], "tableD2",
                *[f"tableE{i}" for i in range(1, 10)]]




@pytest.fixture(scope="module")
def sanity_workspace(built_workspace: Path) -> Path:
    """The tiny build, which includes every sanity target (``snakemake sanity_results``)."""
    return built_workspace


def _params(workspace: Path) -> dict:
    return yaml.safe_load((workspace / "params.yaml").read_text())


def _csv(workspace: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(workspace / "results" / f"{name}.csv")


def _experimental(workspace: Path, settings: list[str]) -> pd.DataFrame:
    return pd.concat([pd.read_csv(workspace / f"results/sanity/experimental/{s}.csv") for s in settings],
                     ignore_index=True)


def test_every_table_states_its_tie_mode_and_the_figures_exist(sanity_workspace: Path) -> None:
    sanity = _params(sanity_workspace)["sanity"]
    for name in PAPER_TABLES:
        table = _csv(sanity_workspace, name)
        assert "ties" in table.columns and table["ties"].notna().all(), name
    assert set(_csv(sanity_workspace, "table3")["ties"]) == {sanity["ties"]}
    assert set(_csv(sanity_workspace, "ties")["ties"]) == {"average", "reference"}
    for figure in ("figure3.png", "ties.png", "table3_alpha_inputs.png"):
        assert (sanity_workspace / "results" / figure).stat().st_size > 10_000


def test_table3_averages_the_per_setting_tables(sanity_workspace: Path) -> None:
    sanity = _params(sanity_workspace)["sanity"]
    settings, ties = sanity["settings"], sanity["ties"]
    table3 = _csv(sanity_workspace, "table3").set_index("metric")
    assert table3.index.tolist() == sanity["metrics"]
    detail = pd.concat([_csv(sanity_workspace, f"tableF{i}").set_index("metric").drop(columns="ties")
                        for i in range(1, 5)], axis=1)
    assert detail.columns.tolist() == [f"{s}_{test}" for s in settings for test in TESTS]
    tidy = _experimental(sanity_workspace, settings)
    tidy = tidy[tidy["ties"] == ties]
    for test in TESTS:
        by_setting = tidy[tidy["test"] == test].pivot(index="metric", columns="setting", values="decrease_acc")
        np.testing.assert_allclose(detail[[f"{s}_{test}" for s in settings]].to_numpy(),
                                   by_setting.loc[sanity["metrics"], settings].to_numpy(), atol=5e-5)
        averaged = sanity["mean_settings"] or settings  # the paper's eight; the others beside the mean
        np.testing.assert_allclose(table3[f"experimental_{test}"],
                                   by_setting.loc[sanity["metrics"], averaged].mean(axis=1), atol=5e-5)
        for setting in (s for s in settings if s not in averaged):
            np.testing.assert_allclose(table3[f"{setting}_{test}"], by_setting.loc[sanity["metrics"], setting],
                                       atol=5e-5)
    threshold = sanity["pass_threshold"]
    passes = {test: (table3[f"experimental_{test}"] > threshold) & (table3[f"theoretical_{test}"] > threshold)
              for test in TESTS}
    assert table3["pass"].tolist() == (passes["missing"] & passes["extra"]).tolist()


def test_every_searched_alpha_selects_the_papers_minimum_of_inputs(sanity_workspace: Path) -> None:
    """Each setting's chosen α keeps α·n ≥ sanity.min_alpha_inputs (n: the setting's inputs), unless the truth fixed
    it; the tie flag is a boolean column of every hyperparameter row."""
    sanity = _params(sanity_workspace)["sanity"]
    for setting in sanity["settings"]:
        rows = pd.read_csv(sanity_workspace / f"results/sanity/hyperparameters/{setting}.csv")
        searched = rows[(rows["alpha_rule"] == "validation") & rows["alpha"].notna()]
        assert (searched["alpha"] * searched["inputs"] >= sanity["min_alpha_inputs"] * (1 - 1e-9)).all(), setting
        assert rows["grid_tied"].isin([True, False]).all(), setting


def test_theoretical_rows_agree_with_the_library(sanity_workspace: Path) -> None:
    sanity = _params(sanity_workspace)["sanity"]
    theory = sanity["theoretical"]
    metrics = ["recall", "f1", "auc", "mad"]
    direct = theoretical_test(metrics, gammas=theory["gammas"], n=theory["n"], draws=theory["draws"],
                              ties=sanity["ties"], epsilon=sanity["epsilon"], seed=sanity["seed"], lam=theory["lam"],
                              progress=False)
    table3 = _csv(sanity_workspace, "table3").set_index("metric")
    for test, number in (("missing", 1), ("extra", 2)):
        rows = direct[direct["test"] == test]
        means = rows.groupby("metric")["decrease_acc"].mean()
        np.testing.assert_allclose(table3.loc[metrics, f"theoretical_{test}"], means.loc[metrics], atol=5e-5)
        by_gamma = _csv(sanity_workspace, f"tableC{number}").set_index("metric")
        deltas = _csv(sanity_workspace, f"tableC{number + 2}").set_index("metric")
        for gamma in theory["gammas"]:
            at_gamma = rows[rows["gamma"] == gamma].set_index("metric")
            np.testing.assert_allclose(by_gamma.loc[metrics, f"gamma_{gamma:g}"], at_gamma.loc[metrics, "decrease_acc"],
                                       atol=5e-5)
            np.testing.assert_allclose(deltas.loc[metrics, f"gamma_{gamma:g}"], at_gamma.loc[metrics, "mean_delta"],
                                       atol=5e-5)


def test_known_failures_and_passes(sanity_workspace: Path) -> None:
    """Recall never notices extra labels (it can only rise, App. D Eq. D.2); F1 passes both theoretical tests."""
    sanity = _params(sanity_workspace)["sanity"]
    table3 = _csv(sanity_workspace, "table3").set_index("metric")
    assert table3.loc["recall", "experimental_extra"] == 0.0 and table3.loc["recall", "theoretical_extra"] == 0.0
    assert not table3.loc["recall", "pass"]
    for metric in ("f1", "iou"):
        assert table3.loc[metric, "theoretical_missing"] > sanity["pass_threshold"]
        assert table3.loc[metric, "theoretical_extra"] > sanity["pass_threshold"]
    # Precision cannot notice missing labels on ideal units (Eq. D.6): it changes only when c⁻ loses every label.
    assert table3.loc["precision", "theoretical_missing"] < 1 - sanity["pass_threshold"]
    tidy = _experimental(sanity_workspace, sanity["settings"])
    recall_extra = tidy[(tidy["metric"] == "recall") & (tidy["test"] == "extra")]
    assert (recall_extra["decrease_acc"] == 0.0).all() and (recall_extra["mean_delta"] >= 0.0).all()


def test_simulated_deltas_match_the_closed_forms(sanity_workspace: Path) -> None:
    """Table D.2 (exact binomial expectation at the run's n) against the simulated mean Δs of Tables C.3/C.4."""
    sanity = _params(sanity_workspace)["sanity"]
    theory = sanity["theoretical"]
    d2 = _csv(sanity_workspace, "tableD2")
    simulated = pd.read_csv(sanity_workspace / f"results/sanity/theoretical/{sanity['ties']}.csv")
    joined = d2.merge(simulated, on=["metric", "test", "gamma"], suffixes=("", "_sim"))
    assert len(joined) == len(d2) > 0
    # With few positives a handful of draws can miss rare outcomes (all labels lost: 2⁻ˢ), so the spread of
    # the draws says nothing there; compare where s ≥ 100.
    joined = joined[joined["positives"] >= 100]
    gap = (joined["mean_delta"] - joined["expected_delta"]).abs()
    allowed = 5 * joined["delta_se"].fillna(0) + 2e-3
    assert (gap <= allowed).all(), joined.loc[gap > allowed, ["metric", "test", "gamma", "mean_delta",
                                                              "expected_delta"]]
    # Table D.2's population forms: accuracy −γ·(1 − r₋) | −γ·(r₊ − 1), balanced accuracy −(1 − r₋)/2.
    rows = d2.set_index(["metric", "test", "gamma"])
    for gamma in theory["gammas"]:
        assert rows.loc[("accuracy", "missing", gamma), "population_delta"] == pytest.approx(-gamma * 0.5, abs=1e-4)
        assert rows.loc[("accuracy", "extra", gamma), "population_delta"] == pytest.approx(-gamma, abs=1e-4)
        assert rows.loc[("balanced_accuracy", "missing", gamma), "population_delta"] == pytest.approx(-0.25, abs=1e-4)
    limits = _csv(sanity_workspace, "tableC4").set_index("metric")["limit"]
    assert limits["iou"] == pytest.approx(expected_delta("iou", "extra", 1e-9), abs=1e-4)


def test_average_rank_spearman_equals_pearson_on_ideal_units(sanity_workspace: Path) -> None:
    """With average ranks a binary vector's ranks are affine in it, so Spearman = Pearson draw by draw."""
    simulated = pd.read_csv(sanity_workspace / "results/sanity/theoretical/average.csv")
    spearman = simulated[simulated["metric"] == "spearman"].set_index(["gamma", "test"])
    correlation = simulated[simulated["metric"] == "correlation"].set_index(["gamma", "test"])
    np.testing.assert_allclose(spearman["mean_delta"], correlation.loc[spearman.index, "mean_delta"], atol=1e-6)
    assert spearman["decrease_acc"].tolist() == correlation.loc[spearman.index, "decrease_acc"].tolist()


def test_one_setting_against_the_per_pair_reference(sanity_workspace: Path) -> None:
    """IoU and correlation on the CBM setting's test units, Δs recomputed with ``neuroneval.metrics.reference``
    and the documented draw c⁻ = c · 1[U > 1 − r₋], c⁺ = max(c, 1[U < (r₊ − 1)s/(n − s)]), U from
    ``default_rng([seed, stream, concept, draw])`` (stream 1 = missing, 2 = extra)."""
    params = _params(sanity_workspace)
    sanity, meta, name = params["sanity"], params["meta"], "cbm_concepts_gt"
    setting = params["settings"][name]
    unit = setting["units"][0]
    activations, _ = read_activation_table(
        sanity_workspace / f"data/activations/{setting['dataset']}/{unit['model']}/{unit['layer']}.parquet")
    concepts, _ = read_concept_table(sanity_workspace / f"data/concepts/{setting['dataset']}/labels.parquet")
    concept_names = select_concepts([c for c in concepts.columns if c != "input_id"], setting["concepts"]["prefixes"])
    unit_names = [c for c in activations.columns if c != "input_id"]
    truth = pd.read_csv(sanity_workspace / f"data/truth/{name}.csv", dtype=str)
    known = [unit_names.index(u) for u in dict.fromkeys(truth["unit"])]
    known_units = np.array(sorted(known))
    _, test_positions = split_units(known_units.size, val_fraction=meta["val_fraction"], seed=meta["seed"],
                                    min_val_units=meta["min_val_units"])
    test_units = set(unit_names[k] for k in known_units[test_positions])
    pairs = [(u, t) for u, t in zip(truth["unit"], truth["concept"], strict=True) if u in test_units]
    hyper = pd.read_csv(sanity_workspace / f"results/sanity/hyperparameters/{name}.csv").set_index("metric")
    tidy = pd.read_csv(sanity_workspace / f"results/sanity/experimental/{name}.csv")
    tidy = tidy[tidy["ties"] == sanity["ties"]].set_index(["metric", "test"])
    for metric, span in (("iou", 1.0), ("correlation", 2.0)):
        alpha = hyper.loc[metric, "alpha"]
        for test in TESTS:
            deltas = []
            for unit_name, concept_name in pairs:
                a = activations[unit_name].to_numpy(np.float64)
                c = concepts[concept_name].to_numpy(np.float64)
                perturbed = _documented_draw(c, test, sanity["seed"], concept_names.index(concept_name))
                deltas.append((_reference_score(metric, a, perturbed, alpha)
                               - _reference_score(metric, a, c, alpha)) / span)
            row = tidy.loc[(metric, test)]
            assert row["n_pairs"] == len(pairs)
            assert row["decrease_acc"] == pytest.approx(np.mean(np.array(deltas) < -sanity["epsilon"]), abs=1e-6)
            assert row["mean_delta"] == pytest.approx(np.mean(deltas), abs=1e-5)


def _documented_draw(c: np.ndarray, test: str, seed: int, concept: int) -> np.ndarray:
    """Draw 0 of c⁻ (r₋ = ½) or c⁺ (r₊ = 2) by the rule documented in ``neuroneval.sanity.perturb``."""
    stream = 1 if test == "missing" else 2
    uniforms = np.random.default_rng([seed, stream, concept, 0]).random(len(c))
    if test == "missing":
        return c * (uniforms > 0.5)
    positives = c.sum()
    return np.maximum(c, uniforms < positives / (len(c) - positives))


def _reference_score(metric: str, a: np.ndarray, c: np.ndarray, alpha: float) -> float:
    return reference.iou(a, c, alpha) if metric == "iou" else reference.correlation(a, c)


def test_meta_detail_tables_follow_meta_csv(sanity_workspace: Path) -> None:
    params = _params(sanity_workspace)
    meta = _csv(sanity_workspace, "meta")
    detail = pd.concat([_csv(sanity_workspace, f"tableF{i}").set_index("metric").drop(columns="ties")
                        for i in (5, 6, 7)], axis=1)
    for setting in params["meta"]["settings"]:
        rows = meta[meta["setting"] == setting].set_index("metric").loc[params["meta"]["metrics"]]
        np.testing.assert_allclose(detail[f"{setting}_auprc"], rows["test_auprc"], atol=5e-5)
        ranks = rankdata(-rows["test_auprc"].to_numpy(), method="min")
        assert detail[f"{setting}_rank"].tolist() == ranks.tolist()
        np.testing.assert_allclose(detail[f"{setting}_alpha"], rows["alpha"], atol=5e-5)


def test_ablations_reuse_the_main_run_where_they_coincide(sanity_workspace: Path) -> None:
    """r₋ = ½, r₊ = 2 (E.1) and the first draw (E.5) are the main test's draws on setting 1 (F.1)."""
    sanity = _params(sanity_workspace)["sanity"]
    setting = sanity["ablations"]["setting"]
    main = _experimental(sanity_workspace, [setting])
    main = main[main["ties"] == sanity["ties"]].set_index(["metric", "test"])["decrease_acc"]
    strength = _csv(sanity_workspace, "tableE1").set_index("metric")
    draws = _csv(sanity_workspace, "tableE5").set_index("metric")
    epsilon = _csv(sanity_workspace, "tableE4").set_index("metric")
    assert set(strength["setting"]) == {setting}
    fixed_span = [m for m in sanity["metrics"] if m not in ("mad", "wpmi")]  # their span covers every draw
    for test, default in (("missing", "r0.5"), ("extra", "r2")):
        np.testing.assert_allclose(strength[f"{test}_{default}"], main.xs(test, level="test").loc[sanity["metrics"]],
                                   atol=5e-5)
        np.testing.assert_allclose(draws.loc[fixed_span, f"{test}_draws1"], main.xs(test, level="test")[fixed_span],
                                   atol=5e-5)
        np.testing.assert_allclose(epsilon.loc[fixed_span, f"{test}_eps{sanity['epsilon']:g}"],
                                   main.xs(test, level="test")[fixed_span], atol=5e-5)
        # A larger ε can only lower Decrease Acc (fewer Δs fall below −ε).
        levels = [f"{test}_eps{e:g}" for e in sorted(sanity["ablations"]["epsilons"])]
        assert (np.diff(epsilon[levels].to_numpy(), axis=1) <= 1e-9).all()
    semantic = _csv(sanity_workspace, "tableE3")
    assert {"missing_random", "missing_semantic", "extra_random", "extra_semantic"} <= set(semantic.columns)


def test_shift_changes_only_cosine(sanity_workspace: Path) -> None:
    """App. E.2: adding a constant to every activation leaves every metric but cosine unchanged (App. A.4)."""
    shift = _csv(sanity_workspace, "tableE2").set_index("metric")
    invariant = shift.drop(index="cosine")
    assert (invariant["delta_auprc"] == 0.0).all(), invariant["delta_auprc"]
    assert (invariant["original_auprc"] == invariant["shifted_auprc"]).all()


def test_combination_tables(sanity_workspace: Path) -> None:
    sanity = _params(sanity_workspace)["sanity"]
    combinations = sanity["combinations"]["metrics"]
    for name in ("tableE6", "tableE7", "tableE8"):
        assert _csv(sanity_workspace, name)["metric"].tolist() == [*combinations, "f1"], name
    e9 = _csv(sanity_workspace, "tableE9")
    assert e9["metric"].tolist() == [*combinations, *sanity["metrics"]]
    for setting in sanity["combinations"]["meta_settings"]:
        # the table ranks the unrounded meta-AUPRC; values equal after the CSV's rounding may rank either way
        values, ranks = -e9[f"{setting}_auprc"].to_numpy(), e9[f"{setting}_rank"].to_numpy()
        assert (rankdata(values, method="min") <= ranks).all() and (ranks <= rankdata(values, method="max")).all()


def test_ties_table_holds_both_modes_and_their_means(sanity_workspace: Path) -> None:
    sanity = _params(sanity_workspace)["sanity"]
    ties = _csv(sanity_workspace, "ties")
    assert set(ties["metric"]) == set(sanity["tie_metrics"])
    detail, means = ties[ties["case"] != "mean"], ties[ties["case"] == "mean"]
    averaged = detail[(detail["source"] != "experimental") | detail["case"].isin(sanity["mean_settings"])]
    recomputed = averaged.groupby(["source", "metric", "test", "ties"])["decrease_acc"].mean()
    np.testing.assert_allclose(means.set_index(["source", "metric", "test", "ties"])["decrease_acc"]
                               .loc[recomputed.index], recomputed, atol=2e-4)
    experimental_cases = set(detail.loc[detail["source"] == "experimental", "case"])
    assert experimental_cases == set(sanity["settings"])
    table3 = _csv(sanity_workspace, "table3").set_index("metric")
    ours = means[(means["ties"] == sanity["ties"])].set_index(["source", "metric", "test"])["decrease_acc"]
    for metric in sanity["tie_metrics"]:
        for test in TESTS:
            assert ours.loc[("experimental", metric, test)] == pytest.approx(
                table3.loc[metric, f"experimental_{test}"], abs=2e-4)


def test_reruns_are_byte_identical(sanity_workspace: Path, tmp_path: Path) -> None:
    """Two sanity tables rerun on a copy of the build give the shared build's bytes."""
    targets = ["results/sanity/experimental/cbm_concepts_gt.csv", "results/sanity/theoretical/reference.csv"]
    copy = copy_of_build(sanity_workspace, tmp_path / "copy")
    run_tool(["snakemake", "--cores", "2", "--forcerun", *targets, "--", *targets], copy)
    for target in targets:
        assert (copy / target).read_bytes() == (sanity_workspace / target).read_bytes(), target

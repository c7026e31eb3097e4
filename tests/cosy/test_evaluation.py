"""Explanations, image plans and the CoSy tables on hand-made activations with known answers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from neuroneval.cosy.evaluation import (
    explanation_table,
    generative_summary,
    generative_table,
    image_plan,
    image_rows,
    mean_pairwise_cosine,
    score_table,
    select_units,
    table2,
)
from neuroneval.cosy.options import CosyOptions, CosySeedsOptions
from neuroneval.cosy.prompts import fill_template
from neuroneval.metrics import WpmiOptions
from tests.oracles import mann_whitney_p, mann_whitney_u

CLASSES = ["class:red_solid_circle", "class:blue_striped_square", "class:green_dotted_star", "class:pink_solid_ring"]
OPTIONS = CosyOptions.from_params({"n_images": 4, "template": "closeup",
                                   "templates": {"names": ["a", "closeup"], "n_concepts": 1, "n_natural": 5},
                                   "seeds": {"generation_seeds": [0, 1, 2], "n_units": 2}})


def _truth() -> pd.DataFrame:
    return pd.DataFrame({"unit": [str(k) for k in range(4)], "concept": CLASSES})


def test_select_units_is_order_free_and_seeded() -> None:
    units = [str(k) for k in range(50)]
    chosen = select_units(units, 10, seed=0)
    assert len(chosen) == 10 and chosen == sorted(chosen, key=int)
    assert set(select_units(units[::-1], 10, seed=0)) == set(chosen)
    assert set(select_units([*units[:30], "x"], 10, seed=0)) - {"x"} <= set(chosen) | set(units)
    assert set(select_units(units, 10, seed=1)) != set(chosen)
    assert select_units(units, None, seed=0) == units
    with pytest.raises(ValueError, match="max_units"):
        select_units(units, 0, seed=0)


def test_explanation_table() -> None:
    table = explanation_table(_truth(), setting="s", candidates=CLASSES, max_units=None, seed=0)
    assert len(table) == 8 and set(table["method"]) == {"true", "random"}
    true = table[table["method"] == "true"]
    random = table[table["method"] == "random"]
    assert true["explanation"].tolist() == ["a red solid circle", "a blue striped square", "a green dotted star",
                                            "a pink solid ring"]
    assert (random["concept"].to_numpy() != true["concept"].to_numpy()).all()
    again = explanation_table(_truth(), setting="other", candidates=CLASSES, max_units=None, seed=0)
    assert again["concept"].tolist() == table["concept"].tolist()  # same unit + truth -> same random draw
    with pytest.raises(ValueError, match="no concept other than"):
        explanation_table(_truth().iloc[:1], setting="s", candidates=CLASSES[:1], max_units=None, seed=0)
    with pytest.raises(ValueError, match="needs columns unit, concept"):
        explanation_table(_truth().rename(columns={"concept": "c"}), setting="s", candidates=CLASSES,
                          max_units=None, seed=0)


def test_image_plan_covers_the_studies() -> None:
    table = explanation_table(_truth(), setting="s", candidates=CLASSES, max_units=None, seed=0)
    plan = image_plan(table, OPTIONS)
    main = plan[(plan["template"] == "closeup") & (plan["generation_seed"] == 0)]
    assert set(main["explanation"]) == set(table["explanation"]) and len(main) == 4 * table["explanation"].nunique()
    assert set(plan.loc[plan["template"] == "a", "explanation"]) == {"a red solid circle"}
    seeded = plan[plan["generation_seed"] > 0]
    assert set(seeded["explanation"]) == {"a red solid circle", "a blue striped square"}
    assert plan["path"].is_unique


def _fake_run():
    """4 units; unit k fires (value 3) on images of class k, else noise; control: 25 images per class + 400 others."""
    rng = np.random.default_rng(0)
    table = explanation_table(_truth(), setting="s", candidates=CLASSES, max_units=None, seed=0)
    plan = image_plan(table, dataclasses.replace(
        OPTIONS, templates=dataclasses.replace(OPTIONS.templates, n_concepts=0),
        seeds=CosySeedsOptions(generation_seeds=(0,), n_units=0)))
    manifest = plan.assign(generator="fake", config_hash="0")
    concept_index = {concept: k for k, concept in enumerate(CLASSES)}
    explanation_concept = dict(zip(table["explanation"], table["concept"], strict=False))
    image_class = manifest["explanation"].map(explanation_concept).map(concept_index).to_numpy()
    synthetic = rng.normal(0, 0.1, size=(len(manifest), 4))
    synthetic[np.arange(len(manifest)), image_class] += 3.0
    control_class = np.r_[np.repeat(np.arange(4), 25), np.full(400, -1)]
    control = rng.normal(0, 0.1, size=(500, 4))
    control[np.arange(100), control_class[:100]] += 3.0
    target = {str(k): control_class == k for k in range(4)}
    shared = {"unit_names": [str(k) for k in range(4)], "control": control, "target_labels": target,
              "synthetic": synthetic, "manifest": manifest, "generator": "fake"}
    return table, shared


def test_score_table_separates_true_from_random() -> None:
    table, shared = _fake_run()
    scores = score_table(table, template="closeup", **shared)
    assert len(scores) == 16 and scores["n_synthetic"].eq(4).all()
    without = scores[scores["control"] == "without_target"]
    assert without["n_control"].eq(475).all()
    assert (without.loc[without["method"] == "true", "auc"] == 1.0).all()
    assert (without.loc[without["method"] == "random", "auc"] < 0.8).all()
    for row in scores.itertuples(index=False):  # two-sided test of the same two samples, counted by hand
        k = int(row.unit)
        keep = ~shared["target_labels"][row.unit] if row.control == "without_target" else slice(None)
        images = image_rows(shared["manifest"], fill_template("closeup", row.explanation))
        first, second = list(shared["synthetic"][images, k]), list(shared["control"][keep, k])
        assert (row.u, row.p_value) == (mann_whitney_u(first, second),
                                        pytest.approx(mann_whitney_p(first, second), rel=1e-9))
    summary = table2(scores)
    assert summary["method"].tolist()[:2] == ["true", "random"]
    row = summary[(summary["control"] == "without_target") & (summary["method"] == "true")].iloc[0]
    assert row["auc_mean"] == 1.0 and row["n_units"] == 4 and row["mad_mean"] > 10
    # with the target class in the control set, the true explanation's images tie with those natural images
    with_target = scores[(scores["control"] == "with_target") & (scores["method"] == "true")]
    assert (with_target["auc"] < 1.0).all() and (with_target["auc"] > 0.8).all()


def test_score_table_names_unknown_units_and_prompts() -> None:
    table, shared = _fake_run()
    with pytest.raises(ValueError, match="unit '9'"):
        score_table(table.assign(unit="9"), template="closeup", **shared)
    with pytest.raises(ValueError, match="no images of prompt 'realistic photo of a close up of a purple star'"):
        score_table(table.assign(explanation="a purple star"), template="closeup", **shared)


def test_generative_concepts_miss_labels() -> None:
    table, shared = _fake_run()
    long = generative_table(table, template="closeup", metrics=["recall", "precision", "inverse_auc", "mad"],
                            options=WpmiOptions(alpha=0.06, lam=1.0), **shared)
    summary = generative_summary(long, tolerance=0.05).set_index("metric")
    # the generative c_t misses the 25 natural positives of each class: 25 / (25 + 4); the top 6 % (31 inputs)
    # hold all 29 positives, so precision stays 1 while recall falls from 29/31 to 4/31
    assert summary["missing_fraction"].iloc[0] == pytest.approx(25 / 29)
    assert summary.loc["recall", "verdict"] == "drops"
    assert summary.loc["precision", "verdict"] == "stable" and summary.loc["inverse_auc", "verdict"] == "stable"
    assert summary.loc["precision", "generative"] == 1.0
    assert summary.loc["recall", "generative"] == pytest.approx(4 / 31)


def test_mean_pairwise_cosine() -> None:
    a = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert mean_pairwise_cosine(a) == 0.0
    assert mean_pairwise_cosine(a, np.array([[1.0, 0.0]])) == 0.5
    assert np.isnan(mean_pairwise_cosine(a[:1]))
    assert fill_template("a", "x") == "a x"


def test_figures_draw_data_and_placeholders(tmp_path) -> None:
    from neuroneval.cosy.evaluation import natural_table
    from neuroneval.figures.cosy import plot_distributions, plot_natural, plot_templates

    table, shared = _fake_run()
    natural = natural_table(table, template="closeup", **shared)
    assert (natural["auc_natural"] == 1.0).all() and (natural["n_natural"] == 25).all()
    assert plot_natural(natural, tmp_path / "natural.png").stat().st_size > 5_000
    for plot in (plot_templates, plot_natural, plot_distributions):
        assert plot(pd.DataFrame(), tmp_path / f"{plot.__name__}.png").stat().st_size > 1_000

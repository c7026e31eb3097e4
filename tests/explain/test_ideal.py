"""The ceiling of the explanation tables (neuroneval.explain.ideal; its CoSy and crowd rows in neuroneval.method_eval):
the truth explanation on the world's ideal unit, against numpy/scipy correlations, a brute-force AUC and closed
forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from neuroneval import explain_catalogue, io
from neuroneval.explain import truth_explanations
from neuroneval.explain.ideal import IDEAL, ideal_scores
from neuroneval.meta.ideal_units import load_ideal_units
from neuroneval.method_eval.cosy_table3 import CONCEPT_RENDERING_GENERATORS, UNDEFINED_REASON, ideal_cosy_scores
from tests.explain.test_benchmark_scorers import brute_auc

NAMES = ["c:a", "c:b", "c:c", "c:d"]
TRUTH = {"0": ["c:a"], "1": ["c:b", "c:c"], "2": ["c:d"]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """300 inputs, 4 binary labels, 4 trained units (unit 3 has no truth), a generative table for the same units."""
    root = tmp_path_factory.mktemp("ideal_world")
    rng = np.random.default_rng(0)
    ids = np.arange(300) * 2
    labels = (rng.random((300, 4)) < [0.1, 0.2, 0.15, 0.3]).astype(np.float32)
    trained = labels @ rng.random((4, 4)) + rng.normal(0, 0.3, (300, 4))
    units = ["0", "1", "2", "3"]
    io.write_activation_table(root / "out.parquet", pd.DataFrame({"input_id": ids, **{
        unit: trained[:, k] for k, unit in enumerate(units)}}), metadata={"model": "m", "layer": "out"})
    generative = np.clip(labels[:, [0, 1, 3]] * 0.6 + rng.random((300, 3)) * 0.4, 0, 1)
    io.write_activation_table(root / "ideal.parquet", pd.DataFrame({"input_id": ids, **{
        unit: generative[:, k] for k, unit in enumerate(["0", "1", "2"])}}), metadata={"model": "ideal",
                                                                                    "layer": "out"})
    io.write_concept_table(root / "labels.parquet", pd.DataFrame({"input_id": ids, **{
        name: labels[:, t] for t, name in enumerate(NAMES)}}), metadata={"source": "labels"})
    truth = pd.DataFrame([(unit, concept) for unit, concepts in TRUTH.items() for concept in concepts],
                         columns=["unit", "concept"])
    return {"root": root, "labels": labels, "generative": generative, "truth": truth}


def test_ideal_units_are_the_union_of_the_truth_labels(world: dict) -> None:
    root = world["root"]
    data, source = load_ideal_units([root / "out.parquet"], root / "labels.parquet", root / "labels.parquet",
                                    world["truth"])
    labels = world["labels"]
    assert source == "labels" and data.unit_names == ["0", "1", "2"]
    expected = np.stack([labels[:, 0], np.maximum(labels[:, 1], labels[:, 2]), labels[:, 3]], axis=1)
    assert np.array_equal(data.activations, expected)
    data, source = load_ideal_units([root / "out.parquet"], root / "labels.parquet", root / "labels.parquet",
                                    world["truth"], ideal_files=[root / "ideal.parquet"])
    assert source == "generative_probability" and np.allclose(data.activations, world["generative"])


def test_truth_on_label_ideal_units_scores_one_in_every_metric(world: dict) -> None:
    """On labels the fuzzy OR of the truth labels is their max, the ideal unit itself: ρ = 1 (scipy's pearsonr of a
    vector with itself) and every sanity-passing metric at its maximum 1."""
    root, labels = world["root"], world["labels"]
    data, _ = load_ideal_units([root / "out.parquet"], root / "labels.parquet", root / "labels.parquet",
                               world["truth"])
    ideal = pd.DataFrame(data.activations.astype(np.float64), columns=data.unit_names)
    scores = ideal_scores(truth_explanations(TRUTH), ideal, labels.astype(np.float64), NAMES)
    assert list(scores["unit"]) == ["0", "1", "2"]
    for k, unit in enumerate(data.unit_names):
        assert pearsonr(ideal[unit], ideal[unit]).statistic == pytest.approx(1.0)
        row = scores.iloc[k]
        assert row["simulation_correlation"] == pytest.approx(1.0)
        assert row[["f1", "iou", "correlation", "cosine", "auprc"]].to_numpy(dtype=float) == pytest.approx(1.0)


def test_truth_on_generative_ideal_units_is_pearson_of_the_simulation(world: dict) -> None:
    """A stochastic world: ρ between the ideal unit P(c_T | x) and the truth's fuzzy-OR simulation (by hand)."""
    labels, generative = world["labels"].astype(np.float64), world["generative"]
    ideal = pd.DataFrame(generative, columns=["0", "1", "2"])
    scores = ideal_scores(truth_explanations(TRUTH), ideal, labels, NAMES).set_index("unit")
    simulated = {"0": labels[:, 0], "1": 1 - (1 - labels[:, 1]) * (1 - labels[:, 2]), "2": labels[:, 3]}
    for unit, values in simulated.items():
        expected = np.corrcoef(ideal[unit], values)[0, 1]
        assert scores.loc[unit, "simulation_correlation"] == pytest.approx(expected)
        assert scores.loc[unit, "simulation_correlation"] < 1.0
    constant = pd.DataFrame({"0": np.ones(len(labels))})
    with pytest.warns(Warning, match="zero-variance|every input active"):
        scored = ideal_scores(truth_explanations(TRUTH), constant, labels, NAMES)
    assert scored["simulation_correlation"].item() == 0.0


def test_ideal_cosy_scores_match_brute_force_and_the_closed_form() -> None:
    """Oracle images all show the concept (a* = 1): AUC = 1 − p/2 (ties ½), MAD = (1 − p)/std(A0)."""
    from neuroneval.cosy.synthesis import plan_images

    rng = np.random.default_rng(1)
    control = (rng.random((200, 2)) < [0.1, 0.25]).astype(np.float64)
    prompts = pd.DataFrame({"setting": "s", "method": "truth", "unit": ["u0", "u1"], "concept": ["c:a", "c:b"],
                            "explanation": ["a circle", "a square"]})
    manifest = plan_images(["a circle", "a square"], templates=["closeup"], n_images=4)
    scores = ideal_cosy_scores(prompts, unit_names=["u0", "u1"], control=control, manifest=manifest,
                               template="closeup", generator=CONCEPT_RENDERING_GENERATORS[0])
    assert list(scores["method"]) == [IDEAL, IDEAL]
    for k, row in enumerate(scores.itertuples(index=False)):
        p = control[:, k].mean()
        assert row.auc == pytest.approx(brute_auc(control[:, k], np.ones(4))) == pytest.approx(1 - p / 2)
        assert row.mad == pytest.approx((1 - p) / control[:, k].std(ddof=1))
        assert row.n_synthetic == 4 and row.n_control == 200
    undefined = ideal_cosy_scores(prompts, unit_names=["u0", "u1"], control=control, manifest=manifest,
                                  template="closeup", generator="embedded")
    assert undefined[["auc", "mad"]].isna().all().all() and (undefined["n_synthetic"] == 0).all()
    assert list(undefined["method"]) == [IDEAL, IDEAL] and "embedded" in UNDEFINED_REASON.format(generator="embedded")


def test_the_steps_name_the_ceiling_rows_alike() -> None:
    assert explain_catalogue.IDEAL == IDEAL and IDEAL in explain_catalogue.REFERENCE_ROWS
    assert explain_catalogue.method_tables(IDEAL) == (1, 2) and IDEAL not in explain_catalogue.BASELINES


def test_fidelity_claims_never_count_the_ceiling_as_a_method() -> None:
    from neuroneval.fidelity import claims

    rows = [("le_label", 0.6), ("compexp", 0.4), ("truth", 0.5), (IDEAL, 1.0)]
    unit_effect = np.linspace(-0.1, 0.1, 12)
    scores = pd.DataFrame([{"setting": "a", "group": "softmax", "table": 2, "method": method, "unit": f"u{i}",
                            "simulation_correlation": mean + unit_effect[i]}
                           for method, mean in rows for i in range(unit_effect.size)])
    _, other_settings = claims.le_best_claims(scores, {"a": {"scored_on": "labels", "concepts": "labels"}})
    assert other_settings.verdict == "holds" and IDEAL in claims.EXPLAIN_BASELINES
    assert IDEAL not in other_settings.our_value


def test_ideal_crowd_scores_study_the_truth_on_the_ideal_units_only(world: dict) -> None:
    """Units without an ideal column are left out; the rest get the very study ``crowd_unit_scores`` runs for every
    method, under the method name ``ideal`` (same seeds: the rows are equal)."""
    from neuroneval.method_eval.crowd_table3 import CrowdBenchmarkOptions, crowd_unit_scores, ideal_crowd_scores

    truth = truth_explanations(world["truth"])
    options = CrowdBenchmarkOptions(n_trials=4, n_inputs=60, sampling="uniform", aggregation=("bayes_uniform",))
    ideal = world["generative"][:, :1]
    rows = ideal_crowd_scores(truth, ideal, ["0"], setting="s", labels=world["labels"], pseudo=None,
                              concept_names=NAMES, options=options)
    assert set(rows["unit"]) == {"0"} and set(rows["method"]) == {IDEAL}
    direct = crowd_unit_scores(setting="s", method=IDEAL, units=["0"], concepts=["c:a"], activations=ideal,
                               unit_names=["0"], labels=world["labels"], pseudo=None, concept_names=NAMES,
                               options=options)
    pd.testing.assert_frame_equal(rows.reset_index(drop=True), direct.reset_index(drop=True))

"""The explanation-benchmark steps (neuroneval.pipeline.explain_steps) on a tiny synthetic setting with planted truth,
called with SimpleNamespace jobs as Snakemake would; and ``neuroneval explain`` on the same tables."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.special import expit

from neuroneval import io
from neuroneval.cli import main
from neuroneval.explain import Text, parse, read_explanations
from neuroneval.explain.agreement import ranking_agreement
from neuroneval.explain.benchmark import (
    holdout_mask,
    pseudo_cosines,
    reference_rows,
    score_setting,
    summary_table,
    truth_recovered,
    unit_groups,
)
from neuroneval.explain.benchmark import score_names as score_columns
from neuroneval.explain.explanation import length
from neuroneval.explain_catalogue import (
    BASELINES,
    EXPLAIN_METHODS,
    IDEAL,
    REFERENCE_ROWS,
    base_method,
    method_files,
    method_options,
    method_tables,
)
from neuroneval.pipeline.explain_benchmark_steps import explain_benchmark, explain_crowd
from neuroneval.pipeline.explain_steps import explain_results, explain_score, explain_setting

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN = {"methods": {"netdissect": {"quantile": 0.02}, "le_label": {"max_length": 4}, "compexp": {"beam_size": 3},
                       "invert": {"beam_size": 3}},
           "max_length": 2, "simple": ["le_label", "compexp"], "random_seed": 0}
SETTING = {"dataset": "toy", "units": [{"model": "m", "layer": "out"}],
           "concepts": {"source": "labels", "prefixes": ["c:"]}}
SPEC = {"methods": ["netdissect", "clip_dissect", "le_label", "le_pseudo", "compexp", "invert"]}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """600 inputs, 12 binary concepts; 8 units each a noisy copy of one concept (its truth), with pseudo-labels."""
    root = tmp_path_factory.mktemp("explain_toy")
    rng = np.random.default_rng(0)
    n, names = 600, [f"c:{t}" for t in range(12)]
    labels = (rng.random((n, 12)) < np.linspace(0.08, 0.3, 12)).astype(np.float32)
    activations = labels[:, :8] * 2.0 + rng.normal(0.0, 0.3, (n, 8))
    ids = np.arange(n) * 3
    units = [str(k) for k in range(8)]
    io.write_activation_table(root / "out.parquet", pd.DataFrame(
        {"input_id": ids, **{unit: activations[:, k] for k, unit in enumerate(units)}}),
        metadata={"model": "m", "layer": "out", "dataset": "toy",
                  "unit_concepts": {unit: [names[k]] for k, unit in enumerate(units)}})
    io.write_concept_table(root / "labels.parquet", pd.DataFrame(
        {"input_id": ids, **{name: labels[:, t] for t, name in enumerate(names)}}), metadata={"source": "labels"})
    cosines = 0.3 * labels + rng.normal(0.0, 0.08, labels.shape)
    pseudo = expit(20.0 * (cosines - 0.15))
    io.write_concept_table(root / "pseudo.parquet", pd.DataFrame(
        {"input_id": ids, **{name: pseudo[:, t] for t, name in enumerate(names)}}),
        metadata={"source": "pseudo:clip", "a": 20.0, "b": 0.15})
    pd.DataFrame({"unit": units, "concept": names[:8]}).to_csv(root / "truth.csv", index=False)
    return {"root": root, "activations": root / "out.parquet", "labels": root / "labels.parquet",
            "pseudo": root / "pseudo.parquet", "truth": root / "truth.csv"}


def _explain_job(toy: dict[str, Path], method: str) -> SimpleNamespace:
    output = toy["root"] / "explanations" / f"{method}.csv"
    return SimpleNamespace(
        input=SimpleNamespace(activations=[str(toy["activations"])], concepts=str(toy["labels"]),
                              labels=str(toy["labels"]), pseudo=str(toy["pseudo"]), truth=str(toy["truth"])),
        output=SimpleNamespace(explanations=str(output)),
        params=SimpleNamespace(setting=SETTING, spec=SPEC, options=method_options(EXPLAIN, method),
                               holdout_fraction=0.25, seed=0, batch_size=64, pooling="mean"),
        wildcards=SimpleNamespace(setting="toy", method=method), threads=1)


@pytest.fixture(scope="module")
def scored(toy: dict[str, Path]) -> tuple[list[str], pd.DataFrame]:
    methods = method_files(SPEC, EXPLAIN["simple"])
    for method in methods:
        explain_setting(_explain_job(toy, method))
    output = toy["root"] / "scores.csv"
    explain_score(SimpleNamespace(
        input=SimpleNamespace(activations=[str(toy["activations"])], labels=str(toy["labels"]),
                              truth=str(toy["truth"]),
                              explanations=[str(toy["root"] / "explanations" / f"{m}.csv") for m in methods]),
        output=SimpleNamespace(scores=str(output)),
        params=SimpleNamespace(setting=SETTING, methods=methods, holdout_fraction=0.25, seed=0, alpha=0.02),
        wildcards=SimpleNamespace(setting="toy"), threads=1))
    return methods, pd.read_csv(output, dtype={"unit": str})


def test_method_files_tables_and_options() -> None:
    files = method_files(SPEC, EXPLAIN["simple"])
    assert files == [*SPEC["methods"], "le_label_l1", "compexp_l1", *BASELINES]
    assert base_method("compexp_l1") == ("compexp", True) and base_method("random_l1") == ("random_l1", False)
    assert {name: method_tables(name) for name in ("netdissect", "compexp", "compexp_l1", "random", "random_l1",
                                                   "truth", "captions")} == {
        "netdissect": (1,), "compexp": (2,), "compexp_l1": (1,), "random": (2,), "random_l1": (1,),
        "truth": (1, 2), "captions": (1,)}
    assert method_options(EXPLAIN, "compexp") == {"beam_size": 3, "max_length": 2}
    assert method_options(EXPLAIN, "le_label") == {"max_length": 4}
    assert method_options(EXPLAIN, "le_label_l1") == {"max_length": 1}
    assert method_options(EXPLAIN, "random") == {"length": 2, "seed": 0}
    assert method_options(EXPLAIN, "random_l1") == {"length": 1, "seed": 0}


def test_schema_lists_the_methods_the_steps_know() -> None:
    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())["properties"]["explain"]
    setting = schema["properties"]["settings"]["additionalProperties"]["properties"]
    assert tuple(setting["methods"]["items"]["enum"]) == EXPLAIN_METHODS
    assert set(schema["properties"]["methods"]["properties"]) == set(EXPLAIN_METHODS)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["explain"]
    assert set(params["settings"]) <= set(yaml.safe_load((ROOT / "params.yaml").read_text())["settings"])


def test_holdout_groups_recovery_and_cosines() -> None:
    held = holdout_mask(10, 0.2, 0)
    assert held.sum() == 2 and np.array_equal(held, holdout_mask(10, 0.2, 0))
    with pytest.raises(ValueError, match="at least 2"):
        holdout_mask(5, 0.1, 0)
    assert unit_groups(["softmax"], ["0", "1"]) == ["softmax", "softmax"]
    assert unit_groups(["softmax", "superclass"], ["softmax.0", "superclass.parent:red"]) == ["softmax", "superclass"]
    assert truth_recovered(parse("c:1 AND NOT c:2", "formula"), ["c:2"])
    assert not truth_recovered(parse("0.5*c:1 + 0.1", "linear"), ["c:2"])
    assert truth_recovered(Text("red striped circle"), ["class:red_circle"])
    cosines = np.array([[0.1, 0.3], [-0.2, 0.25]])
    assert np.allclose(pseudo_cosines(expit(20.0 * (cosines - 0.15)), {"a": 20.0, "b": 0.15}, ["x", "y"]), cosines)
    per_concept = {"a": {"x": 10.0, "y": 40.0}, "b": {"x": 0.0, "y": 0.2}}
    values = expit(np.array([10.0, 40.0]) * (cosines - np.array([0.0, 0.2])))
    assert np.allclose(pseudo_cosines(values, per_concept, ["x", "y"]), cosines)
    with pytest.raises(ValueError, match="lacks concepts"):
        pseudo_cosines(values, per_concept, ["x", "z"])


def test_ranking_agreement_is_one_for_the_same_ranking() -> None:
    reference = np.random.default_rng(0).random((30, 4)) + np.arange(4)
    tau, low, high = ranking_agreement(reference, 2 * reference, n_boot=20, ci_level=0.9, seed=0)
    assert tau == pytest.approx(1.0) and low == pytest.approx(1.0) and high == pytest.approx(1.0)
    assert np.isnan(ranking_agreement(reference[:, :1], reference[:, :1], n_boot=5, ci_level=0.9, seed=0)[0])


def test_explanation_files_follow_the_contract(toy, scored) -> None:
    methods, _ = scored
    for method in methods:
        frame = read_explanations(toy["root"] / "explanations" / f"{method}.csv")
        assert list(frame.columns[:4]) == ["unit", "explanation", "length", "kind"]
        assert len(frame) == 8, method
    assert read_explanations(toy["root"] / "explanations" / "compexp_l1.csv")["length"].max() == 1
    assert read_explanations(toy["root"] / "explanations" / "compexp.csv")["length"].max() <= 2
    truth = read_explanations(toy["root"] / "explanations" / "truth.csv")
    assert list(truth["explanation"]) == [f"c:{k}" for k in range(8)]


def test_scores_put_the_ceiling_above_and_random_below_every_method(scored) -> None:
    """In every scorer of the scores (simulation correlation and each NeuronEval metric) the ceiling (the truth on
    the ideal units) is at least every method's and the truth's mean; random is below every method in simulation
    correlation (not in every metric: a random OR of two concepts predicts many inputs active, which cosine, on
    raw values, rewards over compexp's narrow formulas here)."""
    _, scores = scored
    assert list(scores.columns) == ["setting", "group", "method", "table", "unit", "kind", "length",
                                    *score_columns(), "truth_recovered"]
    for column in score_columns():
        means = scores.groupby(["table", "method"])[column].mean()
        for table in (1, 2):
            row = means.loc[table]
            floor = row["random_l1" if table == 1 else "random"]
            for method in row.index.difference(list(REFERENCE_ROWS)):
                assert row[method] <= row[IDEAL] + 1e-9, (column, table, method)
                assert floor < row[method] or column != "simulation_correlation", (table, method)
            assert row["truth"] <= row[IDEAL] + 1e-9, (column, table)
    ideal = scores[scores["method"] == IDEAL]
    assert np.allclose(ideal[score_columns()].to_numpy(), 1.0), "labels simulate their own label units exactly"
    recovery = scores.groupby("method")["truth_recovered"].mean()
    assert recovery["truth"] == 1.0 and recovery["netdissect"] >= 0.75 and recovery["random_l1"] < 0.5


def test_one_hot_concepts_get_the_exact_optimum_above_every_explanation() -> None:
    """Where each input has at most one concept (the LM's next tokens) the scores gain the ``oracle`` rows: in every
    scorer at least every explanation's score on the same unit, the truth's and random's included; the tables carry
    its simulation correlation as ``optimum``. Multi-label concepts (the toy above) get none."""
    from neuroneval.explain.oracle import ORACLE

    rng = np.random.default_rng(5)
    n, names = 800, [f"c:{t}" for t in range(6)]
    token = rng.choice(7, size=n, p=[0.02, 0.05, 0.1, 0.2, 0.25, 0.18, 0.2])
    concepts = np.zeros((n, 6))
    concepts[np.flatnonzero(token < 6), token[token < 6]] = 1.0
    units = [str(k) for k in range(4)]
    activations = expit(rng.normal(0.0, 1.0, (n, 4)) + 2.0 * concepts[:, :4] + concepts[:, [5, 4, 3, 2]])
    rows = {"truth": [f"c:{k}" for k in range(4)], "random_l1": ["c:5", "c:0", "c:1", "c:4"],
            "compexp": ["c:0 OR c:5", "c:1 AND NOT c:2", "c:2 OR c:3", "c:3 OR c:4"],
            "le_label": ["2.0*c:0 + 1.0*c:5", "1.5*c:1", "1.0*c:2 + 0.5*c:3", "2.0*c:3 + 1.0*c:2"]}
    kinds = {"truth": "concept", "random_l1": "concept", "compexp": "formula", "le_label": "linear"}
    explanations = {method: pd.DataFrame({"unit": units, "explanation": texts, "kind": kinds[method],
                                          "length": [length(parse(text, kinds[method])) for text in texts]})
                    for method, texts in rows.items()}
    truth = {unit: [text] for unit, text in zip(units, rows["truth"], strict=True)}
    scores = score_setting(explanations, activations, units, ["out"] * 4, concepts, names, truth, alpha=0.02)
    scores.insert(0, "setting", "one_hot")
    oracle = scores[scores["method"] == ORACLE]
    assert sorted(oracle["table"].unique()) == [1, 2] and ORACLE in reference_rows()
    best = oracle[oracle["table"] == 1].set_index("unit")[score_columns()]
    for method, frame in scores[scores["method"] != ORACLE].groupby("method"):
        values = frame.drop_duplicates("unit").set_index("unit")[score_columns()]
        assert (values <= best.loc[values.index] + 1e-9).all().all(), method
    assert (best["simulation_correlation"] > scores.loc[scores["method"] == "truth"].set_index("unit")[
        "simulation_correlation"].drop_duplicates()).any()
    for table_id in (1, 2):
        table = summary_table(scores, table_id)
        assert (table["optimum"] == best["simulation_correlation"].mean()).all()


def test_tables_and_figure(toy, scored, tmp_path: Path) -> None:
    scores_path = toy["root"] / "scores.csv"
    outputs = {name: tmp_path / file for name, file in (("table1", "table1.csv"), ("table2", "table2.csv"),
                                                         ("figure", "table1.png"))}
    explain_results(SimpleNamespace(input=SimpleNamespace(scores=[str(scores_path)]),
                                    output=SimpleNamespace(**{k: str(v) for k, v in outputs.items()}),
                                    params=SimpleNamespace(), wildcards=SimpleNamespace(), threads=1))
    table1, table2 = pd.read_csv(outputs["table1"]), pd.read_csv(outputs["table2"])
    assert set(table1["method"]) == {"netdissect", "clip_dissect", "le_label_l1", "compexp_l1", "random_l1",
                                     "truth", IDEAL}
    assert set(table2["method"]) == {"le_label", "le_pseudo", "compexp", "invert", "random", "truth", IDEAL}
    for table in (table1, table2):
        assert {"simulation_correlation_mean", "simulation_correlation_se", "truth_recovery", "floor",
                "ceiling"} <= set(table.columns)
        assert (table["n_units"] == 8).all() and (table["group"] == "out").all()
        ceiling = table.loc[table["method"] == IDEAL, "simulation_correlation_mean"].item()
        assert (table["ceiling"] == ceiling).all() and ceiling == pytest.approx(1.0)
    assert outputs["figure"].stat().st_size > 5_000


CROWD = {"settings": ["toy"], "methods": ["netdissect", "le_label_l1", "compexp_l1"], "max_units": None,
         "n_inputs": 90, "n_raters": 2, "sampling": "pseudo", "aggregation": ["bayes_uniform", "bayes_pseudo"],
         "rater_error": 0.13, "uniform_prior": 0.01, "prior_clip": [0.001, 0.999], "n_trials": 5, "epsilon": 0.001,
         "ddof": 1, "seed": 0}


def test_crowd_table_and_scorer_agreement(toy, scored, tmp_path: Path) -> None:
    """The simulated crowd on the toy's held-out inputs: the truth above random for both aggregations, and the
    agreement table has the simulation-vs-metric rows and the simulation-vs-crowd rows."""
    methods = [*CROWD["methods"], "random_l1", "truth"]
    crowd_path = tmp_path / "crowd.csv"
    explain_crowd(SimpleNamespace(
        input=SimpleNamespace(activations=[str(toy["activations"])], labels=str(toy["labels"]),
                              pseudo=str(toy["pseudo"]), truth=str(toy["truth"]), ideal=[],
                              explanations=[str(toy["root"] / "explanations" / f"{m}.csv") for m in methods]),
        output=SimpleNamespace(scores=str(crowd_path)),
        params=SimpleNamespace(setting=SETTING, crowd=CROWD, methods=methods, holdout_fraction=0.25, seed=0),
        wildcards=SimpleNamespace(setting="toy"), threads=1))
    outputs = {name: tmp_path / file for name, file in (
        ("cosy_table", "cosy_table3.csv"), ("cosy_figure", "cosy_table3.png"), ("crowd_table", "crowd_table3.csv"),
        ("agreement", "agreement.csv"), ("agreement_figure", "agreement.png"))}
    explain_benchmark(SimpleNamespace(
        input=SimpleNamespace(scores=[str(toy["root"] / "scores.csv")], cosy=[], crowd=[str(crowd_path)]),
        output=SimpleNamespace(**{k: str(v) for k, v in outputs.items()}),
        params=SimpleNamespace(n_boot=20, ci_level=0.9, seed=0), wildcards=SimpleNamespace(), threads=1))
    crowd = pd.read_csv(outputs["crowd_table"])
    assert set(crowd["method"]) == {*methods, IDEAL}
    assert set(crowd["aggregation"]) == {"bayes_uniform", "bayes_pseudo"}
    for _, rows in crowd.groupby("aggregation"):
        rows = rows.set_index("method")
        assert rows.loc["truth", "crowd_correlation_mean"] > rows.loc["random_l1", "crowd_correlation_mean"] + 0.3
        assert (rows["floor"] == rows.loc["random_l1", "crowd_correlation_mean"]).all()
        assert (rows["ceiling"] == rows.loc[IDEAL, "crowd_correlation_mean"]).all()
        assert (rows["n_units"] == 8).all()
        others = rows.drop(index=list(REFERENCE_ROWS), errors="ignore")["crowd_correlation_mean"]
        assert (others > rows["floor"].iloc[0]).all() and (others <= rows["ceiling"].iloc[0]).all()
        assert rows.loc["truth", "crowd_correlation_mean"] <= rows["ceiling"].iloc[0]
    agreement = pd.read_csv(outputs["agreement"])
    simulated = agreement[agreement["reference"] == "simulation_correlation"]
    assert set(simulated["metric"]) == {*score_columns()[1:], "crowd:bayes_uniform", "crowd:bayes_pseudo"}
    assert set(agreement["setting"]) == {"toy", "all"} and agreement["tau"].between(-1, 1).all()
    metric_pairs = agreement[agreement["reference"].isin(score_columns()[1:])]
    assert metric_pairs.empty, "metric-vs-metric pairs are left out"
    for name in ("cosy_figure", "agreement_figure"):
        assert outputs[name].stat().st_size > 5_000


def test_cli_explain_writes_the_contract(toy, tmp_path: Path, capsys) -> None:
    out = tmp_path / "compexp.csv"
    assert main(["explain", "--method", "compexp", "--option", "max_length=2", "--option", "beam_size=3",
                 "--activations", str(toy["activations"]), "--concepts", str(toy["labels"]),
                 "--out", str(out)]) == 0
    frame = read_explanations(out)
    assert len(frame) == 8 and frame["length"].max() <= 2
    assert "wrote 8 compexp explanations" in capsys.readouterr().out
    assert main(["explain", "--method", "compexp", "--option", "beam=3", "--activations", str(toy["activations"]),
                 "--concepts", str(toy["labels"]), "--out", str(out)]) == 2
    assert "unknown option 'beam'" in capsys.readouterr().err
    assert main(["explain", "--method", "random", "--activations", str(toy["activations"]), "--concepts",
                 str(toy["labels"]), "--out", str(out)]) == 0

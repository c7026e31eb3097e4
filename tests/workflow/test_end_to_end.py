"""The workflow end to end on a tiny config: tables, byte-identical reruns, params-only reruns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.io import read_activation_table, read_concept_table
from tests.workflow.conftest import make_workspace, params_overlay, run_tool, tiny_params

ROOT = Path(__file__).resolve().parents[2]




def test_table4_has_the_final_layout(built_workspace: Path) -> None:
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    table = pd.read_csv(built_workspace / "results/table4.csv")
    settings = list(params["meta"]["settings"])
    assert table.columns.tolist() == ["metric", *settings, "mean_auprc", "mean_rank"]
    assert table["metric"].tolist() == params["meta"]["metrics"]
    values = table[settings].to_numpy()
    assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()
    verdicts = pd.read_csv(built_workspace / "results/table4_settings.csv")
    assert verdicts["setting"].tolist() == settings and verdicts["rule"].eq("separated_pair").all()
    meta = pd.read_csv(built_workspace / "results/meta.csv")
    for verdict in verdicts.itertuples():  # the verdict is the brute-force pair search on meta.csv's intervals
        rows = meta[meta["setting"] == verdict.setting]
        apart = (rows["ci_low"].to_numpy()[:, None] > rows["ci_high"].to_numpy()[None, :]).any()
        assert verdict.discriminates == verdict.in_mean == apart, verdict
    counted = verdicts.loc[verdicts["in_mean"], "setting"].tolist()
    assert counted, "no setting of the tiny build discriminates"
    np.testing.assert_allclose(table["mean_auprc"], table[counted].to_numpy().mean(axis=1), atol=1e-4)
    assert (built_workspace / "results/table4.png").stat().st_size > 10_000


def test_ceiling_scores_ideal_units_of_every_setting(built_workspace: Path) -> None:
    """results/ceiling.csv: every Table 4 setting × metric; label ideals are their concepts (correlation 1 against
    ground truth); the text world's generative ideal bounds the trained LMs; intervals bracket the estimates."""
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    settings, metrics = params["meta"]["settings"], params["meta"]["metrics"]
    ceiling = pd.read_csv(built_workspace / "results/ceiling.csv")
    assert (built_workspace / "results/ceiling.png").stat().st_size > 10_000
    assert ceiling.columns[:5].tolist() == ["setting", "metric", "ties", "meta_auprc", "ideal_source"]
    assert ceiling["setting"].tolist() == [s for s in settings for _ in metrics]
    assert ceiling["metric"].tolist() == metrics * len(settings)
    assert ((ceiling["ci_low"] <= ceiling["meta_auprc"] + 1e-12)
            & (ceiling["meta_auprc"] <= ceiling["ci_high"] + 1e-12)).all()
    meta = pd.read_csv(built_workspace / "results/meta.csv")
    assert {"ci_low", "ci_high", "n_boot"} <= set(meta.columns)
    for setting in settings:
        rows = ceiling[ceiling["setting"] == setting].set_index("metric")
        models = meta[meta["setting"] == setting].set_index("metric")
        config = params["settings"][setting]
        if config["units"][0]["layer"] == "next_token":
            assert set(rows["ideal_source"]) == {"generative_probability"}
            assert rows.loc["correlation", "meta_auprc"] > models.loc["correlation", "test_auprc"]
        else:
            assert set(rows["ideal_source"]) == {"labels"}
            if config["concepts"]["source"] == "labels":
                assert rows.loc["correlation", "meta_auprc"] == pytest.approx(1.0)


def test_tables_follow_the_data_contract(built_workspace: Path) -> None:
    activations, metadata = read_activation_table(
        built_workspace / "data/activations/vision_probe/vision_vit/softmax.parquet")
    concepts, concept_metadata = read_concept_table(built_workspace / "data/concepts/vision_probe/labels.parquet")
    assert activations["input_id"].tolist() == concepts["input_id"].tolist()
    probabilities = activations.drop(columns="input_id").to_numpy(dtype=np.float64)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert metadata["layer"] == "softmax" and metadata["model"] == "vision_vit"
    assert concept_metadata["source"] == "labels" and concept_metadata["hierarchy"]
    truth = pd.read_csv(built_workspace / "data/truth/vit_final_gt.csv", dtype=str)
    assert len(truth) == tiny_params()["world"]["vision"]["n_classes"]
    report = pd.read_csv(built_workspace / "results/worlds_report.csv")
    lower_is_better = report["model_quality_measure"] == "perplexity"
    beats_baseline = np.where(lower_is_better, report["model_quality"] < report["model_baseline"],
                              report["model_quality"] > report["model_baseline"])
    assert beats_baseline.all(), report[["setting", "model_quality", "model_baseline"]]
    pseudo = report[report["concept_source"].str.startswith("pseudo:")]
    assert len(pseudo) and pseudo["pseudo_label_auc_by_kind"].str.contains(r"(^|; )class 0\.\d{3}").all()
    summary = json.loads((built_workspace / "data/concepts/vision_probe/pseudo-clip.summary.json").read_text())
    class_rate = summary["positive_rate_by_kind"]["class"]
    pseudo_columns = set(pd.read_parquet(built_workspace / "data/concepts/vision_probe/pseudo-clip.parquet").columns)
    assert summary["calibration_scope"] == "per_concept" and set(summary["a"]) == pseudo_columns - {"input_id"}
    assert pseudo["pseudo_label_positive_rate"].notna().all() and 0 < class_rate["labels"] < 0.5


def test_digits_settings_join_table4_and_the_sanity_tests(built_workspace: Path) -> None:
    """The real-data settings (sklearn's digits, full size: 1,797 images, ~1 s of training) are Table 4 columns and
    sanity settings, their CNN learned (held-out accuracy in the worlds report), and their tables agree with
    sklearn's own targets."""
    from sklearn.datasets import load_digits

    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    digits = ["digits_cnn_final_gt", "digits_cnn_final_super_gt"]
    assert set(digits) <= set(params["meta"]["settings"]) and set(digits) <= set(params["sanity"]["settings"])
    table = pd.read_csv(built_workspace / "results/table4.csv").set_index("metric")
    assert table[digits].notna().all().all()
    hidden = ["digits_cnn_hidden_gt", "digits_cnn_hidden_attributes_gt"]  # hidden units: they must discriminate
    verdicts = pd.read_csv(built_workspace / "results/table4_settings.csv").set_index("setting")
    assert verdicts.loc[hidden, "discriminates"].all(), verdicts.loc[hidden, "reason"]
    truth = pd.read_csv(built_workspace / "data/truth/digits_cnn_hidden_attributes_gt.csv", dtype=str)
    assert len(truth) >= 32 and truth["concept"].str.match(r"(ink|symmetry|mass|centre|extent|loop):").all()
    report = pd.read_csv(built_workspace / "results/worlds_report.csv").set_index("setting")
    for name in digits:
        row = report.loc[name]
        assert row["model_quality_measure"] == "accuracy" and row["model_quality"] > 0.9 > 0.2 > row["model_baseline"]
        assert (built_workspace / f"results/sanity/experimental/{name}.csv").exists()
    assert report.loc["digits_cnn_final_super_gt", "units"] == 13 == report.loc["digits_cnn_final_super_gt", "concepts"]
    truth = pd.read_csv(built_workspace / "data/truth/digits_cnn_final_super_gt.csv", dtype=str)
    assert len(truth) == 13 and set(truth["concept"]) >= {"parent:round", "parent:straight", "parent:curvy"}
    concepts, metadata = read_concept_table(built_workspace / "data/concepts/digits_probe/labels.parquet")
    attributes = pd.read_parquet(built_workspace / "data/worlds/digits/probe/attributes.parquet")
    targets = load_digits().target[attributes["source_index"].to_numpy()]
    for digit in range(10):
        assert np.array_equal(concepts[f"class:{digit}"].to_numpy(), targets == digit)
    for group, members in params["digits"]["hierarchy"].items():
        assert np.array_equal(concepts[f"parent:{group}"].to_numpy(), np.isin(targets, members))
    assert metadata["dataset"] == "digits_probe"


#: Rebuilt from scratch in a second workspace: trains the CNN, the contrastive model and the small LM again.
REBUILT = ["results/meta/cnn_final_pseudo.csv", "results/meta/lm_small_next_token.csv",
           "data/activations/vision_probe/vision_cnn/softmax.parquet", "data/concepts/vision_probe/pseudo-clip.parquet",
           "data/activations/text_probe/lm_small/next_token.parquet",
           # checkpoints too (neuroneval.io.write_torch: no temporary file name inside the archive)
           "data/models/vision_cnn.pt", "data/models/clip.pt"]


def test_same_params_give_byte_identical_tables(built_workspace: Path, tmp_path: Path) -> None:
    """A second build from scratch (three models retrained, two settings re-evaluated) matches byte for byte."""
    second = make_workspace(tmp_path / "second", tiny_params())
    targets = [name for name in REBUILT if name.startswith("results/")]
    run_tool(["snakemake", "--cores", "2", *targets], second)
    for name in REBUILT:
        assert (second / name).read_bytes() == (built_workspace / name).read_bytes(), name


def test_a_scoring_param_reruns_scoring_only(built_workspace: Path, tmp_path: Path) -> None:
    """A shorter α grid (an overlay: the shared build is not edited) plans the meta-evaluation and Table 4 and
    nothing upstream of them."""
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    params["meta"]["alpha_grid"] = params["meta"]["alpha_grid"][:-1]
    dry = run_tool(["snakemake", "-n", "results/table4.csv", *params_overlay(tmp_path, params)], built_workspace)
    output = dry.stdout + dry.stderr
    planned = output[output.index("Job stats:"):output.index("Reasons:")]
    assert "meta_setting" in planned and "table4" in planned
    for upstream in ("vision_world", "train_vision_classifier", "vision_classifier_activations", "setting_truth",
                     "digits_world", "train_digits_classifier", "digits_classifier_activations"):
        assert upstream not in planned, planned


def test_nothing_to_do_after_a_complete_run(built_workspace: Path) -> None:
    dry = run_tool(["snakemake", "-n", "results/table4.csv"], built_workspace)
    assert "Nothing to be done" in dry.stdout + dry.stderr

"""CoSy (paper 002) as workflow targets, on top of the tiny end-to-end run (oracle and embedded generators)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from neuroneval.cosy import image_seed
from neuroneval.cosy.synthesis import read_manifest

TABLES = ("scores", "table2", "table8", "templates", "natural", "generative")
FIGURES = ("templates", "natural", "distributions")


@pytest.fixture(scope="module")
def cosy_run(built_workspace: Path) -> tuple[Path, dict]:
    """The tiny workspace, whose build includes cosy_results, and its cosy params."""
    return built_workspace, yaml.safe_load((built_workspace / "params.yaml").read_text())["cosy"]


def _table(workspace: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(workspace / "results" / "cosy" / f"{name}.csv", dtype={"unit": str})


def test_tables_and_figures_exist(cosy_run) -> None:
    workspace, cosy = cosy_run
    for name in TABLES:
        assert not _table(workspace, name).empty, name
    for name in FIGURES:
        assert (workspace / "results" / "cosy" / f"{name}.png").stat().st_size > 5_000, name
    table2 = _table(workspace, "table2")
    assert list(table2.columns) == ["setting", "generator", "control", "method", "auc_mean", "auc_std", "mad_mean",
                                    "mad_std", "n_units"]
    expected = {(s, g, c, m) for s in cosy["settings"] for g in cosy["generators"]
                for c in ("with_target", "without_target") for m in ("true", "random")}
    assert set(table2[["setting", "generator", "control", "method"]].itertuples(index=False, name=None)) == expected
    assert (table2["n_units"] == cosy["max_units"]).all()
    templates = _table(workspace, "templates")
    assert set(templates["template"]) == set(cosy["templates"]["names"])
    table8 = _table(workspace, "table8")
    assert (table8["n_seeds"] == len(cosy["seeds"]["generation_seeds"])).all()
    throughput = yaml.safe_load((workspace / "results/cosy/throughput.json").read_text())
    assert set(throughput) == set(cosy["generators"])
    assert all(report["images_per_second"] > 0 for report in throughput.values())


def test_scores_one_row_per_setting_unit_method_explanation(cosy_run) -> None:
    workspace, cosy = cosy_run
    scores = _table(workspace, "scores")
    keys = ["setting", "generator", "unit", "method", "explanation", "control"]
    assert not scores.duplicated(keys).any()
    assert len(scores) == len(cosy["settings"]) * len(cosy["generators"]) * cosy["max_units"] * 2 * 2
    assert scores["auc"].between(0, 1).all() and scores["p_value"].between(0, 1).all()
    pairs = scores["n_synthetic"] * scores["n_control"]
    assert ((scores["u"] - scores["auc"] * pairs).abs() <= 1e-6 * pairs).all()  # U = AUC·n·m; AUC written to 6 digits
    assert (scores["n_synthetic"] == cosy["n_images"]).all()


def test_oracle_separates_true_from_random_explanations(cosy_run) -> None:
    workspace, _ = cosy_run
    table2 = _table(workspace, "table2")
    oracle = table2[(table2["generator"] == "oracle") & (table2["control"] == "without_target")]
    for setting, rows in oracle.groupby("setting"):
        true = rows.set_index("method").loc["true"]
        random = rows.set_index("method").loc["random"]
        assert true["auc_mean"] > 0.75 and true["auc_mean"] > random["auc_mean"] + 0.1, setting
        assert true["mad_mean"] > random["mad_mean"] + 0.3, setting


def test_manifest_seeds_come_from_prompt_and_index(cosy_run) -> None:
    workspace, _ = cosy_run
    manifest = read_manifest(workspace / "data/cosy/oracle/manifest.parquet")
    sample = manifest.iloc[:: max(1, len(manifest) // 20)]
    for row in sample.itertuples(index=False):
        assert row.seed == image_seed(row.prompt, row.image_index, generation_seed=row.generation_seed)
    assert manifest["config_hash"].nunique() == 1


def test_generative_concepts_are_missing_labels(cosy_run) -> None:
    workspace, _ = cosy_run
    generative = _table(workspace, "generative").set_index(["generator", "metric"])
    assert (generative["missing_fraction"] > 0.5).all()
    assert generative.loc[("oracle", "recall"), "verdict"] == "drops"
    assert generative.loc[("oracle", "inverse_auc"), "verdict"] == "stable"


def test_rebuilt_oracle_tables_are_byte_identical(cosy_run, tmp_path: Path) -> None:
    """Regenerating the oracle's images from scratch and re-scoring them gives the same bytes."""
    import shutil

    from tests.workflow.conftest import run_tool

    workspace, _ = cosy_run
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy, symlinks=True)
    shutil.rmtree(copy / "data/cosy/oracle")
    shutil.rmtree(copy / "results/cosy")
    run_tool(["snakemake", "--cores", "2", "cosy_results"], copy)
    for name in TABLES:
        path = f"results/cosy/{name}.csv"
        assert (copy / path).read_bytes() == (workspace / path).read_bytes(), path
    manifest = pd.read_parquet(workspace / "data/cosy/oracle/manifest.parquet")
    for path in manifest["path"].iloc[::7]:
        assert (copy / "data/cosy/oracle" / path).read_bytes() == (workspace / "data/cosy/oracle" / path).read_bytes()


def check_user_rule(workspace: Path, copy: Path, setting: str, n_images: int) -> pd.DataFrame:
    """Run ``cosy_user`` in ``copy`` (a copy of ``workspace``) on the true explanations of ``setting`` written as a
    user's explanation file; it must rerun nothing else and give ``scores.csv``'s oracle numbers for them."""
    import shutil

    from neuroneval.cosy.study import read_explanation_table
    from neuroneval.explain.explanation import Concept, explanation_frame, write_explanations
    from tests.workflow.conftest import run_tool

    shutil.copytree(workspace, copy, symlinks=True)
    explanations = read_explanation_table(copy / "data/cosy/explanations.csv")
    true = explanations[(explanations["setting"] == setting) & (explanations["method"] == "true")]
    write_explanations(copy / "mine.csv", explanation_frame(true["unit"], [Concept(name) for name in true["concept"]]))
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["cosy"]["user_explanations"] = {"mine": {"explanations": "mine.csv", "setting": setting,
                                                    "n_images": n_images, "random": False}}
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert "Nothing to be done" in run_tool(["snakemake", "-n", "cosy_results"], copy).stdout
    run_tool(["snakemake", "--cores", "2", "results/cosy/user/mine.csv"], copy)
    user = pd.read_csv(copy / "results/cosy/user/mine.csv", dtype={"unit": str, "method": str}).set_index("unit")
    scores = _table(workspace, "scores")
    reference = scores[(scores["setting"] == setting) & (scores["generator"] == "oracle")
                       & (scores["method"] == "true") & (scores["control"] == "with_target")].set_index("unit")
    assert sorted(user.index) == sorted(reference.index) and set(user["method"]) == {"true"}
    reference = reference.loc[user.index]
    assert (user["n_synthetic"] == reference["n_synthetic"]).all()
    assert (user["n_control"] == reference["n_control"]).all()
    for column in ("auc", "mad", "u", "p_value"):
        assert user[column].to_numpy() == pytest.approx(reference[column].to_numpy(), rel=1e-5), column
    return user


def test_user_explanations_rule_reproduces_the_oracle_scores(cosy_run, tmp_path: Path) -> None:
    """A user's file holding the true explanations gives the oracle's ``with_target`` rows of ``scores.csv``
    (same images, same control set), and adding the entry reruns none of the other CoSy rules."""
    workspace, cosy = cosy_run
    check_user_rule(workspace, tmp_path / "copy", cosy["settings"][-1], int(cosy["n_images"]))

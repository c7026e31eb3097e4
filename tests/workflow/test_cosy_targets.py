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
    assert scores["u"].to_numpy() == pytest.approx(scores["auc"] * scores["n_synthetic"] * scores["n_control"])
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

"""The explanation-methods benchmark (``explain_results``) as a workflow target, on the tiny end-to-end run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.explain import read_explanations
from neuroneval.pipeline.explain_steps import BASELINES, PSEUDO_METHODS, base_method, method_files, score_columns
from tests.workflow.conftest import ROOT, make_workspace, run_tool, tiny_params


@pytest.fixture(scope="module")
def explain_run(built_workspace: Path) -> tuple[Path, dict]:
    """The tiny workspace, whose build includes explain_results, and its explain params."""
    return built_workspace, yaml.safe_load((built_workspace / "params.yaml").read_text())["explain"]


def floor_of(table_id: int) -> str:
    return "random_l1" if table_id == 1 else "random"


def reads_labels(method: str, setting: dict) -> bool:
    """Whether a method's explanations come from the ground-truth labels (not pseudo-labels, not a baseline)."""
    base, _ = base_method(method)
    if base in BASELINES or base in PSEUDO_METHODS:
        return False
    return base == "le_label" or setting["concepts"]["source"] == "labels"


def check_explain_results(workspace: Path, explain: dict) -> dict[int, pd.DataFrame]:
    """Every explanation file, both tables with their floor and ceiling, the figure and the agreement table; the
    truth above the random floor, and every method that reads the ground-truth labels above it too (methods on
    the tiny CLIP's pseudo-labels may sit at the floor: they never reach 0.5 there). Returns the tables."""
    settings = yaml.safe_load((workspace / "params.yaml").read_text())["settings"]
    for setting, spec in explain["settings"].items():
        for method in method_files(spec, explain["simple"]):
            assert len(read_explanations(workspace / "explanations" / setting / f"{method}.csv")), (setting, method)
    tables = {table_id: pd.read_csv(workspace / "results" / "explain" / f"table{table_id}.csv")
              for table_id in (1, 2)}
    score_names = score_columns()
    for table_id, table in tables.items():
        assert list(table.columns) == ["setting", "group", "method", "kind", "n_units", "mean_length",
                                       *[f"{name}_{part}" for name in score_names for part in ("mean", "se")],
                                       "truth_recovery", "n_truth_units", "floor", "ceiling"]
        assert set(table["setting"]) == set(explain["settings"])
        assert set(table.loc[table["method"].isin(BASELINES), "method"]) == {floor_of(table_id), "truth"}
        for (setting, group), frame in table.groupby(["setting", "group"]):
            rows = frame.set_index("method")
            ceiling, bottom = rows.loc["truth", "simulation_correlation_mean"], rows.loc[floor_of(table_id),
                                                                                          "simulation_correlation_mean"]
            assert (frame["ceiling"] == ceiling).all() and (frame["floor"] == bottom).all()
            assert ceiling > bottom, (table_id, setting, group)
            label_methods = [name for name in rows.index if reads_labels(name, settings[setting])]
            scored = rows.loc[label_methods, "simulation_correlation_mean"].dropna()
            assert (scored > bottom).all(), (table_id, setting, group)
        assert (table.loc[table["method"] == "truth", "truth_recovery"] == 1.0).all()
        lengths = table.loc[~table["method"].isin(BASELINES), "mean_length"]
        assert (lengths <= 1).all() if table_id == 1 else lengths.max() > 1
    assert (tables[2]["method"] == "compexp").any() and not (tables[1]["method"] == "compexp").any()
    agreement = pd.read_csv(workspace / "results" / "explain" / "agreement.csv")
    simulated = agreement[agreement["reference"] == "simulation_correlation"]
    assert set(score_names[1:]) <= set(simulated["metric"])
    assert set(simulated.loc[simulated["table"] == 2, "metric"]) == set(score_names[1:])
    assert set(agreement["setting"]) == {*explain["settings"], "all"}
    finite = agreement.dropna(subset=["tau"])
    assert finite["tau"].between(-1, 1).all() and (finite["ci_low"] <= finite["ci_high"] + 1e-12).all()
    assert (workspace / "results" / "explain" / "table1.png").stat().st_size > 10_000
    return tables


def test_explain_results_tables(explain_run) -> None:
    workspace, explain = explain_run
    tables = check_explain_results(workspace, explain)
    hidden = tables[1][tables[1]["setting"] == "cnn_hidden_gt"]
    assert np.isfinite(hidden.loc[hidden["method"] == "netdissect", "truth_recovery"]).all()


def test_cosy_and_crowd_tables_put_random_below_the_truth(explain_run) -> None:
    """cosy_table3.csv and crowd_table3.csv: the contract columns, every configured setting, generator and
    aggregation, the random floor and truth ceiling beside every row, and random below the truth where it must
    be: the oracle renders exactly the explained concept, and the crowd's raters see the true labels. (The tiny
    embedded diffusion model is trained for one epoch: its images need not drive any unit, so its rows are only
    checked for shape.) Also the agreement rows of every scorer pair and the figures."""
    workspace, explain = explain_run
    cosy = pd.read_csv(workspace / "results" / "explain" / "cosy_table3.csv")
    assert list(cosy.columns) == ["setting", "generator", "method", "auc_mean", "auc_se", "n_units", "n_unscored",
                                  "mad_mean", "mad_se", "floor", "ceiling"]
    assert set(cosy["setting"]) == set(explain["cosy"]["settings"])
    assert set(cosy["generator"]) == set(explain["cosy"]["generators"])
    assert cosy["auc_mean"].dropna().between(0, 1).all()
    for (setting, generator), rows in cosy.groupby(["setting", "generator"]):
        rows = rows.set_index("method")
        assert {"random_l1", "truth"} <= set(rows.index)
        assert (rows["n_units"] + rows["n_unscored"] <= explain["cosy"]["max_units"]).all()
        if generator == "oracle":
            assert rows.loc["truth", "auc_mean"] > rows.loc["random_l1", "auc_mean"], setting
            assert rows.loc["truth", "auc_mean"] > 0.7, setting
    crowd = pd.read_csv(workspace / "results" / "explain" / "crowd_table3.csv")
    assert list(crowd.columns) == ["setting", "aggregation", "method", "crowd_correlation_mean",
                                   "crowd_correlation_se", "n_units", "n_unscored", "label_correlation_mean",
                                   "label_correlation_se", "floor", "ceiling"]
    assert set(crowd["setting"]) == set(explain["crowd"]["settings"])
    assert set(crowd["aggregation"]) == set(explain["crowd"]["aggregation"])
    for (setting, aggregation), rows in crowd.groupby(["setting", "aggregation"]):
        rows = rows.set_index("method")
        assert rows.loc["truth", "crowd_correlation_mean"] > rows.loc["random_l1", "crowd_correlation_mean"], (
            setting, aggregation)
    agreement = pd.read_csv(workspace / "results" / "explain" / "agreement.csv")
    pooled = agreement[(agreement["table"] == 1) & (agreement["setting"] == "all")]
    scorers = {*pooled["reference"], *pooled["metric"]}
    assert {f"cosy_auc:{name}" for name in explain["cosy"]["generators"]} <= scorers
    assert {f"crowd:{name}" for name in explain["crowd"]["aggregation"]} <= scorers
    for name in ("cosy_table3.png", "agreement.png"):
        assert (workspace / "results" / "explain" / name).stat().st_size > 10_000
    report = pd.read_csv(workspace / "results" / "fidelity.csv", dtype=str, keep_default_na=False)
    sources = report["source"].str.contains("results/explain/")
    assert {"Table 2", "Tables 1-2", "Table 3"} <= set(report.loc[sources, "table"])


def test_the_llm_method_is_opt_in_and_plans_on_the_world(tmp_path: Path) -> None:
    """The default params list ``llm`` in no setting; a user who adds it gets ``explanations/<setting>/llm.csv``
    from the setting's tables and its world (captions for a vision setting, token text for an LM setting)."""
    default = yaml.safe_load((ROOT / "params.yaml").read_text())["explain"]
    assert all("llm" not in spec["methods"] for spec in default["settings"].values())
    settings = {name: {"methods": [*default["settings"][name]["methods"], "llm"]}
                for name in ("vit_final_gt", "lm_small_next_token")}
    workspace = make_workspace(tmp_path, tiny_params(explain={"settings": settings}))
    targets = [f"explanations/{name}/llm.csv" for name in settings]
    result = run_tool(["snakemake", "-n", "--cores", "1", *targets], workspace)
    jobs = [block for block in result.stdout.split("\n\n") if "rule explain_setting:" in block]
    worlds = {"vit_final_gt": "data/worlds/vision/probe", "lm_small_next_token": "data/worlds/text/probe"}
    for name, world in worlds.items():
        job = next(block for block in jobs if f"explanations/{name}/llm.csv" in block)
        assert world in job.split("output:")[0], job

"""The explanation-methods benchmark (``explain_results``) as a workflow target, on the tiny end-to-end run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.explain import read_explanations
from neuroneval.pipeline.explain_steps import BASELINES, PSEUDO_METHODS, base_method, method_files, score_columns


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
    assert set(agreement["metric"]) == set(score_names[1:])
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

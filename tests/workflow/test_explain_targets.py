"""The explanation-methods benchmark (``explain_results``) as a workflow target, on the tiny end-to-end run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.explain import read_explanations
from neuroneval.pipeline.explain_steps import BASELINES, method_files, score_columns


@pytest.fixture(scope="module")
def explain_run(built_workspace: Path) -> tuple[Path, dict]:
    """The tiny workspace, whose build includes explain_results, and its explain params."""
    return built_workspace, yaml.safe_load((built_workspace / "params.yaml").read_text())["explain"]


def check_explain_results(workspace: Path, explain: dict) -> dict[int, pd.DataFrame]:
    """Every explanation file, both tables with their floor and ceiling, the figure and the agreement table; the
    truth row above and the random row below every method in simulation correlation. Returns the tables."""
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
        floor = "random_l1" if table_id == 1 else "random"
        for (setting, group), frame in table.groupby(["setting", "group"]):
            rows = frame.set_index("method")
            assert {floor, "truth"} <= set(rows.index), (table_id, setting, group)
            methods = rows.drop(index=[name for name in BASELINES if name in rows.index])
            scored = methods["simulation_correlation_mean"].dropna()
            assert len(scored), (table_id, setting, group)
            ceiling = rows.loc["truth", "simulation_correlation_mean"]
            bottom = rows.loc[floor, "simulation_correlation_mean"]
            assert (scored < ceiling).all() and (scored > bottom).all(), (table_id, setting, group, scored.to_dict(),
                                                                         bottom, ceiling)
            assert (frame["ceiling"] == ceiling).all() and (frame["floor"] == bottom).all()
        assert (table.loc[table["method"] == "truth", "truth_recovery"] == 1.0).all()
        limit = 1 if table_id == 1 else max(explain["max_length"], explain["methods"]["le_label"]["max_length"])
        lengths = table.loc[~table["method"].isin(BASELINES), "mean_length"]
        assert (lengths <= limit).all() if table_id == 1 else lengths.max() > 1
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

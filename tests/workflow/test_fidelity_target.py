"""The fidelity report as a workflow target, on the tiny end-to-end run (structure, not full-size figures)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from neuroneval.fidelity import COLUMNS, VERDICTS, render_markdown
from neuroneval.fidelity.claims import PAPER_SOURCES, reference_cells
from neuroneval.published import TABLE3

#: Claim groups every report has, by (paper, table prefix).
GROUPS = [("000", "Table F."), ("000", "Table 4"), ("000", "Table 3"), ("000", "Table C.1"), ("000", "Table C.4"),
          ("000", "Table D.2"), ("000", "Table E.2"), ("001", "Sec. 4"), ("002", "Table 2"), ("004", "Fig. 2"),
          ("004", "Fig. 3"), ("004", "Table 4"), ("004", "Fig. 4"), ("001", "Table 2"), ("001", "Tables 1-2"),
          ("001", "Table 3"), ("002", "Table 3")]


def _report(workspace: Path) -> pd.DataFrame:
    return pd.read_csv(workspace / "results/fidelity.csv", dtype=str, keep_default_na=False)


def test_report_has_the_contract_columns_valid_verdicts_and_every_claim_group(built_workspace: Path) -> None:
    report = _report(built_workspace)
    assert list(report.columns) == list(COLUMNS)
    assert set(report["verdict"]) <= set(VERDICTS)
    for code, prefix in GROUPS:
        assert ((report["paper"] == code) & report["table"].str.startswith(prefix)).any(), (code, prefix)
    table3_rows = report[(report["paper"] == "000") & (report["table"] == "Table 3")]
    assert len(table3_rows) == len(TABLE3) + 1
    assert (report.loc[report["verdict"] != "holds", "reason"] != "").all()
    assert set(report["paper_source"]) <= set(PAPER_SOURCES)
    reference_rows = report[report["table"].str.contains("reference mode")]
    assert len(reference_rows) == 4 and (reference_rows["paper_source"] == "printed table").all()


def test_every_table4_setting_with_a_paper_counterpart_has_a_row(built_workspace: Path) -> None:
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())
    settings = params["meta"]["settings"]
    report = _report(built_workspace)
    for name in settings:
        assert report["claim"].str.startswith(f"{name}").any() or report["claim"].str.startswith(f"{name}:").any(), name


def test_markdown_is_rendered_from_the_csv_and_cites_existing_sources(built_workspace: Path) -> None:
    report = _report(built_workspace)  # as text: numbers are rendered as the CSV spells them
    markdown = (built_workspace / "results/fidelity.md").read_text()
    cells = reference_cells(pd.read_csv(built_workspace / "results/fidelity/reference_check.csv"))
    assert markdown == render_markdown(report, cells)
    assert "## Tables C.1–C.4 cell by cell" in markdown
    for sources in report["source"]:
        for source in str(sources).split(", "):
            assert (built_workspace / source).exists(), source


def test_crowd_rarity_table_covers_each_rarity_and_comparison(built_workspace: Path) -> None:
    params = yaml.safe_load((built_workspace / "params.yaml").read_text())["crowd"]["rarity"]
    table = pd.read_csv(built_workspace / "results/crowd_rarity.csv")
    assert sorted(table["rarity"].unique()) == sorted(params["rarities"])
    assert len(table) == 5 * len(params["rarities"])
    assert (built_workspace / "results/crowd_rarity.png").stat().st_size > 0

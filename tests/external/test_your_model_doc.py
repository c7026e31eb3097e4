"""docs/your_model.md runs as written: its python block saved as ``mymodels.py``, then its bash blocks in order, in a
copy of the workflow (the tiny params underneath the page's overlay)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from neuroneval import io
from tests.workflow.conftest import ROOT, make_workspace, run_tool, tiny_params

PAGE = ROOT / "docs" / "your_model.md"


#: Sections run by their own tests (tests/external/test_your_model_cosy_doc.py), left out of this page run.
OWN_TEST_SECTIONS = ("## CoSy on your model",)


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def page_sections(text: str) -> dict[str, str]:
    """Each ``## `` heading's text up to the next one (the text before the first heading under ``""``)."""
    parts = re.split(r"^(## .*)$", text, flags=re.MULTILINE)
    return {"": parts[0], **{heading: body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}}


def page_without_own_test_sections(text: str) -> str:
    return "".join(heading + body for heading, body in page_sections(text).items()
                   if heading not in OWN_TEST_SECTIONS)


def test_the_page_has_its_model_module_and_commands() -> None:
    text = PAGE.read_text()
    python_blocks, bash_blocks = fenced_blocks(text, "python"), fenced_blocks(text, "bash")
    assert len(python_blocks) == 1 and python_blocks[0].startswith("# mymodels.py\n")
    assert any("snakemake --cores" in block for block in bash_blocks)


@pytest.mark.slow
def test_the_commands_of_the_page_run_as_written(tmp_path: Path) -> None:
    """Slow (marker ``slow``): the page's commands run the workflow in a copy of it."""
    text = PAGE.read_text()
    workspace = make_workspace(tmp_path / "workflow", tiny_params())
    (workspace / "mymodels.py").write_text(fenced_blocks(text, "python")[0])
    for block in fenced_blocks(page_without_own_test_sections(text), "bash"):
        result = run_tool(["bash", "-euo", "pipefail", "-c", block], workspace, check=False)
        assert result.returncode == 0, f"{block}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    table4 = pd.read_csv(workspace / "results/table4.csv")
    assert {"mine_logits", "mine_hidden"} <= set(table4.columns)
    for setting in ("mine_logits", "mine_hidden"):
        assert (workspace / f"results/sanity/experimental/{setting}.csv").is_file()
        page = (workspace / f"results/viewer/{setting}/index.html").read_text()
        assert page.count('width="64" height="64" src="data:image/png;base64,') >= 8  # the digits, enlarged
    imported, _ = io.read_activation_table(workspace / "data/activations/mine_tables/digits_mlp/1.parquet")
    recorded, _ = io.read_activation_table(workspace / "mine/recorded/1.parquet")
    pd.testing.assert_frame_equal(imported, recorded)

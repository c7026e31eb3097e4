"""docs/your_model.md, "CoSy on your model", runs as written: the page's model module and its steps 1–3, a tiny
random diffusers pipeline saved where the section says, then the section's commands; the scores are checked
against the model run by hand, sklearn's ``roc_auc_score`` and MAD by its formula."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score

from neuroneval.cosy.prompts import fill_template
from neuroneval.cosy.synthesis import plan_images
from neuroneval.external.preprocess import ImagePreprocessing
from tests.external.test_own_cosy import by_hand
from tests.external.test_your_model_doc import PAGE, fenced_blocks, page_sections
from tests.workflow.conftest import make_workspace, run_tool, tiny_params

SECTION = "## CoSy on your model"
#: The page's steps the section builds on: the model and its files, the recorded table, the first overlay.
PREREQUISITES = ("## 1. ", "## 2. ", "## 3. ")


def test_the_section_documents_every_preprocessing_key() -> None:
    section = page_sections(PAGE.read_text())[SECTION]
    for field in dataclasses.fields(ImagePreprocessing):
        assert f"`{field.name}`" in section, field.name
    blocks = fenced_blocks(section, "bash")
    assert len(blocks) == 3 and "--configfile mine.yaml cosy.yaml" in blocks[0]
    assert "results/explain/cosy/diffusers.csv --configfile mine.yaml cosy.yaml explain_cosy.yaml" in blocks[1]
    assert "neuroneval cosy --factory mymodels:digits_mlp" in blocks[2]


@pytest.mark.slow
def test_the_cosy_section_runs_as_written(tmp_path: Path) -> None:
    """Slow (marker ``slow``): the section's commands run the workflow in a copy of it, diffusers included."""
    pytest.importorskip("diffusers")
    from tests.cosy.test_diffusers_backend import tiny_pipeline_folder

    text = PAGE.read_text()
    sections = page_sections(text)
    workspace = make_workspace(tmp_path / "workflow", tiny_params())
    (workspace / "mymodels.py").write_text(fenced_blocks(text, "python")[0])
    blocks = [block for heading, body in sections.items() if heading.startswith(PREREQUISITES)
              for block in fenced_blocks(body, "bash")]
    for block in [*blocks, None, *fenced_blocks(sections[SECTION], "bash")]:
        if block is None:  # the user's pipeline folder, here a tiny random one
            tiny_pipeline_folder(workspace / "mine" / "pipeline")
            continue
        result = run_tool(["bash", "-euo", "pipefail", "-c", block], workspace, check=False)
        assert result.returncode == 0, f"{block}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"

    scores = pd.read_csv(workspace / "results/cosy/scores.csv", dtype={"unit": str, "explanation": str})
    assert set(scores["setting"]) == {"mine_logits"} and scores["unit"].nunique() == 4
    assert (scores["n_synthetic"] == 4).all()
    import sys

    sys.path.insert(0, str(workspace))
    try:
        from mymodels import digits_mlp
    finally:
        sys.path.remove(str(workspace))
    model = digits_mlp()
    model.load_state_dict(torch.load(workspace / "mine" / "mlp.pt"))
    model.eval()
    with torch.no_grad():
        control = model(torch.from_numpy(np.load(workspace / "mine" / "images.npy"))).numpy().astype(np.float64)
    manifest = pd.read_parquet(workspace / "data/cosy/diffusers/manifest.parquet")
    for row in scores[scores["control"] == "all"].itertuples(index=False):
        prompt = fill_template("closeup", row.explanation)
        images = manifest[(manifest["prompt"] == prompt) & (manifest["generation_seed"] == 0)].sort_values(
            "image_index")
        k = int(row.unit.removeprefix("logits."))
        synthetic = by_hand(model, [workspace / "data/cosy/diffusers" / path for path in images["path"]],
                            invert=True)[:, k]
        reference = control[:, k]
        auc = roc_auc_score(np.r_[np.zeros(len(reference)), np.ones(len(synthetic))], np.r_[reference, synthetic])
        assert row.auc == pytest.approx(auc, abs=1e-6)  # the CSV keeps 6 significant digits
        assert row.mad == pytest.approx((synthetic.mean() - reference.mean()) / reference.std(ddof=1),
                                        rel=1e-4, abs=1e-5)

    explained = pd.read_csv(workspace / "results/explain/cosy/diffusers.csv", dtype={"unit": str})
    explained = explained[explained["method"] != "ideal"]
    assert set(explained["setting"]) == {"mine_logits"} and explained["unit"].nunique() == 2
    assert explained["auc"].between(0, 1).all() and (explained["n_control"] == 40).all()

    # neuroneval cosy: the model by hand on the images it drew and on the digits, AUC by sklearn
    user = pd.read_csv(workspace / "mine/cosy_units.csv", dtype={"unit": str})
    assert sorted(user["unit"].unique()) == ["logits.3", "logits.7"] and set(user["method"]) == {"true", "random"}
    assert (workspace / "mine/cosy_units.png").stat().st_size > 0
    image_root = workspace / "mine/cosy_units.images/diffusers"
    for row in user.itertuples(index=False):
        k = int(row.unit.removeprefix("logits."))
        plan = plan_images([row.prompt.removeprefix("realistic photo of a close up of ")], templates=["closeup"],
                           n_images=4)
        synthetic = by_hand(model, [image_root / path for path in plan["path"]], invert=True)[:, k]
        assert len(synthetic) == row.n_synthetic == 4 and row.n_control == len(control)
        reference = control[:, k]
        auc = roc_auc_score(np.r_[np.zeros(len(reference)), np.ones(len(synthetic))], np.r_[reference, synthetic])
        assert row.auc == pytest.approx(auc, abs=1e-9)

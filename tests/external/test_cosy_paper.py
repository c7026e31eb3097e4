"""CoSy with the paper profile on the fake tree: a tiny diffusers pipeline stands in for SDXL, the fake ViT-B-16's
ImageNet output units are scored against its ImageNet val activations, end to end through Snakemake."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.cosy.test_diffusers_backend import tiny_pipeline_folder
from tests.external.fakes import IMAGENET_CLASSES
from tests.external.test_paper_workflow import PROFILE, job_counts, paper_workspace
from tests.workflow.conftest import run_tool

COSY = {"n_images": 3, "templates": {"n_concepts": 2}, "seeds": {"generation_seeds": [0, 1], "n_units": 1},
        "distributions": {"n_units": 1, "n_control": 10},
        "diffusers": {"model": "checkpoints/tiny-sd", "steps": 2, "height": 8, "width": 8, "dtype": "float32",
                      "batch_size": 4, "device": "cpu"}}


@pytest.mark.slow
def test_cosy_runs_on_the_paper_profile(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    """Slow (marker ``slow``): Snakemake runs cosy_results end to end, a diffusers pipeline included."""
    data_root = paper_tree[0]
    if not (data_root / "checkpoints" / "tiny-sd").exists():
        tiny_pipeline_folder(data_root / "checkpoints" / "tiny-sd")
    workspace = paper_workspace(tmp_path, data_root, cosy=COSY)
    dry = run_tool(["snakemake", "-n", "--cores", "1", "cosy_results", *PROFILE], workspace)
    counts = job_counts(dry.stdout)
    assert counts["cosy_generate"] == 1 and counts["cosy_evaluate"] == 1
    assert "vision_world" not in counts and "cosy_train_embedded" not in counts  # no embedded world needed
    run_tool(["snakemake", "--cores", "2", "cosy_results", *PROFILE], workspace)
    table2 = pd.read_csv(workspace / "results/cosy/table2.csv")
    assert set(table2["generator"]) == {"diffusers"} and set(table2["setting"]) == {"imagenet_vit_gt"}
    assert (table2["n_units"] == len(IMAGENET_CLASSES)).all()
    scores = pd.read_csv(workspace / "results/cosy/scores.csv")
    assert set(scores.loc[scores["method"] == "true", "explanation"]) == {
        "tench", "goldfish", "great white shark", "tiger shark", "hammerhead"}
    assert scores["auc"].between(0, 1).all() and (scores["n_synthetic"] == 3).all()
    manifest = pd.read_parquet(workspace / "data/cosy/diffusers/manifest.parquet")
    assert manifest["prompt"].str.startswith("realistic photo of a close up of ").any()
